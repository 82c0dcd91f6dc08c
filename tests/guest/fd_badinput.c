// SPDX-License-Identifier: GPL-2.0
/*
 * fd_badinput: every bad input of INOTIFY_IOC_WATCH, INOTIFY_IOC_IGNORE and
 * /dev/inotify, with the errno it must give, one line per row; and the
 * stock inotify system calls and ioctls, which must behave as before.
 *
 * Exit 0 when every row passed, 1 when one failed, 4 (skip) when the
 * kernel has no INOTIFY_IOC_WATCH, unless REQUIRE_INOTIFY_WATCH=1 is set in
 * the environment, in which case its absence fails the run.
 *
 * <linux/inotify.h> is the project's copy (-I include-uapi); glibc's
 * <sys/inotify.h> cannot be included with it, so the inotify system calls
 * are made with syscall(2).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
/*
 * <linux/inotify.h> includes <linux/fcntl.h>, whose struct flock clashes
 * with glibc's <fcntl.h>; glibc has the O_* constants it needs.
 */
#define _LINUX_FCNTL_H
#include <linux/inotify.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static int failed, passed, skipped;
static int is_root;
static char dir[256];
static char file_rw[300], file_000[300], file_200[300];

static int sys_init1(int flags)
{
	return syscall(SYS_inotify_init1, flags);
}

static int sys_add(int ifd, const char *path, unsigned int mask)
{
	return syscall(SYS_inotify_add_watch, ifd, path, mask);
}

static int sys_rm(int ifd, int wd)
{
	return syscall(SYS_inotify_rm_watch, ifd, wd);
}

/* the result of a call as one number: >= 0 on success, -errno on error */
static int res(long ret)
{
	return ret < 0 ? -errno : (int)ret;
}

