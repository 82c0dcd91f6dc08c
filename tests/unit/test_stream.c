// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A batch is parsed as inofd_next() takes its events (the streamed
 * iterator): inofd_read() makes the first few, inofd_next() the rest.
 * What the caller sees must be what a batch parsed at once gave: every
 * event, in the kernel's order, numbered without a gap, each valid until
 * the next inofd_read(); and a call that changes watches in the middle of
 * a batch applies the records read before it first.
 */
#include "unit.h"

#include <poll.h>
#include <sys/inotify.h>

#define NFILES	300	/* records in one batch: several stream steps */

/* Make NFILES files in dir (one IN_CREATE each), the kernel's queue only. */
static void make_files(struct fx *f, const char *dir)
{
	char rel[64];
	int i;

	for (i = 0; i < NFILES; i++) {
		snprintf(rel, sizeof(rel), "%s/f%03d", dir, i);
		mkfile(P(f, rel));
	}
}

/* Wait until the instance's fd is readable (the kernel has events). */
static void wait_readable(struct fx *f)
{
	struct pollfd p = { .fd = inofd_fd(f->in), .events = POLLIN };

	assert_int_equal(poll(&p, 1, 2000), 1);
}

/* "f%03d" of event i of the batch */
static void expect_name(const struct inofd_event *ev, int i)
{
	char want[16];

	snprintf(want, sizeof(want), "f%03d", i);
	assert_non_null(ev->name);
	assert_string_equal(ev->name, want);
}

/*
 * One read of NFILES records: inofd_read() says fewer than all are ready
 * (the rest are made as they are taken), inofd_next() hands out all of
 * them in order with consecutive seq, and the first event's strings are
 * intact after the last was made.
 */
static void stream_whole_batch_in_order(void **state)
{
	struct fx *f = *state;
	const struct inofd_event *ev, *first = NULL;
	uint64_t seq0 = 0;
	int wd, ready, i = 0;

	mkdirp(P(f, "d"));
	wd = inofd_watch_path(f->in, P(f, "d"), IN_CREATE, "d");
	assert_true(wd >= 0);
	make_files(f, "d");
	wait_readable(f);
	ready = inofd_read(f->in);
	assert_true(ready > 0);
	assert_true(ready < NFILES);	/* streamed, not materialised */
	assert_int_equal(inofd_timeout(f->in), 0);	/* more to take */
	while (inofd_next(f->in, &ev) == 1) {
		assert_int_equal(ev->wd, wd);
		assert_int_equal(ev->mask, IN_CREATE);
		expect_name(ev, i);
		if (!first) {
			first = ev;
			seq0 = ev->seq;
		}
		assert_int_equal(ev->seq, seq0 + (uint64_t)i);
		i++;
	}
	assert_int_equal(i, NFILES);
	/* valid until the next inofd_read(): nothing was reused */
	expect_name(first, 0);
	assert_string_equal(first->path, P(f, "d/f000"));
	assert_int_equal(inofd_read(f->in), 0);
}

/*
 * inofd_read() in the middle of a streamed batch reads nothing new: it
 * makes the next events of the batch (none is lost or repeated).
 */
static void stream_read_mid_batch(void **state)
{
	struct fx *f = *state;
	const struct inofd_event *ev;
	int wd, i = 0, r, k;

	mkdirp(P(f, "d"));
	wd = inofd_watch_path(f->in, P(f, "d"), IN_CREATE, NULL);
	assert_true(wd >= 0);
	make_files(f, "d");
	wait_readable(f);
	while ((r = inofd_read(f->in)) > 0) {
		/* take one at a time, then ask inofd_read() again */
		for (k = 0; k < 3 && inofd_next(f->in, &ev) == 1; k++)
			expect_name(ev, i++);
	}
	assert_int_equal(r, 0);
	assert_int_equal(i, NFILES);
}

/*
 * inofd_unwatch() after the first event of a batch: the batch's other
 * events of that watch come first, then its IN_IGNORED (as inotify's own
 * rm_watch leaves queued events to be read).  Without the stream applied
 * first the records not parsed yet would be dropped with the watch.
 */
