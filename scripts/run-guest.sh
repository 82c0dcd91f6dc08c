#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot the test guest under QEMU and judge the run.
#
#   run-guest.sh MODE BZIMAGE INITRD LOG [EXTRA KERNEL ARGS...]
#
# MODE is check, demo, bench or shell (see tests/guest/init.sh).  The run
# passes only if the guest ended QEMU through isa-debug-exit with status 0
# (QEMU exit code 1), the log holds no kernel warning, oops, BUG, KASAN,
# UBSAN, lockdep or kmemleak report, and every planned test reported
# (check mode) or the guest printed its own end (demo and bench).  Environment: QEMU_MEM
# (default 512M), QEMU_SMP (default 2), QEMU (default qemu-system-x86_64),
# ACCEL (auto, the default: KVM if scripts/accel-probe.sh finds that it
# works on this host, with its answer cached in ACCEL_CACHE; or tcg or kvm
# to force one; or icount: one vCPU whose clock counts instructions).  Bench runs and soak runs (inofd.soak=) show progress per
# step (scripts/progress.sh).
#
# Two time bounds, both in wall-clock seconds (issue 29: under TCG a guest
# is as fast as what else the host runs, so a busy machine must make a
# run slower, never fail it):
#   QEMU_IDLE (default 600): QEMU is stopped when no line has come from
#     the guest for this long.  While a guest test runs, the bound is the
#     one the guest announced for that test ("# run N/M: NAME (USER), up
#     to Ts", with its own timeout scaled for the debug kernel) plus
#     QEMU_IDLE_SLACK (default 120): a test prints its output when it ends.
#   QEMU_TIMEOUT (default 14400): a cap on the whole run that a suite that
#     is still making progress never reaches (the slowest, the debug suite
#     on a loaded machine, took 1,933 s).
set -uo pipefail

mode=$1
kernel=$2
initrd=$3
log=$4
shift 4

timeout_s=${QEMU_TIMEOUT:-14400}
idle_s=${QEMU_IDLE:-600}
slack_s=${QEMU_IDLE_SLACK:-120}
mem=${QEMU_MEM:-512M}
smp=${QEMU_SMP:-2}
accel=${ACCEL:-auto}
qemu_bin=${QEMU:-qemu-system-x86_64}
here=$(dirname "$0")

command -v "$qemu_bin" >/dev/null ||
	{ echo "run-guest: $qemu_bin missing: run 'make deps' (package qemu-system-x86)"; exit 1; }

# KVM hangs or aborts on some machines: auto uses it only where a bounded
# probe boot under KVM worked (answer cached per host); say which and why.
case "$accel" in
auto)
	answer=$(QEMU=$qemu_bin "$here/accel-probe.sh" \
		"${ACCEL_CACHE:-$HOME/.cache/inotify-fd/accel}" "$kernel" "$initrd") ||
		{ echo "run-guest: the KVM probe could not run"; exit 1; }
	accel=${answer%% *}
	why="ACCEL=auto: ${answer#* }"
	;;
*) why="forced by ACCEL=$accel" ;;
esac
echo "run-guest: accelerator $accel ($why)"
case "$accel" in
tcg) accel_opt="-accel tcg,thread=multi" ;;
# Exact and slow: guest time is its instruction count (bench 1d's ratio
# as instructions, user and kernel).  One vCPU: with two it never booted.
icount)
	accel_opt="-accel tcg,thread=single -icount shift=0,sleep=off"
	smp=1
	;;
*) accel_opt="-accel $accel" ;;
esac

# no_timer_check: the kernel's IO-APIC timer check counts timer ticks in
# a busy loop, and a TCG vCPU starved by a loaded host missed them: "Kernel
# panic - not syncing: IO-APIC + timer doesn't work!" at 0.05 s (seen at
# load 21).  The check is for broken boards; QEMU's timer works.
append="console=ttyS0 loglevel=5 panic=-1 no_timer_check inofd.mode=$mode $*"

work=$(mktemp -d "${TMPDIR:-/tmp}/run-guest.XXXXXX") || exit 1
trap 'kill "$watcher" 2>/dev/null; rm -rf "$work"' EXIT
watcher=

qemu=("$qemu_bin" -M pc $accel_opt -smp "$smp" -m "$mem"
	-pidfile "$work/qemu.pid"
	-nographic -no-reboot -nodefaults -serial stdio
	-device isa-debug-exit,iobase=0xf4,iosize=0x04
	-kernel "$kernel" -initrd "$initrd" -append "$append")

if [ "$mode" = shell ]; then
	"${qemu[@]}"
	rc=$?
	# isa-debug-exit status 0 is QEMU exit 1: a normal end of the shell
	[ "$rc" = 1 ] && exit 0
	exit "$rc"
fi

