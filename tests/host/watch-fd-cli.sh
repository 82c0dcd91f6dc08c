#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# watch-fd on the host (the procfd backend): option errors exit 1 with
# inotifywait's message, and a few real runs give inotifywait's output and
# exit codes.  The option-by-option comparison with inotifywait itself is
# the guest test lib_inotifywait.
#
# usage: watch-fd-cli.sh [PATH-TO-watch-fd]     Exit: 0 pass, 1 fail.

WF=${1:-examples/watch-fd}
[ -x "$WF" ] || { echo "watch-fd-cli: no $WF"; exit 1; }
WF=$(cd "$(dirname "$WF")" && pwd)/$(basename "$WF")
T=$(mktemp -d /tmp/watch-fd-cli.XXXXXX) || exit 1
trap 'cd /; rm -rf "$T"' EXIT
cd "$T" && mkdir d || exit 1
fails=0
n=0
norm=

# err EXPECTED-MESSAGE ARGS...: exit 1, that stderr, nothing on stdout
err() {
	want=$1
	shift
	n=$((n + 1))
	timeout 10 "$WF" "$@" > out 2> err < /dev/null
	rc=$?
	if [ $rc = 1 ] && [ ! -s out ] && [ "$(cat err)" = "$want" ]; then
		echo "ok $n - error: $*"
	else
		echo "not ok $n - error: $* (exit $rc)"
		sed 's/^/# stderr: /' err
		echo "# wanted: $want"
		fails=$((fails + 1))
	fi
}

# run EXIT STDOUT ARGS...: the tool runs while `act` runs in the background
run() {
	wrc=$1 wout=$2
	shift 2
	n=$((n + 1))
	(sleep 0.5; act) &
	a=$!
	timeout 10 "$WF" "$@" > out 2> err
	rc=$?
	wait $a
	# norm: a sed expression for what differs from run to run
	[ -z "$norm" ] || { sed "$norm" out > out.n && mv out.n out; }
	if [ $rc = "$wrc" ] && [ "$(cat out)" = "$wout" ]; then
		echo "ok $n - run: $* -> exit $rc"
	else
		echo "not ok $n - run: $* (exit $rc, wanted $wrc)"
		sed 's/^/# stdout: /' out
		sed 's/^/# stderr: /' err
		fails=$((fails + 1))
	fi
}

ev="Run with the '--help' option to see a list of events."
err "No files specified to watch!"
err "No files specified to watch!" -m @d
err "'bogus' is not a valid event!  $ev" -e bogus d
err "'create,bogus' is not a valid event!  $ev" -e create,bogus d
err "'1.5' is not a valid timeout value.
Please specify a long int value." -t 1.5 d
err "Something went wrong with the timeout value you provided.
Numerical result out of range" -t 99999999999999999999 d
err "--exclude and --excludei cannot both be specified." --exclude a --excludei b d
err "--include and --includei cannot both be specified." --include a --includei b d
err "include and exclude regexp cannot both be specified." --exclude a --include b d
err "-c and --format cannot both be specified." -c --format %e d
err "--no-newline cannot be specified without --format." --no-newline d
err "--timefmt cannot be specified without --format." --timefmt %H d
err "%T is in --format string, but --timefmt was not specified." --format %T d
err "Something is wrong with your format string." --format %w --no-newline d
err "Error in \`exclude' regular expression." --exclude '(' d
err "Error in \`include' regular expression." --includei '[' d
err "Multiple --fromfile options given." --fromfile a --fromfile b d
err "Multiple --outfile options given." -o a -o b d
err "Failed to open output file $T/no/such" -o "$T/no/such" d
err "Setting up watches.
Couldn't watch nonexistent: No such file or directory" nonexistent
err "Couldn't watch nonexistent: No such file or directory" -q d nonexistent
# getopt(3) names the program by argv[0]
err "$WF: invalid option -- 'x'" -x d
err "$WF: option '--format' requires an argument" d --format
err "-o must be specified with -d." -d d
err "No such file or directory: $T/no/such" -d -o "$T/no/such" d
err "watch-fd: bad --window value 'x'" -C x d
# an unset $TIMEOUT is refused, not "no timeout"
err "The provided value is not a valid timeout value.
Please specify a long int value." -t '' d
err "The '--filename' option no longer exists.  The option it enabled in earlier
versions of inotifywait is now turned on by default." -f d
err "No files specified to watch!" '' ''
# watch-fd's own options leave inotifywait's abbreviations as they were
err "$WF: option '--f' is ambiguous; possibilities: '--filename' '--fanotify' '--filesystem' '--format' '--fromfile'" --f x d
err "$WF: option '--i' is ambiguous; possibilities: '--inotify' '--include' '--includei'" --i x d
err "$WF: option '--t' is ambiguous; possibilities: '--timeout' '--timefmt'" --t 1 d
# -s: diagnostics go to syslog
err "" -s nonexistent

