// SPDX-License-Identifier: GPL-2.0
/*
 * fd_overlay: on overlayfs, a watch by a closed fd reports what a path
 * watch on the same object reports, before and after copy-up.
 *
 * A tmpfs holds lower/ (file, dir/, dir/inner), upper/ and work/; the
 * overlay is mounted at merged/.  Two instances watch merged, merged/file,
 * merged/dir and merged/dir/inner: one with inotify_add_watch(), one with
 * INOTIFY_IOC_WATCH on descriptors closed at once (O_RDONLY and O_PATH
 * files, O_RDONLY and O_PATH directories).  The watches are made while
 * everything is still only on the lower layer.  Then, through the
 * overlay: a read (no copy-up), a chmod and an append to file (copy-up),
 * a write to dir/inner (copy-up of dir and inner), a create, rename and
 * unlink in dir, a rename of file into dir and its unlink (whiteout),
 * mkdir/rmdir, and the unmount of the overlay.
 *
 * Checked: both instances' watches sit on the same inodes (ino and sdev
 * in /proc/self/fdinfo, sdev being the overlay's, not the layers'); the
 * two event streams are equal field by field (watch by label, mask,
 * cookie pattern, name); the fd stream has the events the script must
 * make (IN_ATTRIB and IN_MODIFY after copy-up, IN_MOVE_SELF,
 * IN_DELETE_SELF, IN_UNMOUNT, IN_IGNORED); copy-up really happened
 * (upper/dir/inner exists).  It mounts: as root, or as any other user in a
 * user and mount namespace of its own (fdtest_userns(); overlayfs may be
 * mounted there since 5.11).  Exit 0 pass, 1 fail, 4 skip (no user
 * namespace for a user; no overlayfs; no INOTIFY_IOC_WATCH and
 * REQUIRE_INOTIFY_WATCH unset).
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#define TEST_NAME "fd_overlay"
#include "fdtest.h"

#define NW	4
#define MAXEV	256

enum { BY_PATH, BY_FD };

struct ev {
	int wd;
	unsigned int mask;
	unsigned int cookie;
	char name[32];
};

static const char *const wlabel[NW] = { "root", "file", "dir", "inner" };
static const char *const wpath[NW] = { "merged", "merged/file",
				       "merged/dir", "merged/dir/inner" };
static const int wflags[NW] = { O_PATH, O_RDONLY, O_RDONLY | O_DIRECTORY,
				O_PATH };


static int drain(int ifd, struct ev *out, int max)
{
	union {
		struct inotify_event e;
		char buf[8192];
	} u;
	int n = 0;

	for (;;) {
		ssize_t len = read(ifd, u.buf, sizeof(u.buf));
		char *q;

		if (len < 0) {
			if (errno == EAGAIN)
				return n;
			die("read");
		}
		for (q = u.buf; q < u.buf + len;) {
			struct inotify_event *e = (struct inotify_event *)q;

			if (out && n < max) {
				out[n].wd = e->wd;
				out[n].mask = e->mask;
				out[n].cookie = e->cookie;
				snprintf(out[n].name, sizeof(out[n].name),
					 "%s", e->len ? e->name : "");
			}
			n++;
			q += sizeof(*e) + e->len;
		}
	}
}

static void write_file(const char *path, const char *data, int flags)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC | flags, 0644);

	if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data))
		die("write %s", path);
	close(fd);
}

static void xmkdir(const char *path)
{
	if (mkdir(path, 0755))
		die("mkdir %s", path);
}

/* "ino sdev" of every watch in @ifd's fdinfo, sorted by wd into @out */
static int fdinfo_inodes(int ifd, const int *wds, char out[NW][64])
{
	char path[64], line[512];
	int n = 0, i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ifd);
	f = fopen(path, "r");
	if (!f)
		die("open %s", path);
	for (i = 0; i < NW; i++)
		out[i][0] = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long ino;
		unsigned int sdev;
		int wd;

		/* wd in hex; sdev is the kernel's dev_t: 12 + 20 bits */
		if (sscanf(line, "inotify wd:%x ino:%lx sdev:%x", &wd, &ino,
			   &sdev) != 3)
			continue;
		for (i = 0; i < NW; i++)
			if (wds[i] == wd)
				snprintf(out[i], sizeof(out[i]),
					 "ino %lu sdev %u:%u", ino,
					 sdev >> 20, sdev & 0xfffff);
		n++;
	}
	fclose(f);
	return n;
}

static const char *label(const int *wds, int wd)
{
	int i;

	for (i = 0; i < NW; i++)
		if (wds[i] == wd)
			return wlabel[i];
	return "?";
}

