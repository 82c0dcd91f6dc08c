#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of scripts/progress.sh with fake builds and a fake guest run:
# quiet kbuild lines are counted, not shown; warnings, errors and other
# lines pass through in full; the build's exit status survives the pipe;
# the expected count comes from the last complete build; a line every
# PROGRESS_EVERY seconds off a terminal, one redrawn line (\r) on one.
set -uo pipefail

. "$(dirname "$0")/tap.sh"	# $top, $t, ok, bad, check
progress=$top/scripts/progress.sh
has() { grep -qF -- "$1" "$t/out"; }

# a fake kbuild: OBJS objects (files in BDIR), a warning, then STATUS;
# "link" makes BDIR/vmlinux (a complete build)
cat > "$t/fakebuild" <<'FAKE'
#!/bin/bash
bdir=$1 objs=$2 status=$3 pause=${4:-0}
echo "make[1]: Entering directory '$bdir'"
echo "  SYNC    include/config/auto.conf.cmd"
echo "  HOSTCC  scripts/basic/fixdep"
for i in $(seq "$objs"); do
	echo "  CC      dir/file$i.o"
	touch "$bdir/file$i.o"
	[ "$i" = 2 ] && echo "dir/file2.c:10:5: warning: unused variable 'x' [-Wunused-variable]" >&2 &&
		echo "   10 |     int x;" >&2
	sleep "$pause"
done
echo "  AR      dir/built-in.a"
[ "${5:-}" = link ] && [ "$status" = 0 ] && touch "$bdir/vmlinux"
[ "$status" != 0 ] && echo "dir/file9.c:1:1: error: expected ';' before '}' token" >&2 &&
	echo "make[2]: *** [scripts/Makefile.build:250: dir/file9.o] Error 1" >&2
echo "make[1]: Leaving directory '$bdir'"
exit "$status"
FAKE
chmod +x "$t/fakebuild"
b=$t/build
mkdir -p "$b"

# 1. first build: the estimate, every object counted, warnings in full
PROGRESS_TTY=0 "$progress" kbuild "kernel test" "$b" 5 "$t/log" -- "$t/fakebuild" "$b" 4 0 0 link > "$t/out" 2>&1
rc=$?
sed 's/^/# /' "$t/out"
check "success: status 0" [ "$rc" = 0 ]
check "success: the warning in full, with its source line" \
	bash -c "grep -qxF \"dir/file2.c:10:5: warning: unused variable 'x' [-Wunused-variable]\" '$t/out' && grep -qxF '   10 |     int x;' '$t/out'"
check "success: no quiet kbuild lines, no make directory lines" \
	bash -c "! grep -qE '^  (CC|AR|HOSTCC|SYNC) |Entering directory|Leaving directory' '$t/out'"
check "success: first line against the estimate" has "kernel test: 0/5 objects (0%)"
check "success: last line counts the objects" has "kernel test: 4 objects built in 0m0"
check "success: the log has every line" [ "$(wc -l < "$t/log")" = 11 ]
check "success: count of this build kept for the next" [ "$(cat "$b/.inofd-objects")" = 4 ]
# 2. a failing build: its status, its error in full
rm -f "$b"/*.o "$b/vmlinux"
PROGRESS_TTY=0 "$progress" kbuild "kernel test" "$b" 5 - -- "$t/fakebuild" "$b" 3 2 > "$t/out" 2>&1
rc=$?
sed 's/^/# /' "$t/out"
check "failure: exit status 2 kept" [ "$rc" = 2 ]
check "failure: the error in full" has "dir/file9.c:1:1: error: expected ';' before '}' token"
check "failure: make's error line" has "make[2]: *** [scripts/Makefile.build:250: dir/file9.o] Error 1"
check "failure: said so" has "kernel test: FAILED (status 2)"
check "failure: count kept from the last good build" [ "$(cat "$b/.inofd-objects")" = 4 ]
# 3. expected = last complete build's count less the objects already there
rm -f "$b"/*.o
touch "$b/file1.o"
PROGRESS_TTY=0 "$progress" kbuild "kernel test" "$b" 99 - -- "$t/fakebuild" "$b" 4 0 > "$t/out" 2>&1
check "resumed build: 4 known, 1 there, 3 expected" has "kernel test: 0/3 objects"
check "a build without vmlinux (one object): count kept" [ "$(cat "$b/.inofd-objects")" = 4 ]
# 4. over an existing vmlinux: incremental, no guess
touch "$b/vmlinux"
PROGRESS_TTY=0 "$progress" kbuild "kernel test" "$b" 99 - -- "$t/fakebuild" "$b" 2 0 > "$t/out" 2>&1
check "incremental: count alone" has "kernel test: 0 objects rebuilt"
# 5. off a terminal: a line every PROGRESS_EVERY seconds, not per object
rm -f "$b/vmlinux" "$b"/*.o
PROGRESS_TTY=0 PROGRESS_EVERY=1 "$progress" kbuild "kernel test" "$b" 5 - -- \
	"$t/fakebuild" "$b" 30 0 0.1 > "$t/out" 2>&1
lines=$(grep -c '^kernel test: [0-9]*/' "$t/out")
check "not a terminal: $lines progress lines for 30 objects in ~3 s (2-8)" [ "$lines" -ge 2 ] && [ "$lines" -le 8 ]
check "not a terminal: no carriage returns" bash -c "! grep -q $'\r' '$t/out'"
# 6. on a terminal: one line redrawn with \r, cleared before other lines
PROGRESS_TTY=1 "$progress" kbuild "kernel test" "$b" 5 - -- "$t/fakebuild" "$b" 4 0 > "$t/out" 2>&1
check "terminal: redrawn in place" grep -q $'\r\033\[Kkernel test: 3 objects' "$t/out"
check "terminal: the warning on a cleared line of its own" \
	grep -q $'\r\033\[Kdir/file2.c:10:5: warning' "$t/out"
