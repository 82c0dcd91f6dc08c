#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Check that every patch of the series builds on its own: check out the
# series one commit at a time and build vmlinux after each (bzImage when
# the patch touches arch/x86/boot).
#
#   series-build-check.sh KSRC WORK CONFIG PATCHDIR...
#
# KSRC is the cache tree made by kernel-tree.sh: its branch "work" is
# pristine plus the series, one commit per patch, and CONFIG's directory
# is the default build of that branch.  With several PATCHDIRs, their
# series are applied in that order (kernel-tree.sh) and checked in turn.  The check builds in KSRC itself
# (detached at patch i, then back on "work") into WORK/build, which starts
# as a copy of the default build: every build, the first included, is then
# incremental (kbuild rebuilds what patches i+1..N touched and what their
# Kconfig symbols reach), not a second build from scratch.  On any exit
# the tree goes back to "work", and the files the series touches get their
# old mtimes back, so the default build does not rebuild them; kernel-tree.sh
# refuses a tree that is not on "work".  A stamp holding the series hash
# skips the whole check when the series has not changed since it passed.
# Progress (scripts/progress.sh): patch i/N and the objects built.
set -euo pipefail

ksrc=$1
work=$2
config=$3
shift 3

die() { echo "series-build-check: $*" >&2; exit 1; }

# patches[] are paths: each PATCHDIR's series in turn
patches=()
for patchdir in "$@"; do
	while read -r p; do
		patches+=("$patchdir/$p")
	done < <(grep -v -e '^#' -e '^$' "$patchdir/series")
done
hash=$( (for d in "$@"; do cat "$d/series"; done; cat "$config"
	for p in "${patches[@]}"; do cat "$p"; done) | sha256sum | cut -d' ' -f1)
if [ "$(cat "$work/.ok" 2>/dev/null)" = "$hash" ]; then
	echo "series-build-check: each of the ${#patches[@]} patches built on its own (unchanged since)"
	exit 0
fi
rm -f "$work/.ok"

build=$work/build
defbuild=$(dirname "$config")
tip=$(git -C "$ksrc" rev-parse -q --verify refs/heads/work) || die "$ksrc has no branch work"
{ [ "$(git -C "$ksrc" symbolic-ref -q HEAD)" = refs/heads/work ] &&
	git -C "$ksrc" diff --quiet HEAD; } ||
	die "$ksrc is not a clean checkout of branch work: run 'make tree'"
mapfile -t commits < <(git -C "$ksrc" rev-list --reverse pristine..work)
[ ${#commits[@]} = ${#patches[@]} ] ||
	die "$ksrc has ${#commits[@]} commits on pristine, the series ${#patches[@]}: run 'make tree'"

# the mtimes of what the series touches, to put back at the end
stamps=$work/mtimes
mkdir -p "$work"
git -C "$ksrc" diff --name-only pristine work | while read -r f; do
	[ -e "$ksrc/$f" ] && printf '%s\t%s\n' "$(stat -c %y "$ksrc/$f")" "$f"
done > "$stamps"
restore() {
	git -C "$ksrc" checkout -q -f work
	while IFS=$'\t' read -r t f; do
		touch -d "$t" "$ksrc/$f"
	done < "$stamps"
}
trap restore EXIT

rm -rf "$build" "$work/linux"
cp -a "$defbuild" "$build"
# objtool's build records its output directory in its .cmd and .d files:
# point them at the copy (mtimes kept), or objtool is rebuilt, and with it
# every object that objtool checked
grep -rlIF "$defbuild/" "$build" | while read -r f; do
	t=$(stat -c %y "$f")
	sed -i "s#$defbuild/#$build/#g" "$f"
	touch -d "$t" "$f"
done
est=$(cat "$defbuild/.inofd-objects" 2>/dev/null || echo 1500)

i=0
for p in "${patches[@]}"; do
	c=${commits[$i]}
	i=$((i + 1))
	subj=$(git mailinfo /dev/null /dev/null < "$p" | sed -n 's/^Subject: //p')
	[ "$(git -C "$ksrc" log -1 --format=%s "$c")" = "$subj" ] ||
		die "commit $i of $ksrc is not $p: run 'make tree'"
	git -C "$ksrc" checkout -q -f --detach "$c"
	# a patch that touches only documentation and selftests changes nothing
	# that bzImage is built from (the selftest is built for the guest)
	if ! git -C "$ksrc" diff --name-only "$c~" "$c" |
		grep -qvE '^(Documentation/|tools/testing/selftests/|MAINTAINERS$)'; then
		echo "series-build-check: patches 1-$i: $p touches only Documentation/, selftests or MAINTAINERS, no kernel build"
		continue
	fi
	# vmlinux: every object compiled and linked (kallsyms passes
	# included); bzImage adds only its xz compression and the boot code,
	# which no patch here touches (built in full when one does)
	target=vmlinux
	case $'\n'"$(git -C "$ksrc" diff --name-only "$c~" "$c")" in
	*$'\n'arch/x86/boot/*) target=bzImage ;;
	esac
	cp "$config" "$build/.config"
	make -s -C "$ksrc" O="$build" ARCH=x86_64 olddefconfig >/dev/null
	start=$(date +%s)
	# warnings and errors are shown as they come; the log keeps all
	"$(dirname "$0")/progress.sh" kbuild "series-check: patch $i/${#patches[@]}" \
		"$build" "$est" "$build/log" -- \
		make -C "$ksrc" O="$build" ARCH=x86_64 -j"$(nproc)" "$target" ||
		die "the tree does not build with patches 1-$i ($p applied last; errors above)"
	if grep -E 'warning:|error:' "$build/log" | grep -v '^make' >/dev/null; then
		die "patch $i ($p): the build has warnings (above; all of it in $build/log)"
	fi
	echo "series-build-check: patches 1-$i build ($(( $(date +%s) - start ))s): $p"
done
[ "$(git -C "$ksrc" rev-parse HEAD)" = "$tip" ] || die "the last commit is not the tip of work"
echo "$hash" > "$work/.ok"
echo "series-build-check: each of the ${#patches[@]} patches built on its own"
