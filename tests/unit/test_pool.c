// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A tree's members and kernel watches live in slabs (src/pool.c), and a
 * member's name is kept in it when it fits (31 bytes and its NUL): names
 * on both sides of that bound, renames across it, and the memory given
 * back when the last tree goes.
 */
#include <malloc.h>

#include "unit.h"

static int tree(struct fx *f, const char *rel)
{
	return inofd_watch_tree_at(f->in, AT_FDCWD, P(f, rel), IN_ALL_EVENTS,
				   NULL);
}

/* a name of n bytes: c repeated */
static const char *nm(char c, int n)
{
	static char b[4][256];
	static int k;
	char *s = b[k++ % 4];

	memset(s, c, (size_t)n);
	s[n] = '\0';
	return s;
}

/* a file made in dir (relative to the tree t): its event's path */
static void expect_create(struct fx *f, const char *dir)
{
	char rel[1024];
	int i;

	snprintf(rel, sizeof(rel), "t/%s/file", dir);
	f->n = 0;
	mkfile(P(f, rel));
	drain(f, 50);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "file");
	if (i < 0)
		dump(f);
	assert_true(i >= 0);
	assert_string_equal(f->r[i].path, P(f, rel));
	assert_int_equal(unlink(P(f, rel)), 0);
	drain(f, 50);
}

static void pool_names_at_the_bound(void **state)
{
	struct fx *f = *state;
	static const int len[] = { 1, 30, 31, 32, 33, 200 };
	char rel[1024], deep[1024];
	size_t i;

	mkdirp(P(f, "t"));
	for (i = 0; i < sizeof(len) / sizeof(len[0]); i++) {
		snprintf(rel, sizeof(rel), "t/%s", nm('a' + (char)i, len[i]));
		mkdirp(P(f, rel));
		snprintf(rel, sizeof(rel), "t/%s/%s", nm('a' + (char)i, len[i]),
			 nm('z', len[i]));
		mkdirp(P(f, rel));
	}
	assert_true(tree(f, "t") >= 0);
	assert_int_equal(inofd_watch_count(f->in), 13);
	drain(f, 50);
	for (i = 0; i < sizeof(len) / sizeof(len[0]); i++) {
		snprintf(deep, sizeof(deep), "%s/%s", nm('a' + (char)i, len[i]),
			 nm('z', len[i]));
		expect_create(f, deep);
	}
}

static void pool_renames_across_the_bound(void **state)
{
	struct fx *f = *state;
	/* short -> long -> short -> long -> the same length, in place */
	const char *names[] = { "s", nm('L', 40), nm('m', 31), nm('N', 32),
				nm('o', 32) };
	char from[1024], to[1024];
	size_t i;

	mkdirp(P(f, "t"));
	mkdirp(P(f, "t/s"));
	mkdirp(P(f, "t/s/sub"));
	assert_true(tree(f, "t") >= 0);
	assert_int_equal(inofd_watch_count(f->in), 3);
	drain(f, 50);
	for (i = 1; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(from, sizeof(from), "t/%s", names[i - 1]);
		snprintf(to, sizeof(to), "t/%s", names[i]);
		assert_int_equal(rename(P(f, from), P(f, to)), 0);
		drain(f, 50);
		snprintf(to, sizeof(to), "%s/sub", names[i]);
		expect_create(f, to);
		expect_create(f, names[i]);
	}
	assert_int_equal(inofd_watch_count(f->in), 3);
}

static size_t heap(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

/* n directories below t, in groups of 50 */
static void make_dirs(struct fx *f, int n)
{
	char rel[64];
	int i;

	mkdirp(P(f, "t"));
	for (i = 0; i < n; i++) {
		if (i % 50 == 0) {
			snprintf(rel, sizeof(rel), "t/g%d", i / 50);
			mkdirp(P(f, rel));
		}
		snprintf(rel, sizeof(rel), "t/g%d/d%d", i / 50, i);
		mkdirp(P(f, rel));
	}
}

static void pool_memory_given_back(void **state)
{
	struct fx *f = *state;
	size_t base, full, after;
	int wd, round;

	make_dirs(f, 2000);
	/* round 0 grows what the instance keeps (buffers, tables) */
	for (round = 0; round < 2; round++) {
		base = heap();
		wd = tree(f, "t");
		assert_true(wd >= 0);
		assert_int_equal(inofd_watch_count(f->in), 2041);
		full = heap();
		assert_int_equal(inofd_unwatch(f->in, wd), 0);
		f->n = 0;
		drain(f, 0);
		assert_true(find(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL) >= 0);
		assert_int_equal(inofd_watch_count(f->in), 0);
		after = heap();
		/* the tree held at least 200 bytes a directory; all of it
		 * but the tables' own arrays is back */
		assert_true(full - base > 2041 * 200);
		if (round == 1 && after > base + 64 * 1024) {
			print_error("heap %zu before, %zu with the tree, %zu "
				    "after\n", base, full, after);
			fail();
		}
	}
}

DEFINE_TESTS(pool,
	T(pool_names_at_the_bound),
	T(pool_renames_across_the_bound),
	T(pool_memory_given_back),
)
