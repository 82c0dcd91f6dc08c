// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The core's contract (issue 9): trees that follow or say they lost track,
 * registrations that keep their own data, a queue that is bounded and
 * costs no allocation per event, reads that suit edge-triggered epoll.
 */
#include "unit.h"

#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/resource.h>

static int tree(struct fx *f, const char *rel, void *data)
{
	return inofd_watch_tree_at(f->in, AT_FDCWD, P(f, rel), IN_ALL_EVENTS,
			&(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts),
				.data = data });
}

/* the record of the IN_CREATE of name, which must exist */
static struct rec *created(struct fx *f, const char *name)
{
	int i = find(f, INOFD_EV_INOTIFY, IN_CREATE, name);

	if (i < 0) {
		dump(f);
		fail_msg("no IN_CREATE for %s", name);
	}
	return &f->r[i];
}

/* Finding 1: a renamed root keeps following new directories. */
static void root_rename_followed(void **state)
{
	struct fx *f = *state;
	const char *p;
	int root;

	mkdirp(P(f, "A"));
	root = tree(f, "A", "t");
	assert_true(root >= 0);
	assert_int_equal(rename(P(f, "A"), P(f, "A2")), 0);
	mkdirp(P(f, "A2/x"));
	drain(f, 50);
	assert_int_equal(find(f, INOFD_EV_ERROR, 0, NULL), -1);
	f->n = 0;
	mkfile(P(f, "A2/x/f"));
	drain(f, 50);
	assert_string_equal(created(f, "f")->path, P(f, "A2/x/f"));
	assert_int_equal(inofd_wd_path(f->in, root, &p), 0);
	assert_string_equal(p, P(f, "A2"));
	/* the internal watch of the root's parent is not counted */
	assert_int_equal(inofd_watch_count(f->in), 2);
}

/* A root moved where the library cannot see: said once, then NULL paths. */
static void root_lost_said_once(void **state)
{
	struct fx *f = *state;
	int root, i;

	mkdirp(P(f, "p"));
	mkdirp(P(f, "p/A"));
	mkdirp(P(f, "p/A/sub"));
	mkdirp(P(f, "q"));
	root = tree(f, "p/A", "t");
	assert_true(root >= 0);
	assert_int_equal(rename(P(f, "p/A"), P(f, "q/B")), 0);
	drain(f, 50);
	mkfile(P(f, "q/B/sub/late"));
	rmdir(P(f, "q/B/sub"));
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_ERROR, 0, NULL), 1);
	i = find(f, INOFD_EV_ERROR, 0, NULL);
	assert_int_equal(f->r[i].error, -ESTALE);
	assert_true(f->r[i].flags & INOFD_EVF_LOST);
	assert_int_equal(f->r[i].wd, root);
	assert_string_equal(f->r[i].data, "t");
	/* never a false path: every later event has none */
	for (i++; i < f->n; i++)
		assert_string_equal(f->r[i].path, "");
	assert_true(count(f, INOFD_EV_INOTIFY, IN_CREATE, "late") == 1);
}

/* Finding 2: renames and mkdirs read in one batch lose nothing. */
static void batch_mkdir_then_rename(void **state)
{
	struct fx *f = *state;

	mkdirp(P(f, "B"));
	assert_true(tree(f, "B", NULL) >= 0);
	mkdirp(P(f, "B/a"));
	mkdirp(P(f, "B/a/b"));
	assert_int_equal(rename(P(f, "B/a"), P(f, "B/c")), 0);
	usleep(20000);
	drain(f, 50);
	assert_int_equal(find(f, INOFD_EV_ERROR, 0, NULL), -1);
	assert_int_equal(inofd_watch_count(f->in), 3);
	f->n = 0;
	mkfile(P(f, "B/c/b/f"));
	drain(f, 50);
	assert_string_equal(created(f, "f")->path, P(f, "B/c/b/f"));
}

