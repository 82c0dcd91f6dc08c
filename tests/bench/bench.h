/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the benchmarks in tests/bench (header only: the
 * Makefile builds each tests/bench/NAME.c on its own).
 *
 * <linux/inotify.h> is the project's copy (-I include-uapi); glibc's
 * <sys/inotify.h> cannot be included with it, so the inotify system calls
 * are made with syscall(2).  <linux/fcntl.h> clashes with glibc's <fcntl.h>.
 */
#ifndef BENCH_H
#define BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <grp.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#define _LINUX_FCNTL_H
#include <linux/inotify.h>

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline int sys_init1(int flags)
{
	return syscall(SYS_inotify_init1, flags);
}

static inline int sys_add(int ifd, const char *path, uint32_t mask)
{
	return syscall(SYS_inotify_add_watch, ifd, path, mask);
}

static inline int watch_fd(int ifd, int fd, uint32_t mask)
{
	struct inotify_watch_args a;

	memset(&a, 0, sizeof(a));
	a.fd = fd;
	a.mask = mask;
	return ioctl(ifd, INOTIFY_IOC_WATCH, &a);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Median of n values (sorts v). */
static inline double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static inline void die(const char *what)
{
	fprintf(stderr, "bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* @name below /proc/sys/fs/ (e.g. "fanotify/max_user_marks") */
static inline void write_fs_sysctl(const char *name, long v)
{
	char p[160];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/sys/fs/%s", name);
	f = fopen(p, "w");
	if (!f || fprintf(f, "%ld\n", v) < 0 || fclose(f))
		fprintf(stderr, "bench: cannot set %s (not root?)\n", p);
}

static inline void write_sysctl(const char *name, long v)
{
	char p[128];

	snprintf(p, sizeof(p), "inotify/%s", name);
	write_fs_sysctl(p, v);
}

/*
 * The fanotify peer of an inotify watch on a directory: an inode mark in
 * a group that an unprivileged user may create (FID mode, names of
 * directory entries), FAN_EVENT_ON_CHILD for the children's events and
 * FAN_ONDIR for those of subdirectories and of the directory itself, as
 * an inotify directory watch has them.  IN_ACCESS..IN_MOVE_SELF (0xfff)
 * have the same values as FAN_ACCESS..FAN_MOVE_SELF (both are the
 * kernel's FS_* bits), so an inotify event mask maps bit for bit.
 */
#define BENCH_FAN_INIT (FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME)

static inline uint64_t fan_mask(uint32_t in_mask)
{
	return (in_mask & IN_ALL_EVENTS) | FAN_EVENT_ON_CHILD | FAN_ONDIR;
}

/*
 * BENCH_AS_USER=UID: after the root-only setup (limits, sysctls), run the
 * rest as UID (group UID, no supplementary groups).  Returns the uid the
 * bench runs as.
 */
static inline uid_t bench_drop_privileges(void)
{
	const char *u = getenv("BENCH_AS_USER");
	uid_t uid;

	if (!u || !*u)
		return geteuid();
	uid = (uid_t)strtoul(u, NULL, 10);
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		die("dropping privileges (BENCH_AS_USER)");
	if (!setuid(0)) {
		fprintf(stderr, "bench: privileges were not dropped\n");
		exit(1);
	}
	/* keep /proc/self readable by ourselves (count_fds, /proc/self/fd) */
	prctl(PR_SET_DUMPABLE, 1);
	return uid;
}

#endif
