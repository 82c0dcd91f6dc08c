// SPDX-License-Identifier: GPL-2.0
/*
 * fd_mntns: watches by fd across mount namespaces.  A watch ends (with
 * IN_UNMOUNT then IN_IGNORED) when the filesystem's superblock shuts
 * down, that is when its last mount in any namespace goes; an unmount in
 * one namespace while another still has the filesystem mounted ends
 * nothing, and events keep coming from the namespace that still has it.
 *
 * Each scenario mounts a tmpfs M, forks a child that calls
 * unshare(CLONE_NEWNS) (checked: /proc/self/ns/mnt differs), and shares
 * one inotify instance with it:
 *   "child-watch": the child makes the watches (M/file, M) in its own
 *     namespace.  The parent unmounts M: no event, and M is gone from the
 *     parent's view.  The child writes M/file and creates M/new: the
 *     events come.  The child unmounts M, the last mount: IN_UNMOUNT then
 *     IN_IGNORED per watch, once.
 *   "ns-exit": the parent makes the watch in its namespace and unmounts
 *     M; the child writes (events come), then exits without unmounting:
 *     the teardown of its namespace is the last unmount, and IN_UNMOUNT
 *     and IN_IGNORED are queued by the time waitpid() returns.
 *   "shared": M is mounted under a MS_SHARED mount, so the child's copy
 *     is a peer; the parent's unmount propagates into the child's
 *     namespace and ends the watch at once (the child is still alive).
 * Each step checks the exact events per watch.  It mounts: as root, or as
 * any other user in a user and mount namespace of its own
 * (fdtest_userns()), whose child namespaces it then makes.  Exit 0 pass,
 * 1 fail, 4 skip (no user namespace for a user, or no INOTIFY_IOC_WATCH and
 * REQUIRE_INOTIFY_WATCH unset).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
/*
 * <linux/inotify.h> includes <linux/fcntl.h>, whose struct flock clashes
 * with glibc's <fcntl.h>; glibc has the O_* constants it needs.
 */
#define _LINUX_FCNTL_H
#include <linux/inotify.h>

#define TEST_NAME "fd_mntns"
#include "fd_ends.h"

/* ------------------------------------------------------------ the child */

static int gone(const char *path)
{
	struct stat st;

	return stat(path, &st) < 0 && errno == ENOENT;
}

/*
 * The child: commands come one byte at a time on @cmd; after each it
 * answers on @ans with 'k' (done) or 'e' (failed, errno in the message).
 *   'W' make the watches (M/file, M) and send their wds
 *   'w' write M/file, create M/new
 *   'u' unmount M
 *   's' answer 'k' if M/file is gone (M is not mounted here)
 *   'x' exit without unmounting anything
 */
struct child {
	pid_t pid;
	int cmd, ans;
};

static int child_main(int ifd, const char *m, int cmd, int ans)
{
	char c, path[600], self[64], parent[64];
	int wd[2];

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)getppid());
	if (readlink(path, parent, sizeof(parent)) < 0)
		return 2;
	if (unshare(CLONE_NEWNS))
		return 3;
	memset(self, 0, sizeof(self));
	if (readlink("/proc/self/ns/mnt", self, sizeof(self) - 1) < 0 ||
	    !strncmp(self, parent, sizeof(self)))
		return 4;
	if (write(ans, "k", 1) != 1)
		return 5;
	while (read(cmd, &c, 1) == 1) {
		int ok = 1;

		switch (c) {
		case 'W':
			snprintf(path, sizeof(path), "%s/file", m);
			wd[0] = watch_closed(ifd, path, O_PATH, IN_MODIFY |
					     IN_CLOSE_WRITE | IN_DELETE_SELF);
			wd[1] = watch_closed(ifd, m, O_PATH,
					     IN_CREATE | IN_DELETE);
			if (write(ans, "k", 1) != 1 ||
			    write(ans, wd, sizeof(wd)) != sizeof(wd))
				return 6;
			continue;
		case 'w':
			snprintf(path, sizeof(path), "%s/file", m);
			write_file(path, O_APPEND);
			snprintf(path, sizeof(path), "%s/new", m);
			write_file(path, O_CREAT);
			break;
		case 'u':
			ok = umount(m) == 0;
			break;
		case 's':
			snprintf(path, sizeof(path), "%s/file", m);
			ok = gone(path);
			break;
		case 'x':
			return 0;
		}
		if (!ok)
			printf("     child: '%c' failed: %s\n", c,
			       strerror(errno));
		if (write(ans, ok ? "k" : "e", 1) != 1)
			return 7;
	}
	return 0;
}

static struct child start_child(int ifd, const char *m)
{
	struct child ch;
	int to[2], from[2];
	char c;

	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		die("pipe");
	ch.pid = fork();
	if (ch.pid < 0)
		die("fork");
	if (ch.pid == 0) {
		close(to[1]);
		close(from[0]);
		_exit(child_main(ifd, m, to[0], from[1]));
	}
	close(to[0]);
	close(from[1]);
	ch.cmd = to[1];
	ch.ans = from[0];
	if (read(ch.ans, &c, 1) != 1 || c != 'k')
		die("the child did not get its own mount namespace");
	check("child in its own mount namespace (unshare(CLONE_NEWNS))", 1);
	return ch;
}

/* send a command; returns 1 when the child did it */
static int tell(struct child *ch, char c)
{
	char r = 0;

	if (write(ch->cmd, &c, 1) != 1)
		die("write to child");
	if (c == 'x')
		return 1;
	return read(ch->ans, &r, 1) == 1 && r == 'k';
}

