#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make post: the series of patches/, ready to send, from the poster.
#
#   post.sh KSRC PATCHDIR OUTDIR
#
# The committed series is from a placeholder ("Placeholder Not A Person
# <placeholder@make-post.invalid>"): nothing committed pretends to be a
# person.  This script takes the poster's git identity, the one git itself
# would use for a commit here: GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL from
# the environment, else user.name and user.email from git config (the
# repository's own, the global or the system one).  It refuses to run when
# either is missing or is a placeholder, and when the cover letter still
# has a slot to fill ("[[SLOT").
#
# The cover letter may also name facts only the poster can look up, as
# "@NAME@" tokens: each is replaced by the environment variable POST_NAME,
# and the script refuses to run while one is unset.  Today there is one:
# @PREV_THREAD@, the lore.kernel.org link of the 2023 linux-fsdevel
# thread on inotify_add_watch_at() (POST_PREV_THREAD=https://lore.kernel.org/...;
# it was not reachable from where the series was written, and a link is
# not something to guess).
#
# Two more things only the poster can say, each refused while unsaid:
#   POST_DCO=certified: you certify the Developer's Certificate of Origin
#     1.1 (Documentation/process/submitting-patches.rst, "Sign your work")
#     for every patch, as the Signed-off-by this script adds in your name
#     says you do.  A tool cannot certify it for you (Documentation/
#     process/coding-assistants.rst: only a person can certify the DCO);
#     on a terminal the script asks, elsewhere the variable is the answer.
#   POST_ASSISTED_BY="AGENT_NAME:MODEL_VERSION [TOOL1] [TOOL2]": the tool
#     assistance to disclose, added to every patch as an "Assisted-by:"
#     trailer above the Signed-off-by, in the form coding-assistants.rst
#     gives (generated-content.rst asks that tool-generated content be
#     disclosed).  This project's series was written with a coding
#     assistant, so there is no "none".
#
# Then, in a scratch clone of KSRC (the kernel tree in the cache, tag
# "pristine"), it applies every patch with git am, with the placeholder
# replaced by the poster as author and Signed-off-by (git am --signoff
# adds the poster's Signed-off-by to any patch without it), and writes the
# series again with git format-patch (scripts/format-series.sh) into
# OUTDIR: no base-commit line, the recipients of PATCHDIR/recipients, the
# cover letter's text from PATCHDIR/0000-cover-letter.patch.  Nothing is
# sent: the last line says how to.
set -euo pipefail

[ $# = 3 ] || { echo "usage: $0 KSRC PATCHDIR OUTDIR" >&2; exit 2; }
ksrc=$1 patchdir=$2 out=$3
here=$(cd "$(dirname "$0")" && pwd)
placeholder_name="Placeholder Not A Person"
placeholder_email="placeholder@make-post.invalid"

die() { echo "post: $*" >&2; exit 1; }

# the identity: environment first, then git config as git reads it here
name=${GIT_AUTHOR_NAME:-$(git config user.name 2>/dev/null || true)}
email=${GIT_AUTHOR_EMAIL:-$(git config user.email 2>/dev/null || true)}
[ -n "$name" ] || die "no identity: set git config user.name (or GIT_AUTHOR_NAME)"
[ -n "$email" ] || die "no identity: set git config user.email (or GIT_AUTHOR_EMAIL)"
shopt -s nocasematch
case "$name <$email>" in
*placeholder*|*"not a person"*|*"inotify-fd developers"*|*"inotify-fd build"*|\
*@*.invalid\>|*@example.com\>|*@example.org\>|*@example.net\>|*@localhost*|*"(none)"*)
	die "refusing the placeholder identity '$name <$email>': set your own with git config user.name/user.email" ;;
esac
case "$email" in
*@*.*) ;;
*) die "'$email' is not a mail address" ;;
esac
shopt -u nocasematch

cover=$patchdir/0000-cover-letter.patch
[ -f "$cover" ] || die "$cover: no cover letter"
[ -f "$patchdir/series" ] || die "$patchdir/series: no series"
if grep -n '\[\[SLOT' "$cover"; then
	die "$cover has a slot to fill (above) before it can be posted"
fi
tokens=$(grep -o '@[A-Z][A-Z_]*@' "$cover" | sort -u | tr -d @ || true)
fill=()
for t in $tokens; do
	v=$(printenv "POST_$t" || true)
	[ -n "$v" ] || die "$cover names @$t@: set POST_$t (see scripts/post.sh)"
	case "$t:$v" in
	PREV_THREAD:https://lore.kernel.org/*) ;;
	PREV_THREAD:*) die "POST_PREV_THREAD='$v' is not a https://lore.kernel.org/ link" ;;
	esac
	case "$v" in
	*'|'*|*'\'*|*'&'*) die "POST_$t='$v': '|', '\\' and '&' are not allowed" ;;
	esac
	fill+=(-e "s|@$t@|$v|g")
