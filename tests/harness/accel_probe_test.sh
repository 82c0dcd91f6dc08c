#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of the KVM probe (scripts/accel-probe.sh) and of run-guest.sh's
# choice of accelerator, with fake QEMUs: one that hangs (and ignores
# SIGTERM), one that fails, one whose guest reaches userspace, one that
# powers off.  Asserts the answer, the time bound, the cache and its key,
# and the one line run-guest.sh prints.  Run by make harness-check.
set -uo pipefail

. "$(dirname "$0")/tap.sh"	# $top, $t, ok, bad, check
probe=$top/scripts/accel-probe.sh
bound=2		# ACCEL_PROBE_TIMEOUT for the tests

# fake NAME VERSION BODY: a QEMU that logs each boot to $t/NAME.calls
fake() {
	cat > "$t/$1" <<FAKE
#!/bin/bash
if [ "\${1:-}" = --version ]; then echo "QEMU emulator version $2"; exit 0; fi
echo "\$*" >> "$t/$1.calls"
$3
FAKE
	chmod +x "$t/$1"
}
fake hang "90.1 (fake: hangs)" "trap '' TERM; sleep 1000 & wait; sleep 1000"
fake fail "90.2 (fake: fails)" 'echo "qemu-system-x86_64: Could not access KVM kernel module: Permission denied" >&2; echo "qemu-system-x86_64: failed to initialize kvm: Permission denied" >&2; exit 1'
fake works "90.3 (fake: works)" 'case "$*" in *"-accel kvm"*"rdinit=/bin/qemu-exit -- 21"*) exit 43 ;; esac; exit 99'
fake off "90.4 (fake: powers off)" 'exit 0'
# a guest for run-guest.sh: KVM hangs, TCG boots and passes the demo
fake guest "90.5 (fake: KVM hangs, TCG works)" 'case "$*" in
*"-accel kvm"*) exec sleep 1000 ;;
*"-accel tcg"*) echo "inofd: guest userspace up at 0.5s"; echo "=== inofd demo ==="; echo "=== inofd demo exit 0 ==="; exit 1 ;;
esac; exit 99'
touch "$t/kvm" "$t/bzImage" "$t/initrd"
calls() { cat "$t/$1.calls" 2>/dev/null | wc -l; }

# probe NAME CACHE: run the probe with fake QEMU NAME; sets $out, $secs
probe() {
	local t0=$EPOCHREALTIME
	out=$(QEMU=$t/$1 KVM_DEV=$t/kvm ACCEL_PROBE_TIMEOUT=$bound \
		"$probe" "$2" "$t/bzImage" "$t/initrd" 2>&1)
	secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
	echo "# $1: $out (${secs}s)"
}
within() { awk -v s="$1" -v l="$2" 'BEGIN { exit !(s <= l) }'; }

# The time bounds are relative to what this machine takes now for a probe
# whose QEMU returns at once (base: the script, a fork or two, the cache),
# so that a loaded machine makes them wider, not the test red: a hanging
# probe answers within the bound, the 2 s before SIGKILL and 2 s or three
# bases of slack; a cached answer within 3 s or three bases.
probe off "$t/cache0"
base=$secs
slack=$(awk -v b="$base" 'BEGIN { s = 3 * b; printf "%.1f", (s > 2 ? s : 2) }')
limit=$(awk -v b="$bound" -v s="$slack" 'BEGIN { printf "%.1f", b + 2 + s }')
climit=$(awk -v b="$base" 'BEGIN { s = 3 * b; printf "%.1f", (s > 3 ? s : 3) }')
rm -f "$t/off.calls"
echo "# base ${base}s: a hanging probe within ${limit}s, a cached one within ${climit}s"

# 1. a probe that hangs (and ignores SIGTERM) falls back within its bound
probe hang "$t/cache"
check "hanging QEMU: tcg" [ "${out%% *}" = tcg ]
check "hanging QEMU: says it hung" grep -q "hung and was killed after ${bound}s" <<< "$out"
check "hanging QEMU: answered in ${secs}s <= ${limit}s" within "$secs" "$limit"
check "hanging QEMU: booted once" [ "$(calls hang)" = 1 ]
check "hanging QEMU: nothing left running" \
	bash -c "! pgrep -f 'sleep 1000' -P \$(pgrep -d, -f '$t/hang' || echo 1) >/dev/null"
