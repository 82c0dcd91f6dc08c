// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One truth per object (issue 26, reproduction 7): a plain watch inside a
 * tree shares the tree's kernel watch, and takes the tree's path while
 * the tree holds it.  What the tree learnt stays learnt when the tree
 * goes: the plain watch keeps the path the tree last knew, not the one it
 * was made with, and a rename the tree followed does not flag its path
 * maybe stale.
 */
#include "unit.h"

#include <stdio.h>
#include <sys/inotify.h>

/* The index of wd's first record named name, or -1. */
static int of(const struct fx *f, int wd, const char *name)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (f->r[i].wd == wd && !strcmp(f->r[i].name, name))
			return i;
	return -1;
}

/*
 * wd's first record named name (an event on the object itself: ""): it
 * is there, with path, and flagged maybe stale or not as stale says.
 */
static void expect(const struct fx *f, int wd, const char *name,
		   const char *path, bool stale)
{
	int i = of(f, wd, name);

	assert_true(i >= 0);
	if (path)
		assert_string_equal(f->r[i].path, path);
	assert_int_equal(!!(f->r[i].flags & INOFD_EVF_STALE_PATH), stale);
}

/* An instance on backend (INOFD_FORCE_*); skipped where there is none. */
static void open_on(struct fx *f, unsigned int backend)
{
	INOFD_OPTS(o, .flags = backend);
	int r = inofd_new(&f->in, &o);

	if (r == -ENOSYS || r == -EPERM) {
		print_message("backend not available here: skipped\n");
		skip();
	}
	assert_int_equal(r, 0);
}

/* The test fn(f, backend) on procfd and on fanotify, as two tests. */
#define ON_BOTH(fn)							\
	static void fn##_procfd(void **state)				\
	{								\
		fn(*state, INOFD_FORCE_PROCFD);				\
	}								\
	static void fn##_fanotify(void **state)				\
	{								\
		fn(*state, INOFD_FORCE_FANOTIFY);			\
	}

/* A tree on t with IN_CREATE, a plain watch on t/sub, both drained. */
static void tree_and_plain(struct fx *f, int *root, int *plain)
{
	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/sub"));
	*root = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE,
				    NULL);
	assert_true(*root >= 0);
	*plain = inofd_watch_path(f->in, P(f, "t/sub"), IN_CREATE, "plain");
	assert_true(*plain >= 0);
	drain(f, 20);
}

static void truth_plain_keeps_tree_rename(void **state)
{
	struct fx *f = *state;
	const char *wp;
	int root, plain, i;

	tree_and_plain(f, &root, &plain);
	assert_int_equal(rename(P(f, "t/sub"), P(f, "t/sub2")), 0);
	mkfile(P(f, "t/sub2/a"));
	drain(f, 40);
	i = of(f, plain, "a");
	assert_true(i >= 0);
	assert_string_equal(f->r[i].path, P(f, "t/sub2/a"));
	/* the tree followed the rename: the path is known, not stale */
	assert_int_equal(f->r[i].flags & INOFD_EVF_STALE_PATH, 0);

	/* the tree goes; what it knew stays */
	assert_int_equal(inofd_unwatch(f->in, root), 0);
	drain(f, 20);
	f->n = 0;
	mkfile(P(f, "t/sub2/b"));
	drain(f, 40);
	i = of(f, plain, "b");
	assert_true(i >= 0);
	assert_string_equal(f->r[i].path, P(f, "t/sub2/b"));
	assert_int_equal(f->r[i].flags & INOFD_EVF_STALE_PATH, 0);
	assert_int_equal(inofd_wd_path(f->in, plain, &wp), 0);
	assert_string_equal(wp, P(f, "t/sub2"));
}

/*
 * The directory leaves the tree (to where the tree cannot see): its path
 * is not known any more, and the plain watch says so after the tree goes.
 */
