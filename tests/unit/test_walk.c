// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tree walks (libinotify/src/tree.c): a failing getdents64 is reported and
 * the walk goes on; a large directory is listed across reads, resumed at
 * its position when it did not change, begun again when it did.
 */
#include "unit.h"

#include <dirent.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <time.h>

/* internal (libinofd-internal.a): list directories with fn */
void inofd__walk_hook(struct inofd *in,
		      long (*fn)(int fd, void *buf, size_t len));

static int bad_calls;

/* mkdir -p of rel below the fixture's directory */
static void mkdirs(struct fx *f, const char *rel)
{
	char p[PATH_MAX], *s;

	snprintf(p, sizeof(p), "%s", P(f, rel));
	for (s = p + strlen(f->dir) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0755) && errno != EEXIST)
			fail_msg("mkdir %s: %s", p, strerror(errno));
		*s = '/';
	}
	if (mkdir(p, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", p, strerror(errno));
}

/* getdents64 that fails with EIO on any directory named "bad" */
static long failing_getdents(int fd, void *buf, size_t len)
{
	char lp[64], p[PATH_MAX];
	ssize_t n;

	snprintf(lp, sizeof(lp), "/proc/self/fd/%d", fd);
	n = readlink(lp, p, sizeof(p) - 1);
	if (n > 0) {
		const char *b;

		p[n] = '\0';
		b = strrchr(p, '/');
		if (b && !strcmp(b + 1, "bad")) {
			bad_calls++;
			errno = EIO;
			return -1;
		}
	}
	return syscall(SYS_getdents64, fd, buf, len);
}

static int errors_at(const struct fx *f, const char *path, int err)
{
	int i, n = 0;

	for (i = 0; i < f->n; i++)
		if (f->r[i].type == INOFD_EV_ERROR && f->r[i].error == err &&
		    !strcmp(f->r[i].path, path))
			n++;
	return n;
}

static void walk_getdents_error(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX];

	mkdirs(f, "t/a/x");
	mkdirs(f, "t/bad/x");
	mkdirs(f, "t/c/x");
	inofd__walk_hook(f->in, failing_getdents);
	bad_calls = 0;
	/* the first walk: t/bad is watched but not listed; the rest is */
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL) >= 0);
	assert_int_equal(bad_calls, 1);
	assert_int_equal(inofd_watch_count(f->in), 6);
	drain(f, 50);
	snprintf(want, sizeof(want), "%s", P(f, "t/bad"));
	if (errors_at(f, want, -EIO) != 1) {
		dump(f);
		fail_msg("want one INOFD_EV_ERROR -EIO naming %s", want);
	}
	assert_int_equal(f->n, 1);
	/* a walk made by an event, in inofd_read(): the same */
	f->n = 0;
	mkdirs(f, "out/m/bad/x");
	mkdirs(f, "out/m/ok/x");
	assert_int_equal(rename(P(f, "out/m"), P(f, "t/m")), 0);
	drain(f, 50);
	snprintf(want, sizeof(want), "%s", P(f, "t/m/bad"));
	if (errors_at(f, want, -EIO) != 1) {
		dump(f);
		fail_msg("want one INOFD_EV_ERROR -EIO naming %s", want);
	}
	/* t/m, t/m/bad, t/m/ok, t/m/ok/x: not t/m/bad/x */
	assert_int_equal(inofd_watch_count(f->in), 10);
	f->n = 0;
	mkfile(P(f, "t/m/ok/x/probe"));
	drain(f, 50);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_CREATE, "probe") >= 0);
}

/* getdents64 whose d_ino for entries named "g" is not the inode's */
static long lying_getdents(int fd, void *buf, size_t len)
{
	long n = syscall(SYS_getdents64, fd, buf, len), off;

	for (off = 0; off < n;) {
		struct dirent64 *de = (void *)((char *)buf + off);

		if (!strcmp(de->d_name, "g"))
			de->d_ino += 1000000;
		off += de->d_reclen;
	}
	return n;
}

