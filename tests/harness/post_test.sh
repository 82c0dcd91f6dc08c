#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of make post (scripts/post.sh) on a tiny tree and series of
# its own: refused without an identity, with the committed placeholder or
# another placeholder, while the cover letter has a slot to fill, and
# while a token of it (@PREV_THREAD@) has no POST_ value or a wrong one;
# accepted with a real identity from git config or from the environment,
# whose output has that identity as author, Signed-off-by and cover
# letter sender, no placeholder and no base-commit line.  Refused too
# until the poster certifies the Developer's Certificate of Origin
# (POST_DCO=certified) and names the tool assistance (POST_ASSISTED_BY),
# which every patch then carries as an Assisted-by: line.  The threads
# name each other by their cover letters' subjects (@SUBJECT(DIR)@), the
# base by POST_BASE (@BASE@); a base-commit line is written only from a
# POST_BASE_COMMIT of exactly 40 hex digits.  Several
# threads in one run: each posts what its post-series names, one after
# another's patches ("after DIR"), and a refusal in any writes none.  Run
# by make harness-check; a second or so.
set -uo pipefail

. "$(dirname "$0")/tap.sh"	# $top, $t, ok, bad, check
post=$top/scripts/post.sh

# git with no identity but what a test gives it
export HOME=$t/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=$t/home/.gitconfig
unset GIT_AUTHOR_NAME GIT_AUTHOR_EMAIL GIT_COMMITTER_NAME GIT_COMMITTER_EMAIL EMAIL \
	POST_DCO POST_ASSISTED_BY POST_PREV_THREAD POST_BASE POST_BASE_COMMIT
mkdir -p "$HOME"
: > "$GIT_CONFIG_GLOBAL"
ph="Placeholder Not A Person <placeholder@make-post.invalid>"

# the "kernel tree": one file, tag pristine
k=$t/ksrc
mkdir -p "$k" && cd "$k" && git init -q &&
	printf 'one\ntwo\n' > file.c && git add file.c &&
	git -c user.name=build -c user.email=build@b.invalid commit -q -m pristine &&
	git tag pristine || exit 1

# the committed series: one patch and a cover letter, from the placeholder
p=$t/patches
mkdir -p "$p"
git checkout -q -b tmp && printf 'one\ntwo\nthree\n' > file.c &&
	git -c user.name="${ph% <*}" -c user.email=placeholder@make-post.invalid \
		commit -q -a -m "file: add a line" -m "Because." \
		-m "Signed-off-by: $ph" &&
	git format-patch -q -o "$p" pristine..tmp || exit 1
(cd "$p" && ls 0001-*.patch) > "$p/series"
cat > "$p/0000-cover-letter.patch" <<EOF
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: $ph
Subject: [RFC PATCH 0/1] file: a test series

The text of the cover letter.

[1] @PREV_THREAD@

${ph% <*} (1):
  file: add a line
EOF
printf 'To: Some One <someone@example.org>\nCc: a-list@vger.kernel.org\n' > "$p/recipients"

# a repository to run make post from, whose config is the poster's
r=$t/repo
git init -q "$r"
run() { (cd "$r" && "$post" "$k" "$p" "$t/out") < /dev/null > "$t/log" 2>&1; }

run; rc=$?
check "no identity at all: refused" test $rc -ne 0
check "no identity: says so" grep -q "no identity" "$t/log"

git -C "$r" config user.name "${ph% <*}"
git -C "$r" config user.email placeholder@make-post.invalid
run; rc=$?
check "the committed placeholder: refused" test $rc -ne 0
check "the committed placeholder: says so" grep -q "refusing the placeholder" "$t/log"

git -C "$r" config user.name "Jane Doe"
git -C "$r" config user.email jane@example.com
run; rc=$?
check "an example.com address: refused" test $rc -ne 0

git -C "$r" config user.email jane@doe.dev
sed -i 's/^The text of the cover letter\.$/&\n[[SLOT: a table]]/' "$p/0000-cover-letter.patch"
run; rc=$?
check "a cover letter with a slot to fill: refused" test $rc -ne 0
check "a slot: says so" grep -q "slot to fill" "$t/log"
sed -i '/\[\[SLOT/d' "$p/0000-cover-letter.patch"

unset POST_PREV_THREAD
run; rc=$?
check "a token with no POST_ value: refused" test $rc -ne 0
check "a token: says which" grep -q "set POST_PREV_THREAD" "$t/log"
POST_PREV_THREAD=https://example.org/thread run; rc=$?
check "a thread link that is not lore's: refused" test $rc -ne 0
export POST_PREV_THREAD=https://lore.kernel.org/linux-fsdevel/some-message-id/

