// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The 0.3 API (issue 17): the options macros, the queue bound and what is
 * never dropped, sequence numbers and identities in events, fed records
 * at any alignment.
 */
#include "unit.h"

#include <sys/inotify.h>

/* f->in becomes an instance with these options */
static void remake(struct fx *f, const struct inofd_opts *o)
{
	inofd_free(f->in);
	assert_int_equal(inofd_new(&f->in, o), 0);
}

/*
 * The header's own example, written the natural way: the compound literal
 * must live as long as the options (it died with the statement expression
 * the macro had, and nothing was excluded).  noinline, with the stack
 * reused before the call, as in a real program.
 */
static __attribute__((noinline)) void scribble(void)
{
	volatile char b[1024];
	size_t i;

	for (i = 0; i < sizeof(b); i++)
		b[i] = 'x';
	(void)b[0];
}

static __attribute__((noinline)) int watch_natural(struct fx *f)
{
	INOFD_TREE_OPTS(to, .exclude = (const char *const[]){ ".git", NULL },
			.data = "natural");

	scribble();
	return inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, &to);
}

static void tree_opts_compound_literal(void **state)
{
	struct fx *f = *state;
	INOFD_OPTS(none);	/* no field: sz alone, valid C99 */
	void *d;
	int wd;

	assert_int_equal(none.sz, sizeof(struct inofd_opts));
	assert_int_equal(none.flags | none.queue_max, 0);

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/.git"));
	mkdirp(P(f, "t/.git/objects"));
	mkdirp(P(f, "t/src"));
	mkdirp(P(f, "t/src/.git"));
	wd = watch_natural(f);
	assert_true(wd >= 0);
	/* t and t/src only */
	assert_int_equal(inofd_watch_count(f->in), 2);
	assert_int_equal(inofd_wd_data(f->in, wd, &d), 0);
	assert_string_equal(d, "natural");
	mkfile(P(f, "t/.git/objects/x"));
	mkfile(P(f, "t/src/y"));
	drain(f, 50);
	assert_int_equal(f->n, 1);
	assert_string_equal(f->r[0].path, P(f, "t/src/y"));
}

/* Problem 5: a full queue keeps the watch's end; so does no memory. */
static void ignored_past_full_queue(void **state)
{
	struct fx *f = *state;
	INOFD_OPTS(o, .queue_max = 4);
	const struct inofd_event *ev;
	int wd, i, n = 0, ign = 0, rescan = 0;
	uint64_t last = 0;
	char name[32];

	remake(f, &o);
	wd = inofd_watch_path(f->in, f->dir, IN_CREATE, "mine");
	assert_true(wd >= 0);
	for (i = 0; i < 10; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		mkfile(P(f, name));
	}
	usleep(10000);
	assert_true(inofd_read(f->in) > 0);
	/* full: 4 events and the RESCAN; the end goes past the bound */
	assert_int_equal(inofd_unwatch(f->in, wd), 0);
	while (inofd_next(f->in, &ev) > 0) {
		n++;
		assert_true(ev->seq > last);
		last = ev->seq;
		rescan += ev->type == INOFD_EV_RESCAN;
		if (ev->type == INOFD_EV_INOTIFY && (ev->mask & IN_IGNORED)) {
			ign++;
			assert_int_equal(ev->wd, wd);
			assert_string_equal(ev->data, "mine");
		}
	}
	assert_int_equal(rescan, 1);
	assert_int_equal(ign, 1);
	assert_int_equal(n, 4 + 1 + 1);
}

