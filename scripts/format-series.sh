#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Write a kernel series as mail, with git format-patch.
#
#   format-series.sh KSRC BASE HEAD OUTDIR COVER RECIPIENTS
#
# The commits BASE..HEAD of the git tree KSRC become OUTDIR/0001-*.patch
# and so on, OUTDIR/0000-cover-letter.patch and OUTDIR/series (the patch
# files in order, as scripts/kernel-tree.sh reads them).  The cover letter
# takes its subject and its text from COVER, an earlier cover letter (the
# text ends before the shortlog, which is made again, with the diffstat).
# RECIPIENTS has one "To: ..." or "Cc: ..." line per address.  The cover
# letter is from SERIES_NAME <SERIES_EMAIL> (environment), as the patches
# are from their authors.  No
# base-commit line is written: the base is a Debian source package, which
# the cover letter names, not a commit upstream can resolve.
set -euo pipefail

[ $# = 6 ] || { echo "usage: $0 KSRC BASE HEAD OUTDIR COVER RECIPIENTS" >&2; exit 2; }
ksrc=$1 base=$2 head=$3 out=$4 cover=$5 rcpt=$6

die() { echo "format-series: $*" >&2; exit 1; }

[ -f "$cover" ] || die "$cover: no cover letter to take the text from"
[ -f "$rcpt" ] || die "$rcpt: no recipients"

# the subject after "[RFC PATCH 00/NN] ", and the text between the headers
# and the shortlog ("Name (NN):"), taken before OUTDIR is rewritten
subject=$(awk '/^Subject:/ { s = $0; getline; while ($0 ~ /^ /) { s = s $0; getline } print s; exit }' "$cover" |
	sed -e 's/^Subject: *//' -e 's/^\[[^]]*\] *//')
[ -n "$subject" ] || die "$cover: no subject"
blurb=$(mktemp)
trap 'rm -f "$blurb"' EXIT
awk 'body && /^[^ ].* \([0-9]+\):$/ { exit }
     body { print }
     !body && /^$/ { body = 1 }' "$cover" > "$blurb"
[ -s "$blurb" ] || die "$cover: no text before the shortlog"

args=()
while read -r kind addr; do
	case "$kind" in
	To:) args+=(--to="$addr") ;;
	Cc:) args+=(--cc="$addr") ;;
	''|'#'*) ;;
	*) die "$rcpt: not a To: or Cc: line: $kind $addr" ;;
	esac
done < "$rcpt"

[ -n "${SERIES_NAME:-}" ] && [ -n "${SERIES_EMAIL:-}" ] ||
	die "set SERIES_NAME and SERIES_EMAIL (the sender of the cover letter)"

mkdir -p "$out"
rm -f "$out"/[0-9][0-9][0-9][0-9]-*.patch "$out/series"
GIT_COMMITTER_NAME=$SERIES_NAME GIT_COMMITTER_EMAIL=$SERIES_EMAIL \
git -C "$ksrc" -c format.useAutoBase=false -c format.coverFromDescription=none \
	format-patch -q --cover-letter --subject-prefix="RFC PATCH" \
	--no-numbered-files -o "$(realpath "$out")" "${args[@]}" "$base..$head"

c="$out/0000-cover-letter.patch"
grep -q '^\*\*\* BLURB HERE \*\*\*$' "$c" || die "git format-patch wrote no cover template"
python3 - "$c" "$subject" "$blurb" <<'PY'
import sys
path, subject, blurb = sys.argv[1], sys.argv[2], open(sys.argv[3]).read()
s = open(path).read()
s = s.replace("*** SUBJECT HERE ***", subject, 1)
s = s.replace("*** BLURB HERE ***\n", blurb.rstrip("\n") + "\n", 1)
open(path, "w").write(s)
PY
if grep -q '^base-commit:' "$out"/*.patch; then die "a base-commit line was written"; fi
(cd "$out" && ls [0-9][0-9][0-9][0-9]-*.patch | grep -v '^0000-') > "$out/series"
echo "format-series: $(wc -l < "$out/series") patches and a cover letter in $out"
