// SPDX-License-Identifier: GPL-2.0
/*
 * fd_userns: an unprivileged user in a user namespace of its own (and a
 * mount namespace owned by it) watches by fd what it may read, and is
 * refused what it may not, exactly as inotify_add_watch() by path is.
 *
 * Root makes the fixtures (files of root's of modes 0644, 0600 and 0622,
 * a 0700 directory, a directory for the user) and opens one 0600 file for
 * reading; a child then drops to uid/gid 65534 (setuid(0) must fail after),
 * calls unshare(CLONE_NEWUSER | CLONE_NEWNS) and maps its uid and gid to
 * 0 in the namespace.  It is root there, but root's files stay root's:
 * uid 0 outside is not mapped, so the namespace's capabilities do not
 * reach them.  One row per object, as fd_badinput prints them, by fd
 * (INOTIFY_IOC_WATCH, the fd closed after) and by path (inotify_add_watch):
 *
 *   own 0644 file, O_RDONLY           fd ok      path ok      (+ event)
 *   own 0000 file, O_PATH             fd ok      path ok      (DAC override
 *                                      over its own, mapped, uid)
 *   root's 0644 file, O_PATH/O_RDONLY fd ok      path ok
 *   root's 0600 file, O_PATH          fd EACCES  path EACCES
 *   root's 0622 file, O_WRONLY        fd EACCES  path EACCES
 *   root's 0700 directory, O_PATH     fd EACCES  path EACCES
 *   root's 0600 file, O_RDONLY fd opened by root before the drop
 *                                     fd EACCES  path EACCES  (read
 *                                      permission on the object is checked
 *                                      whatever the fd, as fanotify does)
 *   a tmpfs the user mounts in its namespace, watched by fd, unmounted:
 *                                     IN_UNMOUNT then IN_IGNORED
 *
 * Runs as root (tests.list "root") to make root's fixtures; every check
 * runs as uid 65534.  Exit 0 pass, 1 fail, 4 skip (no user namespaces in
 * the kernel; no INOTIFY_IOC_WATCH and REQUIRE_INOTIFY_WATCH unset).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#define TEST_NAME "fd_userns"
#include "fdtest.h"

#define NOBODY	65534


static int res(long ret)
{
	return ret < 0 ? -errno : (int)ret;
}

static const char *ename(int e)
{
	static char buf[32];

	switch (e) {
	case 0: return "success";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	case ENOENT: return "ENOENT";
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

/* one row: @expect is an errno or 0 for success (any result >= 0) */
static void row(const char *group, const char *name, int expect, int got)
{
	int ok = expect ? got == -expect : got >= 0;

	printf("%-4s %-6s %-52s expected %-8s got %s\n", ok ? "ok" : "FAIL",
	       group, name, ename(expect), ename(got < 0 ? -got : 0));
	if (ok)
		passed++;
	else
		failed++;
}

static void make_file(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, "x\n", 2) != 2)
		die("create %s", path);
	close(fd);
	if (chmod(path, mode))
		die("chmod %s", path);
}

static void write_id_map(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY | O_CLOEXEC);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die("write %s", file);
	close(fd);
}

static union {
	struct inotify_event e;
	char buf[4096];
} evbuf;
static int evlen, evoff;

/* forget what next_event() read ahead: call before using a new instance */
static void events_reset(void)
{
	evlen = evoff = 0;
}

/* the next event of @ifd, waiting up to a second; 0 when none came */
static int next_event(int ifd, int *wd, unsigned int *mask)
{
	struct pollfd p = { .fd = ifd, .events = POLLIN };
	struct inotify_event *e;

	if (evoff >= evlen) {
		if (poll(&p, 1, 1000) <= 0)
			return 0;
		evlen = read(ifd, evbuf.buf, sizeof(evbuf.buf));
		evoff = 0;
		if (evlen <= 0)
			return 0;
	}
	e = (struct inotify_event *)(evbuf.buf + evoff);
	evoff += sizeof(*e) + e->len;
	*wd = e->wd;
	*mask = e->mask;
	return 1;
}

