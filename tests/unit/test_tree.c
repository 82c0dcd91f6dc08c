// SPDX-License-Identifier: LGPL-2.1-or-later
/* inofd_watch_tree_at: walking, following, repairing, running out. */
#include "unit.h"

#include <sched.h>
#include <sys/inotify.h>

/*
 * Events the kernel does not produce on demand (those of a tree that is
 * out of date) are fed to the library with inofd__feed(), the internal
 * entry point inofd_read() uses for what it reads.
 */
static char inject[1024];
static size_t inject_len;

/* an IN_CREATE of name was reported, with the path rel (under the base):
 * its index */
static int created(struct fx *f, const char *name, const char *rel)
{
	int i = find(f, INOFD_EV_INOTIFY, IN_CREATE, name);

	assert_true(i >= 0);
	assert_string_equal(f->r[i].path, P(f, rel));
	return i;
}

static void inject_event(int wd, uint32_t mask, uint32_t cookie,
			 const char *name)
{
	struct inotify_event ev = { .wd = wd, .mask = mask, .cookie = cookie };
	size_t nl = name ? strlen(name) : 0;

	/* len includes the NUL and padding, as the kernel makes it */
	ev.len = nl ? (uint32_t)((nl + 1 + 15) & ~15u) : 0;
	assert_true(inject_len + sizeof(ev) + ev.len <= sizeof(inject));
	memcpy(inject + inject_len, &ev, sizeof(ev));
	memset(inject + inject_len + sizeof(ev), 0, ev.len);
	memcpy(inject + inject_len + sizeof(ev), name, nl);
	inject_len += sizeof(ev) + ev.len;
}

static int tree(struct fx *f, const char *rel, void *data)
{
	return inofd_watch_tree_at(f->in, AT_FDCWD, P(f, rel), IN_ALL_EVENTS,
			&(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts),
				.data = data });
}

static void tree_initial_quiet(void **state)
{
	struct fx *f = *state;
	int root, i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "t/a/b"));
	mkdirp(P(f, "t/c"));
	mkfile(P(f, "t/a/file"));
	root = tree(f, "t", "tree");
	assert_true(root >= 0);
	assert_int_equal(inofd_watch_count(f->in), 4);
	/* the library's own listing of the directories is not reported */
	drain(f, 50);
	if (f->n)
		dump(f);
	assert_int_equal(f->n, 0);
	mkfile(P(f, "t/a/b/deep"));
	drain(f, 50);
	i = created(f, "deep", "t/a/b/deep");
	assert_string_equal(f->r[i].data, "tree");
	assert_int_equal(f->r[i].flags, 0);
}

static void tree_new_dirs_miss_nothing(void **state)
{
	struct fx *f = *state;
	char p[64];
	int i;

	mkdirp(P(f, "t"));
	assert_true(tree(f, "t", NULL) >= 0);
	/* all of it before the library reads a single event */
	mkdirp(P(f, "t/n"));
	mkdirp(P(f, "t/n/m"));
	for (i = 0; i < 20; i++) {
		snprintf(p, sizeof(p), "t/n/m/f%d", i);
		mkfile(P(f, p));
	}
	drain(f, 50);
	for (i = 0; i < 20; i++) {
		snprintf(p, sizeof(p), "f%d", i);
		/* reported, by the kernel or by the scan */
		if (find(f, INOFD_EV_INOTIFY, IN_CREATE, p) < 0) {
			dump(f);
			fail_msg("no IN_CREATE for %s", p);
		}
	}
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE | IN_ISDIR, "m");
	assert_true(i >= 0);
	assert_true(f->r[i].flags & INOFD_EVF_SYNTHETIC);
	assert_string_equal(f->r[i].path, P(f, "t/n/m"));
	assert_int_equal(inofd_watch_count(f->in), 3);
	/* and the new directories are watched from now on */
	mkfile(P(f, "t/n/m/later"));
	drain(f, 50);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "later");
	assert_true(i >= 0);
	assert_int_equal(f->r[i].flags, 0);
}

