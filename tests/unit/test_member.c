// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * INOFD_TREE_MEMBER_ENDS: each directory of a tree that stops being
 * watched while the tree goes on is told as IN_IGNORED with
 * INOFD_EVF_MEMBER (the tree's wd and data, the directory's path, ino
 * and dev), in the kernel's order, never dropped by the queue's bound;
 * the tree's own IN_IGNORED (no INOFD_EVF_MEMBER) stays the one event
 * that ends the registration.  Without the flag nothing changes.
 */
#include "unit.h"

#include <sys/inotify.h>

static struct stat st_of(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st;
}

static int tree(struct fx *f, const char *rel, uint32_t mask,
		unsigned int flags, const char *const *exclude)
{
	INOFD_TREE_OPTS(to, .flags = flags, .data = "T", .exclude = exclude);

	return inofd_watch_tree_at(f->in, AT_FDCWD, P(f, rel), mask, &to);
}

static bool is_member_end(const struct rec *r)
{
	return r->type == INOFD_EV_INOTIFY && r->mask == IN_IGNORED &&
	       (r->flags & INOFD_EVF_MEMBER);
}

static int count_member_ends(const struct fx *f)
{
	int i, n = 0;

	for (i = 0; i < f->n; i++)
		n += is_member_end(&f->r[i]);
	return n;
}

/* The index of the member end of path, or -1 (asserts it is one). */
static int member_end_at(const struct fx *f, const char *path)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (is_member_end(&f->r[i]) && !strcmp(f->r[i].path, path))
			return i;
	return -1;
}

static void check_member_end(const struct fx *f, int i, int wd,
			     const struct stat *st, unsigned int flags)
{
	const struct rec *r;

	assert_true(i >= 0);
	r = &f->r[i];
	assert_int_equal(r->wd, wd);
	assert_string_equal(r->data, "T");
	assert_string_equal(r->name, "");	/* NULL: about the directory */
	assert_int_equal(r->ino, (uint64_t)st->st_ino);
	assert_int_equal(r->dev, (uint64_t)st->st_dev);
	assert_int_equal(r->flags & ~INOFD_EVF_STALE_PATH,
			 INOFD_EVF_MEMBER | flags);
	assert_int_equal(r->from_wd, -1);
}

/* Not asked for: a member's end stays the tree's business, as in 0.3. */
static void member_ends_off_by_default(void **state)
{
	struct fx *f = *state;
	int root;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "t/a/b"));
	mkdirp(P(f, "t/c"));
	mkdirp(P(f, "away"));
	root = tree(f, "t", IN_ALL_EVENTS, 0, NULL);
	assert_true(root >= 0);
	assert_int_equal(rmdir(P(f, "t/a/b")), 0);
	assert_int_equal(rename(P(f, "t/c"), P(f, "away/c")), 0);
	drain(f, 40);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 0);
	assert_int_equal(inofd_watch_count(f->in), 2);
	assert_int_equal(inofd_unwatch(f->in, root), 0);
	f->n = 0;
	drain(f, 30);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 1);
	assert_int_equal(f->r[0].flags & INOFD_EVF_MEMBER, 0);
}

/* Flags: a tree's only; a plain watch refuses it. */
static void member_ends_flag_checked(void **state)
{
	struct fx *f = *state;

	mkdirp(P(f, "t"));
	assert_int_equal(inofd_watch_at(f->in, AT_FDCWD, P(f, "t"),
					IN_CREATE, INOFD_TREE_MEMBER_ENDS,
					NULL), -EINVAL);
	assert_true(tree(f, "t", IN_CREATE, INOFD_TREE_MEMBER_ENDS |
			 INOFD_TREE_XDEV, NULL) >= 0);
}

/*
 * Deleted: the kernel's DELETE_SELF, then the member's IN_IGNORED (the
 * kernel's, not synthetic), then what the kernel queued after; the
 * tree's own IN_IGNORED comes once, at its end, without the flag.
 */