enum how { OWN_RDONLY, OWN_000_PATH, ROOT_644_PATH, ROOT_644_RDONLY,
	   ROOT_600_PATH, ROOT_622_WRONLY, ROOT_700_DIR, ROOT_600_HELD };

struct urow {
	const char *name;
	enum how how;
	const char *path;	/* relative to base */
	int flags;		/* open flags for the fd */
	int expect_fd;		/* errno, 0 = success */
	int expect_path;
};

static const struct urow rows[] = {
	{ "own 0644 file, O_RDONLY", OWN_RDONLY, "u/own_644", O_RDONLY, 0, 0 },
	{ "own 0000 file, O_PATH", OWN_000_PATH, "u/own_000", O_PATH, 0, 0 },
	{ "root's 0644 file, O_PATH", ROOT_644_PATH, "root_644", O_PATH, 0, 0 },
	{ "root's 0644 file, O_RDONLY", ROOT_644_RDONLY, "root_644", O_RDONLY,
	  0, 0 },
	{ "root's 0600 file, O_PATH", ROOT_600_PATH, "root_600", O_PATH,
	  EACCES, EACCES },
	{ "root's 0622 file, O_WRONLY", ROOT_622_WRONLY, "root_622", O_WRONLY,
	  EACCES, EACCES },
	{ "root's 0700 directory, O_PATH", ROOT_700_DIR, "root_700", O_PATH,
	  EACCES, EACCES },
	{ "root's 0600 file, O_RDONLY fd opened by root", ROOT_600_HELD,
	  "root_600", -1, EACCES, EACCES },
};

/* the tmpfs row: mount, watch by fd, umount; IN_UNMOUNT then IN_IGNORED */
static void mount_row(void)
{
	const char *m = at("u/mnt");
	unsigned int mask;
	int ifd, fd, wd, w, ok;

	if (mkdir(m, 0755))
		die("mkdir %s", m);
	check("tmpfs mounted in the user's own mount namespace",
	      mount("fd_userns", m, "tmpfs", 0, NULL) == 0);
	ifd = syscall(SYS_inotify_init1, IN_CLOEXEC);
	events_reset();
	fd = open(m, O_PATH | O_CLOEXEC);
	wd = res(watch_fd(ifd, fd, IN_CREATE));
	close(fd);
	row("fd", "root of that tmpfs, O_PATH", 0, wd);
	check("umount of that tmpfs (no fd keeps it busy)", umount(m) == 0);
	ok = next_event(ifd, &w, &mask) && w == wd &&
	     mask == (IN_UNMOUNT | IN_ISDIR) &&
	     next_event(ifd, &w, &mask) && w == wd && mask == IN_IGNORED &&
	     !next_event(ifd, &w, &mask);
	check("  then IN_UNMOUNT|IN_ISDIR, IN_IGNORED, and nothing more", ok);
	close(ifd);
	rmdir(m);
}

