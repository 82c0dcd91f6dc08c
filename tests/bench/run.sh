#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks, run as root in ONE boot of the guest (make bench); the
# steps named *-user run the same program as uid 65534 (BENCH_AS_USER:
# root raises the limits first, then the program drops to that user).  Every
# result is a ratio of two timings taken in this same run: absolute times
# under QEMU TCG mean little.  Lines starting with "#" are per-round detail;
# the others are the results BENCHMARKS.md quotes.
#
# The sizes below are the ones BENCHMARKS.md was made with; the BENCH_*
# variables override them when run.sh is started by hand (make shell).
# BENCH_BIN and BENCH_WORK move the programs and the scratch directory:
# make bench-host runs the 1a steps on the build machine with them.
B=${BENCH_BIN:-/bench}
W=${BENCH_WORK:-/tmp/bench}
LINES=${BENCH_LINES:-100000}
CLINES=${BENCH_CLINES:-100000}
ROUNDS=${BENCH_ROUNDS:-5}
NDIRS=${BENCH_NDIRS:-10000}
NEV=${BENCH_NEV:-100000}
SCALE=${BENCH_SCALE:-1000,10000,100000}
SROUNDS=${BENCH_SROUNDS:-5}
TROUNDS=${BENCH_TROUNDS:-9}
STLINES=${BENCH_STLINES:-20000}
STROUNDS=${BENCH_STROUNDS:-3}
rc=0

mkdir -p $W
echo "bench: $(nproc) cpus, $(uname -r), $(grep MemTotal /proc/meminfo)"
echo "bench: max_queued_events=$(cat /proc/sys/fs/inotify/max_queued_events) max_user_watches=$(cat /proc/sys/fs/inotify/max_user_watches)"

# BENCH_ONLY (make bench BENCH=1a.all,1d) is a comma list of patterns; a
# step runs when its ID contains one of them.
selected() {
	[ -n "${BENCH_ONLY:-}" ] || return 0
	for pat in $(echo "$BENCH_ONLY" | tr , ' '); do
		case "$1" in *"$pat"*) return 0 ;; esac
	done
	return 1
}

# The number of steps this run takes (the "step ID" lines below that
# BENCH_ONLY selects), for the host's progress line.
nsteps=0
for id in $(sed -n 's/^step \([^ ]*\) .*/\1/p' "$0"); do
	selected "$id" && nsteps=$((nsteps + 1))
done
echo "bench: plan $nsteps steps"

# step ID TITLE CMD...
step() {
	id=$1
	title=$2
	shift 2
	selected "$id" || return 0
	echo "=== $id $title"
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@" || { echo "bench: FAILED: $*"; rc=1; }
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "# ($(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s)"
}

# 1a. The 2004 nonotify test: busybox sh loop, a consumer draining every
# wakeup, unwatched vs watched by path vs watched by a closed fd vs an
# unprivileged fanotify inode mark by a closed fd (FAN_REPORT_DFID_NAME,
# FAN_EVENT_ON_CHILD, the same mask bits).
# IN_ALL_EVENTS gives IN_OPEN, IN_MODIFY and IN_CLOSE_WRITE per line.
step 1a.all "nonotify, busybox sh echo >> loop, IN_ALL_EVENTS" \
	$B/bench_notify $W/notify $LINES $ROUNDS sh 0xfff
step 1a.mod "nonotify, busybox sh echo >> loop, IN_MODIFY" \
	$B/bench_notify $W/notify $LINES $ROUNDS sh 0x2
# The change mask: what FAM asked dnotify for in 2004 (DN_MODIFY,
# DN_ATTRIB, DN_CREATE, DN_DELETE, DN_RENAME), in inotify terms:
# IN_MODIFY|IN_ATTRIB|IN_MOVE|IN_CREATE|IN_DELETE|IN_DELETE_SELF|IN_MOVE_SELF.
step 1a.change "nonotify, busybox sh echo >> loop, change mask" \
	$B/bench_notify $W/notify $LINES $ROUNDS sh 0xfc6
# A watch whose mask the loop never matches (IN_DELETE_SELF): the cost of
# the fsnotify hooks alone, with no event queued.
step 1a.hook "nonotify, busybox sh echo >> loop, IN_DELETE_SELF (no events)" \
	$B/bench_notify $W/notify $LINES $ROUNDS sh 0x400