static void tree_rename_inside(void **state)
{
	struct fx *f = *state;
	int i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "t/a/b"));
	assert_true(tree(f, "t", NULL) >= 0);
	assert_int_equal(rename(P(f, "t/a"), P(f, "t/z")), 0);
	drain(f, 30);
	i = find(f, INOFD_EV_RENAME, IN_MOVE | IN_ISDIR, "z");
	assert_true(i >= 0);
	assert_string_equal(f->r[i].from_path, P(f, "t/a"));
	mkfile(P(f, "t/z/b/x"));
	drain(f, 30);
	/* the watch kept its wd and learned its new name */
	created(f, "x", "t/z/b/x");
	assert_int_equal(inofd_watch_count(f->in), 3);
}

/*
 * Renames above the root: of its parent and of a directory above that are
 * followed in order; a move of one of them out of the chain is said once
 * (INOFD_EVF_LOST) and paths are NULL from then on, never false.
 */
static void tree_ancestor_renames(void **state)
{
	struct fx *f = *state;
	int i;

	mkdirp(P(f, "g"));
	mkdirp(P(f, "g/p"));
	mkdirp(P(f, "g/p/t"));
	mkdirp(P(f, "g/p/t/a"));
	mkdirp(P(f, "other"));
	assert_true(tree(f, "g/p/t", NULL) >= 0);
	assert_int_equal(rename(P(f, "g"), P(f, "g2")), 0);
	mkfile(P(f, "g2/p/t/a/x"));
	assert_int_equal(rename(P(f, "g2/p"), P(f, "g2/q")), 0);
	mkfile(P(f, "g2/q/t/y"));
	drain(f, 30);
	created(f, "x", "g2/p/t/a/x");
	created(f, "y", "g2/q/t/y");
	/* a new directory is opened by its path, which is right */
	mkdirp(P(f, "g2/q/t/new"));
	drain(f, 30);
	mkfile(P(f, "g2/q/t/new/z"));
	drain(f, 30);
	created(f, "z", "g2/q/t/new/z");
	assert_int_equal(count(f, INOFD_EV_ERROR, 0, NULL), 0);
	/* out of the chain: where it went is not known */
	assert_int_equal(rename(P(f, "g2"), P(f, "other/g3")), 0);
	drain(f, 50);
	mkfile(P(f, "other/g3/q/t/a/w"));
	drain(f, 30);
	assert_int_equal(count(f, INOFD_EV_ERROR, 0, NULL), 1);
	i = find(f, INOFD_EV_ERROR, 0, NULL);
	assert_true(f->r[i].flags & INOFD_EVF_LOST);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "w");
	assert_true(i >= 0);
	assert_string_equal(f->r[i].path, "");
}

/*
 * A root deeper than any fixed bound (issue 26, reproduction 6: split_dir()
 * stopped at 256 levels, and the tree then had no ancestor chain and said
 * nothing): the rename of a directory 300 levels above the root is
 * followed like any other.
 */
#define DEEP	300

static void tree_deep_root_ancestor_rename(void **state)
{
	struct fx *f = *state;
	static char rel[DEEP * 2 + 8], mid[DEEP * 2 + 8], file[DEEP * 2 + 16];
	int i, k;

	rel[0] = '\0';
	for (i = 0; i < DEEP; i++) {
		strcat(rel, i ? "/d" : "d");
		mkdirp(P(f, rel));
		if (i == 9)
			strcpy(mid, rel);	/* d/d/.../d, 10 levels */
	}
	strcat(rel, "/t");
	mkdirp(P(f, rel));
	assert_true(tree(f, rel, NULL) >= 0);
	drain(f, 30);
	/* d (level 10) becomes e: the root's path must follow */
	strcpy(file, mid);
	file[strlen(file) - 1] = 'e';
	assert_int_equal(rename(P(f, mid), P(f, file)), 0);
	memcpy(rel, file, strlen(file));
	strcpy(file, rel);
	strcat(file, "/x");
	mkfile(P(f, file));
	drain(f, 30);
	assert_int_equal(count(f, INOFD_EV_ERROR, 0, NULL), 0);
	k = find(f, INOFD_EV_INOTIFY, IN_CREATE, "x");
	assert_true(k >= 0);
	assert_false(f->r[k].flags & INOFD_EVF_STALE_PATH);
	assert_string_equal(f->r[k].path, P(f, file));
}

