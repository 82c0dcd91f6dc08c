// SPDX-License-Identifier: GPL-2.0
/*
 * fd_bind: a watch by fd ends when the superblock shuts down, not when
 * the mount the fd came through goes away.
 *
 * Phase "bind": a tmpfs mounted at A, bound at B and at C.  A file and
 * the root directory are watched through descriptors opened under B and
 * closed at once.  Then:
 *   umount B (the mount the watches came through)  -> no event
 *   write A/file, create A/new                      -> the events come
 *   umount A (the original mount)                   -> no event
 *   write C/file, unlink C/new                      -> the events come
 *   umount C (the last mount)                       -> per watch exactly
 *     IN_UNMOUNT (| IN_ISDIR for the directory) then IN_IGNORED, once,
 *     and nothing after; INOTIFY_IOC_IGNORE on either wd then gives EINVAL.
 * Phase "detach": the last mount detached (MNT_DETACH) while a file on it
 * is still open: no event until that file is closed; its close gives
 * IN_CLOSE_WRITE, then IN_UNMOUNT and IN_IGNORED.
 *
 * Each expectation is the exact list of events per watch.  It mounts: as
 * root, or as any other user in a user and mount namespace of its own
 * (fdtest_userns()).  Exit 0 pass, 1 fail, 4 skip (no user namespace for
 * a user, or no INOTIFY_IOC_WATCH and REQUIRE_INOTIFY_WATCH unset).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
/*
 * <linux/inotify.h> includes <linux/fcntl.h>, whose struct flock clashes
 * with glibc's <fcntl.h>; glibc has the O_* constants it needs.
 */
#define _LINUX_FCNTL_H
#include <linux/inotify.h>

#define TEST_NAME "fd_bind"
#include "fd_ends.h"

static void phase_bind(void)
{
	const unsigned int fmask = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE |
				   IN_DELETE_SELF;
	const unsigned int dmask = IN_CREATE | IN_DELETE;
	const char *const names[] = { "file", "dir" };
	int ifd, wds[2], wf, wr, ign;

	mkdir(at("A"), 0755);
	mkdir(at("B"), 0755);
	mkdir(at("C"), 0755);
	xmount("fd_bind", at("A"), "tmpfs", 0);
	write_file(at("A/file"), O_CREAT);
	xmount(at("A"), at("B"), NULL, MS_BIND);
	xmount(at("A"), at("C"), NULL, MS_BIND);

	ifd = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");
	wf = watch_closed(ifd, at("B/file"), O_PATH, fmask);
	wr = watch_closed(ifd, at("B"), O_RDONLY | O_DIRECTORY, dmask);
	wds[0] = wf;
	wds[1] = wr;
	expect(ifd, "bind: watches made through B", wds, names, 2, NULL, 0);

	xumount(at("B"), 0);
	expect(ifd, "bind: umount B (the watches' mount)", wds, names, 2,
	       NULL, 0);

	write_file(at("A/file"), O_APPEND);
	write_file(at("A/new"), O_CREAT);
	{
		const struct ev exp[] = {
			{ wf, IN_MODIFY, "" }, { wf, IN_CLOSE_WRITE, "" },
			{ wr, IN_CREATE, "new" },
		};
		expect(ifd, "bind: write A/file, create A/new", wds, names, 2,
		       exp, 3);
	}

	xumount(at("A"), 0);
	expect(ifd, "bind: umount A (the original mount)", wds, names, 2,
	       NULL, 0);

	write_file(at("C/file"), O_APPEND);
	if (unlink(at("C/new")))
		die("unlink C/new");
	{
		const struct ev exp[] = {
			{ wf, IN_MODIFY, "" }, { wf, IN_CLOSE_WRITE, "" },
			{ wr, IN_DELETE, "new" },
		};
		expect(ifd, "bind: write C/file, unlink C/new", wds, names, 2,
		       exp, 3);
	}

	xumount(at("C"), 0);
	{
		const struct ev exp[] = {
			{ wf, IN_UNMOUNT, "" }, { wf, IN_IGNORED, "" },
			{ wr, IN_UNMOUNT | IN_ISDIR, "" }, { wr, IN_IGNORED, "" },
		};
		expect(ifd, "bind: umount C (the last mount)", wds, names, 2,
		       exp, 4);
	}
	ign = wf;
	check("bind: INOTIFY_IOC_IGNORE on the ended file watch -> EINVAL",
	      ioctl(ifd, INOTIFY_IOC_IGNORE, &ign) < 0 && errno == EINVAL);
	ign = wr;
	check("bind: INOTIFY_IOC_IGNORE on the ended dir watch -> EINVAL",
	      ioctl(ifd, INOTIFY_IOC_IGNORE, &ign) < 0 && errno == EINVAL);
	expect(ifd, "bind: nothing more", wds, names, 2, NULL, 0);
	close(ifd);
}

static void phase_detach(void)
{
	const char *const names[] = { "file" };
	int ifd, wds[1], keep;

	mkdir(at("D"), 0755);
	xmount("fd_bind", at("D"), "tmpfs", 0);
	write_file(at("D/file"), O_CREAT);

	ifd = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");
	wds[0] = watch_closed(ifd, at("D/file"), O_RDONLY,
			      IN_MODIFY | IN_CLOSE_WRITE);
	keep = open(at("D/file"), O_WRONLY | O_APPEND | O_CLOEXEC);
	if (keep < 0)
		die("open D/file");
	/* the watch's own open and close: IN_CLOSE_NOWRITE is not asked */
	expect(ifd, "detach: watch made, D/file held open", wds, names, 1,
	       NULL, 0);

	xumount(at("D"), MNT_DETACH);
	expect(ifd, "detach: umount -l D, a file still open", wds, names, 1,
	       NULL, 0);

	if (write(keep, "y\n", 2) != 2)
		die("write");
	{
		const struct ev exp[] = { { wds[0], IN_MODIFY, "" } };

		expect(ifd, "detach: write through the open file", wds, names,
		       1, exp, 1);
	}

	close(keep);
	{
		const struct ev exp[] = {
			{ wds[0], IN_CLOSE_WRITE, "" },
			{ wds[0], IN_UNMOUNT, "" },
			{ wds[0], IN_IGNORED, "" },
		};
		expect(ifd, "detach: close the last open file", wds, names, 1,
		       exp, 3);
	}
	close(ifd);
}

int main(void)
{
	int rc;

	rc = fdtest_probe();
	if (rc)
		return rc;
	fdtest_mkbase();
	rc = fdtest_userns();
	if (rc) {
		rmdir(base);
		return rc;
	}

	phase_bind();
	phase_detach();

	rmdir(at("A"));
	rmdir(at("B"));
	rmdir(at("C"));
	rmdir(at("D"));
	rmdir(base);
	printf("fd_bind: %s\n", failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}