/* Finding 3: a relative root is made absolute when watched. */
static void relative_root_after_chdir(void **state)
{
	struct fx *f = *state;
	char cwd[PATH_MAX];

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	mkdirp(P(f, "rel"));
	assert_int_equal(chdir(f->dir), 0);
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, "rel", IN_CREATE, NULL) >= 0);
	assert_int_equal(chdir("/"), 0);
	mkdirp(P(f, "rel/n"));
	drain(f, 50);
	f->n = 0;
	mkfile(P(f, "rel/n/f"));
	drain(f, 50);
	assert_int_equal(chdir(cwd), 0);
	assert_string_equal(created(f, "f")->path, P(f, "rel/n/f"));
}

static void flood(struct fx *f, const char *a_rel, const char *b_rel, int n)
{
	int a = open(P(f, a_rel), O_RDONLY), b = open(P(f, b_rel), O_RDONLY), i;

	for (i = 0; i < n; i++)
		fchmod((i & 1) ? a : b, (i & 2) ? 0600 : 0644);
	close(a);
	close(b);
}

/* Finding 4: the overflow re-walk drops what it did not reach. */
static void overflow_crawl_drops_stale(void **state)
{
	struct fx *f = *state;
	int i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/a"));
	mkdirp(P(f, "out"));
	mkfile(P(f, "t/fa"));
	mkfile(P(f, "t/fb"));
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE |
				     IN_ATTRIB, NULL) >= 0);
	f->ignore = IN_ATTRIB;
	flood(f, "t/fa", "t/fb", max_queued() + 1000);
	/* its IN_MOVED_FROM is lost */
	assert_int_equal(rename(P(f, "t/a"), P(f, "out/a")), 0);
	drain(f, 50);
	assert_true(find(f, INOFD_EV_RESCAN, IN_Q_OVERFLOW, NULL) >= 0);
	assert_int_equal(inofd_watch_count(f->in), 1);
	f->n = 0;
	mkfile(P(f, "out/a/outside"));
	drain(f, 50);
	for (i = 0; i < f->n; i++)
		assert_null(strstr(f->r[i].path, "outside"));
}

/* Finding 5: one IN_IGNORED per registration, with its data. */
static void ignored_once_per_registration(void **state)
{
	struct fx *f = *state;
	int a, b;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/d1"));
	mkdirp(P(f, "t/d1/d2"));
	a = tree(f, "t", "tree");
	b = inofd_watch_path(f->in, P(f, "t/d1"), IN_DELETE_SELF, "plain");
	assert_true(a >= 0 && b >= 0);
	rmdir(P(f, "t/d1/d2"));
	rmdir(P(f, "t/d1"));
	drain(f, 50);
	/* the plain watch ended; the tree's members did not tell anyone */
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 1);
	assert_string_equal(f->r[find(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL)].data,
			    "plain");
	rmdir(P(f, "t"));
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 2);
	assert_int_equal(inofd_watch_count(f->in), 0);
}

/* Finding 11: IN_DONT_FOLLOW honoured (path) or refused (fd), not dropped */
static void dont_follow(void **state)
{
	struct fx *f = *state;
	int fd, wd;

	mkfile(P(f, "target"));
	assert_int_equal(symlink("target", P(f, "link")), 0);
	fd = open(P(f, "target"), O_RDONLY);
	assert_int_equal(inofd_watch_fd(f->in, fd, IN_MODIFY | IN_DONT_FOLLOW,
					NULL), -EINVAL);
	close(fd);
	wd = inofd_watch_at(f->in, AT_FDCWD, P(f, "link"),
			    IN_ATTRIB | IN_DONT_FOLLOW, 0, NULL);
	assert_true(wd >= 0);
	chmod(P(f, "target"), 0600);	/* the target: not watched */
	drain(f, 50);
	assert_int_equal(f->n, 0);
}

/* A plain watch whose object moved says its path is stale. */
static void plain_path_flagged_stale(void **state)
{
	struct fx *f = *state;
	int i;

	mkfile(P(f, "file"));
	assert_true(inofd_watch_path(f->in, P(f, "file"), IN_ATTRIB, NULL) >= 0);
	chmod(P(f, "file"), 0600);
	drain(f, 50);
	assert_int_equal(f->r[0].flags & INOFD_EVF_STALE_PATH, 0);
	assert_int_equal(rename(P(f, "file"), P(f, "moved")), 0);
	chmod(P(f, "moved"), 0644);
	drain(f, 50);
	i = f->n - 1;
	assert_true(f->r[i].flags & INOFD_EVF_STALE_PATH);
}