/* A directory's identity guessed from a wrong d_ino is put right. */
static void walk_wrong_d_ino(void **state)
{
	struct fx *f = *state;
	struct stat st;

	mkdirs(f, "t/g/h");
	inofd__walk_hook(f->in, lying_getdents);
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL) >= 0);
	assert_int_equal(inofd_watch_count(f->in), 3);
	drain(f, 50);
	f->n = 0;
	/* a new directory in t/g is found by t/g's path, inode checked */
	mkdirs(f, "t/g/new");
	drain(f, 50);
	assert_int_equal(inofd_watch_count(f->in), 4);
	assert_int_equal(stat(P(f, "t/g"), &st), 0);
	assert_true(inofd__kwd_of(f->in, st.st_dev, st.st_ino) >= 0);
	f->n = 0;
	mkfile(P(f, "t/g/new/probe"));
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_RESCAN, 0, NULL), 0);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, "probe"), 1);
	assert_string_equal(f->r[find(f, INOFD_EV_INOTIFY, IN_CREATE, "probe")].path,
			    P(f, "t/g/new/probe"));
}

/*
 * The walk's own open/getdents64/close of each directory is dropped by
 * count; the counts must be exact, or a later open by someone else would
 * be dropped instead (or ours reported).
 */
static void walk_own_noise_exact(void **state)
{
	struct fx *f = *state;
	char want[PATH_MAX];
	int i, opens = 0;
	DIR *d;

	mkdirs(f, "t/a/b/c");
	mkdirs(f, "t/d");
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"),
				     IN_OPEN | IN_ACCESS | IN_CLOSE_NOWRITE,
				     NULL) >= 0);
	drain(f, 50);
	if (f->n)
		dump(f);
	assert_int_equal(f->n, 0);
	/* someone else lists t/a/b: reported */
	d = opendir(P(f, "t/a/b"));
	assert_non_null(d);
	while (readdir(d))
		;
	closedir(d);
	drain(f, 50);
	snprintf(want, sizeof(want), "%s", P(f, "t/a/b"));
	for (i = 0; i < f->n; i++)
		if (f->r[i].type == INOFD_EV_INOTIFY &&
		    (f->r[i].mask & IN_OPEN) &&
		    (!strcmp(f->r[i].path, want)))
			opens++;
	/* once by t/a under the name b, once by t/a/b itself */
	if (opens != 2) {
		dump(f);
		fail_msg("an outside open of %s reported %d times, want 2",
			 want, opens);
	}
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CLOSE_NOWRITE, NULL), 2);
}

/* mk made, the tree t watched (IN_CREATE), its events drained and forgotten */
static void start_t(struct fx *f, const char *be, const char *mk)
{
	mkdirs(f, PB(f, be, mk) + strlen(f->dir) + 1);
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, PB(f, be, "t"),
					IN_CREATE, NULL) >= 0);
	drain(f, 50);
	f->n = 0;
}

/*
 * A walk looks at the file system as it is now; the records the kernel
 * queued before it, not parsed yet, are from before.  Here, while the
 * walk of a new directory t/n lists it, a file is made in t/a and t/a is
 * renamed to t/n/a: the listing meets t/a's node under t/n and puts it
 * there, before the create's record is parsed.  That create was made at
 * t/a/f1: an event saying t/n/a/f1 must be flagged INOFD_EVF_STALE_PATH
 * (issue 38 class 6, tests/probes/writers: a crawl after a RESCAN with no
 * loss put a writer's directory where it was now, and the creates queued
 * before were reported there, unflagged).
 */
static const char *moved_during;	/* t/a, renamed to t/n/a in the walk */
static const char *made_during;		/* t/a/f1, made before that */
static const char *moved_to;

/* Is fd, which a walk lists, a directory called n (t/n)? */
static bool lists_n(int fd)
{
	char lp[64], p[PATH_MAX];
	const char *b;
	ssize_t n;

	snprintf(lp, sizeof(lp), "/proc/self/fd/%d", fd);
	n = readlink(lp, p, sizeof(p) - 1);
	if (n <= 0)
		return false;
	p[n] = '\0';
	b = strrchr(p, '/');
	return b && !strcmp(b + 1, "n");
}

