// SPDX-License-Identifier: GPL-2.0
/*
 * bench_lib: events per second through libinofd's iterator (inofd_read +
 * inofd_next, which builds each event's full path) against a raw read()
 * loop that builds the same full paths, over the same event stream:
 * IN_MODIFY events on FILES files of one directory DEPTH levels below the
 * watched root (alternating names, so the kernel merges none), queued
 * before the clock starts, then drained.  The library watches the root
 * with inofd_watch_tree_at(); the raw loop watches the directory itself and
 * joins its path with each name.  Both hand each path to the same
 * consumer, which reads its first byte (until 2026-12-04 the library's
 * side took strlen() of every path, which the raw side did not: about 20
 * instructions an event that were the consumer's, not the iterator's).
 * Times are the thread's CPU time.  Root raises max_queued_events.
 *
 * Both readers watch at once (a fresh inotify descriptor, a fresh
 * instance), so that every event generated is queued for both.  A round
 * is NEV events, queued BENCH_LIB_CHUNK (default NEV: all at once) at a
 * time, each chunk drained by both readers one after the other, which
 * goes first alternating from chunk to chunk.  Each round's lib / raw is
 * printed; the result lines give the median of the rounds' ratios and the
 * ratio of the median times.  By default the readers are made afresh for
 * every round; BENCH_LIB_KEEP=1 keeps them from round to round, as a
 * long-running reader is kept: a fresh instance's first use (the memory
 * its first read's events touch) is then the first round's, whose ratio
 * and page faults are printed apart.  Until 2026-12-05 a round was one
 * reader's 16,000 events then the other's, fresh readers each, 3 ms each
 * on the host: too short to be stable, and on a host where a page's first
 * touch costs 10-16 us (BENCHMARKS.md 1d) the instance's first use was
 * most of the difference.  The CPU model, L2, affinity and load average
 * are printed first and last ("lib host" lines).
 *
 * BENCH_LIB_READ (bytes, default 65536, the library's INOFD__READ_BUF) is
 * the raw loop's read size: give it the READ_BUF of the library linked in
 * (scripts/bench-lib-l2.sh).  Each round says how full the reads were
 * and how many page faults each reader took.  BENCH_LIB_WARM=N (default
 * 0) has each reader drain N events before the clock starts, so that
 * the library's buffers are allocated and touched (a long-running
 * reader's steady state) and its faults leave the figure.
 * Built with -DBENCH_LIB_SPLIT -Wl,--wrap=read, it also reports each
 * reader's time outside read(2): its user-space work, which the caches
 * weigh on, without the kernel's share of each event.  raw_drain() and
 * lib_drain() are the timed loops (not inlined: callgrind's
 * --toggle-collect counts them apart, scripts/bench-lib-cache.sh).
 *
 *   bench_lib DIR NEV ROUNDS [DEPTH]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "bench.h"
#include "inofd.h"

#define FILES 64
#define MAXR 64		/* rounds at most */

static char *buf;		/* the raw loop's read buffer */
static size_t bufsz = 64 * 1024;
static long nread, nbatch;	/* raw read() calls, lib batches, a round */
static long warm;		/* events drained before the clock starts */
static long chunk;		/* events queued at a time (BENCH_LIB_CHUNK) */
static int keep;		/* the same readers for every round */

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

static double in_read;		/* CPU time in read(2), all readers */
static double inr_raw, inr_lib;	/* each reader's share, one round */

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
 * The drains before the clock (BENCH_LIB_WARM): copies of the timed loops
 * (raw_drain(), lib_drain()), without their counters.
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

/*
 * The raw loop drains what is queued: its events are counted in *got,
 * its read(2) calls in nread; returns the thread CPU time it took.
 */
static __attribute__((noinline)) double raw_drain(int ifd, long *got, size_t *names)
{
	size_t dl = strlen(leaf);
	static char path[8192];
	double t0, t1;
	ssize_t n;

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
				*names += consume(path);
			}
			q += sizeof(*e) + e->len;
		}
	}
	t1 = cpu_s();
	return t1 - t0;
}