/* Options: INOFD_OPTS, no padding, tree options, getters. */
static void options_and_getters(void **state)
{
	struct fx *f = *state;
	static const char *const ex[] = { ".git", "node_*", NULL };
	static const char *const slash[] = { "src/d2", NULL };
	INOFD_OPTS(o, .pair_timeout_ms = 5, .queue_max = 100);
	INOFD_TREE_OPTS(to, .exclude = ex, .max_depth = 2, .data = "x");
	unsigned char big[sizeof(to) + 8];
	struct inofd *in;
	const char *p;
	void *d;
	int wd;

	assert_int_equal(o.sz, sizeof(o));
	assert_int_equal(inofd_new(&in, &o), 0);
	inofd_free(in);
	assert_int_equal(inofd_major_version(), INOFD_VERSION_MAJOR);
	assert_int_equal(inofd_minor_version(), INOFD_VERSION_MINOR);

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/.git"));
	mkdirp(P(f, "t/node_modules"));
	mkdirp(P(f, "t/src"));
	mkdirp(P(f, "t/src/d2"));
	mkdirp(P(f, "t/src/d2/d3"));
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, &to);
	assert_true(wd >= 0);
	/* t, src, src/d2: not .git, node_modules, nor depth 3 */
	assert_int_equal(inofd_watch_count(f->in), 3);
	assert_int_equal(inofd_wd_path(f->in, wd, &p), 0);
	assert_string_equal(p, P(f, "t"));
	assert_int_equal(inofd_wd_data(f->in, wd, &d), 0);
	assert_string_equal(d, "x");
	assert_int_equal(inofd_wd_data(f->in, wd + 100, &d), -EINVAL);
	/* a flag of another namespace place, an unknown one */
	to.flags = INOFD_RAW_MOVES;
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"),
					     IN_CREATE, &to), -EINVAL);
	to.flags = 0x80;
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"),
					     IN_CREATE, &to), -EINVAL);
	/* patterns match names: one with a '/' is refused, not ignored */
	to.flags = 0;
	to.exclude = slash;
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"),
					     IN_CREATE, &to), -EINVAL);
	/* a newer caller's non-zero unknown bytes */
	to.exclude = NULL;
	memset(big, 0, sizeof(big));
	memcpy(big, &to, sizeof(to));
	((struct inofd_tree_opts *)big)->sz = sizeof(big);
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE,
					(void *)big) >= 0);
	big[sizeof(to) + 2] = 1;
	assert_int_equal(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"),
					     IN_CREATE, (void *)big), -EINVAL);
	/* directories watched: the second tree added .git, node_modules */
	assert_int_equal(inofd_watch_count(f->in), 5);
}

/*
 * Finding 7: a pending half of one watch holds back no other event.  Since
 * issue 26 a record that is not about the half does not settle it either
 * (another task's record can land between a rename's halves): it is
 * applied, and the half waits for its partner or its window.
 */
static void pending_half_blocks_nobody(void **state)
{
	struct fx *f = *state;
	const struct inofd_event *ev;

	mkdirp(P(f, "w1"));
	mkdirp(P(f, "w2"));
	mkdirp(P(f, "out"));
	mkfile(P(f, "w1/a"));
	assert_true(inofd_watch_path(f->in, P(f, "w1"), IN_MOVE, NULL) >= 0);
	assert_true(inofd_watch_path(f->in, P(f, "w2"), IN_CREATE, NULL) >= 0);
	assert_int_equal(rename(P(f, "w1/a"), P(f, "out/a")), 0);
	mkfile(P(f, "w2/x"));
	assert_int_equal(inofd_read(f->in), 1);
	assert_int_equal(inofd_next(f->in, &ev), 1);
	assert_string_equal(ev->name, "x");
	assert_int_equal(inofd_next(f->in, &ev), 0);
	assert_true(inofd_timeout(f->in) > 0);	/* the half waits */
	f->n = 0;
	drain(f, 20);
	assert_int_equal(f->n, 1);
	assert_int_equal(f->r[0].type, INOFD_EV_MOVE_OUT);
	assert_string_equal(f->r[0].name, "a");
	assert_int_equal(inofd_timeout(f->in), -1);	/* nothing waits */
}