static const char *ename(int e)
{
	static char buf[32];

	switch (e) {
	case 0: return "success";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case ENOTDIR: return "ENOTDIR";
	case EACCES: return "EACCES";
	case EEXIST: return "EEXIST";
	case ENOSPC: return "ENOSPC";
	case EMFILE: return "EMFILE";
	case ENOENT: return "ENOENT";
	case ENOTTY: return "ENOTTY";
	case EAGAIN: return "EAGAIN";
	case E2BIG: return "E2BIG";
	case ESPIPE: return "ESPIPE";
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

/*
 * Report one row.  @expect is an errno, or 0 for success (any result
 * >= 0); @got is what res() returned.
 */
static void row(const char *group, const char *name, int expect, int got)
{
	int ok = expect ? got == -expect : got >= 0;

	printf("%-4s %-9s %-48s expected %-8s got %s\n", ok ? "ok" : "FAIL",
	       group, name, ename(expect), ename(got < 0 ? -got : 0));
	if (ok)
		passed++;
	else
		failed++;
}

static void skip_row(const char *group, const char *name, const char *why)
{
	printf("%-4s %-9s %-48s %s\n", "skip", group, name, why);
	skipped++;
}

static void make_file(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	if (fd >= 0)
		close(fd);
	chmod(path, mode);
}

/* ------------------------------------------------------------ INOTIFY_IOC_WATCH */

enum fd_kind {
	FD_DIR, FD_FILE, FD_OPATH_FILE, FD_OPATH_DIR, FD_NEG, FD_CLOSED,
	FD_HUGE, FD_EVENTFD, FD_EPOLL, FD_TIMERFD, FD_SIGNALFD, FD_INOTIFY,
	FD_SELF, FD_OPATH_000, FD_RDONLY_000, FD_WRONLY_200, FD_PIPE,
	FD_PIPE_W, FD_SOCKET, FD_SOCKETPAIR, FD_NSFS, FD_MEMFD, FD_TMPFILE,
	FD_OPATH_SYMLINK, FD_DEVNULL, FD_WRONLY_RW,
};

enum who { ANY, USER_ONLY };

struct watch_row {
	const char *name;
	enum fd_kind fd;
	unsigned int mask;
	unsigned long long flags;
	int expect;		/* errno, or 0 for success */
	enum who who;		/* USER_ONLY: root bypasses the check */
};

/* the errno table of INOTIFY_IOC_WATCH (include-uapi/linux/inotify.h) */
static const struct watch_row watch_rows[] = {
	{ "negative fd", FD_NEG, IN_MODIFY, 0, EBADF, ANY },
	{ "closed fd", FD_CLOSED, IN_MODIFY, 0, EBADF, ANY },
	{ "fd INT_MAX", FD_HUGE, IN_MODIFY, 0, EBADF, ANY },
	{ "flags = 1", FD_DIR, IN_MODIFY, 1, EINVAL, ANY },
	{ "flags = 1 << 31", FD_DIR, IN_MODIFY, 1ULL << 31, EINVAL, ANY },
	{ "flags = 1 << 32", FD_DIR, IN_MODIFY, 1ULL << 32, EINVAL, ANY },
	{ "flags = 1 << 63", FD_DIR, IN_MODIFY, 1ULL << 63, EINVAL, ANY },
	{ "empty mask", FD_DIR, 0, 0, EINVAL, ANY },
	{ "unknown bit 0x1000", FD_DIR, IN_MODIFY | 0x1000, 0, EINVAL, ANY },
	{ "unknown bit 0x08000000", FD_DIR, IN_MODIFY | 0x08000000, 0, EINVAL, ANY },
	{ "unknown bit 0x00010000", FD_DIR, IN_MODIFY | 0x00010000, 0, EINVAL, ANY },
	{ "output bit IN_ISDIR", FD_DIR, IN_MODIFY | IN_ISDIR, 0, EINVAL, ANY },
	{ "output bit IN_Q_OVERFLOW", FD_DIR, IN_MODIFY | IN_Q_OVERFLOW, 0, EINVAL, ANY },
	{ "output bit IN_IGNORED", FD_DIR, IN_MODIFY | IN_IGNORED, 0, EINVAL, ANY },
	{ "IN_MASK_ADD | IN_MASK_CREATE", FD_DIR,
	  IN_MODIFY | IN_MASK_ADD | IN_MASK_CREATE, 0, EINVAL, ANY },
	{ "IN_MASK_ADD | IN_MASK_CREATE, no event", FD_DIR,
	  IN_MASK_ADD | IN_MASK_CREATE, 0, EINVAL, ANY },
	{ "IN_ONLYDIR on a file", FD_FILE, IN_MODIFY | IN_ONLYDIR, 0, ENOTDIR, ANY },
	{ "IN_ONLYDIR on an O_PATH file", FD_OPATH_FILE, IN_MODIFY | IN_ONLYDIR,
	  0, ENOTDIR, ANY },
	/* pseudo files: anon inodes (one inode shared by most), nsfs (pins the
	 * namespace), memfd (no name in any mount) */
	{ "eventfd (anon inode)", FD_EVENTFD, IN_ACCESS, 0, EINVAL, ANY },
	{ "epoll (anon inode)", FD_EPOLL, IN_ACCESS, 0, EINVAL, ANY },
	{ "timerfd (anon inode)", FD_TIMERFD, IN_ACCESS, 0, EINVAL, ANY },
	{ "signalfd (anon inode)", FD_SIGNALFD, IN_ACCESS, 0, EINVAL, ANY },
	{ "another inotify (anon inode)", FD_INOTIFY, IN_ACCESS, 0, EINVAL, ANY },
	{ "the instance itself (anon inode)", FD_SELF, IN_ACCESS, 0, EINVAL, ANY },
	{ "/proc/self/ns/mnt (nsfs)", FD_NSFS, IN_ACCESS, 0, EINVAL, ANY },
	{ "IN_UNMOUNT alone on nsfs", FD_NSFS, IN_UNMOUNT, 0, EINVAL, ANY },
	{ "memfd (shmem's internal mount)", FD_MEMFD, IN_MODIFY, 0, EINVAL, ANY },
	/* the access rule: MAY_READ on the object, whatever the fd */
	{ "O_PATH to a mode 0000 file", FD_OPATH_000, IN_MODIFY, 0, EACCES, USER_ONLY },
	{ "O_WRONLY to a mode 0200 file", FD_WRONLY_200, IN_MODIFY, 0, EACCES, USER_ONLY },
	{ "O_RDONLY file, mode 0000 since", FD_RDONLY_000, IN_MODIFY, 0, EACCES, USER_ONLY },
	/* rows that must succeed, as a reference for the ones above */
	{ "O_PATH directory", FD_OPATH_DIR, IN_CREATE | IN_ONLYDIR, 0, 0, ANY },
	{ "O_PATH to a readable file", FD_OPATH_FILE, IN_MODIFY, 0, 0, ANY },
	{ "O_WRONLY to a readable file", FD_WRONLY_RW, IN_MODIFY, 0, 0, ANY },
	{ "flags only (replaces the events by none)", FD_DIR,
	  IN_ONLYDIR | IN_ONESHOT, 0, 0, ANY },
	{ "IN_EXCL_UNLINK alone (no IN_MASK_ADD)", FD_DIR, IN_EXCL_UNLINK, 0, 0, ANY },
	{ "IN_UNMOUNT alone", FD_DIR, IN_UNMOUNT, 0, 0, ANY },
	{ "IN_UNMOUNT with an event", FD_DIR, IN_UNMOUNT | IN_CREATE, 0, 0, ANY },
	{ "IN_MASK_ADD | IN_EXCL_UNLINK, no event (new)", FD_DIR,
	  IN_MASK_ADD | IN_EXCL_UNLINK, 0, 0, ANY },
	{ "IN_MASK_ADD alone (new)", FD_OPATH_DIR, IN_MASK_ADD, 0, 0, ANY },
	{ "O_PATH | O_NOFOLLOW symlink", FD_OPATH_SYMLINK, IN_ATTRIB, 0, 0, ANY },
	/* IN_DONT_FOLLOW taken, no effect: FAN_MARK_DONT_FOLLOW with an fd */
	{ "IN_DONT_FOLLOW on a file", FD_FILE, IN_MODIFY | IN_DONT_FOLLOW, 0, 0, ANY },
	{ "IN_DONT_FOLLOW on an O_PATH symlink", FD_OPATH_SYMLINK,
	  IN_ATTRIB | IN_DONT_FOLLOW, 0, 0, ANY },
	{ "IN_DONT_FOLLOW | IN_MASK_ADD, no event (new)", FD_DIR,
	  IN_DONT_FOLLOW | IN_MASK_ADD, 0, 0, ANY },
	{ "O_TMPFILE file", FD_TMPFILE, IN_MODIFY, 0, 0, ANY },
	{ "/dev/null (device node)", FD_DEVNULL, IN_ACCESS, 0, 0, ANY },
	/* pipes and sockets, as through a /proc/self/fd path watch */
	{ "pipe read end (pipefs)", FD_PIPE, IN_MODIFY, 0, 0, ANY },
	{ "pipe write end (pipefs)", FD_PIPE_W, IN_MODIFY, 0, 0, ANY },
	{ "unix socket (sockfs)", FD_SOCKET, IN_MODIFY, 0, 0, ANY },
	{ "socketpair end (sockfs)", FD_SOCKETPAIR, IN_MODIFY, 0, 0, ANY },
	{ "IN_UNMOUNT alone on a pipe (pipefs)", FD_PIPE, IN_UNMOUNT, 0, 0, ANY },
};

/* make the descriptor a row asks for; *extra gets a second fd to close */
static int make_fd(enum fd_kind kind, int ifd, int *extra)
{
	sigset_t set;
	int fd, p[2];
	char path[300];

	*extra = -1;
	switch (kind) {
	case FD_DIR: return open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	case FD_FILE: return open(file_rw, O_RDONLY | O_CLOEXEC);
	case FD_OPATH_FILE: return open(file_rw, O_PATH | O_CLOEXEC);
	case FD_OPATH_DIR: return open(dir, O_PATH | O_CLOEXEC);
	case FD_NEG: return -1;
	case FD_HUGE: return INT_MAX;
	case FD_CLOSED:
		fd = open(dir, O_PATH | O_CLOEXEC);
		close(fd);
		return fd;
	case FD_EVENTFD: return eventfd(0, EFD_CLOEXEC);
	case FD_EPOLL: return epoll_create1(EPOLL_CLOEXEC);
	case FD_TIMERFD: return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	case FD_SIGNALFD:
		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		return signalfd(-1, &set, SFD_CLOEXEC);
	case FD_INOTIFY: return sys_init1(IN_CLOEXEC);
	case FD_SELF: return ifd;
	case FD_OPATH_000: return open(file_000, O_PATH | O_CLOEXEC);
	case FD_RDONLY_000:
		fd = open(file_rw, O_RDONLY | O_CLOEXEC);
		chmod(file_rw, 0);
		return fd;
	case FD_WRONLY_200: return open(file_200, O_WRONLY | O_CLOEXEC);
	case FD_PIPE:
		if (pipe2(p, O_CLOEXEC))
			return -2;
		*extra = p[1];
		return p[0];
	case FD_PIPE_W:
		if (pipe2(p, O_CLOEXEC))
			return -2;
		*extra = p[0];
		return p[1];
	case FD_SOCKET:
		return socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	case FD_SOCKETPAIR:
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p))
			return -2;
		*extra = p[1];
		return p[0];
	case FD_NSFS: return open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	case FD_MEMFD: return syscall(SYS_memfd_create, "fd_badinput", 1u);
	case FD_TMPFILE: return open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	case FD_OPATH_SYMLINK:
		snprintf(path, sizeof(path), "%s/link", dir);
		return open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	case FD_DEVNULL: return open("/dev/null", O_RDONLY | O_CLOEXEC);
	case FD_WRONLY_RW: return open(file_rw, O_WRONLY | O_CLOEXEC);
	}
	return -2;
}

