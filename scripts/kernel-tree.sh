#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Keep a patched kernel tree in the cache directory in step with patches/.
#
#   kernel-tree.sh TARBALL KSRC PATCHDIR...
#
# KSRC is a git repository: commit "pristine" is the unpacked tarball, the
# branch "work" is pristine plus the series applied with git am -3: each
# PATCHDIR's series file in turn, in the order given (patches, then
# patches/event-path for the default kernel).  A stamp file
# (KSRC/.series-stamp) holds the hash of all the series; it is rewritten
# only when the series changed, so make can depend on its mtime.  When the
# series changes the tree is reset to pristine first (git checkout rewrites
# only the files that differ, so an incremental kernel build stays
# incremental) and every patch is applied again: a stale tree is never kept.
set -euo pipefail

tarball=$1
ksrc=$2
shift 2
[ $# -ge 1 ] || { echo "usage: kernel-tree.sh TARBALL KSRC PATCHDIR..." >&2; exit 2; }

die() { echo "kernel-tree: $*" >&2; exit 1; }

[ -r "$tarball" ] || die "$tarball not found: run 'make deps' (package $(basename "$tarball" .tar.xz))"

tar_id=$(stat -c '%s %Y' "$tarball")

if [ ! -d "$ksrc/.git" ] || [ "$(cat "$ksrc/.pristine-id" 2>/dev/null)" != "$tar_id" ]; then
	echo "kernel-tree: unpacking $tarball into $ksrc"
	rm -rf "$ksrc" "$ksrc.tmp"
	mkdir -p "$ksrc.tmp"
	tar -xf "$tarball" -C "$ksrc.tmp" --strip-components=1
	(
		cd "$ksrc.tmp"
		git init -q
		git config user.name "inotify-fd build"
		git config user.email "build@inotify-fd.invalid"
		git config core.autocrlf false
		git config gc.auto 0
		git add -A -f
		git commit -q -m pristine
		git tag pristine
		git checkout -q -b work
	)
	echo "$tar_id" > "$ksrc.tmp/.pristine-id"
	echo "/.pristine-id" >> "$ksrc.tmp/.git/info/exclude"
	echo "/.series-stamp" >> "$ksrc.tmp/.git/info/exclude"
	mv "$ksrc.tmp" "$ksrc"
fi

# The hash covers each series file and every patch it names, in order.
patches=()
hashed=()
for patchdir in "$@"; do
	series="$patchdir/series"
	[ -f "$series" ] || die "$series not found"
	hashed+=("$series")
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		[ -f "$patchdir/$p" ] || die "$series names $p, which does not exist"
		patches+=("$patchdir/$p")
		hashed+=("$patchdir/$p")
	done < "$series"
done
want=$(cat "${hashed[@]}" | sha256sum | cut -d' ' -f1)
have=$(cat "$ksrc/.series-stamp" 2>/dev/null || true)

if [ "$want" = "$have" ] && git -C "$ksrc" diff --quiet HEAD; then
	# series-build-check.sh leaves the tree detached only if it was killed
	[ "$(git -C "$ksrc" symbolic-ref -q HEAD)" = refs/heads/work ] ||
		git -C "$ksrc" checkout -q -f work
	exit 0
fi

echo "kernel-tree: applying ${#patches[@]} patch(es) from $* onto pristine"
rm -f "$ksrc/.series-stamp"
git -C "$ksrc" am --abort >/dev/null 2>&1 || true
git -C "$ksrc" checkout -q -f -B work pristine
git -C "$ksrc" clean -q -f -d
for p in "${patches[@]}"; do
	# -3: each series is posted against the base alone, so where two touch
	# neighbouring lines (the selftests' TARGETS list) the second falls
	# back to a three-way merge with the pristine blobs; a real conflict
	# still stops here
	if ! git -C "$ksrc" am -q -3 --whitespace=nowarn "$(realpath "$p")"; then
		git -C "$ksrc" am --abort >/dev/null 2>&1 || true
		git -C "$ksrc" checkout -q -f -B work pristine
		die "patch $p does not apply: the tree was reset to pristine"
	fi
	echo "  applied $p"
done
echo "$want" > "$ksrc/.series-stamp"
