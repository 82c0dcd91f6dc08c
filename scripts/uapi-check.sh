#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The uapi header of a newer base (6.12, 7.2) against the repo's copy.
#
#   uapi-check.sh HEADER KSRC KSRC61 TARBALL61
#
# HEADER (include-uapi/linux/inotify.h) is what the 6.1 series installs,
# checked byte for byte there.  KSRC's base has its own, older changes to
# the same file (comment fixes): the check takes the series' change on
# 6.1 (pristine 6.1 header -> HEADER) and applies it to KSRC's pristine
# header; the result must be KSRC's patched header byte for byte.  So
# both series make the same change, and the library's definitions are the
# same on both bases.  The pristine 6.1 header comes from KSRC61's
# "pristine" commit, or from TARBALL61 when that tree is not there.
set -euo pipefail

header=$1
ksrc=$2
ksrc61=$3
tar61=$4
f=include/uapi/linux/inotify.h

die() { echo "uapi-check: $*" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if git -C "$ksrc61" cat-file -e "pristine:$f" 2>/dev/null; then
	git -C "$ksrc61" show "pristine:$f" > "$tmp/base61.h"
else
	[ -r "$tar61" ] || die "neither $ksrc61 nor $tar61 to read 6.1's header from"
	tar -xJOf "$tar61" --wildcards "*/$f" > "$tmp/base61.h"
fi
[ -s "$tmp/base61.h" ] || die "no pristine 6.1 $f"
git -C "$ksrc" show "pristine:$f" > "$tmp/expected.h"

diff -u "$tmp/base61.h" "$header" > "$tmp/series.diff" || true
[ -s "$tmp/series.diff" ] || die "$header equals 6.1's pristine header: no series change"
patch -s --no-backup-if-mismatch "$tmp/expected.h" < "$tmp/series.diff" ||
	die "the 6.1 series' change to $f does not apply to $ksrc's pristine header"

if ! cmp -s "$tmp/expected.h" "$ksrc/$f"; then
	diff -u "$tmp/expected.h" "$ksrc/$f" >&2 || true
	die "$ksrc/$f is not $header's change applied to its base (diff above)"
fi
base=$(diff "$tmp/base61.h" <(git -C "$ksrc" show "pristine:$f") | grep -c '^<' || true)
echo "uapi-check: $ksrc's $f is $header's change applied to its base" \
	"(the bases differ in $base line(s) of their own)"