# The C writer makes the kernel's part of each line as large as it gets:
# one write(2) on an open fd, so the per-event cost is not diluted by the
# shell's work.
step 1a.c "nonotify, C writer (one write(2) per line), IN_ALL_EVENTS" \
	$B/bench_notify $W/notify $CLINES $ROUNDS c 0xfff
step 1a.c-hook "nonotify, C writer, IN_DELETE_SELF (no events)" \
	$B/bench_notify $W/notify $CLINES $ROUNDS c 0x400
# The same with a consumer that sleeps 10 ms after each drain: fewer
# wakeups, the same events.
step 1a.all-batch "nonotify, busybox sh loop, IN_ALL_EVENTS, consumer batching 10 ms" \
	$B/bench_notify $W/notify $LINES $ROUNDS sh 0xfff batch:10
step 1a.change-batch "nonotify, busybox sh loop, change mask, consumer batching 10 ms" \
	$B/bench_notify $W/notify $LINES $ROUNDS sh 0xfc6 batch:10
step 1a.c-batch "nonotify, C writer, IN_ALL_EVENTS, consumer batching 10 ms" \
	$B/bench_notify $W/notify $CLINES $ROUNDS c 0xfff batch:10
# New files, as tar x or a git checkout makes them (issue 27): no event
# merges with the queue's tail, the case the event-path series makes
# dearer; a draining consumer and one that sleeps 1 ms after each drain
# (the queue is then rarely empty).  make bench-evpath BENCH_EVPATH=1a.files
# compares the fd series alone with both series.
step 1a.files "nonotify, C writer making new files (tar x), change mask" \
	$B/bench_notify $W/notify $STLINES $ROUNDS files 0xfc6
step 1a.files-batch "nonotify, C writer making new files, change mask, consumer batching 1 ms" \
	$B/bench_notify $W/notify $STLINES $ROUNDS files 0xfc6 batch:1
# Renames, the other storm that never merges: one file renamed back and
# forth between two names, an IN_MOVED_FROM and an IN_MOVED_TO per call.
step 1a.renames "nonotify, C writer renaming a file back and forth, change mask" \
	$B/bench_notify $W/notify $STLINES $ROUNDS renames 0xfc6
# The same loops as uid 65534: the fanotify group is then an unprivileged
# one (as root it is not, with the same flags and marks).
rm -rf $W/notify
step 1a.change-user "nonotify, busybox sh loop, change mask, as uid 65534" \
	env BENCH_AS_USER=65534 $B/bench_notify $W/notify $LINES $ROUNDS sh 0xfc6
step 1a.change-batch-user "nonotify, busybox sh loop, change mask, batching 10 ms, as uid 65534" \
	env BENCH_AS_USER=65534 $B/bench_notify $W/notify $LINES $ROUNDS sh 0xfc6 batch:10
step 1a.c-user "nonotify, C writer, IN_ALL_EVENTS, as uid 65534" \
	env BENCH_AS_USER=65534 $B/bench_notify $W/notify $CLINES $ROUNDS c 0xfff

# The event path stage by stage, on a kernel with
# experiments/evpath-stages.patch (make bench-evpath-stages): the C writer,
# change mask, batching consumer, with the path cut short at stage N
# (/sys/module/fsnotify/parameters/evpath_cut), then the whole path with
# the series' patches undone one by one (evpath_stock), C and shell
# writers, batching and draining consumers.  The batching consumer sleeps
# 1 ms, not 10: the writer's time ends when the consumer sees it exit,
# which a 10 ms sleep quantizes to 10 ms (10 ms of instructions); 1 ms
# still merges 97% of the shell's events and 99% of the C writer's.  Under ACCEL=icount a time is an instruction count, so
# the differences between cuts are each stage's instructions per write.
stages_bench() {
	knob=/sys/module/fsnotify/parameters/evpath_cut
	if [ ! -w $knob ]; then
		echo "bench: no $knob: not the experiments/evpath-stages.patch kernel"
		return 0
	fi
	# cut=N: the path cut at stage N; sM: the whole path with the
	# series' patches in mask M undone (s3 = the kernel before it)
	for cut in 1 2 3 4 5 0 s1 s2 s3; do
		case $cut in
		s*) echo 0 > $knob; echo ${cut#s} > ${knob%_cut}_stock ;;
		*) echo $cut > $knob; echo 0 > ${knob%_cut}_stock ;;
		esac
		for w in c sh; do
			for consumer in batch:1 drain; do
				# the shell and the draining rows only whole
				case "$cut $w $consumer" in [1-5]\ c\ batch:1) ;; [1-5]*) continue ;; esac
				n=$STLINES
				[ $w = c ] && n=$CLINES
				$B/bench_notify $W/notify $n $STROUNDS $w 0xfc6 $consumer |
					sed "s/^notify /notify cut=$cut /"
			done
		done
	done
	echo 0 > $knob
	echo 0 > ${knob%_cut}_stock
}
step 1a.stages "the event path per stage (evpath-stages kernel), C writer, change mask" \
	stages_bench