run; rc=$?
check "the DCO not certified: refused" test $rc -ne 0
check "the DCO: says so" grep -q "Certificate of Origin is not certified" "$t/log"
POST_DCO=yes run; rc=$?
check "the DCO answered other than 'certified': refused" test $rc -ne 0
export POST_DCO=certified
run; rc=$?
check "no POST_ASSISTED_BY: refused" test $rc -ne 0
check "no POST_ASSISTED_BY: names the policy" grep -q "coding-assistants.rst" "$t/log"
POST_ASSISTED_BY=none run; rc=$?
check "POST_ASSISTED_BY=none: refused" test $rc -ne 0
POST_ASSISTED_BY='agent:model|x' run; rc=$?
check "POST_ASSISTED_BY with a '|': refused" test $rc -ne 0
export POST_ASSISTED_BY="Claude:claude-x [make-post]"
check "no output written by a refused run" test ! -e "$t/out"

run; rc=$?
check "a real identity from the repository's git config: accepted" test $rc -eq 0
[ $rc -eq 0 ] || cat "$t/log"
out1=$(ls "$t/out"/0001-*.patch 2>/dev/null)
check "the patch is from the poster" grep -qx "From: Jane Doe <jane@doe.dev>" "$out1"
check "the patch has the poster's Signed-off-by" grep -qx "Signed-off-by: Jane Doe <jane@doe.dev>" "$out1"
check "one Signed-off-by" test "$(grep -c '^Signed-off-by:' "$out1")" = 1
check "the Assisted-by line, right above the Signed-off-by" test \
	"$(grep -A1 -xF "Assisted-by: $POST_ASSISTED_BY" "$out1" | sed -n 2p)" = \
	"Signed-off-by: Jane Doe <jane@doe.dev>"
check "one Assisted-by" test "$(grep -c '^Assisted-by:' "$out1")" = 1
check "no placeholder left" bash -c "! grep -rqi placeholder '$t/out'"
check "no base-commit line" bash -c "! grep -rq '^base-commit:' '$t/out'"
check "the cover letter is from the poster" grep -qx "From: Jane Doe <jane@doe.dev>" "$t/out/0000-cover-letter.patch"
check "the cover letter keeps its text" grep -qx "The text of the cover letter." "$t/out/0000-cover-letter.patch"
check "the token is filled" grep -qx "\[1\] $POST_PREV_THREAD" "$t/out/0000-cover-letter.patch"
check "no token left" bash -c "! grep -q '@PREV_THREAD@' '$t/out/0000-cover-letter.patch'"
check "the cover letter has the recipients" grep -q "^To: Some One <someone@example.org>" "$t/out/0000-cover-letter.patch"
check "the committed series is unchanged" grep -qx "From: $ph" "$p/$(cat "$p/series")"

GIT_AUTHOR_NAME="Env Poster" GIT_AUTHOR_EMAIL=env@poster.dev run; rc=$?
check "an identity from the environment: accepted" test $rc -eq 0
check "and used" grep -qx "Signed-off-by: Env Poster <env@poster.dev>" "$(ls "$t/out"/0001-*.patch)"

GIT_AUTHOR_NAME="inotify-fd developers" GIT_AUTHOR_EMAIL=dev@inotify-fd.invalid run; rc=$?
check "the old placeholder from the environment: refused" test $rc -ne 0


# threads: the tree applies two patches, the first thread posts the first
# (post-series), a second thread posts the second after it ("after ..")
cd "$k" && git checkout -q tmp && printf 'one\ntwo\nthree\nfour\n' > file.c &&
	git -c user.name="${ph% <*}" -c user.email=placeholder@make-post.invalid \
		commit -q -a -m "file: add another line" -m "Because." \
		-m "Signed-off-by: $ph" &&
	git format-patch -q --start-number 2 -o "$p" tmp~1..tmp && git checkout -q pristine || exit 1
(cd "$p" && ls 0001-*.patch 0002-*.patch) > "$p/series"
(cd "$p" && ls 0001-*.patch) > "$p/post-series"
d=$p/second
mkdir -p "$d"
printf 'after ..\n../%s\n' "$(cd "$p" && ls 0002-*.patch)" > "$d/post-series"
sed 's/a test series/the second thread/' "$p/0000-cover-letter.patch" > "$d/0000-cover-letter.patch"
printf 'To: Other One <other@example.org>\n' > "$d/recipients"
rm -rf "$t/out" "$t/out2"
run2() { (cd "$r" && "$post" "$k" "$p" "$t/out" "$d" "$t/out2") < /dev/null > "$t/log" 2>&1; }
run2; rc=$?
check "two threads in one run: accepted" test $rc -eq 0
[ $rc -eq 0 ] || cat "$t/log"
check "the first thread posts what post-series names (1 of 2)" test "$(cat "$t/out/series" 2>/dev/null | wc -l)" = 1
check "the second thread posts its own patch only" test "$(cat "$t/out2/series" 2>/dev/null | wc -l)" = 1
check "the second thread's patch is the second patch" grep -q "^Subject: .*file: add another line" "$t/out2/0001-"*.patch
check "the second thread's patch is from the poster" grep -qx "From: Jane Doe <jane@doe.dev>" "$t/out2/0001-"*.patch
check "the second thread's cover has its recipients" grep -q "^To: Other One <other@example.org>" "$t/out2/0000-cover-letter.patch"
check "the second thread's cover has its shortlog" grep -qx "  file: add another line" "$t/out2/0000-cover-letter.patch"
check "the first thread's cover does not list the second patch" bash -c "! grep -q 'add another line' '$t/out/0000-cover-letter.patch'"
check "each thread says how to send it" test "$(grep -c 'git send-email' "$t/log")" = 2
rm -rf "$t/out" "$t/out2"
sed -i 's/^The text of the cover letter\.$/&\n@OTHER_TOKEN@/' "$d/0000-cover-letter.patch"
run2; rc=$?
check "a token unset in the second thread: refused" test $rc -ne 0
check "nothing written for the first thread either" test ! -e "$t/out"
sed -i '/@OTHER_TOKEN@/d' "$d/0000-cover-letter.patch"
printf 'after ../nowhere\n' > "$d/post-series"
run2; rc=$?
check "after a directory that does not exist: refused" test $rc -ne 0
check "after: says which" grep -q "after ../nowhere: no such directory" "$t/log"

