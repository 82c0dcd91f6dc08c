#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Turn a staging directory into the guest's initramfs (newc cpio).
#
#   mk-initramfs.sh STAGING OUT
#
# STAGING already holds /init, /tests and the project's static programs in
# /bin.  This adds busybox (static) with a link per applet, a minimal
# /etc, and Debian's inotifywait with the shared libraries ldd names.
set -euo pipefail

root=$1
out=$2

die() { echo "mk-initramfs: $*" >&2; exit 1; }

busybox=/bin/busybox
[ -x "$busybox" ] && file_is_static=$(ldd "$busybox" 2>&1 || true)
case "${file_is_static:-}" in
*"not a dynamic executable"*) ;;
*) die "$busybox is missing or not static: run 'make deps' (package busybox-static)" ;;
esac

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,mnt,root,lib,lib64}
cp "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list-full); do
	[ -e "$root/$applet" ] && continue
	ln -s /bin/busybox "$root/$applet"
done

cat > "$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/tmp:/bin/sh
EOF
cat > "$root/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
echo "guest" > "$root/etc/hostname"
echo 'PS1="guest# "' > "$root/etc/profile"

# Debian's inotifywait, for the comparison test: dynamically linked, so
# copy the loader and every library it names.
iw=$(command -v inotifywait || true)
[ -n "$iw" ] || die "inotifywait missing: run 'make deps' (package inotify-tools)"
cp "$iw" "$root/usr/bin/inotifywait"
for lib in $(ldd "$iw" | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done

chmod 755 "$root/init"
(cd "$root" && find . -print0 | LC_ALL=C sort -z |
	cpio --null -o -H newc --quiet --owner=0:0) > "$out.tmp"
mv "$out.tmp" "$out"
