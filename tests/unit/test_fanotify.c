// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fanotify backend (INOFD_FORCE_FANOTIFY) on the host's stock kernel:
 * unprivileged fanotify with FAN_REPORT_DFID_NAME works from 5.13 on, so
 * these run as any user.  What fanotify cannot report is pinned here too
 * (README, inofd_backend(3)): a test fails the day it starts to.
 */
#include "unit.h"

#include <sched.h>
#include <sys/mount.h>

static int fan_new(struct fx *f)
{
	struct inofd_opts o = { .sz = sizeof(o),
				.flags = INOFD_FORCE_FANOTIFY };
	int r = inofd_new(&f->in, &o);

	if (r == -ENOSYS || r == -EPERM)
		return -1;	/* no (unprivileged) fanotify: skipped */
	assert_int_equal(r, 0);
	assert_int_equal(inofd_backend(f->in), INOFD_BACKEND_FANOTIFY);
	return 0;
}

#define FAN_OR_SKIP(f)	do { if (fan_new(f)) { \
	print_message("no unprivileged fanotify here: skipped\n"); \
	skip(); } } while (0)

static int watch_dir(struct fx *f, const char *rel, uint32_t mask, int oflag)
{
	int fd = open(P(f, rel), oflag | O_DIRECTORY), wd;

	assert_true(fd >= 0);
	wd = inofd_watch_fd(f->in, fd, mask, f);
	close(fd);
	return wd;
}

/* names, IN_ISDIR, renames paired, the end of a watch */
static void fan_flat(void **state)
{
	struct fx *f = *state;
	int wd, i;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "d"));
	wd = watch_dir(f, "d", IN_CREATE | IN_DELETE | IN_MOVE | IN_ATTRIB |
		       IN_CLOSE_WRITE | IN_DELETE_SELF, O_PATH);
	assert_true(wd >= 0);
	mkfile(P(f, "d/a"));
	assert_int_equal(rename(P(f, "d/a"), P(f, "d/b")), 0);
	mkdirp(P(f, "d/s"));
	assert_int_equal(chmod(P(f, "d/b"), 0600), 0);
	assert_int_equal(unlink(P(f, "d/b")), 0);
	drain(f, 50);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_CREATE, "a") >= 0);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_CLOSE_WRITE, "a") >= 0);
	i = find(f, INOFD_EV_RENAME, IN_MOVE, "b");
	assert_true(i >= 0);
	assert_string_equal(f->r[i].from_name, "a");
	assert_int_equal(f->r[i].from_wd, wd);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_CREATE | IN_ISDIR, "s") >= 0);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_ATTRIB, "b") >= 0);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_DELETE, "b") >= 0);
	/* a file's events carry no IN_ISDIR */
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE | IN_ISDIR, "a"), 0);
	assert_int_equal(rmdir(P(f, "d/s")), 0);
	assert_int_equal(rmdir(P(f, "d")), 0);
	drain(f, 50);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_DELETE_SELF, NULL) >= 0);
	/* IN_IGNORED made from FAN_DELETE_SELF, once */
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 1);
	assert_int_equal(inofd_watch_count(f->in), 0);
}

/* a move out of and into the watched directory: unpaired halves */
static void fan_move_out_in(void **state)
{
	struct fx *f = *state;
	int wd;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "d"));
	mkdirp(P(f, "o"));
	mkfile(P(f, "d/x"));
	mkfile(P(f, "o/y"));
	wd = watch_dir(f, "d", IN_MOVE, O_RDONLY);
	assert_true(wd >= 0);
	assert_int_equal(rename(P(f, "d/x"), P(f, "o/x")), 0);
	assert_int_equal(rename(P(f, "o/y"), P(f, "d/y")), 0);
	drain(f, 60);
	assert_int_equal(count(f, INOFD_EV_MOVE_OUT, IN_MOVED_FROM, "x"), 1);
	assert_int_equal(count(f, INOFD_EV_MOVE_IN, IN_MOVED_TO, "y"), 1);
	assert_int_equal(count(f, INOFD_EV_RENAME, 0, NULL), 0);
}

