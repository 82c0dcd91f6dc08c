#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check that every patch of the series builds on its own: apply the patches
# one at a time onto pristine and build bzImage after each.
#
#   series-build-check.sh KSRC WORK CONFIG PATCHDIR
#
# KSRC is the cache tree made by kernel-tree.sh (its tag "pristine" is the
# base); WORK is a directory of this script's own (a clone of KSRC and an
# out-of-tree build); CONFIG is the .config to start from.  Builds after
# the first are incremental.  A stamp holding the series hash skips the
# whole check when the series has not changed since it last passed.
# Progress (scripts/progress.sh): patch i/N and the objects built; the
# first build expects as many objects as CONFIG's own build dir last had.
set -euo pipefail

ksrc=$1
work=$2
config=$3
patchdir=$4

die() { echo "series-build-check: $*" >&2; exit 1; }

mapfile -t patches < <(grep -v -e '^#' -e '^$' "$patchdir/series")
hash=$( (cat "$patchdir/series" "$config"; for p in "${patches[@]}"; do cat "$patchdir/$p"; done) |
	sha256sum | cut -d' ' -f1)
if [ "$(cat "$work/.ok" 2>/dev/null)" = "$hash" ]; then
	echo "series-build-check: each of the ${#patches[@]} patches built on its own (unchanged since)"
	exit 0
fi
rm -f "$work/.ok"

tree=$work/linux
build=$work/build
if ! git -C "$tree" rev-parse -q --verify pristine >/dev/null 2>&1 ||
   [ "$(git -C "$tree" rev-parse pristine)" != "$(git -C "$ksrc" rev-parse pristine)" ]; then
	rm -rf "$tree" "$build"
	mkdir -p "$work"
	git clone -q --no-checkout "$ksrc" "$tree"
	git -C "$tree" config user.name "inotify-fd build"
	git -C "$tree" config user.email "build@inotify-fd.invalid"
	git -C "$tree" checkout -q -f --detach pristine
fi
git -C "$tree" am --abort >/dev/null 2>&1 || true
git -C "$tree" checkout -q -f --detach pristine
git -C "$tree" clean -q -f -d
mkdir -p "$build"
est=$(cat "$(dirname "$config")/.inofd-objects" 2>/dev/null || echo 1500)

i=0
for p in "${patches[@]}"; do
	i=$((i + 1))
	git -C "$tree" am -q --whitespace=nowarn "$(realpath "$patchdir/$p")" ||
		die "patch $i ($p) does not apply"
	cp "$config" "$build/.config"
	make -s -C "$tree" O="$build" ARCH=x86_64 olddefconfig >/dev/null
	start=$(date +%s)
	# warnings and errors are shown as they come; the log keeps all
	"$(dirname "$0")/progress.sh" kbuild "series-check: patch $i/${#patches[@]}" \
		"$build" "$est" "$build/log" -- \
		make -C "$tree" O="$build" ARCH=x86_64 -j"$(nproc)" bzImage ||
		die "the tree does not build with patches 1-$i ($p applied last; errors above)"
	if grep -E 'warning:|error:' "$build/log" | grep -v '^make' >/dev/null; then
		die "patch $i ($p): the build has warnings (above; all of it in $build/log)"
	fi
	echo "series-build-check: patches 1-$i build ($(( $(date +%s) - start ))s): $p"
done
echo "$hash" > "$work/.ok"
echo "series-build-check: each of the ${#patches[@]} patches built on its own"
