#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# lib_inotifywait: watch-fd is a drop-in for Debian's inotifywait.  For each
# option, inotifywait (by path) and then watch-fd (by fd, through libinofd)
# run alone on a fresh copy of the same directory while the same operations
# run; their stdout, stderr and exit status must be byte-identical.  The one
# normalisation: consecutive identical lines are merged (uniq), because the
# kernel merges an event identical to the unread one before it, which is
# timing, not meaning; and getopt's messages name the program by argv[0],
# which is replaced by PROG.  Then watch-fd(1)'s documented differences are
# asserted as differences.  POSIX sh: runs under busybox.
#
# The cases that need another user, a sysctl or a file mode run as both
# root and uid 65534 (the core cases); ONLY=WORD runs only the cases whose
# name holds WORD (while working on one).
#
# Exit: 0 pass, 1 fail, 4 skip (no inotifywait or watch-fd).

IW=${INOTIFYWAIT:-/usr/bin/inotifywait}
WF=${WATCH_FD:-$(command -v watch-fd)}
[ -x "$IW" ] || { echo "# SKIP: no $IW"; exit 4; }
[ -n "$WF" ] && [ -x "$WF" ] || { echo "# SKIP: no watch-fd"; exit 4; }

T=$(mktemp -d /tmp/lib_inotifywait.XXXXXX) || exit 1
trap 'kill $pid 2>/dev/null; cd /; rm -rf "$T"' EXIT
fails=0
n=0
pid=