static long moving_getdents(int fd, void *buf, size_t len)
{
	if (moved_during && lists_n(fd)) {
		if (touch_path(made_during) || rename(moved_during, moved_to))
			return -1;
		moved_during = NULL;
	}
	return syscall(SYS_getdents64, fd, buf, len);
}

static void walk_places_now_flagged(void **state)
{
	struct fx *f = *state;
	char a[PATH_MAX], f1[PATH_MAX], to[PATH_MAX], want[PATH_MAX];
	const char *be;

	EACH_BACKEND(f, be) {
		int i, seen = 0;

		start_t(f, be, "t/a");
		snprintf(a, sizeof(a), "%s", PB(f, be, "t/a"));
		snprintf(f1, sizeof(f1), "%s", PB(f, be, "t/a/f1"));
		snprintf(to, sizeof(to), "%s", PB(f, be, "t/n/a"));
		moved_during = a;
		made_during = f1;
		moved_to = to;
		inofd__walk_hook(f->in, moving_getdents);
		mkdirs(f, PB(f, be, "t/n") + strlen(f->dir) + 1);
		drain(f, 50);
		assert_null(moved_during);	/* the walk listed t/n */
		for (i = 0; i < f->n; i++) {
			const struct rec *r = &f->r[i];

			if (r->type != INOFD_EV_INOTIFY ||
			    strcmp(r->name, "f1"))
				continue;
			seen++;
			if (!(r->nulls & REC_NULL_PATH) && strcmp(r->path, f1) &&
			    !(r->flags & INOFD_EVF_STALE_PATH)) {
				dump(f);
				fail_msg("%s: f1 reported at %s, made at %s, unflagged",
					 be, r->path, f1);
			}
		}
		assert_int_equal(seen, 1);
		/* and the tree is right again */
		f->n = 0;
		mkfile(PB(f, be, "t/n/a/f2"));
		drain(f, 50);
		i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "f2");
		assert_true(i >= 0);
		snprintf(want, sizeof(want), "%s", PB(f, be, "t/n/a/f2"));
		assert_string_equal(f->r[i].path, want);
		assert_int_equal(f->r[i].flags & INOFD_EVF_STALE_PATH, 0);
	}
}

/*
 * The walk of a new directory watches what has its name now; the records
 * queued before the walk, not parsed yet, may be about what had the name
 * then.  Node W is at t/x; then W goes on to t/y, a file is made in it, B
 * comes to t/x from outside and t/n is renamed: none of it read yet, when
 * a walk of t/x runs (asked for by a fed IN_CREATE of x) and watches B
 * there, a second node called x.  The rename of x read next is W's, not
 * B's (issue 38 class 6, tests/probes/writers on procfd: a writer's
 * directory stayed at the name it had left, its creates reported there,
 * unflagged).  procfd: the fed record names the kernel's wd.
 */
