#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check in two lanes on a machine's cores:
#
#   check-lanes.sh LOGDIR "HOST TARGETS" KERNEL TARGETS...
#
# The host lane makes each of HOST TARGETS in turn, in the background,
# its output in LOGDIR/TARGET.log and one line per target on the terminal
# ("host: unit passed in 41 s").  The kernel lane makes KERNEL TARGETS in
# the foreground, its output on the terminal as before.  The kernel lane
# boots QEMU guests, the critical path: a guest under TCG keeps one core
# busy.  The host lane (host tests, and the kernel builds the kernel lane
# needs next) takes what is left: it runs at nice HOST_NICE (default 10),
# so that it never slows a guest down, only fills the other core.  Every
# host target runs even after one failed; the exit status is non-zero if
# either lane failed, and the log of each failed host target is shown at
# the end.  MAKE is the make to run (the Makefile passes its own).
set -uo pipefail

logdir=$1
host=$2
shift 2
make=${MAKE:-make}
nice=${HOST_NICE:-10}
mkdir -p "$logdir"
rm -f "$logdir"/*.log "$logdir/failed"

host_lane() {
	local t s rc=0
	for t in $host; do
		s=$SECONDS
		if nice -n "$nice" $make --no-print-directory "$t" > "$logdir/$t.log" 2>&1; then
			echo "host: $t passed in $((SECONDS - s)) s"
		else
			echo "host: $t FAILED in $((SECONDS - s)) s (log: $logdir/$t.log)"
			echo "$t" >> "$logdir/failed"
			rc=1
		fi
	done
	return $rc
}

# The host lane in a process group of its own, so that an interrupt of
# make check (which a background job of a script does not get) ends it.
set -m
host_lane &
hostpid=$!
set +m
trap 'kill -TERM -- -"$hostpid" 2>/dev/null; exit 130' INT TERM HUP

$make --no-print-directory "$@"
krc=$?
[ "$krc" = 0 ] || echo "check: the kernel lane failed (rc $krc); waiting for the host lane"
wait "$hostpid"
hrc=$?
trap - INT TERM HUP

if [ -s "$logdir/failed" ]; then
	while read -r t; do
		echo "==== host: $t failed; the end of $logdir/$t.log:"
		tail -n 60 "$logdir/$t.log"
	done < "$logdir/failed"
fi
if [ "$krc" = 0 ] && [ "$hrc" = 0 ]; then
	echo "check: every host check and kernel check passed"
	exit 0
fi
echo "check: FAILED:$([ "$hrc" = 0 ] || echo " host checks ($(tr '\n' ' ' < "$logdir/failed" | sed 's/ $//'))")$([ "$krc" = 0 ] || echo " kernel checks")"
exit 1