/* one object, one wd: as inotify, whatever fd names it */
static void fan_same_object(void **state)
{
	struct fx *f = *state;
	struct stat st;
	int a, b, c, fd;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "d"));
	mkdirp(P(f, "e"));
	a = watch_dir(f, "d", IN_CREATE, O_PATH);
	b = watch_dir(f, "d", IN_DELETE, O_RDONLY);
	c = watch_dir(f, "e", IN_CREATE, O_RDONLY);
	assert_true(a >= 0 && b >= 0 && c >= 0 && a != b);
	assert_int_equal(stat(P(f, "d"), &st), 0);
	assert_true(inofd__kwd_of(f->in, st.st_dev, st.st_ino) > 0);
	fd = open(P(f, "d"), O_PATH | O_DIRECTORY);
	assert_int_equal(inofd_watch_fd(f->in, fd, IN_CREATE | IN_MASK_CREATE,
					NULL), -EEXIST);
	close(fd);
	mkfile(P(f, "d/n"));
	mkfile(P(f, "e/n"));
	drain(f, 50);
	/* one create in d reported to a (wants it), not to b; one in e */
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, "n"), 2);
}

/* files: by fd (read), by path (opened again), O_PATH refused */
static void fan_files(void **state)
{
	struct fx *f = *state;
	int fd, a, b;

	FAN_OR_SKIP(f);
	mkfile(P(f, "f"));
	mkfile(P(f, "g"));
	fd = open(P(f, "f"), O_RDONLY);
	a = inofd_watch_fd(f->in, fd, IN_MODIFY | IN_ATTRIB, "f");
	close(fd);
	assert_true(a >= 0);
	b = inofd_watch_path(f->in, P(f, "g"), IN_MODIFY, "g");
	assert_true(b >= 0);
	fd = open(P(f, "f"), O_PATH);
	assert_int_equal(inofd_watch_fd(f->in, fd, IN_MODIFY, NULL), -EBADF);
	close(fd);
	fd = open(P(f, "f"), O_RDONLY);
	/* no fanotify equivalent: refused, not ignored */
	assert_int_equal(inofd_watch_fd(f->in, fd, IN_MODIFY | IN_EXCL_UNLINK,
					NULL), -EINVAL);
	assert_int_equal(inofd_watch_fd(f->in, fd, IN_MODIFY | IN_ONLYDIR,
					NULL), -ENOTDIR);
	close(fd);
	fd = open(P(f, "f"), O_WRONLY);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	fd = open(P(f, "g"), O_WRONLY);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_int_equal(chmod(P(f, "f"), 0600), 0);
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_MODIFY, NULL), 2);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_ATTRIB, NULL), 1);
	/* a file watch's events have no name */
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_MODIFY, "f"), 0);
}

/*
 * Pinned: inofd_watch_at() of a regular file opens it again for reading
 * (fanotify does not take O_PATH descriptors of files): its close after
 * the mark is an IN_CLOSE_NOWRITE of the new watch, and a watch of the
 * directory sees the open and the close.  A symlink itself is marked by
 * name.
 */
static void fan_at_reopen(void **state)
{
	struct fx *f = *state;
	int d, w, l, i, n;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "d"));
	mkfile(P(f, "d/g"));
	assert_int_equal(symlink("g", P(f, "d/l")), 0);
	d = watch_dir(f, "d", IN_OPEN | IN_CLOSE_NOWRITE, O_RDONLY);
	assert_true(d >= 0);
	w = inofd_watch_path(f->in, P(f, "d/g"), IN_CLOSE_NOWRITE, "g");
	assert_true(w >= 0);
	l = inofd_watch_at(f->in, AT_FDCWD, P(f, "d/l"), IN_DELETE_SELF,
			   INOFD_AT_SYMLINK_NOFOLLOW, "l");
	assert_true(l >= 0);
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_OPEN, "g"), 1);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CLOSE_NOWRITE, "g"), 1);
	for (i = 0, n = 0; i < f->n; i++)
		n += f->r[i].wd == w && f->r[i].mask == IN_CLOSE_NOWRITE &&
		     !f->r[i].name[0];
	assert_int_equal(n, 1);
	f->n = 0;
	assert_int_equal(unlink(P(f, "d/l")), 0);
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_DELETE_SELF, NULL), 1);
	assert_int_equal(f->r[find(f, INOFD_EV_INOTIFY, IN_DELETE_SELF, NULL)].wd, l);
}