/* The same for the library: its batches (inofd_read() calls) in nbatch. */
static __attribute__((noinline)) double lib_drain(struct inofd *in, long *got, size_t *paths)
{
	double t0, t1;

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
			*paths += ev->path ? consume(ev->path) : 0;
		}
	}
	t1 = cpu_s();
	return t1 - t0;
}

/* One drain of the raw loop, added to the round's figures. */
static void one_raw(int ifd, double *t, long *got, long *flt, size_t *names)
{
	long f = minflt();
	double i = in_read;

	*t += raw_drain(ifd, got, names);
	inr_raw += in_read - i;
	*flt += minflt() - f;
}

/* The two readers: the raw loop's descriptor and the library's instance. */
struct readers {
	int ifd;
	struct inofd *in;
};

/*
 * A fresh inotify descriptor for the raw loop and a fresh instance for
 * the library, both watching (the raw loop the directory, the library the
 * tree), so that each generate() queues the same events for both; with
 * BENCH_LIB_WARM, each drains that many first, untimed.
 */
static void readers_open(struct readers *rd, const char *dir)
{
	rd->ifd = sys_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (rd->ifd < 0 || sys_add(rd->ifd, leaf, IN_MODIFY) < 0)
		die("raw watch");
	if (inofd_new(&rd->in, NULL) < 0 ||
	    inofd_watch_tree_at(rd->in, AT_FDCWD, dir, IN_MODIFY, NULL) < 0)
		die("lib watch");
	if (warm) {
		generate(leaf, warm);
		raw_warm(rd->ifd);
		lib_warm(rd->in);
	}
}

static void readers_close(struct readers *rd)
{
	close(rd->ifd);
	inofd_free(rd->in);
}

/*
 * One round: NEV events for both readers, queued CHUNK at a time
 * (untimed), each chunk drained by both one after the other, which goes
 * first alternating from chunk to chunk, across rounds too (with one chunk
 * a round, from round to round): a burst of other work on the machine
 * falls on both alike.  Each reader's time and page faults are its
 * drains' sum.
 */
static void round_both(struct readers *rd, long nev, double *traw,
		       double *tlib, long *graw, long *glib, long *fraw,
		       long *flib)
{
	static long k;		/* chunks so far, all rounds: who goes first */
	size_t names = 0, paths = 0;
	long done, c, f;
	double i;

	*traw = *tlib = 0;
	*graw = *glib = *fraw = *flib = 0;
	nread = nbatch = 0;
	inr_raw = inr_lib = 0;
	for (done = 0; done < nev; done += c, k++) {
		c = nev - done < chunk ? nev - done : chunk;
		generate(leaf, c);
		if (k % 2 == 0)
			one_raw(rd->ifd, traw, graw, fraw, &names);
		f = minflt();
		i = in_read;
		*tlib += lib_drain(rd->in, glib, &paths);
		inr_lib += in_read - i;
		*flib += minflt() - f;
		if (k % 2)
			one_raw(rd->ifd, traw, graw, fraw, &names);
	}
	if (!names)
		*graw = -1;
	if (!paths)
		*glib = -1;
}

/*
 * max_queued_events to at least v, never lower: it is the machine's, and
 * another bench may need more meanwhile (a lower value cut a concurrent
 * guest-sized run's rounds short).
 */
static void raise_queue(long v)
{
	FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "r");
	long cur = 0;

	if (f) {
		if (fscanf(f, "%ld", &cur) != 1)
			cur = 0;
		fclose(f);
	}
	if (cur < v)
		write_sysctl("max_queued_events", v);
}

