#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Carry a change of the 6.1 series over to the 6.12 series.
#
#   port-series.sh KSRC61 KSRC612 OLD61 NEW61 OLD612 OUT612 [WORK]
#
# OLD61 is the 6.1 series (a patches/ directory with its series file) that
# OLD612 (patches/6.12/) was ported from; NEW61 is the 6.1 series as it is
# now.  Both series must have the same number of patches.  KSRC61 and
# KSRC612 are the cache trees (scripts/kernel-tree.sh); only their
# "pristine" commits are read.
#
# In WORK (default: a temporary directory), a small git repository holds
# only the files the series touch, from both pristine trees.  OLD61,
# NEW61 and OLD612 are applied there with git am, and for each patch k the
# new 6.12 commit is a three-way merge, file by file and of the commit
# message too: ours = OLD612's commit k, base = OLD61's commit k, theirs =
# NEW61's commit k.  What 6.12 needs of its own (its fd handling, pidfs,
# the fsnotify mode) is in OLD612 and is kept; what the 6.1 series
# changed is carried over.  The result is written to OUT612 with
# scripts/format-series.sh: the cover letter's text merged the same way
# (OLD612's, OLD61's, NEW61's), the recipients from NEW61's.  On a conflict the script stops and names the
# file; resolve it in WORK/repo (markers in the file), then run:
#   git -C WORK/repo add -A && git -C WORK/repo commit -C <theirs> && \
#   port-series.sh ... WORK   (continues after the last commit made)
# Check the result: make checkpatch series-check guest-check KERNEL=6.12.
set -euo pipefail

[ $# -ge 6 ] || { sed -n '4,28p' "$0" >&2; exit 2; }
k61=$1 k612=$2 old61=$(realpath "$3") new61=$(realpath "$4") old612=$(realpath "$5") out=$6
work=${7:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
die() { echo "port-series: $*" >&2; exit 1; }

patches_of() { grep -v -e '^#' -e '^$' "$1/series" | sed "s#^#$1/#"; }
mapfile -t P_old61 < <(patches_of "$old61")
mapfile -t P_new61 < <(patches_of "$new61")
mapfile -t P_old612 < <(patches_of "$old612")
n=${#P_new61[@]}
[ ${#P_old61[@]} = "$n" ] && [ ${#P_old612[@]} = "$n" ] ||
	die "the series differ in length (${#P_old61[@]}, ${#P_old612[@]}, $n): port by hand"

r=$work/repo
if [ ! -d "$r/.git" ]; then
	mkdir -p "$r"
	git -C "$r" init -q
	git -C "$r" config user.name port-series
	git -C "$r" config user.email port-series@inotify-fd.invalid
	files=$(cat "${P_old61[@]}" "${P_new61[@]}" "${P_old612[@]}" |
		sed -n 's#^diff --git a/\([^ ]*\) b/.*#\1#p' | sort -u)
	fill() {	# fill TREE: the pristine versions of the files
		for f in $files; do
			if git -C "$1" cat-file -e "pristine:$f" 2>/dev/null; then
				mkdir -p "$r/$(dirname "$f")"
				git -C "$1" show "pristine:$f" > "$r/$f"
			fi
		done
		git -C "$r" add -A
	}
	fill "$k61"
	git -C "$r" commit -q --allow-empty -m base61
	git -C "$r" tag base61
	git -C "$r" am -q "${P_old61[@]}" || die "OLD61 does not apply to 6.1's pristine files"
	git -C "$r" branch old61
	git -C "$r" checkout -q -B new61 base61
	git -C "$r" am -q "${P_new61[@]}" || die "NEW61 does not apply to 6.1's pristine files"
	git -C "$r" checkout -q --orphan base612-branch
	git -C "$r" rm -r -q -f --cached . && git -C "$r" clean -q -f -d
	fill "$k612"
	git -C "$r" commit -q --allow-empty -m base612
	git -C "$r" tag base612
	git -C "$r" am -q "${P_old612[@]}" || die "OLD612 does not apply to 6.12's pristine files"
	git -C "$r" branch old612
	git -C "$r" checkout -q -B new612 base612
fi

mapfile -t C_old61 < <(git -C "$r" rev-list --reverse base61..old61)
mapfile -t C_new61 < <(git -C "$r" rev-list --reverse base61..new61)
mapfile -t C_old612 < <(git -C "$r" rev-list --reverse base612..old612)
done_n=$(git -C "$r" rev-list --count base612..new612)
tmp=$work/tmp
mkdir -p "$tmp"
for ((i = done_n; i < n; i++)); do
	o61=${C_old61[$i]} n61=${C_new61[$i]} o612=${C_old612[$i]}
	conflict=
	for f in $( (git -C "$r" diff --name-only base61 "$n61"
		     git -C "$r" diff --name-only base61 "$o61"
		     git -C "$r" diff --name-only base612 "$o612") | sort -u); do
		if ! git -C "$r" cat-file -e "$n61:$f" 2>/dev/null; then
			git -C "$r" rm -q -f --ignore-unmatch "$f"
			continue
		fi
		for v in o612 o61 n61; do
			git -C "$r" show "${!v}:$f" > "$tmp/$v" 2>/dev/null || : > "$tmp/$v"
		done
		mkdir -p "$r/$(dirname "$f")"
		git merge-file -p -L 6.12 -L old-6.1 -L new-6.1 \
			"$tmp/o612" "$tmp/o61" "$tmp/n61" > "$r/$f" || conflict="$conflict $f"
	done
	# the commit message: the same merge
	for v in o612 o61 n61; do git -C "$r" log -1 --format=%B "${!v}" > "$tmp/m$v"; done
	git merge-file -p "$tmp/mo612" "$tmp/mo61" "$tmp/mn61" > "$tmp/msg" || conflict="$conflict (message)"
	git -C "$r" add -A
	[ -z "$conflict" ] || die "patch $((i + 1)): conflict in$conflict; see the usage above (message: $tmp/msg)"
	git -C "$r" commit -q --allow-empty -C "$n61"
	git -C "$r" commit -q --amend -F "$tmp/msg"
	echo "port-series: $((i + 1))/$n $(git -C "$r" log -1 --format=%s)"
done

# The cover letter's subject and text, merged the same way (the shortlog
# and diffstat are made again by format-series.sh).
blurb() {
	awk '/^Subject:/ { s = $0; getline; while ($0 ~ /^ /) { s = s $0; getline }
			   sub(/^Subject: *(\[[^]]*\] *)?/, "", s); print "Subject: " s; print ""; exit }' "$1"
	awk 'body && /^[^ ].* \([0-9]+\):$/ { exit }
	     body { print }
	     !body && /^$/ { body = 1 }' "$1"
}
blurb "$old612/0000-cover-letter.patch" > "$tmp/co612"
blurb "$old61/0000-cover-letter.patch" > "$tmp/co61"
blurb "$new61/0000-cover-letter.patch" > "$tmp/cn61"
git merge-file -p -L 6.12 -L old-6.1 -L new-6.1 "$tmp/co612" "$tmp/co61" "$tmp/cn61" > "$tmp/cover" ||
	die "the cover letter: conflict in $tmp/cover; resolve it there and run format-series.sh by hand"
printf '\nport-series (0):\n' >> "$tmp/cover"

SERIES_NAME=$(git -C "$r" log -1 --format=%an new612) \
SERIES_EMAIL=$(git -C "$r" log -1 --format=%ae new612) \
	"$here/format-series.sh" "$r" base612 new612 "$out" \
	"$tmp/cover" "$new61/recipients"