static void tree_move_out_and_back(void **state)
{
	struct fx *f = *state;
	int i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "out"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "t/a/b"));
	assert_true(tree(f, "t", NULL) >= 0);
	assert_int_equal(rename(P(f, "t/a"), P(f, "out/a")), 0);
	drain(f, 30);
	assert_true(find(f, INOFD_EV_MOVE_OUT, IN_MOVED_FROM | IN_ISDIR, "a") >= 0);
	assert_int_equal(inofd_watch_count(f->in), 1);	/* subtree dropped */
	mkfile(P(f, "out/a/b/unseen"));
	drain(f, 30);
	assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_CREATE, "unseen"), -1);
	assert_int_equal(rename(P(f, "out/a"), P(f, "t/back")), 0);
	drain(f, 30);
	assert_true(find(f, INOFD_EV_MOVE_IN, IN_MOVED_TO | IN_ISDIR, "back") >= 0);
	/* what came in is reported, and watched */
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "unseen");
	assert_true(i >= 0);
	assert_true(f->r[i].flags & INOFD_EVF_SYNTHETIC);
	assert_string_equal(f->r[i].path, P(f, "t/back/b/unseen"));
	assert_int_equal(inofd_watch_count(f->in), 3);
}

static void tree_delete_and_unwatch(void **state)
{
	struct fx *f = *state;
	int root, wd_b = -1, i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "t/a/b"));
	root = tree(f, "t", "r");
	assert_true(root >= 0);
	mkfile(P(f, "t/a/b/f"));
	drain(f, 30);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "f");
	assert_true(i >= 0);
	wd_b = f->r[i].wd;
	/* every event of the tree carries the tree's wd */
	assert_int_equal(wd_b, root);
	unlink(P(f, "t/a/b/f"));
	rmdir(P(f, "t/a/b"));
	drain(f, 30);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_DELETE_SELF, NULL) >= 0);
	/* a member's end is the tree's business, not an IN_IGNORED (finding 5) */
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 0);
	assert_int_equal(inofd_watch_count(f->in), 2);
	assert_int_equal(inofd_unwatch(f->in, root), 0);
	assert_int_equal(inofd_watch_count(f->in), 0);
	f->n = 0;
	drain(f, 30);
	/* exactly one IN_IGNORED, for the root the caller added */
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 1);
	assert_int_equal(f->r[find(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL)].wd,
			 root);
}

static void tree_errors(void **state)
{
	struct fx *f = *state;
	int wd, dfd;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/sub"));
	mkfile(P(f, "file"));
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, NULL, IN_CREATE, NULL), -EINVAL);
	assert_int_equal(inofd_watch_tree_at(NULL, AT_FDCWD, P(f, "t"), IN_CREATE,
					  NULL), -EINVAL);
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE,
			&(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts),
				.flags = 0x8 }), -EINVAL);
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), 0, NULL), -EINVAL);
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"),
					  IN_CREATE | IN_ONESHOT, NULL),
			 -EINVAL);
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"),
					  IN_CREATE | IN_MASK_ADD, NULL),
			 -EINVAL);
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "file"),
					  IN_CREATE, NULL), -ENOTDIR);
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "none"),
					  IN_CREATE, NULL), -ENOENT);
	dfd = open(P(f, "file"), O_RDONLY);
	assert_int_equal(inofd_watch_tree_at(f->in, dfd, "", IN_CREATE,
			&(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts),
				.flags = INOFD_AT_EMPTY_PATH }), -ENOTDIR);
	close(dfd);

	/* a plain watch and a tree share a directory, each whole (finding 6) */
	wd = inofd_watch_path(f->in, P(f, "t/sub"), IN_CREATE, "plain");
	assert_true(wd >= 0);
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE,
			&(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts),
				.data = "tree" }) >= 0);
	assert_int_equal(inofd_watch_count(f->in), 2);
	mkfile(P(f, "t/sub/y"));
	drain(f, 30);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, "y"), 2);
	/* and the tree goes on below it */
	mkdirp(P(f, "t/sub/deeper"));
	drain(f, 30);
	f->n = 0;
	mkfile(P(f, "t/sub/deeper/z"));
	drain(f, 30);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, "z"), 1);
	assert_string_equal(f->r[find(f, INOFD_EV_INOTIFY, IN_CREATE, "z")].data,
			    "tree");
}

