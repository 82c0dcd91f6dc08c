// SPDX-License-Identifier: GPL-2.0
/*
 * bench_tree: a recursive watch of a large real tree, libinofd's
 * inofd_watch_tree_at() (kernel backend and /proc/self/fd backend) against
 * a bare C walker (open each directory, INOTIFY_IOC_WATCH through that fd,
 * getdents64, close; no bookkeeping) and against Debian's `inotifywait -r
 * -m`, timed from fork until it prints "Watches established." on stderr.
 * inotifywait's start-up cost (exec, dynamic loading) is measured on an
 * empty directory and also reported subtracted.
 *
 *   bench_tree ROOT EMPTYDIR ROUNDS
 *
 * Scale rows: trees of N directories (ROOT/gGGGG/dDDD, 100 per group, made
 * and removed here), inofd_watch_tree_at() and the bare walker on each; time
 * per watch, and the library's own heap bytes per watch (mallinfo2()
 * delta across the call, the instance alive: chunk overhead included).
 * At the first size, the bare walker also runs with its descriptor in an
 * epoll set, as an event loop's would be: every event the walk queues
 * (its own opens, listings, closes) then runs epoll's callback.
 *
 *   bench_tree scale WORKDIR N[,N...] ROUNDS
 *
 * Walkers: the bare inotify walker against the same walker marking each
 * directory with fanotify_mark(g, FAN_MARK_ADD | FAN_MARK_ONLYDIR, m, fd,
 * NULL) in a FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME group (an unprivileged
 * user's inode marks by fd; m as bench.h's fan_mask(IN_ALL_EVENTS)).
 * BENCH_AS_USER=UID runs them as UID after root raised the limits.
 *
 *   bench_tree walkers ROOT ROUNDS
 *
 * The library and the bare walker take turns going first, each timed run
 * is followed by a 300 ms pause (the kernel frees a closed instance's
 * marks from a workqueue), and ratios are given of the medians and of the
 * minimums (the machine may be shared: the minimum is the run that was
 * disturbed least).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <malloc.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bench.h"
#include "inofd.h"

#define IW "/usr/bin/inotifywait"
#define BARE_MASK (IN_ALL_EVENTS | IN_ONLYDIR)
#define BARE_BUF 32768
#define BARE_DEPTH 256

static char *bare_buf[BARE_DEPTH];
/* BENCH_PROCFD=1 (a stock kernel, for profiling on the host): both sides
 * watch through /proc/self/fd/N instead of INOTIFY_IOC_WATCH */
static bool use_procfd;
/* the walkers rows: mark with fanotify instead of INOTIFY_IOC_WATCH */
static bool use_fan;

static int bare_watch(int ifd, int fd)
{
	char p[64];

	if (use_fan)
		return fanotify_mark(ifd, FAN_MARK_ADD | FAN_MARK_ONLYDIR,
				     fan_mask(IN_ALL_EVENTS), fd, NULL);
	if (!use_procfd)
		return watch_fd(ifd, fd, BARE_MASK);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	return sys_add(ifd, p, BARE_MASK);
}

/*
 * Closing an inotify instance frees its marks from a workqueue after an
 * SRCU grace period: let that finish before the next timed run, so that
 * no run pays for the one before it.
 */
static void settle(void)
{
	usleep(300000);
}

/*
 * The bare walker: what any recursive watcher has to do at least.  One fd
 * and one listing buffer per level, held while the level's subdirectories
 * are walked (this walker does not care about pinning mounts).
 */
