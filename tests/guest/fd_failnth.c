// SPDX-License-Identifier: GPL-2.0
/*
 * fd_failnth: kernel fault injection on every allocation of the new
 * calls.  For each of open("/dev/inotify"), INOTIFY_IOC_WATCH making a new
 * watch, INOTIFY_IOC_WATCH updating a watch, and INOTIFY_IOC_IGNORE, and for
 * n = 1, 2, ...: /proc/thread-self/fail-nth is set to n, the call is made,
 * and the n-th slab allocation of this task inside it fails.  The call
 * must then succeed or fail with ENOMEM, and leave the instance in a
 * state that is checked:
 *   - the watches /proc/self/fdinfo lists are what the result says (a
 *     failed new watch adds none, a failed update keeps the old mask, a
 *     failed INOTIFY_IOC_IGNORE keeps the watch, a successful one removes
 *     it and queues IN_IGNORED, or IN_Q_OVERFLOW when the IN_IGNORED
 *     event itself could not be allocated);
 *   - the instance still works: a real watch, a write, the IN_MODIFY
 *     event (after a failed open, on a new instance).
 * The loop ends at the first n where the counter did not reach zero (the
 * call made fewer than n allocations): N = n - 1 is printed per call.
 * The kernel log must stay clean (checked by /init) and kmemleak must
 * find nothing at the end of the suite.
 *
 * failslab's defaults exempt allocations that may sleep (ignore-gfp-wait)
 * and print a stack per failure (verbose): the test sets both off for its
 * run (mounting debugfs if needed) and puts them back.  An injection that
 * never made a call fail would prove nothing: the test fails unless
 * open("/dev/inotify") and a new INOTIFY_IOC_WATCH each returned ENOMEM at
 * least once.
 *
 * Root only.  Exit 0 pass, 1 fail, 4 skip when the kernel has no
 * fault injection (no /proc/thread-self/fail-nth: the default kernel).
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
#define TEST_NAME "fd_failnth"
#include "fdtest.h"
#include "failnth.h"

static char file[300];

/* the watches of @ifd in fdinfo; *mask gets the last one's mask */
static int fdinfo_watches(int ifd, unsigned int *mask)
{
	char path[64], line[512];
	unsigned int m;
	int n = 0, wd;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ifd);
	f = fopen(path, "r");
	if (!f)
		die("open %s", path);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, " mask:");

		if (sscanf(line, "inotify wd:%x", &wd) != 1 || !p)
			continue;
		if (sscanf(p, " mask:%x", &m) == 1 && mask)
			*mask = m;
		n++;
	}
	fclose(f);
	return n;
}

/* the masks of every queued event of @ifd, OR'ed; waits up to @ms */
static unsigned int drain(int ifd, int wd, int ms)
{
	union {
		struct inotify_event e;
		char buf[4096];
	} u;
	struct pollfd p = { .fd = ifd, .events = POLLIN };
	unsigned int all = 0;

	while (poll(&p, 1, ms) > 0) {
		ssize_t len = read(ifd, u.buf, sizeof(u.buf));
		char *q;

		if (len <= 0)
			break;
		for (q = u.buf; q < u.buf + len;) {
			struct inotify_event *e = (struct inotify_event *)q;

			if (wd < 0 || e->wd == wd || e->wd == -1)
				all |= e->mask;
			q += sizeof(*e) + e->len;
		}
		ms = 0;
	}
	return all;
}

static void touch_file(void)
{
	int fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);

	if (fd < 0 || write(fd, "x", 1) != 1)
		die("write %s", file);
	close(fd);
}

static int new_instance(void)
{
	int ifd = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);

	if (ifd < 0)
		die("inotify_init1");
	return ifd;
}

/* a watch on the file, by fd, without injection; returns the wd */
static int plain_watch(int ifd, unsigned int mask)
{
	int fd = open(file, O_RDONLY | O_CLOEXEC), wd;

	if (fd < 0)
		die("open %s", file);
	wd = watch_fd(ifd, fd, mask);
	close(fd);
	return wd;
}