/* Finding 7: the queue is bounded; past it, one INOFD_EV_RESCAN. */
/* f->in becomes an instance whose queue holds max ready events */
static void bounded(struct fx *f, unsigned int max)
{
	INOFD_OPTS(o, .queue_max = max);

	inofd_free(f->in);
	assert_int_equal(inofd_new(&f->in, &o), 0);
}

static void queue_bounded(void **state)
{
	struct fx *f = *state;
	size_t n = 70000, i, len = n * sizeof(struct inotify_event);
	struct inotify_event *evs = calloc(n, sizeof(*evs));
	const struct inofd_event *ev;
	int wd, r, got = 0, rescans = 0;
	struct stat st;

	bounded(f, 65536);
	assert_non_null(evs);
	wd = inofd_watch_path(f->in, f->dir, IN_ATTRIB, NULL);
	assert_true(wd >= 0);
	assert_int_equal(stat(f->dir, &st), 0);
	for (i = 0; i < n; i++) {
		evs[i].wd = inofd__kwd_of(f->in, st.st_dev, st.st_ino);
		evs[i].mask = IN_ATTRIB | IN_ISDIR;
	}
	r = inofd__feed(f->in, evs, len);
	assert_true(r > 0 && r <= 65537);
	while (inofd_next(f->in, &ev) > 0) {
		got++;
		rescans += ev->type == INOFD_EV_RESCAN;
	}
	assert_int_equal(got, r);
	assert_int_equal(rescans, 1);
	assert_int_equal(inofd__feed(f->in, evs, 10), -EINVAL);	/* torn */
	free(evs);
}

/*
 * The common event is reported by dispatch.c's fast path (one member on
 * the kernel watch, no move, no IN_ISDIR); with a second registration on
 * the same kernel watch the same bytes go through process().  Both must
 * give the tree the same events: names of every padding, no name, unknown
 * and unwanted events, across queue blocks and arena chunks.
 */
struct fed {
	char *buf;
	size_t len, cap;
};

static void put(struct fed *b, int wd, uint32_t mask, uint32_t cookie,
		const char *name, uint32_t len)
{
	struct inotify_event e = { .wd = wd, .mask = mask, .cookie = cookie,
				   .len = len };

	if (b->len + sizeof(e) + len > b->cap) {
		b->cap = (b->len + sizeof(e) + len) * 2;
		b->buf = realloc(b->buf, b->cap);
		assert_non_null(b->buf);
	}
	memcpy(b->buf + b->len, &e, sizeof(e));
	memset(b->buf + b->len + sizeof(e), 0, len);
	if (name)
		memcpy(b->buf + b->len + sizeof(e), name, strlen(name));
	b->len += sizeof(e) + len;
}

static int collect(struct inofd *in, const struct fed *b, int wd,
		   struct rec *r, int max)
{
	const struct inofd_event *ev;
	int n = 0;

	assert_true(inofd__feed(in, b->buf, b->len) >= 0);
	while (inofd_next(in, &ev) > 0) {
		if (ev->wd != wd)
			continue;
		assert_true(n < max);
		rec_copy(&r[n++], ev);
		assert_null(ev->from_name);
		assert_null(ev->from_path);
		/* the name is the path's last component */
		if (ev->name)
			assert_ptr_equal(ev->name, ev->path + strlen(ev->path) -
					 strlen(ev->name));
	}
	return n;
}

