// SPDX-License-Identifier: GPL-2.0
/*
 * fd_equiv: a watch added by file descriptor must report exactly what a
 * watch added by path reports.
 *
 * Each phase builds the same tree twice, watches it once with
 * inotify_add_watch() and once with INOTIFY_IOC_WATCH on descriptors that are
 * closed right after, each in its own inotify instance, runs the same
 * script of operations, and compares the two event streams field by
 * field: the watch (by label, not by wd number), the mask, the cookie
 * (by pattern: which events share one) and the name.
 *
 * Phases: "tree" (create, write, read, chmod, link, renames within and
 * across directories, unlink, mkdir/rmdir, rmdir of a watched directory,
 * rename of a watched directory); "mount" (root only: ext2 on a loop
 * device, watched, then unmounted, which must work with fd watches and
 * give IN_UNMOUNT and IN_IGNORED); "overflow" (queue overflow, with
 * max_queued_events lowered when root); "pipe" (a pipe and a socket pair
 * watched through /proc/self/fd/N by path, by their descriptor by fd:
 * writes, reads, and the watch after the last close).
 *
 * Exit 0 pass, 1 fail, 4 skip when the kernel has no INOTIFY_IOC_WATCH
 * (ENOTTY) -- unless REQUIRE_INOTIFY_WATCH=1, then its absence fails.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/loop.h>
/*
 * <linux/inotify.h> includes <linux/fcntl.h>, whose struct flock clashes
 * with glibc's <fcntl.h>; glibc has the O_* constants it needs.
 */
#define _LINUX_FCNTL_H
#include <linux/inotify.h>

enum mode { BY_PATH, BY_FD };
static const char *const mode_name[] = { "path", "fd" };

struct event {
	int wd;
	unsigned int mask;
	unsigned int cookie;
	char name[64];
};

struct stream {
	struct event *ev;
	int n, cap;
};

#define MAX_WATCHES 16

struct watches {
	int n;
	int wd[MAX_WATCHES];
	const char *label[MAX_WATCHES];
};

static char base[256];
static int is_root;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "fd_equiv: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, ": %s\n", strerror(errno));
	va_end(ap);
	exit(1);
}

static int sys_init1(int flags)
{
	return syscall(SYS_inotify_init1, flags);
}

static int watch_fd(int ifd, int fd, unsigned int mask)
{
	struct inotify_watch_args args = { .fd = fd, .mask = mask };

	return ioctl(ifd, INOTIFY_IOC_WATCH, &args);
}

/*
 * Add a watch on @path, by path or by a descriptor closed right away.
 * The descriptors are opened O_PATH for directories and O_RDONLY for
 * files, so both kinds are exercised; opening makes events the caller
 * drains before the script starts.
 */
static void add_watch(int ifd, enum mode m, struct watches *w,
		      const char *label, const char *path, unsigned int mask)
{
	struct stat st;
	int wd, fd;

	if (m == BY_PATH) {
		wd = syscall(SYS_inotify_add_watch, ifd, path, mask);
	} else {
		if (stat(path, &st))
			die("stat %s", path);
		fd = open(path, (S_ISDIR(st.st_mode) ? O_PATH : O_RDONLY) |
			  O_CLOEXEC);
		if (fd < 0)
			die("open %s", path);
		wd = watch_fd(ifd, fd, mask);
		close(fd);
	}
	if (wd < 0)
		die("%s watch on %s", mode_name[m], path);
	w->wd[w->n] = wd;
	w->label[w->n] = label;
	w->n++;
}

static void push(struct stream *s, const struct inotify_event *e)
{
	struct event *ev;

	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->ev = realloc(s->ev, s->cap * sizeof(*s->ev));
		if (!s->ev)
			die("realloc");
	}
	ev = &s->ev[s->n++];
	ev->wd = e->wd;
	ev->mask = e->mask;
	ev->cookie = e->cookie;
	snprintf(ev->name, sizeof(ev->name), "%s", e->len ? e->name : "");
}

/* read everything queued on a non-blocking instance; s may be NULL */
static void drain(int ifd, struct stream *s)
{
	union {
		struct inotify_event align;
		char buf[65536];
	} u;
	struct inotify_event *e;
	ssize_t len;
	char *p;

	for (;;) {
		len = read(ifd, u.buf, sizeof(u.buf));
		if (len < 0) {
			if (errno == EAGAIN)
				return;
			die("read");
		}
		for (p = u.buf; p < u.buf + len; p += sizeof(*e) + e->len) {
			e = (struct inotify_event *)p;
			if (s)
				push(s, e);
		}
	}
}

