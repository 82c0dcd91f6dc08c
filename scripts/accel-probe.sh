#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Does KVM work on this machine?  Answer once per host, then from a cache.
#
#   accel-probe.sh CACHEDIR KERNEL INITRD
#
# Prints one line, "kvm REASON" or "tcg REASON".  The probe boots KERNEL
# with INITRD under QEMU with -accel kvm, with /bin/qemu-exit of the
# initramfs as the init (rdinit=), which ends QEMU through isa-debug-exit
# with status 21 (QEMU exit code 43): only a guest that reached userspace
# under KVM can give that code.  A probe that hangs is killed after
# ACCEL_PROBE_TIMEOUT seconds (default 10; SIGKILL 2 s later).  The answer
# is cached in CACHEDIR, keyed by the host (machine-id, hostname), the
# host kernel release, the QEMU version and the CPU model, so another
# host, kernel or QEMU probes again; delete CACHEDIR/accel-* to re-probe.
# No usable KVM_DEV (default /dev/kvm) answers tcg at once, uncached.
# QEMU (default qemu-system-x86_64) is the QEMU binary.
set -uo pipefail

cachedir=$1
kernel=$2
initrd=$3
qemu=${QEMU:-qemu-system-x86_64}
dev=${KVM_DEV:-/dev/kvm}
bound=${ACCEL_PROBE_TIMEOUT:-10}

die() { echo "accel-probe: $*" >&2; exit 1; }

if [ ! -e "$dev" ]; then
	echo "tcg no $dev on this host"
	exit 0
fi
if [ ! -r "$dev" ] || [ ! -w "$dev" ]; then
	echo "tcg $dev is not readable and writable by $(id -un)"
	exit 0
fi
[ -f "$kernel" ] || die "$kernel: no kernel to probe with"
[ -f "$initrd" ] || die "$initrd: no initramfs to probe with"

qver=$("$qemu" --version 2>/dev/null | head -1) || qver=
[ -n "$qver" ] || die "'$qemu --version' failed: is QEMU installed? (make deps)"
key="machine=$(cat /etc/machine-id 2>/dev/null) host=$(uname -n) kernel=$(uname -r)
qemu=$qver
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
file=$cachedir/accel-$(printf '%s' "$key" | sha256sum | cut -c1-16)

cached() {
	local answer
	[ -f "$file" ] || return 1
	answer=$(head -1 "$file")
	case "$answer" in
	kvm\ * | tcg\ *) echo "$answer [cached in $file]"; return 0 ;;
	esac
	return 1
}

cached && exit 0
mkdir -p "$cachedir" || die "cannot create $cachedir"
# one probe at a time; whoever waited finds the answer cached
exec 9>"$cachedir/.accel.lock"
flock 9
cached && exit 0

out=$(mktemp)
trap 'rm -f "$out"' EXIT
t0=$EPOCHREALTIME
# timeout (not --foreground) signals the whole process group, so nothing
# the probe started outlives it
{ timeout -k 2 "$bound" "$qemu" -M pc -accel kvm -smp 1 -m 256M \
	-nographic -no-reboot -nodefaults -serial stdio \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 loglevel=1 panic=-1 rdinit=/bin/qemu-exit -- 21" \
	< /dev/null > "$out" 2>&1; } 2>/dev/null	# not bash's "Killed"
rc=$?
secs=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
case "$rc" in
43) answer="kvm a KVM guest reached userspace in ${secs}s" ;;
124 | 137) answer="tcg the KVM probe hung and was killed after ${bound}s" ;;
*)
	msg=$(grep -m1 -iE 'kvm|error|fail|abort' "$out" | cut -c1-120)
	[ -n "$msg" ] || msg=$(grep -m1 . "$out" | cut -c1-120)
	answer="tcg the KVM probe failed in ${secs}s (QEMU status $rc${msg:+: $msg})"
	;;
esac
printf '%s\n# %s\n' "$answer" "$(date -u '+%F %T') UTC, key: ${key//$'\n'/; }" > "$file.new" &&
	mv "$file.new" "$file"
echo "$answer [probed now, cached in $file]"
