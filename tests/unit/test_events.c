// SPDX-License-Identifier: LGPL-2.1-or-later
/* inofd_read, inofd_next, inofd_timeout: pairing, overflow, coalescing. */
#include "unit.h"

#include <poll.h>
#include <time.h>

static struct inofd *make(unsigned int flags, unsigned int pair,
			  unsigned int coalesce)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = flags,
				.pair_timeout_ms = pair, .coalesce_ms = coalesce };
	struct inofd *in;

	assert_int_equal(inofd_new(&in, &o), 0);
	return in;
}

static void rename_paired(void **state)
{
	struct fx *f = *state;
	int wd, i;

	wd = inofd_watch_path(f->in, f->dir, IN_MOVE, "d");
	mkfile(P(f, "a"));
	assert_int_equal(rename(P(f, "a"), P(f, "b")), 0);
	drain(f, 50);
	assert_int_equal(f->n, 1);	/* one event, not two halves */
	i = find(f, INOFD_EV_RENAME, IN_MOVE, "b");
	assert_int_equal(i, 0);
	assert_string_equal(f->r[i].from_name, "a");
	assert_string_equal(f->r[i].from_path, P(f, "a"));
	assert_string_equal(f->r[i].path, P(f, "b"));
	assert_int_equal(f->r[i].wd, wd);
	assert_int_equal(f->r[i].from_wd, wd);
	assert_ptr_equal(f->r[i].from_data, f->r[i].data);
	assert_int_not_equal(f->r[i].cookie, 0);
}

static void rename_across_watches(void **state)
{
	struct fx *f = *state;
	int a, b, i;

	mkdirp(P(f, "d1"));
	mkdirp(P(f, "d2"));
	a = inofd_watch_path(f->in, P(f, "d1"), IN_MOVE, "one");
	b = inofd_watch_path(f->in, P(f, "d2"), IN_MOVE, "two");
	mkdirp(P(f, "d1/x"));
	assert_int_equal(rename(P(f, "d1/x"), P(f, "d2/y")), 0);
	drain(f, 50);
	i = find(f, INOFD_EV_RENAME, IN_MOVE | IN_ISDIR, "y");
	assert_true(i >= 0);
	assert_int_equal(f->r[i].from_wd, a);
	assert_int_equal(f->r[i].wd, b);
	assert_string_equal(f->r[i].from_data, "one");
	assert_string_equal(f->r[i].data, "two");
}

