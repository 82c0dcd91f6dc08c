// SPDX-License-Identifier: GPL-2.0
/*
 * stress_flood: no event is lost silently.
 *
 * Kernel: threads create files with unique names in a watched directory
 * while another thread reads.  With a queue larger than the flood every
 * IN_CREATE must arrive, exactly once; with a small one (or a reader that
 * does not keep up) either every event arrives or IN_Q_OVERFLOW does.
 *
 * Library (root: it shrinks fs.inotify.max_queued_events for its
 * instance): a recursive watch flooded past its queue reports
 * INOFD_EV_RESCAN, and afterwards watches every directory made during the
 * flood, including those made inside directories it had not seen yet, and
 * reports new files in them with the right paths.
 *
 * Exit 0 pass, 1 fail, 4 skip (no INOTIFY_IOC_WATCH and not required).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "inofd.h"

#define NPROD	2

static int failures;
static char dir[256];
static long per_prod;
static atomic_int producing;

#define FAIL(...) do { printf("FAIL: " __VA_ARGS__); printf("\n"); \
		       failures++; } while (0)

static long read_sysctl(const char *n)
{
	char p[128];
	long v = -1;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/sys/fs/inotify/%s", n);
	f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_sysctl(const char *n, long v)
{
	char p[128];
	FILE *f;

	snprintf(p, sizeof(p), "/proc/sys/fs/inotify/%s", n);
	f = fopen(p, "w");
	if (!f)
		return -1;
	fprintf(f, "%ld\n", v);
	return fclose(f);
}

static void *producer(void *arg)
{
	long id = (long)arg, i;
	char p[512];

	for (i = 0; i < per_prod; i++) {
		int fd;

		snprintf(p, sizeof(p), "%s/p%ld-%06ld", dir, id, i);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0) {
			FAIL("create %s: %s", p, strerror(errno));
			break;
		}
		close(fd);
	}
	atomic_fetch_sub(&producing, 1);
	return NULL;
}

/*
 * One kernel round: returns 1 if an overflow was seen.  slow: the reader
 * sleeps between reads (1) or waits for the producers to finish (2).
 * must_all: fail unless every event arrived.
 */
static int kernel_round(int ifd, long nprod, int slow, int must_all)
{
	static char buf[64 * 1024];
	pthread_t t[NPROD];
	char *seen;
	long got = 0, dup = 0, total = nprod * NPROD, i;
	int overflow = 0, idle = 0;

	seen = calloc(total, 1);
	per_prod = nprod;
	producing = NPROD;
	for (i = 0; i < NPROD; i++)
		pthread_create(&t[i], NULL, producer, (void *)i);
	/* read until the producers are done and the queue stays empty */
	while (idle < 3) {
		struct pollfd pf = { ifd, POLLIN, 0 };
		ssize_t n;
		char *q;

		if (slow == 1)
			usleep(20000);
		if (slow == 2 && producing) {
			usleep(10000);
			continue;
		}
		if (poll(&pf, 1, 100) == 0) {
			if (!producing)
				idle++;
			continue;
		}
		n = read(ifd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EAGAIN)
				continue;
			FAIL("read: %s", strerror(errno));
			break;
		}
		for (q = buf; q < buf + n;) {
			struct inotify_event *e = (void *)q;
			long pid, k;

			q += sizeof(*e) + e->len;
			if (e->mask & IN_Q_OVERFLOW) {
				if (e->wd != -1)
					FAIL("IN_Q_OVERFLOW with wd %d", e->wd);
				overflow++;
				continue;
			}
			if (!(e->mask & IN_CREATE) || !e->len ||
			    sscanf(e->name, "p%ld-%ld", &pid, &k) != 2 ||
			    pid < 0 || pid >= NPROD || k < 0 || k >= nprod) {
				FAIL("unexpected event mask %#x name %s", e->mask,
				     e->len ? e->name : "");
				continue;
			}
			if (seen[pid * nprod + k]++)
				dup++;
			else
				got++;
		}
	}
	for (i = 0; i < NPROD; i++)
		pthread_join(t[i], NULL);
	printf("stress_flood: kernel: %ld files, %ld events arrived, %ld "
	       "duplicates, %d overflow events (%s reader)\n", total, got, dup,
	       overflow, slow == 2 ? "late" : slow ? "slow" : "fast");
	if (dup)
		FAIL("%ld IN_CREATE events arrived twice", dup);
	/* a reader that reads nothing during the flood sees one overflow */
	if (slow == 2 && overflow > 1)
		FAIL("%d IN_Q_OVERFLOW events for one flood", overflow);
	if (got < total && !overflow)
		FAIL("%ld events lost without IN_Q_OVERFLOW", total - got);
	if (must_all && got != total)
		FAIL("queue large enough, but %ld of %ld events arrived", got,
		     total);
	free(seen);
	return overflow;
}

