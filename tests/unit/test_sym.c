// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Trees reached through symlinks, symlinks and hard links inside trees,
 * plain watches that share objects with trees (issue 26, reproductions 3,
 * 5 and 7).
 */
#include "unit.h"

#include <sys/inotify.h>

static int tree(struct fx *f, const char *rel, void *data)
{
	return inofd_watch_tree_at(f->in, AT_FDCWD, P(f, rel), IN_ALL_EVENTS,
			&(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts),
				.data = data });
}

/* ln -sfn target P(f, link): a new link renamed over the old one */
static void relink(struct fx *f, const char *target, const char *link)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s.new", P(f, link));
	assert_int_equal(symlink(target, tmp), 0);
	assert_int_equal(rename(tmp, P(f, link)), 0);
}

/* the one IN_CREATE of name: its path, which must not be flagged */
static const char *created(struct fx *f, const char *name)
{
	int i = find(f, INOFD_EV_INOTIFY, IN_CREATE, name);

	if (i < 0) {
		dump(f);
		fail_msg("no IN_CREATE of %s", name);
	}
	if (f->r[i].flags & INOFD_EVF_STALE_PATH) {
		dump(f);
		fail_msg("IN_CREATE of %s flagged", name);
	}
	return f->r[i].path;
}

/*
 * A root given through a symlink is the directory the link named when
 * the watch was made: paths are under its real path, and a link changed
 * afterwards changes nothing (inofd_watch_tree_at(3)).
 */
static void sym_root_link_retargeted(void **state)
{
	struct fx *f = *state;
	const char *p;
	int wd;

	mkdirp(P(f, "real"));
	mkdirp(P(f, "real/sub"));
	mkdirp(P(f, "other"));
	mkdirp(P(f, "other/sub"));
	assert_int_equal(symlink("real", P(f, "L")), 0);
	wd = tree(f, "L", NULL);
	assert_true(wd >= 0);
	assert_int_equal(inofd_wd_path(f->in, wd, &p), 0);
	assert_non_null(p);
	assert_string_equal(p, P(f, "real"));
	relink(f, "other", "L");
	mkfile(P(f, "real/sub/f"));
	mkfile(P(f, "other/sub/g"));
	drain(f, 30);
	assert_string_equal(created(f, "f"), P(f, "real/sub/f"));
	assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_CREATE, "g"), -1);
	assert_int_equal(count(f, INOFD_EV_ERROR, 0, NULL), 0);
}

/* The link's target renamed: the tree follows it like any root. */
static void sym_root_target_renamed(void **state)
{
	struct fx *f = *state;
	int wd;

	mkdirp(P(f, "real"));
	mkdirp(P(f, "real/sub"));
	assert_int_equal(symlink("real", P(f, "L")), 0);
	wd = tree(f, "L", NULL);
	assert_true(wd >= 0);
	assert_int_equal(rename(P(f, "real"), P(f, "real2")), 0);
	mkfile(P(f, "real2/sub/f"));
	drain(f, 30);
	assert_string_equal(created(f, "f"), P(f, "real2/sub/f"));
	assert_int_equal(count(f, INOFD_EV_ERROR, 0, NULL), 0);
}

/* A symlinked ancestor: resolved too, and the chain above is real. */
static void sym_ancestor(void **state)
{
	struct fx *f = *state;
	int wd;

	mkdirp(P(f, "g"));
	mkdirp(P(f, "g/p"));
	mkdirp(P(f, "g/p/t"));
	mkdirp(P(f, "h"));
	mkdirp(P(f, "h/t"));
	assert_int_equal(symlink("g/p", P(f, "LP")), 0);
	wd = tree(f, "LP/t", NULL);
	assert_true(wd >= 0);
	relink(f, "h", "LP");
	mkfile(P(f, "g/p/t/f1"));
	drain(f, 30);
	assert_string_equal(created(f, "f1"), P(f, "g/p/t/f1"));
	/* the real grandparent renamed: followed by the chain */
	assert_int_equal(rename(P(f, "g"), P(f, "g2")), 0);
	mkfile(P(f, "g2/p/t/f2"));
	assert_int_equal(rename(P(f, "g2/p"), P(f, "g2/q")), 0);
	mkfile(P(f, "g2/q/t/f3"));
	drain(f, 30);
	assert_string_equal(created(f, "f2"), P(f, "g2/p/t/f2"));
	assert_string_equal(created(f, "f3"), P(f, "g2/q/t/f3"));
	assert_int_equal(count(f, INOFD_EV_ERROR, 0, NULL), 0);
}

