// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Mounts inside a recursive watch (issue 17, finding 4; DESIGN.md, "Mounts
 * inside a tree").  Each test runs in a child in a private mount namespace
 * of its own (unshare(CLONE_NEWNS), then / made private): it needs
 * CAP_SYS_ADMIN and is reported skipped without it.  The child cannot use
 * cmocka's asserts (a failure would jump back into the child's copy of the
 * runner): it returns a code, 0 for a pass, and says what failed on stderr.
 */
#include "unit.h"

#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>


/* A private mount namespace, or -1 (then the test is skipped). */
static int private_ns(void)
{
	if (unshare(CLONE_NEWNS))
		return -1;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	return 0;
}

/* Read in until it is quiet (read_quiet()), its events kept in f->r. */
#define PUMP(in)	collect_quiet((in), 50, 0, f->r, &f->n, MAXREC)

/* the fixture of the test running in this child: seen() looks in its f->r */
static const struct fx *cur;

/* Index of the first event of type (and mask bits, and path) from i, or -1. */
static int seen(int from, int type, uint32_t mask, const char *path)
{
	const struct fx *f = cur;
	int i;

	for (i = from; i < f->n; i++)
		if (f->r[i].type == type && (f->r[i].mask & mask) == mask &&
		    (!path || !strcmp(f->r[i].path, path)))
			return i;
	return -1;
}

static void show(const struct fx *f)
{
	int i;

	for (i = 0; i < f->n; i++)
		fprintf(stderr, "  ev type %d wd %d mask %#x flags %#x err %d %s\n",
			f->r[i].type, f->r[i].wd, f->r[i].mask, f->r[i].flags,
			f->r[i].error, f->r[i].path);
}

static int run(struct fx *f, int (*body)(struct fx *f))
{
	int r;

	if (private_ns())
		return 77;
	f->n = 0;
	cur = f;
	r = body(f);
	if (r)
		show(f);
	return r;
}

static void expect(struct fx *f, int (*fn)(void *))
{
	int r = in_child(fn, f);

	if (r == 77) {
		fprintf(stderr, "test_mounts: no private mount namespace "
			"(needs CAP_SYS_ADMIN): skipped\n");
		skip();
	}
	assert_int_equal(r, 0);
}

/*
 * A tmpfs over a directory of the tree: seen without any inotify event
 * (inofd_fd() wakes), said with a RESCAN naming it, and what is made in
 * it reported; its umount likewise, and the covered directory (with its
 * old entry) is watched again.
 */
static int tmpfs_body(struct fx *f)
{
	struct pollfd p;
	int wd, i;

	MKD(P(f, "t"));
	MKD(P(f, "t/sub"));
	MKF(P(f, "t/sub/old"));
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 2);
	CHECK(PUMP(f->in) >= 0, 3);
	CHECK(inofd_watch_count(f->in) == 2, 4);

	CHECK(mount("inofd", P(f, "t/sub"), "tmpfs", 0, NULL) == 0, 5);
	/* only the mount table changed: the caller's poll wakes */
	p = (struct pollfd){ .fd = inofd_fd(f->in), .events = POLLIN };
	CHECK(poll(&p, 1, 2000) == 1, 6);
	CHECK(PUMP(f->in) >= 0, 7);
	i = seen(0, INOFD_EV_RESCAN, 0, P(f, "t/sub"));
	CHECK(i >= 0 && f->r[i].wd == wd, 8);
	CHECK(f->r[i].flags & INOFD_EVF_SYNTHETIC, 9);
	/* a mount came: no IN_UNMOUNT */
	CHECK(!(f->r[i].mask & IN_UNMOUNT), 9);
	MKF(P(f, "t/sub/new"));
	CHECK(PUMP(f->in) >= 0, 10);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/new")) >= 0, 11);
	CHECK(inofd_watch_count(f->in) == 2, 12);

	i = f->n;
	CHECK(umount(P(f, "t/sub")) == 0, 13);
	CHECK(PUMP(f->in) >= 0, 14);
	CHECK(seen(i, INOFD_EV_RESCAN, 0, P(f, "t/sub")) >= 0, 15);
	/* the mount the tree held went: said once, by the kernel's event
	 * or by the RESCAN */
	CHECK((seen(i, INOFD_EV_RESCAN, IN_UNMOUNT, P(f, "t/sub")) >= 0) +
	      (seen(i, INOFD_EV_INOTIFY, IN_UNMOUNT, P(f, "t/sub")) >= 0) == 1,
	      15);
	CHECK(access(P(f, "t/sub/old"), F_OK) == 0, 16);
	MKF(P(f, "t/sub/again"));
	CHECK(PUMP(f->in) >= 0, 17);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/again")) >= 0, 18);
	CHECK(inofd_watch_count(f->in) == 2, 19);
	/* no error: nothing was lost for good */
	CHECK(seen(0, INOFD_EV_ERROR, 0, NULL) < 0, 20);
	return 0;
}

static int tmpfs_child(void *arg)
{
	return run(arg, tmpfs_body);
}

static void mount_tmpfs_in_tree(void **state)
{
	expect(*state, tmpfs_child);
}

/*
 * A bind mount over a directory of the tree: the covered directory's
 * events (made through a descriptor opened before the mount) are not
 * reported under the path it no longer has; after the umount the bind
 * source, outside the tree, is not reported either (the departed mount's
 * watch is dropped), and the uncovered directory is watched.
 */
