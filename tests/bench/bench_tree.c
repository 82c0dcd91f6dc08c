// SPDX-License-Identifier: GPL-2.0
/*
 * bench_tree: a recursive watch of a large real tree, libinofd's
 * inofd_watch_tree() (kernel backend and /proc/self/fd backend) against
 * Debian's `inotifywait -r -m`, timed from fork until it prints
 * "Watches established." on stderr.  inotifywait's start-up cost (exec,
 * dynamic loading) is measured on an empty directory and also reported
 * subtracted.
 *
 *   bench_tree ROOT EMPTYDIR ROUNDS
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bench.h"
#include "inofd.h"

#define IW "/usr/bin/inotifywait"

static double lib_tree(const char *root, unsigned int flags, int *watches)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = flags };
	struct inofd *in;
	double t0, t1;
	int r;

	if (inofd_new(&in, &o) < 0)
		die("inofd_new");
	t0 = now_s();
	r = inofd_watch_tree(in, AT_FDCWD, root, IN_ALL_EVENTS, 0, NULL);
	t1 = now_s();
	if (r < 0) {
		fprintf(stderr, "bench_tree: inofd_watch_tree: %s\n",
			inofd_strerror(r));
		exit(1);
	}
	*watches = inofd_watch_count(in);
	inofd_free(in);
	return t1 - t0;
}

static double iw_tree(const char *root)
{
	char buf[4096], acc[8192] = "";
	size_t al = 0;
	double t0, t1 = 0;
	int p[2], st;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		die("pipe");
	t0 = now_s();
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(p[1], 2);
		dup2(null, 1);
		execl(IW, "inotifywait", "-r", "-m", root, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t k = read(p[0], buf, sizeof(buf) - 1);

		if (k <= 0)
			break;
		buf[k] = 0;
		if (al + k < sizeof(acc) - 1) {
			memcpy(acc + al, buf, k + 1);
			al += k;
		}
		if (strstr(acc, "Watches established.")) {
			t1 = now_s();
			break;
		}
	}
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	close(p[0]);
	if (!t1) {
		fprintf(stderr, "bench_tree: inotifywait said: %s\n", acc);
		exit(1);
	}
	return t1 - t0;
}

int main(int argc, char **argv)
{
	double lk[32], lp[32], iw[32], iw0[32], mlk, mlp, miw, miw0;
	int rounds, r, wk = 0, wp = 0;

	if (argc != 4) {
		fprintf(stderr, "usage: bench_tree ROOT EMPTYDIR ROUNDS\n");
		return 2;
	}
	rounds = atoi(argv[3]);
	if (rounds < 1 || rounds > 32)
		return 2;
	mkdir(argv[2], 0755);
	write_sysctl("max_user_watches", 1000000);
	if (access(IW, X_OK)) {
		fprintf(stderr, "bench_tree: %s missing\n", IW);
		return 1;
	}
	for (r = 0; r < rounds; r++) {
		lk[r] = lib_tree(argv[1], INOFD_FORCE_KERNEL, &wk);
		lp[r] = lib_tree(argv[1], INOFD_FORCE_PROCFD, &wp);
		iw[r] = iw_tree(argv[1]);
		iw0[r] = iw_tree(argv[2]);
		printf("#   round %d lib-kernel %.3f s (%d watches)  lib-procfd %.3f s"
		       " (%d)  inotifywait %.3f s  inotifywait-empty %.3f s\n",
		       r + 1, lk[r], wk, lp[r], wp, iw[r], iw0[r]);
		fflush(stdout);
	}
	mlk = median(lk, rounds);
	mlp = median(lp, rounds);
	miw = median(iw, rounds);
	miw0 = median(iw0, rounds);
	printf("tree dirs=%d lib-kernel median %.1f ms  lib-procfd %.1f ms  "
	       "inotifywait -r %.1f ms (start-up on an empty dir %.1f ms)\n",
	       wk, mlk * 1e3, mlp * 1e3, miw * 1e3, miw0 * 1e3);
	printf("tree ratio lib-kernel/inotifywait %.2f  lib-kernel/(inotifywait"
	       " minus start-up) %.2f  lib-procfd/lib-kernel %.2f\n",
	       mlk / miw, mlk / (miw - miw0), mlp / mlk);
	return 0;
}