static void fast_path_matches_process(void **state)
{
	struct fx *f = *state;
	struct fed b = { 0 };
	struct rec *ra = calloc(4096, sizeof(*ra)), *rb = calloc(4096, sizeof(*rb));
	char name[300];
	struct stat st;
	int t, kwd, na, nb, i;

	assert_non_null(ra);
	assert_non_null(rb);
	mkdirp(P(f, "t"));
	t = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_MODIFY | IN_ATTRIB |
			     IN_CLOSE_WRITE | IN_CREATE | IN_DELETE,
			&(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts),
				.data = "tree" });
	assert_true(t >= 0);
	assert_true(read_quiet(f->in, 0, NULL, NULL) >= 0);
	assert_int_equal(stat(P(f, "t"), &st), 0);
	kwd = inofd__kwd_of(f->in, st.st_dev, st.st_ino);
	assert_true(kwd >= 0);
	for (i = 0; i < 3000; i++) {
		size_t nl = (size_t)(i % 40) + 1;

		memset(name, 'a' + i % 26, nl);
		name[nl] = '\0';
		/* names padded to 16 as the kernel does, and not */
		put(&b, kwd, (const uint32_t[]){ IN_MODIFY, IN_ATTRIB,
			IN_CLOSE_WRITE, IN_CREATE, IN_DELETE }[i % 5], 0, name,
		    i % 7 ? (uint32_t)((nl + 16) & ~15u) : (uint32_t)nl + 1 +
		    i % 3);
		if (i % 97 == 0)
			put(&b, kwd, IN_ATTRIB, 0, NULL, 0);	/* no name */
		if (i % 89 == 0)
			put(&b, kwd, IN_ATTRIB, 0, NULL, 16);	/* empty name */
		if (i % 83 == 0)
			put(&b, kwd, IN_ACCESS, 0, "unwanted", 16);
		if (i % 79 == 0)
			put(&b, kwd + 1000, IN_MODIFY, 0, "nowatch", 16);
		if (i % 73 == 0)
			put(&b, -1, IN_MODIFY, 0, "minus1", 16);
		if (i % 71 == 0)
			put(&b, kwd, IN_MODIFY, 7, "cookie", 16);
	}
	memset(name, 'z', 255);
	name[255] = '\0';
	put(&b, kwd, IN_MODIFY, 0, name, 256);
	na = collect(f->in, &b, t, ra, 4096);
	/* a second registration on the same kernel watch: process() */
	assert_true(inofd_watch_path(f->in, P(f, "t"), IN_ALL_EVENTS,
				     "plain") >= 0);
	assert_int_equal(inofd__kwd_of(f->in, st.st_dev, st.st_ino), kwd);
	nb = collect(f->in, &b, t, rb, 4096);
	assert_true(na > 3000);
	assert_int_equal(na, nb);
	for (i = 0; i < na; i++) {
		assert_int_equal(ra[i].type, rb[i].type);
		assert_int_equal(ra[i].mask, rb[i].mask);
		assert_int_equal(ra[i].cookie, rb[i].cookie);
		assert_int_equal(ra[i].flags, rb[i].flags);
		assert_int_equal(ra[i].error, rb[i].error);
		assert_int_equal(ra[i].from_wd, rb[i].from_wd);
		assert_ptr_equal(ra[i].data, rb[i].data);
		assert_ptr_equal(ra[i].from_data, rb[i].from_data);
		assert_int_equal(ra[i].nulls, rb[i].nulls);
		assert_string_equal(ra[i].name, rb[i].name);
		assert_string_equal(ra[i].path, rb[i].path);
	}
	assert_string_equal(ra[0].path, P(f, "t/a"));
	assert_string_equal(ra[na - 1].name, name);
	free(b.buf);
	free(ra);
	free(rb);
}

/* The fast path keeps the bound: qmax events, then one INOFD_EV_RESCAN. */
static void fast_path_bounded(void **state)
{
	struct fx *f = *state;
	struct fed b = { 0 };
	const struct inofd_event *ev;
	int wd, i, r, got = 0, rescans = 0, last = -1;
	struct stat st;

	bounded(f, 65536);
	wd = inofd_watch_path(f->in, f->dir, IN_MODIFY, NULL);
	assert_true(wd >= 0);
	assert_int_equal(stat(f->dir, &st), 0);
	for (i = 0; i < 70000; i++)
		put(&b, inofd__kwd_of(f->in, st.st_dev, st.st_ino), IN_MODIFY,
		    0, "x", 16);
	r = inofd__feed(f->in, b.buf, b.len);
	assert_int_equal(r, 65537);
	while (inofd_next(f->in, &ev) > 0) {
		got++;
		rescans += ev->type == INOFD_EV_RESCAN;
		last = ev->type;
		if (ev->type == INOFD_EV_INOTIFY)
			assert_string_equal(ev->path, P(f, "x"));
	}
	assert_int_equal(got, r);
	assert_int_equal(rescans, 1);
	assert_int_equal(last, INOFD_EV_RESCAN);
	free(b.buf);
}