static int bind_body(struct fx *f)
{
	int wd, i, cov, fd;

	MKD(P(f, "src"));
	MKD(P(f, "t"));
	MKD(P(f, "t/sub"));
	MKD(P(f, "t/sub/deep"));
	cov = open(P(f, "t/sub"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(cov >= 0, 2);
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 3);
	CHECK(inofd_watch_count(f->in) == 3, 4);

	CHECK(mount(P(f, "src"), P(f, "t/sub"), NULL, MS_BIND, NULL) == 0, 5);
	CHECK(PUMP(f->in) >= 0, 6);
	CHECK(seen(0, INOFD_EV_RESCAN, 0, P(f, "t/sub")) >= 0, 7);
	/* t and the mount's root: the covered sub and sub/deep are moot */
	CHECK(inofd_watch_count(f->in) == 2, 8);
	i = f->n;
	fd = openat(cov, "hidden", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd >= 0, 9);
	close(fd);
	MKF(P(f, "t/sub/vis"));
	CHECK(PUMP(f->in) >= 0, 10);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/vis")) >= 0, 11);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/hidden")) < 0, 12);

	i = f->n;
	CHECK(umount(P(f, "t/sub")) == 0, 13);
	CHECK(PUMP(f->in) >= 0, 14);
	CHECK(seen(i, INOFD_EV_RESCAN, 0, P(f, "t/sub")) >= 0, 15);
	CHECK(inofd_watch_count(f->in) == 3, 16);
	i = f->n;
	MKF(P(f, "src/outside"));
	MKF(P(f, "t/sub/back"));
	MKF(P(f, "t/sub/deep/down"));
	CHECK(PUMP(f->in) >= 0, 17);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/back")) >= 0, 18);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/deep/down")) >= 0, 19);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/outside")) < 0, 20);
	CHECK(f->n - i == 2, 21);
	close(cov);
	return 0;
}

static int bind_child(void *arg)
{
	return run(arg, bind_body);
}

static void mount_bind_in_tree(void **state)
{
	expect(*state, bind_child);
}

/*
 * A directory of the tree renamed while mounted over, and the mount gone in
 * the same batch as a rename of its parent: the umount is placed by the
 * nodes (identity), not by the path the table had when it was mounted.
 */
static int renamed_body(struct fx *f)
{
	int wd, i;

	MKD(P(f, "t"));
	MKD(P(f, "t/a"));
	MKD(P(f, "t/a/sub"));
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 2);
	CHECK(mount("inofd", P(f, "t/a/sub"), "tmpfs", 0, NULL) == 0, 3);
	CHECK(PUMP(f->in) >= 0, 4);
	CHECK(seen(0, INOFD_EV_RESCAN, 0, P(f, "t/a/sub")) >= 0, 5);
	CHECK(rename(P(f, "t/a"), P(f, "t/b")) == 0, 6);
	CHECK(PUMP(f->in) >= 0, 7);
	i = f->n;
	CHECK(umount(P(f, "t/b/sub")) == 0, 8);
	CHECK(rename(P(f, "t/b"), P(f, "t/c")) == 0, 9);
	CHECK(PUMP(f->in) >= 0, 10);
	CHECK(seen(i, INOFD_EV_RESCAN, 0, P(f, "t/c/sub")) >= 0, 11);
	MKF(P(f, "t/c/sub/x"));
	CHECK(PUMP(f->in) >= 0, 12);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/c/sub/x")) >= 0, 13);
	CHECK(inofd_watch_count(f->in) == 3, 14);
	return 0;
}

static int renamed_child(void *arg)
{
	return run(arg, renamed_body);
}

static void mount_umount_after_renames(void **state)
{
	expect(*state, renamed_child);
}

/*
 * A mount inside a mount inside the tree (not drawn by the oracle's -M):
 * each is followed in turn, and each umount gives the directory under it
 * back.
 */
static int nested_body(struct fx *f)
{
	int wd, i;

	MKD(P(f, "t"));
	MKD(P(f, "t/sub"));
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 2);
	CHECK(mount("inofd", P(f, "t/sub"), "tmpfs", 0, NULL) == 0, 3);
	CHECK(PUMP(f->in) >= 0, 4);
	MKD(P(f, "t/sub/in"));
	MKF(P(f, "t/sub/in/under"));
	CHECK(PUMP(f->in) >= 0, 5);
	i = f->n;
	CHECK(mount("inofd", P(f, "t/sub/in"), "tmpfs", 0, NULL) == 0, 6);
	CHECK(PUMP(f->in) >= 0, 7);
	CHECK(seen(i, INOFD_EV_RESCAN, 0, P(f, "t/sub/in")) >= 0, 8);
	MKF(P(f, "t/sub/in/x"));
	CHECK(PUMP(f->in) >= 0, 9);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/in/x")) >= 0, 10);
	CHECK(inofd_watch_count(f->in) == 3, 11);
	i = f->n;
	CHECK(umount(P(f, "t/sub/in")) == 0, 12);
	CHECK(PUMP(f->in) >= 0, 13);
	CHECK(seen(i, INOFD_EV_RESCAN, 0, P(f, "t/sub/in")) >= 0, 14);
	CHECK(access(P(f, "t/sub/in/under"), F_OK) == 0, 15);
	MKF(P(f, "t/sub/in/y"));
	CHECK(PUMP(f->in) >= 0, 16);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/in/y")) >= 0, 17);
	i = f->n;
	CHECK(umount(P(f, "t/sub")) == 0, 18);
	CHECK(PUMP(f->in) >= 0, 19);
	CHECK(seen(i, INOFD_EV_RESCAN, 0, P(f, "t/sub")) >= 0, 20);
	MKF(P(f, "t/sub/z"));
	CHECK(PUMP(f->in) >= 0, 21);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/z")) >= 0, 22);
	CHECK(inofd_watch_count(f->in) == 2, 23);
	return 0;
}

static int nested_child(void *arg)
{
	return run(arg, nested_body);
}

static void mount_nested_in_tree(void **state)
{
	expect(*state, nested_child);
}

/*
 * Limit (DESIGN.md): a mount over the root itself.  The root's path leads
 * to another directory: the tree is lost, said once (INOFD_EVF_LOST), not
 * reported under paths that name the mount's files.
 */
static int over_root_body(struct fx *f)
{
	int wd, i;

	MKD(P(f, "t"));
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 2);
	CHECK(mount("inofd", P(f, "t"), "tmpfs", 0, NULL) == 0, 3);
	CHECK(PUMP(f->in) >= 0, 4);
	i = seen(0, INOFD_EV_ERROR, 0, NULL);
	CHECK(i >= 0 && f->r[i].wd == wd && f->r[i].error == -ESTALE, 5);
	CHECK(f->r[i].flags & INOFD_EVF_LOST, 6);
	MKF(P(f, "t/in-mount"));
	CHECK(PUMP(f->in) >= 0, 7);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, NULL) < 0, 8);
	CHECK(umount(P(f, "t")) == 0, 9);
	return 0;
}