act() { :; }
run 2 "" -q -t 1 d
act() { touch d/a; }
run 0 "d/ CREATE a" -q -e create d
act() { touch 'd/b c'; }
run 0 'd/,CREATE,b c' -q -c -e create d
act() { touch 'd/ e'; }
run 0 'd/,CREATE," e"' -q -c -e create d
act() { touch d/f; }
run 0 "d/f|CREATE:f" -q -e create --format '%w%f|%:e:%f' d
act() { touch d/g.log d/h.txt; }
run 0 "d/ CREATE h.txt" -q -e create --exclude 'log$' d
act() { rm d/a; }
run 1 "" -q -e modify d/b\ c d/a
act() { mkdir d/s; touch d/s/x; mv d/s/x d/s/y; rm d/s/y; rmdir d/s; }
run 2 "d/ CREATE,ISDIR s
d/s/ CREATE x
d/s/ MOVED_FROM,MOVED_TO x -> d/s/ y
d/s/ DELETE y
d/ DELETE,ISDIR s" -m -q -t 2 -r -e create,delete,move --pair-moves d
# issue 20: what a script could tell from inotifywait
act() { touch d/dup; }
run 0 "d/ CREATE dup" -q -e create '' d ./d d/./ ''
act() { touch d/c1; }
run 0 "d/,CREATE,c1" --c --q --ev create d
act() { touch d/c2; }
run 0 "d/ CREATE c2" -q -I -F -S -e create d
act() { touch d/c3; mv d/c3 d/c4; }
norm='s/^[0-9a-f]*[1-9a-f][0-9a-f]* /X /'
run 2 "0 CREATE
X MOVED_FROM
X MOVED_TO" -m -q -t 1 -e create,move --format '%c %e' d
norm=
mkdir -p p/r/s
act() { mv p q; touch q/r/a q/r/s/b; mv q p; mv p/r p/rr; touch p/rr/s/c; }
run 2 "p/r/ CREATE a
p/r/s/ CREATE b
p/r/s/ CREATE c" -m -q -t 1 -r -e create p/r
# a FILE through a symlink: the directory it named then, by its real path
# (issue 26: FILE/sub/ named the link's new target after ln -sfn)
mkdir -p sr/sub so/sub
ln -s sr SL
act() { ln -s so SL.n; mv -T SL.n SL; touch sr/sub/f so/sub/g; mv sr sr2; touch sr2/sub/h; }
run 2 "$T/sr/sub/ CREATE f
$T/sr2/sub/ CREATE h" -m -q -t 1 -r -e create SL
# a root given through a symlink that still names it: FILE as given, as
# inotifywait prints it (issue 38)
mkdir -p ld/s
ln -s ld LNK
act() { touch ld/a ld/s/b; }
run 2 "LNK/ CREATE a
LNK/s/ CREATE b" -m -q -t 1 -r -e create LNK
mkdir -p d/t2/u
act() { rmdir d/t2/u; }
run 0 "d/t2/u/ IGNORED " -q -r -e ignored d/t2
# documented differences: -e all, the IN_ prefix, -h exits 0
act() { touch d/e1; }
run 0 "d/ CREATE e1" -q -e IN_CREATE d
act() { touch d/e2; }
run 0 "d/ CREATE e2" -q -e all d
n=$((n + 1))
if "$WF" -h > out 2> err && grep -q '^usage: watch-fd' out && [ ! -s err ]; then
	echo "ok $n - -h: usage on stdout, exit 0"
else
	echo "not ok $n - -h"
	fails=$((fails + 1))
