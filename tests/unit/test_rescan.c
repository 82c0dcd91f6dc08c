// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The RESCAN contract (inofd_read(3)): events before a RESCAN happened
 * before the loss, events after it after the loss, in order.  A consumer
 * that re-walks when it reads the RESCAN walks a file system in which some
 * of the events after it already happened, so it applies them as news to
 * look at again (is the path there now?), not as changes to its walked
 * state.  Such a consumer ends with what the file system says.
 */
#include "unit.h"

#include <ftw.h>

#define MAXP 256

/* the consumer's state: the paths below the tree's root */
static char *have[MAXP];
static int nhave;
static const char *walk_root;

static int find_p(const char *p)
{
	int i;

	for (i = 0; i < nhave; i++)
		if (!strcmp(have[i], p))
			return i;
	return -1;
}

static void drop_below(const char *p)
{
	size_t l = strlen(p);
	int i;

	for (i = 0; i < nhave; )
		if (!strncmp(have[i], p, l) && (!have[i][l] || have[i][l] == '/')) {
			free(have[i]);
			have[i] = have[--nhave];
		} else {
			i++;
		}
}

static int add_cb(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)flag;
	if (ftw->level > 0 && find_p(p) < 0 && nhave < MAXP)
		have[nhave++] = strdup(p);
	return 0;
}

/* look at p again: it and what is below it, as they are now */
static void recheck(const char *p)
{
	struct stat st;

	if (!p || strncmp(p, walk_root, strlen(walk_root)))
		return;
	drop_below(p);
	if (lstat(p, &st))
		return;
	if (nhave < MAXP)
		have[nhave++] = strdup(p);
	if (S_ISDIR(st.st_mode))
		nftw(p, add_cb, 8, FTW_PHYS);
}

static void rewalk(void)
{
	while (nhave)
		free(have[--nhave]);
	nftw(walk_root, add_cb, 8, FTW_PHYS);
}

struct seen {
	int rescans;
	unsigned long long rescan_seq, last_seq;
	int after;		/* events handed out after the RESCAN */
};

static int consume(const struct inofd_event *ev, void *arg)
{
	struct seen *s = arg;

	if (ev->seq != s->last_seq + 1)
		return -100;	/* the numbering the contract leans on */
	s->last_seq = ev->seq;
	if (ev->type == INOFD_EV_RESCAN) {
		s->rescans++;
		s->rescan_seq = ev->seq;
		rewalk();
		return 0;
	}
	if (s->rescans)
		s->after++;
	if (ev->type == INOFD_EV_RENAME)
		recheck(ev->from_path);
	if (ev->name && !(ev->mask & IN_ATTRIB))
		recheck(ev->path);
	return 0;
}

static int sorted_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void rescan_rewalking_consumer(void **state)
{
	struct fx *f = *state;
	struct seen s = { 0 };
	char *mine[MAXP];
	int a, b, i, n;

	mkdirp(P(f, "t"));
	mkfile(P(f, "t/fa"));
	mkfile(P(f, "t/fb"));
	mkdirp(P(f, "t/d0"));
	walk_root = P(f, "t");
	walk_root = strdup(walk_root);
	/* the consumer's own walks open and list directories: not asked */
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, walk_root,
					IN_CREATE | IN_DELETE | IN_MOVE |
					IN_ATTRIB, NULL) >= 0);
	assert_true(read_quiet(f->in, 30, consume, &s) >= 0);
	rewalk();
	a = open(P(f, "t/fa"), O_RDONLY);
	b = open(P(f, "t/fb"), O_RDONLY);
	for (i = 0; i < max_queued() + 1000; i++)
		fchmod((i & 1) ? a : b, (i & 2) ? 0600 : 0644);
	close(a);
	close(b);
	/* the library reads the loss; the consumer does not look yet */
	assert_true(inofd_read(f->in) >= 0);
	/* after the loss, before the consumer reads the RESCAN */
	mkfile(P(f, "t/x1"));
	assert_int_equal(rename(P(f, "t/x1"), P(f, "t/x2")), 0);
	assert_int_equal(unlink(P(f, "t/fa")), 0);
	assert_int_equal(rename(P(f, "t/fb"), P(f, "t/d0/fb2")), 0);
	mkdirp(P(f, "t/d1"));
	mkfile(P(f, "t/d1/y"));
	assert_int_equal(rename(P(f, "t/d1"), P(f, "t/d0/d2")), 0);
	mkfile(P(f, "t/fa"));
	i = read_quiet(f->in, 50, consume, &s);
	if (i < 0)
		fail_msg("read_quiet: %d", i);
	assert_true(s.rescans >= 1);
	assert_true(s.after > 0);
	/* the consumer's state is the file system's */
	n = nhave;
	for (i = 0; i < n; i++)
		mine[i] = strdup(have[i]);
	rewalk();
	if (n != nhave)
		fail_msg("consumer has %d paths, the file system %d", n, nhave);
	qsort(mine, (size_t)n, sizeof(*mine), sorted_cmp);
	qsort(have, (size_t)nhave, sizeof(*have), sorted_cmp);
	for (i = 0; i < n; i++) {
		assert_string_equal(mine[i], have[i]);
		free(mine[i]);
	}
	while (nhave)
		free(have[--nhave]);
	free((char *)walk_root);
}

DEFINE_TESTS(rescan,
	T(rescan_rewalking_consumer),
)
