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

DEFINE_TESTS(truth,
	T(truth_plain_keeps_tree_rename),
	T(truth_plain_moved_out_stale),
)