/* event @i of @s as text, cookies numbered by first appearance */
static void fmt(const struct ev *s, int i, const int *wds, char *buf,
		size_t size)
{
	int j, c = 0, k = 0;

	if (s[i].cookie) {
		for (j = 0; j <= i; j++) {
			int seen = 0, l;

			if (!s[j].cookie)
				continue;
			for (l = 0; l < j; l++)
				if (s[l].cookie == s[j].cookie)
					seen = 1;
			if (!seen)
				k++;
			if (s[j].cookie == s[i].cookie) {
				c = k;
				break;
			}
		}
	}
	snprintf(buf, size, "%-5s mask=0x%08x cookie=%d name=%s",
		 label(wds, s[i].wd), s[i].mask, c, s[i].name);
}

static int has(const struct ev *s, int n, const int *wds, const char *lbl,
	       unsigned int mask)
{
	int i;

	for (i = 0; i < n; i++)
		if ((s[i].mask & mask) == mask &&
		    !strcmp(label(wds, s[i].wd), lbl))
			return 1;
	return 0;
}

static void script(void)
{
	char buf[64];
	int fd;

	/* a read: no copy-up */
	fd = open(at("merged/file"), O_RDONLY | O_CLOEXEC);
	if (fd < 0 || read(fd, buf, sizeof(buf)) < 0)
		die("read merged/file");
	close(fd);
	/* metadata then data: copy-up of file */
	if (chmod(at("merged/file"), 0600))
		die("chmod");
	write_file(at("merged/file"), "more\n", O_APPEND);
	/* copy-up of dir and dir/inner */
	write_file(at("merged/dir/inner"), "more\n", O_APPEND);
	write_file(at("merged/dir/new"), "new\n", O_CREAT | O_EXCL);
	if (rename(at("merged/dir/new"), at("merged/dir/new2")) ||
	    unlink(at("merged/dir/new2")))
		die("rename/unlink in dir");
	if (rename(at("merged/file"), at("merged/dir/moved")))
		die("rename file into dir");
	if (unlink(at("merged/dir/moved")))
		die("unlink moved file");
	xmkdir(at("merged/dir/sub"));
	if (rmdir(at("merged/dir/sub")))
		die("rmdir");
	if (umount(at("merged")))
		die("umount overlay");
}

