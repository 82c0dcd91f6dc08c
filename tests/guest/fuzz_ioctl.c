// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ioctl: a bounded random test of the ioctl arguments of inotify
 * instances (from inotify_init1() and from /dev/inotify): random fds of
 * every kind in struct inotify_watch_args (files, dirs, O_PATH, symlinks,
 * pipes, sockets, anon inodes, devices, closed and absurd numbers), random
 * masks, flags and reserved words, bad pointers, and random ioctl numbers
 * near 'I'.  Pass = no crash (the harness checks the kernel log) and every
 * result in the documented set for its command.
 *
 * Environment: FUZZ_ITERS (default 200000, 50000 when INOFD_DEBUG_KERNEL=1
 * says the guest runs the debug kernel), FUZZ_SEED (default: time; the
 * seed is printed so a failure can be replayed), FUZZ_SECONDS (stop after
 * that long; without FUZZ_ITERS the iterations are then unbounded: the
 * soak run, make soak).  Root or user.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#define _LINUX_FCNTL_H
#include <linux/inotify.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t rs;

static uint32_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (uint32_t)rs;
}

static int pool[64], npool;
static const char *pool_what[64];
static int failed;
static long n_ok, n_err, n_total;
static long errcount[256];

static void add(int fd, const char *what)
{
	if (fd < 0 || npool >= (int)ARRAY_SIZE(pool))
		return;
	pool_what[npool] = what;
	pool[npool++] = fd;
}

static void make_pool(void)
{
	int p[2], sv[2], fd;
	sigset_t ss;

	fd = open("file", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	add(fd, "file rw");
	add(open("file", O_RDONLY | O_CLOEXEC), "file ro");
	add(open("file", O_WRONLY | O_CLOEXEC), "file wo");
	add(open("file", O_PATH | O_CLOEXEC), "file O_PATH");
	mkdir("dir", 0755);
	add(open("dir", O_RDONLY | O_DIRECTORY | O_CLOEXEC), "dir");
	add(open("dir", O_PATH | O_CLOEXEC), "dir O_PATH");
	if (symlink("file", "link") == 0 || errno == EEXIST)
		add(open("link", O_PATH | O_NOFOLLOW | O_CLOEXEC), "symlink O_PATH");
	fd = open("gone", O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
	unlink("gone");
	add(fd, "unlinked file");
	fd = open("file000", O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
	chmod("file000", 0);
	add(fd, "ro file chmod 000");
	add(open("file000", O_PATH | O_CLOEXEC), "O_PATH chmod 000");
	if (pipe2(p, O_CLOEXEC) == 0) {
		add(p[0], "pipe r");
		add(p[1], "pipe w");
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		add(sv[0], "socket");
		add(sv[1], "socket");
	}
	add(eventfd(0, EFD_CLOEXEC), "eventfd");
	add(epoll_create1(EPOLL_CLOEXEC), "epoll");
	add(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), "timerfd");
	sigemptyset(&ss);
	add(signalfd(-1, &ss, SFD_CLOEXEC), "signalfd");
	add(syscall(SYS_inotify_init1, IN_CLOEXEC), "inotify");
	add(syscall(SYS_memfd_create, "fz", 1u), "memfd");
	add(open("/dev/null", O_RDWR | O_CLOEXEC), "/dev/null");
	add(open("/dev/inotify", O_RDONLY | O_CLOEXEC), "/dev/inotify instance");
	add(open("/dev", O_PATH | O_CLOEXEC), "/dev");
	add(open("/proc/self/status", O_RDONLY | O_CLOEXEC), "procfs file");
	add(open("/proc/1/environ", O_PATH | O_CLOEXEC), "/proc/1/environ O_PATH");
	add(open("/sys/kernel", O_PATH | O_CLOEXEC), "sysfs dir");
	add(open("/", O_RDONLY | O_CLOEXEC), "/");
}

static int rand_fd(void)
{
	switch (rnd() % 8) {
	case 0:
		return -1;
	case 1:
		return 1000 + rnd() % 100;		/* closed */
	case 2:
		return (int)rnd();			/* absurd */
	default:
		return pool[rnd() % npool];
	}
}

static uint32_t rand_mask(void)
{
	switch (rnd() % 6) {
	case 0:
		return rnd();
	case 1:
		return 0;
	case 2:
		return 1u << (rnd() % 32);
	default:
		return (rnd() & (IN_ALL_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW |
				 IN_EXCL_UNLINK | IN_MASK_ADD | IN_ISDIR |
				 IN_ONESHOT | IN_MASK_CREATE)) | IN_MODIFY;
	}
}

static char *page;	/* page[0..4095] mapped rw, page[4096..] PROT_NONE */

/* the argument pointer: sometimes bad, sometimes straddling the end */
static void *rand_ptr(size_t want, const void *src)
{
	switch (rnd() % 10) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)(1 + rnd() % 4096);
	case 2:
		return (void *)0xffff880000000000ull;	/* kernel address */
	case 3:
		return page + 4096;			/* PROT_NONE */
	case 4: {
		/* straddles the unmapped page */
		size_t cut = 1 + rnd() % (want ? want : 1);

		memcpy(page + 4096 - cut, src, cut);
		return page + 4096 - cut;
	}
	default:
		memcpy(page + 4096 - 64, src, want);
		return page + 4096 - 64;
	}
}

