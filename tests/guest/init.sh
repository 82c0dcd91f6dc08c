#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test guest (busybox sh).  The kernel command line selects
# what it does:
#   inofd.mode=check   run /tests/tests.list (or inofd.tests=a,b,c), TAP out
#                      (inofd.soak=SECONDS: stress and fuzz tests run that long;
#                      inofd.oracle=SEEDSxOPS: lib_oracle runs that many,
#                      inofd.oracle_first=N: from seed N, not 1)
#   inofd.mode=demo    run /demo.sh, the examples/watch-fd story
#   inofd.mode=shell   an interactive shell on the serial console
#   inofd.mode=bench   run /bench/run.sh if present (inofd.bench=P1,P2:
#                      only the steps whose id contains one of the patterns;
#                      inofd.bench_lines=N, inofd.bench_rounds=N: the 1a sizes;
#                      inofd.bench_scale=N,N...: 1b.scale's tree sizes)
# It ends QEMU through the isa-debug-exit device: 0 = pass, 1 = fail.

PATH=/bin:/sbin:/usr/bin:/usr/sbin
export PATH

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t tmpfs -o mode=1777 tmpfs /tmp
mkdir -p /dev/pts
[ -d /sys/kernel/debug ] && mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
ln -s /proc/self/fd /dev/fd 2>/dev/null
hostname guest
echo "inofd: guest userspace up at $(cut -d' ' -f1 /proc/uptime)s"

mode=check
only=
soak=
oracle=
oracle_first=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	inofd.mode=*) mode=${arg#inofd.mode=} ;;
	inofd.tests=*) only=${arg#inofd.tests=} ;;
	inofd.bench=*) export BENCH_ONLY=${arg#inofd.bench=} ;;
	inofd.bench_lines=*) export BENCH_LINES=${arg#inofd.bench_lines=} ;;
	inofd.bench_rounds=*) export BENCH_ROUNDS=${arg#inofd.bench_rounds=} ;;
	inofd.bench_scale=*) export BENCH_SCALE=${arg#inofd.bench_scale=} ;;
	inofd.soak=*) soak=${arg#inofd.soak=} ;;
	inofd.oracle=*) oracle=${arg#inofd.oracle=} ;;
	inofd.oracle_first=*) oracle_first=${arg#inofd.oracle_first=} ;;
	esac
done

finish() {
	sync
	/bin/qemu-exit "$1"
	# not reached when the device is present
	poweroff -f
}

# Kernel reports that fail the run whatever the tests say.
BAD='WARNING:|BUG:|Oops|general protection fault|Kernel panic|KASAN:|UBSAN:|kmemleak:.*suspected|possible circular locking|possible recursive locking|inconsistent lock state|INFO: task .* blocked|Call Trace:'

# The soak run (make soak): the bounded stress and fuzz tests run for
# inofd.soak seconds each instead of their CI bounds.
if [ -n "$soak" ]; then
	export STRESS_SECONDS=$soak FUZZ_SECONDS=$soak
	echo "inofd: soak run, $soak s per stress or fuzz test"
fi

# The patched kernel is what this guest exists for: tests must not skip
# the kernel feature here.
export REQUIRE_INOTIFY_WATCH=1
# The same for the fanotify series, when the kernel has it: its selftest
# is then a real binary, not the shell stand-in the Makefile writes.
if [ -f /tests/fanotify_mark_fd_test ] &&
   [ "$(head -c 2 /tests/fanotify_mark_fd_test)" != "#!" ]; then
	export REQUIRE_FAN_OPATH=1
else
	export REQUIRE_FAN_OPATH=0
fi
# ... and for its end-of-mark event, FAN_IGNORED (fan_mark_end, libinofd)
if [ -f /tests/fanotify_mark_end_test ] &&
   [ "$(head -c 2 /tests/fanotify_mark_end_test)" != "#!" ]; then
	export REQUIRE_FAN_IGNORED=1
else
	export REQUIRE_FAN_IGNORED=0
fi
# On the debug kernel (KASAN, lockdep, kmemleak) everything is several
# times slower: bounded tests may scale their work down by this.
if [ -e /sys/kernel/debug/kmemleak ]; then
	export INOFD_DEBUG_KERNEL=1
else
	export INOFD_DEBUG_KERNEL=0
fi

case "$mode" in
shell)
	echo "inofd: interactive shell; 'exit' powers the guest off"
	setsid cttyhack sh -l
	finish 0
	;;