rm -rf $W/notify

# 1b + 1c. Watch setup at depth 8; memory per watch; fds held.
step 1b.setup "setup of $NDIRS watches at depth 8, memory, fds (1c)" \
	$B/bench_setup $W/setup $NDIRS $ROUNDS
step 1b.setup-user "setup of $NDIRS watches and fanotify marks at depth 8, as uid 65534" \
	env BENCH_AS_USER=65534 $B/bench_setup $W/setup $NDIRS $ROUNDS
rm -rf $W/setup

# 1b. Recursive watch of the kernel source tree's directories.
make_ktree() {
	tree=$W/ktree
	mkdir -p $tree
	if [ -f $B/kernel-dirs.txt ]; then
		echo "bench: tree = directory skeleton of the kernel source ($(wc -l < $B/kernel-dirs.txt) dirs)"
		(cd $tree && xargs mkdir -p < $B/kernel-dirs.txt)
	else
		# No list shipped: a synthetic tree of the same order (5,460
		# dirs: fan-out 4, depth 6), named so in the output.
		echo "bench: no $B/kernel-dirs.txt; tree = synthetic, fan-out 4, depth 6"
		(cd $tree && for a in 0 1 2 3; do for b in 0 1 2 3; do for c in 0 1 2 3; do
			for d in 0 1 2 3; do for e in 0 1 2 3; do
				echo "$a/$b/$c/$d/$e/0 $a/$b/$c/$d/$e/1 $a/$b/$c/$d/$e/2 $a/$b/$c/$d/$e/3"
			done; done; done; done; done | xargs mkdir -p)
	fi
	echo "bench: tree has $(find $tree -type d | wc -l) directories"
}
tree_bench() {
	make_ktree
	$B/bench_tree $tree $W/empty $TROUNDS
	r=$?
	rm -rf $tree $W/empty
	return $r
}
step 1b.tree "recursive watch: libinofd vs a bare walker vs inotifywait -r -m" tree_bench

# 1b. The bare walker marking with fanotify against the bare inotify
# walker, same tree, as root and as uid 65534.
tree_fan_bench() {
	make_ktree
	$B/bench_tree walkers $tree $TROUNDS
	r=$?
	env BENCH_AS_USER=65534 $B/bench_tree walkers $tree $TROUNDS || r=1
	rm -rf $tree
	return $r
}
step 1b.tree-fan "recursive: bare fanotify walker vs bare inotify walker, root and uid 65534" \
	tree_fan_bench

# 1b. Scale: inofd_watch_tree() and the bare walker on trees of 1,000 to
# 100,000 directories (ROOT/gGGGGG/dDDD, made in tmpfs by bench_tree);
# time and library heap per watch.  bench_tree raises max_user_watches.
# About 80 s under TCG (1b.tree about 30 s, 1b.setup about 20 s).
# The guest's /tmp is a tmpfs with the default inode limit (half the RAM
# pages): 100,000 directories need their own tmpfs without one.
scale_bench() {
	mkdir -p $W/scale
	mount -t tmpfs -o nr_inodes=0,mode=755 scale $W/scale 2>/dev/null &&
		echo "bench: scale trees in a tmpfs of their own (no inode limit)"
	$B/bench_tree scale $W/scale $SCALE $SROUNDS
	r=$?
	umount $W/scale 2>/dev/null
	rm -rf $W/scale
	return $r
}
step 1b.scale "recursive watch at scale: $SCALE directories, time and heap per watch" \
	scale_bench

# 1d. Library overhead per event: the iterator on a tree against a raw
# read() loop that builds the same full paths, at depth 0 and 8.
step 1d "events/s: libinofd iterator vs raw read()+path, depth 0" \
	$B/bench_lib $W/lib $NEV $ROUNDS 0
rm -rf $W/lib
step 1d.depth8 "events/s: libinofd iterator vs raw read()+path, depth 8" \
	$B/bench_lib $W/lib $NEV $ROUNDS 8
rm -rf $W/lib

echo "bench: done, status $rc"
exit $rc