/* What the figures were taken on: CPU model, L2, load (BENCHMARKS.md). */
static void print_host(const char *when)
{
	char line[512], model[256] = "?", fam[32] = "?", mod[32] = "?";
	char l2[64] = "?", la[128] = "?";
	cpu_set_t set;
	FILE *f;

	f = fopen("/proc/cpuinfo", "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *v = strchr(line, ':');

		if (!v)
			continue;
		v += 1 + (v[1] == ' ');
		v[strcspn(v, "\n")] = 0;
		if (!strncmp(line, "model name", 10) && model[0] == '?')
			snprintf(model, sizeof(model), "%s", v);
		else if (!strncmp(line, "cpu family", 10) && fam[0] == '?')
			snprintf(fam, sizeof(fam), "%s", v);
		else if (!strncmp(line, "model\t", 6) && mod[0] == '?')
			snprintf(mod, sizeof(mod), "%s", v);
	}
	if (f)
		fclose(f);
	f = fopen("/sys/devices/system/cpu/cpu0/cache/index2/size", "r");
	if (f && fgets(l2, sizeof(l2), f))
		l2[strcspn(l2, "\n")] = 0;
	if (f)
		fclose(f);
	f = fopen("/proc/loadavg", "r");
	if (f && fgets(la, sizeof(la), f))
		la[strcspn(la, "\n")] = 0;
	if (f)
		fclose(f);
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	printf("lib host %s: cpu \"%s\" family %s model %s, L2 %s per core, "
	       "%ld cpus online, affinity %d cpus, loadavg %s\n", when, model, fam,
	       mod, l2, sysconf(_SC_NPROCESSORS_ONLN), CPU_COUNT(&set), la);
}

int main(int argc, char **argv)
{
	double tr[MAXR], tl[MAXR], ur[MAXR], ul[MAXR], q[MAXR], mr, ml, mq, q0 = 0;
	const char *rs = getenv("BENCH_LIB_READ");
	long nev, gr, gl, rr, rl, fr, fl, f0 = 0;
	int rounds, r, depth = 0, d;
	struct readers rd;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: bench_lib DIR NEV ROUNDS [DEPTH]\n");
		return 2;
	}
	nev = atol(argv[2]);
	rounds = atoi(argv[3]);
	if (argc == 5)
		depth = atoi(argv[4]);
	if (nev < 1 || rounds < 1 || rounds > MAXR || depth < 0 || depth > 64)
		return 2;
	if (rs && *rs)
		bufsz = strtoul(rs, NULL, 0);
	rs = getenv("BENCH_LIB_WARM");
	if (rs && *rs)
		warm = atol(rs);
	rs = getenv("BENCH_LIB_KEEP");
	keep = rs && *rs && atoi(rs);
	chunk = nev;
	rs = getenv("BENCH_LIB_CHUNK");
	if (rs && *rs)
		chunk = atol(rs);
	if (bufsz < 4096 || bufsz > (64u << 20)) {
		fprintf(stderr, "bench_lib: BENCH_LIB_READ out of 4096..64M\n");
		return 2;
	}
	if (chunk < 1 || chunk > nev) {
		fprintf(stderr, "bench_lib: BENCH_LIB_CHUNK out of 1..NEV\n");
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
	raise_queue((chunk > warm ? chunk : warm) + 1024);
	print_host("start");
	for (r = 0; r < rounds; r++) {
		if (!keep || r == 0)
			readers_open(&rd, argv[1]);
		round_both(&rd, nev, &tr[r], &tl[r], &gr, &gl, &fr, &fl);
		if (!keep || r == rounds - 1)
			readers_close(&rd);
		rr = nread;
		rl = nbatch;
		ur[r] = tr[r] - inr_raw;
		ul[r] = tl[r] - inr_lib;
		q[r] = tl[r] / tr[r];
		if (r == 0) {
			q0 = q[0];
			f0 = fl;
		}
		printf("#   round %d raw %.3f s (%ld events, %ld reads of %zu, "
		       "%ld faults)  lib %.3f s (%ld events, %ld batches, "
		       "%ld faults)  ratio %.3f\n", r + 1, tr[r], gr, rr, bufsz,
		       fr, tl[r], gl, rl, fl, q[r]);
		fflush(stdout);
		if (gr != nev || gl != nev) {
			fprintf(stderr, "bench_lib: expected %ld events each\n", nev);
			return 1;
		}
	}
	print_host("end");
	mr = median(tr, rounds);
	ml = median(tl, rounds);
	mq = median(q, rounds);
	printf("lib events=%ld depth=%d rounds=%d chunk=%ld readers=%s: raw "
	       "%.1f ns/event, lib %.1f ns/event (medians), lib/raw per round: "
	       "median %.3f, range %.3f-%.3f; the first round (fresh readers) "
	       "%.3f, lib %ld page faults\n", nev, depth, rounds, chunk,
	       keep ? "kept" : "fresh-each-round", mr * 1e9 / nev,
	       ml * 1e9 / nev, mq, q[0], q[rounds - 1], q0, f0);
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