static void ignored_owed_without_memory(void **state)
{
	struct fx *f = *state;
	const struct inofd_event *ev;
	void *d;
	int wd, r, ign = 0;

	/* a fresh instance: no queue block, no string chunk yet */
	remake(f, NULL);
	wd = inofd_watch_path(f->in, f->dir, IN_CREATE, "data");
	assert_true(wd >= 0);
	unit_fail_allocs = true;
	r = inofd_unwatch(f->in, wd);
	unit_fail_allocs = false;
	assert_int_equal(r, 0);
	assert_int_equal(inofd_watch_count(f->in), 0);
	/* ended, but kept until the caller is told: data still there */
	assert_int_equal(inofd_wd_data(f->in, wd, &d), 0);
	assert_string_equal(d, "data");
	assert_int_equal(inofd_unwatch(f->in, wd), -EINVAL);	/* ended */
	assert_int_equal(inofd_timeout(f->in), 0);		/* told now */
	assert_true(inofd_read(f->in) > 0);
	while (inofd_next(f->in, &ev) > 0)
		if (ev->type == INOFD_EV_INOTIFY && (ev->mask & IN_IGNORED)) {
			ign++;
			assert_int_equal(ev->wd, wd);
			assert_string_equal(ev->data, "data");
			assert_true(ev->flags & INOFD_EVF_SYNTHETIC);
		}
	assert_int_equal(ign, 1);
	assert_int_equal(inofd_wd_data(f->in, wd, &d), -EINVAL);	/* gone */
}

/* Problem 5: a tree's LOST error is not dropped by a full queue either. */
static void lost_past_full_queue(void **state)
{
	struct fx *f = *state;
	INOFD_OPTS(o, .queue_max = 3, .pair_timeout_ms = 5);
	INOFD_TREE_OPTS(to, .data = "t");
	const struct inofd_event *ev;
	int root, i, lost = 0, ign = 0;
	char name[32];

	remake(f, &o);
	mkdirp(P(f, "p"));
	mkdirp(P(f, "p/A"));
	mkdirp(P(f, "q"));
	root = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "p/A"), IN_CREATE,
				   &to);
	assert_true(root >= 0);
	for (i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "p/A/f%d", i);
		mkfile(P(f, name));
	}
	assert_int_equal(rename(P(f, "p/A"), P(f, "q/B")), 0);
	usleep(10000);
	assert_true(inofd_read(f->in) > 0);
	usleep(20000);		/* the root's half is due: moved elsewhere */
	assert_true(inofd_read(f->in) > 0);	/* queue still full */
	assert_int_equal(inofd_unwatch(f->in, root), 0);
	while (inofd_next(f->in, &ev) > 0) {
		if (ev->type == INOFD_EV_ERROR && (ev->flags & INOFD_EVF_LOST)) {
			lost++;
			assert_int_equal(ev->wd, root);
			assert_string_equal(ev->data, "t");
			assert_int_equal(ign, 0);	/* before the end */
		}
		ign += ev->type == INOFD_EV_INOTIFY &&
		       (ev->mask & IN_IGNORED);
	}
	assert_int_equal(lost, 1);
	assert_int_equal(ign, 1);
}

/* the IN_CREATE events whose name is name (exact) or starts with it, and
 * the RESCANs */
struct creates {
	const char *name;
	bool exact;
	int n, rescan;
};

static int count_create(const struct inofd_event *ev, void *arg)
{
	struct creates *c = arg;

	c->rescan += ev->type == INOFD_EV_RESCAN;
	c->n += ev->type == INOFD_EV_INOTIFY && (ev->mask & IN_CREATE) &&
		ev->name && (c->exact ? !strcmp(ev->name, c->name) :
			     !strncmp(ev->name, c->name, strlen(c->name)));
	return 0;
}

/*
 * Problem 6: one mv of a fresh 100,000-entry directory into a tree, with
 * the default options: every entry reported, no loss.
 */
static void default_queue_holds_big_mv(void **state)
{
	struct fx *f = *state;
	struct creates c = { .name = "e" };
	int i;
	char base[300] = "/dev/shm/inofd-unit-big.XXXXXX";
	char p[400], q[500];

	/* 100,000 files: in memory where it can be (tmpfs), else in f->dir */
	if (!mkdtemp(base))
		snprintf(base, sizeof(base), "%s", f->dir);
	snprintf(p, sizeof(p), "%s/t", base);
	mkdirp(p);
	snprintf(p, sizeof(p), "%s/big", base);
	mkdirp(p);
	for (i = 0; i < 100000; i++) {
		snprintf(q, sizeof(q), "%s/e%06d", p, i);
		mkfile(q);
	}
	snprintf(q, sizeof(q), "%s/t", base);
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, q, IN_CREATE,
					NULL) >= 0);
	snprintf(q, sizeof(q), "%s/t/big", base);
	assert_int_equal(rename(p, q), 0);
	usleep(10000);
	assert_true(read_quiet(f->in, 200, count_create, &c) >= 0);
	if (strcmp(base, f->dir)) {
		snprintf(q, sizeof(q), "rm -rf %s", base);
		assert_int_equal(system(q), 0);
	}
	assert_int_equal(c.rescan, 0);
	assert_int_equal(c.n, 100000);
}