static void clean_dir(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf %s/*", dir);
	if (system(cmd))
		FAIL("rm -rf");
}

static int kernel_part(int root)
{
	long qmax = read_sysctl("max_queued_events");
	int ifd;

	/* 1. queue large enough, a reader that keeps up: all must arrive */
	if (root)
		write_sysctl("max_queued_events", 100000);
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0 || inotify_add_watch(ifd, dir, IN_CREATE) < 0) {
		FAIL("watch: %s", strerror(errno));
		return -1;
	}
	kernel_round(ifd, 1000, 0, 1);
	close(ifd);
	clean_dir();

	/*
	 * 2. a small queue: a reader racing the producers (overflow or not,
	 * nothing may be lost silently), then one that reads only after the
	 * flood (the queue must overflow).  A user cannot shrink the queue,
	 * and overflowing the default one takes 16384 files: too slow on the
	 * debug kernel for what it adds.
	 */
	if (!root) {
		printf("stress_flood: not root: overflow rounds not run\n");
		return 0;
	}
	for (int late = 1; late <= 2; late++) {
		write_sysctl("max_queued_events", 256);
		ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		write_sysctl("max_queued_events", qmax);
		if (ifd < 0 || inotify_add_watch(ifd, dir, IN_CREATE) < 0) {
			FAIL("watch: %s", strerror(errno));
			return -1;
		}
		if (!kernel_round(ifd, 1000, late, 0) && late == 2)
			FAIL("the queue must have overflowed");
		close(ifd);
		clean_dir();
	}
	return 0;
}

/* library: drain everything now ready; counts RESCAN events */
static int drain(struct inofd *in, int *rescans, int *errors, char **paths,
		 int npaths, int *found)
{
	int quiet = 0;

	while (quiet < 3) {
		const struct inofd_event *ev;
		struct pollfd pf = { inofd_fd(in), POLLIN, 0 };
		int tmo = inofd_timeout(in), r;

		if (poll(&pf, 1, tmo < 0 || tmo > 100 ? 100 : tmo) == 0 &&
		    inofd_timeout(in) != 0) {
			quiet++;
			continue;
		}
		r = inofd_read(in);
		if (r < 0) {
			FAIL("inofd_read: %s", inofd_strerror(r));
			return -1;
		}
		while (inofd_next(in, &ev) == 1) {
			int i;

			if (ev->type == INOFD_EV_RESCAN)
				(*rescans)++;
			if (ev->type == INOFD_EV_ERROR) {
				(*errors)++;
				printf("stress_flood: library error %s on %s\n",
				       inofd_strerror(ev->error),
				       ev->path ? ev->path : "?");
			}
			for (i = 0; paths && i < npaths; i++)
				if (ev->path && (ev->mask & IN_CREATE) &&
				    !strcmp(ev->path, paths[i]))
					found[i]++;
		}
	}
	return 0;
}

#define NDIRS	40