static void member_end_deleted(void **state)
{
	struct fx *f = *state;
	struct stat sb;
	int root, d, i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "t/a/b"));
	sb = st_of(P(f, "t/a/b"));
	root = tree(f, "t", IN_DELETE_SELF | IN_CREATE,
		    INOFD_TREE_MEMBER_ENDS, NULL);
	assert_true(root >= 0);
	assert_int_equal(inofd_watch_count(f->in), 3);
	assert_int_equal(rmdir(P(f, "t/a/b")), 0);
	mkfile(P(f, "t/a/after"));
	drain(f, 40);
	d = find(f, INOFD_EV_INOTIFY, IN_DELETE_SELF, NULL);
	assert_true(d >= 0);
	assert_string_equal(f->r[d].path, P(f, "t/a/b"));
	i = member_end_at(f, P(f, "t/a/b"));
	check_member_end(f, i, root, &sb, 0);
	assert_int_equal(i, d + 1);
	/* kernel order: the create read after it comes after it */
	assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_CREATE, "after"), i + 1);
	assert_int_equal(count_member_ends(f), 1);
	assert_int_equal(inofd_watch_count(f->in), 2);
	/* the end of the tree: one IN_IGNORED, not a member's */
	assert_int_equal(inofd_unwatch(f->in, root), 0);
	f->n = 0;
	drain(f, 30);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 1);
	i = find(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL);
	assert_int_equal(f->r[i].flags & INOFD_EVF_MEMBER, 0);
	assert_int_equal(f->r[i].wd, root);
}

/*
 * Moved out: the MOVE_OUT, then one end per directory that left, below
 * ones first, with the paths they had in the tree, before the events
 * read after the move.
 */
static void member_end_moved_out(void **state)
{
	struct fx *f = *state;
	struct stat sa, sb;
	int root, mo, ia, ib;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "t/a/b"));
	mkdirp(P(f, "away"));
	sa = st_of(P(f, "t/a"));
	sb = st_of(P(f, "t/a/b"));
	root = tree(f, "t", IN_CREATE | IN_MOVE, INOFD_TREE_MEMBER_ENDS,
		    NULL);
	assert_true(root >= 0);
	assert_int_equal(rename(P(f, "t/a"), P(f, "away/a")), 0);
	mkfile(P(f, "t/after"));
	drain(f, 40);
	mo = find(f, INOFD_EV_MOVE_OUT, IN_MOVED_FROM, "a");
	assert_true(mo >= 0);
	ib = member_end_at(f, P(f, "t/a/b"));
	ia = member_end_at(f, P(f, "t/a"));
	check_member_end(f, ib, root, &sb, INOFD_EVF_SYNTHETIC);
	check_member_end(f, ia, root, &sa, INOFD_EVF_SYNTHETIC);
	assert_int_equal(ib, mo + 1);
	assert_int_equal(ia, mo + 2);
	assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_CREATE, "after"),
			 mo + 3);
	assert_int_equal(count_member_ends(f), 2);
	assert_int_equal(inofd_watch_count(f->in), 1);
	/* no more: the kernel's own IN_IGNOREDs of those watches are not
	 * told twice */
	f->n = 0;
	mkfile(P(f, "away/a/b/x"));
	drain(f, 40);
	assert_int_equal(f->n, 0);
}

/* Renamed onto an excluded name: it leaves the watched set under it. */
static void member_end_excluded(void **state)
{
	struct fx *f = *state;
	static const char *const excl[] = { "*.tmp", NULL };
	struct stat sa;
	int root, rn, i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	sa = st_of(P(f, "t/a"));
	root = tree(f, "t", IN_MOVE, INOFD_TREE_MEMBER_ENDS, excl);
	assert_true(root >= 0);
	assert_int_equal(inofd_watch_count(f->in), 2);
	assert_int_equal(rename(P(f, "t/a"), P(f, "t/a.tmp")), 0);
	drain(f, 40);
	rn = find(f, INOFD_EV_RENAME, IN_MOVE, "a.tmp");
	assert_true(rn >= 0);
	i = member_end_at(f, P(f, "t/a.tmp"));
	check_member_end(f, i, root, &sa, INOFD_EVF_SYNTHETIC);
	assert_int_equal(i, rn + 1);
	assert_int_equal(count_member_ends(f), 1);
	assert_int_equal(inofd_watch_count(f->in), 1);
}