/* what runs as uid 65534; returns the exit status */
static int user_main(int held)
{
	char map[64], own[64];
	unsigned int i, mask;
	int fd, w;

	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY))
		die("drop to %d", NOBODY);
	if (!setuid(0) || geteuid() != NOBODY)
		die("privileges were not dropped");
	/*
	 * The set*id() calls made the task non-dumpable, which would leave
	 * its /proc/self/uid_map and gid_map root's and closed to it.
	 */
	prctl(PR_SET_DUMPABLE, 1);

	/* the user's own files, made before the namespace: owner 65534 */
	make_file(at("u/own_644"), 0644);
	make_file(at("u/own_000"), 0);

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		/*
		 * Without CONFIG_USER_NS, Debian's kernel says EPERM to an
		 * unprivileged caller, mainline EINVAL; the namespace file
		 * tells them apart from a refusal.
		 */
		if (access("/proc/self/ns/user", F_OK)) {
			printf("skip fd_userns: no user namespaces in this "
			       "kernel (CONFIG_USER_NS)\n");
			return 4;
		}
		die("unshare(CLONE_NEWUSER | CLONE_NEWNS) as uid %d", NOBODY);
	}
	write_id_map("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %d 1\n", NOBODY);
	write_id_map("/proc/self/uid_map", map);
	write_id_map("/proc/self/gid_map", map);
	snprintf(own, sizeof(own), "uid 0 in the namespace is %d outside",
		 NOBODY);
	check(own, getuid() == 0 && getgid() == 0);

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct urow *r = &rows[i];
		int ifd = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
		unsigned int wmask = IN_MODIFY | IN_ACCESS;
		int got;

		if (ifd < 0)
			die("inotify_init1");
		events_reset();
		fd = r->flags < 0 ? held : open(at(r->path),
						r->flags | O_CLOEXEC);
		if (fd < 0) {
			printf("FAIL %-6s %-52s cannot open: %s\n", "fd",
			       r->name, strerror(errno));
			failed++;
			close(ifd);
			continue;
		}
		got = res(watch_fd(ifd, fd, wmask));
		row("fd", r->name, r->expect_fd, got);

		/* a successful watch must report: read through the fd */
		if (got >= 0 && (r->how == OWN_RDONLY ||
				 r->how == ROOT_600_HELD)) {
			char c;
			int ok;

			ok = pread(fd, &c, 1, 0) == 1 &&
			     next_event(ifd, &w, &mask) && w == got &&
			     mask == IN_ACCESS;
			check("  and the watch reports IN_ACCESS", ok);
		}
		if (fd != held)
			close(fd);
		close(ifd);

		ifd = syscall(SYS_inotify_init1, IN_CLOEXEC);
		row("path", r->name, r->expect_path,
		    res(syscall(SYS_inotify_add_watch, ifd, at(r->path),
				wmask)));
		close(ifd);
	}

	mount_row();
	unlink(at("u/own_644"));
	unlink(at("u/own_000"));
	printf("fd_userns: %d passed, %d failed (uid %d in a user "
	       "namespace)\n", passed, failed, NOBODY);
	return failed ? 1 : 0;
}

int main(void)
{
	int rc, held, status;
	pid_t pid;

	rc = fdtest_probe();
	if (rc)
		return rc;
	if (geteuid() != 0) {
		printf("FAIL fd_userns: run it as root: root makes the "
		       "fixtures, the checks run as uid %d\n", NOBODY);
		return 1;
	}

	fdtest_mkbase();
	if (chmod(base, 0755))
		die("chmod %s", base);
	make_file(at("root_644"), 0644);
	make_file(at("root_600"), 0600);
	make_file(at("root_622"), 0622);
	if (mkdir(at("root_700"), 0700) || mkdir(at("u"), 0755) ||
	    chown(at("u"), NOBODY, NOBODY))
		die("fixtures");
	held = open(at("root_600"), O_RDONLY);	/* inherited by the child */
	if (held < 0)
		die("open root_600");

	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		_exit(user_main(held));
	if (waitpid(pid, &status, 0) != pid)
		die("waitpid");
	close(held);

	unlink(at("root_644"));
	unlink(at("root_600"));
	unlink(at("root_622"));
	rmdir(at("root_700"));
	rmdir(at("u"));
	rmdir(base);
	if (!WIFEXITED(status)) {
		printf("FAIL fd_userns: the user's process died (status "
		       "0x%x)\n", status);
		return 1;
	}
	printf("fd_userns: %s\n", WEXITSTATUS(status) == 0 ? "PASS" :
	       WEXITSTATUS(status) == 4 ? "SKIP" : "FAIL");
	return WEXITSTATUS(status);
}