/* ------------------------------------------------------------ helpers */

static const char *at(const char *root, const char *rel)
{
	static char buf[4][512];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", root, rel);
	return buf[i];
}

static void xmkdir(const char *path)
{
	if (mkdir(path, 0755))
		die("mkdir %s", path);
}

static void write_file(const char *path, const char *data, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0644);

	if (fd < 0)
		die("open %s", path);
	if (write(fd, data, strlen(data)) != (ssize_t)strlen(data))
		die("write %s", path);
	close(fd);
}

static void read_file(const char *path)
{
	char buf[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("open %s", path);
	if (read(fd, buf, sizeof(buf)) < 0)
		die("read %s", path);
	close(fd);
}

static void run(const char *cmd)
{
	int rc = system(cmd);

	if (rc)
		die("'%s' exited with %d", cmd, rc);
}

/* ------------------------------------------------------------ phases */

/* the directory tree script; returns the event stream */
static void phase_tree(enum mode m, struct stream *s, struct watches *w)
{
	char root[300];
	int ifd;

	snprintf(root, sizeof(root), "%s/tree.%s", base, mode_name[m]);
	xmkdir(root);
	xmkdir(at(root, "a"));
	xmkdir(at(root, "b"));
	xmkdir(at(root, "d"));
	write_file(at(root, "a/f"), "data\n", O_CREAT);
	write_file(at(root, "a/g"), "g\n", O_CREAT);

	ifd = sys_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");
	add_watch(ifd, m, w, "root", root, IN_ALL_EVENTS);
	add_watch(ifd, m, w, "a", at(root, "a"), IN_ALL_EVENTS);
	add_watch(ifd, m, w, "b", at(root, "b"), IN_ALL_EVENTS);
	add_watch(ifd, m, w, "d", at(root, "d"), IN_ALL_EVENTS);
	add_watch(ifd, m, w, "a/f", at(root, "a/f"), IN_ALL_EVENTS);
	/* the open/close of the fd watches themselves are not compared */
	drain(ifd, NULL);

	write_file(at(root, "a/new"), "hello\n", O_CREAT | O_EXCL);
	write_file(at(root, "a/f"), "more\n", O_APPEND);
	read_file(at(root, "a/f"));
	if (chmod(at(root, "a/f"), 0600))
		die("chmod");
	if (link(at(root, "a/f"), at(root, "b/flink")))
		die("link");
	if (rename(at(root, "a/g"), at(root, "a/g2")))
		die("rename within");
	if (rename(at(root, "a/g2"), at(root, "b/g3")))
		die("rename across");
	if (rename(at(root, "a/f"), at(root, "b/f")))
		die("rename watched file");
	if (unlink(at(root, "b/flink")))
		die("unlink link");
	if (unlink(at(root, "b/f")))
		die("unlink watched file");
	xmkdir(at(root, "a/sub"));
	if (rmdir(at(root, "a/sub")))
		die("rmdir sub");
	if (rmdir(at(root, "d")))
		die("rmdir watched dir");
	if (rename(at(root, "b"), at(root, "b2")))
		die("rename watched dir");
	if (unlink(at(root, "b2/g3")) || unlink(at(root, "a/new")))
		die("unlink");
	if (syscall(SYS_inotify_rm_watch, ifd, w->wd[1]))
		die("inotify_rm_watch");

	drain(ifd, s);
	close(ifd);
}

/*
 * A pipe and a socket pair: watched by path through /proc/self/fd/N, or by
 * descriptor, in both cases while they are open.  Writes, reads, the last
 * close, and then the explicit removal of the watches, which outlive the
 * objects: no IN_DELETE_SELF, only IN_IGNORED at removal.
 */
static void phase_pipe(enum mode m, struct stream *s, struct watches *w)
{
	char path[64], c[4];
	int ifd, p[2], sv[2], wd, i, fds[2];
	const char *labels[2] = { "pipe", "socket" };

	ifd = sys_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");
	if (pipe2(p, O_CLOEXEC) || socketpair(AF_UNIX, SOCK_STREAM |
					      SOCK_CLOEXEC, 0, sv))
		die("pipe or socketpair");
	fds[0] = p[0];
	fds[1] = sv[0];
	for (i = 0; i < 2; i++) {
		if (m == BY_PATH) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d", fds[i]);
			wd = syscall(SYS_inotify_add_watch, ifd, path,
				     IN_ALL_EVENTS);
		} else {
			wd = watch_fd(ifd, fds[i], IN_ALL_EVENTS);
		}
		if (wd < 0)
			die("%s watch on a %s", mode_name[m], labels[i]);
		w->wd[w->n] = wd;
		w->label[w->n] = labels[i];
		w->n++;
	}
	if (write(p[1], "ab", 2) != 2 || read(p[0], c, 2) != 2)
		die("pipe write or read");
	if (write(sv[0], "ab", 2) != 2 || read(sv[1], c, 2) != 2)
		die("socket write or read");
	close(p[0]);
	close(p[1]);
	close(sv[0]);
	close(sv[1]);
	for (i = 0; i < w->n; i++)
		if (syscall(SYS_inotify_rm_watch, ifd, w->wd[i]))
			die("inotify_rm_watch after the last close");
	drain(ifd, s);
	close(ifd);
}