static void stream_unwatch_mid_batch(void **state)
{
	struct fx *f = *state;
	const struct inofd_event *ev;
	int wd, i = 0, ignored = 0;

	mkdirp(P(f, "d"));
	wd = inofd_watch_path(f->in, P(f, "d"), IN_CREATE, "d");
	assert_true(wd >= 0);
	make_files(f, "d");
	wait_readable(f);
	assert_true(inofd_read(f->in) > 0);
	assert_int_equal(inofd_next(f->in, &ev), 1);
	expect_name(ev, i++);
	assert_int_equal(inofd_unwatch(f->in, wd), 0);
	while (inofd_next(f->in, &ev) == 1) {
		assert_int_equal(ev->wd, wd);
		if (ev->mask & IN_IGNORED) {
			ignored++;
			assert_string_equal(ev->data, "d");
			continue;
		}
		assert_int_equal(ignored, 0);	/* nothing after its end */
		expect_name(ev, i++);
	}
	assert_int_equal(i, NFILES);
	assert_int_equal(ignored, 1);
}

/*
 * A watch made in the middle of a batch on the same directory is born
 * after every record read: it gets none of the batch, the older watch
 * gets all of it, and the new watch gets what comes after.
 */
static void stream_watch_mid_batch(void **state)
{
	struct fx *f = *state;
	const struct inofd_event *ev;
	int old, young, i = 0, later = 0;

	mkdirp(P(f, "d"));
	old = inofd_watch_path(f->in, P(f, "d"), IN_CREATE, "old");
	assert_true(old >= 0);
	make_files(f, "d");
	wait_readable(f);
	assert_true(inofd_read(f->in) > 0);
	assert_int_equal(inofd_next(f->in, &ev), 1);
	expect_name(ev, i++);
	young = inofd_watch_path(f->in, P(f, "d"), IN_CREATE, "young");
	assert_true(young >= 0 && young != old);
	while (inofd_next(f->in, &ev) == 1) {
		assert_int_equal(ev->wd, old);
		expect_name(ev, i++);
	}
	assert_int_equal(i, NFILES);
	mkfile(P(f, "d/later"));
	drain(f, 40);
	for (i = 0; i < f->n; i++)
		if (f->r[i].wd == young &&
		    !strcmp(f->r[i].name, "later"))
			later++;
	assert_int_equal(later, 1);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, "later"), 2);
}

/*
 * A rename whose halves straddle stream steps (a MOVED_FROM as the last
 * record of a step) is still one INOFD_EV_RENAME: the half waits for the
 * next record, which the next step parses.
 */
struct across {
	int renames, creates;
};

static int across_one(const struct inofd_event *ev, void *arg)
{
	struct across *a = arg;
	char want[64];

	if (ev->type == INOFD_EV_RENAME) {
		snprintf(want, sizeof(want), "b%03d", a->renames);
		assert_string_equal(ev->name, want);
		snprintf(want, sizeof(want), "a%03d", a->renames);
		assert_string_equal(ev->from_name, want);
		/* in kernel order: after its create */
		assert_int_equal(a->creates, a->renames + 1);
		a->renames++;
	} else {
		assert_int_equal(ev->type, INOFD_EV_INOTIFY);
		assert_int_equal(ev->mask, IN_CREATE);
		a->creates++;
	}
	return 0;
}

static void stream_rename_across_steps(void **state)
{
	struct fx *f = *state;
	struct across a = { 0 };
	char from[64], to[64];
	int wd, i;

	mkdirp(P(f, "d"));
	for (i = 0; i < NFILES / 2; i++) {
		snprintf(from, sizeof(from), "d/a%03d", i);
		mkfile(P(f, from));
	}
	wd = inofd_watch_path(f->in, P(f, "d"), IN_CREATE | IN_MOVE, NULL);
	assert_true(wd >= 0);
	/* create, rename, create, rename...: halves at every offset */
	for (i = 0; i < NFILES / 2; i++) {
		snprintf(from, sizeof(from), "d/c%03d", i);
		mkfile(P(f, from));
		snprintf(from, sizeof(from), "d/a%03d", i);
		snprintf(to, sizeof(to), "d/b%03d", i);
		assert_int_equal(rename(P(f, from), P(f, to)), 0);
	}
	wait_readable(f);
	/* what is there, and the halves that wait */
	assert_true(read_quiet(f->in, 0, across_one, &a) >= 0);
	assert_int_equal(a.creates, NFILES / 2);
	assert_int_equal(a.renames, NFILES / 2);
}

DEFINE_TESTS(stream,
	T(stream_whole_batch_in_order),
	T(stream_read_mid_batch),
	T(stream_unwatch_mid_batch),
	T(stream_watch_mid_batch),
	T(stream_rename_across_steps),
)