# each result carries the seconds since the one before (where the time
# goes on the debug kernel); shell builtins only, like ready(): every
# command is a fork, and a fork costs tens of ms on the debug kernel
centis() { read -r up _ < /proc/uptime; c=$(( ${up%.*} * 100 + 1${up#*.} - 100 )); }
centis
c0=$c
took() {
	centis
	d=$((c - c0))
	c0=$c
	secs=$((d / 100)).$(printf %02d $((d % 100)))
}
ok() { took; n=$((n + 1)); echo "ok $n - $1 # ${secs}s"; }
notok() { took; n=$((n + 1)); echo "not ok $n - $1 # ${secs}s"; fails=$((fails + 1)); }

# has_line PREFIX FILE...: does a line of one of the FILEs start with
# PREFIX (builtins only)
has_line() {
	p=$1
	shift
	for f in "$@"; do
		while read -r l; do
			case $l in "$p"*) return 0 ;; esac
		done 2>/dev/null < "$f"
	done
	return 1
}

# says_established OPTIONS...: does the tool print "Watches established."
# on stderr (when every watch is set, -r's whole walk included) with these
# options: not with -q, -qq or an abbreviation of --quiet, nor with -s or
# --syslog (its diagnostics go to syslog).  A wrong yes costs established()'s
# whole bound, 10 s a tool (a minute a case on the debug kernel).
says_established() {
	case " $* " in
	*" -q "*|*" -qq "*|*" --q"*|*" -s "*|*" --sy"*) return 1 ;;
	esac
	return 0
}

# established PID FILE: wait until process PID wrote "Watches
# established." to FILE (its stderr), or has exited
established() {
	j=0
	while [ $j -lt 200 ] && kill -0 $1 2>/dev/null; do
		has_line "Watches established." "$2" && return 0
		j=$((j + 1))
		sleep 0.05
	done
	return 1
}

# wait until process $1 has an inotify watch (then $2 s for inotifywait -r)
ready() {
	i=0
	while ! has_line "inotify wd:" /proc/$1/fdinfo/*; do
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		kill -0 $1 2>/dev/null || return 1
		sleep 0.05
	done
	sleep ${2:-0}
}

# a fresh tree in $T/w: d/ with a file and a subdirectory
fresh() {
	cd / && rm -rf "$T/w" && mkdir -p "$T/w/d/sub" && cd "$T/w" || exit 1
	echo data > d/file
	ln -s d lnk
}

# run TOOL OUT OPTIONS...: the operations are the function ops
run() {
	tool=$1 out=$2
	shift 2
	fresh
	"$tool" "$@" > "$T/$out.out" 2> "$T/$out.err" &
	pid=$!
	case " $* " in
	*" -r "*) r=0.3 ;;
	*) r=0.05 ;;
	esac
	ready $pid $r	# (an exit before any watch is an output too)
	# -r's walk may outlast r on the debug kernel: without -q, wait for
	# the tool's own word that it is done
	says_established "$@" && established $pid "$T/$out.err"
	ops
	# let the events arrive, then stop a tool still running
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt ${settle:-5} ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill $pid 2>/dev/null
	wait $pid 2>/dev/null
	echo "exit=$?" >> "$T/$out.err"
	pid=
	uniq < "$T/$out.out" > "$T/$out.u"
}

# only NAME: is this case selected (ONLY=WORD)?
only() {
	case "$1" in
	*"${ONLY:-}"*) return 0 ;;
	esac
	return 1
}

# same NAME OPTIONS...: both tools at once, each on its own copy of the
# tree under the same relative name; byte-identical stdout, stderr, status.
# prep: a command run in each copy first; ulim: ulimit -n for both tools.
same() {
	name=$1
	shift
	only "$name" || return 0
	case " $* " in
	*" -r "*) r=0.3 ;;
	*) r=0.05 ;;
	esac
	for x in iw wf; do
		# (a prep's mode 000 stops uid 65534's rm: then chmod first)
		rm -rf "$T/$x" 2>/dev/null ||
			{ chmod -R u+rwx "$T/$x"; rm -rf "$T/$x"; }
		mkdir -p "$T/$x/d/sub" && echo data > "$T/$x/d/file" &&
			ln -s d "$T/$x/lnk" &&
			{ [ -z "${prep:-}" ] || (cd "$T/$x" && eval "$prep"); }
	done
	(cd "$T/iw" && exec > "$T/iw.out" 2> "$T/iw.err" &&
		{ [ -z "${ulim:-}" ] || ulimit -n $ulim; } && exec "$IW" "$@") &
	p1=$!
	(cd "$T/wf" && exec > "$T/wf.out" 2> "$T/wf.err" &&
		{ [ -z "${ulim:-}" ] || ulimit -n $ulim; } && exec "$WF" "$@") &
	p2=$!
	ready $p1 $r
	# (an exit before any watch is an output too; -r: the walk is done)
	ready $p2 $r
	if says_established "$@"; then
		established $p1 "$T/iw.err"
		established $p2 "$T/wf.err"
	fi
	# the same operations on both copies at once (timeouts run meanwhile)
	(cd "$T/iw" && ops) &
	o1=$!
	(cd "$T/wf" && ops) &
	o2=$!
	wait $o1 $o2
	i=0
	while { kill -0 $p1 || kill -0 $p2; } 2>/dev/null && [ $i -lt ${settle:-5} ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill $p1 $p2 2>/dev/null
	wait $p1 2>/dev/null
	echo "exit=$?" >> "$T/iw.err"
	wait $p2 2>/dev/null
	echo "exit=$?" >> "$T/wf.err"
	for x in iw wf; do
		if [ -n "${norm:-}" ]; then
			uniq < "$T/$x.out" | sed -e "$norm" > "$T/$x.u"
		else
			uniq < "$T/$x.out" > "$T/$x.u"
		fi
		sed -i -e "s#^$IW: #PROG: #" -e "s#^$WF: #PROG: #" "$T/$x.err"
	done
	if [ ! -s "$T/iw.u" ] && [ "${empty_ok:-0}" = 0 ]; then
		notok "$name: inotifywait printed nothing"
		sed 's/^/# /' "$T/iw.err"
	elif cmp -s "$T/iw.u" "$T/wf.u" && cmp -s "$T/iw.err" "$T/wf.err"; then
		ok "$name ($(wc -l < "$T/wf.u") lines, $(tail -n 1 "$T/wf.err") identical)"
	else
		notok "$name: the outputs differ"
		echo "# inotifywait | watch-fd"
		diff "$T/iw.u" "$T/wf.u" | sed 's/^/# /'
		diff "$T/iw.err" "$T/wf.err" | sed 's/^/# /'
	fi
}

# every case as root on the default kernel; the core ones as the
# unprivileged user (the by-fd permission path) and on the debug kernel,
# to keep the suite short
full() { [ "$(id -u)" = 0 ] && [ "${INOFD_DEBUG_KERNEL:-0}" = 0 ]; }
full || echo "# the core cases (root on the default kernel runs all of them)"

# ------------------------------------------------------------------ same
ops() {
	touch d/hello
	echo hi > d/hello
	cat d/hello > /dev/null
	mv d/hello d/greeting
	chmod 600 d/greeting
	mkdir d/s
	ls d/s > /dev/null
	rm d/greeting
	rmdir d/s
}
same "-m, all events, default output" -m d
if full; then
same "-e LIST -e EV (several -e)" -m -e create,delete -e moved_to -e close_write d
# (no event that may repeat: uniq cannot merge a line split by %n)
same "--format %w %f %e %Xe %% %0 %n, unknown %q" -m -q \
	-e create,delete,move --format '%w|%f|%e|%:e|%.e|%%|%q|%0|%n|end' d
same "--format with --no-newline" -m -q -e create,delete --format '%w%f:' --no-newline d
same "--format %T with --timefmt" -m -q -e create --format '%T %e %f' --timefmt '%Y-%m %%' d

fi

ops() { touch 'd/a b' 'd/c,d' 'd/e"f' 'd/ g' 'd/h ' d/plain; mkdir d/s; cat d/file >/dev/null; }
same "--csv quoting" -m -c d
same "--csv on a file watch" -m -c d/file

if full; then
ops() { touch d/a.txt d/b.log d/B.TXT d/sub/k.txt; }
same "--exclude RE" -m -q -e create --exclude 'log$' d
same "--excludei RE" -m -q -e create --excludei '\.TXT$' d
same "--include RE" -m -q -e create --include 'txt$' d
same "--includei RE" -m -q -e create --includei 'TXT$' d
same "-r --exclude RE on %w%f" -m -q -r -e create --exclude 'sub' d
same "only the last --exclude counts" -m -e create --exclude x --exclude 'log' d

fi

ops() {
	touch d/sub/f1
	mkdir d/new
	sleep 0.3
	touch d/new/f2
	echo data > d/sub/f3
	mv d/sub/f3 d/new/f3
	mv d/new d/renamed
	sleep 0.3
	touch d/renamed/f4
	rm d/sub/f1
}
same "-r: subdirectories, a new one, a renamed one" -m -r \
	-e create,delete,modify,moved_from,moved_to,attrib d
if full; then
same "-r @DIR: not recursed into" -m -r -e create,delete d @d/sub
printf 'd\n@d/sub\n\n' > "$T/list"
same "--fromfile FILE (with @exclude, empty line)" -m -r -e create,delete --fromfile "$T/list"
same "--fromfile missing: a warning, not an error" -m -e create --fromfile "$T/nonexistent" d

ops() { touch -h lnk; touch d/x; }
same "a symbolic link to a directory (no slash)" -m -q lnk
same "-P: the symbolic link itself" -m -q -P lnk
# a -r FILE through a link is printed as the user gave it (lnk/), as
# inotifywait prints it, while the link leads to the tree's root
same "-r -P: a link to a directory is walked, printed as given" -m -q -r -P -e create lnk

ops() { touch d/x; }
rm -f "$T/iw.o" "$T/wf.o"
run "$IW" iw -m -e create -o "$T/iw.o" d
run "$WF" wf -m -e create -o "$T/wf.o" d
if cmp -s "$T/iw.o" "$T/wf.o" && [ -s "$T/wf.o" ] && [ ! -s "$T/wf.out" ] &&
   [ "$(stat -c %a "$T/iw.o")" = "$(stat -c %a "$T/wf.o")" ]; then
	ok "-o FILE ($(stat -c %a "$T/wf.o"), identical)"
else
	notok "-o FILE differs"
fi
empty_ok=1 same "-qq prints nothing" -m -qq d
empty_ok=1 same "-qq, one event: exit 0" -qq -e create d

ops() { cat d/file > /dev/null; }
same "one event, exit 0" d
ops() { rm d/file; }
empty_ok=1 same "an event not asked for (IGNORED): exit 1" -e modify d/file
same "-e delete_self on a file" -e delete_self d/file
fi
ops() { :; }
empty_ok=1 settle=25 same "-t 1: no event, exit 2" -t 1 d
# (-t 3, not 1: both tools start their clock when their watch is set, and
# one may be ready a second before the other on a loaded debug kernel)
ops() { touch d/x; sleep 0.5; touch d/y; }
settle=60 same "-m -t 3: idle timeout, exit 2" -m -t 3 -e create d

if full; then
# errors: message and exit 1, nothing watched
ops() { :; }
empty_ok=1 same "missing FILE" -m d/nonexistent
empty_ok=1 same "bad event" -e create,bogus d
empty_ok=1 same "bad timeout" -t 1.5 d
empty_ok=1 same "--format and --csv" -c --format %e d
empty_ok=1 same "%T without --timefmt" --format '%T' d
empty_ok=1 same "a format that prints nothing" --format '%w' --no-newline d
empty_ok=1 same "bad regex" --exclude '(' d
empty_ok=1 same "--include and --exclude" --exclude a --include b d
empty_ok=1 same "no FILE" -m

fi

# ------------------------------------- names, errors and options (issue 20)
# one object named twice is watched once and printed under the first name
ops() { touch d/x d/sub/y; rm d/x; }
same "one directory named twice: d ./d" -m -e create,delete d ./d
same "one directory named twice: ./d d/./" -m -e create,delete ./d d/./
same "-r d ./d/sub: the second inside the first" -m -r -e create,delete d ./d/sub
same "-r ./d/sub d: the first inside the second" -m -r -e create,delete ./d/sub d
ops() { echo more >> d/file; }
prep='ln d/file d/hard' same "one file named three times (a hard link)" \
	-m -e modify d/file ./d/file d/hard

# -r: %w keeps the name given when the root or a directory above moves
ops() { mv d dd; touch dd/a dd/sub/b; }
same "-r, the root renamed: %w as given" -m -r -e create d
ops() { mv d e; touch e/sub/a; }
same "-r, the root's parent renamed: %w as given" -m -r -e create d/sub

# an empty FILE is skipped; an empty -t is refused
ops() { touch d/x; }
same "an empty FILE argument is skipped" -m -e create '' d ''
ops() { :; }
empty_ok=1 same "only empty FILE arguments: no FILE" -m '' ''
empty_ok=1 same "-t '' (an unset \$TIMEOUT) is refused" -t '' d

# -r over a directory uid 65534 may not read: skipped in silence
ops() { touch d/x d/locked/y 2>/dev/null; }
prep='mkdir -p d/locked/in && chmod 000 d/locked' \
	same "-r over an unreadable subdirectory" -m -r -e create d
# a new one: inotifywait's message (uid 65534; root may read it)
# (umask, not mkdir -m: busybox makes the directory, then chmods it)
ops() { (umask 777 && mkdir d/new); touch d/x; }
same "-r, a new unreadable directory: the message" -m -r -e create d

# -r -e ...,ignored: an IGNORED line for each deleted subdirectory
ops() { mkdir d/sub/x; sleep 0.3; rm -r d/sub; }
same "-r -e delete,delete_self,ignored" -m -r -e delete,delete_self,ignored d
same "-r -e create,ignored (IGNORED without DELETE_SELF)" -m -r -e create,ignored d

# %c: the move cookie (its value differs between two runs: numbers
# become C, and each tool's MOVED_FROM and MOVED_TO must share one)
ops() { touch d/a; mv d/a d/b; }
norm='s/^[0-9a-f]*[1-9a-f][0-9a-f]*|/C|/' \
	same "--format %c: the move cookie" -m -q -e create,move --format '%c|%e|%f|%Xc' d
if only "--format %c" && [ "$(grep -c '|MOVED_' "$T/wf.out")" = 2 ] &&
   [ "$(grep '|MOVED_' "$T/wf.out" | cut -d'|' -f1 | uniq | grep -cv '^0$')" = 1 ]; then
	ok "--format %c: MOVED_FROM and MOVED_TO share a non-zero cookie"
elif only "--format %c"; then
	notok "--format %c: the cookies of one rename differ"
	sed 's/^/# /' "$T/wf.out"
fi

# options: inotifywait's abbreviations, -I -F -S, -f, -s, -d
ops() { touch d/x; }
same "-I -F -S are accepted" -m -e create -I -F -S d
same "--m --q --c --r --ev: unambiguous abbreviations" --m --q --c --r --ev create d
ops() { :; }
for o in --f --fi --i --in --n --t --e --ex; do
	empty_ok=1 same "$o: ambiguous, the same candidates" $o x d
done
empty_ok=1 same "-f: the --filename message" -f d
empty_ok=1 same "-d without -o" -d d
empty_ok=1 same "-d -o a file that does not exist" -d -o "$T/none/x" d
ops() { touch d/x; }
same "-s: no diagnostics on stderr" -m -s -e create d
ops() { :; }
empty_ok=1 same "-s: a FILE that cannot be watched: status 1, silent" -s d/nonexistent

# ulimit -n 4: standard streams and the instance; FILEs one at a time
ops() { touch d/x d/sub/y; }
ulim=4 same "ulimit -n 4" -m -e create d d/sub

# -d: -m in the background, events to the -o file, nothing on stdout
if only "-d -o"; then
	for x in iw wf; do
		rm -rf "$T/$x" && mkdir -p "$T/$x/d" && : > "$T/$x.log"
	done
	"$IW" -d -o "$T/iw.log" -e create "$T/iw/d" > "$T/iw.out" 2> "$T/iw.err"
	echo "exit=$?" >> "$T/iw.err"
	"$WF" -d -o "$T/wf.log" -e create "$T/wf/d" > "$T/wf.out" 2> "$T/wf.err"
	echo "exit=$?" >> "$T/wf.err"
	# the daemons: the processes whose stdout is the log (a daemon's
	# child may not have it yet when its parent has exited: retry)
	d_iw= d_wf= i=0
	while { [ -z "$d_iw" ] || [ -z "$d_wf" ]; } && [ $i -lt 40 ]; do
		for x in iw wf; do
			for f in /proc/[0-9]*/fd/1; do
				[ "$(readlink "$f" 2>/dev/null)" = "$T/$x.log" ] || continue
				f=${f#/proc/}
				eval "d_$x=${f%%/*}"
			done
		done
		[ -n "$d_iw" ] && [ -n "$d_wf" ] && break
		sleep 0.05
		i=$((i + 1))
	done
	[ -n "$d_iw" ] && ready $d_iw; [ -n "$d_wf" ] && ready $d_wf
	touch "$T/iw/d/x" "$T/wf/d/x"
	sleep 0.5
	[ -n "$d_iw" ] && kill $d_iw; [ -n "$d_wf" ] && kill $d_wf
	sed "s#^$T/iw/#T/#" "$T/iw.log" > "$T/iw.u"
	sed "s#^$T/wf/#T/#" "$T/wf.log" > "$T/wf.u"
	if [ -n "$d_wf" ] && [ -s "$T/iw.u" ] && cmp -s "$T/iw.u" "$T/wf.u" &&
	   cmp -s "$T/iw.err" "$T/wf.err" && [ ! -s "$T/wf.out" ]; then
		ok "-d -o FILE: a daemon, events in FILE ($(cat "$T/wf.u"), identical)"
	else
		notok "-d -o FILE differs (daemons: ${d_iw:-none} ${d_wf:-none})"
		sed 's/^/# iw: /' "$T/iw.u" "$T/iw.err"
		sed 's/^/# wf: /' "$T/wf.u" "$T/wf.err"
	fi
fi

# the limits (root in the guest: never touch the host's sysctls)
MW=/proc/sys/fs/inotify/max_user_watches
MI=/proc/sys/fs/inotify/max_user_instances
if [ "$(id -u)" = 0 ] && [ -n "$REQUIRE_INOTIFY_WATCH" ] && [ -w $MW ] &&
   [ -w $MI ]; then
	if only "watch limit"; then
		oldmw=$(cat $MW)
		# the watches in use become the limit: the next one fails
		ops() {
			cat /proc/[0-9]*/fdinfo/* 2>/dev/null |
				grep -c '^inotify wd:' > $MW
			mkdir d/new
			sleep 0.3
			echo "$oldmw" > $MW
		}
		run "$IW" iw -m -r -e create d
		run "$WF" wf -m -r -e create d
		echo "$oldmw" > $MW
		# watch-fd(1), DIFFERENCES: the watches above d/ give way to
		# d/new, and the message says so (issue 26)
		sed 's|^Couldn.t watch new directory d/new/: |Couldn'"'"'t watch the directories above d/: |' \
			"$T/iw.err" > "$T/iw.err.d"
		if cmp -s "$T/iw.u" "$T/wf.u" && cmp -s "$T/iw.err.d" "$T/wf.err" &&
		   grep -q "^Couldn't watch new directory d/new/: No space left on device" "$T/iw.err" &&
		   grep -q "^Couldn't watch the directories above d/: No space left on device" "$T/wf.err"; then
			ok "difference: at the watch limit the watches above d/ give way to d/new (the message says so)"
		else
			notok "the watch limit on a new directory"
			diff "$T/iw.u" "$T/wf.u" | sed 's/^/# /'
			diff "$T/iw.err" "$T/wf.err" | sed 's/^/# /'
		fi
	fi
	if only "instance limit"; then
		oldmi=$(cat $MI)
		echo 0 > $MI
		fresh
		"$IW" -m d > "$T/iw.out" 2> "$T/iw.err"
		echo "exit=$?" >> "$T/iw.err"
		"$WF" -m d > "$T/wf.out" 2> "$T/wf.err"
		echo "exit=$?" >> "$T/wf.err"
		echo "$oldmi" > $MI
		if cmp -s "$T/iw.err" "$T/wf.err" && grep -q 'max_user_instances' "$T/wf.err"; then
			ok "the instance limit: the two-line message (identical)"
		else
			notok "the instance limit"
			diff "$T/iw.err" "$T/wf.err" | sed 's/^/# /'
		fi
	fi
else
	ok "the watch and instance limits # SKIP need root in the guest"
fi

# ------------------------------------------------------ documented differences
if [ -z "${ONLY:-}" ]; then
# 1. -m ends when no watch is left (inotifywait waits forever)
ops() { rmdir d/sub; }
fresh
"$IW" -m d/sub > "$T/iw.out" 2>/dev/null & p1=$!
"$WF" -m d/sub > "$T/wf.out" 2>/dev/null & p2=$!
ready $p1 0.3 && ready $p2 && ops
i=0
while kill -0 $p2 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
wait $p2 2>/dev/null; rc=$?
# inotifywait reads the same events in its own time: give it up to 5 s
i=0
while ! cmp -s "$T/iw.out" "$T/wf.out" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if kill -0 $p1 2>/dev/null && [ $rc = 0 ] && cmp -s "$T/iw.out" "$T/wf.out"; then
	ok "difference: -m exits 0 when the last watch is gone (inotifywait waits on)"
else
	alive=no; kill -0 $p1 2>/dev/null && alive=yes
	notok "difference: -m after the last watch: watch-fd exit $rc, inotifywait running: $alive"
	diff "$T/iw.out" "$T/wf.out" | sed 's/^/# /'
fi
kill $p1 2>/dev/null; wait $p1 2>/dev/null

# 2. the recursive watch follows new directories under --include too, and
#    inotifywait's own listing of a new directory is not in watch-fd's output
ops() { mkdir d/new; sleep 0.3; touch d/new/x.txt d/new/y.log; }
run "$IW" iw -m -r --include 'txt$' d
run "$WF" wf -m -r --include 'txt$' d
if grep -qx 'd/new/ CREATE x.txt' "$T/wf.u" && ! grep -q 'd/new/' "$T/iw.u"; then
	ok "difference: -r --include follows a new directory (inotifywait does not)"
else
	notok "difference: -r --include and a new directory"
	sed 's/^/# iw: /' "$T/iw.u"; sed 's/^/# wf: /' "$T/wf.u"
fi
ops() { mkdir d/new; }
run "$IW" iw -m -r d
run "$WF" wf -m -r d
grep -Ev '^d/ (OPEN|ACCESS|CLOSE_NOWRITE,CLOSE),ISDIR new$' "$T/iw.u" > "$T/iw.f"
if ! cmp -s "$T/iw.f" "$T/iw.u" && cmp -s "$T/iw.f" "$T/wf.u"; then
	ok "difference: inotifywait's own listing of a new directory is not reported"
else
	notok "difference: the listing of a new directory"
	diff "$T/iw.u" "$T/wf.u" | sed 's/^/# /'
fi

# 3. files made in a new directory before any watch could exist
ops() { mkdir -p d/new/deep && touch d/new/deep/early; }
run "$WF" wf -m -r -v -e create d
if grep -qx 'd/new/deep/ CREATE early' "$T/wf.u"; then
	ok "difference: -r reports a file made before its directory was watched"
else
	notok "difference: -r missed d/new/deep/early"
	sed 's/^/# wf: /' "$T/wf.u" "$T/wf.err"
fi

# 4. --pair-moves: one line per rename, in every output form
ops() { touch d/a; mv d/a d/b; mv d/b d/sub/c; }
run "$IW" iw -m -q -r -e moved_from,moved_to d
run "$WF" wf -m -q -r -e moved_from,moved_to --pair-moves d
printf '%s\n' 'd/ MOVED_FROM,MOVED_TO a -> d/ b' \
	'd/ MOVED_FROM,MOVED_TO b -> d/sub/ c' > "$T/want"
if [ "$(wc -l < "$T/iw.u")" = 4 ] && cmp -s "$T/want" "$T/wf.u"; then
	ok "difference: --pair-moves prints 2 lines for inotifywait's 4"
else
	notok "difference: --pair-moves"
	diff "$T/want" "$T/wf.u" | sed 's/^/# /'
fi
run "$WF" wf -m -q -r -e move --pair-moves -c d
run "$WF" wf2 -m -q -r -e move --pair-moves --format '%W%F>%w%f %e' d
if grep -qx 'd/sub/,"MOVED_FROM,MOVED_TO",c,d/,b' "$T/wf.u" &&
   grep -qx 'd/b>d/sub/c MOVED_FROM,MOVED_TO' "$T/wf2.u"; then
	ok "difference: --pair-moves with --csv and %W %F"
else
	notok "difference: --pair-moves with --csv and %W %F"
	sed 's/^/# /' "$T/wf.u" "$T/wf2.u"
fi

# 5. the watch holds no descriptor on what it watches
ops() {
	if ls -l /proc/$pid/fd | grep -q "$T/w/d"; then
		echo "# watch-fd holds an fd on d"
		touch d/holds-fd
	fi
	touch d/x
}
run "$WF" wf -m -q -e create d
if [ "$(cat "$T/wf.u")" = "d/ CREATE x" ]; then
	ok "difference: no descriptor is held on the watched directory"
else
	notok "difference: watch-fd holds a descriptor"
fi

# 6. --use-rdonly: opened O_RDONLY, and the close of that fd is not printed
ops() { touch d/x; cat d/file > /dev/null; }
run "$IW" iw -m d
run "$WF" wf -m --use-rdonly d
if cmp -s "$T/iw.u" "$T/wf.u"; then
	ok "difference: --use-rdonly prints what inotifywait prints"
else
	notok "difference: --use-rdonly output"
	diff "$T/iw.u" "$T/wf.u" | sed 's/^/# /'
fi

# 7. a rescan line after an overflow (root: needs the sysctl)
Q=/proc/sys/fs/inotify/max_queued_events
# (only in the guest: never touch the host's sysctl)
if [ "$(id -u)" = 0 ] && [ -n "$REQUIRE_INOTIFY_WATCH" ] && [ -w $Q ]; then
	old=$(cat $Q)
	echo 16 > $Q
	ops() {
		kill -STOP $pid
		for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
			touch d/o$i
		done
		kill -CONT $pid
	}
	run "$IW" iw -m -q -e create d
	run "$WF" wf -m -q -e create d
	run "$WF" wf2 -m -q -c -e create d
	echo "$old" > $Q
	if grep -qx ' Q_OVERFLOW ' "$T/wf.u" && grep -qx 'Q_OVERFLOW,' "$T/wf2.u" &&
	   ! grep -q Q_OVERFLOW "$T/iw.u"; then
		ok "difference: a Q_OVERFLOW rescan line (inotifywait prints none)"
	else
		notok "difference: no rescan line after an overflow"
		sed 's/^/# /' "$T/wf.u"
	fi
else
	ok "difference: rescan line # SKIP needs root in the guest"
fi
fi

# 11. -s: both log to syslog, each under its own name (root in the guest:
#     a syslogd of our own on /dev/log; never on the host)
if only "syslog"; then
	SL=$(command -v syslogd || { command -v busybox >/dev/null && echo "busybox syslogd"; })
	if [ "$(id -u)" = 0 ] && [ -n "$REQUIRE_INOTIFY_WATCH" ] && [ -n "$SL" ] &&
	   [ ! -e /dev/log ]; then
		$SL -n -O "$T/syslog" & slp=$!
		i=0
		while [ ! -S /dev/log ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
		fresh
		"$IW" -s d/nonexistent 2> "$T/iw.err"
		"$WF" -s d/nonexistent 2> "$T/wf.err"
		sleep 0.3
		kill $slp; wait $slp 2>/dev/null
		rm -f /dev/log
		if grep -q 'inotifywait.*Couldn.t watch d/nonexistent: No such file or directory' "$T/syslog" &&
		   grep -q 'watch-fd.*Couldn.t watch d/nonexistent: No such file or directory' "$T/syslog" &&
		   [ ! -s "$T/iw.err" ] && [ ! -s "$T/wf.err" ]; then
			ok "difference: -s logs the same words, as watch-fd"
		else
			notok "difference: -s and syslog"
			sed 's/^/# /' "$T/syslog" 2>/dev/null
		fi
	else
		ok "difference: -s logs as watch-fd # SKIP needs root and a syslogd in the guest"
	fi
fi

# 8. a directory moved out of a -r tree is no longer reported
#    (inotifywait goes on reporting it under its old name)
if only "moved out"; then
	ops() { mv d/sub out; touch out/x; sleep 0.3; touch out/y; }
	run "$IW" iw -m -r -e create,move d
	run "$WF" wf -m -r -e create,move d
	if grep -qx 'd/sub/ CREATE x' "$T/iw.u" &&
	   [ "$(cat "$T/wf.u")" = "d/ MOVED_FROM,ISDIR sub" ]; then
		ok "difference: a directory moved out of the tree is not reported"
	else
		notok "difference: a directory moved out of the tree"
		sed 's/^/# iw: /' "$T/iw.u"; sed 's/^/# wf: /' "$T/wf.u"
	fi
	# the whole tree, its top directory moved to another directory
	ops() { mkdir x; mv d x/d; sleep 0.3; touch x/d/sub/y; }
	run "$IW" iw -m -r -e create d
	run "$WF" wf -m -r -e create d
	if grep -qx 'd/sub/ CREATE y' "$T/iw.u" && [ ! -s "$T/wf.u" ]; then
		ok "difference: a tree moved to another directory is not reported"
	else
		notok "difference: a tree moved to another directory"
		sed 's/^/# iw: /' "$T/iw.u"; sed 's/^/# wf: /' "$T/wf.u"
	fi
fi

# 9. a line longer than 4 KiB is printed whole (inotifywait cuts it)
if only "4 KiB"; then
	long=$(printf '%05000d' 0)
	ops() { touch d/x; }
	run "$IW" iw -m -q -e create --format "$long%f" d
	run "$WF" wf -m -q -e create --format "$long%f" d
	printf '%sx\n' "$long" > "$T/want"
	if cmp -s "$T/want" "$T/wf.out" && ! cmp -s "$T/want" "$T/iw.out"; then
		ok "difference: a 5001-byte line printed whole (inotifywait: $(wc -c < "$T/iw.out") bytes)"
	else
		notok "difference: a line longer than 4 KiB ($(wc -c < "$T/wf.out") bytes)"
	fi
	# a long name past a long format: inotifywait pads with NULs
	long=$(printf '%04000d' 0)
	name=$(printf '%0200d' 1)
	ops() { touch "d/$name"; }
	run "$IW" iw -m -q -e create --format "$long%f" d
	run "$WF" wf -m -q -e create --format "$long%f" d
	printf '%s%s\n' "$long" "$name" > "$T/want"
	if cmp -s "$T/want" "$T/wf.out" && ! cmp -s "$T/want" "$T/iw.out"; then
		ok "difference: a 4201-byte line printed whole (inotifywait: $(wc -c < "$T/iw.out") bytes, $(tr -cd '\000' < "$T/iw.out" | wc -c) NULs)"
	else
		notok "difference: a 4201-byte line ($(wc -c < "$T/wf.out") bytes)"
	fi
fi

# 10. @DIR also excludes a directory made later under that name
if only "@DIR"; then
	ops() { mkdir d/new; sleep 0.3; touch d/new/x; }
	run "$IW" iw -m -r -e create d @d/new
	run "$WF" wf -m -r -e create d @d/new
	if grep -qx 'd/new/ CREATE x' "$T/iw.u" &&
	   [ "$(cat "$T/wf.u")" = "d/ CREATE,ISDIR new" ]; then
		ok "difference: @DIR excludes a directory created later"
	else
		notok "difference: @DIR and a directory created later"
		sed 's/^/# iw: /' "$T/iw.u"; sed 's/^/# wf: /' "$T/wf.u"
	fi
fi

echo "1..$n"
[ $fails -eq 0 ] && exit 0
exit 1