/* the library's own removal: its IN_IGNORED, and nothing after */
static void fan_unwatch(void **state)
{
	struct fx *f = *state;
	int wd;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "d"));
	wd = watch_dir(f, "d", IN_CREATE, O_RDONLY);
	assert_true(wd >= 0);
	assert_int_equal(inofd_unwatch(f->in, wd), 0);
	mkfile(P(f, "d/late"));
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 1);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, NULL), 0);
	/* watched again: a new registration that sees new events */
	wd = watch_dir(f, "d", IN_CREATE, O_RDONLY);
	assert_true(wd >= 0);
	mkfile(P(f, "d/again"));
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, "again"), 1);
}

/*
 * A watch sees the events that come after it only, as with inotify: here
 * a modification queued by the directory's mark (with the file's FID)
 * before the file is watched, and a rename queued by the mark of a watch
 * removed and made again.
 */
static void fan_birth(void **state)
{
	struct fx *f = *state;
	int d, fd, w;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "d"));
	mkfile(P(f, "d/f"));
	d = watch_dir(f, "d", IN_MODIFY | IN_MOVE, O_RDONLY);
	assert_true(d >= 0);
	fd = open(P(f, "d/f"), O_WRONLY);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	assert_true(inofd_watch_path(f->in, P(f, "d/f"), IN_MODIFY, "f") >= 0);
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_MODIFY, "f"), 1);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_MODIFY, NULL), 1);
	/* the directory's watch removed, a rename, the watch again */
	assert_int_equal(inofd_unwatch(f->in, d), 0);
	mkfile(P(f, "d/g"));
	assert_int_equal(rename(P(f, "d/g"), P(f, "d/h")), 0);
	w = watch_dir(f, "d", IN_MOVE, O_RDONLY);
	assert_true(w >= 0);
	f->n = 0;
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_RENAME, 0, NULL), 0);
	assert_int_equal(count(f, INOFD_EV_MOVE_IN, 0, NULL), 0);
	assert_int_equal(count(f, INOFD_EV_MOVE_OUT, 0, NULL), 0);
}

/*
 * fanotify merges an event into an identical one still queued: a -> b,
 * b -> a, a -> b before a read is read as a -> b, b -> a.  The rename
 * back may hide such a merge: the library reports a loss (a RESCAN),
 * never the wrong last name without one.
 */
static void fan_merged_renames(void **state)
{
	struct fx *f = *state;
	int wd;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "d"));
	mkfile(P(f, "d/a"));
	wd = watch_dir(f, "d", IN_MOVE, O_RDONLY);
	assert_true(wd >= 0);
	assert_int_equal(rename(P(f, "d/a"), P(f, "d/b")), 0);
	assert_int_equal(rename(P(f, "d/b"), P(f, "d/a")), 0);
	assert_int_equal(rename(P(f, "d/a"), P(f, "d/b")), 0);
	drain(f, 50);
	/* as read: two renames (the third merged into the first) */
	assert_int_equal(count(f, INOFD_EV_RENAME, 0, NULL), 2);
	assert_int_equal(count(f, INOFD_EV_RESCAN, 0, NULL), 1);
	/* one rename, read before the next: no loss */
	f->n = 0;
	assert_int_equal(rename(P(f, "d/b"), P(f, "d/c")), 0);
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_RENAME, 0, "c"), 1);
	assert_int_equal(count(f, INOFD_EV_RESCAN, 0, NULL), 0);
}

/*
 * fanotify merges a directory's FAN_DELETE_SELF into an earlier event of
 * it still queued (here the MOVE_SELF of its rename), so the end is read
 * before records queued ahead of the deletion: w's rename out of d, then
 * a file made in w.  The end comes after what the group held (the oracle's
 * -W seeds 50047, 50064, 50052 on fanotify): w is renamed, not lost and
 * moved in again, and the file's event is reported.
 */
