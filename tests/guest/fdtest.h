// SPDX-License-Identifier: GPL-2.0
/*
 * What every C guest test of the kernel's watch by fd starts with: its
 * name in messages, die(), paths below a private base directory, the
 * INOTIFY_IOC_WATCH call with the rest of the argument zero, a pass/fail
 * counter and the check that the kernel has INOTIFY_IOC_WATCH at all.
 * Define TEST_NAME before including this file; everything is static, as
 * each test is one translation unit.
 */
#ifndef FDTEST_H
#define FDTEST_H

#ifndef TEST_NAME
#error "define TEST_NAME before including fdtest.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
/*
 * <linux/inotify.h> includes <linux/fcntl.h>, whose struct flock clashes
 * with glibc's <fcntl.h>; glibc has the O_* constants it needs.
 */
#define _LINUX_FCNTL_H
#include <linux/inotify.h>

static int failed;
static int passed __attribute__((unused));
static char base[256] __attribute__((unused));

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stdout, "FAIL " TEST_NAME ": ");
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, ": %s\n", strerror(errno));
	va_end(ap);
	exit(1);
}

/* @rel below base; four results may be in use at once */
static inline const char *at(const char *rel)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", base, rel);
	return buf[i];
}

static inline void check(const char *what, int ok)
{
	printf("%-4s %s\n", ok ? "ok" : "FAIL", what);
	if (ok)
		passed++;
	else
		failed++;
}

/* the rest of the argument struct stays zero, whatever its layout */
static inline int watch_fd(int ifd, int fd, unsigned int mask)
{
	struct inotify_watch_args args = { .fd = fd, .mask = mask };

	return ioctl(ifd, INOTIFY_IOC_WATCH, &args);
}

/*
 * 0 when the kernel has INOTIFY_IOC_WATCH; otherwise the exit status: 4
 * (skip), or 1 when REQUIRE_INOTIFY_WATCH=1 says it must be there.
 */
static inline int fdtest_probe(void)
{
	const char *req = getenv("REQUIRE_INOTIFY_WATCH");
	int ifd, ret, err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ifd = syscall(SYS_inotify_init1, IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");
	ret = watch_fd(ifd, -1, IN_MODIFY);
	err = errno;
	close(ifd);
	if (ret >= 0 || err != ENOTTY)
		return 0;
	if (req && !strcmp(req, "1")) {
		printf("FAIL " TEST_NAME ": INOTIFY_IOC_WATCH is not supported "
		       "(ENOTTY), but REQUIRE_INOTIFY_WATCH=1\n");
		return 1;
	}
	printf("skip " TEST_NAME ": INOTIFY_IOC_WATCH is not supported\n");
	return 4;
}

/* base = $TMPDIR/TEST_NAME.XXXXXX, made */
static inline void fdtest_mkbase(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(base, sizeof(base), "%s/" TEST_NAME ".XXXXXX",
		 tmp ? tmp : "/tmp");
	if (!mkdtemp(base))
		die("mkdtemp");
}

/* write @str to the file @path; 0 or -1 */
static inline int fdtest_write_str(const char *path, const char *str)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t len = strlen(str);
	int ret = 0;

	if (fd < 0)
		return -1;
	if (write(fd, str, len) != len)
		ret = -1;
	close(fd);
	return ret;
}

/*
 * For the tests that mount: as root, nothing to do; otherwise enter a
 * user namespace of our own, where our uid and gid are mapped to 0, and a
 * mount namespace it owns, so that tmpfs, bind, overlay mounts and
 * further mount namespaces are ours to make.  0, or the exit status:
 * 4 (skip) when the kernel has no user namespaces for us.
 */
static inline int fdtest_userns(void)
{
	char map[64];
	unsigned int uid = geteuid(), gid = getegid();

	if (uid == 0)
		return 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		printf("skip " TEST_NAME ": uid %u and no user namespace: %s\n",
		       uid, strerror(errno));
		return 4;
	}
	snprintf(map, sizeof(map), "0 %u 1", uid);
	if (fdtest_write_str("/proc/self/uid_map", map))
		die("uid_map");
	if (fdtest_write_str("/proc/self/setgroups", "deny"))
		die("setgroups");
	snprintf(map, sizeof(map), "0 %u 1", gid);
	if (fdtest_write_str("/proc/self/gid_map", map))
		die("gid_map");
	printf("%s: uid %u, as root of a user namespace of its own\n",
	       TEST_NAME, uid);
	return 0;
}

#endif /* FDTEST_H */
