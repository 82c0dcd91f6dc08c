// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A tree in the namespace users live in (issue 38): overlayfs, binds
 * between two directories of the tree.  Each test runs in a child in a
 * private mount namespace of its own (as test_mounts.c): it needs
 * CAP_SYS_ADMIN and is reported skipped without it.  The child returns a
 * code, 0 for a pass, and says what failed on stderr.
 */
#include "unit.h"

#include <libgen.h>
#include <sched.h>
#include <sys/mount.h>

#define PUMP(in)	collect_quiet((in), 50, 0, f->r, &f->n, MAXREC)

static void show(const struct fx *f)
{
	int i;

	for (i = 0; i < f->n; i++)
		fprintf(stderr, "  ev type %d wd %d mask %#x flags %#x ino %llu dev %#llx %s\n",
			f->r[i].type, f->r[i].wd, f->r[i].mask, f->r[i].flags,
			(unsigned long long)f->r[i].ino,
			(unsigned long long)f->r[i].dev, f->r[i].path);
}


static void expect(struct fx *f, int (*fn)(void *))
{
	int r = in_child(fn, f);

	if (r == 77) {
		fprintf(stderr, "test_ns: no private mount namespace "
			"(needs CAP_SYS_ADMIN): skipped\n");
		skip();
	}
	assert_int_equal(r, 0);
}

/* every IN_CREATE's ino and dev are its directory's, as stat(2) says */
static int idents_true(struct fx *f, int want)
{
	int i, n = 0;

	for (i = 0; i < f->n; i++) {
		char d[PATH_MAX];
		struct stat st;

		if (f->r[i].type != INOFD_EV_INOTIFY ||
		    !(f->r[i].mask & IN_CREATE) || !f->r[i].path[0])
			continue;
		snprintf(d, sizeof(d), "%s", f->r[i].path);
		CHECK(stat(dirname(d), &st) == 0, 30);
		if (st.st_ino != f->r[i].ino || st.st_dev != f->r[i].dev) {
			fprintf(stderr, "test_ns: %s: ino %llu dev %#llx, stat(2) says %llu %#llx\n",
				f->r[i].path, (unsigned long long)f->r[i].ino,
				(unsigned long long)f->r[i].dev,
				(unsigned long long)st.st_ino,
				(unsigned long long)st.st_dev);
			return 31;
		}
		n++;
	}
	CHECK(n == want, 32);
	return 0;
}

/*
 * An overlay as the tree's root: lower a/b, c; upper a (merged), d.
 * mixed: the lower layer on a tmpfs of its own, else both on one.
 */
static int overlay_body(struct fx *f, bool mixed)
{
	static const char *const dirs[] = { "", "a", "a/b", "c", "d" };
	char opt[3 * PATH_MAX], p[PATH_MAX];
	size_t i;
	int r;

	MKD(P(f, "m"));
	CHECK(mount("inofd", P(f, "m"), "tmpfs", 0, NULL) == 0, 2);
	MKD(P(f, "m/lo"));
	if (mixed)
		CHECK(mount("inofd", P(f, "m/lo"), "tmpfs", 0, NULL) == 0, 3);
	MKD(P(f, "m/up"));
	MKD(P(f, "m/wk"));
	MKD(P(f, "m/mg"));
	MKD(P(f, "m/lo/a"));
	MKD(P(f, "m/lo/a/b"));
	MKD(P(f, "m/lo/c"));
	MKD(P(f, "m/up/a"));
	MKD(P(f, "m/up/d"));
	snprintf(opt, sizeof(opt), "lowerdir=%s,upperdir=%s,workdir=%s",
		 P(f, "m/lo"), P(f, "m/up"), P(f, "m/wk"));
	if (mount("overlay", P(f, "m/mg"), "overlay", 0, opt)) {
		fprintf(stderr, "test_ns: no overlayfs here: %s\n",
			strerror(errno));
		return 77;
	}
	CHECK(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "m/mg"), IN_CREATE,
				  NULL) >= 0, 4);
	CHECK(PUMP(f->in) >= 0, 5);
	/* five directories, five identities */
	CHECK(inofd_watch_count(f->in) == 5, 6);
	f->n = 0;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(p, sizeof(p), "m/mg/%s%sx", dirs[i], *dirs[i] ? "/" : "");
		MKF(P(f, p));
	}
	CHECK(PUMP(f->in) >= 0, 7);
	r = idents_true(f, 5);
	return r;
}

static int overlay_same(void *arg)
{
	struct fx *f = arg;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 77;
	return overlay_body(f, false) ? (show(f), 1) : 0;
}

static int overlay_mixed(void *arg)
{
	struct fx *f = arg;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 77;
	return overlay_body(f, true) ? (show(f), 1) : 0;
}

static void ns_overlay_same_fs(void **state)
{
	expect(*state, overlay_same);
}