demo)
	echo "=== inofd demo ==="
	/demo.sh
	rc=$?
	if dmesg | grep -Eq "$BAD"; then
		echo "inofd: kernel reported a problem during the demo:"
		dmesg | grep -E "$BAD"
		rc=1
	fi
	echo "=== inofd demo exit $rc ==="
	[ $rc = 0 ] && finish 0
	finish 1
	;;
bench)
	echo "=== inofd bench ==="
	if [ -x /bench/run.sh ]; then
		/bench/run.sh
		rc=$?
	else
		echo "inofd: no benchmarks in this initramfs"
		rc=1
	fi
	echo "=== inofd bench exit $rc ==="
	[ $rc = 0 ] && finish 0
	finish 1
	;;
esac

# mode=check
echo "=== inofd tests ==="
kmemleak=/sys/kernel/debug/kmemleak
# Forget what boot left behind: scan, then clear, so that only objects
# the tests leave are reported (the scan's own dmesg line goes too).
# The automatic scan (every 10 min, each a full pass over memory under
# KASAN) is turned off: the scans after the suite find what it would.
if [ -e $kmemleak ]; then
	echo scan=off > $kmemleak
	echo scan > $kmemleak
	echo clear > $kmemleak
fi

# On the debug kernel, the queue and per-user limits that these tests
# fill by hand are lowered for their runs (root's and uid 65534's alike)
# and put back after each: uid 65534 cannot lower them itself, and
# filling 16,384 events and 8,192 watches under KASAN took 20-50 s a run.
# The same code paths run (the tests read the limits they find); the
# default and 6.12 kernels keep the stock limits.
small_tests="fd_equiv fd_equiv_m32 fd_badinput fd_badinput_m32 sem_table"
small_limits="inotify/max_queued_events=1024 inotify/max_user_watches=1024
fanotify/max_queued_events=1024 fanotify/max_user_marks=1024"
# limits_set NAME: lower the limits if NAME is one of small_tests
limits_set() {
	saved=
	[ "$INOFD_DEBUG_KERNEL" = 1 ] || return 0
	case " $small_tests " in *" $1 "*) ;; *) return 0 ;; esac
	for kv in $small_limits; do
		f=/proc/sys/fs/${kv%=*}
		[ -w "$f" ] || continue
		saved="$saved $f=$(cat "$f")"
		echo "${kv#*=}" > "$f"
	done
	echo "# debug kernel: limits lowered for this run: $(echo $small_limits)"
}
limits_restore() {
	for kv in $saved; do
		echo "${kv#*=}" > "${kv%=*}"
	done
	saved=
}
dmesg -c >/dev/null

# Expand the list into one line a run: NAME USER TIMEOUT CMD...
runs=/tmp/.runs
: > $runs
while read -r name user tmo cmd; do
	case "$name" in ''|'#'*) continue ;; esac
	if [ -n "$only" ]; then
		case ",$only," in *",$name,"*) ;; *) continue ;; esac
	fi
	# make oracle-guest: lib_oracle's seed and op counts from the command
	# line, with a bound of 50 ms per op and backend on top of its own
	if [ "$name" = lib_oracle ] && [ -n "$oracle" ]; then
		oc=${oracle%x*}
		oo=${oracle#*x}
		cmd=$(echo "$cmd" | sed "s/-c [0-9]* -n [0-9]*/-c $oc -n $oo${oracle_first:+ -S $oracle_first}/")
		tmo=$((tmo + oc * oo / 10))
	# On the debug kernel each oracle line runs a third of its seeds
	# (at least 1): every generator still runs under KASAN, lockdep and
	# kmemleak, while the seed count that searches the library's state
	# space is the default and 6.12 kernels' job.  Six oracle lines at
	# full count took 700 s of the debug run's 1200 s bound.
	elif [ "$INOFD_DEBUG_KERNEL" = 1 ] && [ -z "$soak" ]; then
		case "$name" in
		lib_oracle*)
			oc=$(echo "$cmd" | sed -n 's/.*-c \([0-9]*\).*/\1/p')
			if [ -n "$oc" ]; then
				dc=$(( (oc + 2) / 3 ))
				cmd=$(echo "$cmd" | sed "s/-c $oc /-c $dc /")
			fi
			;;
		esac
	fi
	case "$user" in
	both) echo "$name root $tmo $cmd" >> $runs
	      echo "$name user $tmo $cmd" >> $runs ;;
	root|user) echo "$name $user $tmo $cmd" >> $runs ;;
	*) echo "$name badlist $tmo $cmd" >> $runs ;;
	esac