fi
# ulimit -n 4: 0, 1, 2 and the instance; each FILE is watched in turn
n=$((n + 1))
mkdir -p d/l1 d/l2
(sleep 0.5; touch d/l1/x d/l2/y) &
(ulimit -n 4 && exec timeout 2 "$WF" -m -q -e create d/l1 d/l2) > out 2> err
wait
if [ "$(cat out)" = "d/l1/ CREATE x
d/l2/ CREATE y" ] && [ ! -s err ]; then
	echo "ok $n - ulimit -n 4"
else
	echo "not ok $n - ulimit -n 4"
	sed 's/^/# /' out err
	fails=$((fails + 1))
fi
# -d: a daemon appending events to the -o file (which must exist)
n=$((n + 1))
mkdir -p d/t
: > "$T/log"
"$WF" -d -o "$T/log" -e create,delete_self "$T/d/t" > out 2> err
rc=$?
sleep 0.5
touch d/t/x
rmdir d/t 2>/dev/null || { rm -f d/t/x; rmdir d/t; }
sleep 0.5
if [ $rc = 0 ] && [ ! -s out ] && [ ! -s err ] &&
   grep -qx "$T/d/t/ CREATE x" "$T/log"; then
	echo "ok $n - -d -o FILE"
else
	echo "not ok $n - -d -o FILE (exit $rc)"
	sed 's/^/# /' out err "$T/log"
	fails=$((fails + 1))
fi
for f in /proc/[0-9]*/fd/1; do	# a daemon left by a failure
	[ "$(readlink "$f" 2>/dev/null)" = "$T/log" ] || continue
	f=${f#/proc/}
	kill "${f%%/*}"
done

# -m ends with exit 0 once no watch is left (inotifywait waits on)
act() { rmdir d/t; }
mkdir d/t
run 0 "d/t/ DELETE_SELF " -m -q d/t

# -v names the backend the library chose, whichever it is (INOFD_BACKEND
# forces one; fanotify needs CAP_SYS_ADMIN on a stock kernel)
for b in procfd fanotify; do
	n=$((n + 1))
	INOFD_BACKEND=$b timeout 10 "$WF" -v -q -t 1 d > out 2> err
	rc=$?
	want="watch-fd: backend: $b "
	if [ $b = fanotify ] && grep -q "^Couldn't initialize" err; then
		echo "ok $n - -v with INOFD_BACKEND=$b # SKIP no fanotify here"
	elif [ $rc = 2 ] && grep -q "^$want" err; then
		echo "ok $n - -v with INOFD_BACKEND=$b"
	else
		echo "not ok $n - -v with INOFD_BACKEND=$b (exit $rc)"
		sed 's/^/# stderr: /' err
		fails=$((fails + 1))
	fi
done

# a mount inside a -r tree goes: inotifywait's UNMOUNT line for the
# directory (with -e unmount), then the directory beneath is followed; a
# mount that comes prints nothing and is followed (root: a private mount
# namespace of its own)
n=$((n + 1))
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
	mkdir -p um/d/mnt
	(cd um && unshare -m --propagation private sh -c '
		mount -t tmpfs none d/mnt || exit 1
		"$0" -m -r -e unmount,create d > out 2> err & p=$!
		sleep 0.7; touch d/mnt/x; sleep 0.3; umount d/mnt; sleep 0.5
		touch d/mnt/y; sleep 0.3; mount -t tmpfs none d/mnt; sleep 0.3
		touch d/mnt/z; sleep 0.5; kill $p; wait' "$WF")
	want="d/mnt/ CREATE x
d/mnt/ UNMOUNT,ISDIR 
d/mnt/ CREATE y
d/mnt/ CREATE z"
	if [ "$(cat um/out)" = "$want" ]; then
		echo "ok $n - -r: a mount in the tree goes (UNMOUNT line) and comes"
	else
		echo "not ok $n - -r: a mount in the tree goes and comes"
		sed 's/^/# stdout: /' um/out
		sed 's/^/# stderr: /' um/err
		fails=$((fails + 1))
	fi
else
	echo "ok $n - -r: a mount in the tree goes and comes # SKIP not root"
fi

echo "1..$n"
[ $fails = 0 ] && echo "watch-fd-cli: $n passed" && exit 0
echo "watch-fd-cli: $fails of $n failed"
exit 1
