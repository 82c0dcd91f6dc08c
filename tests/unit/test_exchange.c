// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * renameat2(RENAME_EXCHANGE) under a tree (issue 26, reproduction 1).
 *
 * The kernel (vfs_rename) reports an exchange as two moves, one per
 * direction, each with a cookie of its own:
 *   MOVED_FROM(a,c1) MOVED_TO(b,c1) MOVE_SELF(A)
 *   MOVED_FROM(b,c2) MOVED_TO(a,c2) MOVE_SELF(B)
 * Between the two, the state has two members called b: the library must
 * tell them apart by identity, not by name.  Each test runs on the procfd
 * and on the fanotify backend (skipped where fanotify is not there), and
 * asks for the truth after the exchange: a probe's real path, or (root
 * and its parent only) NULL after the library said it lost the tree.
 */
#include "unit.h"

#include <sys/syscall.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE		(1 << 1)
#endif

static int xchg(const char *a, const char *b)
{
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b,
			    RENAME_EXCHANGE);
}

/* mkdir -p of dir/rel */
static void mkp(struct fx *f, const char *rel)
{
	char b[PATH_MAX], *c;

	snprintf(b, sizeof(b), "%s", P(f, rel));
	for (c = b + strlen(f->dir) + 1; (c = strchr(c, '/')); *c++ = '/') {
		*c = '\0';
		if (mkdir(b, 0755) && errno != EEXIST)
			fail_msg("mkdir %s: %s", b, strerror(errno));
	}
	if (mkdir(b, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", b, strerror(errno));
}

static int tree(struct fx *f, const char *rel)
{
	return inofd_watch_tree_at(f->in, AT_FDCWD, P(f, rel), IN_ALL_EVENTS,
			&(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts),
				.data = f });
}

/*
 * A probe made at rel/name is reported once with its real path, or with
 * NULL when lost_ok and the library reported an ERROR (lost) for it.
 */
static void probe(struct fx *f, const char *rel, const char *name,
		  bool lost_ok, const char *be)
{
	char p[PATH_MAX];
	int i, lost;

	snprintf(p, sizeof(p), "%s/%s", rel, name);
	mkfile(P(f, p));
	drain(f, 30);
	lost = find(f, INOFD_EV_ERROR, 0, NULL) >= 0;
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, name);
	if (i < 0) {
		dump(f);
		fail_msg("%s: no IN_CREATE for %s", be, p);
	}
	if (lost_ok && lost && (f->r[i].nulls & REC_NULL_PATH))
		return;
	if (strcmp(f->r[i].path, P(f, p))) {
		dump(f);
		fail_msg("%s: %s reported as %s%s", be, P(f, p),
			 (f->r[i].nulls & REC_NULL_PATH) ? "(null)" :
			 f->r[i].path, lost ? " (after an ERROR)" : "");
	}
}

/* a fresh copy of the layout for each backend: under dir/NAME */
static void fresh(struct fx *f, const char *be, char *sub, size_t sz)
{
	snprintf(sub, sz, "%s", be);
	mkp(f, sub);
}

/* T/a and T/b, siblings inside the tree */
static void xchg_siblings(void **state)
{
	struct fx *f = *state;
	char s[64], p[256], q[256];
	const char *be;

	EACH_BACKEND(f, be) {
		fresh(f, be, s, sizeof(s));
		snprintf(p, sizeof(p), "%s/t/a/asub", s);
		mkp(f, p);
		snprintf(p, sizeof(p), "%s/t/b/bsub", s);
		mkp(f, p);
		snprintf(p, sizeof(p), "%s/t", s);
		assert_true(tree(f, p) >= 0);
		drain(f, 30);
		snprintf(p, sizeof(p), "%s/t/a", s);
		snprintf(q, sizeof(q), "%s/t/b", s);
		assert_int_equal(xchg(P(f, p), P(f, q)), 0);
		drain(f, 30);
		f->n = 0;
		snprintf(p, sizeof(p), "%s/t/b/asub", s);
		probe(f, p, "x1", false, be);
		f->n = 0;
		snprintf(p, sizeof(p), "%s/t/a/bsub", s);
		probe(f, p, "x2", false, be);
		f->n = 0;
		snprintf(p, sizeof(p), "%s/t/a", s);
		probe(f, p, "x3", false, be);
		/* and back: both exchanged twice */
		snprintf(p, sizeof(p), "%s/t/a", s);
		snprintf(q, sizeof(q), "%s/t/b", s);
		assert_int_equal(xchg(P(f, p), P(f, q)), 0);
		drain(f, 30);
		f->n = 0;
		snprintf(p, sizeof(p), "%s/t/a/asub", s);
		probe(f, p, "x4", false, be);
		assert_int_equal(inofd_watch_count(f->in), 5);
	}
}

