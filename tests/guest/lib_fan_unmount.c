// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lib_fan_unmount: libinofd's fanotify backend when the file system of
 * its watches is unmounted, the same scenario on a stock kernel and on
 * one with the project's fanotify series: v1 (in git history, patch 3:
 * FAN_UNMOUNT for inode marks) or v2 (patches/fanotify/ and the other
 * bases', patch 3: FAN_IGNORED, the end of every inode mark), which the
 * library uses first.
 *
 * A tmpfs is mounted at base/m (in a mount namespace of the test's own,
 * and a user namespace when not root), holding a directory d and a file
 * f.  One instance (fanotify backend) watches d and f (plain watches) and
 * the tree m; then the tmpfs is unmounted:
 *
 *   watch            stock kernel                with the series
 *   d (plain)        nothing (the mark went      IN_UNMOUNT|IN_ISDIR,
 *                    silently); stays listed     IN_IGNORED; gone
 *   f (plain)        nothing; stays listed       IN_UNMOUNT, IN_IGNORED
 *   tree m           IN_UNMOUNT|IN_ISDIR,        the same, from the
 *   (its top)        IN_IGNORED, from the mount  kernel: each once
 *                    table (mounts.c)
 *
 * "Gone" is asked of the library: inofd_unwatch() of an ended watch is
 * -EINVAL, of a live one 0.  The kernel is asked first, directly
 * (fanotify_mark(FAN_MARK_REMOVE, FAN_UNMOUNT): EINVAL on a stock
 * kernel, ENOENT with the series).  Run on the host by make unit (a stock
 * kernel) and in the guest, as root and as a user.  With
 * REQUIRE_FAN_OPATH=1 (the guest, where the kernel has the fanotify
 * series: init.sh), a kernel without FAN_UNMOUNT fails.
 *
 * Exit: 0 pass, 1 fail, 4 skip (no fanotify or no namespaces here).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inofd.h"
#include "lib_fan_tap.h"
#include "own_ns.h"

#ifndef FAN_UNMOUNT
#define FAN_UNMOUNT 0x00002000
#endif
#ifndef FAN_IGNORED
#define FAN_IGNORED 0x00400000
#endif

/*
 * Does this kernel's fanotify tell the end of an inode mark: FAN_IGNORED
 * (the series v2) or FAN_UNMOUNT (v1)?  1, 0, -1: cannot tell
 */
static int kernel_takes(uint64_t mask)
{
	int e = 0, r = fan_try(FAN_MARK_REMOVE, mask,
			   O_RDONLY | O_DIRECTORY, &e);

	if (r == -1 && e == ENOENT)
		return 1;
	return r == -1 && e == EINVAL ? 0 : -1;
}

static int kernel_has_unmount(void)
{
	int k = kernel_takes(FAN_IGNORED | FAN_ONDIR);

	return k ? k : kernel_takes(FAN_UNMOUNT);
}

struct tally {
	int	unmount, unmount_dir, ignored;
};

/*
 * Read until nothing has come for ms (the library's own timers waited
 * for through inofd_timeout()); count per wd (three at most).  The tree's
 * (wds[2]) counts only its top directory's: each of its directories
 * reports its own IN_UNMOUNT, with its path, as inotify would.
 */
static void drain(struct inofd *in, const int *wds, struct tally *t, int ms)
{
	struct pollfd p = { .fd = inofd_fd(in), .events = POLLIN };
	const struct inofd_event *ev;
	int r, to, i;

	for (;;) {
		to = inofd_timeout(in);
		if (poll(&p, 1, to >= 0 && to < ms ? to : ms) < 0)
			break;
		r = inofd_read(in);
		if (r < 0)
			break;
		while (inofd_next(in, &ev) == 1) {
			if (ev->type != INOFD_EV_INOTIFY)
				continue;
			for (i = 0; i < 3; i++) {
				if (ev->wd != wds[i])
					continue;
				if (i == 2 && (!ev->path ||
					       strcmp(ev->path, P("m"))))
					continue;
				if ((ev->mask & IN_UNMOUNT) &&
				    (ev->mask & IN_ISDIR))
					t[i].unmount_dir++;
				else if (ev->mask & IN_UNMOUNT)
					t[i].unmount++;
				if (ev->mask & IN_IGNORED)
					t[i].ignored++;
			}
		}
		if (r == 0 && inofd_timeout(in) == -1 &&
		    poll(&p, 1, ms) == 0)
			break;
	}
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	const char *req = getenv("REQUIRE_FAN_OPATH");
	struct inofd_opts o = { .sz = sizeof(o),
				.flags = INOFD_FORCE_FANOTIFY };
	struct tally t[3] = { { 0 } };
	struct inofd *in;
	int k, fd, wds[3];

	snprintf(base, sizeof(base), "%s/lib_fan_unmount.XXXXXX",
		 tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	if (own_namespaces()) {
		printf("lib_fan_unmount: no mount namespace here (%s): SKIP\n",
		       strerror(errno));
		return 4;
	}
	k = kernel_has_unmount();
	if (k < 0 || inofd_new(&in, &o)) {
		printf("lib_fan_unmount: no fanotify for this user here: SKIP\n");
		return 4;
	}
	printf("# kernel: fanotify %s FAN_IGNORED or FAN_UNMOUNT (%s)\n",
	       k ? "takes" : "refuses", k ? "the fanotify series" : "stock");
	if (req && !strcmp(req, "1"))
		ok(k == 1, "REQUIRE_FAN_OPATH=1: the kernel tells a mark's end",
		   k);

	if (mkdir(P("m"), 0755) ||
	    mount("lib_fan_unmount", P("m"), "tmpfs", 0, NULL)) {
		printf("lib_fan_unmount: cannot mount a tmpfs (%s): SKIP\n",
		       strerror(errno));
		return 4;
	}
	mkdir(P("m/d"), 0755);
	fd = open(P("m/f"), O_CREAT | O_WRONLY, 0644);
	close(fd);

	wds[0] = inofd_watch_path(in, P("m/d"), IN_CREATE, NULL);
	wds[1] = inofd_watch_path(in, P("m/f"), IN_MODIFY, NULL);
	wds[2] = inofd_watch_tree_at(in, AT_FDCWD, P("m"), IN_CREATE, NULL);
	ok(wds[0] > 0 && wds[1] > 0 && wds[2] > 0, "three watches", wds[2]);
	drain(in, wds, t, 100);

	ok(umount(P("m")) == 0, "the unmount is not refused", errno);
	drain(in, wds, t, 500);

	if (k) {
		ok(t[0].unmount_dir == 1 && t[0].ignored == 1,
		   "dir: IN_UNMOUNT|IN_ISDIR then IN_IGNORED",
		   t[0].unmount_dir * 10 + t[0].ignored);
		ok(t[1].unmount == 1 && t[1].ignored == 1,
		   "file: IN_UNMOUNT then IN_IGNORED",
		   t[1].unmount * 10 + t[1].ignored);
		ok(inofd_unwatch(in, wds[0]) == -EINVAL,
		   "dir: the watch is gone", wds[0]);
		ok(inofd_unwatch(in, wds[1]) == -EINVAL,
		   "file: the watch is gone", wds[1]);
	} else {
		ok(t[0].unmount_dir + t[0].unmount + t[0].ignored == 0,
		   "dir: nothing (fanotify ends the mark silently)",
		   t[0].unmount_dir + t[0].ignored);
		ok(t[1].unmount + t[1].ignored == 0, "file: nothing",
		   t[1].unmount + t[1].ignored);
		ok(inofd_unwatch(in, wds[0]) == 0,
		   "dir: the watch stays until unwatched", wds[0]);
		ok(inofd_unwatch(in, wds[1]) == 0,
		   "file: the watch stays until unwatched", wds[1]);
	}
	/* the tree: the same on both kernels, each told once */
	ok(t[2].unmount_dir == 1 && t[2].unmount == 0,
	   "tree: one IN_UNMOUNT|IN_ISDIR", t[2].unmount_dir);
	ok(t[2].ignored == 1, "tree: one IN_IGNORED", t[2].ignored);

	inofd_free(in);
	rmdir(P("m"));
	rmdir(base);
	printf("lib_fan_unmount: %d of %d passed\n", n - fails, n);
	return fails ? 1 : 0;
}