static void ns_overlay_mixed_fs(void **state)
{
	expect(*state, overlay_mixed);
}

static int created(const struct fx *f, const char *path)
{
	int i, n = 0;

	for (i = 0; i < f->n; i++)
		if (f->r[i].type == INOFD_EV_INOTIFY &&
		    (f->r[i].mask & IN_CREATE) && !strcmp(f->r[i].path, path))
			n++;
	return n;
}

/*
 * mount --bind r/aa-src r/zz-dst (after the watch, or before: before)
 * then umount r/zz-dst: aa-src is watched still (again), and what is
 * made there reported, once.
 */
static int bind_body(struct fx *f, bool before)
{
	MKD(P(f, "r"));
	MKD(P(f, "r/aa-src"));
	MKD(P(f, "r/aa-src/sub"));
	MKD(P(f, "r/zz-dst"));
	if (before)
		CHECK(mount(P(f, "r/aa-src"), P(f, "r/zz-dst"), NULL, MS_BIND,
			    NULL) == 0, 2);
	CHECK(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "r"), IN_CREATE,
				  NULL) >= 0, 3);
	CHECK(PUMP(f->in) >= 0, 4);
	if (!before)
		CHECK(mount(P(f, "r/aa-src"), P(f, "r/zz-dst"), NULL, MS_BIND,
			    NULL) == 0, 5);
	CHECK(PUMP(f->in) >= 0, 6);
	CHECK(umount(P(f, "r/zz-dst")) == 0, 7);
	CHECK(PUMP(f->in) >= 0, 8);
	f->n = 0;
	MKF(P(f, "r/aa-src/F"));
	MKF(P(f, "r/aa-src/sub/G"));
	MKF(P(f, "r/zz-dst/H"));
	CHECK(PUMP(f->in) >= 0, 9);
	CHECK(created(f, P(f, "r/aa-src/F")) == 1, 10);
	CHECK(created(f, P(f, "r/aa-src/sub/G")) == 1, 11);
	CHECK(created(f, P(f, "r/zz-dst/H")) == 1, 12);
	return 0;
}

static int bind_after(void *arg)
{
	struct fx *f = arg;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 77;
	return bind_body(f, false) ? (show(f), 1) : 0;
}

static int bind_before(void *arg)
{
	struct fx *f = arg;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 77;
	return bind_body(f, true) ? (show(f), 1) : 0;
}

static void ns_bind_tree_dirs_after(void **state)
{
	expect(*state, bind_after);
}

static void ns_bind_tree_dirs_before(void **state)
{
	expect(*state, bind_before);
}

/*
 * The same with a source made in the batch of the bind (oracle -F -C seeds
 * 60001 and 60016): when the mount is seen the source is not watched yet,
 * so the mount looks like any other and is recorded by its root's
 * identity, which the tree then holds under the source's name: the umount
 * must still be placed at r/zz-dst, which is watched again (its entry
 * reported), not at r/new-src, where nothing changed.
 */
static int bind_fresh(void *arg)
{
	struct fx *f = arg;

	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 77;
	MKD(P(f, "r"));
	MKD(P(f, "r/zz-dst"));
	MKD(P(f, "r/zz-dst/old"));
	CHECK(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "r"), IN_CREATE,
				  NULL) >= 0, 2);
	CHECK(PUMP(f->in) >= 0, 3);
	MKD(P(f, "r/new-src"));
	MKD(P(f, "r/new-src/sub"));
	CHECK(mount(P(f, "r/new-src"), P(f, "r/zz-dst"), NULL, MS_BIND,
		    NULL) == 0, 4);
	CHECK(PUMP(f->in) >= 0, 5);
	CHECK(umount(P(f, "r/zz-dst")) == 0, 6);
	CHECK(PUMP(f->in) >= 0, 7);
	f->n = 0;
	MKF(P(f, "r/new-src/F"));
	MKF(P(f, "r/new-src/sub/G"));
	MKF(P(f, "r/zz-dst/H"));
	MKF(P(f, "r/zz-dst/old/I"));
	CHECK(PUMP(f->in) >= 0, 8);
	if (created(f, P(f, "r/new-src/F")) != 1 ||
	    created(f, P(f, "r/new-src/sub/G")) != 1 ||
	    created(f, P(f, "r/zz-dst/H")) != 1 ||
	    created(f, P(f, "r/zz-dst/old/I")) != 1) {
		show(f);
		return 9;
	}
	return 0;
}

static void ns_bind_tree_dirs_fresh_src(void **state)
{
	expect(*state, bind_fresh);
}

DEFINE_TESTS(ns,
	T(ns_bind_tree_dirs_after),
	T(ns_bind_tree_dirs_before),
	T(ns_bind_tree_dirs_fresh_src),
	T(ns_overlay_same_fs),
	T(ns_overlay_mixed_fs),
)
