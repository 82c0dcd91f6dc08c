// SPDX-License-Identifier: GPL-2.0
/*
 * bench_lib: events per second through libinofd's iterator (inofd_read +
 * inofd_next, which builds each event's full path) against a raw read()
 * loop that builds the same full paths, over the same event stream: NEV
 * IN_MODIFY events on FILES files of one directory DEPTH levels below the
 * watched root (alternating names, so the kernel merges none), queued
 * before the clock starts, then drained.  The library watches the root
 * with inofd_watch_tree_at(); the raw loop watches the directory itself and
 * joins its path with each name.  Both hand each path to the same
 * consumer, which reads its first byte (until 2026-12-04 the library's
 * side took strlen() of every path, which the raw side did not: about 20
 * instructions an event that were the consumer's, not the iterator's).
 * Times are the thread's CPU time.  Root raises max_queued_events.
 * BENCH_LIB_READ (bytes, default 65536, the library's INOFD__READ_BUF) is
 * the raw loop's read size: give it the READ_BUF of the library linked in
 * (scripts/bench-lib-l2.sh).  Each round says how full the reads were
 * and how many page faults each reader took.  BENCH_LIB_WARM=N (default
 * 0) has each reader drain N events before the clock starts, so that
 * the library's buffers are allocated and touched (a long-running
 * reader's steady state) and its faults leave the figure.
 * Built with -DBENCH_LIB_SPLIT -Wl,--wrap=read, it also reports each
 * reader's time outside read(2): its user-space work, which the caches
 * weigh on, without the kernel's share of each event.
 *
 *   bench_lib DIR NEV ROUNDS [DEPTH]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/resource.h>
#include <sys/stat.h>

#include "bench.h"
#include "inofd.h"

#define FILES 64

static char *buf;		/* the raw loop's read buffer */
static size_t bufsz = 64 * 1024;
static long nread, nbatch;	/* raw read() calls, lib batches, a round */
static long nflt;		/* page faults of one reader's round */
static long warm;		/* events drained before the clock starts */

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_minflt;
}
static char leaf[4096];		/* the directory the events happen in */

/*
 * CPU time of this thread (user + system): what the drain costs, not how
 * long others held the CPU meanwhile (hosts and guests here are shared).
 */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double in_read;		/* CPU time in read(2), one reader's round */

#ifdef BENCH_LIB_SPLIT
/*
 * Every read(2) of the program, the library's too (it is linked in
 * statically), comes here with -Wl,--wrap=read: two clock reads per
 * read(2), thousands of events each.
 */
ssize_t __real_read(int fd, void *b, size_t n);
ssize_t __wrap_read(int fd, void *b, size_t n);

ssize_t __wrap_read(int fd, void *b, size_t n)
{
	double t = cpu_s();
	ssize_t r = __real_read(fd, b, n);

	in_read += cpu_s() - t;
	return r;
}
#endif

static void make_files(const char *dir)
{
	char p[4200];
	int i, fd;

	for (i = 0; i < FILES; i++) {
		snprintf(p, sizeof(p), "%s/file%02d", dir, i);
		fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0)
			die("open");
		close(fd);
	}
}

static void generate(const char *dir, long nev)
{
	int fds[FILES], i;
	char p[4200];
	long k;

	for (i = 0; i < FILES; i++) {
		snprintf(p, sizeof(p), "%s/file%02d", dir, i);
		fds[i] = open(p, O_WRONLY | O_CLOEXEC);
		if (fds[i] < 0)
			die("open");
	}
	for (k = 0; k < nev; k++)
		if (pwrite(fds[k % FILES], "x", 1, 0) != 1)
			die("pwrite");
	for (i = 0; i < FILES; i++)
		close(fds[i]);
}

/* What each reader does with a path: the same on both sides. */
static inline size_t consume(const char *path)
{
	return (unsigned char)*(const volatile char *)path;
}

/*
 * The drains before the clock (BENCH_LIB_WARM): copies of the timed loops,
 * which stay as they were (bench 1d by instruction count compares them
 * across days; made one function, they changed by 1-2 instructions an
 * event).
 */
static __attribute__((noinline)) void raw_warm(int ifd)
{
	size_t dl = strlen(leaf), names = 0;
	static char path[8192];
	ssize_t n;

	memcpy(path, leaf, dl);
	path[dl] = '/';
	while ((n = read(ifd, buf, bufsz)) > 0) {
		char *q;

		for (q = buf; q < buf + n;) {
			struct inotify_event *e = (void *)q;

			if (e->len) {
				size_t nl = strlen(e->name);

				memcpy(path + dl + 1, e->name, nl + 1);
				names += consume(path);
			}
			q += sizeof(*e) + e->len;
		}
	}
	if (!names)
		die("raw warm-up: no event");
}

static __attribute__((noinline)) void lib_warm(struct inofd *in)
{
	size_t paths = 0;

	for (;;) {
		const struct inofd_event *ev;
		int r = inofd_read(in);

		if (r < 0)
			die("inofd_read");
		if (r == 0)
			break;
		while (inofd_next(in, &ev) == 1)
			paths += ev->path ? consume(ev->path) : 0;
	}
	if (!paths)
		die("lib warm-up: no event");
}