/* T/p1/a and T/p2/b: in different parents */
static void xchg_parents(void **state)
{
	struct fx *f = *state;
	char s[64], p[256], q[256];
	const char *be;

	EACH_BACKEND(f, be) {
		fresh(f, be, s, sizeof(s));
		snprintf(p, sizeof(p), "%s/t/p1/a/asub", s);
		mkp(f, p);
		snprintf(p, sizeof(p), "%s/t/p2/b/bsub", s);
		mkp(f, p);
		snprintf(p, sizeof(p), "%s/t", s);
		assert_true(tree(f, p) >= 0);
		drain(f, 30);
		snprintf(p, sizeof(p), "%s/t/p1/a", s);
		snprintf(q, sizeof(q), "%s/t/p2/b", s);
		assert_int_equal(xchg(P(f, p), P(f, q)), 0);
		drain(f, 30);
		f->n = 0;
		snprintf(p, sizeof(p), "%s/t/p2/b/asub", s);
		probe(f, p, "y1", false, be);
		f->n = 0;
		snprintf(p, sizeof(p), "%s/t/p1/a/bsub", s);
		probe(f, p, "y2", false, be);
		assert_int_equal(inofd_watch_count(f->in), 7);
	}
}

/* the root D/t exchanged with its sibling D/s */
static void xchg_root_sibling(void **state)
{
	struct fx *f = *state;
	char s[64], p[256], q[256];
	const char *be;

	EACH_BACKEND(f, be) {
		fresh(f, be, s, sizeof(s));
		snprintf(p, sizeof(p), "%s/d/t/tsub", s);
		mkp(f, p);
		snprintf(p, sizeof(p), "%s/d/s/ssub", s);
		mkp(f, p);
		snprintf(p, sizeof(p), "%s/d/t", s);
		assert_true(tree(f, p) >= 0);
		drain(f, 30);
		snprintf(p, sizeof(p), "%s/d/t", s);
		snprintf(q, sizeof(q), "%s/d/s", s);
		assert_int_equal(xchg(P(f, p), P(f, q)), 0);
		drain(f, 30);
		/* the old root is now d/s: its events say so, or LOST */
		f->n = 0;
		snprintf(p, sizeof(p), "%s/d/s/tsub", s);
		probe(f, p, "z1", true, be);
		f->n = 0;
		snprintf(p, sizeof(p), "%s/d/s", s);
		probe(f, p, "z2", true, be);
	}
}

/* the root's parent D/p exchanged with D/q */
static void xchg_root_parent(void **state)
{
	struct fx *f = *state;
	char s[64], p[256], q[256];
	const char *be;

	EACH_BACKEND(f, be) {
		fresh(f, be, s, sizeof(s));
		snprintf(p, sizeof(p), "%s/d/p/t/tsub", s);
		mkp(f, p);
		snprintf(p, sizeof(p), "%s/d/q/t/qsub", s);
		mkp(f, p);
		snprintf(p, sizeof(p), "%s/d/p/t", s);
		assert_true(tree(f, p) >= 0);
		drain(f, 30);
		snprintf(p, sizeof(p), "%s/d/p", s);
		snprintf(q, sizeof(q), "%s/d/q", s);
		assert_int_equal(xchg(P(f, p), P(f, q)), 0);
		drain(f, 30);
		f->n = 0;
		snprintf(p, sizeof(p), "%s/d/q/t/tsub", s);
		probe(f, p, "w1", true, be);
	}
}

DEFINE_TESTS(exchange,
	TN(xchg_siblings),
	TN(xchg_parents),
	TN(xchg_root_sibling),
	TN(xchg_root_parent),
)