/* set up a loop device on @img; returns its path in @dev */
static int loop_setup(const char *img, char *dev, size_t size)
{
	int ctl, nr, fd, lfd;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -1;
	nr = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (nr < 0)
		return -1;
	snprintf(dev, size, "/dev/loop%d", nr);
	lfd = open(dev, O_RDWR | O_CLOEXEC);
	if (lfd < 0)
		return -1;
	fd = open(img, O_RDWR | O_CLOEXEC);
	if (fd < 0 || ioctl(lfd, LOOP_SET_FD, fd)) {
		close(lfd);
		return -1;
	}
	close(fd);
	return lfd;
}

static char loopdev[64];
static int loopfd = -1;

/* 1 if the loop device is ready, 0 if the phase cannot run here */
static int mount_prepare(void)
{
	char img[300], cmd[700];
	int fd;

	if (!is_root)
		return 0;
	snprintf(img, sizeof(img), "%s/ext2.img", base);
	fd = open(img, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 4 << 20))
		die("image %s", img);
	close(fd);
	snprintf(cmd, sizeof(cmd), "mke2fs -q -F %s 4096 >/dev/null 2>&1", img);
	if (system(cmd)) {
		snprintf(cmd, sizeof(cmd), "mke2fs -F %s 4096 >/dev/null 2>&1",
			 img);
		if (system(cmd)) {
			printf("fd_equiv: mke2fs failed; mount phase not run\n");
			return 0;
		}
	}
	loopfd = loop_setup(img, loopdev, sizeof(loopdev));
	if (loopfd < 0) {
		printf("fd_equiv: no loop device (%s); mount phase not run\n",
		       strerror(errno));
		return 0;
	}
	return 1;
}

static void phase_mount(enum mode m, struct stream *s, struct watches *w)
{
	char mnt[300];
	int ifd;

	snprintf(mnt, sizeof(mnt), "%s/mnt.%s", base, mode_name[m]);
	xmkdir(mnt);
	if (mount(loopdev, mnt, "ext2", 0, NULL))
		die("mount %s on %s", loopdev, mnt);
	/* the same starting content for both runs */
	unlink(at(mnt, "file"));
	write_file(at(mnt, "file"), "x\n", O_CREAT);
	xmkdir(at(mnt, "dir"));

	ifd = sys_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");
	add_watch(ifd, m, w, "mnt", mnt, IN_ALL_EVENTS);
	add_watch(ifd, m, w, "mnt/file", at(mnt, "file"),
		  IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF);
	add_watch(ifd, m, w, "mnt/dir", at(mnt, "dir"),
		  IN_CREATE | IN_DELETE);
	drain(ifd, NULL);

	write_file(at(mnt, "new"), "new\n", O_CREAT);
	write_file(at(mnt, "file"), "y\n", O_APPEND);
	write_file(at(mnt, "dir/x"), "x\n", O_CREAT);
	if (unlink(at(mnt, "dir/x")) || rmdir(at(mnt, "dir")) ||
	    unlink(at(mnt, "new")))
		die("cleanup in %s", mnt);

	/* the watches must not keep the filesystem busy */
	if (umount(mnt))
		die("umount %s with %s watches", mnt, mode_name[m]);
	drain(ifd, s);
	close(ifd);
}