static void watch_table(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(watch_rows); i++) {
		const struct watch_row *r = &watch_rows[i];
		struct inotify_watch_args args = { 0 };
		int ifd, fd, extra, got;

		if (r->who == USER_ONLY && is_root) {
			skip_row("WATCH", r->name, "(root bypasses the check)");
			continue;
		}
		ifd = sys_init1(IN_CLOEXEC);
		fd = make_fd(r->fd, ifd, &extra);
		if (fd == -2 || (fd == -1 && r->fd != FD_NEG)) {
			printf("FAIL WATCH     %-48s cannot set up: %s\n",
			       r->name, strerror(errno));
			failed++;
			close(ifd);
			continue;
		}
		args.fd = fd;
		args.mask = r->mask;
		args.flags = r->flags;
		got = res(ioctl(ifd, INOTIFY_IOC_WATCH, &args));
		row("WATCH", r->name, r->expect, got);

		if (r->fd == FD_RDONLY_000)
			chmod(file_rw, 0644);
		if (fd >= 0 && fd != INT_MAX && fd != ifd &&
		    r->fd != FD_CLOSED)
			close(fd);
		if (extra >= 0)
			close(extra);
		close(ifd);
	}
}

/*
 * A pipe watched by its read end: a write is IN_MODIFY and a read
 * IN_ACCESS, on the one watch of both ends, as through /proc/self/fd.
 * Reported as EINVAL when an event is missing or different.
 */