static void move_out_after_timeout(void **state)
{
	struct fx *f = *state;
	struct timespec t0, t1;
	const struct inofd_event *ev;
	int t, i;
	long ms;

	f->in = make(0, 40, 0);
	mkdirp(P(f, "w"));
	mkdirp(P(f, "out"));
	mkfile(P(f, "w/a"));
	mkfile(P(f, "w/b"));
	assert_true(inofd_watch_path(f->in, P(f, "w"), IN_MOVE | IN_DELETE,
				     NULL) >= 0);
	/*
	 * A record that is not its partner, and not about it, does not
	 * settle the half (issue 26: another task's record can land between
	 * a rename's halves): it is applied, and the half waits its window.
	 * One on the half's source name is held until the half is settled:
	 * the two come in the kernel's order.
	 */
	assert_int_equal(rename(P(f, "w/b"), P(f, "out/b")), 0);
	mkfile(P(f, "w/z"));
	unlink(P(f, "w/z"));
	mkfile(P(f, "w/b"));
	unlink(P(f, "w/b"));
	usleep(5000);
	assert_int_equal(inofd_read(f->in), 1);
	assert_int_equal(inofd_next(f->in, &ev), 1);
	assert_int_equal(ev->mask, IN_DELETE);
	assert_string_equal(ev->name, "z");
	assert_int_equal(inofd_next(f->in, &ev), 0);
	t = inofd_timeout(f->in);
	assert_true(t > 0 && t <= 40);
	f->n = 0;
	drain(f, 20);
	assert_int_equal(f->n, 2);
	assert_int_equal(f->r[0].type, INOFD_EV_MOVE_OUT);
	assert_string_equal(f->r[0].name, "b");
	assert_int_equal(f->r[1].mask, IN_DELETE);
	assert_string_equal(f->r[1].name, "b");
	assert_int_equal(inofd_timeout(f->in), -1);
	f->n = 0;
	/* a half that ends what the kernel had queued waits its window */
	assert_int_equal(rename(P(f, "w/a"), P(f, "out/a")), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	usleep(5000);
	assert_int_equal(inofd_read(f->in), 0);
	t = inofd_timeout(f->in);
	assert_true(t > 0 && t <= 40);
	drain(f, 20);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	assert_true(ms >= 30);
	i = find(f, INOFD_EV_MOVE_OUT, IN_MOVED_FROM, "a");
	assert_int_equal(i, 0);
	assert_string_equal(f->r[i].path, P(f, "w/a"));
	assert_int_equal(inofd_timeout(f->in), -1);
}

static void move_in_at_once(void **state)
{
	struct fx *f = *state;
	const struct inofd_event *ev;

	mkdirp(P(f, "w"));
	mkfile(P(f, "outside"));
	assert_true(inofd_watch_path(f->in, P(f, "w"), IN_MOVE, NULL) >= 0);
	assert_int_equal(rename(P(f, "outside"), P(f, "w/in")), 0);
	assert_int_equal(inofd_read(f->in), 1);	/* no wait for a MOVED_TO */
	assert_int_equal(inofd_next(f->in, &ev), 1);
	assert_int_equal(ev->type, INOFD_EV_MOVE_IN);
	assert_int_equal(ev->mask, IN_MOVED_TO);
	assert_string_equal(ev->name, "in");
	assert_int_equal(ev->from_wd, -1);
	assert_null(ev->from_name);
}

static void raw_moves(void **state)
{
	struct fx *f = *state;

	f->in = make(INOFD_RAW_MOVES, 0, 0);
	assert_true(inofd_watch_path(f->in, f->dir, IN_MOVE, NULL) >= 0);
	mkfile(P(f, "a"));
	assert_int_equal(rename(P(f, "a"), P(f, "b")), 0);
	drain(f, 50);
	assert_int_equal(f->n, 2);
	assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_MOVED_FROM, "a"), 0);
	assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_MOVED_TO, "b"), 1);
	assert_int_equal(f->r[0].cookie, f->r[1].cookie);
}

static void event_lifetime(void **state)
{
	struct fx *f = *state;
	const struct inofd_event *a, *b;

	assert_true(inofd_watch_path(f->in, f->dir, IN_CREATE, NULL) >= 0);
	mkfile(P(f, "first"));
	mkfile(P(f, "second"));
	assert_int_equal(inofd_timeout(f->in), -1);
	usleep(10000);
	assert_int_equal(inofd_read(f->in), 2);
	assert_int_equal(inofd_timeout(f->in), 0);	/* ready: do not sleep */
	assert_int_equal(inofd_next(f->in, &a), 1);
	assert_int_equal(inofd_next(f->in, &b), 1);
	/* both stay valid until the next inofd_read() */
	assert_string_equal(a->name, "first");
	assert_string_equal(b->name, "second");
	assert_int_equal(inofd_next(f->in, &b), 0);
	assert_int_equal(inofd_timeout(f->in), -1);
}

static void flood(struct fx *f, int n)
{
	int a = open(P(f, "fa"), O_RDONLY), b = open(P(f, "fb"), O_RDONLY), i;

	/* alternate two names: the kernel merges identical neighbours */
	for (i = 0; i < n; i++)
		fchmod((i & 1) ? a : b, (i & 2) ? 0600 : 0644);
	close(a);
	close(b);
}

static void overflow_rescan_and_repair(void **state)
{
	struct fx *f = *state;
	int q = max_queued(), i, fwd;

	if (q > 200000)
		skip();
	mkfile(P(f, "fa"));
	mkfile(P(f, "fb"));
	mkfile(P(f, "victim"));
	assert_true(inofd_watch_path(f->in, f->dir, IN_ATTRIB, "dir") >= 0);
	fwd = inofd_watch_path(f->in, P(f, "victim"), IN_DELETE_SELF, "v");
	assert_true(fwd >= 0);
	f->ignore = IN_ATTRIB;
	flood(f, q + 10);
	/* the queue is full: this IN_IGNORED is lost */
	unlink(P(f, "victim"));
	assert_int_equal(inofd_watch_count(f->in), 2);
	drain(f, 50);
	i = find(f, INOFD_EV_RESCAN, IN_Q_OVERFLOW, NULL);
	assert_true(i >= 0);
	assert_int_equal(f->r[i].wd, -1);
	assert_null(f->r[i].data);
	/* the library asked the kernel and dropped the stale watch */
	i = find(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL);
	assert_true(i >= 0);
	assert_int_equal(f->r[i].wd, fwd);
	assert_true(f->r[i].flags & INOFD_EVF_SYNTHETIC);
	assert_string_equal(f->r[i].data, "v");
	assert_int_equal(inofd_watch_count(f->in), 1);
}

