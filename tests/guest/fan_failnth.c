// SPDX-License-Identifier: GPL-2.0
/*
 * fan_failnth: kernel fault injection on the paths of the fanotify series
 * (patches/fanotify/).  For n = 1, 2, ... the n-th slab allocation of this
 * task fails inside
 *
 *   - fanotify_mark(FAN_MARK_ADD) of an inode mark named by an O_PATH
 *     file descriptor (patch 1): it succeeds or fails with ENOMEM; fdinfo
 *     lists the mark exactly when it succeeded; the group still works (a
 *     mark, a write, its FAN_MODIFY);
 *   - umount(2) of a tmpfs whose root directory and one file are marked
 *     with the end event of patch 3 (FAN_IGNORED in the series v2, else
 *     v1's FAN_UNMOUNT): it succeeds (or fails with ENOMEM, and is done
 *     again without injection); then each mark has reported that event,
 *     or the group has FAN_Q_OVERFLOW for an event that could not be
 *     allocated, and fdinfo lists no mark.
 *
 * The loop ends at the first n the calls did not reach.  The kernel log
 * must stay clean (checked by /init) and kmemleak must find nothing at the
 * end of the suite.  An injection that never failed an unmount event or a
 * mark would prove nothing: the test fails unless each happened.
 *
 * Root only (failslab's knobs, mount).  Exit 0 pass, 1 fail, 4 skip
 * without fault injection (every kernel but the debug one) or without the
 * series (FAN_IGNORED and FAN_UNMOUNT refused).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/stat.h>
#define TEST_NAME "fan_failnth"
#include "fdtest.h"
#include "failnth.h"

#ifndef FAN_UNMOUNT
#define FAN_UNMOUNT	0x00002000
#endif
#ifndef FAN_IGNORED
#define FAN_IGNORED	0x00400000
#endif

static char dir[256], mnt[300], file[300];
/* the series' end event: FAN_IGNORED (v2), else FAN_UNMOUNT (v1) */
static uint64_t end_bit = FAN_IGNORED;
static const char *end_name = "FAN_IGNORED";

static int new_group(void)
{
	int g = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID | FAN_NONBLOCK |
			      FAN_CLOEXEC, O_RDONLY);

	if (g < 0)
		die("fanotify_init(FAN_REPORT_FID)");
	return g;
}

static int mark_path(int g, const char *path, unsigned int mask)
{
	int fd = open(path, O_PATH | O_CLOEXEC), r;

	if (fd < 0)
		die("open %s", path);
	r = fanotify_mark(g, FAN_MARK_ADD, mask, fd, NULL);
	close(fd);
	return r;
}

/* the inode marks /proc/self/fdinfo lists for group g */
static int fdinfo_marks(int g)
{
	char path[64], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", g);
	f = fopen(path, "r");
	if (!f)
		die("open %s", path);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "fanotify ino:", 13))
			n++;
	fclose(f);
	return n;
}

/* the events queued for g: how many have mask bit, and all masks OR'ed */
static int count_events(int g, unsigned long long bit, unsigned long long *all)
{
	char buf[4096] __attribute__((aligned(8)));
	struct pollfd p = { .fd = g, .events = POLLIN };
	int n = 0, ms = 200;

	*all = 0;
	while (poll(&p, 1, ms) > 0) {
		ssize_t len = read(g, buf, sizeof(buf));
		struct fanotify_event_metadata *m;

		if (len <= 0)
			break;
		for (m = (void *)buf; FAN_EVENT_OK(m, len);
		     m = FAN_EVENT_NEXT(m, len)) {
			*all |= m->mask;
			if (m->mask & bit)
				n++;
			if (m->fd >= 0)
				close(m->fd);
		}
		ms = 0;
	}
	return n;
}

/* the group still works: a mark, a write, its FAN_MODIFY */
static int usable(int g)
{
	unsigned long long all;
	int fd;

	if (mark_path(g, file, FAN_MODIFY))
		return 0;
	count_events(g, 0, &all);
	fd = open(file, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0 || write(fd, "x", 1) != 1)
		die("write %s", file);
	close(fd);
	return count_events(g, FAN_MODIFY, &all) > 0;
}

struct tally {
	const char *call;
	int n, enomem, absorbed, overflows;
};

/*
 * The end of round n of a loop over what: the group must still work;
 * true when the loop goes on (the armed allocation was reached).
 */
static bool round_end(int g, const char *what, int n, int hit)
{
	if (!usable(g))
		fail("%s, fail-nth %d: the group does not work after", what,
		     n);
	close(g);
	return hit;
}

static void loop_end(struct tally *t, const char *what, int n)
{
	t->n = n - 1;
	if (n > MAXN)
		fail("%s: still allocating at %d", what, MAXN);
}