/* @overflow_at: the queue length the instance was created with */
static void phase_overflow(enum mode m, struct stream *s, struct watches *w,
			   int overflow_at)
{
	char dir[300];
	int ifd, i;

	snprintf(dir, sizeof(dir), "%s/ovf.%s", base, mode_name[m]);
	xmkdir(dir);
	ifd = sys_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");
	add_watch(ifd, m, w, "ovf", dir, IN_CREATE | IN_DELETE);
	drain(ifd, NULL);

	/* create/delete pairs do not merge: one event each */
	for (i = 0; i < overflow_at / 2 + 8; i++) {
		write_file(at(dir, "f"), "", O_CREAT);
		if (unlink(at(dir, "f")))
			die("unlink");
	}
	drain(ifd, s);
	close(ifd);
}

/* ------------------------------------------------------------ comparison */

static const char *label_of(const struct watches *w, int wd, char *buf,
			    size_t size)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (w->wd[i] == wd)
			return w->label[i];
	snprintf(buf, size, "wd%d", wd);
	return buf;
}

/* the events as comparable text lines, cookies numbered by appearance */
static char **normalise(const struct stream *s, const struct watches *w)
{
	unsigned int cookies[256];
	char **out = calloc(s->n + 1, sizeof(char *));
	int ncookies = 0, i, j, c;
	char lbuf[32];

	for (i = 0; i < s->n; i++) {
		const struct event *e = &s->ev[i];

		c = 0;
		if (e->cookie) {
			for (j = 0; j < ncookies; j++)
				if (cookies[j] == e->cookie)
					break;
			if (j == ncookies && ncookies < 256)
				cookies[ncookies++] = e->cookie;
			c = j + 1;
		}
		if (asprintf(&out[i], "%-9s mask=0x%08x cookie=%-3d name=%s",
			     label_of(w, e->wd, lbuf, sizeof(lbuf)), e->mask, c,
			     e->name) < 0)
			die("asprintf");
	}
	return out;
}

static int compare(const char *phase, const struct stream *a,
		   const struct watches *wa, const struct stream *b,
		   const struct watches *wb)
{
	char **na = normalise(a, wa), **nb = normalise(b, wb);
	int i, n = a->n > b->n ? a->n : b->n, bad = 0, shown = 0;

	for (i = 0; i < n; i++) {
		const char *x = i < a->n ? na[i] : "(none)";
		const char *y = i < b->n ? nb[i] : "(none)";

		if (strcmp(x, y)) {
			if (!bad)
				printf("fd_equiv: %s: streams differ "
				       "(- by path, + by fd):\n", phase);
			bad = 1;
		}
		if (bad && shown < 40) {
			if (strcmp(x, y)) {
				printf("  %4d - %s\n", i, x);
				printf("  %4d + %s\n", i, y);
			} else {
				printf("  %4d   %s\n", i, x);
			}
			shown++;
		}
	}
	printf("%s fd_equiv: %s: %d events by path, %d by fd\n",
	       bad ? "FAIL" : "ok  ", phase, a->n, b->n);
	for (i = 0; i < a->n; i++)
		free(na[i]);
	for (i = 0; i < b->n; i++)
		free(nb[i]);
	free(na);
	free(nb);
	return bad;
}

static int has_mask(const struct stream *s, unsigned int mask)
{
	int i;

	for (i = 0; i < s->n; i++)
		if ((s->ev[i].mask & mask) == mask)
			return 1;
	return 0;
}

static void dump(const char *phase, const struct stream *s,
		 const struct watches *w)
{
	char **ns = normalise(s, w);
	int i;

	if (!getenv("FD_EQUIV_VERBOSE"))
		goto out;
	for (i = 0; i < s->n; i++)
		printf("  %s %4d %s\n", phase, i, ns[i]);
out:
	for (i = 0; i < s->n; i++)
		free(ns[i]);
	free(ns);
}

/* ------------------------------------------------------------ main */

static int have_watch_ioctl(void)
{
	int ifd = sys_init1(IN_CLOEXEC), ret;

	if (ifd < 0)
		return 0;
	ret = watch_fd(ifd, -1, IN_MODIFY) < 0 && errno == ENOTTY;
	close(ifd);
	return !ret;
}

static int read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_int(const char *path, int v)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "%d\n", v);
	return fclose(f);
}

