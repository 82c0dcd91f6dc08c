#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make post: the series of patches/, ready to send, from the poster.
#
#   post.sh KSRC PATCHDIR OUTDIR [PATCHDIR OUTDIR]...
#
# Each PATCHDIR is a thread: its cover letter, its recipients, and the
# patches it posts.  Those are the ones PATCHDIR/post-series names if it
# exists, else PATCHDIR/series (the list the kernel tree applies): the
# watch-by-fd series posts its first nine patches and keeps /dev/inotify
# for a thread of its own.  A line "after DIR" of post-series applies the
# patches DIR posts (DIR relative to PATCHDIR) before this thread's,
# without posting them: patches/dev-inotify posts the device on top of
# the fd series.  Every thread is checked before anything is written.
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
# and the script refuses to run while one is unset.  Each *_THREAD token
# is a thread's lore.kernel.org link, and nothing else is accepted for it:
#   @PREV_THREAD@ (the watch-by-fd cover letter): the 2023 linux-fsdevel
#     thread on inotify_add_watch_at(), whose replies the letter quotes
#     (https://lore.kernel.org/all/20230918123217.932179-1-max.kellermann@ionos.com/);
#     the poster opens it and confirms it by setting POST_PREV_THREAD;
#   @FD_THREAD@ (the /dev/inotify cover letter, patches/dev-inotify): the
#     link of the watch-by-fd thread as posted, which it goes on top of,
#     known only once that thread is out.
#   @BASE@: the base as the cover letter states it ("Linux 7.2.13, as
#     Debian's linux-source-7.2 7.2.13-1 ships it"); make post sets
#     POST_BASE from the Makefile's pin.
# A token "@SUBJECT(DIR)@" is the subject of another thread, DIR relative
# to PATCHDIR ("..", "fanotify", "../fanotify"): its cover letter's
# subject without the "[RFC PATCH 0/N]" prefix, read at post time, so a
# thread names the others by the subjects they are posted with.  When
# DIR is not there (7.2's fanotify series before it is merged), the
# series of the same name on the first base is read (patches/NAME), and
# the script says so.
#
# POST_BASE_COMMIT, when set, must be exactly 40 hex digits: the upstream
# commit the poster has checked the series against; each cover letter
# then ends its diffstat with "base-commit: <it>".  Nothing else writes
# a base-commit line: the tree's own commits are local.
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
# OUTDIR: a base-commit line only from POST_BASE_COMMIT, the recipients of PATCHDIR/recipients, the
# cover letter's text from PATCHDIR/0000-cover-letter.patch.  Nothing is
# sent: the last line says how to.
set -euo pipefail

usage() { echo "usage: $0 KSRC PATCHDIR OUTDIR [PATCHDIR OUTDIR]..." >&2; exit 2; }
[ $# -ge 3 ] && [ $(($# % 2)) = 1 ] || usage
ksrc=$1
shift
threads=("$@")
here=$(cd "$(dirname "$0")" && pwd)
placeholder_name="Placeholder Not A Person"
placeholder_email="placeholder@make-post.invalid"

die() { echo "post: $*" >&2; exit 1; }

subjects=()

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

# list_of DIR KIND: "KIND FILE" for each patch DIR's thread applies, in
# order: "base" for those of the threads it comes after, KIND for its own
list_of() {
	local d=$1 kind=$2 f=series p rest
	[ -f "$d/post-series" ] && f=post-series
	[ -f "$d/$f" ] || die "$d/series: no series"
	while read -r p rest; do
		case "$p" in
		''|'#'*) continue ;;
		after)	[ -d "$d/$rest" ] || die "$d/$f: after $rest: no such directory"
			list_of "$d/$rest" base || exit 1
			continue ;;
		esac
		[ -f "$d/$p" ] || die "$d/$f names $p, which does not exist"
		echo "$kind $(realpath "$d/$p")"
	done < "$d/$f"
}