/* Finding 8: out of memory is a loss like any other: INOFD_EV_RESCAN. */
static void oom_is_rescan(void **state)
{
	struct fx *f = *state;
	int i;

	assert_true(inofd_watch_path(f->in, f->dir, IN_CREATE, NULL) >= 0);
	mkfile(P(f, "a"));
	usleep(10000);
	unit_fail_allocs = true;
	i = inofd_read(f->in);
	unit_fail_allocs = false;
	assert_true(i >= 0);
	drain(f, 30);
	assert_true(find(f, INOFD_EV_RESCAN, 0, NULL) >= 0);
}

/* Finding 9: edge-triggered epoll gets everything from one wakeup. */
static void edge_triggered_epoll(void **state)
{
	struct fx *f = *state;
	struct epoll_event e = { .events = EPOLLIN | EPOLLET };
	const struct inofd_event *ev;
	int ep, i, n = 4000, got = 0, r;
	char name[64];

	assert_true(inofd_watch_path(f->in, f->dir, IN_CREATE, NULL) >= 0);
	ep = epoll_create1(0);
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, inofd_fd(f->in), &e), 0);
	/* about 200 KiB of events: more than one read(2) of 64 KiB */
	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "a-rather-long-file-name-%05d", i);
		mkfile(P(f, name));
	}
	assert_int_equal(epoll_wait(ep, &e, 1, 1000), 1);
	/* inofd_read() until it says 0, no poll in between (not read_quiet():
	 * the one wakeup must be enough) */
	while ((r = inofd_read(f->in)) > 0)
		while (inofd_next(f->in, &ev) > 0)
			got++;
	assert_int_equal(r, 0);
	assert_int_equal(got, n);
	/* nothing left behind the edge */
	assert_int_equal(epoll_wait(ep, &e, 1, 50), 0);
	close(ep);
}

/* Part C: no allocation per event in steady state, at depth 0 and 8. */
static int count_modify(const struct inofd_event *ev, void *arg)
{
	*(int *)arg += !!(ev->mask & IN_MODIFY) && ev->path;
	return 0;
}

static long allocs_per_round(struct fx *f, const char *dir, int nev)
{
	char p[PATH_MAX];
	int fds[4], i, got = 0;
	long before;

	for (i = 0; i < 4; i++) {
		snprintf(p, sizeof(p), "%s/f%d", dir, i);
		fds[i] = open(p, O_WRONLY | O_CREAT, 0644);
		assert_true(fds[i] >= 0);
	}
	drain(f, 20);
	f->n = 0;
	for (i = 0; i < nev; i++)
		assert_int_equal(pwrite(fds[i % 4], "x", 1, 0), 1);
	for (i = 0; i < 4; i++)
		close(fds[i]);
	before = unit_allocs;
	/* what is ready, without waiting */
	assert_true(read_quiet(f->in, 0, count_modify, &got) >= 0);
	assert_true(got >= nev / 2);
	return unit_allocs - before;
}

static void zero_allocs_per_event(void **state)
{
	struct fx *f = *state;
	char deep[PATH_MAX];
	long a;
	int d;

	snprintf(deep, sizeof(deep), "%s/t", f->dir);
	mkdirp(deep);
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, deep, IN_MODIFY | IN_CLOSE,
				     NULL) >= 0);
	for (d = 0; d < 8; d++) {
		strcat(deep, "/d");
		mkdirp(deep);
		usleep(2000);
		drain(f, 20);
	}
	assert_true(inofd_watch_path(f->in, f->dir, IN_MODIFY | IN_CLOSE,
				     NULL) >= 0);
	/* warm up: the arena and the queue grow to the largest read */
	allocs_per_round(f, f->dir, 1000);
	allocs_per_round(f, deep, 1000);
	a = allocs_per_round(f, f->dir, 1000);
	print_message("allocations for 1000 events at depth 0: %ld\n", a);
	assert_int_equal(a, 0);
	a = allocs_per_round(f, deep, 1000);
	print_message("allocations for 1000 events at depth 8: %ld\n", a);
	assert_int_equal(a, 0);
}