static int allowed(unsigned long cmd, int e, int bad_ptr)
{
	if (e == EFAULT)
		return bad_ptr;
	switch (cmd) {
	case INOTIFY_WATCH:
		return e == EINVAL || e == EBADF || e == ENOTDIR ||
		       e == EACCES || e == EEXIST || e == ENOSPC;
	case INOTIFY_IGNORE:
		return e == EINVAL;
	case INOTIFY_IOC_SETNEXTWD:	/* EINVAL; ENOTTY without C/R */
		return e == EINVAL || e == ENOTTY;
	case FIONREAD:
		return 0;
	default:
		return e == ENOTTY;
	}
}

static void one(int ifd, const char *kind)
{
	struct inotify_watch_args a;
	unsigned long cmd;
	int32_t wd;
	void *arg;
	int r, e, bad;

	memset(&a, 0, sizeof(a));
	a.fd = rand_fd();
	a.mask = rand_mask();
	if (rnd() % 8 == 0)
		a.flags = rnd() % 3 ? 1u << (rnd() % 32) : rnd();
	if (rnd() % 8 == 0)
		a.reserved[rnd() % 5] = rnd() % 2 ? 1u << (rnd() % 32) : rnd();
	wd = rnd() % 4 ? (int32_t)(rnd() % 64) : (int32_t)rnd();

	switch (rnd() % 10) {
	case 0: case 1: case 2: case 3:
		cmd = INOTIFY_WATCH;
		break;
	case 4: case 5:
		cmd = INOTIFY_IGNORE;
		break;
	case 6:
		cmd = FIONREAD;
		break;
	case 7:
		cmd = INOTIFY_IOC_SETNEXTWD;
		break;
	case 8:	/* near 'I': any direction, nr and size */
		cmd = _IOC(rnd() % 4, 'I', rnd() % 16, rnd() % 64);
		break;
	default:
		cmd = rnd() % 2 ? rnd() : _IOC(rnd() % 4, rnd() % 256, rnd() % 8,
					       sizeof(a));
		break;
	}
	if (cmd == INOTIFY_IOC_SETNEXTWD) {
		/* takes a value, not a pointer */
		arg = (void *)(uintptr_t)(rnd() % 3 ? rnd() % 1000 : rnd());
		bad = 0;
	} else {
		const void *src = cmd == INOTIFY_IGNORE ? (void *)&wd : (void *)&a;

		arg = rand_ptr(cmd == INOTIFY_IGNORE ? sizeof(wd) : sizeof(a), src);
		bad = arg != page + 4096 - 64;
	}
	r = ioctl(ifd, cmd, arg);
	e = errno;
	n_total++;
	if (r >= 0) {
		n_ok++;
		if (cmd == INOTIFY_WATCH && r < 1) {
			printf("FAIL: %s: INOTIFY_WATCH returned wd %d\n", kind, r);
			failed++;
		}
		if (cmd != INOTIFY_WATCH && cmd != INOTIFY_IGNORE &&
		    cmd != FIONREAD && cmd != INOTIFY_IOC_SETNEXTWD) {
			printf("FAIL: %s: unknown ioctl %#lx succeeded\n", kind, cmd);
			failed++;
		}
		return;
	}
	n_err++;
	errcount[e & 255]++;
	if (!allowed(cmd, e, bad)) {
		printf("FAIL: %s: ioctl %#lx fd %d mask %#x flags %#x arg %p: "
		       "errno %d (%s)\n", kind, cmd, a.fd, a.mask, a.flags, arg, e,
		       strerror(e));
		failed++;
	}
}