/* A full queue drops events (a RESCAN says so), never a member's end. */
static void member_end_past_full_queue(void **state)
{
	struct fx *f = *state;
	INOFD_OPTS(o, .queue_max = 3);
	struct stat sa;
	char name[32];
	int root, i, rescan;

	assert_int_equal(inofd_new(&f->in, &o), 0);
	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	sa = st_of(P(f, "t/a"));
	root = tree(f, "t", IN_CREATE | IN_DELETE_SELF,
		    INOFD_TREE_MEMBER_ENDS, NULL);
	assert_true(root >= 0);
	for (i = 0; i < 8; i++) {
		snprintf(name, sizeof(name), "t/f%d", i);
		mkfile(P(f, name));
	}
	assert_int_equal(rmdir(P(f, "t/a")), 0);
	drain(f, 40);
	rescan = find(f, INOFD_EV_RESCAN, 0, NULL);
	assert_true(rescan >= 0);
	i = member_end_at(f, P(f, "t/a"));
	check_member_end(f, i, root, &sa, 0);
	assert_int_equal(count_member_ends(f), 1);
	assert_int_equal(inofd_watch_count(f->in), 1);
}

/*
 * An unmount ends a member as the kernel says it (IN_UNMOUNT, then
 * IN_IGNORED), fed here: the member's IN_IGNORED is the kernel's, and
 * what follows it in the batch comes after it.
 */
static char feedbuf[512];
static size_t feedlen;

static void feed_one(int wd, uint32_t mask, const char *name)
{
	struct inotify_event ev = { .wd = wd, .mask = mask };
	size_t nl = name ? strlen(name) : 0;

	ev.len = nl ? (uint32_t)((nl + 1 + 15) & ~15u) : 0;
	assert_true(feedlen + sizeof(ev) + ev.len <= sizeof(feedbuf));
	memcpy(feedbuf + feedlen, &ev, sizeof(ev));
	memset(feedbuf + feedlen + sizeof(ev), 0, ev.len);
	if (nl)
		memcpy(feedbuf + feedlen + sizeof(ev), name, nl);
	feedlen += sizeof(ev) + ev.len;
}

static void member_end_unmount_fed(void **state)
{
	struct fx *f = *state;
	const struct inofd_event *ev;
	struct stat sa, st;
	int root, kroot, ka, n = 0, got[4];

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	sa = st_of(P(f, "t/a"));
	st = st_of(P(f, "t"));
	root = tree(f, "t", IN_CREATE, INOFD_TREE_MEMBER_ENDS, NULL);
	assert_true(root >= 0);
	ka = inofd__kwd_of(f->in, sa.st_dev, sa.st_ino);
	kroot = inofd__kwd_of(f->in, st.st_dev, st.st_ino);
	assert_true(ka >= 0 && kroot >= 0);
	feedlen = 0;
	feed_one(ka, IN_UNMOUNT, NULL);
	feed_one(ka, IN_IGNORED, NULL);
	feed_one(kroot, IN_CREATE, "z");
	assert_true(inofd__feed(f->in, feedbuf, feedlen) >= 0);
	while (inofd_next(f->in, &ev) > 0 && n < 4) {
		if (ev->mask == IN_UNMOUNT)
			got[n++] = 1;
		else if (ev->mask == IN_IGNORED) {
			assert_int_equal(ev->flags, INOFD_EVF_MEMBER);
			assert_int_equal(ev->wd, root);
			assert_string_equal(ev->path, P(f, "t/a"));
			assert_int_equal(ev->ino, (uint64_t)sa.st_ino);
			got[n++] = 2;
		} else if (ev->mask == IN_CREATE) {
			assert_string_equal(ev->name, "z");
			got[n++] = 3;
		}
	}
	assert_int_equal(n, 3);
	assert_int_equal(got[0], 1);
	assert_int_equal(got[1], 2);
	assert_int_equal(got[2], 3);
	assert_int_equal(inofd_watch_count(f->in), 1);
}

DEFINE_TESTS(member,
	T(member_ends_off_by_default),
	T(member_ends_flag_checked),
	T(member_end_deleted),
	T(member_end_moved_out),
	T(member_end_excluded),
	TN(member_end_past_full_queue),
	T(member_end_unmount_fed),
)