static void coalescing(void **state)
{
	struct fx *f = *state;
	int fd, i, t;

	f->in = make(0, 0, 40);
	assert_true(inofd_watch_path(f->in, f->dir, IN_CREATE | IN_MODIFY |
				     IN_DELETE, "d") >= 0);
	fd = open(P(f, "f"), O_WRONLY | O_CREAT, 0644);
	for (i = 0; i < 200; i++)
		assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	usleep(5000);
	assert_int_equal(inofd_read(f->in), 0);	/* window still open */
	t = inofd_timeout(f->in);
	assert_true(t > 0 && t <= 40);
	drain(f, 60);
	assert_int_equal(f->n, 1);
	assert_int_equal(f->r[0].type, INOFD_EV_CHANGED);
	assert_int_equal(f->r[0].mask, IN_CREATE | IN_MODIFY);
	assert_string_equal(f->r[0].path, f->dir);
	assert_string_equal(f->r[0].data, "d");
	/* a new window after the first closed */
	unlink(P(f, "f"));
	drain(f, 60);
	assert_int_equal(f->n, 2);
	assert_int_equal(f->r[1].type, INOFD_EV_CHANGED);
	assert_int_equal(f->r[1].mask, IN_DELETE);
}

static void coalescing_keeps_ignored(void **state)
{
	struct fx *f = *state;

	f->in = make(0, 0, 1000);
	mkdirp(P(f, "s"));
	assert_true(inofd_watch_path(f->in, P(f, "s"), IN_CREATE, NULL) >= 0);
	mkfile(P(f, "s/x"));
	unlink(P(f, "s/x"));
	rmdir(P(f, "s"));
	/* IN_IGNORED closes the window at once: no 1 s wait */
	drain(f, 50);
	assert_int_equal(f->n, 2);
	assert_int_equal(f->r[0].type, INOFD_EV_CHANGED);
	assert_int_equal(f->r[1].type, INOFD_EV_INOTIFY);
	assert_int_equal(f->r[1].mask, IN_IGNORED);
	assert_int_equal(inofd_watch_count(f->in), 0);
}

/*
 * inofd_free() with a window still open (fuzz: coalesce-window-open-at-
 * free): the open INOFD_EV_CHANGED entry was freed with the queue before
 * the watch that points at it closed it.  ASan/valgrind see the write;
 * without them the test checks that the instance can be freed at all.
 */
static void coalescing_window_open_at_free(void **state)
{
	struct fx *f = *state;
	int i;

	for (i = 0; i < 2; i++) {
		bool tree = i == 1;

		f->in = make(0, 0, 1000);
		mkdirp(P(f, tree ? "t" : "p"));
		if (tree)
			assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"),
						     IN_CREATE, NULL) >= 0);
		else
			assert_true(inofd_watch_path(f->in, P(f, "p"),
						     IN_CREATE, NULL) >= 0);
		mkfile(P(f, tree ? "t/x" : "p/x"));
		/* the create opens a 1 s window, nothing is ready yet */
		assert_int_equal(inofd_read(f->in), 0);
		assert_true(inofd_timeout(f->in) > 0);
		inofd_free(f->in);
		f->in = NULL;
	}
}

DEFINE_TESTS(events,
	T(rename_paired),
	T(rename_across_watches),
	TN(move_out_after_timeout),
	T(move_in_at_once),
	TN(raw_moves),
	T(event_lifetime),
	T(overflow_rescan_and_repair),
	TN(coalescing),
	TN(coalescing_keeps_ignored),
	TN(coalescing_window_open_at_free),
)