done < /tests/tests.list

total=$(wc -l < $runs)
# With kmemleak, one more result: the leak scan after the whole suite
# (a scan takes seconds under TCG, too long to repeat after every test).
[ -e $kmemleak ] && total=$((total + 1))
echo "TAP version 13"
echo "1..$total"
n=0
pass=0
fail=0
skip=0
while read -r name user tmo cmd; do
	n=$((n + 1))
	desc="$name ($user)"
	if [ "$user" = badlist ]; then
		echo "not ok $n - $name # bad user field in tests.list"
		fail=$((fail + 1))
		continue
	fi
	# KASAN and lockdep make everything about 3x slower
	[ -n "$soak" ] && tmo=$((tmo + soak))
	[ "$INOFD_DEBUG_KERNEL" = 1 ] && tmo=$((tmo * 3))
	# the host's runner holds its silence bound to this test's own
	# (scripts/run-guest.sh): the output comes when the test ends
	echo "# run $n/$total: $desc, up to ${tmo}s"
	dir=/tmp/run.$n
	mkdir -p $dir
	chmod 1777 $dir
	out=/tmp/out.$n
	limits_set "$name" > $out
	start=$(cut -d' ' -f1 /proc/uptime)
	if [ "$user" = user ]; then
		(cd $dir && HOME=$dir TMPDIR=$dir timeout "$tmo" \
			/bin/runas 65534 65534 $cmd) >> $out 2>&1 < /dev/null
	else
		(cd $dir && HOME=$dir TMPDIR=$dir timeout "$tmo" $cmd) \
			>> $out 2>&1 < /dev/null
	fi
	rc=$?
	end=$(cut -d' ' -f1 /proc/uptime)
	limits_restore
	sed 's/^/# /' $out
	dmesg -c > /tmp/dmesg.$n
	why=
	if grep -Eq "$BAD" /tmp/dmesg.$n; then
		why="kernel reported a problem"
		grep -E "$BAD" /tmp/dmesg.$n | sed 's/^/# dmesg: /'
	elif [ $rc = 4 ]; then
		echo "ok $n - $desc # SKIP"
		skip=$((skip + 1))
		continue
	elif [ $rc = 143 ] || [ $rc = 124 ]; then
		why="timed out after ${tmo}s"
	elif [ $rc != 0 ]; then
		why="exit status $rc"
	fi
	secs=$(awk "BEGIN { printf \"%.2f\", $end - $start }")
	if [ -z "$why" ]; then
		echo "ok $n - $desc # ${secs}s"
		pass=$((pass + 1))
	else
		echo "not ok $n - $desc # $why"
		fail=$((fail + 1))
	fi
	rm -rf $dir
done < $runs

if [ -e $kmemleak ]; then
	n=$((n + 1))
	# objects must be a few seconds old before kmemleak reports them
	sleep 6
	echo scan > $kmemleak
	echo scan > $kmemleak
	# One known leak outside this project: ACPI's early kmem_caches on a
	# PCI-less tinyconfig (allocated in acpi_early_init, before /init).
	# Only records whose backtrace goes through acpi_early_init are set
	# aside, and they are still printed.
	awk -v known=/tmp/leaks.known -v new=/tmp/leaks '
		/^unreferenced object/ { flush(); rec = "" }
		{ rec = rec $0 "\n" }
		function flush() {
			if (rec == "") return
			if (rec ~ /acpi_early_init/) printf "%s", rec > known
			else printf "%s", rec > new
		}
		END { flush() }' $kmemleak
	touch /tmp/leaks /tmp/leaks.known
	if [ -s /tmp/leaks.known ]; then
		echo "# kmemleak: $(grep -c '^unreferenced' /tmp/leaks.known) boot-time ACPI objects set aside (acpi_early_init)"
	fi
	if [ -s /tmp/leaks ]; then
		sed 's/^/# /' /tmp/leaks
		echo "not ok $n - kmemleak # suspected leaks"
		fail=$((fail + 1))
	else
		echo "ok $n - kmemleak # no suspected leaks"
		pass=$((pass + 1))
	fi
fi

echo "# guest: $pass passed, $fail failed, $skip skipped"
[ $fail = 0 ] && [ $n = $total ] && [ $total -gt 0 ] && finish 0
finish 1