static void walk_new_name_taken(void **state)
{
	struct fx *f = *state;
	struct {
		struct inotify_event h;
		char name[16];
	} rec = { .h = { .mask = IN_CREATE | IN_ISDIR, .len = 16 },
		  .name = "x" };
	struct stat st;
	int i, seen = 0;

	assert_true(fx_backend(f, INOFD_FORCE_PROCFD));
	mkdirs(f, "t/w");
	mkdirs(f, "t/n");
	mkdirs(f, "o/B");
	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE,
				     NULL) >= 0);
	assert_int_equal(rename(P(f, "t/w"), P(f, "t/x")), 0);
	drain(f, 50);
	f->n = 0;
	assert_int_equal(rename(P(f, "t/x"), P(f, "t/y")), 0);
	mkfile(P(f, "t/y/f1"));
	assert_int_equal(rename(P(f, "o/B"), P(f, "t/x")), 0);
	assert_int_equal(rename(P(f, "t/n"), P(f, "t/n2")), 0);
	assert_int_equal(stat(P(f, "t"), &st), 0);
	rec.h.wd = inofd__kwd_of(f->in, st.st_dev, st.st_ino);
	assert_true(rec.h.wd >= 0);
	assert_true(inofd__feed(f->in, &rec, sizeof(rec)) >= 0);
	drain(f, 50);
	for (i = 0; i < f->n; i++) {
		const struct rec *r = &f->r[i];

		if (r->type != INOFD_EV_INOTIFY || strcmp(r->name, "f1"))
			continue;
		seen++;
		if (!(r->nulls & REC_NULL_PATH) &&
		    strcmp(r->path, P(f, "t/y/f1")) &&
		    !(r->flags & INOFD_EVF_STALE_PATH)) {
			dump(f);
			fail_msg("f1 reported at %s, made at %s, unflagged",
				 r->path, P(f, "t/y/f1"));
		}
	}
	assert_int_equal(seen, 1);
	/* and the tree is right again */
	f->n = 0;
	mkfile(P(f, "t/y/f2"));
	mkfile(P(f, "t/x/f3"));
	drain(f, 50);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "f2");
	assert_true(i >= 0);
	assert_string_equal(f->r[i].path, P(f, "t/y/f2"));
	assert_int_equal(f->r[i].flags & INOFD_EVF_STALE_PATH, 0);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "f3");
	assert_true(i >= 0);
	assert_string_equal(f->r[i].path, P(f, "t/x/f3"));
}

/*
 * What a walk places is judged by the records that waited for it, not by
 * their being there: a plain mkdir -p, and a burst of directories moved
 * in, flag nothing, although the kernel holds records queued before each
 * of their walks (their own listing's opens and closes, the creates below
 * them, and here a file made and renamed in the tree while the walk of
 * t/a lists: a rename that moves nothing the walk placed).  Issue 38
 * class 6's first fix (session 32) flagged all of these.
 */
static const char *noise_in;	/* made and renamed while "a" is listed */
static const char *noise_to;

static long noisy_getdents(int fd, void *buf, size_t len)
{
	char lp[64], p[PATH_MAX];
	ssize_t n;

	snprintf(lp, sizeof(lp), "/proc/self/fd/%d", fd);
	n = readlink(lp, p, sizeof(p) - 1);
	if (n > 0 && noise_in) {
		const char *b;

		p[n] = '\0';
		b = strrchr(p, '/');
		if (b && !strcmp(b + 1, "a")) {
			if (touch_path(noise_in) || rename(noise_in, noise_to))
				return -1;
			noise_in = NULL;
		}
	}
	return syscall(SYS_getdents64, fd, buf, len);
}

static void walk_no_overlap_not_flagged(void **state)
{
	struct fx *f = *state;
	static const char *const dirs[] = {
		"t/a", "t/a/b", "t/a/b/c", "t/d1", "t/d1/x", "t/d1/x/y",
		"t/d2", "t/d2/x", "t/d3",
	};
	char fn[PATH_MAX], gn[PATH_MAX];
	const char *be;

	EACH_BACKEND(f, be) {
		size_t i;
		int j;

		mkdirs(f, PB(f, be, "t") + strlen(f->dir) + 1);
		mkdirs(f, PB(f, be, "o/d1/x/y") + strlen(f->dir) + 1);
		mkdirs(f, PB(f, be, "o/d2/x") + strlen(f->dir) + 1);
		mkdirs(f, PB(f, be, "o/d3") + strlen(f->dir) + 1);
		assert_true(inofd_watch_tree_at(f->in, AT_FDCWD,
				PB(f, be, "t"), IN_CREATE | IN_MOVED_TO,
				NULL) >= 0);
		drain(f, 50);
		f->n = 0;
		snprintf(fn, sizeof(fn), "%s", PB(f, be, "t/f"));
		snprintf(gn, sizeof(gn), "%s", PB(f, be, "t/g"));
		noise_in = fn;
		noise_to = gn;
		inofd__walk_hook(f->in, noisy_getdents);
		mkdirs(f, PB(f, be, "t/a/b/c") + strlen(f->dir) + 1);
		drain(f, 50);
		assert_null(noise_in);	/* the walk listed t/a */
		assert_int_equal(rename(PB(f, be, "o/d1"),
					PB(f, be, "t/d1")), 0);
		assert_int_equal(rename(PB(f, be, "o/d2"),
					PB(f, be, "t/d2")), 0);
		assert_int_equal(rename(PB(f, be, "o/d3"),
					PB(f, be, "t/d3")), 0);
		drain(f, 50);
		for (j = 0; j < f->n; j++)
			if (f->r[j].flags & INOFD_EVF_STALE_PATH) {
				dump(f);
				fail_msg("%s: event %d flagged", be, j);
			}
		/* each directory reported once at least, at its path */
		for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
			const char *d = PB(f, be, dirs[i]);
			bool seen = false;

			for (j = 0; j < f->n && !seen; j++)
				seen = !(f->r[j].nulls & REC_NULL_PATH) &&
				       !strcmp(f->r[j].path, d);
			if (!seen) {
				dump(f);
				fail_msg("%s: %s not reported", be, d);
			}
		}
		inofd__walk_hook(f->in, NULL);
	}
}