static long bare_dir(int ifd, int dfd, const char *name, int depth)
{
	char *buf = bare_buf[depth];
	long n, off, count = 1;
	int fd;

	if (depth >= BARE_DEPTH)
		return 0;
	if (!buf && !(buf = bare_buf[depth] = malloc(BARE_BUF)))
		die("malloc");
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (bare_watch(ifd, fd) < 0)
		die(use_fan ? "fanotify_mark" : "INOTIFY_IOC_WATCH");
	while ((n = syscall(SYS_getdents64, fd, buf, BARE_BUF)) > 0) {
		for (off = 0; off < n;) {
			struct dirent64 *de = (void *)(buf + off);

			off += de->d_reclen;
			if (de->d_type != DT_DIR || (de->d_name[0] == '.' &&
			    (!de->d_name[1] || (de->d_name[1] == '.' &&
						!de->d_name[2]))))
				continue;
			count += bare_dir(ifd, fd, de->d_name, depth + 1);
		}
	}
	close(fd);
	return count;
}

/* with_epoll: the walker's descriptor in an epoll set during the walk,
 * as an event loop's would be (every event queued runs a callback) */
static double bare_tree_ep(const char *root, long *watches, bool with_epoll)
{
	struct epoll_event ee = { .events = EPOLLIN };
	double t0, t1;
	int ifd = use_fan ? fanotify_init(BENCH_FAN_INIT | FAN_CLOEXEC |
					  FAN_NONBLOCK, O_RDONLY) :
		sys_init1(IN_CLOEXEC | IN_NONBLOCK);
	int ep = -1;

	if (ifd < 0)
		die(use_fan ? "fanotify_init" : "inotify_init1");
	if (with_epoll && ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
			   epoll_ctl(ep, EPOLL_CTL_ADD, ifd, &ee) < 0))
		die("epoll");
	t0 = now_s();
	*watches = bare_dir(ifd, AT_FDCWD, root, 0);
	t1 = now_s();
	if (ep >= 0)
		close(ep);
	close(ifd);
	settle();
	return t1 - t0;
}

static double bare_tree(const char *root, long *watches)
{
	return bare_tree_ep(root, watches, false);
}

static size_t heap_used(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static double lib_tree(const char *root, unsigned int flags, int *watches,
		       size_t *heap)
{
	size_t h0;
	struct inofd_opts o = { .sz = sizeof(o), .flags = flags };
	struct inofd *in;
	double t0, t1;
	int r;

	if (inofd_new(&in, &o) < 0)
		die("inofd_new");
	h0 = heap_used();
	t0 = now_s();
	r = inofd_watch_tree_at(in, AT_FDCWD, root, IN_ALL_EVENTS, NULL);
	t1 = now_s();
	if (heap)
		*heap = heap_used() - h0;
	if (r < 0) {
		fprintf(stderr, "bench_tree: inofd_watch_tree: %s\n",
			inofd_strerror(r));
		exit(1);
	}
	*watches = inofd_watch_count(in);
	inofd_free(in);
	settle();
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

static double minimum(const double *v, int n)
{
	double m = v[0];
	int i;

	for (i = 1; i < n; i++)
		if (v[i] < m)
			m = v[i];
	return m;
}

/* ROOT/gGGGGG/dDDD: n directories below 100 per group (plus the groups) */
static void make_tree(const char *root, long n)
{
	char p[1100];
	long i;

	if (mkdir(root, 0755) && errno != EEXIST)
		die("mkdir root");
	for (i = 0; i < n; i++) {
		if (i % 100 == 0) {
			snprintf(p, sizeof(p), "%s/g%05ld", root, i / 100);
			if (mkdir(p, 0755))
				die("mkdir group");
		}
		snprintf(p, sizeof(p), "%s/g%05ld/d%03ld", root, i / 100, i % 100);
		if (mkdir(p, 0755))
			die("mkdir");
	}
}

static void rm_tree(const char *root, long n)
{
	char p[1100];
	long i;

	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "%s/g%05ld/d%03ld", root, i / 100, i % 100);
		rmdir(p);
		if (i % 100 == 99 || i == n - 1) {
			snprintf(p, sizeof(p), "%s/g%05ld", root, i / 100);
			rmdir(p);
		}
	}
	rmdir(root);
}

