#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks, run as root in ONE boot of the guest (make bench).  Every
# result is a ratio of two timings taken in this same run: absolute times
# under QEMU TCG mean little.  Lines starting with "#" are per-round detail;
# the others are the results BENCHMARKS.md quotes.
#
# The sizes below are the ones BENCHMARKS.md was made with; the BENCH_*
# variables override them when run.sh is started by hand (make shell).
B=/bench
W=/tmp/bench
LINES=${BENCH_LINES:-100000}
CLINES=${BENCH_CLINES:-100000}
ROUNDS=${BENCH_ROUNDS:-3}
NDIRS=${BENCH_NDIRS:-10000}
NEV=${BENCH_NEV:-100000}
rc=0

mkdir -p $W
echo "bench: $(nproc) cpus, $(uname -r), $(grep MemTotal /proc/meminfo)"
echo "bench: max_queued_events=$(cat /proc/sys/fs/inotify/max_queued_events) max_user_watches=$(cat /proc/sys/fs/inotify/max_user_watches)"

step() {
	echo "=== $1"
	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@" || { echo "bench: FAILED: $*"; rc=1; }
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "# ($(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s)"
}

# 1a. The 2004 nonotify test: busybox sh loop, a consumer draining every
# wakeup, unwatched vs watched by path vs watched by a closed fd.
step "1a nonotify, busybox sh echo >> loop, IN_ALL_EVENTS" \
	$B/bench_notify $W/notify $LINES $ROUNDS sh 0xfff
step "1a nonotify, busybox sh echo >> loop, IN_MODIFY" \
	$B/bench_notify $W/notify $LINES $ROUNDS sh 0x2
step "1a nonotify, C writer (one write(2) per line), IN_ALL_EVENTS" \
	$B/bench_notify $W/notify $CLINES $ROUNDS c 0xfff
# The same with a consumer that sleeps 10 ms after each drain: fewer
# wakeups, the same events.
step "1a nonotify, busybox sh loop, IN_ALL_EVENTS, consumer batching 10 ms" \
	$B/bench_notify $W/notify $LINES $ROUNDS sh 0xfff batch:10
step "1a nonotify, C writer, IN_ALL_EVENTS, consumer batching 10 ms" \
	$B/bench_notify $W/notify $CLINES $ROUNDS c 0xfff batch:10
rm -rf $W/notify

# 1b + 1c. Watch setup at depth 8; memory per watch; fds held.
step "1b/1c setup of $NDIRS watches at depth 8, memory, fds" \
	$B/bench_setup $W/setup $NDIRS $ROUNDS
rm -rf $W/setup

# 1b. Recursive watch of the kernel source tree's directories.
tree=$W/ktree
mkdir -p $tree
if [ -f $B/kernel-dirs.txt ]; then
	echo "bench: tree = directory skeleton of the kernel source ($(wc -l < $B/kernel-dirs.txt) dirs)"
	(cd $tree && xargs mkdir -p < $B/kernel-dirs.txt)
else
	# No list shipped: a synthetic tree of the same order (5,460 dirs:
	# fan-out 4, depth 6), named so in the output.
	echo "bench: no $B/kernel-dirs.txt; tree = synthetic, fan-out 4, depth 6"
	(cd $tree && for a in 0 1 2 3; do for b in 0 1 2 3; do for c in 0 1 2 3; do
		for d in 0 1 2 3; do for e in 0 1 2 3; do
			echo "$a/$b/$c/$d/$e/0 $a/$b/$c/$d/$e/1 $a/$b/$c/$d/$e/2 $a/$b/$c/$d/$e/3"
		done; done; done; done; done | xargs mkdir -p)
fi
echo "bench: tree has $(find $tree -type d | wc -l) directories"
step "1b recursive watch: libinofd vs inotifywait -r -m" \
	$B/bench_tree $tree $W/empty $ROUNDS
rm -rf $tree $W/empty

# 1d. Library overhead per event.
step "1d events/s: libinofd iterator vs raw read()" \
	$B/bench_lib $W/lib $NEV $ROUNDS
rm -rf $W/lib

echo "bench: done, status $rc"
exit $rc
