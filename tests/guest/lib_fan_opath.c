// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lib_fan_opath: libinofd's fanotify backend with O_PATH objects, the same
 * scenario on a stock kernel and on one with the project's fanotify series
 * (patches/fanotify/: fanotify_mark() takes an O_PATH fd as the object).
 *
 * The kernel is asked first, directly (fanotify_mark() of an O_PATH fd of
 * the scratch directory: EBADF on a stock kernel), and the scenario then
 * checks what the library must do there:
 *
 *   scenario                          stock kernel           with the series
 *   inofd_watch_fd(O_PATH file)       -EBADF                 a watch; events
 *   inofd_watch_at(dir, "f")          a watch; the reopen's  a watch; no
 *                                     IN_CLOSE_NOWRITE seen  event of its own
 *   inofd_watch_at(NOFOLLOW link)     the link, by name      the link, by fd
 *   O_PATH file of mode 0200, user    -EBADF                 -EACCES
 *
 * Run on the host by make unit (a stock kernel) and in the guest (the
 * default kernels carry the series), as root and as a user.  With
 * REQUIRE_FAN_OPATH=1 (the guest), a kernel without the series fails.
 *
 * Exit: 0 pass, 1 fail, 4 skip (no fanotify for this user here).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inofd.h"
#include "lib_fan_tap.h"

/* Does this kernel's fanotify take an O_PATH fd as a mark's object? */
static int kernel_takes_opath(void)
{
	int e = 0, r = fan_try(FAN_MARK_ADD, FAN_CREATE, O_PATH | O_DIRECTORY,
			       &e);

	if (r == 0)
		return 1;
	return r == -1 && e == EBADF ? 0 : -1;
}

/*
 * The events read until none has come for ms: how many have this wd and
 * (any of) mask.  fanotify queues an event in the system call that makes
 * it, so what the act before made is queued when this starts; ms only
 * has to show that nothing more follows (the library's own timers are
 * waited for through inofd_timeout()).
 */
static int count(struct inofd *in, int wd, uint32_t mask, int ms)
{
	struct pollfd p = { .fd = inofd_fd(in), .events = POLLIN };
	const struct inofd_event *ev;
	int c = 0, r, t;

	for (;;) {
		t = inofd_timeout(in);
		if (poll(&p, 1, t >= 0 && t < ms ? t : ms) < 0)
			break;
		r = inofd_read(in);
		if (r < 0)
			break;
		while (inofd_next(in, &ev) == 1)
			if (ev->type == INOFD_EV_INOTIFY && ev->wd == wd &&
			    (ev->mask & mask))
				c++;
		if (r == 0 && inofd_timeout(in) == -1 &&
		    poll(&p, 1, ms) == 0)
			break;
	}
	return c;
}

static struct inofd *fan_new(void)
{
	struct inofd_opts o = { .sz = sizeof(o),
				.flags = INOFD_FORCE_FANOTIFY };
	struct inofd *in;

	if (inofd_new(&in, &o))
		return NULL;
	return in;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	struct timespec now[2] = { { 0, UTIME_NOW }, { 0, UTIME_NOW } };
	const char *req = getenv("REQUIRE_FAN_OPATH");
	struct inofd *in;
	int k, fd, wd, d;

	snprintf(base, sizeof(base), "%s/lib_fan_opath.XXXXXX",
		 tmp ? tmp : "/tmp");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	k = kernel_takes_opath();
	in = fan_new();
	if (k < 0 || !in) {
		printf("lib_fan_opath: no fanotify for this user here: SKIP\n");
		return 4;
	}
	printf("# kernel: fanotify_mark() %s an O_PATH fd (%s)\n",
	       k ? "takes" : "refuses", k ? "the fanotify series" : "stock");
	if (req && !strcmp(req, "1"))
		ok(k == 1, "REQUIRE_FAN_OPATH=1: the kernel takes O_PATH", k);

	fd = open(P("f"), O_CREAT | O_WRONLY, 0644);
	close(fd);
	mkdir(P("d"), 0755);
	fd = open(P("d/g"), O_CREAT | O_WRONLY, 0644);
	close(fd);
	if (symlink("g", P("d/l")))
		perror("symlink");

	/* 1: an O_PATH fd of a regular file, no name */
	fd = open(P("f"), O_PATH);
	wd = inofd_watch_fd(in, fd, IN_MODIFY, NULL);
	close(fd);
	if (k) {
		ok(wd > 0, "watch_fd(O_PATH file): a watch", wd);
		fd = open(P("f"), O_WRONLY);
		if (write(fd, "x", 1) != 1)
			perror("write");
		close(fd);
		ok(count(in, wd, IN_MODIFY, 300) == 1,
		   "watch_fd(O_PATH file): its IN_MODIFY after the fd closed",
		   wd);
	} else {
		ok(wd == -EBADF, "watch_fd(O_PATH file): -EBADF", wd);
	}

	/* 2: a name: opened again for reading only where O_PATH is refused */
	d = open(P("d"), O_PATH | O_DIRECTORY);
	wd = inofd_watch_at(in, d, "g", IN_CLOSE_NOWRITE | IN_OPEN, 0, NULL);
	ok(wd > 0, "watch_at(dir, \"g\"): a watch", wd);
	ok(count(in, wd, IN_CLOSE_NOWRITE, 300) == (k ? 0 : 1),
	   k ? "watch_at: no event of its own (nothing opened again)" :
	       "watch_at: the reopen's IN_CLOSE_NOWRITE (documented)", wd);

	/* 3: a symlink itself */
	wd = inofd_watch_at(in, d, "l", IN_ATTRIB,
			    INOFD_AT_SYMLINK_NOFOLLOW, NULL);
	ok(wd > 0, "watch_at(NOFOLLOW link): a watch", wd);
	if (utimensat(AT_FDCWD, P("d/g"), now, 0))
		perror("utimensat");
	ok(count(in, wd, IN_ATTRIB, 300) == 0,
	   "link watch: not its target's IN_ATTRIB", wd);
	if (utimensat(AT_FDCWD, P("d/l"), now, AT_SYMLINK_NOFOLLOW))
		perror("utimensat");
	ok(count(in, wd, IN_ATTRIB, 300) == 1, "link watch: its IN_ATTRIB",
	   wd);
	close(d);

	/* 4: no read permission: the kernel's answer, as for a path */
	if (geteuid() != 0) {
		fd = open(P("h"), O_CREAT | O_WRONLY, 0200);
		close(fd);
		fd = open(P("h"), O_PATH);
		wd = inofd_watch_fd(in, fd, IN_MODIFY, NULL);
		close(fd);
		ok(wd == (k ? -EACCES : -EBADF),
		   k ? "O_PATH file 0200: -EACCES" : "O_PATH file 0200: -EBADF",
		   wd);
	}

	inofd_free(in);
	unlink(P("f"));
	unlink(P("h"));
	unlink(P("d/l"));
	unlink(P("d/g"));
	rmdir(P("d"));
	rmdir(base);
	printf("1..%d\n", n);
	printf("lib_fan_opath: %d of %d failed (%s kernel)\n", fails, n,
	       k ? "series" : "stock");
	return fails ? 1 : 0;
}
