// SPDX-License-Identifier: GPL-2.0
/*
 * bench_lib: events per second through libinofd's iterator (inofd_read +
 * inofd_next, which builds each event's path) against a raw read() loop,
 * over the same event stream: NEV IN_MODIFY events on FILES files of one
 * watched directory (alternating names, so the kernel merges none), queued
 * before the clock starts, then drained.  Root raises max_queued_events.
 *
 *   bench_lib DIR NEV ROUNDS
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/stat.h>

#include "bench.h"
#include "inofd.h"

#define FILES 64

static char buf[64 * 1024];

static void generate(const char *dir, long nev)
{
	int fds[FILES], i;
	char p[512];
	long k;

	for (i = 0; i < FILES; i++) {
		snprintf(p, sizeof(p), "%s/file%02d", dir, i);
		fds[i] = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fds[i] < 0)
			die("open");
	}
	for (k = 0; k < nev; k++)
		if (pwrite(fds[k % FILES], "x", 1, 0) != 1)
			die("pwrite");
	for (i = 0; i < FILES; i++)
		close(fds[i]);
}

static double raw(const char *dir, long nev, long *got)
{
	int ifd = sys_init1(IN_NONBLOCK | IN_CLOEXEC);
	size_t names = 0;
	double t0, t1;
	ssize_t n;

	if (ifd < 0 || sys_add(ifd, dir, IN_MODIFY) < 0)
		die("raw watch");
	generate(dir, nev);
	*got = 0;
	t0 = now_s();
	while ((n = read(ifd, buf, sizeof(buf))) > 0) {
		char *q;

		for (q = buf; q < buf + n;) {
			struct inotify_event *e = (void *)q;

			(*got)++;
			names += e->len ? strlen(e->name) : 0;
			q += sizeof(*e) + e->len;
		}
	}
	t1 = now_s();
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
	    inofd_watch_path(in, dir, IN_MODIFY, NULL) < 0)
		die("lib watch");
	generate(dir, nev);
	*got = 0;
	t0 = now_s();
	for (;;) {
		const struct inofd_event *ev;
		int r = inofd_read(in);

		if (r < 0)
			die("inofd_read");
		if (r == 0)
			break;
		while (inofd_next(in, &ev) == 1) {
			(*got)++;
			paths += ev->path ? strlen(ev->path) : 0;
		}
	}
	t1 = now_s();
	inofd_free(in);
	if (!paths)
		*got = -1;
	return t1 - t0;
}

int main(int argc, char **argv)
{
	double tr[32], tl[32], mr, ml;
	long nev, gr, gl;
	int rounds, r;

	if (argc != 4) {
		fprintf(stderr, "usage: bench_lib DIR NEV ROUNDS\n");
		return 2;
	}
	nev = atol(argv[2]);
	rounds = atoi(argv[3]);
	if (rounds < 1 || rounds > 32)
		return 2;
	mkdir(argv[1], 0755);
	write_sysctl("max_queued_events", nev + 1024);
	for (r = 0; r < rounds; r++) {
		tr[r] = raw(argv[1], nev, &gr);
		tl[r] = lib(argv[1], nev, &gl);
		printf("#   round %d raw %.3f s (%ld events)  lib %.3f s (%ld events)\n",
		       r + 1, tr[r], gr, tl[r], gl);
		fflush(stdout);
		if (gr != nev || gl != nev) {
			fprintf(stderr, "bench_lib: expected %ld events each\n", nev);
			return 1;
		}
	}
	mr = median(tr, rounds);
	ml = median(tl, rounds);
	printf("lib events=%ld raw read() %.0f events/s  libinofd iterator %.0f "
	       "events/s  ratio lib/raw time %.2f\n", nev, nev / mr, nev / ml,
	       ml / mr);
	return 0;
}