static void end_child(struct child *ch)
{
	int status;

	close(ch->cmd);
	close(ch->ans);
	if (waitpid(ch->pid, &status, 0) != ch->pid)
		die("waitpid");
	check("child exited 0", WIFEXITED(status) && !WEXITSTATUS(status));
}

/* ------------------------------------------------------------ scenarios */

static void scenario_child_watch(void)
{
	const char *const names[] = { "file", "dir" };
	const char *m = at("m1");
	struct child ch;
	int ifd, wds[2];

	mkdir(m, 0755);
	xmount("fd_mntns", m, "tmpfs", 0);
	write_file(at("m1/file"), O_CREAT);
	ifd = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");

	ch = start_child(ifd, m);
	if (!tell(&ch, 'W') || read(ch.ans, wds, sizeof(wds)) != sizeof(wds))
		die("child-watch: the child could not watch");
	expect(ifd, "child-watch: watches made in the child's namespace",
	       wds, names, 2, NULL, 0);

	xumount(m, 0);
	check("child-watch: M unmounted in the parent's namespace",
	      gone(at("m1/file")));
	expect(ifd, "child-watch: umount in the parent's namespace", wds,
	       names, 2, NULL, 0);

	check("child-watch: the child writes M/file, creates M/new",
	      tell(&ch, 'w'));
	{
		const struct ev exp[] = {
			{ wds[0], IN_MODIFY, "" },
			{ wds[0], IN_CLOSE_WRITE, "" },
			{ wds[1], IN_CREATE, "new" },
		};
		expect(ifd, "child-watch: events from the child's namespace",
		       wds, names, 2, exp, 3);
	}

	check("child-watch: the child unmounts M (the last mount)",
	      tell(&ch, 'u'));
	{
		const struct ev exp[] = {
			{ wds[0], IN_UNMOUNT, "" }, { wds[0], IN_IGNORED, "" },
			{ wds[1], IN_UNMOUNT | IN_ISDIR, "" },
			{ wds[1], IN_IGNORED, "" },
		};
		expect(ifd, "child-watch: the last umount ends the watches",
		       wds, names, 2, exp, 4);
	}
	tell(&ch, 'x');
	end_child(&ch);
	expect(ifd, "child-watch: nothing more", wds, names, 2, NULL, 0);
	close(ifd);
	rmdir(m);
}

static void scenario_ns_exit(void)
{
	const char *const names[] = { "file" };
	const char *m = at("m2");
	struct child ch;
	int ifd, wds[1];

	mkdir(m, 0755);
	xmount("fd_mntns", m, "tmpfs", 0);
	write_file(at("m2/file"), O_CREAT);
	ifd = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");
	wds[0] = watch_closed(ifd, at("m2/file"), O_PATH,
			      IN_MODIFY | IN_CLOSE_WRITE);

	ch = start_child(ifd, m);
	xumount(m, 0);
	check("ns-exit: M unmounted in the parent's namespace",
	      gone(at("m2/file")));
	expect(ifd, "ns-exit: umount in the watch's namespace", wds, names,
	       1, NULL, 0);

	check("ns-exit: the child writes M/file", tell(&ch, 'w'));
	{
		const struct ev exp[] = {
			{ wds[0], IN_MODIFY, "" },
			{ wds[0], IN_CLOSE_WRITE, "" },
		};
		expect(ifd, "ns-exit: events from the child's namespace", wds,
		       names, 1, exp, 2);
	}

	tell(&ch, 'x');
	end_child(&ch);
	{
		const struct ev exp[] = {
			{ wds[0], IN_UNMOUNT, "" }, { wds[0], IN_IGNORED, "" },
		};
		expect(ifd, "ns-exit: the namespace's end ends the watch", wds,
		       names, 1, exp, 2);
	}
	close(ifd);
	rmdir(m);
}

static void scenario_shared(void)
{
	const char *const names[] = { "file", "dir" };
	const char *p = at("p3"), *m = at("p3/m");
	struct child ch;
	int ifd, wds[2];

	mkdir(p, 0755);
	xmount("fd_mntns", p, "tmpfs", 0);
	xmount(NULL, p, NULL, MS_SHARED);
	mkdir(m, 0755);
	xmount("fd_mntns", m, "tmpfs", 0);
	write_file(at("p3/m/file"), O_CREAT);
	ifd = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");

	ch = start_child(ifd, m);
	if (!tell(&ch, 'W') || read(ch.ans, wds, sizeof(wds)) != sizeof(wds))
		die("shared: the child could not watch");
	expect(ifd, "shared: watches made in the child's namespace", wds,
	       names, 2, NULL, 0);

	xumount(m, 0);
	{
		const struct ev exp[] = {
			{ wds[0], IN_UNMOUNT, "" }, { wds[0], IN_IGNORED, "" },
			{ wds[1], IN_UNMOUNT | IN_ISDIR, "" },
			{ wds[1], IN_IGNORED, "" },
		};
		expect(ifd, "shared: the parent's umount propagates, ends them",
		       wds, names, 2, exp, 4);
	}
	check("shared: M is gone from the (living) child's namespace too",
	      tell(&ch, 's'));
	tell(&ch, 'x');
	end_child(&ch);
	expect(ifd, "shared: nothing more", wds, names, 2, NULL, 0);
	close(ifd);
	xumount(p, 0);
	rmdir(p);
}

int main(void)
{
	int rc;

	rc = fdtest_probe();
	if (rc)
		return rc;
	fdtest_mkbase();
	rc = fdtest_userns();
	if (rc) {
		rmdir(base);
		return rc;
	}

	scenario_child_watch();
	scenario_ns_exit();
	scenario_shared();

	rmdir(base);
	printf("fd_mntns: %s\n", failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}