check "hanging QEMU: answer cached" grep -q '^tcg the KVM probe hung' "$t"/cache/accel-*
# 2. the cached answer comes back at once, without a boot
probe hang "$t/cache"
check "cached: tcg again" [ "${out%% *}" = tcg ]
check "cached: says so" grep -q 'cached in' <<< "$out"
check "cached: no second boot" [ "$(calls hang)" = 1 ]
check "cached: answered in ${secs}s <= ${climit}s (no boot)" within "$secs" "$climit"
# 3. another QEMU version (another key) probes again, into its own entry
probe fail "$t/cache"
check "failing QEMU: tcg" [ "${out%% *}" = tcg ]
check "failing QEMU: gives QEMU's reason" grep -q 'status 1: .*Could not access KVM' <<< "$out"
check "failing QEMU: booted" [ "$(calls fail)" = 1 ]
check "failing QEMU: a second cache entry" [ "$(ls "$t"/cache/accel-* | wc -l)" = 2 ]
# 4. a guest that reaches userspace under KVM: kvm
probe works "$t/cache"
check "working KVM: kvm" [ "${out%% *}" = kvm ]
check "working KVM: booted once" [ "$(calls works)" = 1 ]
probe works "$t/cache"
check "working KVM: cached as kvm" [ "${out%% *} $(calls works)" = "kvm 1" ]
# 5. a guest that powers off without reaching qemu-exit is not KVM working
probe off "$t/cache"
check "powered off: tcg" [ "${out%% *}" = tcg ]
# 6. no usable /dev/kvm: tcg at once, no boot, nothing cached
out=$(QEMU=$t/works KVM_DEV=$t/nokvm "$probe" "$t/cache2" "$t/bzImage" "$t/initrd")
check "no KVM device: tcg without a boot" \
	[ "${out%% *} $(calls works) $(ls "$t"/cache2 2>/dev/null | wc -l)" = "tcg 1 0" ]
# 7. run-guest.sh: ACCEL=auto falls back and says why; ACCEL forces
t0=$EPOCHSECONDS
out=$(QEMU=$t/guest KVM_DEV=$t/kvm ACCEL_PROBE_TIMEOUT=$bound ACCEL_CACHE=$t/cache3 \
	"$top/scripts/run-guest.sh" demo "$t/bzImage" "$t/initrd" "$t/demo.log" 2>&1)
rc=$?
echo "$out" | sed 's/^/# run-guest: /'
check "run-guest ACCEL=auto: one line naming tcg and why" \
	[ "$(grep -c "^run-guest: accelerator tcg (ACCEL=auto: the KVM probe hung" <<< "$out")" = 1 ]
check "run-guest ACCEL=auto: the demo ran under TCG and passed" \
	[ "$rc $(grep -c 'demo passed' <<< "$out")" = "0 1" ]
check "run-guest ACCEL=auto: within the bound" within $((EPOCHSECONDS - t0)) "$(awk -v l="$limit" 'BEGIN { print l + 2 }')"
out=$(QEMU=$t/works ACCEL=kvm "$top/scripts/run-guest.sh" demo "$t/bzImage" "$t/initrd" "$t/demo.log" 2>&1)
check "run-guest ACCEL=kvm: forced, no probe" \
	[ "$(grep -c '^run-guest: accelerator kvm (forced by ACCEL=kvm)' <<< "$out") $(grep -c rdinit "$t/works.calls")" = "1 1" ]
check "run-guest ACCEL=kvm: QEMU ran with -accel kvm" \
	grep -q -- '-accel kvm .*inofd.mode=demo' "$t/works.calls"
out=$(QEMU=$t/guest ACCEL=tcg "$top/scripts/run-guest.sh" demo "$t/bzImage" "$t/initrd" "$t/demo.log" 2>&1)
check "run-guest ACCEL=tcg: forced, passes" \
	[ "$(grep -c -e '^run-guest: accelerator tcg (forced by ACCEL=tcg)' -e 'demo passed' <<< "$out")" = 2 ]

echo "# accel-probe: $((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