static void tree_by_fd(void **state)
{
	struct fx *f = *state;
	char real[PATH_MAX], want[PATH_MAX + 8];
	int fd, i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/s"));
	fd = open(P(f, "t"), O_RDONLY | O_DIRECTORY);
	assert_true(inofd_watch_tree_at(f->in, fd, "", IN_CREATE,
			&(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts),
				.flags = INOFD_AT_EMPTY_PATH }) >= 0);
	close(fd);
	mkfile(P(f, "t/s/x"));
	drain(f, 30);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "x");
	assert_true(i >= 0);
	assert_non_null(realpath(P(f, "t"), real));
	snprintf(want, sizeof(want), "%s/s/x", real);
	assert_string_equal(f->r[i].path, want);
}

static void tree_overflow_rewalk(void **state)
{
	struct fx *f = *state;
	int a, b, i;

	mkdirp(P(f, "t"));
	mkfile(P(f, "t/fa"));
	mkfile(P(f, "t/fb"));
	assert_true(tree(f, "t", NULL) >= 0);
	a = open(P(f, "t/fa"), O_RDONLY);
	b = open(P(f, "t/fb"), O_RDONLY);
	f->ignore = IN_ATTRIB | IN_OPEN | IN_CLOSE;
	/* overflow the queue whatever fs.inotify.max_queued_events is */
	for (i = 0; i < max_queued() + 1000; i++)
		fchmod((i & 1) ? a : b, (i & 2) ? 0600 : 0644);
	close(a);
	close(b);
	mkdirp(P(f, "t/lost"));		/* its IN_CREATE is lost */
	drain(f, 50);
	assert_true(find(f, INOFD_EV_RESCAN, IN_Q_OVERFLOW, NULL) >= 0);
	assert_int_equal(inofd_watch_count(f->in), 2);	/* found by the re-walk */
	f->n = 0;
	mkfile(P(f, "t/lost/x"));
	drain(f, 30);
	created(f, "x", "t/lost/x");
}

static int enospc_child(void *arg)
{
	struct fx *f = arg;
	const struct inofd_event *ev;
	struct inofd *in;
	int r, root, errs = 0, chain = 0, k;

	if (limit_watches(3) < 0)
		return 77;
	if (inofd_new(&in, NULL))
		return 2;
	/* five directories, three watches: nothing is left behind */
	r = inofd_watch_tree_at(in, AT_FDCWD, P(f, "big"), IN_CREATE, NULL);
	if (r != -ENOSPC)
		return 3;
	if (inofd_watch_count(in) != 0)
		return 4;
	if (inofd_read(in) != 0)	/* and nothing is reported about it */
		return 5;
	/* two directories fit; the third comes later and does not */
	root = inofd_watch_tree_at(in, AT_FDCWD, P(f, "small"), IN_CREATE, NULL);
	if (root < 0 || inofd_watch_count(in) != 2)
		return 6;
	if (mkdir(P(f, "small/n"), 0755) || mkdir(P(f, "small/n/m"), 0755))
		return 7;
	usleep(20000);
	inofd_read(in);
	/* twice: the first read hands out what the watch call queued */
	for (k = 0; k < 2; k++, inofd_read(in))
		while (inofd_next(in, &ev) > 0) {
			if (ev->type == INOFD_EV_ERROR && !ev->name) {
				/* the third watch was the root's parent's: the
				 * chain above the root cannot be made, and that
				 * is said */
				if (ev->error != -ENOSPC || ev->wd != root)
					return 10;
				chain++;
			} else if (ev->type == INOFD_EV_ERROR) {
				if (ev->error != -ENOSPC ||
				    strcmp(ev->name, "n"))
					return 8;
				errs++;
			}
		}
	/* the subtree named by the error is unwatched, the rest stays */
	if (errs != 1 || chain != 1 || inofd_watch_count(in) != 2)
		return 9;
	inofd_free(in);
	return 0;
}

static void tree_enospc(void **state)
{
	struct fx *f = *state;

	mkdirp(P(f, "big"));
	mkdirp(P(f, "big/1"));
	mkdirp(P(f, "big/2"));
	mkdirp(P(f, "big/2/3"));
	mkdirp(P(f, "big/2/4"));
	mkdirp(P(f, "small"));
	mkdirp(P(f, "small/s"));
	in_child_watches(enospc_child, f, "ENOSPC scenario");
}

/*
 * A directory made inside a tree is watched, but one below it is over the
 * limit: the new subtree goes whole, and one error names its top by the
 * name its member held (kept in the member itself: src/pool.c).
 */