static void watch_pipe_events(void)
{
	struct inotify_watch_args args = { .mask = IN_MODIFY | IN_ACCESS };
	union {
		struct inotify_event ev;
		char buf[256];
	} u;
	int ifd, p[2], wd, got;
	ssize_t len;
	char c;

	ifd = sys_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ifd < 0 || pipe2(p, O_CLOEXEC)) {
		row("WATCH", "pipe: set up", 0, -errno);
		return;
	}
	args.fd = p[0];
	wd = res(ioctl(ifd, INOTIFY_IOC_WATCH, &args));
	row("WATCH", "pipe: watch by the read end", 0, wd);
	args.fd = p[1];
	got = res(ioctl(ifd, INOTIFY_IOC_WATCH, &args));
	row("WATCH", "pipe: the write end has the same wd", 0,
	    got == wd ? 0 : -EINVAL);
	if (write(p[1], "x", 1) != 1)
		got = -errno;
	else if ((len = read(ifd, u.buf, sizeof(u.buf))) < 0)
		got = -errno;
	else
		got = len == sizeof(u.ev) && u.ev.wd == wd &&
		      u.ev.mask == IN_MODIFY ? 0 : -EINVAL;
	row("WATCH", "pipe: a write gives IN_MODIFY", 0, got);
	if (read(p[0], &c, 1) != 1)
		got = -errno;
	else if ((len = read(ifd, u.buf, sizeof(u.buf))) < 0)
		got = -errno;
	else
		got = len == sizeof(u.ev) && u.ev.wd == wd &&
		      u.ev.mask == IN_ACCESS ? 0 : -EINVAL;
	row("WATCH", "pipe: a read gives IN_ACCESS", 0, got);
	close(p[0]);
	close(p[1]);
	close(ifd);
}

static void watch_misc(void)
{
	struct inotify_watch_args args = { .mask = IN_CREATE };
	long pagesz = sysconf(_SC_PAGESIZE);
	int ifd, fd, wd, first;
	char *page;

	ifd = sys_init1(IN_CLOEXEC);

	row("WATCH", "NULL argument", EFAULT,
	    res(ioctl(ifd, INOTIFY_IOC_WATCH, NULL)));
	row("WATCH", "argument pointer -1", EFAULT,
	    res(ioctl(ifd, INOTIFY_IOC_WATCH, (void *)-1L)));
	page = mmap(NULL, 2 * pagesz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page != MAP_FAILED) {
		munmap(page + pagesz, pagesz);
		row("WATCH", "argument crosses into an unmapped page", EFAULT,
		    res(ioctl(ifd, INOTIFY_IOC_WATCH, page + pagesz - 8)));
		munmap(page, pagesz);
	}

	/* IN_MASK_CREATE on an existing watch, by fd then by path */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	args.fd = fd;
	args.mask = IN_CREATE | IN_MASK_CREATE;
	first = res(ioctl(ifd, INOTIFY_IOC_WATCH, &args));
	row("WATCH", "IN_MASK_CREATE, new watch", 0, first);
	row("WATCH", "IN_MASK_CREATE, existing watch", EEXIST,
	    res(ioctl(ifd, INOTIFY_IOC_WATCH, &args)));
	row("add_watch", "IN_MASK_CREATE, existing fd watch", EEXIST,
	    res(sys_add(ifd, dir, IN_CREATE | IN_MASK_CREATE)));

	/* a flag-only update with IN_MASK_ADD keeps the watch, both ways */
	args.mask = IN_MASK_ADD | IN_EXCL_UNLINK;
	wd = res(ioctl(ifd, INOTIFY_IOC_WATCH, &args));
	row("WATCH", "IN_MASK_ADD flag-only update: same wd", 0,
	    wd < 0 ? wd : wd == first ? 0 : -EINVAL);
	row("add_watch", "IN_MASK_ADD flag-only update: same wd", 0,
	    res(sys_add(ifd, dir, IN_MASK_ADD | IN_ONESHOT)) == first ?
	    0 : -EINVAL);

	/* the ioctls are inotify's: other files do not know them */
	args.mask = IN_CREATE;
	row("WATCH", "ioctl on a directory fd", ENOTTY,
	    res(ioctl(fd, INOTIFY_IOC_WATCH, &args)));
	close(fd);
	close(ifd);
}