static double raw(const char *dir, long nev, long *got)
{
	int ifd = sys_init1(IN_NONBLOCK | IN_CLOEXEC);
	size_t names = 0, dl = strlen(leaf);
	static char path[8192];
	double t0, t1;
	ssize_t n;

	(void)dir;
	if (ifd < 0 || sys_add(ifd, leaf, IN_MODIFY) < 0)
		die("raw watch");
	if (warm) {
		generate(leaf, warm);
		raw_warm(ifd);
	}
	generate(leaf, nev);
	*got = 0;
	nread = 0;
	in_read = 0;
	nflt = minflt();
	t0 = cpu_s();
	memcpy(path, leaf, dl);
	path[dl] = '/';
	while ((n = read(ifd, buf, bufsz)) > 0) {
		char *q;

		nread++;
		for (q = buf; q < buf + n;) {
			struct inotify_event *e = (void *)q;

			(*got)++;
			if (e->len) {
				/* the same full path the library hands out */
				size_t nl = strlen(e->name);

				memcpy(path + dl + 1, e->name, nl + 1);
				names += consume(path);
			}
			q += sizeof(*e) + e->len;
		}
	}
	t1 = cpu_s();
	nflt = minflt() - nflt;
	close(ifd);
	if (!names)
		*got = -1;
	return t1 - t0;
}

static double lib(const char *dir, long nev, long *got)
{
	struct inofd *in;
	size_t paths = 0;
	double t0, t1;

	if (inofd_new(&in, NULL) < 0 ||
	    inofd_watch_tree_at(in, AT_FDCWD, dir, IN_MODIFY, NULL) < 0)
		die("lib watch");
	if (warm) {
		generate(leaf, warm);
		lib_warm(in);
	}
	generate(leaf, nev);
	*got = 0;
	nbatch = 0;
	in_read = 0;
	nflt = minflt();
	t0 = cpu_s();
	for (;;) {
		const struct inofd_event *ev;
		int r = inofd_read(in);

		if (r < 0)
			die("inofd_read");
		if (r == 0)
			break;
		nbatch++;	/* one inofd_read(): one batch, streamed */
		while (inofd_next(in, &ev) == 1) {
			(*got)++;
			paths += ev->path ? consume(ev->path) : 0;
		}
	}
	t1 = cpu_s();
	nflt = minflt() - nflt;
	inofd_free(in);
	if (!paths)
		*got = -1;
	return t1 - t0;
}

int main(int argc, char **argv)
{
	double tr[32], tl[32], ur[32], ul[32], mr, ml;
	const char *rs = getenv("BENCH_LIB_READ");
	long nev, gr, gl, rr, rl, fr, fl;
	int rounds, r, depth = 0, d;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: bench_lib DIR NEV ROUNDS [DEPTH]\n");
		return 2;
	}
	nev = atol(argv[2]);
	rounds = atoi(argv[3]);
	if (argc == 5)
		depth = atoi(argv[4]);
	if (rounds < 1 || rounds > 32 || depth < 0 || depth > 64)
		return 2;
	if (rs && *rs)
		bufsz = strtoul(rs, NULL, 0);
	rs = getenv("BENCH_LIB_WARM");
	if (rs && *rs)
		warm = atol(rs);
	if (bufsz < 4096 || bufsz > (64u << 20)) {
		fprintf(stderr, "bench_lib: BENCH_LIB_READ out of 4096..64M\n");
		return 2;
	}
	buf = malloc(bufsz);
	if (!buf)
		die("malloc");
	mkdir(argv[1], 0755);
	snprintf(leaf, sizeof(leaf), "%s", argv[1]);
	for (d = 0; d < depth; d++) {
		strcat(leaf, "/d");
		mkdir(leaf, 0755);
	}
	make_files(leaf);
	write_sysctl("max_queued_events", (nev > warm ? nev : warm) + 1024);
	for (r = 0; r < rounds; r++) {
		tr[r] = raw(argv[1], nev, &gr);
		ur[r] = tr[r] - in_read;
		rr = nread;
		fr = nflt;
		tl[r] = lib(argv[1], nev, &gl);
		ul[r] = tl[r] - in_read;
		rl = nbatch;
		fl = nflt;
		printf("#   round %d raw %.3f s (%ld events, %ld reads of %zu, "
		       "%ld faults)  lib %.3f s (%ld events, %ld batches, "
		       "%ld faults)\n", r + 1, tr[r], gr, rr, bufsz, fr,
		       tl[r], gl, rl, fl);
		fflush(stdout);
		if (gr != nev || gl != nev) {
			fprintf(stderr, "bench_lib: expected %ld events each\n", nev);
			return 1;
		}
	}
	mr = median(tr, rounds);
	ml = median(tl, rounds);
	printf("lib events=%ld depth=%d raw read()+path %.0f events/s  libinofd "
	       "iterator %.0f events/s  ratio lib/raw time %.2f\n", nev, depth,
	       nev / mr, nev / ml, ml / mr);
#ifdef BENCH_LIB_SPLIT
	mr = median(ur, rounds);
	ml = median(ul, rounds);
	printf("lib events=%ld depth=%d outside read(2): raw %.1f ns/event  "
	       "libinofd %.1f ns/event  ratio %.2f\n", nev, depth,
	       mr * 1e9 / nev, ml * 1e9 / nev, ml / mr);
#else
	(void)ur;
	(void)ul;
#endif
	return 0;
}