static int enospc_below_child(void *arg)
{
	struct fx *f = arg;
	const struct inofd_event *ev;
	struct inofd *in;
	char *real = realpath(P(f, "small"), NULL);
	int root, comps = 0, errs = 0, chain = 0, k;
	const char *c;

	if (!real)
		return 2;
	for (c = real; *c; c++)
		comps += *c == '/';
	free(real);
	/* the root (one watch), its ancestors ("/" and each directory
	 * above it: one per '/'), and one more: "n" fits; below it, the
	 * chain's watches give way to "n/m" and its subdirectories
	 * (issue 26), but there are more of them than the chain has */
	if (limit_watches(comps + 2) < 0)
		return 77;
	if (inofd_new(&in, NULL))
		return 3;
	root = inofd_watch_tree_at(in, AT_FDCWD, P(f, "small"), IN_CREATE, NULL);
	if (root < 0 || inofd_watch_count(in) != 1)
		return 4;
	if (mkdir(P(f, "small/n"), 0755) || mkdir(P(f, "small/n/m"), 0755))
		return 5;
	for (k = 0; k < comps + 2; k++) {
		char sub[32];

		snprintf(sub, sizeof(sub), "small/n/m/%d", k);
		if (mkdir(P(f, sub), 0755))
			return 5;
	}
	usleep(20000);
	inofd_read(in);
	for (k = 0; k < 3; k++, usleep(20000), inofd_read(in))
		while (inofd_next(in, &ev) > 0)
			if (ev->type == INOFD_EV_ERROR && !ev->name) {
				/* the chain gave way: said once */
				if (ev->error != -ENOSPC || chain++)
					return 6;
			} else if (ev->type == INOFD_EV_ERROR) {
				if (ev->error != -ENOSPC || !ev->name ||
				    strcmp(ev->name, "n"))
					return 6;
				errs++;
			}
	if (errs != 1 || chain != 1 || inofd_watch_count(in) != 1)
		return 7;
	inofd_free(in);
	return 0;
}

static void tree_enospc_below_new_dir(void **state)
{
	struct fx *f = *state;

	mkdirp(P(f, "small"));
	in_child_watches(enospc_below_child, f, "ENOSPC below a new directory");
}

/*
 * Issue 26, reproduction 9: the limit leaves room for the tree and the
 * chain above it, and no more.  A new directory in the tree takes a
 * chain watch's place (the chain yields, from "/" down), as inotifywait
 * would watch it: said once as the chain's ERROR -ENOSPC (name NULL),
 * never as an error naming the directory, and the tree's paths are then
 * flagged maybe stale.
 */
static int chain_yields_child(void *arg)
{
	struct fx *f = arg;
	const struct inofd_event *ev;
	struct inofd *in;
	char *real = realpath(P(f, "small"), NULL), want[PATH_MAX];
	int root, comps = 0, chain = 0, named = 0, seen = 0, k;
	const char *c;

	if (!real)
		return 2;
	for (c = real; *c; c++)
		comps += *c == '/';
	snprintf(want, sizeof(want), "%s/n/m/x", real);
	free(real);
	/* the root, and "/" and each directory above it: one per '/' */
	if (limit_watches(comps + 1) < 0)
		return 77;
	if (inofd_new(&in, NULL))
		return 3;
	root = inofd_watch_tree_at(in, AT_FDCWD, P(f, "small"), IN_CREATE, NULL);
	if (root < 0)
		return 4;
	if (mkdir(P(f, "small/n"), 0755) || mkdir(P(f, "small/n/m"), 0755))
		return 5;
	usleep(20000);
	inofd_read(in);
	for (k = 0; k < 3; k++, usleep(20000), inofd_read(in))
		while (inofd_next(in, &ev) > 0)
			if (ev->type == INOFD_EV_ERROR && !ev->name &&
			    ev->error == -ENOSPC && ev->wd == root)
				chain++;
			else if (ev->type == INOFD_EV_ERROR)
				named++;
	if (chain != 1 || named)
		return 6;
	/* both new directories are watched */
	if (open(P(f, "small/n/m/x"), O_CREAT | O_WRONLY | O_CLOEXEC, 0644) < 0)
		return 7;
	for (k = 0; k < 3; k++, usleep(20000), inofd_read(in))
		while (inofd_next(in, &ev) > 0)
			if (ev->type == INOFD_EV_INOTIFY && ev->name &&
			    !strcmp(ev->name, "x")) {
				if (!(ev->flags & INOFD_EVF_STALE_PATH) ||
				    !ev->path || strcmp(ev->path, want))
					return 8;
				seen++;
			}
	if (seen != 1)
		return 9;
	inofd_free(in);
	return 0;
}

