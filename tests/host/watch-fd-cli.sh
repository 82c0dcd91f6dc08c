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

# err EXPECTED-MESSAGE ARGS...: exit 1, that stderr, nothing on stdout
err() {
	want=$1
	shift
	n=$((n + 1))
	"$WF" "$@" > out 2> err < /dev/null
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
err "watch-fd: -d (--daemon) is not supported" -d -o x d
err "watch-fd: bad --coalesce value 'x'" -C x d

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
# -m ends with exit 0 once no watch is left (inotifywait waits on)
act() { rmdir d/t; }
mkdir d/t
run 0 "d/t/ DELETE_SELF " -m -q d/t

echo "1..$n"
[ $fails = 0 ] && echo "watch-fd-cli: $n passed" && exit 0
echo "watch-fd-cli: $fails of $n failed"
exit 1