/* INOTIFY_IOC_WATCH with an argument of @size bytes */
static int watch_sized(int ifd, const void *arg, unsigned int size)
{
	return res(ioctl(ifd, _IOC(_IOC_WRITE, 'I', 1, size), arg));
}

/*
 * The argument is size-versioned: the size is in the command, below the
 * first version is EINVAL, a larger struct is accepted with a zero tail
 * and refused with E2BIG otherwise.
 */
static void size_rows(void)
{
	struct {
		struct inotify_watch_args a;
		unsigned char tail[48];
	} big;
	long pagesz = sysconf(_SC_PAGESIZE);
	int ifd, fd, wd;
	char *page;

	row("size", "sizeof(struct inotify_watch_args) == 16", 0,
	    sizeof(struct inotify_watch_args) == 16 &&
	    INOTIFY_WATCH_ARGS_SIZE_VER0 == 16 ? 0 : -EINVAL);
	row("size", "INOTIFY_IOC_WATCH encodes size 16", 0,
	    _IOC_SIZE(INOTIFY_IOC_WATCH) == 16 ? 0 : -EINVAL);
	ifd = sys_init1(IN_CLOEXEC);
	fd = open(dir, O_PATH | O_CLOEXEC);
	memset(&big, 0, sizeof(big));
	big.a.fd = fd;
	big.a.mask = IN_CREATE;
	row("size", "size 0", ENOTTY, watch_sized(ifd, &big, 0));
	row("size", "size 4 (fd only)", ENOTTY, watch_sized(ifd, &big, 4));
	row("size", "size 8 (no flags)", ENOTTY, watch_sized(ifd, &big, 8));
	row("size", "size 15", ENOTTY, watch_sized(ifd, &big, 15));
	wd = watch_sized(ifd, &big, 16);
	row("size", "size 16 (VER0)", 0, wd);
	row("size", "size 24, zero tail: same wd", 0,
	    watch_sized(ifd, &big, 24) == wd ? 0 : -EINVAL);
	row("size", "size 64, zero tail: same wd", 0,
	    watch_sized(ifd, &big, sizeof(big)) == wd ? 0 : -EINVAL);
	big.tail[0] = 1;
	row("size", "size 24, tail byte 16 set", E2BIG,
	    watch_sized(ifd, &big, 24));
	big.tail[0] = 0;
	big.tail[sizeof(big.tail) - 1] = 0x80;
	row("size", "size 64, last byte set", E2BIG,
	    watch_sized(ifd, &big, sizeof(big)));
	row("size", "size 63, last byte set but not passed", 0,
	    watch_sized(ifd, &big, sizeof(big) - 1));
	big.tail[sizeof(big.tail) - 1] = 0;
	big.a.flags = 1;
	row("size", "size 64, flags = 1", EINVAL,
	    watch_sized(ifd, &big, sizeof(big)));
	big.a.flags = 0;
	row("size", "size 16383 (largest), tail beyond the buffer", EFAULT,
	    res(ioctl(ifd, _IOC(_IOC_WRITE, 'I', 1, _IOC_SIZEMASK),
		      (void *)-4096L)));
	page = mmap(NULL, 2 * pagesz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page != MAP_FAILED) {
		munmap(page + pagesz, pagesz);
		memcpy(page + pagesz - 16, &big.a, 16);
		row("size", "size 16 at the end of a page", 0,
		    watch_sized(ifd, page + pagesz - 16, 16));
		row("size", "size 24, tail in an unmapped page", EFAULT,
		    watch_sized(ifd, page + pagesz - 16, 24));
		munmap(page, pagesz);
	}
	row("size", "_IOWR('I', 1, 16) is not INOTIFY_IOC_WATCH", ENOTTY,
	    res(ioctl(ifd, _IOC(_IOC_READ | _IOC_WRITE, 'I', 1, 16), &big)));
	row("size", "_IOR('I', 1, 16) is not INOTIFY_IOC_WATCH", ENOTTY,
	    res(ioctl(ifd, _IOC(_IOC_READ, 'I', 1, 16), &big)));
	row("size", "_IO('I', 1) is not INOTIFY_IOC_WATCH", ENOTTY,
	    res(ioctl(ifd, _IOC(_IOC_NONE, 'I', 1, 0), &big)));
	close(fd);
	close(ifd);
}