static void tree_chain_yields_to_tree(void **state)
{
	struct fx *f = *state;

	mkdirp(P(f, "small"));
	in_child_watches(chain_yields_child, f, "the chain yields to the tree");
}

static int kwd(struct fx *f, const char *rel)
{
	struct stat st;

	assert_int_equal(stat(P(f, rel), &st), 0);
	return inofd__kwd_of(f->in, st.st_dev, st.st_ino);
}

/* from_wd/from_name moved into to_wd: the tree is out of date */
static void moved_into_itself(struct fx *f, int from_wd, const char *from,
			      int to_wd, const char *to)
{
	f->n = 0;
	inject_len = 0;
	inject_event(from_wd, IN_MOVED_FROM | IN_ISDIR, 3, from);
	inject_event(to_wd, IN_MOVED_TO | IN_ISDIR, 3, to);
	assert_true(inofd__feed(f->in, inject, inject_len) >= 0);
	drain(f, 30);
	/* no false path is made up: a rescan is asked for, and the crawl
	 * puts the table back as it really is */
	assert_true(find(f, INOFD_EV_RESCAN, 0, NULL) >= 0);
}

/*
 * A directory "moved" into its own subtree or into itself (fuzz:
 * dir-moved-into-own-subtree).  The kernel refuses such a rename, so the
 * events only come when the tree is out of date (lost events); they are
 * fed in here.  The library says events were lost (INOFD_EV_RESCAN) and
 * re-walks the tree: every directory keeps its real path.
 */
static void tree_dir_moved_into_own_subtree(void **state)
{
	struct fx *f = *state;
	int root, i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/b"));
	mkdirp(P(f, "t/b/e"));
	mkdirp(P(f, "t/c"));
	root = tree(f, "t", "tree");
	assert_true(root >= 0);
	assert_int_equal(inofd_watch_count(f->in), 4);

	moved_into_itself(f, kwd(f, "t"), "c", kwd(f, "t/c"), "n");
	assert_int_equal(inofd_watch_count(f->in), 4);
	moved_into_itself(f, kwd(f, "t"), "b", kwd(f, "t/b/e"), "b");
	assert_int_equal(inofd_watch_count(f->in), 4);

	f->n = 0;
	mkfile(P(f, "t/b/e/y"));
	mkfile(P(f, "t/c/y"));
	mkfile(P(f, "t/z"));
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, "y"), 2);
	for (i = 0; i < f->n; i++)
		if (f->r[i].type == INOFD_EV_INOTIFY && !strcmp(f->r[i].name, "y"))
			assert_true(!strcmp(f->r[i].path, P(f, "t/b/e/y")) ||
				    !strcmp(f->r[i].path, P(f, "t/c/y")));
	created(f, "z", "t/z");
	assert_int_equal(inofd_unwatch(f->in, root), 0);
}

/* the events inofd__feed() made, copied (no read of the kernel's) */
static void take_fed(struct fx *f)
{
	const struct inofd_event *ev;

	f->n = 0;
	while (f->n < MAXREC && inofd_next(f->in, &ev) > 0)
		rec_copy(&f->r[f->n++], ev);
}

/*
 * Issue 26: the kernel queues a rename's IN_MOVED_FROM and IN_MOVED_TO one
 * after the other but not atomically: a record of another task, even one
 * inside the directory being renamed, can land between them.  The halves
 * are paired by cookie whatever lies between (one INOFD_EV_RENAME, no
 * MOVE_OUT + MOVE_IN, the subtree keeps its watches), and the record in
 * between, queued after the rename was done, is given the path the rename
 * made.  The records are fed after the real rename (the kernel's own ones
 * follow them and change nothing).
 */
