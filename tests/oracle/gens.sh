#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The fresh seeds of each generator set (make -C tests/oracle run), JOBS
# sets at a time: a run mostly waits (pairing windows, drains), so sets in
# parallel take about a JOBS-th of the time one after the other did.  Each
# set's output is printed whole, in the order given, after all are done.
#
#   gens.sh BIN SEEDS FIRST OPS BACKEND JOBS LOGDIR "EXTRA ARGS" GEN...
#
# Exit 0 when every set passed or was SKIPPED (exit 4: cannot mount here),
# 1 otherwise.
set -u
bin=$1 seeds=$2 first=$3 ops=$4 backend=$5 jobs=$6 logdir=$7 extra=$8
shift 8
mkdir -p "$logdir" || exit 1
i=0
for g in "$@"; do
	i=$((i + 1))
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do
		wait -n
	done
	# shellcheck disable=SC2086 # the sets and EXTRA are word lists
	( "$bin" -c "$seeds" -S "$first" -n "$ops" -B "$backend" $g $extra \
		> "$logdir/gen-$i.log" 2>&1; echo $? > "$logdir/gen-$i.rc" ) &
done
wait
rc=0
i=0
for g in "$@"; do
	i=$((i + 1))
	echo "oracle: $seeds fresh seeds with $g"
	grep -v '^ok ' "$logdir/gen-$i.log"
	r=$(cat "$logdir/gen-$i.rc")
	[ "$r" = 0 ] || [ "$r" = 4 ] || rc=1
done
exit $rc
