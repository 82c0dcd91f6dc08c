#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Replay every seed of tests/oracle/regress/ (each *.seed's "args:" line and
# each "args:" line of each *.list) on the procfd and fanotify backends with
# the oracle's trace (-v: every operation and every event the library
# delivered), and keep each run's whole output, to compare two libraries
# (say, before and after a refactor) run by run:
#
#   scripts/oracle-replay.sh record BIN OUTDIR [JOBS]   replay, one log a run
#   scripts/oracle-replay.sh compare OLD[,OLD2] NEW     diff two OUTDIRs
#
# REPLAY_ONLY=ERE limits record to the runs whose name (the seed file's,
# or the list's with -N for its Nth seed) matches; compare then looks at
# the runs NEW has.
#
# A log is the oracle's stdout and stderr (-v) and its exit status, with the
# per-run temporary base directory (/dev/shm/inofd-oracle.XXXXXX, mkdtemp)
# replaced by BASE: that name is the only part of a trace that changes from
# run to run by construction.  The host's fs.inotify.max_queued_events
# sizes the oracle's floods (qmax + 64 writes or files, and the names after
# them): two runs whose floods differ in size are not comparable, and
# compare says so instead of comparing them.  What the kernel and the scheduler decide
# (how events fall into reads, -W's writer processes) can still differ from
# one run to the next; compare lists such runs, and `record` twice on one
# library shows which seeds do that on their own (see the report of the
# change that added this script).  Runs JOBS (default 2) at a time, niced.
set -u
mode=${1:-}
case "$mode" in
record)
	bin=$(readlink -f "$2") out=$3 jobs=${4:-2}
	here=$(cd "$(dirname "$0")/.." && pwd)
	mkdir -p "$out/procfd" "$out/fanotify" || exit 1
	list=$(mktemp) || exit 1
	trap 'rm -f "$list"' EXIT
	for f in "$here"/tests/oracle/regress/*.seed; do
		a=$(sed -n 's/^args: \([^#]*\).*/\1/p' "$f" | head -1)
		echo "$(basename "$f" .seed)|$a"
	done > "$list"
	for f in "$here"/tests/oracle/regress/*.list; do
		n=0
		sed -n 's/^args: \([^#]*\).*/\1/p' "$f" | while read -r a; do
			n=$((n + 1))
			echo "$(basename "$f" .list)-$n|$a"
		done
	done >> "$list"
	if [ -n "${REPLAY_ONLY:-}" ]; then
		grep -E "^(${REPLAY_ONLY})\|" "$list" > "$list.only"
		mv "$list.only" "$list"
	fi
	# shellcheck disable=SC2016 # expanded by the sh -c of each run
	for b in procfd fanotify; do
		sed "s/\$/|$b/" "$list"
	done | xargs -P "$jobs" -d '\n' -I{} sh -c '
		IFS="|" read -r name args b <<EOF
{}
EOF
		# shellcheck disable=SC2086 # args is a word list
		nice -n 5 "$0" $args -B "$b" -v > "$1/$b/$name.raw" 2>&1
		echo "exit $?" >> "$1/$b/$name.raw"
		sed -E "s#/dev/shm/inofd-oracle\.[A-Za-z0-9]+#BASE#g" \
			"$1/$b/$name.raw" > "$1/$b/$name.log" && rm "$1/$b/$name.raw"
	' "$bin" "$out"
	n=$(find "$out" -name '*.log' | wc -l)
	bad=$(grep -l '^exit [^0]' "$out"/*/*.log | wc -l)
	echo "oracle-replay: $n runs ($(wc -l < "$list") seeds x 2 backends) in $out, $bad with a non-zero exit"
	;;
compare)
	# OLD may be several directories, comma-separated (records of one
	# library at different times): each run is compared with the first
	# whose floods are as large as NEW's
	old=$2 new=$3 same=0 diff=0 env=0
	floods() { grep -E '^  flood ' "$1" 2>/dev/null | awk '{print $3}'; }
	for g in "$new"/*/*.log; do
		run=${g#"$new"/} f=
		for o in ${old//,/ }; do
			f=$o/$run
			[ "$(floods "$f")" = "$(floods "$g")" ] && break
			f=
		done
		if [ -z "$f" ]; then
			env=$((env + 1))
			echo "not comparable: $run (floods of another size in every OLD)"
		elif cmp -s "$f" "$g"; then
			same=$((same + 1))
		else
			diff=$((diff + 1))
			echo "differs: $run (against $f)"
		fi
	done
	echo "oracle-replay: $same identical, $diff differ, $env not comparable ($(find "$new" -name '*.log' | wc -l) runs in $new)"
	[ "$diff" = 0 ]
	;;
*)
	echo "usage: $0 record BIN OUTDIR [JOBS] | compare OLD[,OLD2] NEW" >&2
	exit 2
	;;
esac