static void tree_rename_split_by_another_record(void **state)
{
	struct fx *f = *state;
	int root, t, b, sub, i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "t/a/sub"));
	mkdirp(P(f, "t/b"));
	mkdirp(P(f, "t/c"));
	root = tree(f, "t", "tree");
	assert_true(root >= 0);
	assert_int_equal(inofd_watch_count(f->in), 5);
	drain(f, 30);
	t = kwd(f, "t");
	b = kwd(f, "t/b");
	assert_int_equal(rename(P(f, "t/a"), P(f, "t/b/a2")), 0);
	mkfile(P(f, "t/b/a2/sub/f"));
	sub = kwd(f, "t/b/a2/sub");

	/* FROM, a record inside the moving directory, an unrelated one, TO
	 * and the moved directory's MOVE_SELF (fsnotify_move()'s order) */
	inject_len = 0;
	inject_event(t, IN_MOVED_FROM | IN_ISDIR, 77, "a");
	inject_event(sub, IN_CREATE, 0, "f");
	inject_event(kwd(f, "t/c"), IN_ATTRIB | IN_ISDIR, 0, NULL);
	inject_event(b, IN_MOVED_TO | IN_ISDIR, 77, "a2");
	inject_event(kwd(f, "t/b/a2"), IN_MOVE_SELF, 0, NULL);
	assert_true(inofd__feed(f->in, inject, inject_len) >= 0);
	take_fed(f);
	if (count(f, INOFD_EV_RENAME, 0, NULL) != 1)
		dump(f);
	assert_int_equal(count(f, INOFD_EV_MOVE_OUT, 0, NULL), 0);
	assert_int_equal(count(f, INOFD_EV_MOVE_IN, 0, NULL), 0);
	i = find(f, INOFD_EV_RENAME, 0, "a2");
	assert_int_equal(i, 0);		/* at the FROM's place */
	assert_string_equal(f->r[i].from_path, P(f, "t/a"));
	assert_string_equal(f->r[i].path, P(f, "t/b/a2"));
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "f");
	assert_int_equal(i, 1);
	assert_string_equal(f->r[i].path, P(f, "t/b/a2/sub/f"));
	assert_int_equal(f->r[2].mask, IN_ATTRIB | IN_ISDIR);
	assert_string_equal(f->r[2].path, P(f, "t/c"));
	/* the TO's record is not seen again; the MOVE_SELF is the tree's */
	assert_int_equal(f->n, 4);
	assert_int_equal(f->r[3].mask, IN_MOVE_SELF);
	assert_string_equal(f->r[3].path, P(f, "t/b/a2"));
	assert_int_equal(inofd_watch_count(f->in), 5);

	/* the kernel's own records of it, then a new event down there */
	drain(f, 50);
	f->n = 0;
	mkfile(P(f, "t/b/a2/sub/g"));
	drain(f, 50);
	created(f, "g", "t/b/a2/sub/g");
	assert_int_equal(inofd_watch_count(f->in), 5);
}

/*
 * Issue 26: a directory moved out of the tree has no IN_MOVED_TO, but its
 * own IN_MOVE_SELF (queued after where the TO would be) says so: a record
 * inside it that came between is not held for the window, the half is
 * settled at once as a move-out, and the record (queued after the move)
 * is not reported.
 */
static void tree_move_out_split_by_another_record(void **state)
{
	struct fx *f = *state;
	int root, t, a, i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "out"));
	root = tree(f, "t", "tree");
	assert_true(root >= 0);
	drain(f, 30);
	t = kwd(f, "t");
	a = kwd(f, "t/a");
	assert_int_equal(rename(P(f, "t/a"), P(f, "out/a")), 0);
	inject_len = 0;
	inject_event(t, IN_MOVED_FROM | IN_ISDIR, 78, "a");
	inject_event(a, IN_CREATE, 0, "f");
	inject_event(a, IN_MOVE_SELF, 0, NULL);
	assert_true(inofd__feed(f->in, inject, inject_len) >= 0);
	take_fed(f);
	i = find(f, INOFD_EV_MOVE_OUT, 0, "a");
	assert_int_equal(i, 0);
	assert_string_equal(f->r[i].path, P(f, "t/a"));
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, "f"), 0);
	assert_int_equal(inofd_watch_count(f->in), 1);
	drain(f, 50);
}

/*
 * Issue 26 (the guest's lib_oracle_writer, seed 5 as uid 65534, [order]):
 * a file moved where the tree has no watch yet leaves its FROM waiting;
 * then a directory is renamed onto the file's old name.  That rename's TO
 * is its own half's partner, and it is also an event on the waiting
 * half's source name: the file's MOVE_OUT comes first, then the RENAME
 * that puts the directory there, never the other way round.
 */