static void library_round(int small)
{
	long qmax = read_sysctl("max_queued_events");
	char p[600], *paths[NDIRS];
	int found[NDIRS] = { 0 }, rescans = 0, errors = 0, i, want, missing = 0;
	struct inofd *in;
	int r;

	if (small)
		write_sysctl("max_queued_events", 32);
	r = inofd_new(&in, NULL);
	if (small)
		write_sysctl("max_queued_events", qmax);
	if (r < 0) {
		FAIL("inofd_new: %s", inofd_strerror(r));
		return;
	}
	r = inofd_watch_tree_at(in, AT_FDCWD, dir, IN_CREATE, NULL);
	if (r < 0) {
		FAIL("inofd_watch_tree_at: %s", inofd_strerror(r));
		inofd_free(in);
		return;
	}
	/*
	 * The flood, with nobody reading: directories, each with a
	 * subdirectory made before the library can have seen its parent,
	 * and files to push the queue over.
	 */
	for (i = 0; i < NDIRS; i++) {
		snprintf(p, sizeof(p), "%s/d%02d", dir, i);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/d%02d/s", dir, i);
		mkdir(p, 0755);
		snprintf(p, sizeof(p), "%s/f%02d", dir, i);
		close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	}
	drain(in, &rescans, &errors, NULL, 0, NULL);
	want = 1 + 2 * NDIRS;
	printf("stress_flood: library (%s queue): %d rescans, %d errors, %d "
	       "watches (want %d)\n", small ? "32-event" : "default", rescans,
	       errors, inofd_watch_count(in), want);
	if (small && !rescans)
		FAIL("a 32-event queue did not overflow");
	if (!small && rescans)
		FAIL("RESCAN without an overflow");
	if (errors)
		FAIL("%d library errors", errors);
	if (inofd_watch_count(in) != want)
		FAIL("the recursive watch has %d watches, want %d",
		     inofd_watch_count(in), want);

	/*
	 * Every directory, seen or missed, now reports with its path; in
	 * batches the queue holds, so that nothing overflows again.
	 */
	r = rescans;
	for (i = 0; i < NDIRS; i++) {
		if (asprintf(&paths[i], "%s/d%02d/s/new", dir, i) < 0)
			return;
		close(open(paths[i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
		if (i % 8 == 7 || i == NDIRS - 1)
			drain(in, &rescans, &errors, paths, i + 1, found);
	}
	if (rescans != r)
		FAIL("the queue overflowed again on %d events", NDIRS);
	for (i = 0; i < NDIRS; i++) {
		if (found[i] != 1) {
			if (missing++ < 5)
				printf("stress_flood: %s reported %d times\n",
				       paths[i], found[i]);
		}
		free(paths[i]);
	}
	if (missing)
		FAIL("%d of %d new files not reported exactly once after the "
		     "flood", missing, NDIRS);
	inofd_free(in);
	clean_dir();
}

int main(void)
{
	int root = geteuid() == 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	struct inofd *in;
	int r;

	snprintf(dir, sizeof(dir), "%s/flood", getenv("TMPDIR") ?
		 getenv("TMPDIR") : "/tmp");
	if (mkdir(dir, 0755) && errno != EEXIST) {
		perror("mkdir");
		return 1;
	}
	r = inofd_new(&in, NULL);
	if (r < 0) {
		printf("inofd_new: %s\n", inofd_strerror(r));
		return 1;
	}
	if (inofd_backend(in) != INOFD_BACKEND_KERNEL) {
		printf("stress_flood: no INOTIFY_IOC_WATCH in this kernel\n");
		inofd_free(in);
		return getenv("REQUIRE_INOTIFY_WATCH") ? 1 : 4;
	}
	inofd_free(in);

	kernel_part(root);
	library_round(0);
	if (root)
		library_round(1);
	else
		printf("stress_flood: not root: library overflow recovery "
		       "(needs a small max_queued_events) not run\n");
	rmdir(dir);
	if (failures) {
		printf("stress_flood: %d failures\n", failures);
		return 1;
	}
	printf("stress_flood: pass\n");
	return 0;
}
