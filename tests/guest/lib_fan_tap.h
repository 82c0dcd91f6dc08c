/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The lib_fan_* guest tests' checks: one TAP line each (ok() counts the
 * failures), and paths under the test's scratch directory base (P(), four
 * at a time).
 */
#ifndef LIB_FAN_TAP_H
#define LIB_FAN_TAP_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/fanotify.h>
#include <unistd.h>

static char base[256];
static int fails, n;

static void ok(bool cond, const char *what, long got)
{
	n++;
	if (cond) {
		printf("ok %d - %s\n", n, what);
	} else {
		printf("not ok %d - %s (got %ld)\n", n, what, got);
		fails++;
	}
}

static const char *P(const char *rel)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", base, rel);
	return buf[i];
}

/*
 * Ask the kernel directly: fanotify_mark(flags, mask) of base opened with
 * oflags, in a group of its own that reports file ids.  The call's result
 * (0 or -1, errno in *err), or -2: no such group for this user here.
 */
static int fan_try(unsigned int flags, uint64_t mask, int oflags, int *err)
{
	int g, fd, r;

	g = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID, O_RDONLY);
	if (g < 0)
		return -2;
	fd = open(base, oflags);
	r = fanotify_mark(g, flags, mask, fd, NULL);
	*err = errno;
	if (fd >= 0)
		close(fd);
	close(g);
	return r;
}

#endif