/*
 * A walk finds a directory by path and lists it by descriptor: renamed in
 * between, what is made in it after the rename is listed, and its
 * synthetic IN_CREATE must not carry the old path unflagged.  Here the
 * walk of the new t/n lists it after t/n became t/m and t/m/f1 was made:
 * f1 never was at t/n/f1 (tests/probes/writers on fanotify: the last
 * unflagged wrong paths after the placements were judged).
 */
static const char *ren_from, *ren_to, *ren_made;

static long renaming_getdents(int fd, void *buf, size_t len)
{
	if (ren_from && lists_n(fd)) {
		if (rename(ren_from, ren_to) || touch_path(ren_made))
			return -1;
		ren_from = NULL;
	}
	return syscall(SYS_getdents64, fd, buf, len);
}

static void walk_listed_after_rename_flagged(void **state)
{
	struct fx *f = *state;
	char from[PATH_MAX], to[PATH_MAX], made[PATH_MAX], old[PATH_MAX];
	const char *be;

	EACH_BACKEND(f, be) {
		int i, seen = 0;

		start_t(f, be, "t");
		snprintf(from, sizeof(from), "%s", PB(f, be, "t/n"));
		snprintf(to, sizeof(to), "%s", PB(f, be, "t/m"));
		snprintf(made, sizeof(made), "%s", PB(f, be, "t/m/f1"));
		snprintf(old, sizeof(old), "%s", PB(f, be, "t/n/f1"));
		ren_from = from;
		ren_to = to;
		ren_made = made;
		inofd__walk_hook(f->in, renaming_getdents);
		mkdirs(f, PB(f, be, "t/n") + strlen(f->dir) + 1);
		drain(f, 50);
		inofd__walk_hook(f->in, NULL);
		assert_null(ren_from);	/* the walk listed t/n */
		for (i = 0; i < f->n; i++) {
			const struct rec *r = &f->r[i];

			if (r->type != INOFD_EV_INOTIFY ||
			    strcmp(r->name, "f1"))
				continue;
			seen++;
			if (!(r->nulls & REC_NULL_PATH) &&
			    !strcmp(r->path, old) &&
			    !(r->flags & INOFD_EVF_STALE_PATH)) {
				dump(f);
				fail_msg("%s: f1 reported at %s, never there, unflagged",
					 be, r->path);
			}
		}
		assert_true(seen >= 1);
	}
}

#define NBIG 3000

/* dir/out/big with NBIG subdirectories, its mtime an hour ago */
static void make_big(struct fx *f)
{
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { 0 } };
	char p[PATH_MAX];
	int i;

	mkdirs(f, "out/big");
	for (i = 0; i < NBIG; i++) {
		snprintf(p, sizeof(p), "%s/d%04d", P(f, "out/big"), i);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	ts[1].tv_sec = time(NULL) - 3600;
	assert_int_equal(utimensat(AT_FDCWD, P(f, "out/big"), ts, 0), 0);
}