static void tree_partner_on_waiting_name(void **state)
{
	struct fx *f = *state;
	int root, t, d, i, o, r;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/d"));
	mkdirp(P(f, "t/d/s"));
	mkfile(P(f, "t/n"));
	mkdirp(P(f, "out"));
	root = tree(f, "t", "tree");
	assert_true(root >= 0);
	drain(f, 30);
	t = kwd(f, "t");
	d = kwd(f, "t/d");
	assert_int_equal(rename(P(f, "t/n"), P(f, "out/n")), 0);
	assert_int_equal(rename(P(f, "t/d/s"), P(f, "t/n")), 0);
	inject_len = 0;
	inject_event(t, IN_MOVED_FROM, 81, "n");
	inject_event(d, IN_MOVED_FROM | IN_ISDIR, 82, "s");
	inject_event(t, IN_MOVED_TO | IN_ISDIR, 82, "n");
	inject_event(kwd(f, "t/n"), IN_MOVE_SELF, 0, NULL);
	assert_true(inofd__feed(f->in, inject, inject_len) >= 0);
	take_fed(f);
	o = find(f, INOFD_EV_MOVE_OUT, 0, "n");
	r = find(f, INOFD_EV_RENAME, 0, "n");
	if (o < 0 || r < 0 || o > r)
		dump(f);
	assert_true(o >= 0 && r >= 0);
	assert_true(o < r);
	assert_string_equal(f->r[o].path, P(f, "t/n"));
	assert_string_equal(f->r[r].path, P(f, "t/n"));
	assert_string_equal(f->r[r].from_path, P(f, "t/d/s"));
	i = count(f, INOFD_EV_MOVE_IN, 0, NULL);
	assert_int_equal(i, 0);
	drain(f, 50);
}

/*
 * A file moved out of a directory, then the directory moved out too
 * (watchdog's test_move_from): the file's half waits for a partner, but
 * the directory's FROM moves what it left, so the file's half is decided
 * first: its MOVE_OUT comes, with the directory's path, before the
 * directory's, not never.
 */
static void tree_half_before_its_directory_goes(void **state)
{
	struct fx *f = *state;
	int root, t, d, a, o;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/d"));
	mkfile(P(f, "t/d/a"));
	mkdirp(P(f, "out"));
	root = tree(f, "t", "tree");
	assert_true(root >= 0);
	drain(f, 30);
	t = kwd(f, "t");
	d = kwd(f, "t/d");
	assert_int_equal(rename(P(f, "t/d/a"), P(f, "out/a")), 0);
	assert_int_equal(rename(P(f, "t/d"), P(f, "out/d")), 0);
	inject_len = 0;
	inject_event(d, IN_MOVED_FROM, 91, "a");
	inject_event(t, IN_MOVED_FROM | IN_ISDIR, 92, "d");
	inject_event(d, IN_MOVE_SELF, 0, NULL);
	assert_true(inofd__feed(f->in, inject, inject_len) >= 0);
	take_fed(f);
	a = find(f, INOFD_EV_MOVE_OUT, 0, "a");
	o = find(f, INOFD_EV_MOVE_OUT, 0, "d");
	if (a < 0 || o < 0 || a > o)
		dump(f);
	assert_true(a >= 0 && o >= 0 && a < o);
	assert_string_equal(f->r[a].path, P(f, "t/d/a"));
	drain(f, 50);
}

DEFINE_TESTS(tree,
	T(tree_initial_quiet),
	T(tree_new_dirs_miss_nothing),
	T(tree_rename_inside),
	T(tree_ancestor_renames),
	T(tree_deep_root_ancestor_rename),
	T(tree_chain_yields_to_tree),
	T(tree_move_out_and_back),
	T(tree_delete_and_unwatch),
	T(tree_errors),
	T(tree_by_fd),
	T(tree_overflow_rewalk),
	T(tree_enospc),
	T(tree_enospc_below_new_dir),
	T(tree_dir_moved_into_own_subtree),
	T(tree_rename_split_by_another_record),
	T(tree_move_out_split_by_another_record),
	T(tree_partner_on_waiting_name),
	T(tree_half_before_its_directory_goes),
)
