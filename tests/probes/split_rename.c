// SPDX-License-Identifier: GPL-2.0
/*
 * split_rename: issue 26's reproduction 2, measured.
 *
 * A tree BASE/t is watched recursively.  One writer process makes N files
 * (open O_CREAT, write, close) in BASE/t/a/d by a descriptor, while a
 * renamer process moves d between BASE/t/a and BASE/t/b and back for as
 * long as the writer runs.  The kernel queues a rename's IN_MOVED_FROM and
 * IN_MOVED_TO one after the other but not atomically: the writer's
 * records land between them.  d never leaves the tree, so the truth is:
 * N IN_CLOSE_WRITE (one per file), each with BASE/t/a/d/NAME or
 * BASE/t/b/d/NAME, no MOVE_OUT, no MOVE_IN.
 *
 *   cc -O2 -I../../include-uapi -I../../libinotify/include split_rename.c \
 *      -o split_rename ../../libinotify/libinofd.a
 *   ./split_rename [-n FILES] [-B procfd|fanotify] [-t PAIR_MS]
 *
 * -t sets the library's pair_timeout_ms (default 10): how long a rename's
 * first half waits for its second.  The guest test raises it: a TCG
 * vCPU can be descheduled by the host for longer than 10 ms between the
 * two halves of one rename, and the half then ends as a MOVE_OUT, the
 * timeout's documented cost rather than what this probe looks for
 * (measured: 1 MOVE_OUT in about 10,000 renames, debug guest, loaded
 * host).
 *
 * Prints what was reported; exit 0 when it is the truth, 1 otherwise.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inofd.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct inofd_opts o = { .sz = sizeof(o) };
	struct inofd *in;
	const struct inofd_event *ev;
	char base[] = "/tmp/split-rename.XXXXXX", p[4][512];
	unsigned char *seen;
	long n = 20000, got = 0, dup = 0, badpath = 0, nopath = 0, outs = 0, ins = 0,
	     renames = 0, rescans = 0, errors = 0, i;
	int c, dfd, wd;
	pid_t w, m;
	struct pollfd pf;
	double quiet = 0;
	bool wdone = false;

	while ((c = getopt(argc, argv, "n:B:t:")) != -1) {
		if (c == 'n')
			n = atol(optarg);
		else if (c == 't')
			o.pair_timeout_ms = (unsigned int)atoi(optarg);
		else if (c == 'B' && !strcmp(optarg, "procfd"))
			o.flags = INOFD_FORCE_PROCFD;
		else if (c == 'B' && !strcmp(optarg, "fanotify"))
			o.flags = INOFD_FORCE_FANOTIFY;
		else {
			fprintf(stderr, "usage: split_rename [-n FILES] [-B procfd|fanotify] [-t PAIR_MS]\n");
			return 2;
		}
	}
	seen = calloc((size_t)n, 1);
	if (!seen || !mkdtemp(base))
		return 2;
	snprintf(p[0], sizeof(p[0]), "%s/t", base);
	snprintf(p[1], sizeof(p[1]), "%s/t/a", base);
	snprintf(p[2], sizeof(p[2]), "%s/t/b", base);
	snprintf(p[3], sizeof(p[3]), "%s/t/a/d", base);
	for (i = 0; i < 4; i++)
		if (mkdir(p[i], 0755))
			return 2;
	if (inofd_new(&in, &o) < 0)
		return 2;
	wd = inofd_watch_tree_at(in, AT_FDCWD, p[0],
				 IN_CLOSE_WRITE | IN_MOVE | IN_CREATE,
				 &(struct inofd_tree_opts){
					.sz = sizeof(struct inofd_tree_opts) });
	if (wd < 0) {
		fprintf(stderr, "split_rename: watch: %s\n", inofd_strerror(wd));
		return 2;
	}
	dfd = open(p[3], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return 2;
	w = fork();
	if (!w) {
		char nm[32];

		for (i = 0; i < n; i++) {
			int fd;

			snprintf(nm, sizeof(nm), "f%ld", i);
			fd = openat(dfd, nm, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
			if (fd < 0 || write(fd, "x", 1) != 1)
				_exit(1);
			close(fd);
		}
		_exit(0);
	}
	m = fork();
	if (!m) {
		char a[600], b[600];
		long k;

		snprintf(a, sizeof(a), "%s/d", p[1]);
		snprintf(b, sizeof(b), "%s/d", p[2]);
		for (k = 0;; k++)
			if (rename(k & 1 ? b : a, k & 1 ? a : b))
				_exit(1);
	}
	pf.fd = inofd_fd(in);
	pf.events = POLLIN;
	for (;;) {
		int t = inofd_timeout(in), st;

		if (!wdone && waitpid(w, &st, WNOHANG) == w) {
			wdone = true;
			kill(m, SIGKILL);	/* the renamer this run started */
			waitpid(m, NULL, 0);
			quiet = now() + 1;
		}
		if (poll(&pf, 1, t < 0 || t > 100 ? 100 : t) < 0)
			return 2;
		if (inofd_read(in) < 0)
			return 2;
		while (inofd_next(in, &ev) > 0) {
			quiet = wdone ? now() + 1 : 0;
			switch (ev->type) {
			case INOFD_EV_RESCAN:
				rescans++;
				continue;
			case INOFD_EV_ERROR:
				errors++;
				continue;
			case INOFD_EV_MOVE_OUT:
				outs++;
				continue;
			case INOFD_EV_MOVE_IN:
				ins++;
				continue;
			case INOFD_EV_RENAME:
				renames++;
				continue;
			}
			if (!(ev->mask & IN_CLOSE_WRITE) || !ev->name ||
			    ev->name[0] != 'f')
				continue;
			i = atol(ev->name + 1);
			if (i < 0 || i >= n)
				continue;
			if (seen[i]++)
				dup++;
			else
				got++;
			if (!ev->path)
				nopath++;	/* unknown, said so */
			else if ((strncmp(ev->path, p[1], strlen(p[1])) &&
				  strncmp(ev->path, p[2], strlen(p[2]))) ||
				 strncmp(ev->path + strlen(p[1]), "/d/", 3))
				badpath++;
		}
		if (wdone && now() > quiet && inofd_timeout(in) < 0)
			break;
	}
	printf("split_rename (%s, pair timeout %u ms): %ld of %ld IN_CLOSE_WRITE reported (%ld twice), %ld with a wrong path, %ld with none; %ld RENAME, %ld MOVE_OUT, %ld MOVE_IN (d never left the tree), %ld RESCAN, %ld ERROR; %d watches (3 + 1)\n",
	       inofd_backend(in) == INOFD_BACKEND_FANOTIFY ? "fanotify" :
	       inofd_backend(in) == INOFD_BACKEND_PROCFD ? "procfd" : "kernel",
	       o.pair_timeout_ms ? o.pair_timeout_ms : 10, got, n, dup, badpath, nopath, renames, outs, ins, rescans, errors,
	       inofd_watch_count(in));
	/*
	 * No RESCAN either, but on fanotify: there a rename back within one
	 * read of the queue may hide a merged one, and is said to be a loss
	 * (fanotify.c, struct inofd__fan's win).
	 */
	c = got == n && !dup && !badpath && !nopath && !outs && !ins && !errors &&
	    (!rescans || inofd_backend(in) == INOFD_BACKEND_FANOTIFY) &&
	    inofd_watch_count(in) == 4 ? 0 : 1;
	inofd_free(in);
	snprintf(p[0], sizeof(p[0]), "rm -rf %s", base);
	if (system(p[0]))
		return 2;
	return c;
}