static void run_mark(struct tally *t)
{
	int n, g, fd, r, err, hit, nm;

	for (n = 1; n <= MAXN; n++) {
		g = new_group();
		fd = open(dir, O_PATH | O_CLOEXEC);
		if (fd < 0)
			die("open %s", dir);
		arm(n);
		r = fanotify_mark(g, FAN_MARK_ADD, FAN_CREATE | FAN_ONDIR, fd,
				  NULL);
		err = errno;
		hit = disarm();
		close(fd);
		nm = fdinfo_marks(g);
		if (r < 0 && (!hit || err != ENOMEM)) {
			fail("O_PATH mark, fail-nth %d: %s%s", n, strerror(err),
			     hit ? "" : " without injection");
		} else if (r < 0) {
			t->enomem++;
			if (nm != 0)
				fail("O_PATH mark, ENOMEM at %d: %d mark(s) "
				     "left", n, nm);
		} else {
			if (nm != 1)
				fail("O_PATH mark, fail-nth %d: success but %d "
				     "marks", n, nm);
			if (hit)
				t->absorbed++;
		}
		if (!round_end(g, "O_PATH mark", n, hit))
			break;
	}
	loop_end(t, "O_PATH mark", n);
}

static void mount_marked(int g)
{
	char f[320];
	int fd;

	if (mount("tmpfs", mnt, "tmpfs", 0, "size=1m"))
		die("mount tmpfs on %s", mnt);
	snprintf(f, sizeof(f), "%s/f", mnt);
	fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		die("create %s", f);
	close(fd);
	if (mark_path(g, mnt, end_bit | FAN_CREATE | FAN_ONDIR) ||
	    mark_path(g, f, end_bit | FAN_MODIFY))
		die("%s marks on %s", end_name, mnt);
}

static void run_umount(struct tally *t)
{
	unsigned long long all;
	int n, g, r, err, hit, nm, got;

	for (n = 1; n <= MAXN; n++) {
		g = new_group();
		mount_marked(g);
		arm(n);
		r = umount(mnt);
		err = errno;
		hit = disarm();
		if (r < 0 && (!hit || err != ENOMEM)) {
			fail("umount, fail-nth %d: %s%s", n, strerror(err),
			     hit ? "" : " without injection");
			umount(mnt);
		} else if (r < 0) {
			t->enomem++;
			if (fdinfo_marks(g) != 2)
				fail("umount, ENOMEM at %d: %d mark(s), want 2",
				     n, fdinfo_marks(g));
			if (umount(mnt))
				die("umount %s", mnt);
		} else if (hit) {
			t->absorbed++;
		}
		got = count_events(g, end_bit, &all);
		nm = fdinfo_marks(g);
		if (nm != 0)
			fail("umount, fail-nth %d: %d mark(s) left", n, nm);
		if (got != 2 && !(all & FAN_Q_OVERFLOW))
			fail("umount, fail-nth %d: %d %s and no overflow "
			     "(events 0x%llx)", n, got, end_name, all);
		if (got < 2 && (all & FAN_Q_OVERFLOW))
			t->overflows++;
		if (!round_end(g, "umount", n, hit))
			break;
	}
	loop_end(t, "umount", n);
}

int main(void)
{
	struct tally t[2] = {
		{ "fanotify_mark (O_PATH fd)", 0, 0, 0, 0 },
		{ "umount (end-event marks)", 0, 0, 0, 0 },
	};
	const char *tmp = getenv("TMPDIR");
	unsigned int i;
	int rc, g, fd;

	rc = failnth_setup();
	if (rc)
		return rc;
	snprintf(dir, sizeof(dir), "%s/fan_failnth", tmp ? tmp : "/tmp");
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	if ((mkdir(dir, 0755) && errno != EEXIST) ||
	    (mkdir(mnt, 0755) && errno != EEXIST))
		die("mkdir %s", mnt);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("create %s", file);
	close(fd);

	g = new_group();
	fd = open(dir, O_PATH | O_CLOEXEC);
	if (fd < 0)
		die("open %s", dir);
	if (fanotify_mark(g, FAN_MARK_ADD, end_bit, fd, NULL)) {
		end_bit = FAN_UNMOUNT;
		end_name = "FAN_UNMOUNT";
	}
	if (end_bit == FAN_UNMOUNT &&
	    fanotify_mark(g, FAN_MARK_ADD, end_bit, fd, NULL)) {
		printf("skip fan_failnth: no FAN_IGNORED, no FAN_UNMOUNT or no "
		       "O_PATH marks (%s): a kernel without the fanotify "
		       "series\n", strerror(errno));
		return 4;
	}
	close(fd);
	close(g);

	run_mark(&t[0]);
	run_umount(&t[1]);

	for (i = 0; i < 2; i++)
		printf("fan_failnth: %-28s N=%-3d %3d ENOMEM, %3d succeeded "
		       "anyway, %d overflow(s)\n", t[i].call, t[i].n,
		       t[i].enomem, t[i].absorbed, t[i].overflows);
	if (!t[0].enomem)
		fail("an O_PATH mark never failed: injection did not work");
	if (!t[1].overflows)
		fail("no %s event ever failed to be allocated: injection "
		     "did not reach it", end_name);
	unlink(file);
	rmdir(mnt);
	rmdir(dir);
	printf("fan_failnth: %s\n", failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}