static int new_instance(int *kind)
{
	static const int oflags[] = { O_RDONLY, O_RDWR, O_RDONLY | O_NONBLOCK };
	int fd;

	*kind = rnd() % 2;
	if (*kind) {
		fd = open("/dev/inotify", oflags[rnd() % 3] | O_CLOEXEC);
		/* this test drains with read(): never block in it */
		if (fd >= 0 && fcntl(fd, F_SETFL, O_NONBLOCK) == 0)
			return fd;
		if (fd >= 0)
			close(fd);
		*kind = 0;
	}
	return syscall(SYS_inotify_init1, IN_CLOEXEC | IN_NONBLOCK);
}

int main(void)
{
	const char *it = getenv("FUZZ_ITERS"), *sd = getenv("FUZZ_SEED");
	const char *dbg = getenv("INOFD_DEBUG_KERNEL");
	/* FUZZ_SECONDS (the soak run) bounds the run by time instead */
	const char *secs_env = getenv("FUZZ_SECONDS");
	long secs = secs_env ? atol(secs_env) : 0;
	time_t deadline = 0;
	/* the debug kernel (KASAN, kmemleak) is about 4x slower per call */
	long iters = it ? atol(it) : (dbg && *dbg == '1') ? 50000 : 200000, i;
	int ifd, kind, e;
	static char buf[65536];

	setvbuf(stdout, NULL, _IOLBF, 0);
	rs = sd ? strtoull(sd, NULL, 0) : (uint64_t)time(NULL) * 2654435761u;
	if (!rs)
		rs = 1;
	if (secs > 0) {
		deadline = time(NULL) + secs;
		if (!it)
			iters = LONG_MAX;
	}
	printf("fuzz_ioctl: seed %#llx (FUZZ_SEED to replay), uid %d, ",
	       (unsigned long long)rs, (int)getuid());
	if (deadline)
		printf("for %ld s\n", secs);
	else
		printf("%ld iterations\n", iters);
	page = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED || mprotect(page + 4096, 4096, PROT_NONE))
		return 1;
	make_pool();
	printf("fuzz_ioctl: %d fds in the pool\n", npool);

	{
		int probe = syscall(SYS_inotify_init1, IN_CLOEXEC);
		struct inotify_watch_args a = { .fd = -1, .mask = IN_MODIFY };

		if (ioctl(probe, INOTIFY_WATCH, &a) == -1 && errno == ENOTTY) {
			printf("fuzz_ioctl: kernel has no INOTIFY_WATCH\n");
			return getenv("REQUIRE_INOTIFY_WATCH") ? 1 : 4;
		}
		close(probe);
	}

	ifd = new_instance(&kind);
	for (i = 0; i < iters && failed < 20; i++) {
		if (deadline && i % 1000 == 0 && time(NULL) >= deadline)
			break;
		if (i % 500 == 499) {
			/* drain, drop the instance and its marks, start over */
			while (read(ifd, buf, sizeof(buf)) > 0)
				;
			close(ifd);
			ifd = new_instance(&kind);
		}
		if (ifd < 0) {
			printf("FAIL: cannot make an instance: %s\n", strerror(errno));
			return 1;
		}
		one(ifd, kind ? "/dev/inotify" : "inotify_init1");
		/* events must still read cleanly */
		if (i % 50 == 0 && read(ifd, buf, sizeof(buf)) < 0 &&
		    errno != EAGAIN) {
			printf("FAIL: read on the instance: %s\n", strerror(errno));
			failed++;
		}
	}
	close(ifd);
	printf("fuzz_ioctl: %ld calls, %ld succeeded, %ld failed:", n_total,
	       n_ok, n_err);
	for (e = 0; e < 256; e++)
		if (errcount[e])
			printf(" %s=%ld", strerrorname_np(e) ? strerrorname_np(e) : "?",
			       errcount[e]);
	printf("\n");
	if (failed) {
		printf("fuzz_ioctl: FAIL (%d unexpected results; seed above)\n",
		       failed);
		return 1;
	}
	printf("fuzz_ioctl: pass\n");
	return 0;
}