# the subject of the thread of DIR, for @SUBJECT(DIR)@ in PATCHDIR's cover
subject_of() {
	local patchdir=$1 dir=$2 c s
	c=$patchdir/$dir/0000-cover-letter.patch
	if [ ! -f "$c" ]; then
		s=$(realpath -m "$patchdir/$dir")
		c=$here/../patches/${s##*/}/0000-cover-letter.patch
		[ -f "$c" ] || die "$patchdir/0000-cover-letter.patch names @SUBJECT($dir)@: no $patchdir/$dir/0000-cover-letter.patch"
		echo "post: @SUBJECT($dir)@ of $patchdir: $patchdir/$dir is not there; the subject of patches/${s##*/}" >&2
	fi
	s=$(awk '/^Subject:/ { s = $0; getline; while ($0 ~ /^[ \t]/) { s = s $0; getline } print s; exit }' "$c" |
		sed -e 's/^Subject: *//' -e 's/^\[[^]]*\] *//' -e 's/[[:space:]]\+/ /g')
	[ -n "$s" ] || die "$c: no subject"
	case "$s" in *'|'*|*'\'*|*'&'*) die "$c: the subject has '|', '\\' or '&'" ;; esac
	echo "$s"
}

base_commit=${POST_BASE_COMMIT:-}
if [ -n "$base_commit" ]; then
	[[ "$base_commit" =~ ^[0-9a-fA-F]{40}$ ]] ||
		die "POST_BASE_COMMIT='$base_commit' is not a commit id of exactly 40 hex digits: give the upstream commit the series was checked against in full, or leave it unset (no base-commit line)"
	base_commit=${base_commit,,}
fi

# every thread's cover letter, tokens and list, before anything else
fill=()
filled=" "
for ((i = 0; i < ${#threads[@]}; i += 2)); do
	patchdir=${threads[i]}
	cover=$patchdir/0000-cover-letter.patch
	[ -f "$cover" ] || die "$cover: no cover letter"
	[ -f "$patchdir/recipients" ] || die "$patchdir/recipients: no recipients"
	list=$(list_of "$patchdir" post) || exit 1
	grep -q '^post ' <<< "$list" || die "$patchdir: no patch to post"
	if grep -n '\[\[SLOT' "$cover"; then
		die "$cover has a slot to fill (above) before it can be posted"
	fi
	tokens=$(grep -o '@[A-Z][A-Z_]*@' "$cover" | sort -u | tr -d @ || true)
	for t in $tokens; do
		v=$(printenv "POST_$t" || true)
		[ -n "$v" ] || die "$cover names @$t@: set POST_$t (see scripts/post.sh)"
		case "$t:$v" in
		*_THREAD:https://lore.kernel.org/*) ;;
		*_THREAD:*) die "POST_$t='$v' is not a https://lore.kernel.org/ link" ;;
		esac
		case "$v" in
		*'|'*|*'\'*|*'&'*) die "POST_$t='$v': '|', '\\' and '&' are not allowed" ;;
		esac
		case "$filled" in
		*" $t "*) ;;
		*) fill+=(-e "s|@$t@|$v|g"); filled="$filled$t " ;;
		esac
	done
	subj=()
	for d in $(grep -o '@SUBJECT([^)@]*)@' "$cover" | sort -u | sed 's/^@SUBJECT(\(.*\))@$/\1/'); do
		v=$(subject_of "$patchdir" "$d") || exit 1
		subj+=(-e "s|@SUBJECT($d)@|$v|g")
	done
	subjects[i]=
	[ ${#subj[@]} = 0 ] || subjects[i]=$(printf '%q ' "${subj[@]}")
	out=${threads[i + 1]}
	[ "$(realpath -m "$out")" != "$(realpath "$patchdir")" ] ||
		die "OUTDIR must not be $patchdir: the committed series keeps the placeholder"
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

git -C "$ksrc" rev-parse -q --verify 'pristine^{commit}' >/dev/null ||
	die "$ksrc has no 'pristine' tag: run make tree first"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export GIT_COMMITTER_NAME=$name GIT_COMMITTER_EMAIL=$email

# post_thread PATCHDIR OUTDIR: one thread, in a clone of its own that
# only checks out the files its patches touch
post_thread() {
	local patchdir=$1 out=$2 w kind p f n files posted=0 subj
	w=$work/$(echo "$patchdir" | tr / _)
	mkdir -p "$w"
	list_of "$patchdir" post > "$w/list" || exit 1
	files=$(cut -d' ' -f2- "$w/list" | xargs sed -n 's|^+++ b/||p; s|^--- a/||p' | sort -u)
	git clone -q --shared --no-checkout "$ksrc" "$w/tree"
	git -C "$w/tree" sparse-checkout set --no-cone $files
	git -C "$w/tree" checkout -q -b post pristine
	while read -r kind p; do
		f=${p##*/}
		if [ "$kind" = base ]; then
			# applied as committed, not posted
			git -C "$w/tree" am -q --whitespace=nowarn "$p" ||
				die "$patchdir: $f (a thread it comes after) does not apply to pristine"
			continue
		fi
		[ "$posted" = 0 ] && git -C "$w/tree" tag thread-base
		posted=$((posted + 1))
		n=$(grep -c "^From: $placeholder_name <$placeholder_email>\$" "$p" || true)
		[ "$n" -le 1 ] || die "$f: more than one placeholder From: line"
		n=$(grep -c "^Signed-off-by: $placeholder_name <$placeholder_email>\$" "$p" || true)
		[ "$n" = 1 ] || die "$f: not one placeholder Signed-off-by: line (the poster's Signed-off-by and Assisted-by replace it)"
		awk -v ph="$placeholder_name <$placeholder_email>" -v me="$name <$email>" -v ab="$assisted" '
			!body && $0 == "From: " ph { print "From: " me; next }
			!body && /^$/ { body = 1 }
			$0 == "Signed-off-by: " ph { print "Assisted-by: " ab; print "Signed-off-by: " me; next }
			{ print }' "$p" > "$w/$f"
		git -C "$w/tree" am -q --signoff --whitespace=nowarn "$w/$f" ||
			die "$f does not apply to pristine"
	done < "$w/list"

	eval "subj=(${subjects[$3]})"
	sed -e "s|^From: $placeholder_name <$placeholder_email>\$|From: $name <$email>|" \
		"${fill[@]}" "${subj[@]}" "$patchdir/0000-cover-letter.patch" > "$w/cover.patch"
	SERIES_NAME=$name SERIES_EMAIL=$email \
		"$here/format-series.sh" "$w/tree" thread-base post "$out" \
		"$w/cover.patch" "$patchdir/recipients" >/dev/null
	if [ -n "$base_commit" ]; then
		# as git format-patch --base writes it: after the diffstat,
		# before the signature
		awk -v b="$base_commit" '!done && $0 == "-- " { print ""; print "base-commit: " b; done = 1 }
			{ print } END { if (!done) { print ""; print "base-commit: " b } }' \
			"$out/0000-cover-letter.patch" > "$w/cover.out" &&
			mv "$w/cover.out" "$out/0000-cover-letter.patch"
	fi

	if grep -l -e '@[A-Z][A-Z_]*@' -e '@SUBJECT(' "$out/0000-cover-letter.patch"; then
		die "a token of the cover letter is still unfilled in the file above"
	fi
	if grep -l -e "$placeholder_email" -e "$placeholder_name" "$out"/*.patch; then
		die "the placeholder is still in the files above"
	fi
	for f in $(cat "$out/series"); do
		grep -qxF "Assisted-by: $assisted" "$out/$f" || die "$out/$f: no Assisted-by: line"
	done
	echo "post: $posted patches and a cover letter from $name <$email> in $out"
}

outs=()
for ((i = 0; i < ${#threads[@]}; i += 2)); do
	post_thread "${threads[i]}" "${threads[i + 1]}" "$i"
	outs+=("${threads[i + 1]}")
done
for o in "${outs[@]}"; do
	echo "post: check them, then: git send-email $o/*.patch"
done