/*
 * Problem 6, the pacing: a walk reports what it finds, so it lists no
 * more than the queue has room for.  A caller that reads again before
 * draining (the queue full) must not lose the walk's reports.
 */
static void walk_paced_by_queue(void **state)
{
	struct fx *f = *state;
	INOFD_OPTS(o, .queue_max = 16);
	struct creates c = { .name = "d", .exact = true };
	char p[PATH_MAX];
	int i;

	remake(f, &o);
	mkdirp(P(f, "t"));
	/* a chain 100 deep: every level one entry, one report */
	snprintf(p, sizeof(p), "%s", P(f, "big"));
	for (i = 0; i < 100; i++) {
		mkdirp(p);
		strcat(p, "/d");
	}
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE,
					NULL) >= 0);
	assert_int_equal(rename(P(f, "big"), P(f, "t/big")), 0);
	usleep(10000);
	/* reads that do not drain */
	for (i = 0; i < 5; i++)
		assert_true(inofd_read(f->in) >= 0);
	assert_true(read_quiet(f->in, 100, count_create, &c) >= 0);
	assert_int_equal(c.rescan, 0);
	assert_int_equal(c.n, 99);
	assert_int_equal(inofd_watch_count(f->in), 101);
}

/* Every event: seq 1, 2, 3, ... across reads; the watched object's id. */
static void seq_and_identity(void **state)
{
	struct fx *f = *state;
	const struct inofd_event *ev;
	struct stat dst, tst, sst;
	uint64_t want = 1;
	int wd, tree, round, got = 0;

	mkdirp(P(f, "d"));
	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/sub"));
	assert_int_equal(stat(P(f, "d"), &dst), 0);
	assert_int_equal(stat(P(f, "t"), &tst), 0);
	assert_int_equal(stat(P(f, "t/sub"), &sst), 0);
	wd = inofd_watch_path(f->in, P(f, "d"), IN_CREATE | IN_ATTRIB, NULL);
	tree = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE,
				   NULL);
	assert_true(wd >= 0 && tree >= 0);
	for (round = 0; round < 3; round++) {
		char n1[32], n2[32];

		snprintf(n1, sizeof(n1), "d/a%d", round);
		snprintf(n2, sizeof(n2), "t/sub/b%d", round);
		mkfile(P(f, n1));
		mkfile(P(f, n2));
		chmod(P(f, "d"), 0700 + round);
		usleep(10000);
		assert_true(inofd_read(f->in) > 0);
		while (inofd_next(f->in, &ev) > 0) {
			const struct stat *st = ev->wd == wd ? &dst : &sst;

			assert_true(ev->seq == want);
			want++;
			got++;
			if (ev->wd == tree && !ev->name)
				st = &tst;
			assert_true(ev->ino == (uint64_t)st->st_ino);
			assert_true(ev->dev == (uint64_t)st->st_dev);
		}
	}
	assert_int_equal(got, 9);
}

/*
 * Fed records need not be aligned (the fuzzer's and the tests' bytes):
 * a name of odd length puts the next header at an odd address.  Under
 * -fsanitize=undefined (make -C tests/unit ubsan) reading it in place is
 * an error; the events must come out whatever the alignment.
 */