/* Finding 10: a walk error names its directory; EMFILE stops nothing else */
static int emfile_child(void *arg)
{
	struct fx *f = arg;
	const struct inofd_event *ev;
	struct rlimit rl = { 64, 64 };
	struct inofd *in;
	int errs = 0, fds = 0, last = -1, d;

	if (inofd_new(&in, NULL) ||
	    inofd_watch_tree_at(in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL) < 0)
		return 2;
	if (mkdir(P(f, "t/n"), 0755) || mkdir(P(f, "t/n/m"), 0755))
		return 3;
	usleep(10000);
	/* leave one descriptor: the walk opens one, its child needs another */
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 4;
	/* (the instance's own descriptors are not known: close a dup) */
	while ((d = dup(0)) >= 0) {
		last = d;
		fds++;
	}
	if (last < 0)
		return 6;
	close(last);
	inofd_read(in);
	while (inofd_next(in, &ev) > 0)
		if (ev->type == INOFD_EV_ERROR && ev->error == -EMFILE &&
		    ev->path && strstr(ev->path, "/t/n"))
			errs++;
	inofd_free(in);
	return errs ? 0 : 5;
}

static void walk_errors_reported(void **state)
{
	struct fx *f = *state;

	mkdirp(P(f, "t"));
	assert_int_equal(in_child(emfile_child, f), 0);
}

/* Part D: a walk is bounded per read, and the rest follows later. */
static void walk_bounded_per_read(void **state)
{
	struct fx *f = *state;
	char p[PATH_MAX];
	int i, n1;

	mkdirp(P(f, "t"));
	/* a chain 600 deep: one directory per walk step */
	snprintf(p, sizeof(p), "%s", P(f, "big"));
	for (i = 0; i < 600; i++) {
		mkdirp(p);
		strcat(p, "/d");
	}
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL) >= 0);
	assert_int_equal(rename(P(f, "big"), P(f, "t/big")), 0);
	usleep(10000);
	assert_true(inofd_read(f->in) >= 0);
	n1 = inofd_watch_count(f->in);
	if (n1 >= 601)
		fail_msg("one read walked all of it (%d watches)", n1);
	assert_int_equal(inofd_timeout(f->in), 0);	/* more to do: now */
	drain(f, 50);
	assert_int_equal(inofd_watch_count(f->in), 601);
	i = count(f, INOFD_EV_INOTIFY, IN_CREATE | IN_ISDIR, "d");
	if (i != 599)
		fail_msg("%d synthetic IN_CREATE, want 599", i);
	f->n = 0;
	/* the bottom: dir/t/big/d/.../d/f */
	snprintf(p, sizeof(p), "%s", P(f, "t/big"));
	for (i = 0; i < 599; i++)
		strcat(p, "/d");
	strcat(p, "/f");
	mkfile(p);
	drain(f, 50);
	assert_string_equal(created(f, "f")->path, p);
}

DEFINE_TESTS(core,
	T(root_rename_followed),
	T(root_lost_said_once),
	T(batch_mkdir_then_rename),
	T(relative_root_after_chdir),
	T(overflow_crawl_drops_stale),
	T(ignored_once_per_registration),
	T(dont_follow),
	T(plain_path_flagged_stale),
	T(options_and_getters),
	T(pending_half_blocks_nobody),
	T(queue_bounded),
	T(fast_path_matches_process),
	T(fast_path_bounded),
	T(oom_is_rescan),
	T(edge_triggered_epoll),
	T(zero_allocs_per_event),
	T(walk_errors_reported),
	T(walk_bounded_per_read),
)