static void fan_merged_delete_self(void **state)
{
	struct fx *f = *state;
	int root;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/d0"));
	mkdirp(P(f, "t/d0/w"));
	root = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_ALL_EVENTS,
				   NULL);
	assert_true(root >= 0);
	drain(f, 30);
	f->n = 0;
	assert_int_equal(rename(P(f, "t/d0"), P(f, "t/d")), 0);
	assert_int_equal(rename(P(f, "t/d/w"), P(f, "t/w2")), 0);
	assert_int_equal(rmdir(P(f, "t/d")), 0);
	mkfile(P(f, "t/w2/f"));
	drain(f, 50);
	if (count(f, INOFD_EV_RENAME, 0, "w2") != 1)
		dump(f);
	assert_int_equal(count(f, INOFD_EV_RENAME, 0, "w2"), 1);
	assert_int_equal(count(f, INOFD_EV_MOVE_IN, 0, NULL), 0);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, "f"), 1);
	assert_string_equal(f->r[find(f, INOFD_EV_INOTIFY, IN_CREATE, "f")].path,
			    P(f, "t/w2/f"));
	assert_int_equal(count(f, INOFD_EV_RESCAN, 0, NULL), 0);
	/* d's end came, and only its watch went */
	assert_int_equal(inofd_watch_count(f->in), 2);
}

/* FAN_Q_OVERFLOW is INOFD_EV_RESCAN, as IN_Q_OVERFLOW is */
static void fan_overflow(void **state)
{
	struct fx *f = *state;
	char name[32];
	int wd, i, n;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "d"));
	wd = watch_dir(f, "d", IN_CREATE, O_RDONLY);
	assert_true(wd >= 0);
	/* the unprivileged queue: 16,384 events (max_queued_events) */
	n = 17000;
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "d/%d", i);
		mkfile(P(f, name));
	}
	f->ignore = IN_CREATE;		/* more than f->r holds */
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_RESCAN, 0, NULL), 1);
	/* the live marks, read from the group's fdinfo after the loss:
	 * the directory's is there, its watch stays */
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 0);
	assert_int_equal(inofd_watch_count(f->in), 1);
}

/*
 * Limit (pinned): an event on a subdirectory itself (here IN_ATTRIB) is
 * not reported to its parent's watch with its name: fanotify names the
 * subdirectory by its own handle.  A watch on the subdirectory sees it.
 */
static void fan_limit_subdir_self(void **state)
{
	struct fx *f = *state;
	int p, s;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "d"));
	mkdirp(P(f, "d/s"));
	mkfile(P(f, "d/file"));
	p = watch_dir(f, "d", IN_ATTRIB, O_RDONLY);
	assert_true(p >= 0);
	assert_int_equal(chmod(P(f, "d/s"), 0700), 0);
	assert_int_equal(chmod(P(f, "d/file"), 0600), 0);
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_ATTRIB, "file"), 1);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_ATTRIB | IN_ISDIR, "s"), 0);
	s = watch_dir(f, "d/s", IN_ATTRIB, O_RDONLY);
	assert_true(s >= 0);
	f->n = 0;
	assert_int_equal(chmod(P(f, "d/s"), 0755), 0);
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_ATTRIB | IN_ISDIR, NULL), 1);
	assert_int_equal(f->r[find(f, INOFD_EV_INOTIFY, IN_ATTRIB, NULL)].wd, s);
}

/*
 * Limit (pinned): no IN_UNMOUNT.  fanotify drops inode marks at unmount
 * and says nothing; the watch stays in the library's table.
 */
static int unmount_child(void *arg)
{
	struct fx *f = arg;
	const struct inofd_event *ev;
	char mnt[PATH_MAX];
	int fd, wd, n = 0;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 77;
	snprintf(mnt, sizeof(mnt), "%s/m", f->dir);
	if (mkdir(mnt, 0755) < 0 || mount("none", mnt, "tmpfs", 0, NULL) < 0)
		return 77;
	fd = open(mnt, O_RDONLY | O_DIRECTORY);
	wd = inofd_watch_fd(f->in, fd, IN_CREATE | IN_UNMOUNT, NULL);
	close(fd);
	if (wd == -ENODEV || wd == -EXDEV)
		return 77;	/* tmpfs without a usable fsid here */
	if (wd < 0)
		return 2;
	if (umount(mnt) < 0)
		return 77;
	usleep(20000);
	if (inofd_read(f->in) < 0)
		return 3;
	while (inofd_next(f->in, &ev) > 0)
		n++;
	if (n)
		return 4;	/* IN_UNMOUNT or IN_IGNORED: the limit is gone */
	return inofd_watch_count(f->in) == 1 ? 0 : 5;
}

