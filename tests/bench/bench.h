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
#include <sys/ioctl.h>
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
	return ioctl(ifd, INOTIFY_WATCH, &a);
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

static inline void write_sysctl(const char *name, long v)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/sys/fs/inotify/%s", name);
	f = fopen(p, "w");
	if (!f || fprintf(f, "%ld\n", v) < 0 || fclose(f))
		fprintf(stderr, "bench: cannot set %s (not root?)\n", p);
}

#endif