int main(void)
{
	const char *knob = "/proc/sys/fs/inotify/max_queued_events";
	const char *req = getenv("REQUIRE_INOTIFY_WATCH");
	const char *tmp = getenv("TMPDIR");
	struct stream s[2] = { { 0 } };
	struct watches w[2];
	int fail = 0, m, old_q = -1, q;
	char cmd[300];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!have_watch_ioctl()) {
		if (req && !strcmp(req, "1")) {
			printf("FAIL fd_equiv: INOTIFY_IOC_WATCH is not supported "
			       "(ENOTTY), but REQUIRE_INOTIFY_WATCH=1\n");
			return 1;
		}
		printf("skip fd_equiv: INOTIFY_IOC_WATCH is not supported "
		       "(ENOTTY)\n");
		return 4;
	}
	is_root = geteuid() == 0;
	snprintf(base, sizeof(base), "%s/fd_equiv.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(base))
		die("mkdtemp");
	printf("fd_equiv: uid %d, in %s\n", (int)geteuid(), base);

	/* tree */
	for (m = BY_PATH; m <= BY_FD; m++) {
		memset(&w[m], 0, sizeof(w[m]));
		s[m].n = 0;
		phase_tree(m, &s[m], &w[m]);
		dump(mode_name[m], &s[m], &w[m]);
	}
	fail |= compare("tree", &s[0], &w[0], &s[1], &w[1]);
	if (!has_mask(&s[1], IN_DELETE_SELF) || !has_mask(&s[1], IN_IGNORED) ||
	    !has_mask(&s[1], IN_MOVE_SELF) || !has_mask(&s[1], IN_MOVED_TO)) {
		printf("FAIL fd_equiv: tree: expected events are missing\n");
		fail = 1;
	}

	/* mount */
	if (mount_prepare()) {
		for (m = BY_PATH; m <= BY_FD; m++) {
			memset(&w[m], 0, sizeof(w[m]));
			s[m].n = 0;
			phase_mount(m, &s[m], &w[m]);
			dump(mode_name[m], &s[m], &w[m]);
		}
		fail |= compare("mount", &s[0], &w[0], &s[1], &w[1]);
		if (!has_mask(&s[1], IN_UNMOUNT)) {
			printf("FAIL fd_equiv: mount: no IN_UNMOUNT\n");
			fail = 1;
		}
		ioctl(loopfd, LOOP_CLR_FD, 0);
		close(loopfd);
	} else {
		printf("skip fd_equiv: mount: needs root and a loop device\n");
	}

	/* overflow: a small queue when root may lower it */
	q = read_int(knob);
	if (is_root && q > 64) {
		old_q = q;
		if (write_int(knob, 64) == 0)
			q = 64;
	}
	if (q <= 0 || q > 65536) {
		printf("skip fd_equiv: overflow: max_queued_events is %d\n", q);
	} else {
		for (m = BY_PATH; m <= BY_FD; m++) {
			memset(&w[m], 0, sizeof(w[m]));
			s[m].n = 0;
			phase_overflow(m, &s[m], &w[m], q);
		}
		fail |= compare("overflow", &s[0], &w[0], &s[1], &w[1]);
		if (!has_mask(&s[1], IN_Q_OVERFLOW)) {
			printf("FAIL fd_equiv: overflow: no IN_Q_OVERFLOW\n");
			fail = 1;
		}
	}
	if (old_q > 0)
		write_int(knob, old_q);

	/* pipe: as a /proc/self/fd path watch, event for event */
	for (m = BY_PATH; m <= BY_FD; m++) {
		memset(&w[m], 0, sizeof(w[m]));
		s[m].n = 0;
		phase_pipe(m, &s[m], &w[m]);
		dump(mode_name[m], &s[m], &w[m]);
	}
	fail |= compare("pipe", &s[0], &w[0], &s[1], &w[1]);
	if (!has_mask(&s[1], IN_MODIFY) || !has_mask(&s[1], IN_ACCESS) ||
	    !has_mask(&s[1], IN_IGNORED)) {
		printf("FAIL fd_equiv: pipe: expected events are missing\n");
		fail = 1;
	}

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	run(cmd);
	free(s[0].ev);
	free(s[1].ev);
	printf("fd_equiv: %s\n", fail ? "FAIL" : "PASS");
	return fail;
}