static void truth_plain_moved_out_stale(void **state)
{
	struct fx *f = *state;
	int root, plain, i;

	mkdirp(P(f, "o"));
	tree_and_plain(f, &root, &plain);
	assert_int_equal(rename(P(f, "t/sub"), P(f, "o/sub")), 0);
	drain(f, 40);
	assert_int_equal(inofd_unwatch(f->in, root), 0);
	drain(f, 20);
	f->n = 0;
	mkfile(P(f, "o/sub/c"));
	drain(f, 40);
	i = of(f, plain, "c");
	assert_true(i >= 0);
	assert_true(f->r[i].flags & INOFD_EVF_STALE_PATH);
}

/*
 * A plain watch made while the tree's records about its object are still
 * unread: the tree lets the directory go (renamed to an excluded name),
 * it is renamed again, and only then is the plain watch made, by its
 * newest name.  What the tree knew at its record is older than that
 * name: the plain watch keeps its own (oracle seed 20750, -N -X -R -C,
 * on fanotify, where a watch's birth is where the unread records start).
 */
static void truth_plain_after_unread(struct fx *f, unsigned int backend)
{
	INOFD_TREE_OPTS(to, .exclude = (const char *const[]){ "*.tmp", NULL });
	int root, plain;

	open_on(f, backend);
	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/d"));
	root = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, &to);
	assert_true(root >= 0);
	drain(f, 20);
	assert_int_equal(rename(P(f, "t/d"), P(f, "t/x.tmp")), 0);
	assert_int_equal(rename(P(f, "t/x.tmp"), P(f, "t/y.tmp")), 0);
	plain = inofd_watch_path(f->in, P(f, "t/y.tmp"), IN_CREATE, "plain");
	assert_true(plain >= 0);
	drain(f, 40);
	f->n = 0;
	mkfile(P(f, "t/y.tmp/c"));
	drain(f, 40);
	expect(f, plain, "c", P(f, "t/y.tmp/c"), false);
}
ON_BOTH(truth_plain_after_unread)

/*
 * A plain watch on a file with a second hard link: the name it was made
 * with is unlinked, the file lives on under the other (issue 26,
 * reproduction 7b).  Its events no longer carry that name unflagged.  A
 * file whose last name goes keeps its last name on IN_DELETE_SELF,
 * unflagged, as before.
 */
static void truth_hard_link_unlinked(struct fx *f, unsigned int backend)
{
	int w1, w2, i, fd;

	open_on(f, backend);
	mkfile(P(f, "f"));
	assert_int_equal(link(P(f, "f"), P(f, "g")), 0);
	mkfile(P(f, "h"));
	w1 = inofd_watch_path(f->in, P(f, "f"), IN_MODIFY | IN_DELETE_SELF,
			      NULL);
	w2 = inofd_watch_path(f->in, P(f, "h"), IN_DELETE_SELF, NULL);
	assert_true(w1 >= 0 && w2 >= 0);
	drain(f, 20);
	f->n = 0;
	/* before: a write through the name it has */
	fd = open(P(f, "f"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	drain(f, 40);
	expect(f, w1, "", P(f, "f"), false);
	/* the name goes, the file lives on as g */
	f->n = 0;
	assert_int_equal(unlink(P(f, "f")), 0);
	fd = open(P(f, "g"), O_WRONLY | O_APPEND);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	drain(f, 40);
	i = of(f, w1, "");
	assert_true(i >= 0);
	assert_int_equal(f->r[i].mask & IN_MODIFY, IN_MODIFY);
	expect(f, w1, "", NULL, true);
	/* the last name goes: the end carries it, unflagged */
	f->n = 0;
	assert_int_equal(unlink(P(f, "h")), 0);
	drain(f, 40);
	i = of(f, w2, "");
	assert_true(i >= 0);
	assert_int_equal(f->r[i].mask & IN_DELETE_SELF, IN_DELETE_SELF);
	expect(f, w2, "", P(f, "h"), false);
}
ON_BOTH(truth_hard_link_unlinked)

DEFINE_TESTS(truth,
	T(truth_plain_keeps_tree_rename),
	T(truth_plain_moved_out_stale),
	TN(truth_plain_after_unread_procfd),
	TN(truth_plain_after_unread_fanotify),
	TN(truth_hard_link_unlinked_procfd),
	TN(truth_hard_link_unlinked_fanotify),
)