static int over_root_child(void *arg)
{
	return run(arg, over_root_body);
}

static void mount_over_root_is_lost(void **state)
{
	expect(*state, over_root_child);
}

/*
 * A mount change and records in one batch (issue 38, class 4): the mount
 * and the records have no common order, and the records are read before
 * the table.  A mount moved within the tree (mount --move t/m1 t/m2), then
 * a file and a directory made in it: their records name the mount's root
 * by its watch, whose path the tree still has at t/m1 until the table is
 * read.  Each such event is reported at its true path or flagged
 * INOFD_EVF_STALE_PATH, never unflagged under t/m1; after the RESCANs the
 * mount is watched at t/m2.
 */
static int unflagged_under(const struct fx *f, int from, const char *dir)
{
	size_t dl = strlen(dir);
	int i;

	for (i = from; i < f->n; i++)
		if (f->r[i].type != INOFD_EV_RESCAN && f->r[i].path[0] &&
		    !strncmp(f->r[i].path, dir, dl) &&
		    (f->r[i].path[dl] == '/' || !f->r[i].path[dl]) &&
		    !(f->r[i].flags & INOFD_EVF_STALE_PATH))
			return i;
	return -1;
}

static int moved_body(struct fx *f)
{
	int wd, i;

	MKD(P(f, "t"));
	MKD(P(f, "t/m1"));
	MKD(P(f, "t/m2"));
	CHECK(mount("inofd", P(f, "t/m1"), "tmpfs", 0, NULL) == 0, 2);
	MKD(P(f, "t/m1/inmnt"));
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"),
				 IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO, NULL);
	CHECK(wd >= 0, 3);
	CHECK(PUMP(f->in) >= 0, 4);
	i = f->n;
	CHECK(mount(P(f, "t/m1"), P(f, "t/m2"), NULL, MS_MOVE, NULL) == 0, 5);
	MKF(P(f, "t/m2/inmnt/AFTER"));
	MKD(P(f, "t/m2/newdir"));
	CHECK(PUMP(f->in) >= 0, 6);
	CHECK(unflagged_under(f, i, P(f, "t/m1")) < 0, 7);
	CHECK(seen(i, INOFD_EV_RESCAN, 0, P(f, "t/m2")) >= 0, 8);
	i = f->n;
	MKF(P(f, "t/m2/inmnt/LATER"));
	CHECK(PUMP(f->in) >= 0, 9);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/m2/inmnt/LATER")) >= 0,
	      10);
	CHECK(unflagged_under(f, i, P(f, "t/m1")) < 0, 11);
	CHECK(umount(P(f, "t/m2")) == 0, 12);
	return 0;
}

static int moved_child(void *arg)
{
	return run(arg, moved_body);
}

static void mount_move_in_tree(void **state)
{
	expect(*state, moved_child);
}

/*
 * A mount of the tree moved away and back between two reads (oracle seed
 * 310115): the table reads as before, but a directory made in the mount
 * while it was away has a record naming the mount's root by its watch.
 * Its path then (t/x/d) is not the tree's path of the mount (t/m/d):
 * reported there, it must be flagged INOFD_EVF_STALE_PATH.
 */
static int away_body(struct fx *f)
{
	int wd, i;

	MKD(P(f, "t"));
	MKD(P(f, "t/m"));
	MKD(P(f, "t/x"));
	CHECK(mount("inofd", P(f, "t/m"), "tmpfs", 0, NULL) == 0, 2);
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 3);
	CHECK(PUMP(f->in) >= 0, 4);
	i = f->n;
	CHECK(mount(P(f, "t/m"), P(f, "t/x"), NULL, MS_MOVE, NULL) == 0, 5);
	MKD(P(f, "t/x/d"));
	CHECK(mount(P(f, "t/x"), P(f, "t/m"), NULL, MS_MOVE, NULL) == 0, 6);
	CHECK(PUMP(f->in) >= 0, 7);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/m/d")) >= 0 ||
	      seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/x/d")) >= 0, 8);
	CHECK(unflagged_under(f, i, P(f, "t/m")) < 0, 9);
	CHECK(umount(P(f, "t/m")) == 0, 10);
	return 0;
}

static int away_child(void *arg)
{
	return run(arg, away_body);
}

static void mount_moved_away_and_back(void **state)
{
	expect(*state, away_child);
}

/*
 * A tmpfs over the root, and the covered root written through a
 * descriptor in the same batch: the file is in the covered root, not at
 * the path the tree had (which shows the tmpfs now).  Before the LOST its
 * event is flagged INOFD_EVF_STALE_PATH, or has no path.
 */
static int over_root_fd_body(struct fx *f)
{
	int wd, i, dfd, fd;

	MKD(P(f, "t"));
	dfd = open(P(f, "t"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dfd >= 0, 2);
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 3);
	CHECK(PUMP(f->in) >= 0, 4);
	CHECK(mount("inofd", P(f, "t"), "tmpfs", 0, NULL) == 0, 5);
	fd = openat(dfd, "covered", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd >= 0, 6);
	close(fd);
	CHECK(mkdirat(dfd, "cdir", 0755) == 0, 7);
	CHECK(PUMP(f->in) >= 0, 8);
	i = seen(0, INOFD_EV_ERROR, 0, NULL);
	CHECK(i >= 0 && f->r[i].error == -ESTALE, 9);
	CHECK(unflagged_under(f, 0, P(f, "t")) < 0, 10);
	close(dfd);
	CHECK(umount(P(f, "t")) == 0, 11);
	return 0;
}

static int over_root_fd_child(void *arg)
{
	return run(arg, over_root_fd_body);
}

static void mount_over_root_fd_flagged(void **state)
{
	expect(*state, over_root_fd_child);
}

/*
 * Directories made in a directory and then a bind mount over it, in one
 * batch (oracle seed 20105 -P -M -W -Y -C): after the umount the covered
 * directory and what was made in it are watched again, and a file moved
 * out of it is a MOVE_OUT.
 */
