#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of scripts/check-lanes.sh (make check's two lanes) with a
# fake make: both lanes run at once, every host target runs after one
# failed, a failure of either lane fails the whole and shows the failed
# host target's log, and an interrupt ends the background lane too.
# Run by make harness-check.
set -uo pipefail

. "$(dirname "$0")/tap.sh"	# $top, $t, ok, bad, check

# The fake make: "make --no-print-directory TARGET...": each target
# sleeps 1 s, notes its start and end in $t/trace, and fails if its name
# starts with "bad"; "slow" sleeps 30 s.
cat > "$t/make" <<'FAKE'
#!/bin/bash
for a in "$@"; do
	case "$a" in -*) continue ;; esac
	echo "start $a $EPOCHREALTIME" >> "$TRACE"
	echo "nice $a $(nice)" >> "$TRACE"
	echo "output of $a"
	case "$a" in slow) sleep 30 ;; *) sleep 1 ;; esac
	echo "end $a $EPOCHREALTIME" >> "$TRACE"
	case "$a" in bad*) echo "why $a failed"; exit 2 ;; esac
done
exit 0
FAKE
chmod +x "$t/make"

lanes() {
	: > "$t/trace"
	out=$(TRACE="$t/trace" MAKE="$t/make" "$top/scripts/check-lanes.sh" \
		"$t/logs" "$@" 2>&1)
	rc=$?
	echo "$out" | sed 's/^/# /'
}
started() { grep -c "^start $1 " "$t/trace"; }
t_of() { awk -v w="$1 $2" '$1 " " $2 == w { print $3 }' "$t/trace"; }

# 1. both lanes pass, and run at the same time
lanes "h1 h2" k1 k2
check "both lanes pass: rc 0 (rc $rc)" [ "$rc" = 0 ]
check "... one line per host target" \
	[ "$(grep -cE '^host: h[12] passed in [0-9]+ s$' <<< "$out")" = 2 ]
check "... the kernel lane's output on the terminal" grep -q '^output of k1$' <<< "$out"
# the kernel lane's guests are the critical path: the host lane yields
base=$(nice)
check "... the kernel lane at the caller's nice ($base)" grep -qx "nice k1 $base" "$t/trace"
check "... the host lane at 10 more ($((base + 10 > 19 ? 19 : base + 10)))" \
	grep -qx "nice h1 $((base + 10 > 19 ? 19 : base + 10))" "$t/trace"
check "... the host lane's in its logs" grep -q '^output of h2$' "$t/logs/h2.log"
check "... the host lane started before the kernel lane ended" \
	awk -v a="$(t_of start h1)" -v b="$(t_of end k2)" 'BEGIN { exit !(a < b) }'
check "... and says so" grep -q '^check: every host check and kernel check passed$' <<< "$out"

# 2. a host target fails: the next still runs, the whole fails, its log shown
lanes "bad1 h2" k1
check "a failed host target fails the check (rc $rc)" [ "$rc" = 1 ]
check "... the host targets after it still run" [ "$(started h2)" = 1 ]
check "... it is named" grep -q '^host: bad1 FAILED in [0-9]* s (log: .*/bad1.log)$' <<< "$out"
check "... with the end of its log" grep -q '^why bad1 failed$' <<< "$out"
check "... and in the summary" grep -q '^check: FAILED: host checks (bad1)$' <<< "$out"

# 3. the kernel lane fails: the whole fails, after the host lane ended
lanes "h1 h2" bad-kernel
check "a failed kernel lane fails the check (rc $rc)" [ "$rc" = 1 ]
check "... the host lane still ran to its end" [ "$(started h2)" = 1 ]
check "... and the summary names the kernel lane" \
	grep -q '^check: FAILED: kernel checks$' <<< "$out"

# 4. a signal ends both lanes: no host target is left running.  Ctrl-C
#    (SIGINT to the terminal's foreground group, which the host lane is
#    not in) and SIGTERM take the same trap.  SIGINT cannot be tested
#    where this test inherited it ignored (a background job of a shell
#    without job control, as some CI runners start jobs): no trap can be
#    set on it there, and a Ctrl-C could not reach make check either.
interrupt() {
	local sig=$1
	: > "$t/trace"
	set -m	# the job keeps SIGINT (a background job of a script would not)
	TRACE="$t/trace" MAKE="$t/make" "$top/scripts/check-lanes.sh" \
		"$t/logs" "slow h2" k1 > "$t/int.out" 2>&1 &
	pid=$!
	set +m
	for _ in $(seq 300); do [ "$(started slow)" = 1 ] && break; sleep 0.1; done
	kill -"$sig" "$pid"
	wait "$pid"
	rc=$?
	sleep 0.5
	check "SIG$sig ends make check (rc $rc)" [ "$rc" = 130 ]
	check "... and the host lane's running target" \
		[ -z "$(pgrep -f "$t/make --no-print-directory slow")" ]
	check "... before it could go on to the next" [ "$(started h2)" = 0 ]
}
interrupt TERM
ignored=$(awk '/^SigIgn:/ { print $2 }' /proc/self/status)
if (( 0x$ignored & 2 )); then
	n=$((n + 1))
	echo "ok $n - SIGINT ends make check # SKIP SIGINT was ignored when this test started (SigIgn $ignored)"
else
	interrupt INT
fi

echo "1..$n"
[ "$fails" = 0 ]