/*
 * As a user, the limit cannot be lowered: when it is small enough, fill
 * it with watches by fd, one file each, and check the next one fails
 * with ENOSPC.  Nothing else of this user watches anything in the guest.
 */
static void watch_limit_user(const char *knob)
{
	struct inotify_watch_args args = { .mask = IN_MODIFY };
	const char *name = "max_user_watches reached by fd -> ENOSPC";
	int ifd, fd, i, limit = -1, got = 0;
	char path[300];
	FILE *f;

	f = fopen(knob, "r");
	if (f) {
		if (fscanf(f, "%d", &limit) != 1)
			limit = -1;
		fclose(f);
	}
	if (limit < 1 || limit > 20000) {
		skip_row("limits", name, "(limit too large to fill)");
		return;
	}
	ifd = sys_init1(IN_CLOEXEC);
	for (i = 0; i <= limit; i++) {
		snprintf(path, sizeof(path), "%s/u%d", dir, i);
		fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			got = -errno;
			break;
		}
		args.fd = fd;
		got = res(ioctl(ifd, INOTIFY_IOC_WATCH, &args));
		close(fd);
		if (got < 0)
			break;
	}
	printf("     limits    %d watches added, limit %d\n", i, limit);
	row("limits", name, ENOSPC, i <= limit ? got : 0);
	close(ifd);
}