static int covered_new_body(struct fx *f)
{
	int wd, i;

	MKD(P(f, "src"));
	MKD(P(f, "out"));
	MKD(P(f, "p"));
	MKD(P(f, "p/t"));
	MKD(P(f, "p/t/a"));
	MKD(P(f, "p/t/a/b"));
	MKD(P(f, "p/t/a/b/c"));
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "p/t"),
				 IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO, NULL);
	CHECK(wd >= 0, 2);
	CHECK(PUMP(f->in) >= 0, 3);
	MKD(P(f, "p/t/a/b/c/d"));
	MKD(P(f, "p/t/a/b/c/d/e"));
	MKF(P(f, "p/t/a/b/f"));
	CHECK(mount(P(f, "src"), P(f, "p/t/a"), NULL, MS_BIND, NULL) == 0, 4);
	CHECK(PUMP(f->in) >= 0, 5);
	CHECK(rename(P(f, "p"), P(f, "q")) == 0, 51);
	CHECK(PUMP(f->in) >= 0, 52);
	CHECK(umount(P(f, "q/t/a")) == 0, 6);
	CHECK(PUMP(f->in) >= 0, 7);
	CHECK(seen(0, INOFD_EV_RESCAN, 0, P(f, "q/t/a")) >= 0, 8);
	i = f->n;
	CHECK(rename(P(f, "q/t/a/b/f"), P(f, "out/f")) == 0, 9);
	MKF(P(f, "q/t/a/b/c/x"));
	CHECK(PUMP(f->in) >= 0, 10);
	CHECK(seen(i, INOFD_EV_MOVE_OUT, 0, P(f, "q/t/a/b/f")) >= 0, 11);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "q/t/a/b/c/x")) >= 0, 12);
	return 0;
}

static int covered_new_child(void *arg)
{
	return run(arg, covered_new_body);
}

static void mount_covered_new_dirs(void **state)
{
	expect(*state, covered_new_child);
}

/*
 * Without the mount table (here /proc/PID/mountinfo covered by /dev/null,
 * which never signals a change) mounts cannot be seen: each tree says so
 * once, with an INOFD_EV_ERROR -EOPNOTSUPP on its root, never silently.
 */
static int no_table_body(struct fx *f)
{
	char p[64];
	struct inofd *in;
	int wd, i;

	snprintf(p, sizeof(p), "/proc/%d/mountinfo", (int)getpid());
	CHECK(mount("/dev/null", p, NULL, MS_BIND, NULL) == 0, 2);
	CHECK(inofd_new(&in, NULL) == 0, 3);
	MKD(P(f, "t"));
	wd = inofd_watch_tree_at(in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 4);
	CHECK(PUMP(in) >= 0, 5);
	i = seen(0, INOFD_EV_ERROR, 0, P(f, "t"));
	CHECK(i >= 0 && f->r[i].wd == wd && f->r[i].error == -EOPNOTSUPP, 6);
	CHECK(!(f->r[i].flags & INOFD_EVF_LOST), 7);
	CHECK(seen(i + 1, INOFD_EV_ERROR, 0, NULL) < 0, 8);
	/* the tree itself works */
	MKF(P(f, "t/x"));
	CHECK(PUMP(in) >= 0, 9);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/x")) >= 0, 10);
	CHECK(strcmp(inofd_strerror(-EOPNOTSUPP), "unknown error"), 11);
	inofd_free(in);
	return 0;
}

static int no_table_child(void *arg)
{
	return run(arg, no_table_body);
}

static void mount_table_missing_said(void **state)
{
	expect(*state, no_table_child);
}

/*
 * One descriptor left for inofd_new(): the instance still works, with the
 * inotify descriptor as inofd_fd() and no mount table; a tree says so.
 */
static int short_fds_body(struct fx *f)
{
	struct rlimit rl = { 64, 64 };
	int d, last = -1, wd, i, fds[64], n = 0;
	struct inofd *in;
	char link[64], buf[64];
	ssize_t k;

	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0, 2);
	while ((d = dup(0)) >= 0 && n < 64)
		fds[n++] = last = d;
	CHECK(last >= 0, 3);
	close(fds[--n]);
	CHECK(inofd_new(&in, NULL) == 0, 4);
	while (n)
		close(fds[--n]);
	snprintf(link, sizeof(link), "/proc/self/fd/%d", inofd_fd(in));
	k = readlink(link, buf, sizeof(buf) - 1);
	CHECK(k > 0, 5);
	buf[k] = '\0';
	CHECK(!strcmp(buf, "anon_inode:inotify"), 6);
	MKD(P(f, "t"));
	wd = inofd_watch_tree_at(in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 7);
	CHECK(PUMP(in) >= 0, 8);
	i = seen(0, INOFD_EV_ERROR, 0, P(f, "t"));
	CHECK(i >= 0 && f->r[i].error == -EOPNOTSUPP, 9);
	MKF(P(f, "t/x"));
	CHECK(PUMP(in) >= 0, 10);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/x")) >= 0, 11);
	inofd_free(in);
	return 0;
}

static int short_fds_child(void *arg)
{
	struct fx *f = arg;
	int r;

	f->n = 0;
	cur = f;
	r = short_fds_body(f);
	if (r)
		show(f);
	return r;
}

static void mount_table_fds_short(void **state)
{
	assert_int_equal(in_child(short_fds_child, *state), 0);
}

/*
 * A tmpfs unmounted and another mounted at the same place in one batch
 * leave the table as it was, line for line (mount id, device number and
 * root reused): every backend missed it (the table was compared by id).
 * On fanotify, a tmpfs's marks die silently with it (no IN_UNMOUNT), so
 * its node stays in the tree; the next tmpfs takes its anonymous device
 * number and its root's inode number.  (dev, ino) alone said "the same":
 * a tmpfs mounted again at the same place, or a tmpfs mounted elsewhere
 * in the tree (shallower, so looked at before the umount's point), was
 * not watched (oracle -B fanotify -M seeds 37, 72; -M -C 10005).
 */
static unsigned int reuse_flags;