/* the instance still works: a real watch, a write, its IN_MODIFY */
static int usable(int ifd)
{
	int wd = plain_watch(ifd, IN_MODIFY);

	if (wd < 0)
		return 0;
	drain(ifd, -1, 0);
	touch_file();
	return (drain(ifd, wd, 1000) & IN_MODIFY) != 0;
}

struct tally {
	const char *call;
	int n;		/* allocations that could be failed */
	int enomem;	/* injected and the call returned ENOMEM */
	int absorbed;	/* injected and the call still succeeded */
};

static void report(const struct tally *t)
{
	printf("fd_failnth: %-28s N=%-3d %3d ENOMEM, %3d succeeded anyway\n",
	       t->call, t->n, t->enomem, t->absorbed);
}

/* --------------------------------------------------------------- calls */

static void run_open(struct tally *t)
{
	int n, fd, err, hit, ifd;

	for (n = 1; n <= MAXN; n++) {
		arm(n);
		fd = open("/dev/inotify", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		err = errno;
		hit = disarm();
		if (fd < 0 && (!hit || err != ENOMEM)) {
			fail("open /dev/inotify, fail-nth %d: %s%s", n,
			     strerror(err), hit ? "" : " without injection");
			return;
		}
		if (fd < 0) {
			t->enomem++;
			ifd = open("/dev/inotify",
				   O_RDONLY | O_NONBLOCK | O_CLOEXEC);
			if (ifd < 0 || !usable(ifd))
				fail("open /dev/inotify after ENOMEM at %d: "
				     "no usable instance", n);
			close(ifd);
		} else {
			if (!usable(fd))
				fail("open /dev/inotify, fail-nth %d: the "
				     "instance does not work", n);
			close(fd);
			if (!hit)
				break;
			t->absorbed++;
		}
	}
	t->n = n - 1;
	if (n > MAXN)
		fail("open /dev/inotify: still allocating at %d", MAXN);
}

static void run_watch_new(struct tally *t)
{
	int n, ifd, fd, wd, err, hit, nw;

	for (n = 1; n <= MAXN; n++) {
		ifd = new_instance();
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die("open %s", file);
		arm(n);
		wd = watch_fd(ifd, fd, IN_MODIFY);
		err = errno;
		hit = disarm();
		close(fd);
		nw = fdinfo_watches(ifd, NULL);
		if (wd < 0 && (!hit || err != ENOMEM)) {
			fail("new watch, fail-nth %d: %s%s", n, strerror(err),
			     hit ? "" : " without injection");
		} else if (wd < 0) {
			t->enomem++;
			if (nw != 0)
				fail("new watch, ENOMEM at %d: %d watch(es) "
				     "left", n, nw);
		} else {
			if (nw != 1)
				fail("new watch, fail-nth %d: success but %d "
				     "watches", n, nw);
			if (hit)
				t->absorbed++;
		}
		if (!usable(ifd))
			fail("new watch, fail-nth %d: the instance does not "
			     "work after", n);
		close(ifd);
		if (!hit)
			break;
	}
	t->n = n - 1;
	if (n > MAXN)
		fail("new watch: still allocating at %d", MAXN);
}

static void run_watch_update(struct tally *t)
{
	unsigned int mask = 0;
	int n, ifd, fd, wd, wd0, err, hit, nw;

	for (n = 1; n <= MAXN; n++) {
		ifd = new_instance();
		wd0 = plain_watch(ifd, IN_MODIFY);
		if (wd0 < 0)
			die("watch");
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die("open %s", file);
		arm(n);
		wd = watch_fd(ifd, fd, IN_MODIFY | IN_ATTRIB);
		err = errno;
		hit = disarm();
		close(fd);
		nw = fdinfo_watches(ifd, &mask);
		mask &= IN_ALL_EVENTS;
		if (wd < 0 && (!hit || err != ENOMEM)) {
			fail("update, fail-nth %d: %s%s", n, strerror(err),
			     hit ? "" : " without injection");
		} else if (wd < 0) {
			t->enomem++;
			if (nw != 1 || mask != IN_MODIFY)
				fail("update, ENOMEM at %d: %d watch(es), "
				     "mask 0x%x (want the old 0x%x)", n, nw,
				     mask, IN_MODIFY);
		} else {
			if (wd != wd0 || nw != 1 ||
			    mask != (IN_MODIFY | IN_ATTRIB))
				fail("update, fail-nth %d: wd %d (was %d), %d "
				     "watch(es), mask 0x%x", n, wd, wd0, nw,
				     mask);
			if (hit)
				t->absorbed++;
		}
		if (!usable(ifd))
			fail("update, fail-nth %d: the instance does not work "
			     "after", n);
		close(ifd);
		if (!hit)
			break;
	}
	t->n = n - 1;
	if (n > MAXN)
		fail("update: still allocating at %d", MAXN);
}

static void run_ignore(struct tally *t, int *overflows)
{
	unsigned int got;
	int n, ifd, wd, r, err, hit, nw;

	for (n = 1; n <= MAXN; n++) {
		ifd = new_instance();
		wd = plain_watch(ifd, IN_MODIFY);
		if (wd < 0)
			die("watch");
		arm(n);
		r = ioctl(ifd, INOTIFY_IOC_IGNORE, &wd);
		err = errno;
		hit = disarm();
		nw = fdinfo_watches(ifd, NULL);
		got = drain(ifd, -1, 0);
		if (r < 0 && (!hit || err != ENOMEM)) {
			fail("INOTIFY_IOC_IGNORE, fail-nth %d: %s%s", n,
			     strerror(err), hit ? "" : " without injection");
		} else if (r < 0) {
			t->enomem++;
			if (nw != 1)
				fail("INOTIFY_IOC_IGNORE, ENOMEM at %d: %d "
				     "watch(es), want 1", n, nw);
		} else {
			if (nw != 0 || !(got & (IN_IGNORED | IN_Q_OVERFLOW)))
				fail("INOTIFY_IOC_IGNORE, fail-nth %d: %d "
				     "watch(es) left, events 0x%x", n, nw,
				     got);
			if (!(got & IN_IGNORED))
				(*overflows)++;
			if (hit)
				t->absorbed++;
		}
		if (!usable(ifd))
			fail("INOTIFY_IOC_IGNORE, fail-nth %d: the instance does "
			     "not work after", n);
		close(ifd);
		if (!hit)
			break;
	}
	t->n = n - 1;
	if (n > MAXN)
		fail("INOTIFY_IOC_IGNORE: still allocating at %d", MAXN);
}

int main(void)
{
	struct tally t[4] = {
		{ "open(\"/dev/inotify\")", 0, 0, 0 },
		{ "INOTIFY_IOC_WATCH (new watch)", 0, 0, 0 },
		{ "INOTIFY_IOC_WATCH (update)", 0, 0, 0 },
		{ "INOTIFY_IOC_IGNORE", 0, 0, 0 },
	};
	unsigned int i;
	const char *tmp = getenv("TMPDIR");
	int rc, fd, overflows = 0;

	rc = fdtest_probe();
	if (rc)
		return rc;

	rc = failnth_setup();
	if (rc)
		return rc;

	snprintf(file, sizeof(file), "%s/fd_failnth.file", tmp ? tmp : "/tmp");
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("create %s", file);
	close(fd);

	run_open(&t[0]);
	run_watch_new(&t[1]);
	run_watch_update(&t[2]);
	run_ignore(&t[3], &overflows);

	for (i = 0; i < 4; i++)
		report(&t[i]);
	printf("fd_failnth: INOTIFY_IOC_IGNORE queued IN_Q_OVERFLOW instead of "
	       "IN_IGNORED %d time(s)\n", overflows);
	if (!t[0].enomem)
		fail("open(\"/dev/inotify\") never failed: injection did not "
		     "work");
	if (!t[1].enomem)
		fail("a new INOTIFY_IOC_WATCH never failed: injection did not "
		     "work");
	unlink(file);
	printf("fd_failnth: %s\n", failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}