printf 'after ..\n../%s\n' "$(cd "$p" && ls 0002-*.patch)" > "$d/post-series"

# the threads name each other by their subjects, read at post time
sed -i 's/^The text of the cover letter\.$/&\nBeside it goes ("@SUBJECT(second)@")./' "$p/0000-cover-letter.patch"
sed -i 's/^The text of the cover letter\.$/&\nOn top of ("@SUBJECT(..)@")./' "$d/0000-cover-letter.patch"
rm -rf "$t/out" "$t/out2"
run2; rc=$?
check "@SUBJECT(DIR)@: accepted" test $rc -eq 0
[ $rc -eq 0 ] || cat "$t/log"
check "@SUBJECT(second)@ is the second thread's subject" \
	grep -qxF 'Beside it goes ("file: the second thread").' "$t/out/0000-cover-letter.patch"
check "@SUBJECT(..)@ is the first thread's subject" \
	grep -qxF 'On top of ("file: a test series").' "$t/out2/0000-cover-letter.patch"
sed -i 's/the second thread$/the second thread, renamed/' "$d/0000-cover-letter.patch"
rm -rf "$t/out" "$t/out2"
run2
check "a subject changed in its cover letter is the one named" \
	grep -qxF 'Beside it goes ("file: the second thread, renamed").' "$t/out/0000-cover-letter.patch"
sed -i 's/@SUBJECT(second)@/@SUBJECT(nowhere)@/' "$p/0000-cover-letter.patch"
rm -rf "$t/out" "$t/out2"
run2; rc=$?
check "@SUBJECT() of a thread that is not there: refused" test $rc -ne 0
check "@SUBJECT() of a thread that is not there: says which" grep -q "SUBJECT(nowhere)@: no" "$t/log"
sed -i 's/@SUBJECT(nowhere)@/@SUBJECT(second)@/' "$p/0000-cover-letter.patch"

# the base: @BASE@ from POST_BASE; a base-commit line only from
# POST_BASE_COMMIT, exactly 40 hex digits
sed -i 's/^The text of the cover letter\.$/&\nThis is against @BASE@./' "$p/0000-cover-letter.patch"
rm -rf "$t/out" "$t/out2"
run2; rc=$?
check "@BASE@ without POST_BASE: refused" test $rc -ne 0
export POST_BASE="Linux 7.2.13, as Debian's linux-source-7.2 7.2.13-1 ships it"
run2; rc=$?
check "@BASE@ with POST_BASE: accepted" test $rc -eq 0
check "the base is stated" grep -qxF "This is against $POST_BASE." "$t/out/0000-cover-letter.patch"
check "no base-commit line without POST_BASE_COMMIT" bash -c "! grep -rq '^base-commit:' '$t/out' '$t/out2'"
sha=0123456789abcdef0123456789abcdef01234567
for bad in "${sha%?}" "${sha}8" "${sha%?}g" "$(git -C "$k" rev-parse --short pristine)" \
	   "v7.2.13" "$sha " "pristine"; do
	rm -rf "$t/out" "$t/out2"
	POST_BASE_COMMIT=$bad run2; rc=$?
	check "POST_BASE_COMMIT='$bad': refused" test $rc -ne 0
	check "POST_BASE_COMMIT='$bad': says why" grep -q "not a commit id of exactly 40 hex digits" "$t/log"
	check "POST_BASE_COMMIT='$bad': nothing written" test ! -e "$t/out"
done
POST_BASE_COMMIT=${sha^^} run2; rc=$?
check "POST_BASE_COMMIT of 40 hex digits: accepted" test $rc -eq 0
for o in "$t/out" "$t/out2"; do
	check "$(basename "$o"): the cover letter has the base-commit line" \
		grep -qx "base-commit: $sha" "$o/0000-cover-letter.patch"
	check "$(basename "$o"): after the diffstat, before the signature" \
		test "$(grep -A1 -x "base-commit: $sha" "$o/0000-cover-letter.patch" | sed -n 2p)" = "-- "
	check "$(basename "$o"): only the cover letter has it" \
		test "$(grep -l '^base-commit:' "$o"/*.patch | wc -l)" = 1
done
unset POST_BASE

echo "post_test: $((n - fails)) of $n passed"
[ $fails -eq 0 ]
