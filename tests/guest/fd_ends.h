// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the guest tests of when a watch by fd ends (fd_bind,
 * fd_mntns): watch through a closed descriptor, collect what an instance
 * queued, and compare it per watch with an exact expectation.  Define
 * TEST_NAME before including this file.  Everything is static: each test
 * is one translation unit.
 */
#ifndef FD_ENDS_H
#define FD_ENDS_H

#ifndef TEST_NAME
#error "define TEST_NAME before including fd_ends.h"
#endif

#include <poll.h>
#include <sys/mount.h>
#include "fdtest.h"

#define MAXEV 64

struct ev {
	int wd;
	unsigned int mask;
	char name[32];
};

/* watch @path through a descriptor closed right after */
static int watch_closed(int ifd, const char *path, int flags,
			unsigned int mask)
{
	int fd = open(path, flags | O_CLOEXEC), wd;

	if (fd < 0)
		die("open %s", path);
	wd = watch_fd(ifd, fd, mask);
	if (wd < 0)
		die("INOTIFY_IOC_WATCH %s", path);
	close(fd);
	return wd;
}

/*
 * Everything queued on @ifd: read until it stays empty for @ms (the
 * operations are synchronous; the wait is there so that a late event
 * cannot go unseen).
 */
static int collect(int ifd, struct ev *out, int max, int ms)
{
	union {
		struct inotify_event e;
		char buf[4096];
	} u;
	struct pollfd p = { .fd = ifd, .events = POLLIN };
	int n = 0;

	while (poll(&p, 1, ms) > 0) {
		ssize_t len = read(ifd, u.buf, sizeof(u.buf));
		char *q;

		if (len <= 0)
			die("read");
		for (q = u.buf; q < u.buf + len;) {
			struct inotify_event *e = (struct inotify_event *)q;

			if (n < max) {
				out[n].wd = e->wd;
				out[n].mask = e->mask;
				snprintf(out[n].name, sizeof(out[n].name), "%s",
					 e->len ? e->name : "");
			}
			n++;
			q += sizeof(*e) + e->len;
		}
	}
	return n;
}

static const char *label(int wd, const int *wds, const char *const *names,
			 int nw)
{
	int i;

	for (i = 0; i < nw; i++)
		if (wds[i] == wd)
			return names[i];
	return "?";
}

/*
 * Check one step: for every watch, the events it got must be exactly
 * @exp's events for it, in order; no event for any other wd.  The order
 * between watches is the kernel's inode list order, so it is not checked.
 */
static void expect(int ifd, const char *step, const int *wds,
		   const char *const *names, int nw, const struct ev *exp,
		   int nexp)
{
	struct ev got[MAXEV];
	int n = collect(ifd, got, MAXEV, 200), i, w, bad = 0;

	if (n > MAXEV) {
		printf("FAIL %s: %d events, more than %d\n", step, n, MAXEV);
		failed++;
		return;
	}
	for (w = 0; w < nw; w++) {
		int gi = 0, ei = 0;

		for (;;) {
			while (gi < n && got[gi].wd != wds[w])
				gi++;
			while (ei < nexp && exp[ei].wd != wds[w])
				ei++;
			if (gi == n || ei == nexp)
				break;
			if (got[gi].mask != exp[ei].mask ||
			    strcmp(got[gi].name, exp[ei].name))
				bad = 1;
			gi++;
			ei++;
		}
		while (gi < n && got[gi].wd != wds[w])
			gi++;
		while (ei < nexp && exp[ei].wd != wds[w])
			ei++;
		if (gi != n || ei != nexp)
			bad = 1;
	}
	for (i = 0; i < n; i++) {
		for (w = 0; w < nw && got[i].wd != wds[w]; w++)
			;
		if (w == nw)
			bad = 1;
	}
	printf("%-4s %-50s %d event(s)\n", bad ? "FAIL" : "ok", step, n);
	if (bad) {
		failed++;
		for (i = 0; i < nexp; i++)
			printf("     expected %-5s mask=0x%08x name=%s\n",
			       label(exp[i].wd, wds, names, nw), exp[i].mask,
			       exp[i].name);
		for (i = 0; i < n; i++)
			printf("     got      %-5s mask=0x%08x name=%s\n",
			       label(got[i].wd, wds, names, nw), got[i].mask,
			       got[i].name);
	}
}

static void write_file(const char *path, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0644);

	if (fd < 0 || write(fd, "x\n", 2) != 2)
		die("write %s", path);
	close(fd);
}

static void xmount(const char *src, const char *dst, const char *type,
		   unsigned long flags)
{
	if (mount(src, dst, type, flags, NULL))
		die("mount %s on %s", src, dst);
}

static void xumount(const char *dst, int flags)
{
	if (umount2(dst, flags))
		die("umount %s", dst);
}

#endif /* FD_ENDS_H */
