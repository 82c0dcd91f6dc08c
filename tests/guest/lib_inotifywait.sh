#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# lib_inotifywait: watch-fd is a drop-in for Debian's inotifywait.  For each
# option, inotifywait (by path) and then watch-fd (by fd, through libinofd)
# run alone on a fresh copy of the same directory while the same operations
# run; their stdout, stderr and exit status must be byte-identical.  The one
# normalisation: consecutive identical lines are merged (uniq), because the
# kernel merges an event identical to the unread one before it, which is
# timing, not meaning.  Then watch-fd(1)'s documented differences are
# asserted as differences.  POSIX sh: runs under busybox.
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

ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); echo "not ok $n - $1"; fails=$((fails + 1)); }

# wait until process $1 has an inotify watch (then $2 s for inotifywait -r)
ready() {
	i=0
	while ! grep -q '^inotify wd:' /proc/$1/fdinfo/* 2>/dev/null; do
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
	ready $pid $r || sleep 0.3	# (an exit before any watch is an output too)
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

# same NAME OPTIONS...: both tools at once, each on its own copy of the
# tree under the same relative name; byte-identical stdout, stderr, status
same() {
	name=$1
	shift
	case " $* " in
	*" -r "*) r=0.3 ;;
	*) r=0.05 ;;
	esac
	for x in iw wf; do
		rm -rf "$T/$x" && mkdir -p "$T/$x/d/sub" &&
			echo data > "$T/$x/d/file" && ln -s d "$T/$x/lnk"
	done
	(cd "$T/iw" && exec "$IW" "$@" > "$T/iw.out" 2> "$T/iw.err") &
	p1=$!
	(cd "$T/wf" && exec "$WF" "$@" > "$T/wf.out" 2> "$T/wf.err") &
	p2=$!
	ready $p1 $r
	ready $p2 || sleep 0.3	# (an exit before any watch is an output too)
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
	uniq < "$T/iw.out" > "$T/iw.u"
	uniq < "$T/wf.out" > "$T/wf.u"
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
same "-r -P: a link to a directory is walked" -m -q -r -P -e create lnk

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

# ------------------------------------------------------ documented differences
# 1. -m ends when no watch is left (inotifywait waits forever)
ops() { rmdir d/sub; }
fresh
"$IW" -m d/sub > "$T/iw.out" 2>/dev/null & p1=$!
"$WF" -m d/sub > "$T/wf.out" 2>/dev/null & p2=$!
ready $p1 0.3 && ready $p2 && ops
i=0
while kill -0 $p2 2>/dev/null && [ $i -lt 30 ]; do sleep 0.1; i=$((i + 1)); done
wait $p2 2>/dev/null; rc=$?
if kill -0 $p1 2>/dev/null && [ $rc = 0 ] && cmp -s "$T/iw.out" "$T/wf.out"; then
	ok "difference: -m exits 0 when the last watch is gone (inotifywait waits on)"
else
	notok "difference: -m after the last watch: watch-fd exit $rc"
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
run "$WF" wf -m -r -e create d
if grep -qx 'd/new/deep/ CREATE early' "$T/wf.u"; then
	ok "difference: -r reports a file made before its directory was watched"
else
	notok "difference: -r missed d/new/deep/early"
	sed 's/^/# wf: /' "$T/wf.u"
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

# 6. --rdonly: opened O_RDONLY, and the close of that fd is not printed
ops() { touch d/x; cat d/file > /dev/null; }
run "$IW" iw -m d
run "$WF" wf -m --rdonly d
if cmp -s "$T/iw.u" "$T/wf.u"; then
	ok "difference: --rdonly prints what inotifywait prints"
else
	notok "difference: --rdonly output"
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

echo "1..$n"
[ $fails -eq 0 ] && exit 0
exit 1
