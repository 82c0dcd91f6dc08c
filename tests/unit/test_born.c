// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A plain watch made on a directory of a tree shares the tree's kernel
 * watch.  The records the kernel queued before the watch was made are not
 * its (a watch of its own would not have seen them): they are not
 * reported to it, so none gets a path from before the watch existed.
 * And a plain watch never takes its path from a tree whose paths are
 * unsure (a rename above the root not seen when it happened).
 */
#include "unit.h"

#include <sys/inotify.h>

/* The records of wd, in order, into idx; their number. */
static int of_wd(const struct fx *f, int wd, int *idx, int max)
{
	int i, n = 0;

	for (i = 0; i < f->n && n < max; i++)
		if (f->r[i].wd == wd)
			idx[n++] = i;
	return n;
}

/* Made while its directory's events are queued: only the later ones. */
static void born_queued_not_reported(void **state)
{
	struct fx *f = *state;
	int root, plain, idx[8], n;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/d"));
	root = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE,
				   NULL);
	assert_true(root >= 0);
	drain(f, 20);
	f->n = 0;
	mkfile(P(f, "t/d/before"));	/* queued, not read */
	plain = inofd_watch_path(f->in, P(f, "t/d"), IN_CREATE, "plain");
	assert_true(plain >= 0);
	mkfile(P(f, "t/d/after"));
	drain(f, 40);
	n = of_wd(f, plain, idx, 8);
	assert_int_equal(n, 1);
	assert_string_equal(f->r[idx[0]].name, "after");
	assert_string_equal(f->r[idx[0]].path, P(f, "t/d/after"));
	/* the tree, older, has both */
	assert_int_equal(of_wd(f, root, idx, 8), 2);
}

/*
 * Issue 17's pending NXRC seed 20750, reduced: in one batch a directory
 * gets an event, is renamed to an excluded name (the tree lets it go),
 * gets another, and the directory above it is renamed; then a plain watch
 * is made on it.  The queued events are not the plain watch's: before,
 * it got the second one under the watch-time path, where no such entry
 * ever was.
 */
static void born_excluded_then_ancestor_renamed(void **state)
{
	struct fx *f = *state;
	static const char *const excl[] = { "*.tmp", NULL };
	INOFD_TREE_OPTS(to, .exclude = excl, .data = "tree");
	int root, plain, idx[8], n, i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "t/a/d"));
	root = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE |
				   IN_MOVE, &to);
	assert_true(root >= 0);
	drain(f, 20);
	f->n = 0;
	mkfile(P(f, "t/a/d/x"));
	assert_int_equal(rename(P(f, "t/a/d"), P(f, "t/a/d.tmp")), 0);
	mkfile(P(f, "t/a/d.tmp/y"));
	assert_int_equal(rename(P(f, "t/a"), P(f, "t/b")), 0);
	plain = inofd_watch_path(f->in, P(f, "t/b/d.tmp"), IN_CREATE,
				 "plain");
	assert_true(plain >= 0);
	mkfile(P(f, "t/b/d.tmp/z"));
	drain(f, 40);
	n = of_wd(f, plain, idx, 8);
	for (i = 0; i < n; i++)
		print_message("  plain: %s %s\n", f->r[idx[i]].name,
			      f->r[idx[i]].path);
	assert_int_equal(n, 1);
	assert_string_equal(f->r[idx[0]].name, "z");
	assert_string_equal(f->r[idx[0]].path, P(f, "t/b/d.tmp/z"));
	assert_int_equal(f->r[idx[0]].flags, 0);
}

/*
 * g/p/t is a tree whose chain above p does not fit under
 * max_user_watches (3: t, t/d and p); a plain watch on t/d.  In one
 * batch, an entry is made in t/d, then g (a hole in the chain) is
 * renamed.  The tree says its path may be stale; the plain watch's path
 * is its own, the one true when the entry was made.
 */
static int unsure_child(void *arg)
{
	struct fx *f = arg;
	const struct inofd_event *ev;
	struct inofd *in;
	int root, plain, got = 0;

	if (limit_watches(3) < 0)
		return 77;
	if (inofd_new(&in, NULL))
		return 2;
	root = inofd_watch_tree_at(in, AT_FDCWD, P(f, "g/p/t"), IN_CREATE,
				   NULL);
	if (root < 0)
		return 3;
	plain = inofd_watch_path(in, P(f, "g/p/t/d"), IN_CREATE, "plain");
	if (plain < 0)
		return 4;
	/* what the watch calls queued */
	if (read_quiet(in, 0, NULL, NULL) < 0)
		return 5;
	mkfile(P(f, "g/p/t/d/x"));
	if (rename(P(f, "g"), P(f, "h")))
		return 6;
	usleep(20000);
	if (inofd_read(in) < 0)
		return 7;
	while (inofd_next(in, &ev) > 0) {
		if (ev->wd != plain)
			continue;
		got++;
		if (!ev->path || strcmp(ev->path, P(f, "g/p/t/d/x"))) {
			print_message("  plain path %s\n", ev->path);
			return 8;
		}
		if (ev->flags & INOFD_EVF_STALE_PATH)
			return 9;
	}
	if (got != 1)
		return 10;
	inofd_free(in);
	return 0;
}

static void born_plain_not_from_unsure_tree(void **state)
{
	struct fx *f = *state;

	mkdirp(P(f, "g"));
	mkdirp(P(f, "g/p"));
	mkdirp(P(f, "g/p/t"));
	mkdirp(P(f, "g/p/t/d"));
	in_child_watches(unsure_child, f, "plain watch in an unsure tree");
}

/*
 * A rename from A to B is queued; then a second watch of A is made.  The
 * source of the rename that B's watch reports is A's older watch, never
 * the new one, which did not exist when the file left.
 */
static void born_not_a_rename_source(void **state)
{
	struct fx *f = *state;
	int pa0, pa, pb, idx[8], n;

	mkdirp(P(f, "A"));
	mkdirp(P(f, "B"));
	mkfile(P(f, "A/f"));
	pa0 = inofd_watch_path(f->in, P(f, "A"), IN_MOVED_FROM, "pa0");
	pb = inofd_watch_path(f->in, P(f, "B"), IN_MOVED_TO, "pb");
	assert_true(pa0 >= 0 && pb >= 0);
	assert_int_equal(rename(P(f, "A/f"), P(f, "B/f")), 0);
	pa = inofd_watch_path(f->in, P(f, "A"), IN_MOVE, "pa");
	assert_true(pa >= 0);
	drain(f, 40);
	assert_int_equal(of_wd(f, pa, idx, 8), 0);
	n = of_wd(f, pb, idx, 8);
	assert_int_equal(n, 1);
	assert_int_equal(f->r[idx[0]].type, INOFD_EV_RENAME);
	assert_int_equal(f->r[idx[0]].from_wd, pa0);
	assert_string_equal(f->r[idx[0]].from_data, "pa0");
	assert_string_equal(f->r[idx[0]].from_path, P(f, "A/f"));
}

DEFINE_TESTS(born,
	T(born_not_a_rename_source),
	T(born_queued_not_reported),
	T(born_excluded_then_ancestor_renamed),
	T(born_plain_not_from_unsure_tree),
)