done
# the Developer's Certificate of Origin: a person's statement, asked for
dco=${POST_DCO:-}
if [ -z "$dco" ] && [ -t 0 ] && [ -t 2 ]; then
	cat >&2 <<EOF
post: every patch will carry "Signed-off-by: $name <$email>", which
post: certifies the Developer's Certificate of Origin 1.1
post: (Documentation/process/submitting-patches.rst) for it: that you
post: have the right to submit it under the kernel's licence, and that
post: you have reviewed it and take responsibility for it.  Type
post: "certified" to certify it (or set POST_DCO=certified):
EOF
	read -r dco || dco=
fi
[ "$dco" = certified ] ||
	die "the Developer's Certificate of Origin is not certified: read it (Documentation/process/submitting-patches.rst), then set POST_DCO=certified"
assisted=${POST_ASSISTED_BY:-}
[ -n "$assisted" ] ||
	die "set POST_ASSISTED_BY=\"AGENT_NAME:MODEL_VERSION [TOOLS]\": this series was written with a coding assistant, and the kernel's policy (Documentation/process/coding-assistants.rst, generated-content.rst) asks for an Assisted-by: tag"
case "$assisted" in
*[![:print:]]*|*'|'*|*'\\'*|*'&'*)
	die "POST_ASSISTED_BY='$assisted': one printable line, without '|', '\\' or '&'" ;;
[A-Za-z0-9]*:[A-Za-z0-9]*) ;;
*) die "POST_ASSISTED_BY='$assisted' is not AGENT_NAME:MODEL_VERSION [TOOL1] [TOOL2]" ;;
esac

[ "$(realpath -m "$out")" != "$(realpath "$patchdir")" ] ||
	die "OUTDIR must not be $patchdir: the committed series keeps the placeholder"
git -C "$ksrc" rev-parse -q --verify 'pristine^{commit}' >/dev/null ||
	die "$ksrc has no 'pristine' tag: run make tree first"

patches=()
while read -r p; do
	case "$p" in ''|'#'*) continue ;; esac
	[ -f "$patchdir/$p" ] || die "$patchdir/series names $p, which does not exist"
	patches+=("$p")
done < "$patchdir/series"
[ ${#patches[@]} -gt 0 ] || die "$patchdir/series is empty"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# a clone that only checks out the files the series touches
files=$(cd "$patchdir" && sed -n 's|^+++ b/||p; s|^--- a/||p' "${patches[@]}" | sort -u)
git clone -q --shared --no-checkout "$ksrc" "$work/tree"
git -C "$work/tree" sparse-checkout set --no-cone $files
git -C "$work/tree" checkout -q -b post pristine

export GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email
for p in "${patches[@]}"; do
	n=$(grep -c "^From: $placeholder_name <$placeholder_email>\$" "$patchdir/$p" || true)
	[ "$n" -le 1 ] || die "$p: more than one placeholder From: line"
	n=$(grep -c "^Signed-off-by: $placeholder_name <$placeholder_email>\$" "$patchdir/$p" || true)
	[ "$n" = 1 ] || die "$p: not one placeholder Signed-off-by: line (the poster's Signed-off-by and Assisted-by replace it)"
	awk -v ph="$placeholder_name <$placeholder_email>" -v me="$name <$email>" -v ab="$assisted" '
		!body && $0 == "From: " ph { print "From: " me; next }
		!body && /^$/ { body = 1 }
		$0 == "Signed-off-by: " ph { print "Assisted-by: " ab; print "Signed-off-by: " me; next }
		{ print }' "$patchdir/$p" > "$work/$p"
	git -C "$work/tree" am -q --signoff --whitespace=nowarn "$work/$p" ||
		die "$p does not apply to pristine"
done

sed -e "s|^From: $placeholder_name <$placeholder_email>\$|From: $name <$email>|" \
	"${fill[@]}" "$cover" > "$work/cover.patch"
SERIES_NAME=$name SERIES_EMAIL=$email \
	"$here/format-series.sh" "$work/tree" pristine post "$out" \
	"$work/cover.patch" "$patchdir/recipients" >/dev/null

if grep -l -e '@[A-Z][A-Z_]*@' "$out/0000-cover-letter.patch"; then
	die "a token of the cover letter is still unfilled in the file above"
fi
if grep -l -e "$placeholder_email" -e "$placeholder_name" "$out"/*.patch; then
	die "the placeholder is still in the files above"
fi
for f in $(cat "$out/series"); do
	grep -qxF "Assisted-by: $assisted" "$out/$f" || die "$out/$f: no Assisted-by: line"
done
echo "post: ${#patches[@]} patches and a cover letter from $name <$email> in $out"
echo "post: check them, then: git send-email $out/*.patch"