static void fan_limit_no_unmount(void **state)
{
	struct fx *f = *state;
	int r;

	FAN_OR_SKIP(f);
	r = in_child(unmount_child, f);
	if (r == 77) {
		print_message("cannot mount tmpfs in a user namespace: skipped\n");
		skip();
	}
	assert_int_equal(r, 0);
}

/* the automatic choice never picks fanotify while /proc is there */
static void fan_auto_order(void **state)
{
	struct fx *f = *state;

	assert_int_equal(inofd_new(&f->in, NULL), 0);
	assert_int_not_equal(inofd_backend(f->in), INOFD_BACKEND_FANOTIFY);
	inofd_free(f->in);
	f->in = NULL;
	setenv("INOFD_BACKEND", "fanotify", 1);
	if (inofd_new(&f->in, NULL) == 0)
		assert_int_equal(inofd_backend(f->in), INOFD_BACKEND_FANOTIFY);
	unsetenv("INOFD_BACKEND");
	inofd_free(f->in);
	f->in = NULL;
	/* two forced backends at once: refused */
	assert_int_equal(inofd_new(&f->in, &(struct inofd_opts){
			.sz = sizeof(struct inofd_opts),
			.flags = INOFD_FORCE_FANOTIFY | INOFD_FORCE_PROCFD }),
			-EINVAL);
}

/*
 * The same merge above a tree's root: a -> a1, a1 -> a, a -> a1, a file
 * made and deleted in the tree, a1 -> a, read as a -> a1, a1 -> a.  The
 * root is found by inode where it was (a/p/t), so the file's events must
 * say their path may be stale: unflagged, a/p/t/f names a path that never
 * was (oracle seed 180053 -N -C -E).
 */
static void fan_merged_renames_above_root(void **state)
{
	struct fx *f = *state;
	INOFD_TREE_OPTS(to, .data = "tree");
	int i, n = 0;

	FAN_OR_SKIP(f);
	mkdirp(P(f, "a"));
	mkdirp(P(f, "a/p"));
	mkdirp(P(f, "a/p/t"));
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "a/p/t"),
					IN_CREATE | IN_DELETE, &to) >= 0);
	assert_int_equal(rename(P(f, "a"), P(f, "a1")), 0);
	assert_int_equal(rename(P(f, "a1"), P(f, "a")), 0);
	assert_int_equal(rename(P(f, "a"), P(f, "a1")), 0);
	mkfile(P(f, "a1/p/t/f"));
	assert_int_equal(unlink(P(f, "a1/p/t/f")), 0);
	assert_int_equal(rename(P(f, "a1"), P(f, "a")), 0);
	drain(f, 50);
	for (i = 0; i < f->n; i++) {
		if (strcmp(f->r[i].name, "f"))
			continue;
		n++;
		if (!strcmp(f->r[i].path, P(f, "a/p/t/f")) &&
		    !(f->r[i].flags & INOFD_EVF_STALE_PATH)) {
			dump(f);
			fail_msg("a/p/t/f, unflagged: it never had that path");
		}
	}
	assert_int_equal(n, 2);
	assert_true(find(f, INOFD_EV_RESCAN, 0, NULL) >= 0);
}

DEFINE_TESTS(fanotify,
	TN(fan_flat),
	TN(fan_move_out_in),
	TN(fan_same_object),
	TN(fan_files),
	TN(fan_at_reopen),
	TN(fan_unwatch),
	TN(fan_birth),
	TN(fan_merged_renames),
	TN(fan_merged_renames_above_root),
	TN(fan_merged_delete_self),
	TN(fan_overflow),
	TN(fan_limit_subdir_self),
	TN(fan_limit_no_unmount),
	TN(fan_auto_order),
)
