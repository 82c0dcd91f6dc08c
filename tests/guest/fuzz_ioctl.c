// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ioctl: a bounded random test of the ioctl arguments of inotify
 * instances (from inotify_init1() and from /dev/inotify): random fds of
 * every kind in struct inotify_watch_args (files, dirs, O_PATH, symlinks,
 * pipes, sockets, anon inodes, nsfs, devices, closed and absurd numbers),
 * random masks and flags, argument sizes and tails, bad pointers, and
 * random ioctl numbers near 'I'.  Pass = no crash (the harness checks the
 * kernel log) and every result is the one the documented rules predict for
 * its input (expect_watch(): the errno of the first rule that applies, in
 * the kernel's order, or success).  Where the rules leave a choice (a
 * watch that IN_ONESHOT or INOTIFY_IOC_IGNORE may have removed) the oracle
 * allows exactly those outcomes.
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

/* what the oracle needs to know about each fd of the pool */
enum kind {
	K_FILE,		/* an object INOTIFY_IOC_WATCH accepts, not a directory */
	K_DIR,		/* a directory */
	K_REFUSED,	/* an anon inode or nsfs: EINVAL */
};

static int pool[64], npool;
static const char *pool_what[64];
static enum kind pool_kind[64];
static int pool_denied[64];	/* the object is not readable: EACCES */
static int pool_ino[64];	/* index of the first pool fd of the inode */
static int watched[64];		/* per instance: pool_ino may be watched */
static int is_root;
static int failed;
static long n_ok, n_err, n_total;
static long errcount[256];

/*
 * @denied_user: the object is not readable by an unprivileged caller,
 * whatever the fd was opened for (EACCES for uid != 0, not for root).
 */
static void add_kind(int fd, const char *what, enum kind kind, int denied_user)
{
	struct stat st, o;
	int i;

	if (fd < 0 || npool >= (int)ARRAY_SIZE(pool) || fstat(fd, &st))
		return;
	pool_what[npool] = what;
	pool_kind[npool] = kind;
	pool_denied[npool] = denied_user && !is_root;
	pool_ino[npool] = npool;
	for (i = 0; i < npool; i++)
		if (fstat(pool[i], &o) == 0 && o.st_dev == st.st_dev &&
		    o.st_ino == st.st_ino) {
			pool_ino[npool] = pool_ino[i];
			break;
		}
	pool[npool++] = fd;
}

static void add(int fd, const char *what)
{
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0)
		add_kind(fd, what, S_ISDIR(st.st_mode) ? K_DIR : K_FILE, 0);
}

static void add_refused(int fd, const char *what)
{
	add_kind(fd, what, K_REFUSED, 0);
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
	add_kind(fd, "ro file chmod 000", K_FILE, 1);
	add_kind(open("file000", O_PATH | O_CLOEXEC), "O_PATH chmod 000",
		 K_FILE, 1);
	add_kind(open("file000", O_WRONLY | O_CLOEXEC), "wo file chmod 000",
		 K_FILE, 1);
	if (pipe2(p, O_CLOEXEC) == 0) {
		add(p[0], "pipe r");
		add(p[1], "pipe w");
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0) {
		add(sv[0], "socket");
		add(sv[1], "socket");
	}
	add_refused(eventfd(0, EFD_CLOEXEC), "eventfd");
	add_refused(epoll_create1(EPOLL_CLOEXEC), "epoll");
	add_refused(timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), "timerfd");
	sigemptyset(&ss);
	add_refused(signalfd(-1, &ss, SFD_CLOEXEC), "signalfd");
	add_refused(syscall(SYS_inotify_init1, IN_CLOEXEC), "inotify");
	add_refused(open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC), "nsfs");
	add_refused(syscall(SYS_memfd_create, "fz", 1u), "memfd");
	add(open(".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600), "O_TMPFILE");
	add(open("/dev/null", O_RDWR | O_CLOEXEC), "/dev/null");
	add(open("/dev/inotify", O_RDONLY | O_CLOEXEC), "/dev/inotify instance");
	add(open("/dev", O_PATH | O_CLOEXEC), "/dev");
	add(open("/proc/self/status", O_RDONLY | O_CLOEXEC), "procfs file");
	add_kind(open("/proc/1/environ", O_PATH | O_CLOEXEC),
		 "/proc/1/environ O_PATH", K_FILE, 1);
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
	case 3:		/* flags only, or IN_UNMOUNT and flags */
		return rnd() & (IN_UNMOUNT | IN_ONLYDIR | IN_DONT_FOLLOW |
				IN_EXCL_UNLINK | IN_MASK_ADD | IN_ONESHOT |
				IN_MASK_CREATE);
	default:
		return (rnd() & (IN_ALL_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW |
				 IN_EXCL_UNLINK | IN_MASK_ADD | IN_ISDIR |
				 IN_ONESHOT | IN_MASK_CREATE | IN_UNMOUNT)) |
		       IN_MODIFY;
	}
}