static int reuse_body(struct fx *f)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = reuse_flags };
	struct stat a, b;
	int wd, i;

	if (inofd_new(&f->in, &o)) {
		fprintf(stderr, "test_mounts: no such backend: skipped\n");
		return 77;
	}
	MKD(P(f, "t"));
	MKD(P(f, "t/sub"));
	MKD(P(f, "t/y"));
	MKD(P(f, "t/z"));
	MKD(P(f, "t/z/deep"));
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 2);
	CHECK(PUMP(f->in) >= 0, 3);

	/* umount and mount again at one place, in one batch */
	CHECK(mount("inofd", P(f, "t/sub"), "tmpfs", 0, NULL) == 0, 4);
	CHECK(PUMP(f->in) >= 0, 5);
	CHECK(stat(P(f, "t/sub"), &a) == 0, 6);
	CHECK(umount(P(f, "t/sub")) == 0, 7);
	CHECK(mount("inofd", P(f, "t/sub"), "tmpfs", 0, NULL) == 0, 8);
	CHECK(stat(P(f, "t/sub"), &b) == 0, 9);
	if (a.st_dev != b.st_dev || a.st_ino != b.st_ino)
		fprintf(stderr, "test_mounts: the second tmpfs took other "
			"numbers: this kernel does not reuse them\n");
	CHECK(PUMP(f->in) >= 0, 10);
	i = f->n;
	MKF(P(f, "t/sub/new"));
	CHECK(PUMP(f->in) >= 0, 11);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/new")) >= 0, 12);

	/* a deep tmpfs goes, one comes over a shallower directory */
	CHECK(mount("inofd", P(f, "t/z/deep"), "tmpfs", 0, NULL) == 0, 13);
	CHECK(PUMP(f->in) >= 0, 14);
	CHECK(umount(P(f, "t/z/deep")) == 0, 15);
	CHECK(mount("inofd", P(f, "t/y"), "tmpfs", 0, NULL) == 0, 16);
	CHECK(PUMP(f->in) >= 0, 17);
	i = f->n;
	MKF(P(f, "t/y/new"));
	MKF(P(f, "t/z/deep/new"));
	CHECK(PUMP(f->in) >= 0, 18);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/y/new")) >= 0, 19);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/z/deep/new")) >= 0,
	      20);

	/* the same, the old mount point removed (the node stays till a
	 * rescan): a walk must not take the new tmpfs for the dead one */
	MKD(P(f, "t/w"));
	MKD(P(f, "t/z/gone"));
	CHECK(PUMP(f->in) >= 0, 22);
	CHECK(mount("inofd", P(f, "t/z/gone"), "tmpfs", 0, NULL) == 0, 23);
	CHECK(PUMP(f->in) >= 0, 24);
	CHECK(umount(P(f, "t/z/gone")) == 0, 25);
	CHECK(rmdir(P(f, "t/z/gone")) == 0, 26);
	CHECK(mount("inofd", P(f, "t/w"), "tmpfs", 0, NULL) == 0, 27);
	CHECK(PUMP(f->in) >= 0, 28);
	i = f->n;
	MKF(P(f, "t/w/new"));
	CHECK(PUMP(f->in) >= 0, 29);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/w/new")) >= 0, 30);
	CHECK(seen(0, INOFD_EV_ERROR, 0, NULL) < 0, 21);
	umount(P(f, "t/w"));
	umount(P(f, "t/y"));
	umount(P(f, "t/sub"));
	return 0;
}

static int reuse_child(void *arg)
{
	return run(arg, reuse_body);
}

static void mount_tmpfs_reused(void **state)
{
	reuse_flags = INOFD_FORCE_PROCFD;
	expect(*state, reuse_child);
}

static void mount_fan_tmpfs_reused(void **state)
{
	reuse_flags = INOFD_FORCE_FANOTIFY;
	expect(*state, reuse_child);
}

/*
 * A mount beside the root's chain (in the root's parent), and in one batch
 * the root's parent and the root renamed and a mount made elsewhere (the
 * table changed): the side mount's path in the table changed, and it is
 * placed by identity while the records that rename the chain are not
 * parsed yet.  The chain goes on by another name there, an entry that is
 * not the mount point: beside the chain, so nothing of the tree is
 * flagged.  On an overlay without xino, where readdir's d_ino is a
 * layer's inode number and never the merged directory's, the whole tree
 * was flagged INOFD_EVF_STALE_PATH (oracle -F -O -P -C seeds 200309,
 * 200384, 200453, 200521, 200987, BASE an overlay).
 */
static unsigned int beside_flags;

static int beside_body(struct fx *f)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = beside_flags };
	char opts[1024];
	int wd, i;

	if (inofd_new(&f->in, &o)) {
		fprintf(stderr, "test_mounts: no such backend: skipped\n");
		return 77;
	}
	MKD(P(f, "lo"));
	MKD(P(f, "up"));
	MKD(P(f, "o"));
	MKD(P(f, "x"));
	CHECK(mount("inofd", P(f, "lo"), "tmpfs", 0, NULL) == 0, 2);
	CHECK(mount("inofd", P(f, "up"), "tmpfs", 0, NULL) == 0, 3);
	MKD(P(f, "lo/a"));
	MKD(P(f, "lo/a/p"));
	MKD(P(f, "lo/a/p/t"));
	MKD(P(f, "lo/a/p/s"));
	MKD(P(f, "up/u"));
	MKD(P(f, "up/w"));
	/* xino off: d_ino is then a layer's number; redirect_dir: the
	 * lower's directories can be renamed */
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s,"
		 "xino=off,redirect_dir=on", P(f, "lo"), P(f, "up/u"),
		 P(f, "up/w"));
	if (mount("inofd", P(f, "o"), "overlay", 0, opts)) {
		fprintf(stderr, "test_mounts: no overlayfs (%s): skipped\n",
			strerror(errno));
		return 77;
	}
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "o/a/p/t"),
				 IN_CREATE, NULL);
	CHECK(wd >= 0, 4);
	CHECK(mount("inofd", P(f, "o/a/p/s"), "tmpfs", 0, NULL) == 0, 5);
	CHECK(PUMP(f->in) >= 0, 6);
	i = f->n;
	CHECK(mount("inofd", P(f, "x"), "tmpfs", 0, NULL) == 0, 7);
	CHECK(rename(P(f, "o/a/p"), P(f, "o/a/p2")) == 0, 8);
	CHECK(rename(P(f, "o/a/p2/t"), P(f, "o/a/p2/t2")) == 0, 9);
	MKF(P(f, "o/a/p2/t2/f"));
	CHECK(PUMP(f->in) >= 0, 10);
	i = seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "o/a/p2/t2/f"));
	CHECK(i >= 0, 11);
	CHECK(!(f->r[i].flags & INOFD_EVF_STALE_PATH), 12);
	CHECK(seen(0, INOFD_EV_ERROR, 0, NULL) < 0, 13);
	umount(P(f, "x"));
	umount(P(f, "o/a/p2/s"));
	umount(P(f, "o"));
	umount(P(f, "up"));
	umount(P(f, "lo"));
	return 0;
}

