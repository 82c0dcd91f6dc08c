#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The demo story of `make qemu`: watch a directory on a fresh filesystem
# BY FILE DESCRIPTOR, close the descriptor, change things, unmount, and
# see every event, ending with UNMOUNT and IGNORED.
# Exit 0 only if all of that happened.

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
fail() { echo "demo: FAILED: $*"; exit 1; }

say "1. A fresh ext2 filesystem on a loop device, mounted on /mnt/demo"
dd if=/dev/zero of=/tmp/demo.img bs=1024 count=2048 2>/dev/null
mke2fs -F /tmp/demo.img >/dev/null 2>&1 || fail "mke2fs"
mkdir -p /mnt/demo
mount -t ext2 -o loop /tmp/demo.img /mnt/demo || fail "mount"
grep ' /mnt/demo ' /proc/mounts

say "2. watch-fd opens /mnt/demo, watches it by fd (INOTIFY_IOC_WATCH), closes the fd"
# inotifywait's options and output; unmount and ignored are not in
# all_events, --pair-moves prints a rename as one line
echo '$ watch-fd -m -v --pair-moves -e all_events,unmount,ignored /mnt/demo'
watch-fd -m -v --pair-moves -e all_events,unmount,ignored /mnt/demo \
	> /tmp/events 2>/tmp/watch-fd.err &
pid=$!
i=0
while ! grep -q '^inotify wd:' /proc/$pid/fdinfo/* 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 100 ] && fail "watch-fd did not set up its watch"
	kill -0 $pid 2>/dev/null || { cat /tmp/watch-fd.err; fail "watch-fd exited early"; }
	sleep 0.1
done
cat /tmp/watch-fd.err
grep -q 'backend: kernel' /tmp/watch-fd.err ||
	fail "watch-fd is not using the kernel's INOTIFY_IOC_WATCH"
echo "watch-fd (pid $pid) holds these fds:"
ls -l /proc/$pid/fd | sed -n 's/.*[0-9] \([0-9]* -> .*\)/  \1/p'
if ls -l /proc/$pid/fd | grep -q /mnt/demo; then
	fail "watch-fd still holds an fd on /mnt/demo"
fi
echo "and its inotify instance (fdinfo):"
grep -h '^inotify' /proc/$pid/fdinfo/* | sed 's/^/  /'

say "3. Changes: create, write, rename, mkdir, delete"
cd /mnt/demo || fail "cd"
echo '$ touch hello'; touch hello
echo '$ echo hi > hello'; echo hi > hello
echo '$ mv hello greeting'; mv hello greeting
echo '$ mkdir sub'; mkdir sub
echo '$ rm greeting'; rm greeting
echo '$ rmdir sub'; rmdir sub
cd /

say "4. umount /mnt/demo (must not be EBUSY: the watch holds no fd)"
umount /mnt/demo || fail "umount failed: the watch pinned the filesystem"
echo "umount: ok"

i=0
while kill -0 $pid 2>/dev/null; do
	i=$((i + 1))
	[ $i -gt 100 ] && { kill $pid; fail "watch-fd did not exit after IN_IGNORED"; }
	sleep 0.1
done
wait $pid
wrc=$?

say "5. What watch-fd printed"
cat /tmp/events
[ $wrc = 0 ] || fail "watch-fd exited with status $wrc"

# The story must be in the log, in order (exact lines: inotifywait's
# format, "%w %,e %f", and --pair-moves' rename line).
pos=0
while IFS= read -r want; do
	line=$(tail -n +$((pos + 1)) /tmp/events | grep -n -x -F -e "$want" | head -n 1 | cut -d: -f1)
	[ -n "$line" ] || fail "no '$want' after line $pos"
	pos=$((pos + line))
done <<EOF
/mnt/demo/ CREATE hello
/mnt/demo/ MODIFY hello
/mnt/demo/ MOVED_FROM,MOVED_TO hello -> /mnt/demo/ greeting
/mnt/demo/ CREATE,ISDIR sub
/mnt/demo/ DELETE greeting
/mnt/demo/ DELETE,ISDIR sub
/mnt/demo/ UNMOUNT,ISDIR 
/mnt/demo/ IGNORED 
EOF
[ "$pos" = "$(wc -l < /tmp/events)" ] ||
	fail "the last two events are not UNMOUNT then IGNORED"

say "The story happened: every event arrived after the fd was closed, and umount worked."
exit 0