int main(void)
{
	static struct ev s[2][MAXEV];
	char ino[2][NW][64], opts[1200], a[128], b[128];
	int ifd[2], wds[2][NW], n[2], i, bad = 0, nw[2], rc;
	struct stat st_merged, st;

	rc = fdtest_probe();
	if (rc)
		return rc;
	fdtest_mkbase();
	rc = fdtest_userns();
	if (rc) {
		rmdir(base);
		return rc;
	}

	/* the layers on a tmpfs of their own */
	xmkdir(at("layers"));
	if (mount("fd_overlay", at("layers"), "tmpfs", 0, NULL))
		die("mount tmpfs");
	xmkdir(at("layers/lower"));
	xmkdir(at("layers/upper"));
	xmkdir(at("layers/work"));
	xmkdir(at("layers/lower/dir"));
	write_file(at("layers/lower/file"), "lower\n", O_CREAT);
	write_file(at("layers/lower/dir/inner"), "inner\n", O_CREAT);
	xmkdir(at("merged"));
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s",
		 at("layers/lower"), at("layers/upper"), at("layers/work"));
	if (mount("overlay", at("merged"), "overlay", 0, opts)) {
		if (errno == ENODEV) {
			printf("skip fd_overlay: no overlayfs in this "
			       "kernel\n");
			umount(at("layers"));
			return 4;
		}
		die("mount overlay");
	}
	if (stat(at("merged"), &st_merged) || stat(at("layers/upper/dir"),
						    &st) == 0)
		die("overlay not as expected before the watches");

	for (i = BY_PATH; i <= BY_FD; i++) {
		ifd[i] = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
		if (ifd[i] < 0)
			die("inotify_init1");
	}
	for (i = 0; i < NW; i++) {
		int fd;

		wds[BY_PATH][i] = syscall(SYS_inotify_add_watch, ifd[BY_PATH],
					  at(wpath[i]), IN_ALL_EVENTS);
		if (wds[BY_PATH][i] < 0)
			die("inotify_add_watch %s", wpath[i]);
		fd = open(at(wpath[i]), wflags[i] | O_CLOEXEC);
		if (fd < 0)
			die("open %s", wpath[i]);
		wds[BY_FD][i] = watch_fd(ifd[BY_FD], fd, IN_ALL_EVENTS);
		if (wds[BY_FD][i] < 0)
			die("INOTIFY_IOC_WATCH %s", wpath[i]);
		close(fd);
	}
	/* the fds' own open and close events are not compared */
	drain(ifd[BY_PATH], NULL, 0);
	drain(ifd[BY_FD], NULL, 0);

	for (i = BY_PATH; i <= BY_FD; i++)
		nw[i] = fdinfo_inodes(ifd[i], wds[i], ino[i]);
	check("4 watches in each instance", nw[0] == NW && nw[1] == NW);
	for (i = 0; i < NW; i++) {
		char what[200], want[64];

		snprintf(want, sizeof(want), "sdev %u:%u",
			 major(st_merged.st_dev), minor(st_merged.st_dev));
		snprintf(what, sizeof(what),
			 "%s: fd watch on the path watch's inode (%s), "
			 "the overlay's (%s)", wlabel[i], ino[BY_FD][i], want);
		check(what, ino[BY_FD][i][0] &&
		      !strcmp(ino[BY_FD][i], ino[BY_PATH][i]) &&
		      strstr(ino[BY_FD][i], want) &&
		      !strcmp(strstr(ino[BY_FD][i], want), want));
	}

	script();
	check("copy-up happened (upper/dir/inner exists)",
	      stat(at("layers/upper/dir/inner"), &st) == 0);
	n[BY_PATH] = drain(ifd[BY_PATH], s[BY_PATH], MAXEV);
	n[BY_FD] = drain(ifd[BY_FD], s[BY_FD], MAXEV);
	if (n[0] > MAXEV || n[1] > MAXEV)
		die("more than %d events", MAXEV);

	for (i = 0; i < n[0] || i < n[1]; i++) {
		if (i < n[0])
			fmt(s[0], i, wds[0], a, sizeof(a));
		else
			snprintf(a, sizeof(a), "(none)");
		if (i < n[1])
			fmt(s[1], i, wds[1], b, sizeof(b));
		else
			snprintf(b, sizeof(b), "(none)");
		if (strcmp(a, b) || getenv("FD_OVERLAY_VERBOSE")) {
			if (strcmp(a, b) && !bad++)
				printf("     streams differ (- path, + fd):\n");
			printf("  %3d - %s\n", i, a);
			printf("  %3d + %s\n", i, b);
		}
	}
	snprintf(a, sizeof(a), "the two streams are equal (%d events by path, "
		 "%d by fd)", n[0], n[1]);
	check(a, !bad);
	check("file: IN_ATTRIB (chmod, copy-up)",
	      has(s[1], n[1], wds[1], "file", IN_ATTRIB));
	check("file: IN_MODIFY after copy-up",
	      has(s[1], n[1], wds[1], "file", IN_MODIFY));
	check("inner: IN_MODIFY after copy-up",
	      has(s[1], n[1], wds[1], "inner", IN_MODIFY));
	check("dir: IN_CREATE, IN_MOVED_TO, IN_DELETE",
	      has(s[1], n[1], wds[1], "dir", IN_CREATE) &&
	      has(s[1], n[1], wds[1], "dir", IN_MOVED_TO) &&
	      has(s[1], n[1], wds[1], "dir", IN_DELETE));
	check("root: IN_MOVED_FROM",
	      has(s[1], n[1], wds[1], "root", IN_MOVED_FROM));
	check("file: IN_MOVE_SELF, IN_DELETE_SELF, IN_IGNORED",
	      has(s[1], n[1], wds[1], "file", IN_MOVE_SELF) &&
	      has(s[1], n[1], wds[1], "file", IN_DELETE_SELF) &&
	      has(s[1], n[1], wds[1], "file", IN_IGNORED));
	check("dir, inner, root: IN_UNMOUNT and IN_IGNORED",
	      has(s[1], n[1], wds[1], "dir", IN_UNMOUNT) &&
	      has(s[1], n[1], wds[1], "dir", IN_IGNORED) &&
	      has(s[1], n[1], wds[1], "inner", IN_UNMOUNT) &&
	      has(s[1], n[1], wds[1], "inner", IN_IGNORED) &&
	      has(s[1], n[1], wds[1], "root", IN_UNMOUNT) &&
	      has(s[1], n[1], wds[1], "root", IN_IGNORED));

	close(ifd[0]);
	close(ifd[1]);
	if (umount(at("layers")))
		die("umount layers");
	rmdir(at("layers"));
	rmdir(at("merged"));
	rmdir(base);
	printf("fd_overlay: %s\n", failed ? "FAIL" : "PASS");
	return failed ? 1 : 0;
}