/* Symlinks to directories inside a tree are entries, never followed. */
static void sym_links_inside_not_followed(void **state)
{
	struct fx *f = *state;
	int i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/sub"));
	mkdirp(P(f, "outside"));
	assert_int_equal(symlink("../outside", P(f, "t/pre")), 0);
	assert_true(tree(f, "t", NULL) >= 0);
	assert_int_equal(inofd_watch_count(f->in), 2);
	assert_int_equal(symlink("../../outside", P(f, "t/sub/post")), 0);
	assert_int_equal(symlink("..", P(f, "t/sub/loop")), 0);
	drain(f, 30);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "post");
	assert_true(i >= 0);
	assert_false(f->r[i].mask & IN_ISDIR);
	assert_int_equal(inofd_watch_count(f->in), 2);
	mkfile(P(f, "outside/x"));
	drain(f, 30);
	assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_CREATE, "x"), -1);
	/* a link renamed inside the tree is a file's rename */
	assert_int_equal(rename(P(f, "t/pre"), P(f, "t/sub/pre2")), 0);
	drain(f, 30);
	i = find(f, INOFD_EV_RENAME, IN_MOVE, "pre2");
	assert_true(i >= 0);
	assert_false(f->r[i].mask & IN_ISDIR);
	assert_int_equal(inofd_watch_count(f->in), 2);
}

/*
 * The root moved to its grandparent and straight back, both renames read
 * in one batch (issue 26, reproduction 5): the root is where its path
 * says when the records are applied.  The truth or a RESCAN, never a
 * loss, and paths from then on.
 */
static void sym_root_out_and_back_one_batch(void **state)
{
	struct fx *f = *state;
	int i;

	mkdirp(P(f, "g"));
	mkdirp(P(f, "g/p"));
	mkdirp(P(f, "g/p/t"));
	mkdirp(P(f, "g/p/t/a"));
	assert_true(tree(f, "g/p/t", NULL) >= 0);
	assert_int_equal(rename(P(f, "g/p/t"), P(f, "g/tmp")), 0);
	assert_int_equal(rename(P(f, "g/tmp"), P(f, "g/p/t")), 0);
	drain(f, 30);
	for (i = 0; i < f->n; i++)
		if (f->r[i].type == INOFD_EV_ERROR) {
			dump(f);
			fail_msg("an error for a root that came back");
		}
	mkfile(P(f, "g/p/t/a/x"));
	mkfile(P(f, "g/p/t/y"));
	drain(f, 30);
	assert_string_equal(created(f, "x"), P(f, "g/p/t/a/x"));
	assert_string_equal(created(f, "y"), P(f, "g/p/t/y"));
	/* and renames of it are followed again */
	assert_int_equal(rename(P(f, "g/p/t"), P(f, "g/p/t2")), 0);
	mkfile(P(f, "g/p/t2/z"));
	drain(f, 30);
	assert_string_equal(created(f, "z"), P(f, "g/p/t2/z"));
	assert_int_equal(inofd_watch_count(f->in), 2);
	/* the same with the root's parent, out to the top and back */
	assert_int_equal(rename(P(f, "g/p"), P(f, "ptmp")), 0);
	assert_int_equal(rename(P(f, "ptmp"), P(f, "g/p")), 0);
	drain(f, 30);
	assert_int_equal(count(f, INOFD_EV_ERROR, 0, NULL), 0);
	mkfile(P(f, "g/p/t2/w"));
	drain(f, 30);
	assert_string_equal(created(f, "w"), P(f, "g/p/t2/w"));
	/* and out for good: said once, paths NULL */
	assert_int_equal(rename(P(f, "g/p/t2"), P(f, "g/t3")), 0);
	drain(f, 30);
	mkfile(P(f, "g/t3/v"));
	drain(f, 30);
	i = find(f, INOFD_EV_ERROR, 0, NULL);
	assert_true(i >= 0);
	assert_true(f->r[i].flags & INOFD_EVF_LOST);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "v");
	assert_true(i >= 0);
	assert_true(f->r[i].nulls & REC_NULL_PATH);
}

DEFINE_TESTS(sym,
	T(sym_root_link_retargeted),
	T(sym_root_target_renamed),
	T(sym_ancestor),
	T(sym_links_inside_not_followed),
	T(sym_root_out_and_back_one_batch),
)