/* max_user_watches: lower it (root only) and check ENOSPC both ways */
static void watch_limit(void)
{
	const char *knob = "/proc/sys/fs/inotify/max_user_watches";
	struct inotify_watch_args args = { .mask = IN_MODIFY };
	char old[32] = "", path[300];
	int ifd, fd, i, wd, got;
	FILE *f;

	if (!is_root) {
		watch_limit_user(knob);
		return;
	}
	f = fopen(knob, "r");
	if (!f || !fgets(old, sizeof(old), f)) {
		skip_row("limits", "max_user_watches -> ENOSPC", "(no sysctl)");
		if (f)
			fclose(f);
		return;
	}
	fclose(f);

	ifd = sys_init1(IN_CLOEXEC);
	/* nothing else of root watches anything in the guest's test run */
	f = fopen(knob, "w");
	fprintf(f, "2\n");
	fclose(f);

	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/limit%d", dir, i);
		close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	}
	snprintf(path, sizeof(path), "%s/limit0", dir);
	wd = res(sys_add(ifd, path, IN_MODIFY));
	snprintf(path, sizeof(path), "%s/limit1", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	args.fd = fd;
	got = res(ioctl(ifd, INOTIFY_IOC_WATCH, &args));
	close(fd);
	row("limits", "watch 2 of 2 (1 by path, 1 by fd)", 0,
	    wd < 0 ? wd : got);

	snprintf(path, sizeof(path), "%s/limit2", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	args.fd = fd;
	row("limits", "WATCH beyond max_user_watches", ENOSPC,
	    res(ioctl(ifd, INOTIFY_IOC_WATCH, &args)));
	close(fd);
	row("limits", "add_watch beyond max_user_watches", ENOSPC,
	    res(sys_add(ifd, path, IN_MODIFY)));
	/* updating an existing watch needs no new one */
	snprintf(path, sizeof(path), "%s/limit1", dir);
	row("limits", "update an existing watch at the limit", 0,
	    res(sys_add(ifd, path, IN_ATTRIB | IN_MASK_ADD)));
	close(ifd);

	f = fopen(knob, "w");
	fputs(old, f);
	fclose(f);
}

/* ----------------------------------------------------------- INOTIFY_IOC_IGNORE */

static int ignore(int ifd, int wd)
{
	__s32 arg = wd;

	return res(ioctl(ifd, INOTIFY_IOC_IGNORE, &arg));
}

static void ignore_rows(void)
{
	int ifd = sys_init1(IN_CLOEXEC);
	int wd, fd;

	row("IGNORE", "unknown wd 12345", EINVAL, ignore(ifd, 12345));
	row("IGNORE", "wd 0", EINVAL, ignore(ifd, 0));
	row("IGNORE", "negative wd -1", EINVAL, ignore(ifd, -1));
	row("IGNORE", "wd INT_MIN", EINVAL, ignore(ifd, INT_MIN));
	row("IGNORE", "NULL argument", EFAULT,
	    res(ioctl(ifd, INOTIFY_IOC_IGNORE, NULL)));
	row("IGNORE", "argument pointer -1", EFAULT,
	    res(ioctl(ifd, INOTIFY_IOC_IGNORE, (void *)-1L)));
	wd = sys_add(ifd, dir, IN_CREATE);
	row("IGNORE", "existing wd", 0, ignore(ifd, wd));
	row("IGNORE", "the same wd again", EINVAL, ignore(ifd, wd));
	fd = open(dir, O_RDONLY | O_CLOEXEC);
	row("IGNORE", "ioctl on a non-inotify fd", ENOTTY, ignore(fd, wd));
	close(fd);
	close(ifd);
}

/* ----------------------------------------------------------- /dev/inotify */

static void device_rows(void)
{
	const char *knob = "/proc/sys/fs/inotify/max_user_instances";
	char old[32] = "", buf[64], path[300];
	int fd, fd2;
	FILE *f;

	fd = open("/dev/inotify", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		skip_row("device", "/dev/inotify", "(CONFIG_INOTIFY_DEVICE=n)");
		return;
	}
	row("device", "open O_RDONLY | O_NONBLOCK", 0, res(fd));
	if (fd < 0)
		return;
	row("device", "read on an empty O_NONBLOCK instance", EAGAIN,
	    res(read(fd, buf, sizeof(buf))));
	row("device", "lseek", ESPIPE, res(lseek(fd, 0, SEEK_SET)));
	row("device", "INOTIFY_IOC_IGNORE of an unknown wd", EINVAL, ignore(fd, 7));
	row("device", "inotify_rm_watch of an unknown wd", EINVAL, res(sys_rm(fd, 9)));
	row("device", "inotify_add_watch on it", 0, res(sys_add(fd, dir, IN_CREATE)));
	snprintf(path, sizeof(path), "%s/devev", dir);
	make_file(path, 0644);
	row("device", "read of an event into 1 byte", EINVAL,
	    res(read(fd, buf, 1)));
	close(fd);

	fd = open("/dev/inotify", O_WRONLY | O_CLOEXEC);
	row("device", "open O_WRONLY", EINVAL, res(fd));
	if (fd >= 0)
		close(fd);
	fd = open("/dev/inotify", O_RDWR | O_CLOEXEC);
	row("device", "open O_RDWR", 0, res(fd));
	if (fd >= 0)
		close(fd);

	if (!is_root) {
		skip_row("device", "max_user_instances -> EMFILE",
			 "(needs root to lower the limit)");
		return;
	}
	f = fopen(knob, "r");
	if (!f || !fgets(old, sizeof(old), f)) {
		if (f)
			fclose(f);
		return;
	}
	fclose(f);
	fd = open("/dev/inotify", O_RDONLY | O_CLOEXEC);
	f = fopen(knob, "w");
	fprintf(f, "1\n");
	fclose(f);
	fd2 = open("/dev/inotify", O_RDONLY | O_CLOEXEC);
	row("device", "open beyond max_user_instances", EMFILE, res(fd2));
	if (fd2 >= 0)
		close(fd2);
	row("init1", "inotify_init1 beyond max_user_instances", EMFILE,
	    res(fd2 = sys_init1(IN_CLOEXEC)));
	if (fd2 >= 0)
		close(fd2);
	f = fopen(knob, "w");
	fputs(old, f);
	fclose(f);
	close(fd);
}

/* ------------------------------------------------------------- stock calls */

static void stock_rows(void)
{
	int ifd = sys_init1(IN_CLOEXEC);
	int fd, wd, avail = -1, got;

	row("init1", "inotify_init1 with unknown flags", EINVAL,
	    res(sys_init1(0x1)));

	row("add_watch", "bad inotify fd", EBADF, res(sys_add(-1, dir, IN_CREATE)));
	fd = open(dir, O_RDONLY | O_CLOEXEC);
	row("add_watch", "non-inotify fd", EINVAL, res(sys_add(fd, dir, IN_CREATE)));
	row("add_watch", "empty mask", EINVAL, res(sys_add(ifd, dir, 0)));
	row("add_watch", "unknown bit 0x1000", EINVAL,
	    res(sys_add(ifd, dir, IN_CREATE | 0x1000)));
	row("add_watch", "IN_MASK_ADD | IN_MASK_CREATE", EINVAL,
	    res(sys_add(ifd, dir, IN_CREATE | IN_MASK_ADD | IN_MASK_CREATE)));
	row("add_watch", "bad fd and IN_MASK_ADD | IN_MASK_CREATE", EBADF,
	    res(sys_add(-1, dir, IN_CREATE | IN_MASK_ADD | IN_MASK_CREATE)));
	row("add_watch", "missing path", ENOENT,
	    res(sys_add(ifd, "/nonexistent/x", IN_CREATE)));
	row("add_watch", "NULL path", EFAULT, res(sys_add(ifd, NULL, IN_CREATE)));
	row("add_watch", "IN_ONLYDIR on a file", ENOTDIR,
	    res(sys_add(ifd, file_rw, IN_MODIFY | IN_ONLYDIR)));
	/* the path entry stays as lax as it was about output bits */
	row("add_watch", "IN_ISDIR bit still accepted", 0,
	    res(sys_add(ifd, dir, IN_CREATE | IN_ISDIR)));
	row("add_watch", "flags only still accepted", 0,
	    res(sys_add(ifd, dir, IN_ONLYDIR)));
	/* the rules INOTIFY_IOC_WATCH follows, or departs from, by path */
	row("add_watch", "IN_UNMOUNT alone accepted", 0,
	    res(sys_add(ifd, dir, IN_UNMOUNT)));
	row("add_watch", "IN_MASK_ADD flag-only update accepted", 0,
	    res(sys_add(ifd, dir, IN_MASK_ADD | IN_EXCL_UNLINK)));
	row("add_watch", "IN_DONT_FOLLOW accepted by path", 0,
	    res(sys_add(ifd, dir, IN_CREATE | IN_DONT_FOLLOW)));
	if (is_root)
		skip_row("add_watch", "mode 0000 file", "(root bypasses the check)");
	else
		row("add_watch", "mode 0000 file", EACCES,
		    res(sys_add(ifd, file_000, IN_MODIFY)));

	row("rm_watch", "bad inotify fd", EBADF, res(sys_rm(-1, 1)));
	row("rm_watch", "non-inotify fd", EINVAL, res(sys_rm(fd, 1)));
	row("rm_watch", "unknown wd", EINVAL, res(sys_rm(ifd, 12345)));
	wd = sys_add(ifd, file_rw, IN_MODIFY);
	row("rm_watch", "existing wd", 0, res(sys_rm(ifd, wd)));
	close(fd);

	row("ioctl", "FIONREAD", 0, res(ioctl(ifd, FIONREAD, &avail)));
	row("ioctl", "unknown command _IOW('I', 3, int)", ENOTTY,
	    res(ioctl(ifd, _IOW('I', 3, int), &avail)));

	/*
	 * INOTIFY_IOC_SETNEXTWD passes a value, not a pointer.  Without
	 * CONFIG_CHECKPOINT_RESTORE it does not exist (ENOTTY).
	 */
	got = res(ioctl(ifd, INOTIFY_IOC_SETNEXTWD, 4242));
	if (got == -ENOTTY) {
		row("ioctl", "SETNEXTWD (no CHECKPOINT_RESTORE)", ENOTTY, got);
	} else {
		row("ioctl", "SETNEXTWD 4242", 0, got);
		row("ioctl", "SETNEXTWD: next wd is 4242", 0,
		    res(sys_add(ifd, file_rw, IN_MODIFY)) == 4242 ? 0 : -EINVAL);
		row("ioctl", "SETNEXTWD 0", EINVAL,
		    res(ioctl(ifd, INOTIFY_IOC_SETNEXTWD, 0)));
	}
	close(ifd);
}

static int have_watch_ioctl(void)
{
	struct inotify_watch_args args = { .fd = -1, .mask = IN_MODIFY };
	int ifd = sys_init1(IN_CLOEXEC), ret;

	if (ifd < 0)
		return 0;
	ret = ioctl(ifd, INOTIFY_IOC_WATCH, &args) < 0 && errno == ENOTTY;
	close(ifd);
	return !ret;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	const char *req = getenv("REQUIRE_INOTIFY_WATCH");
	int have, required = req && !strcmp(req, "1");
	char cmd[300];

	setvbuf(stdout, NULL, _IOLBF, 0);
	is_root = geteuid() == 0;
	snprintf(dir, sizeof(dir), "%s/fd_badinput.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(file_rw, sizeof(file_rw), "%s/rw", dir);
	snprintf(file_000, sizeof(file_000), "%s/m000", dir);
	snprintf(file_200, sizeof(file_200), "%s/m200", dir);
	make_file(file_rw, 0644);
	make_file(file_000, 0);
	make_file(file_200, 0200);
	snprintf(cmd, sizeof(cmd), "%s/link", dir);
	if (symlink("rw", cmd)) {
		perror("symlink");
		return 1;
	}

	printf("fd_badinput: running as uid %d\n", (int)geteuid());
	stock_rows();

	have = have_watch_ioctl();
	if (have) {
		watch_table();
		watch_misc();
		watch_pipe_events();
		size_rows();
		watch_limit();
		ignore_rows();
		device_rows();
	} else {
		printf("%s INOTIFY_IOC_WATCH is not supported (ENOTTY)%s\n",
		       required ? "FAIL" : "skip",
		       required ? ", but REQUIRE_INOTIFY_WATCH=1" : "");
	}

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);

	printf("fd_badinput: %d passed, %d failed, %d skipped\n",
	       passed, failed, skipped);
	if (failed || (!have && required))
		return 1;
	return have ? 0 : 4;
}
