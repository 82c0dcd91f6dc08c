// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Tree walks (libinotify/src/tree.c): a failing getdents64 is reported and
 * the walk goes on; a large directory is listed across reads, resumed at
 * its position when it did not change, begun again when it did.
 */
#include "unit.h"

#include <dirent.h>
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
	T(walk_large_dir_resumes),
	T(walk_large_dir_changed_restarts),
)
