#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of run-guest.sh's time bounds (issue 29) with fake QEMUs, and
# of the Makefile's per-variant bounds.  A guest that is slow but prints
# must pass however long it takes; a silent one is stopped after
# QEMU_IDLE; a test that stays silent past the bound the guest announced
# for it ("# run N/M: NAME (USER), up to Ts") is stopped after that bound
# plus QEMU_IDLE_SLACK, however large QEMU_IDLE is; QEMU_TIMEOUT caps the
# whole run.  Run by make harness-check.
set -uo pipefail

. "$(dirname "$0")/tap.sh"	# $top, $t, ok, bad, check

lacks() { ! grep -q "$1"; }

# A QEMU that writes its -pidfile and then plays the guest $FAKE_GUEST
# (a bash fragment); QEMU exit status 1 is the guest's "passed".
cat > "$t/qemu" <<'FAKE'
#!/bin/bash
while [ $# -gt 0 ]; do
	[ "$1" = -pidfile ] && echo $$ > "$2"
	shift
done
if [ -n "${FAKE_QEMU_ERROR:-}" ]; then
	echo "qemu-system-x86_64: $FAKE_QEMU_ERROR" >&2
	exit 1
fi
echo "inofd: guest userspace up at 0.5s"
echo "=== inofd ${FAKE_MODE:-tests} ==="
eval "$FAKE_GUEST"
FAKE
chmod +x "$t/qemu"
touch "$t/bzImage" "$t/initrd"

# guest NAME FRAGMENT [VAR=VALUE...]: one run (MODE, default check);
# sets $rc, $out, $secs
guest() {
	local name=$1 frag=$2 t0=$EPOCHREALTIME
	shift 2
	out=$(env QEMU="$t/qemu" ACCEL=tcg FAKE_GUEST="$frag" "$@" \
		"$top/scripts/run-guest.sh" "${MODE:-check}" "$t/bzImage" "$t/initrd" \
		"$t/$name.log" 2>&1)
	rc=$?
	secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }')
	echo "$out" | sed "s/^/# $name: /"
}
between() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# 1. slow but steady: 8 s of tests, each silent for 2 s, with a silence
#    bound of 3 s and its own announced bound of 6 s: passes
guest steady 'echo "TAP version 13"; echo "1..4"
for i in 1 2 3 4; do
	echo "# run $i/4: t$i (root), up to 6s"
	sleep 2
	echo "ok $i - t$i (root) # 2.00s"
done
exit 1' QEMU_IDLE=3 QEMU_IDLE_SLACK=1 QEMU_TIMEOUT=60
check "a slow guest that prints passes (rc $rc, ${secs}s > QEMU_IDLE=3)" \
	[ "$rc" = 0 ]
check "... and is reported as 4 passed" grep -q '^guest: 4 passed, 0 failed' <<< "$out"

# 2. a guest that goes silent outside any test: stopped after QEMU_IDLE
guest silent 'echo "TAP version 13"; echo "1..1"; exec sleep 300' \
	QEMU_IDLE=3 QEMU_TIMEOUT=120
check "a silent guest fails (rc $rc)" [ "$rc" = 1 ]
check "... stopped by the silence bound" \
	grep -q 'FAIL: QEMU stopped: no line from the guest for [0-9]*s (bound 3s)' <<< "$out"
check "... within ${secs}s (3 s bound, checked every 2 s)" \
	between "$secs" 3 8

# 3. a test silent past its own bound: its bound, not QEMU_IDLE's 100 s
guest hung 'echo "TAP version 13"; echo "1..1"
echo "# run 1/1: t1 (root), up to 2s"; exec sleep 300' \
	QEMU_IDLE=100 QEMU_IDLE_SLACK=2 QEMU_TIMEOUT=120
check "a hung test fails (rc $rc)" [ "$rc" = 1 ]
check "... stopped at its announced bound plus the slack (4 s)" \
	grep -q 'FAIL: QEMU stopped: no line from the guest for [0-9]*s (bound 4s)' <<< "$out"
