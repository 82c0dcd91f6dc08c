// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Moves between a tree and the directories the library watches above its
 * root (the root's parent and its ancestors, watched to follow the root).
 *
 * Those watches are the library's, not the user's: a move from the tree
 * into one of them leaves the tree, whatever pairs it (`mv w/f ..` is a
 * MOVE_OUT of w/f).  Each test runs with rename pairing on (the default)
 * on the procfd and on the fanotify backend (skipped where fanotify is
 * not there).
 */
#include "unit.h"

static void layout(struct fx *f, const char *be)
{
	mkdirp(PB(f, be, ""));
	mkdirp(PB(f, be, "a"));
	mkdirp(PB(f, be, "a/w"));
	mkdirp(PB(f, be, "a/w/sub"));
	mkdirp(PB(f, be, "a/w/s"));
	mkdirp(PB(f, be, "a/w/s/g"));
	mkfile(PB(f, be, "a/w/f"));
	mkfile(PB(f, be, "a/w/sub/in"));
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, PB(f, be, "a/w"),
			IN_ALL_EVENTS, &(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts) }) >= 0);
	drain(f, 30);
	f->n = 0;
}

/* exactly one event for the move of rel (a MOVE_OUT with its old path),
 * nothing else naming it */
static void moved_out(struct fx *f, const char *be, const char *rel,
		      const char *name, uint32_t isdir)
{
	int i = find(f, INOFD_EV_MOVE_OUT, IN_MOVED_FROM | isdir, name);

	if (i < 0) {
		dump(f);
		fail_msg("%s: no MOVE_OUT of %s", be, rel);
	}
	assert_string_equal(f->r[i].path, PB(f, be, rel));
	assert_int_equal(count(f, INOFD_EV_MOVE_OUT, 0, name), 1);
	assert_int_equal(count(f, INOFD_EV_RENAME, 0, name), 0);
	assert_int_equal(count(f, INOFD_EV_ERROR, 0, NULL), 0);
}

/* mv w/f ..: a file into the root's parent */
static void anc_file_to_parent(void **state)
{
	struct fx *f = *state;
	const char *be;

	EACH_BACKEND(f, be) {
		layout(f, be);
		assert_int_equal(rename(PB(f, be, "a/w/f"), PB(f, be, "a/f")), 0);
		drain(f, 30);
		moved_out(f, be, "a/w/f", "f", 0);
	}
}

/* mv w/sub ..: a directory into the root's parent; it is no longer
 * watched, the tree still is */
static void anc_dir_to_parent(void **state)
{
	struct fx *f = *state;
	const char *be;

	EACH_BACKEND(f, be) {
		layout(f, be);
		assert_int_equal(rename(PB(f, be, "a/w/sub"), PB(f, be, "a/sub")),
				 0);
		drain(f, 30);
		moved_out(f, be, "a/w/sub", "sub", IN_ISDIR);
		f->n = 0;
		mkfile(PB(f, be, "a/sub/unseen"));
		mkfile(PB(f, be, "a/w/seen"));
		drain(f, 30);
		assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_CREATE, "unseen"),
				 -1);
		assert_true(find(f, INOFD_EV_INOTIFY, IN_CREATE, "seen") >= 0);
	}
}

/* mv w/s/g ../..: a directory two levels down into the root's
 * grandparent */
static void anc_deep_to_grandparent(void **state)
{
	struct fx *f = *state;
	const char *be;

	EACH_BACKEND(f, be) {
		layout(f, be);
		assert_int_equal(rename(PB(f, be, "a/w/s/g"), PB(f, be, "g")), 0);
		drain(f, 30);
		moved_out(f, be, "a/w/s/g", "g", IN_ISDIR);
		f->n = 0;
		mkfile(PB(f, be, "g/unseen"));
		mkfile(PB(f, be, "a/w/s/seen"));
		drain(f, 30);
		assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_CREATE, "unseen"),
				 -1);
		assert_true(find(f, INOFD_EV_INOTIFY, IN_CREATE, "seen") >= 0);
	}
}

/* and back: from the parent into the tree is a move in, as before */
static void anc_parent_to_tree(void **state)
{
	struct fx *f = *state;
	const char *be;
	int i;

	EACH_BACKEND(f, be) {
		layout(f, be);
		mkfile(PB(f, be, "a/x"));
		drain(f, 30);
		f->n = 0;
		assert_int_equal(rename(PB(f, be, "a/x"), PB(f, be, "a/w/x")), 0);
		drain(f, 30);
		for (i = 0; i < f->n; i++)
			if (!strcmp(f->r[i].name, "x"))
				break;
		if (i == f->n) {
			dump(f);
			fail_msg("%s: nothing for a/x -> a/w/x", be);
		}
		assert_string_equal(f->r[i].path, PB(f, be, "a/w/x"));
	}
}

DEFINE_TESTS(ancestor,
	TN(anc_file_to_parent),
	TN(anc_dir_to_parent),
	TN(anc_deep_to_grandparent),
	TN(anc_parent_to_tree),
)