/* the results the documented rules allow: bit 0 success, bit e errno e */
#define RES_OK	(1ull << 0)
#define RES_E(e)	(1ull << (e))

static int pool_index(int fd)
{
	int i;

	for (i = 0; i < npool; i++)
		if (pool[i] == fd)
			return i;
	return -1;
}

/*
 * INOTIFY_IOC_WATCH with an argument of @size bytes at a pointer of which the
 * first @mapped bytes are readable; @buf holds what those bytes would be.
 * The rules of include-uapi/linux/inotify.h, in the kernel's order.
 */
static uint64_t expect_watch(const unsigned char *buf, unsigned int size,
			     unsigned int mapped)
{
	const uint32_t events = IN_ALL_EVENTS | IN_UNMOUNT;
	const uint32_t flags = IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK |
			       IN_MASK_ADD | IN_MASK_CREATE | IN_ONESHOT;
	struct inotify_watch_args a;
	unsigned int k, end;
	int i;

	/* not the command (extensible_ioctl_valid()'s rule) */
	if (size < INOTIFY_WATCH_ARGS_SIZE_VER0)
		return RES_E(ENOTTY);
	/* copy_struct_from_user(): the unknown tail first, then the struct */
	end = mapped < size ? mapped : size;
	for (k = 16; k < end; k++)
		if (buf[k])
			return RES_E(E2BIG);
	if (mapped < size)
		return RES_E(EFAULT);
	memcpy(&a, buf, sizeof(a));
	if (a.flags)
		return RES_E(EINVAL);
	if (a.mask & ~(events | flags))
		return RES_E(EINVAL);
	if (!a.mask)
		return RES_E(EINVAL);
	if ((a.mask & IN_MASK_ADD) && (a.mask & IN_MASK_CREATE))
		return RES_E(EINVAL);
	i = pool_index(a.fd);
	if (i < 0) {
		if (fcntl(a.fd, F_GETFD) < 0)
			return RES_E(EBADF);
		/* open but not ours (stdio, an instance): any documented rule */
		return RES_OK | RES_E(EINVAL) | RES_E(ENOTDIR) | RES_E(EACCES) |
		       RES_E(EEXIST);
	}
	if (pool_kind[i] == K_REFUSED)
		return RES_E(EINVAL);
	if ((a.mask & IN_ONLYDIR) && pool_kind[i] != K_DIR)
		return RES_E(ENOTDIR);
	if (pool_denied[i])
		return RES_E(EACCES);
	/* IN_ONESHOT and INOTIFY_IOC_IGNORE may have removed an earlier watch */
	if ((a.mask & IN_MASK_CREATE) && watched[pool_ino[i]])
		return RES_OK | RES_E(EEXIST);
	return RES_OK;
}

static char *page;	/* page[0..4095] mapped rw, page[4096..] PROT_NONE */

/*
 * The argument pointer: sometimes bad, sometimes straddling the end of the
 * mapped page.  *mapped gets how many of its bytes are readable.
 */
static void *rand_ptr(size_t want, const void *src, unsigned int *mapped)
{
	*mapped = 0;
	switch (rnd() % 10) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)(1 + rnd() % 4096);
	case 2:
		/* above the task's address space (a 32-bit task's ends below 4G) */
		return (void *)(uintptr_t)(sizeof(void *) == 8 ?
			0xffff880000000000ull : 0xfffff000ul);
	case 3:
		return page + 4096;			/* PROT_NONE */
	case 4: {
		/* straddles the unmapped page */
		size_t cut = 1 + rnd() % (want ? want : 1);

		memcpy(page + 4096 - cut, src, cut);
		*mapped = cut;
		return page + 4096 - cut;
	}
	default:
		memcpy(page + 4096 - 64, src, want);
		*mapped = 64;
		return page + 4096 - 64;
	}
}

static const char *rname(uint64_t set)
{
	static char buf[256];
	size_t n = 0;
	int e;

	buf[0] = 0;
	for (e = 0; e < 64; e++)
		if (set & (1ull << e))
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s",
				      n ? "|" : "",
				      e ? (strerrorname_np(e) ?: "?") : "ok");
	return buf;
}

/* the inode of @fd is watched by the instance (maybe through stdin) */
static void mark_watched(int fd)
{
	struct stat st, o;
	int i = pool_index(fd);

	if (i >= 0) {
		watched[pool_ino[i]] = 1;
		return;
	}
	if (fstat(fd, &st))
		return;
	for (i = 0; i < npool; i++)
		if (fstat(pool[i], &o) == 0 && o.st_dev == st.st_dev &&
		    o.st_ino == st.st_ino)
			watched[pool_ino[i]] = 1;
}