/* synthetic IN_CREATE|IN_ISDIR per dNNNN name, in seen[] */
static int synth_counts(const struct fx *f, int *seen)
{
	int i, n = 0;

	memset(seen, 0, NBIG * sizeof(*seen));
	for (i = 0; i < f->n; i++) {
		const struct rec *r = &f->r[i];
		int k;

		if (r->type != INOFD_EV_INOTIFY ||
		    r->mask != (IN_CREATE | IN_ISDIR) ||
		    !(r->flags & INOFD_EVF_SYNTHETIC) ||
		    sscanf(r->name, "d%d", &k) != 1 || k < 0 || k >= NBIG)
			continue;
		seen[k]++;
		n++;
	}
	return n;
}

/* One read lists part of big; returns how many of its entries it saw. */
static int first_read(struct fx *f)
{
	const struct inofd_event *ev;
	int n = 0;

	assert_true(inofd_watch_tree_at(f->in, AT_FDCWD, P(f, "t"), IN_CREATE, NULL) >= 0);
	assert_int_equal(rename(P(f, "out/big"), P(f, "t/big")), 0);
	usleep(20000);
	assert_true(inofd_read(f->in) >= 0);
	while (inofd_next(f->in, &ev) > 0)
		if (ev->type == INOFD_EV_INOTIFY && (ev->flags & INOFD_EVF_SYNTHETIC))
			n++;
	return n;
}

static void walk_large_dir_resumes(void **state)
{
	struct fx *f = *state;
	static int seen[NBIG];
	int n1, i;

	mkdirp(P(f, "t"));
	make_big(f);
	n1 = first_read(f);
	if (n1 <= 0 || n1 >= NBIG)
		fail_msg("the first read listed %d of %d entries", n1, NBIG);
	assert_true(inofd_watch_count(f->in) < NBIG + 2);
	assert_int_equal(inofd_timeout(f->in), 0);	/* more to do now */
	drain(f, 50);
	assert_int_equal(inofd_watch_count(f->in), NBIG + 2);
	/* resumed at its position: the rest once each, nothing twice */
	assert_int_equal(synth_counts(f, seen), NBIG - n1);
	for (i = 0; i < NBIG; i++)
		if (seen[i] > 1)
			fail_msg("d%04d reported %d times", i, seen[i]);
}

static void walk_large_dir_changed_restarts(void **state)
{
	struct fx *f = *state;
	static int seen[NBIG];
	char p[PATH_MAX];
	int n1, i, total;

	mkdirp(P(f, "t"));
	make_big(f);
	n1 = first_read(f);
	if (n1 <= 0 || n1 >= NBIG)
		fail_msg("the first read listed %d of %d entries", n1, NBIG);
	/* between two reads the directory changes: its mtime says so */
	for (i = 0; i < 50; i++) {
		snprintf(p, sizeof(p), "%s/x%02d", P(f, "t/big"), i);
		assert_int_equal(mkdir(p, 0755), 0);
	}
	drain(f, 50);
	assert_int_equal(inofd_watch_count(f->in), NBIG + 2 + 50);
	/* begun again: what the first read saw is seen again */
	total = synth_counts(f, seen);
	if (total < NBIG)
		fail_msg("%d entries after the change, want all %d again",
			 total, NBIG);
	f->n = 0;
	mkfile(P(f, "t/big/d0000/probe"));
	mkfile(P(f, "t/big/x49/probe"));
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_CREATE, "probe"), 2);
}

DEFINE_TESTS(walk,
	T(walk_getdents_error),
	T(walk_wrong_d_ino),
	T(walk_own_noise_exact),
	T(walk_places_now_flagged),
	T(walk_new_name_taken),
	T(walk_no_overlap_not_flagged),
	T(walk_listed_after_rename_flagged),
	T(walk_large_dir_resumes),
	T(walk_large_dir_changed_restarts),
)