static void fed_any_alignment(void **state)
{
	struct fx *f = *state;
	char buf[3 * (sizeof(struct inotify_event) + 8)], *b = buf;
	const struct inofd_event *ev;
	struct inotify_event h;
	struct stat st;
	int wd, i, got = 0;

	wd = inofd_watch_path(f->in, f->dir, IN_MODIFY, NULL);
	assert_true(wd >= 0);
	assert_int_equal(stat(f->dir, &st), 0);
	for (i = 0; i < 3; i++) {
		memset(&h, 0, sizeof(h));
		h.wd = inofd__kwd_of(f->in, st.st_dev, st.st_ino);
		h.mask = IN_MODIFY;
		h.len = 3;			/* "ab\0": not a multiple of 4 */
		memcpy(b, &h, sizeof(h));
		memcpy(b + sizeof(h), "ab", 3);
		b += sizeof(h) + 3;
	}
	assert_int_equal(inofd__feed(f->in, buf, (size_t)(b - buf)), 3);
	while (inofd_next(f->in, &ev) > 0) {
		assert_string_equal(ev->name, "ab");
		got++;
	}
	assert_int_equal(got, 3);
}

/*
 * inofd_wd_path_copy(): the path in the caller's buffer, which outlives
 * inofd_next() (issue 26, "API, before it is frozen"); getcwd()'s
 * conventions for a short buffer; bad input gets -errno.
 */
static void wd_path_copy(void **state)
{
	struct fx *f = *state;
	char buf[PATH_MAX], small[4] = "xyz";
	const char *p;
	int wd, len;

	mkdirp(P(f, "t"));
	wd = inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL);
	assert_true(wd >= 0);
	len = inofd_wd_path_copy(f->in, wd, buf, sizeof(buf));
	assert_int_equal(len, (int)strlen(P(f, "t")));
	assert_string_equal(buf, P(f, "t"));
	/* exactly the room it needs, and one byte less */
	assert_int_equal(inofd_wd_path_copy(f->in, wd, buf, (size_t)len + 1), len);
	assert_int_equal(inofd_wd_path_copy(f->in, wd, small, sizeof(small)),
			 -ERANGE);
	assert_string_equal(small, "xyz");	/* untouched */
	assert_int_equal(inofd_wd_path_copy(f->in, wd, buf, (size_t)len), -ERANGE);
	assert_int_equal(inofd_wd_path_copy(f->in, wd, buf, 0), -ERANGE);
	/* bad input */
	assert_int_equal(inofd_wd_path_copy(NULL, wd, buf, sizeof(buf)), -EINVAL);
	assert_int_equal(inofd_wd_path_copy(f->in, wd, NULL, sizeof(buf)), -EINVAL);
	assert_int_equal(inofd_wd_path_copy(f->in, wd + 100, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(inofd_wd_path_copy(f->in, -1, buf, sizeof(buf)), -EINVAL);
	/* the copy outlives the events that change the path */
	assert_int_equal(inofd_wd_path_copy(f->in, wd, buf, sizeof(buf)), len);
	assert_int_equal(rename(P(f, "t"), P(f, "t2")), 0);
	drain(f, 30);
	assert_string_equal(buf, P(f, "t"));
	assert_int_equal(inofd_wd_path(f->in, wd, &p), 0);
	assert_string_equal(p, P(f, "t2"));
	assert_true(inofd_wd_path_copy(f->in, wd, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, P(f, "t2"));
	/* moved where no path leads: unknown, not a stale copy */
	mkdirp(P(f, "o"));
	mkdirp(P(f, "o/deeper"));
	assert_int_equal(rename(P(f, "t2"), P(f, "o/deeper/t3")), 0);
	drain(f, 50);
	assert_int_equal(inofd_wd_path(f->in, wd, &p), 0);
	assert_null(p);
	assert_int_equal(inofd_wd_path_copy(f->in, wd, buf, sizeof(buf)),
			 -ENOENT);
}

DEFINE_TESTS(api,
	T(wd_path_copy),
	T(tree_opts_compound_literal),
	T(ignored_past_full_queue),
	T(ignored_owed_without_memory),
	T(lost_past_full_queue),
	T(default_queue_holds_big_mv),
	T(walk_paced_by_queue),
	T(seq_and_identity),
	T(fed_any_alignment),
)
