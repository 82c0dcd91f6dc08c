#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make post on every committed series of a base, against the real kernel
# tree (tests/harness/post_test.sh checks post.sh's rules on a tiny tree
# of its own; this checks that each series as committed can be posted):
#
#   post_series_check.sh KSRC OUTDIR SERIESDIR...
#
# With a test identity, POST_DCO, POST_ASSISTED_BY and a test thread
# link, each SERIESDIR must give as many patches as its post-series (or
# its series) file names, each from the poster, with one Signed-off-by and one
# Assisted-by of the poster's, and a cover letter with the recipients of
# SERIESDIR/recipients; a cover letter with @BASE@ states POST_BASE (the
# Makefile's, on 7.2).  Run by make kernel-check (the tree must exist).
set -uo pipefail

[ $# -ge 3 ] || { echo "usage: $0 KSRC OUTDIR SERIESDIR..." >&2; exit 2; }
ksrc=$1 out=$2
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
fails=0

export GIT_AUTHOR_NAME="Post Check" GIT_AUTHOR_EMAIL=post-check@inotify-fd.dev
export POST_DCO=certified POST_ASSISTED_BY="post-check:none [post_series_check.sh]"
export POST_PREV_THREAD=https://lore.kernel.org/all/post-check/
export POST_FD_THREAD=https://lore.kernel.org/all/post-check-fd/
me="$GIT_AUTHOR_NAME <$GIT_AUTHOR_EMAIL>"
mkdir -p "$out" || exit 1

for sd in "$@"; do
	o=$out/$(echo "$sd" | tr / _)
	rm -rf "$o"
	if ! "$top/scripts/post.sh" "$ksrc" "$sd" "$o" < /dev/null > "$o.log" 2>&1; then
		echo "not ok - make post POST_SERIES=$sd"; sed 's/^/# /' "$o.log"
		fails=$((fails + 1)); continue
	fi
	# what the thread posts: its post-series if any (not its "after"
	# lines), else its series
	list=$sd/series
	[ -f "$sd/post-series" ] && list=$sd/post-series
	want=$(grep -cv '^\(#\|$\|after \)' "$list")
	got=$(wc -l < "$o/series")
	bad=""
	[ "$want" = "$got" ] || bad="$bad $got patches, not $want;"
	for f in $(cat "$o/series"); do
		[ "$(grep -cxF "Signed-off-by: $me" "$o/$f")" = 1 ] || bad="$bad $f: not one Signed-off-by of the poster;"
		[ "$(grep -cxF "Assisted-by: $POST_ASSISTED_BY" "$o/$f")" = 1 ] || bad="$bad $f: not one Assisted-by;"
		grep -qxF "From: $me" "$o/$f" || bad="$bad $f: not from the poster;"
	done
	if grep -q '@BASE@' "$sd/0000-cover-letter.patch"; then
		grep -qF "${POST_BASE:-@BASE@}" "$o/0000-cover-letter.patch" ||
			bad="$bad the cover letter does not state the base;"
	fi
	! grep -q '@SUBJECT(' "$o/0000-cover-letter.patch" || bad="$bad a thread's subject is unfilled;"
	to=$(grep -m1 '^To:' "$sd/recipients")
	grep -qF "$to" "$o/0000-cover-letter.patch" || bad="$bad the cover letter has no '$to';"
	if [ -n "$bad" ]; then
		echo "not ok - make post POST_SERIES=$sd:$bad"; fails=$((fails + 1))
	else
		echo "ok - make post POST_SERIES=$sd: $got patches and a cover letter"
	fi
done
exit $((fails > 0))
