// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * One inode's name unlinked and linked again before a read: rm x;
 * ln keep x, an editor's save through a backup link (ln x x~; rm x;
 * ln x~ x; rm x~), and ln x y; rm y.  fanotify merges the unlink and the
 * link of one name and one object into one CREATE|DELETE event; the
 * order of the two records must be the filesystem's (the last one says
 * whether the name is there now), on procfd and fanotify alike.
 */
#include "unit.h"

static void ln(const char *a, const char *b)
{
	assert_int_equal(link(a, b), 0);
}

/* the last CREATE or DELETE of name: says whether it is there */
static void last_says(struct fx *f, const char *be, const char *name,
		      bool there)
{
	uint32_t last = 0;
	int i;

	for (i = 0; i < f->n; i++)
		if (f->r[i].type == INOFD_EV_INOTIFY &&
		    !strcmp(f->r[i].name, name) &&
		    (f->r[i].mask & (IN_CREATE | IN_DELETE)))
			last = f->r[i].mask & (IN_CREATE | IN_DELETE);
	if (last != (there ? IN_CREATE : IN_DELETE)) {
		dump(f);
		fail_msg("%s: %s is %s, the last event says %s", be, name,
			 there ? "there" : "gone",
			 last == IN_CREATE ? "created" :
			 last == IN_DELETE ? "deleted" : "nothing");
	}
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, name), 1);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_DELETE, name), 1);
}

static void start(struct fx *f, const char *be)
{
	mkdirp(PB(f, be, ""));
	mkdirp(PB(f, be, "t"));
	mkfile(PB(f, be, "t/x"));
	ln(PB(f, be, "t/x"), PB(f, be, "t/keep"));
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, PB(f, be, "t"),
			IN_CREATE | IN_DELETE, NULL) >= 0);
	drain(f, 30);
	f->n = 0;
}

/* rm x; ln keep x */
static void relink_rm_ln(void **state)
{
	struct fx *f = *state;
	const char *be;

	EACH_BACKEND(f, be) {
		start(f, be);
		assert_int_equal(unlink(PB(f, be, "t/x")), 0);
		ln(PB(f, be, "t/keep"), PB(f, be, "t/x"));
		drain(f, 30);
		last_says(f, be, "x", true);
	}
}

/* ln x x~; rm x; ln x~ x; rm x~ */
static void relink_backup_save(void **state)
{
	struct fx *f = *state;
	const char *be;

	EACH_BACKEND(f, be) {
		start(f, be);
		ln(PB(f, be, "t/x"), PB(f, be, "t/x~"));
		assert_int_equal(unlink(PB(f, be, "t/x")), 0);
		ln(PB(f, be, "t/x~"), PB(f, be, "t/x"));
		assert_int_equal(unlink(PB(f, be, "t/x~")), 0);
		drain(f, 30);
		last_says(f, be, "x", true);
		last_says(f, be, "x~", false);
	}
}

/* ln x y; rm y: made and gone */
static void relink_ln_rm(void **state)
{
	struct fx *f = *state;
	const char *be;

	EACH_BACKEND(f, be) {
		start(f, be);
		ln(PB(f, be, "t/x"), PB(f, be, "t/y"));
		assert_int_equal(unlink(PB(f, be, "t/y")), 0);
		drain(f, 30);
		last_says(f, be, "y", false);
	}
}

DEFINE_TESTS(relink,
	TN(relink_rm_ln),
	TN(relink_backup_save),
	TN(relink_ln_rm),
)