static int beside_child(void *arg)
{
	return run(arg, beside_body);
}

static void mount_beside_chain_overlay(void **state)
{
	beside_flags = INOFD_FORCE_PROCFD;
	expect(*state, beside_child);
}

static void mount_fan_beside_chain_overlay(void **state)
{
	beside_flags = INOFD_FORCE_FANOTIFY;
	expect(*state, beside_child);
}

/*
 * The mount holding a tree's root goes away (issue 26, reproduction 4):
 * umount M, or umount -l M, with the tree at M/t, M a tmpfs or a bind
 * mount, on procfd and fanotify.  The tree ends (IN_UNMOUNT, IN_IGNORED:
 * what the kernel says of a tmpfs on inotify; the library says it on
 * fanotify, which has no such event) or is lost (a bind mount: its
 * objects live on, where no path of the tree leads), never silently: and
 * nothing after it has a path.
 */
static int root_mount_variant(struct fx *f, unsigned int flags, bool bind,
			      bool lazy, int k)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = flags };
	char m[64], src[64], t[80], e[96];
	struct inofd *in;
	int wd, i, ended, lost, from = f->n;

	if (inofd_new(&in, &o))
		return 77;
	snprintf(m, sizeof(m), "m%d", k);
	snprintf(src, sizeof(src), "src%d", k);
	MKD(P(f, m));
	if (bind) {
		MKD(P(f, src));
		CHECK(mount(P(f, src), P(f, m), NULL, MS_BIND, NULL) == 0, 40);
	} else {
		CHECK(mount("inofd", P(f, m), "tmpfs", 0, NULL) == 0, 41);
	}
	snprintf(t, sizeof(t), "%s/t", m);
	MKD(P(f, t));
	snprintf(e, sizeof(e), "%s/t/a", m);
	MKD(P(f, e));
	wd = inofd_watch_tree_at(in, AT_FDCWD, P(f, t), IN_CREATE, NULL);
	CHECK(wd >= 0, 42);
	CHECK(collect_quiet(in, 50, 0, f->r, &f->n, MAXREC) >= 0, 43);
	CHECK(umount2(P(f, m), lazy ? MNT_DETACH : 0) == 0, 44);
	CHECK(collect_quiet(in, 50, 0, f->r, &f->n, MAXREC) >= 0, 45);
	ended = lost = 0;
	for (i = from; i < f->n; i++) {
		if (f->r[i].wd != wd)
			continue;
		if (f->r[i].type == INOFD_EV_INOTIFY &&
		    (f->r[i].mask & IN_IGNORED) &&
		    !(f->r[i].flags & INOFD_EVF_MEMBER))
			ended++;
		if (f->r[i].type == INOFD_EV_ERROR &&
		    (f->r[i].flags & INOFD_EVF_LOST))
			lost++;
	}
	if (ended + lost == 0 || ended > 1 || lost > 1)
		fprintf(stderr, "test_mounts: %s%s %s: ended %d lost %d\n",
			lazy ? "lazy " : "", bind ? "bind" : "tmpfs",
			flags == INOFD_FORCE_FANOTIFY ? "fanotify" : "procfd",
			ended, lost);
	CHECK(ended + lost >= 1 && ended <= 1 && lost <= 1, 46);
	CHECK(!ended || inofd_watch_count(in) == 0, 47);
	/* the covered directory gets a t, the bind's source a new entry */
	i = f->n;
	MKD(P(f, t));
	MKD(P(f, e));
	if (bind) {
		snprintf(e, sizeof(e), "%s/t/a/y", src);
		MKF(P(f, e));
	}
	snprintf(e, sizeof(e), "%s/t/a/x", m);
	MKF(P(f, e));
	CHECK(collect_quiet(in, 50, 0, f->r, &f->n, MAXREC) >= 0, 48);
	for (; i < f->n; i++)
		CHECK(f->r[i].wd != wd || !f->r[i].path[0], 49);
	inofd_free(in);
	return 0;
}

static int root_mount_body(struct fx *f)
{
	static const unsigned int be[] = { INOFD_FORCE_PROCFD,
					   INOFD_FORCE_FANOTIFY };
	int k = 0, b, bind, lazy, r;

	for (b = 0; b < 2; b++)
		for (bind = 0; bind < 2; bind++)
			for (lazy = 0; lazy < 2; lazy++) {
				r = root_mount_variant(f, be[b], bind, lazy,
						       k++);
				if (r == 77 && b == 1)
					break;	/* no fanotify here */
				if (r)
					return r;
			}
	return 0;
}

static int root_mount_child(void *arg)
{
	return run(arg, root_mount_body);
}

static void mount_of_root_goes(void **state)
{
	expect(*state, root_mount_child);
}

/*
 * The mountinfo descriptors are made at the first tree, not by inofd_new()
 * (DESIGN.md, "Mounts inside a tree"): an instance without a tree holds
 * two descriptors (the backend's and the epoll instance inofd_fd()
 * returns), one with a tree four, whatever the backend; inofd_fd() keeps
 * its number; inofd_free() gives them all back.
 */

/* Open descriptors of the process (the directory's own not counted). */
static int nfds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;
}

/* Of those, how many are a mountinfo file. */
static int nmountinfo(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char l[PATH_MAX], t[PATH_MAX];
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		ssize_t k;

		if (e->d_name[0] == '.')
			continue;
		snprintf(l, sizeof(l), "/proc/self/fd/%s", e->d_name);
		k = readlink(l, t, sizeof(t) - 1);
		if (k <= 0)
			continue;
		t[k] = '\0';
		k = (ssize_t)strlen(t);
		if (k >= 10 && !strcmp(t + k - 10, "/mountinfo"))
			n++;
	}
	closedir(d);
	return n;
}