static int scale(const char *work, char *sizes, int rounds)
{
	double first_us = 0, first_min = 0;
	char *tok, *save = NULL;
	bool first_epoll = false;

	write_sysctl("max_user_watches", 1000000);
	mkdir(work, 0755);
	for (tok = strtok_r(sizes, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		long n = atol(tok), wb = 0;
		double tl[32], tb[32], t0, mk, ml, mb, minl, minb;
		size_t heap[32];
		char root[1024];
		int r, wl = 0;

		if (n < 1)
			return 2;
		snprintf(root, sizeof(root), "%s/s%ld", work, n);
		t0 = now_s();
		make_tree(root, n);
		mk = now_s() - t0;
		for (r = 0; r < rounds; r++) {
			/* alternate which goes first */
			if (r % 2)
				tb[r] = bare_tree(root, &wb);
			tl[r] = lib_tree(root, use_procfd ? INOFD_FORCE_PROCFD :
					 INOFD_FORCE_KERNEL, &wl, &heap[r]);
			if (!(r % 2))
				tb[r] = bare_tree(root, &wb);
			printf("#   scale n=%ld round %d bare %.3f s (%ld watches)"
			       "  lib %.3f s (%d watches, heap %zu B)\n",
			       n, r + 1, tb[r], wb, tl[r], wl, heap[r]);
			fflush(stdout);
		}
		if (wl != wb) {
			fprintf(stderr, "bench_tree: lib %d watches, bare %ld\n",
				wl, wb);
			return 1;
		}
		minl = minimum(tl, rounds);
		minb = minimum(tb, rounds);
		ml = median(tl, rounds);
		mb = median(tb, rounds);
		if (!first_us)
			first_us = ml * 1e6 / wl;
		printf("scale method=libinofd-tree n=%d median %.1f ms %.2f us/watch"
		       " heap %.0f B/watch\n",
		       wl, ml * 1e3, ml * 1e6 / wl, (double)heap[0] / wl);
		printf("scale method=bare-walker n=%ld median %.1f ms %.2f us/watch\n",
		       wb, mb * 1e3, mb * 1e6 / wb);
		if (!first_min)
			first_min = minl * 1e6 / wl;
		printf("scale-ratio watches=%d lib/bare %.2f (of minimums %.2f)"
		       " per-watch-vs-first %.2f (of minimums %.2f)"
		       " (tree made in %.1f s)\n",
		       wl, ml / mb, minl / minb, ml * 1e6 / wl / first_us,
		       minl * 1e6 / wl / first_min, mk);
		if (!first_epoll && !use_fan) {
			double te[32], me;
			long we = 0;

			/* once: what an event loop's walker pays (epoll) */
			first_epoll = true;
			for (r = 0; r < rounds; r++)
				te[r] = bare_tree_ep(root, &we, true);
			me = median(te, rounds);
			printf("scale method=bare-walker+epoll n=%ld median %.1f ms"
			       " %.2f us/watch\n", we, me * 1e3, me * 1e6 / we);
			printf("scale-epoll watches=%ld bare+epoll/bare %.2f"
			       " lib/(bare+epoll) %.2f\n", we, me / mb, ml / me);
		}
		fflush(stdout);
		t0 = now_s();
		rm_tree(root, n);
	}
	return 0;
}

/* the bare inotify walker against the bare fanotify walker */
static int walkers(const char *root, int rounds)
{
	double ti[32], tf[32], mi, mf;
	long wi = 0, wf = 0;
	uid_t uid;
	int r;

	write_sysctl("max_user_watches", 1000000);
	write_fs_sysctl("fanotify/max_user_marks", 1000000);
	uid = bench_drop_privileges();
	for (r = 0; r < rounds; r++) {
		/* alternate which goes first */
		if (r % 2) {
			use_fan = true;
			tf[r] = bare_tree(root, &wf);
		}
		use_fan = false;
		ti[r] = bare_tree(root, &wi);
		if (!(r % 2)) {
			use_fan = true;
			tf[r] = bare_tree(root, &wf);
		}
		printf("#   walkers round %d inotify %.3f s (%ld watches)  "
		       "fanotify %.3f s (%ld marks)\n", r + 1, ti[r], wi, tf[r],
		       wf);
		fflush(stdout);
	}
	if (wi != wf) {
		fprintf(stderr, "bench_tree: %ld watches, %ld marks\n", wi, wf);
		return 1;
	}
	mi = minimum(ti, rounds);
	mf = minimum(tf, rounds);
	printf("walkers dirs=%ld uid=%u bare-inotify-walker median %.1f ms  "
	       "bare-fanotify-walker median %.1f ms  fanotify/inotify %.2f "
	       "(of minimums %.2f)\n", wi, (unsigned int)uid,
	       median(ti, rounds) * 1e3, median(tf, rounds) * 1e3,
	       median(tf, rounds) / median(ti, rounds), mf / mi);
	return 0;
}

int main(int argc, char **argv)
{
	double lk[32], lp[32], iw[32], iw0[32], bw[32], mlk, mlp, miw, miw0, mbw;
	double nbw, nlk, niw;
	int rounds, r, wk = 0, wp = 0;
	long wb = 0;

	use_procfd = getenv("BENCH_PROCFD") && !strcmp(getenv("BENCH_PROCFD"), "1");
	if (argc == 5 && !strcmp(argv[1], "scale")) {
		rounds = atoi(argv[4]);
		if (rounds < 1 || rounds > 32)
			return 2;
		return scale(argv[2], argv[3], rounds);
	}
	if (argc == 4 && !strcmp(argv[1], "walkers")) {
		rounds = atoi(argv[3]);
		if (rounds < 1 || rounds > 32)
			return 2;
		return walkers(argv[2], rounds);
	}
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
		/* alternate which goes first */
		if (r % 2)
			bw[r] = bare_tree(argv[1], &wb);
		lk[r] = lib_tree(argv[1], INOFD_FORCE_KERNEL, &wk, NULL);
		if (!(r % 2))
			bw[r] = bare_tree(argv[1], &wb);
		lp[r] = lib_tree(argv[1], INOFD_FORCE_PROCFD, &wp, NULL);
		iw[r] = iw_tree(argv[1]);
		iw0[r] = iw_tree(argv[2]);
		printf("#   round %d bare-walker %.3f s (%ld watches)  lib-kernel"
		       " %.3f s (%d)  lib-procfd %.3f s (%d)  inotifywait %.3f s"
		       "  inotifywait-empty %.3f s\n", r + 1, bw[r], wb, lk[r],
		       wk, lp[r], wp, iw[r], iw0[r]);
		fflush(stdout);
	}
	nbw = minimum(bw, rounds);
	nlk = minimum(lk, rounds);
	niw = minimum(iw, rounds);
	mbw = median(bw, rounds);
	mlk = median(lk, rounds);
	mlp = median(lp, rounds);
	miw = median(iw, rounds);
	miw0 = median(iw0, rounds);
	printf("tree dirs=%d lib-kernel median %.1f ms  lib-procfd %.1f ms  "
	       "bare-walker %.1f ms  inotifywait -r %.1f ms (start-up on an "
	       "empty dir %.1f ms)\n",
	       wk, mlk * 1e3, mlp * 1e3, mbw * 1e3, miw * 1e3, miw0 * 1e3);
	printf("tree ratio lib-kernel/inotifywait %.2f  lib-kernel/(inotifywait"
	       " minus start-up) %.2f  lib-procfd/lib-kernel %.2f  "
	       "lib-kernel/bare-walker %.2f\n",
	       mlk / miw, mlk / (miw - miw0), mlp / mlk, mlk / mbw);
	printf("tree ratio of minimums lib-kernel/inotifywait %.2f  "
	       "lib-kernel/bare-walker %.2f\n", nlk / niw, nlk / nbw);
	return 0;
}