check "... within ${secs}s" between "$secs" 4 9

# 4. the cap: a guest that prints forever is stopped by QEMU_TIMEOUT
guest chatty 'while :; do echo "# tick"; sleep 0.2; done' \
	QEMU_IDLE=2 QEMU_TIMEOUT=4
check "a guest past QEMU_TIMEOUT fails (rc $rc)" [ "$rc" = 1 ]
check "... with the cap's message" grep -q 'FAIL: QEMU timed out after 4s' <<< "$out"
check "... not the silence bound's" lacks 'no line from the guest' <<< "$out"

# 5. demo and bench pass on the guest's own last line, not on QEMU's
#    status alone: QEMU that cannot open the initrd exits 1 too.
MODE=bench guest bench-ok 'echo "=== inofd bench exit 0 ==="; exit 1' \
	FAKE_MODE=bench QEMU_TIMEOUT=60
check "a bench that ends well passes (rc $rc)" [ "$rc" = 0 ]
check "... and says so" grep -q '^run-guest: bench passed' <<< "$out"
MODE=bench guest bench-noinitrd '' QEMU_TIMEOUT=60 \
	FAKE_QEMU_ERROR="could not load initrd '/nonexistent'"
check "QEMU that cannot open the initrd fails a bench (rc $rc)" [ "$rc" = 1 ]
check "... naming QEMU's error" \
	grep -q "FAIL: QEMU exited with status 1 before the guest started: .*could not load initrd" <<< "$out"
check "... and not reported as passed" lacks 'bench passed' <<< "$out"
MODE=demo guest demo-cut 'echo "half a story"; exit 1' FAKE_MODE=demo QEMU_TIMEOUT=60
check "a demo that ends without its last line fails (rc $rc)" [ "$rc" = 1 ]
check "... with the reason" grep -q 'FAIL: the guest did not report the end of its demo' <<< "$out"

# 6. the Makefile: each variant's bounds reach the run they belong to,
#    also through a DEBUG=1 sub-make of a default make (as make check runs
#    the debug suite), and what the user gives reaches every run.
cat > "$t/sub.mk" <<'MK'
sub:
	@$(MAKE) -s --no-print-directory guest-env DEBUG=1
MK
mk() { env -u QEMU_MEM -u QEMU_TIMEOUT -u MAKEFLAGS -u MAKELEVEL "$@"; }
cd "$top" || exit 1
def=$(mk make -s guest-env)
dbg=$(mk make -s guest-env DEBUG=1)
sub=$(mk make -s -f Makefile -f "$t/sub.mk" sub)
usr=$(mk QEMU_TIMEOUT=99 make -s -f Makefile -f "$t/sub.mk" sub)
cmd=$(mk make -s -f Makefile -f "$t/sub.mk" sub QEMU_MEM=2G)
echo "# default: $def; debug: $dbg; debug under default: $sub"
echo "# QEMU_TIMEOUT=99 in the environment: $usr; QEMU_MEM=2G on the command line: $cmd"
check "the default variant: 512M, cap 7200 s" [ "$def" = "QEMU_MEM=512M QEMU_TIMEOUT=7200" ]
check "the debug variant: 1G, cap 14400 s" [ "$dbg" = "QEMU_MEM=1G QEMU_TIMEOUT=14400" ]
check "a DEBUG=1 sub-make of a default make gets the debug bounds" [ "$sub" = "$dbg" ]
check "QEMU_TIMEOUT from the environment reaches the sub-make" \
	[ "$usr" = "QEMU_MEM=1G QEMU_TIMEOUT=99" ]
check "QEMU_MEM on the command line reaches the sub-make" \
	[ "$cmd" = "QEMU_MEM=2G QEMU_TIMEOUT=14400" ]

echo "1..$n"
[ "$fails" = 0 ]