mkdir -p "$(dirname "$log")"
# Kernel reports that fail the run; also shown live whatever the mode.
bad='WARNING:|BUG:|Oops|general protection fault|Kernel panic|KASAN:|UBSAN:|kmemleak:.*suspected|possible circular locking|possible recursive locking|inconsistent lock state|INFO: task .* blocked'
start=$(date +%s.%N)
# mawk reads a pipe in blocks unless -W interactive: the live view lagged.
# (Not "awk -W version | grep -q mawk": with pipefail, grep's early exit
# can kill awk with SIGPIPE, and the test failed under load.)
live_awk=(awk)
case "$(awk -W version 2>&1)" in *mawk*) live_awk=(awk -W interactive) ;; esac
# make bench and make soak: a step counter with elapsed times
progress='cat'
case "$mode $*" in
bench*) progress="$here/progress.sh guest bench" ;;
*inofd.soak=*) progress="$here/progress.sh guest soak" ;;
esac
# The idle bound: every 2 s, how long since the log last grew, and the
# bound that holds now (the running test's, or QEMU_IDLE).  On expiry the
# reason goes to $work/idle and QEMU gets SIGTERM, then SIGKILL.
watch_idle() {
	local last bound now idle pid i
	# (sleep in the background and wait: a kill ends the wait at once)
	while sleep 2 & wait $!; do
		[ -s "$work/qemu.pid" ] || continue
		pid=$(cat "$work/qemu.pid")
		kill -0 "$pid" 2>/dev/null || return 0
		bound=$idle_s
		last=$(grep -aE '^(# run [0-9]+/[0-9]+: .*, up to [0-9]+s|(not )?ok [0-9]+ .*)$' "$log" 2>/dev/null | tail -n 1)
		case "$last" in
		"# run "*)
			last=${last##*, up to }
			bound=$(( ${last%s} + slack_s ))
			;;
		esac
		now=$(date +%s)
		idle=$(( now - $(stat -c %Y "$log" 2>/dev/null || echo "$now") ))
		if [ "$idle" -ge "$bound" ]; then
			echo "no line from the guest for ${idle}s (bound ${bound}s)" > "$work/idle"
			kill -TERM "$pid" 2>/dev/null
			for i in 1 2 3 4 5 6 7 8 9 10; do
				kill -0 "$pid" 2>/dev/null || return 0
				sleep 1 & wait $!
			done
			kill -KILL "$pid" 2>/dev/null
			return 0
		fi
	done
}
: > "$log"
watch_idle &
watcher=$!

# Everything goes to the log; the terminal sees the guest's own output
# (from its start marker on) and any kernel report at any time.
timeout --foreground -k 10 "$timeout_s" "${qemu[@]}" < /dev/null 2>&1 |
	sed -u 's/\r$//' | tee "$log" |
	"${live_awk[@]}" -v bad="$bad" '
		/inofd: guest userspace up/ { sub(/.*inofd: guest/, "inofd: guest"); on = 1 }
		/^=== inofd / { on = 1 }
		on || $0 ~ bad { print; fflush() }' | $progress
rc=${PIPESTATUS[0]}
end=$(date +%s.%N)

fail=0
why=()
kill "$watcher" 2>/dev/null
wait "$watcher" 2>/dev/null
[ "$rc" != 1 ] && [ -s "$work/idle" ] && rc=idle
case "$rc" in
1) ;;
idle) why+=("QEMU stopped: $(cat "$work/idle")"); fail=1 ;;
3) why+=("the guest reported failure"); fail=1 ;;
124|137) why+=("QEMU timed out after ${timeout_s}s"); fail=1 ;;
0) why+=("the guest powered off without reporting (kernel panic?)"); fail=1 ;;
*) why+=("QEMU exited with status $rc"); fail=1 ;;
esac
if grep -Eq "$bad" "$log"; then
	why+=("the kernel log holds a warning or error report")
	fail=1
fi

secs=$(awk "BEGIN { printf \"%.1f\", $end - $start }")
boot=$(sed -n 's/.*inofd: guest userspace up at \([0-9.]*\)s$/\1/p' "$log" | head -1)
echo "run-guest: $mode run took ${secs}s wall clock (guest userspace up at ${boot:-?}s guest uptime); log: $log"

if [ "$mode" = check ]; then
	plan=$(grep -m1 -E '^1\.\.[0-9]+$' "$log" | cut -d. -f3)
	npass=$(grep -cE '^ok [0-9]+ ' "$log" | tr -d ' ')
	nskip=$(grep -cE '^ok [0-9]+ .*# SKIP' "$log" | tr -d ' ')
	nfail=$(grep -cE '^not ok [0-9]+ ' "$log" | tr -d ' ')
	npass=$((npass - nskip))
	if [ -z "$plan" ]; then
		why+=("the guest printed no test plan")
		fail=1
	elif [ $((npass + nskip + nfail)) != "$plan" ]; then
		why+=("planned $plan tests, $((npass + nskip + nfail)) reported")
		nfail=$((nfail + plan - npass - nskip - nfail))
		fail=1
	fi
	[ "$fail" = 1 ] && [ "$nfail" = 0 ] && nfail=1
	for w in "${why[@]}"; do echo "run-guest: FAIL: $w"; done
	echo "guest: $npass passed, $nfail failed, $nskip skipped"
else
	# QEMU's own errors (an initrd it cannot open, a bad option) end it
	# with status 1 too, which is also isa-debug-exit's "passed": only
	# the guest's own last line says that the demo or bench ran.
	if [ "$fail" = 0 ] && ! grep -q "^=== inofd $mode exit 0 ===\$" "$log"; then
		if grep -q 'inofd: guest userspace up' "$log"; then
			why+=("the guest did not report the end of its $mode")
		else
			why+=("QEMU exited with status $rc before the guest started: $(grep -m1 -v '^\s*$' "$log")")
		fi
		fail=1
	fi
	for w in "${why[@]}"; do echo "run-guest: FAIL: $w"; done
	[ "$fail" = 0 ] && echo "run-guest: $mode passed"
fi
exit "$fail"