check "terminal: ends with the summary on its own line" \
	bash -c "tail -c 200 '$t/out' | grep -q 'kernel test: 4 objects built in 0m0[0-9]s$'"
# 7. a guest run: every line passes; steps counted with times
{
	echo "inofd: guest userspace up at 0.9s"
	echo "=== inofd bench ==="
	echo "bench: plan 2 steps"
	echo "=== 1a.x first step"
	sleep 1.5
	echo "notify result line"
	echo "=== 1d second step"
	sleep 1.2
	echo "=== inofd bench exit 0 ==="
} | PROGRESS_TTY=0 PROGRESS_EVERY=1 "$progress" guest bench > "$t/out" 2>&1
sed 's/^/# /' "$t/out"
check "guest: every line passes" \
	[ "$(grep -cxE 'inofd: guest userspace up at 0.9s|=== inofd bench ===|bench: plan 2 steps|=== 1a.x first step|notify result line|=== 1d second step|=== inofd bench exit 0 ===' "$t/out")" = 7 ]
check "guest: step 1/2 named, with times" grep -qE '^bench: step 1/2 1a.x, 0m0[0-9]s in it, 0m0[0-9]s in all$' "$t/out"
check "guest: step 2/2 named" grep -qE '^bench: step 2/2 1d, ' "$t/out"
# 8. a soak run: TAP plan and results
{ echo "1..2"; sleep 1.2; echo "ok 1 - stress_watch (root) # 1.20s"; sleep 1.2; echo "ok 2 - fuzz_ioctl (root) # 1.20s"; } |
	PROGRESS_TTY=0 PROGRESS_EVERY=1 "$progress" guest soak > "$t/out" 2>&1
check "soak: test 1/2 then 2/2" bash -c "grep -q '^soak: test 1/2, ' '$t/out' && grep -q '^soak: test 2/2, ' '$t/out' && ! grep -q 'test 3/2' '$t/out'"

# 9. run-guest.sh bench: the guest's lines reach the step counter as they
# come (no pipe stage may hold them back in a buffer)
cat > "$t/qemu" <<'FAKE'
#!/bin/bash
[ "$1" = --version ] && { echo "QEMU emulator version 90.9 (fake guest)"; exit 0; }
echo "inofd: guest userspace up at 0.5s"; echo "=== inofd bench ==="; echo "bench: plan 2 steps"
echo "=== 1a.x step one"; sleep 4; echo "=== 1d step two"; sleep 1; echo "=== inofd bench exit 0 ==="
exit 1
FAKE
chmod +x "$t/qemu"
touch "$t/k" "$t/i"
QEMU=$t/qemu ACCEL=tcg PROGRESS_EVERY=1 "$top/scripts/run-guest.sh" bench "$t/k" "$t/i" "$t/bench.log" > "$t/out" 2>&1
rc=$?
sed 's/^/# /' "$t/out"
check "run-guest bench: passes through the counter" [ "$rc" = 0 ]
check "run-guest bench: step 1 seen live (seconds into it)" grep -q '^bench: step 1/2 1a.x, 0m0[1-9]s in it' "$t/out"

echo "# progress: $((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
