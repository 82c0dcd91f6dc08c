#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# lib_inotifywait: Debian's inotifywait (by path) and watch-fd (by fd,
# through libinofd) watch the same directory while the same operations run;
# both must report the same events, in the same order.  Then the same with
# -r on a small tree.  POSIX sh: runs under busybox.
#
# Exit: 0 pass, 1 fail, 4 skip (no inotifywait or watch-fd).

IW=${INOTIFYWAIT:-/usr/bin/inotifywait}
WF=${WATCH_FD:-$(command -v watch-fd)}
[ -x "$IW" ] || { echo "# SKIP: no $IW"; exit 4; }
[ -n "$WF" ] && [ -x "$WF" ] || { echo "# SKIP: no watch-fd"; exit 4; }

T=$(mktemp -d /tmp/lib_inotifywait.XXXXXX) || exit 1
trap 'kill $p1 $p2 2>/dev/null; rm -rf "$T"' EXIT
fails=0
n=0

# wait until process $1 has an inotify watch
ready() {
	i=0
	while ! grep -q '^inotify wd:' /proc/$1/fdinfo/* 2>/dev/null; do
		i=$((i + 1))
		[ $i -gt 100 ] && return 1
		kill -0 $1 2>/dev/null || return 1
		sleep 0.05
	done
	# inotifywait -r adds its watches one after the other
	sleep 0.3
}

# "WATCH EVENTS NAME" -> WATCH without trailing slash, IN_ prefixes and
# inotifytools' extra CLOSE dropped, flags sorted, NAME kept
norm() {
	awk '{
		w = $1; sub(/\/$/, "", w)
		k = split($2, e, ",")
		m = 0
		for (i = 1; i <= k; i++) {
			x = e[i]; sub(/^IN_/, "", x)
			if (x == "CLOSE") continue
			f[++m] = x
		}
		for (i = 1; i <= m; i++)
			for (j = i + 1; j <= m; j++)
				if (f[j] < f[i]) { t = f[i]; f[i] = f[j]; f[j] = t }
		s = f[1]
		for (i = 2; i <= m; i++) s = s "," f[i]
		print w, s, $3
	}'
}

check() {	# name
	n=$((n + 1))
	# the kernel merges an event identical to the one queued before it
	# if the reader has not read that one yet: timing, not a difference
	norm < "$T/iw.out" | uniq > "$T/iw.norm"
	norm < "$T/wf.out" | uniq > "$T/wf.norm"
	if [ ! -s "$T/iw.norm" ]; then
		echo "not ok $n - $1: inotifywait printed nothing"
		fails=$((fails + 1))
	elif cmp -s "$T/iw.norm" "$T/wf.norm"; then
		echo "ok $n - $1 ($(wc -l < "$T/wf.norm") events agree)"
	else
		echo "not ok $n - $1: the outputs differ"
		echo "# inotifywait | watch-fd"
		diff "$T/iw.norm" "$T/wf.norm" | sed 's/^/# /'
		fails=$((fails + 1))
	fi
}

start() {	# name, options for both, directory
	"$IW" -m -q $2 --format '%w %e %f' "$3" > "$T/iw.out" 2>"$T/iw.err" &
	p1=$!
	# -p: O_PATH, whose close makes no event of its own
	"$WF" -m -q -p $2 --format '%w %e %f' "$3" > "$T/wf.out" 2>"$T/wf.err" &
	p2=$!
	ready $p1 && ready $p2 || { cat "$T/iw.err" "$T/wf.err"; echo "not ok - $1: watches not set up"; exit 1; }
}

stop() {
	sleep 0.5
	kill $p1 $p2 2>/dev/null
	wait $p1 $p2 2>/dev/null
}

echo "1..3"

# 1. one directory, every event
D="$T/d"
mkdir "$D"
start flat "" "$D"
touch "$D/hello"
echo hi > "$D/hello"
cat "$D/hello" > /dev/null
mv "$D/hello" "$D/greeting"
chmod 600 "$D/greeting"
mkdir "$D/sub"
ls "$D/sub" > /dev/null
rm "$D/greeting"
rmdir "$D/sub"
stop
check "flat directory, all events"

# 2. an event filter
D="$T/e"
mkdir "$D"
start filter "-e create,delete,moved_to,close_write" "$D"
touch "$D/a"
mv "$D/a" "$D/b"
echo x > "$D/b"
rm "$D/b"
stop
check "event filter -e create,delete,moved_to,close_write"

# 3. recursive, one step at a time (inotifywait -r only follows slowly)
D="$T/r"
mkdir -p "$D/x/y"
start recursive "-r -e create,delete,modify,moved_from,moved_to" "$D"
touch "$D/x/y/f1"
mkdir "$D/new"
sleep 0.3
touch "$D/new/f2"
echo data > "$D/x/f3"
mv "$D/x/f3" "$D/new/f3"
rm "$D/x/y/f1"
stop
check "recursive (-r)"

[ $fails -eq 0 ] && exit 0
exit 1