/* RLIMIT_NOFILE that leaves exactly k descriptors free (lowest first). */
static int leave_free(int k)
{
	struct rlimit rl;
	int i;

	for (i = 0; k; i++)
		if (fcntl(i, F_GETFD) < 0)
			k--;
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return -1;
	rl.rlim_cur = (rlim_t)i;
	return setrlimit(RLIMIT_NOFILE, &rl);
}

static int count_errors(int wd, int error)
{
	int i, n = 0;

	for (i = 0; i < cur->n; i++)
		if (cur->r[i].type == INOFD_EV_ERROR && cur->r[i].wd == wd &&
		    cur->r[i].error == error)
			n++;
	return n;
}

static unsigned int lazy_flags;

static int lazy_body(struct fx *f)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = lazy_flags };
	int n0 = nfds(), efd, wd, wd2, pw;
	struct inofd *in;

	CHECK(n0 > 0, 2);
	if (inofd_new(&in, &o)) {
		fprintf(stderr, "test_mounts: no such backend: skipped\n");
		return 77;
	}
	efd = inofd_fd(in);
	CHECK(nfds() == n0 + 2, 3);
	CHECK(nmountinfo() == 0, 4);
	MKD(P(f, "t"));
	MKD(P(f, "t/a"));
	MKD(P(f, "u"));
	MKF(P(f, "x"));
	/* a plain watch needs no mount table */
	pw = inofd_watch_path(in, P(f, "x"), IN_ATTRIB, NULL);
	CHECK(pw >= 0, 5);
	CHECK(nfds() == n0 + 2, 6);
	CHECK(nmountinfo() == 0, 7);
	wd = inofd_watch_tree_at(in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 8);
	CHECK(nfds() == n0 + 4, 9);
	CHECK(nmountinfo() == 2, 10);
	CHECK(inofd_fd(in) == efd, 11);
	wd2 = inofd_watch_tree_at(in, AT_FDCWD, P(f, "u"), IN_CREATE, NULL);
	CHECK(wd2 >= 0, 12);
	CHECK(nfds() == n0 + 4, 13);
	CHECK(PUMP(in) >= 0, 14);
	CHECK(seen(0, INOFD_EV_ERROR, 0, NULL) < 0, 15);
	MKF(P(f, "t/a/y"));
	CHECK(PUMP(in) >= 0, 16);
	CHECK(seen(0, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/a/y")) >= 0, 17);
	/* held for the instance's life, as inofd_fd()'s epoll set is */
	CHECK(inofd_unwatch(in, wd) == 0 && inofd_unwatch(in, wd2) == 0, 18);
	CHECK(PUMP(in) >= 0, 19);
	CHECK(nfds() == n0 + 4, 20);
	CHECK(inofd_fd(in) == efd, 21);
	inofd_free(in);
	CHECK(nfds() == n0, 22);
	CHECK(nmountinfo() == 0, 23);
	return 0;
}

static int lazy_child(void *arg)
{
	struct fx *f = arg;
	int r;

	f->n = 0;
	cur = f;
	r = lazy_body(f);
	if (r && r != 77)
		show(f);
	return r;
}

static void lazy_expect(struct fx *f, unsigned int flags)
{
	int r;

	lazy_flags = flags;
	r = in_child(lazy_child, f);
	if (r == 77)
		skip();
	assert_int_equal(r, 0);
}

static void mount_table_lazy_fds(void **state)
{
	lazy_expect(*state, INOFD_FORCE_PROCFD);
}

static void mount_fan_table_lazy_fds(void **state)
{
	lazy_expect(*state, INOFD_FORCE_FANOTIFY);
}

/*
 * The table's baseline is taken at the first tree: a mount made while the
 * instance has no tree wakes no one and is not a change (no RESCAN); the
 * tree made after it holds the mount's root, and its umount is seen.
 */
static int baseline_body(struct fx *f)
{
	struct pollfd p;
	struct inofd *in;
	int wd, i;

	CHECK(inofd_new(&in, NULL) == 0, 2);
	MKD(P(f, "t"));
	MKD(P(f, "t/sub"));
	MKF(P(f, "t/sub/old"));
	CHECK(mount("inofd", P(f, "t/sub"), "tmpfs", 0, NULL) == 0, 3);
	p = (struct pollfd){ .fd = inofd_fd(in), .events = POLLIN };
	CHECK(poll(&p, 1, 100) == 0, 4);
	MKD(P(f, "t/sub/in"));
	wd = inofd_watch_tree_at(in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 5);
	CHECK(PUMP(in) >= 0, 6);
	CHECK(f->n == 0, 7);
	CHECK(inofd_watch_count(in) == 3, 8);
	MKF(P(f, "t/sub/in/x"));
	CHECK(PUMP(in) >= 0, 9);
	CHECK(seen(0, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/in/x")) >= 0,
	      10);
	CHECK(seen(0, INOFD_EV_RESCAN, 0, NULL) < 0, 11);
	i = f->n;
	CHECK(umount(P(f, "t/sub")) == 0, 12);
	CHECK(PUMP(in) >= 0, 13);
	CHECK(seen(i, INOFD_EV_RESCAN, 0, P(f, "t/sub")) >= 0, 14);
	CHECK(access(P(f, "t/sub/old"), F_OK) == 0, 15);
	MKF(P(f, "t/sub/again"));
	CHECK(PUMP(in) >= 0, 16);
	CHECK(seen(i, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/sub/again")) >= 0,
	      17);
	CHECK(inofd_watch_count(in) == 2, 18);
	CHECK(seen(0, INOFD_EV_ERROR, 0, NULL) < 0, 19);
	inofd_free(in);
	return 0;
}

static int baseline_child(void *arg)
{
	return run(arg, baseline_body);
}

static void mount_table_baseline_at_first_tree(void **state)
{
	expect(*state, baseline_child);
}

/*
 * RLIMIT_NOFILE lowered after inofd_new(), to what the tree's walk needs
 * (its root's descriptor and two) and no more: there is no room for the
 * mount table, and the tree is what was asked for.  The tree works, says
 * once that mounts are not seen (INOFD_EV_ERROR -EOPNOTSUPP, the "no mount
 * table" path), and holds nothing more; a tree made with room takes the
 * table.
 */
static int no_room_body(struct fx *f)
{
	struct rlimit old;
	struct inofd *in;
	int n0, wd, wd2, i;

	CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0, 2);
	CHECK(inofd_new(&in, NULL) == 0, 3);
	n0 = nfds();
	MKD(P(f, "t"));
	MKD(P(f, "t/a"));
	MKD(P(f, "t/a/b"));
	MKD(P(f, "t/a/b/c"));
	MKD(P(f, "u"));
	CHECK(leave_free(3) == 0, 4);
	wd = inofd_watch_tree_at(in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd >= 0, 5);
	CHECK(inofd_watch_count(in) == 4, 6);
	CHECK(nfds() == n0, 7);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0, 8);
	CHECK(PUMP(in) >= 0, 9);
	CHECK(count_errors(wd, -EOPNOTSUPP) == 1, 10);
	i = seen(0, INOFD_EV_ERROR, 0, P(f, "t"));
	CHECK(i >= 0 && !(f->r[i].flags & INOFD_EVF_LOST), 11);
	MKF(P(f, "t/a/b/c/x"));
	CHECK(PUMP(in) >= 0, 13);
	CHECK(seen(0, INOFD_EV_INOTIFY, IN_CREATE, P(f, "t/a/b/c/x")) >= 0,
	      14);
	/* room again: the next tree takes the table, and says nothing */
	wd2 = inofd_watch_tree_at(in, AT_FDCWD, P(f, "u"), IN_CREATE, NULL);
	CHECK(wd2 >= 0, 15);
	CHECK(nfds() == n0 + 2, 16);
	CHECK(PUMP(in) >= 0, 17);
	CHECK(count_errors(wd2, -EOPNOTSUPP) == 0, 18);
	CHECK(count_errors(wd, -EOPNOTSUPP) == 1, 19);
	inofd_free(in);
	return 0;
}

static int no_room_child(void *arg)
{
	struct fx *f = arg;
	int r;

	f->n = 0;
	cur = f;
	r = no_room_body(f);
	if (r)
		show(f);
	return r;
}

static void mount_table_no_room_at_first_tree(void **state)
{
	assert_int_equal(in_child(no_room_child, *state), 0);
}

/*
 * A first tree that fails (max_user_watches: its walk is all or nothing)
 * leaves the instance as it was: no mount table held.
 */
static int failed_body(struct fx *f)
{
	struct inofd *in;
	int n0, wd;

	if (limit_watches(2) < 0)
		return 77;
	CHECK(inofd_new(&in, NULL) == 0, 2);
	n0 = nfds();
	MKD(P(f, "t"));
	MKD(P(f, "t/a"));
	MKD(P(f, "t/a/b"));
	MKD(P(f, "u"));
	wd = inofd_watch_tree_at(in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	CHECK(wd == -ENOSPC, 3);
	CHECK(nfds() == n0, 4);
	CHECK(nmountinfo() == 0, 5);
	wd = inofd_watch_tree_at(in, AT_FDCWD, P(f, "u"), IN_CREATE, NULL);
	CHECK(wd >= 0, 6);
	CHECK(nfds() == n0 + 2, 7);
	/* (its ancestors do not fit: ENOSPC for them, not -EOPNOTSUPP) */
	CHECK(PUMP(in) >= 0, 8);
	CHECK(count_errors(wd, -EOPNOTSUPP) == 0, 9);
	inofd_free(in);
	return 0;
}

static int failed_child(void *arg)
{
	struct fx *f = arg;
	int r;

	f->n = 0;
	cur = f;
	r = failed_body(f);
	if (r && r != 77)
		show(f);
	return r;
}

static void mount_table_first_tree_fails(void **state)
{
	in_child_watches(failed_child, *state, "a first tree that fails");
}

/*
 * A new tree's walk takes the backend's descriptor out of inofd_fd()'s
 * epoll set (its own events would each run epoll's callback).  If adding
 * it back fails, inofd_timeout() is 0 until a read has put it back, and
 * nothing is lost.
 */
static void mount_walk_epoll_back(void **state)
{
	struct fx *f = *state;
	struct pollfd p = { .fd = inofd_fd(f->in), .events = POLLIN };
	int wd;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "u"));
	/* the first tree opens the mount table (which adds to the set) */
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "u"),
					IN_ALL_EVENTS, NULL) >= 0);
	/* back in the set after the walk: what the walk queued (its own
	 * listing of u, filtered at the read) makes inofd_fd() readable */
	assert_int_equal(poll(&p, 1, 0), 1);
	drain(f, 0);
	assert_int_equal(inofd_timeout(f->in), -1);
	unit_fail_epoll_add = true;
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	unit_fail_epoll_add = false;
	assert_true(wd >= 0);
	mkfile(P(f, "t/a/x"));
	/* out of the set: the caller is told to read instead of waiting */
	assert_int_equal(poll(&p, 1, 100), 0);
	assert_int_equal(inofd_timeout(f->in), 0);
	f->n = 0;
	drain(f, 0);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_CREATE, "x") >= 0);
	/* back in: inofd_fd() wakes the caller again */
	assert_int_equal(inofd_timeout(f->in), -1);
	mkfile(P(f, "t/a/y"));
	assert_int_equal(poll(&p, 1, 5000), 1);
	f->n = 0;
	drain(f, 0);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_CREATE, "y") >= 0);
}

DEFINE_TESTS(mounts,
	T(mount_walk_epoll_back),
	T(mount_tmpfs_in_tree),
	T(mount_bind_in_tree),
	T(mount_umount_after_renames),
	T(mount_nested_in_tree),
	T(mount_over_root_is_lost),
	T(mount_move_in_tree),
	T(mount_moved_away_and_back),
	T(mount_over_root_fd_flagged),
	T(mount_covered_new_dirs),
	TN(mount_of_root_goes),
	T(mount_table_missing_said),
	T(mount_table_fds_short),
	T(mount_tmpfs_reused),
	T(mount_fan_tmpfs_reused),
	T(mount_beside_chain_overlay),
	T(mount_fan_beside_chain_overlay),
	TN(mount_table_lazy_fds),
	TN(mount_fan_table_lazy_fds),
	TN(mount_table_baseline_at_first_tree),
	TN(mount_table_no_room_at_first_tree),
	TN(mount_table_first_tree_fails),
)
