#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest has what the other tests take for granted: inotify sysctls,
# loop + ext2 mount and umount, an unprivileged user that really is one,
# and Debian's inotifywait with its libraries.
set -e
fail() { echo "smoke: $*"; exit 1; }

for f in max_user_watches max_user_instances max_queued_events; do
	[ -r /proc/sys/fs/inotify/$f ] || fail "/proc/sys/fs/inotify/$f missing"
done
if [ "$(id -u)" = 0 ]; then
	dd if=/dev/zero of=img bs=1024 count=1024 2>/dev/null
	mke2fs -F img >/dev/null 2>&1 || fail "mke2fs"
	mkdir m
	mount -t ext2 -o loop img m || fail "loop mount of ext2"
	echo x > m/file
	umount m || fail "umount"
else
	touch /proc/sys/fs/inotify/max_user_watches 2>/dev/null &&
		fail "uid $(id -u) can write a root-only sysctl"
	[ "$(id -u)" = 65534 ] || fail "expected uid 65534, got $(id -u)"
fi
mkdir d
inotifywait -q -t 5 -e create d > iw.out &
sleep 0.5
touch d/x
wait $! || fail "inotifywait did not report the create"
grep -q 'CREATE x' iw.out || fail "inotifywait printed: $(cat iw.out)"
echo "smoke: ok as uid $(id -u)"