static void one(int ifd, const char *kind)
{
	unsigned char buf[64];
	struct inotify_watch_args a;
	unsigned int size = 0, mapped, n;
	unsigned long cmd;
	uint64_t expect;
	int32_t wd;
	void *arg;
	int r, e;

	memset(&a, 0, sizeof(a));
	a.fd = rand_fd();
	a.mask = rand_mask();
	if (rnd() % 8 == 0)
		a.flags = rnd() % 3 ? 1ull << (rnd() % 64) :
			  ((uint64_t)rnd() << 32 | rnd());
	memset(buf, 0, sizeof(buf));
	memcpy(buf, &a, sizeof(a));
	if (rnd() % 8 == 0)	/* a non-zero byte in a newer struct's tail */
		buf[16 + rnd() % 48] = 1 + rnd() % 255;
	wd = rnd() % 4 ? (int32_t)(rnd() % 64) : (int32_t)rnd();

	switch (rnd() % 10) {
	case 0: case 1: case 2: case 3:
		/* mostly the size of this header, sometimes older or newer */
		size = rnd() % 3 ? sizeof(a) : rnd() % 65;
		cmd = _IOC(_IOC_WRITE, 'I', 1, size);
		break;
	case 4: case 5:
		cmd = INOTIFY_IOC_IGNORE;
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
	cmd &= 0xffffffffu;	/* the kernel takes an unsigned int */

	if (cmd == INOTIFY_IOC_SETNEXTWD) {
		/* takes a value, not a pointer; ENOTTY without C/R */
		unsigned long v = rnd() % 3 ? rnd() % 1000 : rnd();

		arg = (void *)(uintptr_t)v;
		expect = RES_E(ENOTTY) |
			 (v >= 1 && v <= INT_MAX ? RES_OK : RES_E(EINVAL));
	} else if (_IOC_TYPE(cmd) == 'I' && _IOC_NR(cmd) == 1 &&
		   _IOC_DIR(cmd) == _IOC_WRITE) {
		size = _IOC_SIZE(cmd);
		n = size < sizeof(buf) ? size : sizeof(buf);
		/* at most 64 bytes are mapped: a larger size faults */
		arg = rand_ptr(n, buf, &mapped);
		expect = expect_watch(buf, size, mapped < size ? mapped : size);
	} else if (cmd == INOTIFY_IOC_IGNORE) {
		arg = rand_ptr(sizeof(wd), &wd, &mapped);
		expect = mapped < sizeof(wd) ? RES_E(EFAULT) : RES_OK | RES_E(EINVAL);
	} else if (cmd == FIONREAD) {
		arg = rand_ptr(sizeof(int), &wd, &mapped);
		expect = mapped < sizeof(int) ? RES_E(EFAULT) : RES_OK;
	} else {
		arg = rand_ptr(sizeof(a), &a, &mapped);
		expect = RES_E(ENOTTY);
	}
	r = ioctl(ifd, cmd, arg);
	e = r < 0 ? errno : 0;
	n_total++;
	if (r >= 0)
		n_ok++;
	else
		errcount[e & 255]++, n_err++;
	if (r >= 0 && _IOC_NR(cmd) == 1 && cmd != INOTIFY_IOC_SETNEXTWD &&
	    r < 1) {
		printf("FAIL: %s: INOTIFY_IOC_WATCH returned wd %d\n", kind, r);
		failed++;
	}
	if (!(expect & (r >= 0 ? RES_OK : RES_E(e & 63))) || (r < 0 && e > 63)) {
		printf("FAIL: %s: ioctl %#lx fd %d (%s) mask %#x flags %#llx "
		       "size %u mapped %u: %s, expected %s\n", kind, cmd, a.fd,
		       pool_index(a.fd) >= 0 ? pool_what[pool_index(a.fd)] : "-",
		       a.mask, (unsigned long long)a.flags, size, mapped,
		       r >= 0 ? "ok" : strerrorname_np(e), rname(expect));
		failed++;
	}
	/* a watch made: IN_MASK_CREATE on it may give EEXIST from now on */
	if (r >= 1 && _IOC_NR(cmd) == 1 && _IOC_TYPE(cmd) == 'I')
		mark_watched(a.fd);
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
	is_root = geteuid() == 0;
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

		if (ioctl(probe, INOTIFY_IOC_WATCH, &a) == -1 && errno == ENOTTY) {
			printf("fuzz_ioctl: kernel has no INOTIFY_IOC_WATCH\n");
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
			memset(watched, 0, sizeof(watched));
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
