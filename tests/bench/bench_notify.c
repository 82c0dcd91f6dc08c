// SPDX-License-Identifier: GPL-2.0
/*
 * bench_notify: the 2004 "nonotify" test.  A writer appends LINES lines to
 * a file in DIR, one write per line, while this process drains the inotify
 * instance on every wakeup (poll, read everything, poll again).  Modes:
 *
 *   none   the instance watches nothing
 *   path   inotify_add_watch(DIR)
 *   fd     open(DIR), INOTIFY_IOC_WATCH, close: the watch outlives the fd
 *   fanotify  fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME), then
 *          open(DIR), fanotify_mark(FAN_MARK_ADD, MASK | FAN_EVENT_ON_CHILD
 *          | FAN_ONDIR, fd, NULL), close: an inode mark by fd, what an
 *          unprivileged user may do since 5.13 (MASK maps bit for bit)
 *
 * Writers: "sh" runs busybox sh, `echo line >> f` in a loop (the builtin
 * echo: one open, write and close per line, no fork); "c" is a child doing
 * LINES write(2) calls on one O_APPEND fd; "files" is a child making LINES
 * new files x0, x1, ... (create, one write, close), as tar x or a git
 * checkout does: no event of one file merges with the queue's tail (the
 * previous file's, or another kind of this one's), the case the
 * event-path series makes dearer (its merge test takes the queue's lock
 * once more when the queue is not empty); "renames" is a child renaming
 * one file back and forth between two names, LINES rename(2) calls: an
 * IN_MOVED_FROM and an IN_MOVED_TO each, of alternating names, none of
 * which merges on any base.
 *
 *   bench_notify DIR LINES ROUNDS WRITER MASK [CONSUMER]
 *
 * CONSUMER "drain" (default) reads on every wakeup; "batch:MS" sleeps MS
 * milliseconds after each drain, so events pile up and one wakeup reads
 * many (what a consumer that does not need sub-10 ms latency can do).
 *
 * Runs ROUNDS rounds of none, path, fd (interleaved, so drift hits every
 * mode alike) and prints, for each mode, the median and the minimum time
 * and their ratios to none.  Under TCG a run is sometimes slowed by the
 * host (single runs of the same case spread by up to 25%); the minimum
 * is the run least disturbed.  MASK is a hex inotify mask (e.g. 0xfff =
 * IN_ALL_EVENTS).
 *
 * With two or more CPUs the writer is pinned to CPU 0 and the consumer to
 * CPU 1 in every mode, so the scheduler's placement does not vary between
 * runs (a 2004 FAM daemon was a separate process too).
 *
 * Each mode's line also gives the bytes read per event and the events per
 * read(2) call that returned data (a fanotify DFID_NAME record carries a
 * file handle and the name; an inotify one the name padded).
 * BENCH_AS_USER=65534 runs everything as that user (the directory is
 * chowned to it first).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bench.h"

enum { M_NONE, M_PATH, M_FD, M_FAN, NMODES };
static const char *mname[NMODES] = { "none", "path", "fd(closed)", "fanotify" };

/* per run: bytes and read(2) calls that returned data */
static long run_bytes, run_reads;

static char buf[256 * 1024];
static unsigned int batch_ms;
static int pinned;

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

/* One run: returns the writer's time; *nev counts the events drained. */
static double run(const char *dir, long lines, const char *writer, int mode,
		  uint32_t mask, long *nev)
{
	char file[512], script[1024];
	int ifd, p[2], wd = 0;
	double t0, t1;
	pid_t pid;
	int st;

	snprintf(file, sizeof(file), "%s/f", dir);
	unlink(file);
	if (!strcmp(writer, "files")) {
		long i;

		/* the last run's files, before anything watches */
		for (i = 0; i < lines; i++) {
			snprintf(file, sizeof(file), "%s/x%ld", dir, i);
			unlink(file);
		}
		snprintf(file, sizeof(file), "%s/f", dir);
	} else if (!strcmp(writer, "renames")) {
		int fd;

		snprintf(file, sizeof(file), "%s/rb", dir);
		unlink(file);
		snprintf(file, sizeof(file), "%s/ra", dir);
		fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0)
			die("open ra");
		close(fd);
	}
	if (mode == M_FAN) {
		int dfd;

		ifd = fanotify_init(BENCH_FAN_INIT | FAN_NONBLOCK | FAN_CLOEXEC,
				    O_RDONLY);
		if (ifd < 0 && (errno == ENOSYS || errno == EINVAL ||
				errno == EPERM))
			return -1;	/* no unprivileged fanotify here */
		if (ifd < 0)
			die("fanotify_init");
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			die("open dir");
		wd = fanotify_mark(ifd, FAN_MARK_ADD, fan_mask(mask), dfd, NULL);
		close(dfd);
	} else {
		ifd = sys_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (ifd < 0)
			die("inotify_init1");
	}
	if (mode == M_PATH) {
		wd = sys_add(ifd, dir, mask);
	} else if (mode == M_FD) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0)
			die("open dir");
		wd = watch_fd(ifd, dfd, mask);
		close(dfd);
		if (wd < 0 && errno == ENOTTY) {
			/* a kernel without the series (run on the host) */
			close(ifd);
			return -1;
		}
	}
	if (wd < 0)
		die("watch");
	if (pipe2(p, O_CLOEXEC))
		die("pipe");

	t0 = now_s();
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		/* the write end stays open in the writer: POLLHUP at its exit */
		fcntl(p[1], F_SETFD, 0);
		close(p[0]);
		if (pinned)
			pin(0);
		if (!strcmp(writer, "sh")) {
			snprintf(script, sizeof(script),
				 "i=0; while [ $i -lt %ld ]; do "
				 "echo \"line $i\" >> %s; i=$((i + 1)); done",
				 lines, file);
			/* busybox ash wherever it is (the host's sh is dash) */
			if (!access("/bin/busybox", X_OK))
				execl("/bin/busybox", "sh", "-c", script,
				      (char *)NULL);
			execl("/bin/sh", "sh", "-c", script, (char *)NULL);
			_exit(127);
		} else if (!strcmp(writer, "files")) {
			static const char line[] = "a line of text\n";
			long i;

			for (i = 0; i < lines; i++) {
				int fd;

				snprintf(file, sizeof(file), "%s/x%ld", dir, i);
				fd = open(file, O_WRONLY | O_CREAT | O_TRUNC,
					  0644);
				if (fd < 0)
					_exit(126);
				if (write(fd, line, sizeof(line) - 1) < 0)
					_exit(125);
				close(fd);
			}
			_exit(0);
		} else if (!strcmp(writer, "renames")) {
			char a[512], b[512];
			long i;

			snprintf(a, sizeof(a), "%s/ra", dir);
			snprintf(b, sizeof(b), "%s/rb", dir);
			for (i = 0; i < lines; i++)
				if (rename(i & 1 ? b : a, i & 1 ? a : b))
					_exit(125);
			_exit(0);
		} else {
			static const char line[] = "a line of text\n";
			int fd = open(file, O_WRONLY | O_CREAT | O_APPEND, 0644);
			long i;

			if (fd < 0)
				_exit(126);
			for (i = 0; i < lines; i++)
				if (write(fd, line, sizeof(line) - 1) < 0)
					_exit(125);
			close(fd);
			_exit(0);
		}
	}
	close(p[1]);
	*nev = 0;
	run_bytes = run_reads = 0;
	for (;;) {
		struct pollfd pf[2] = { { ifd, POLLIN, 0 }, { p[0], POLLIN, 0 } };
		ssize_t n;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (pf[0].revents & POLLIN) {
			while ((n = read(ifd, buf, sizeof(buf))) > 0) {
				char *q;

				run_bytes += n;
				run_reads++;
				for (q = buf; q < buf + n;) {
					(*nev)++;
					if (mode == M_FAN) {
						struct fanotify_event_metadata *e = (void *)q;

						q += e->event_len;
					} else {
						struct inotify_event *e = (void *)q;

						q += sizeof(*e) + e->len;
					}
				}
			}
		}
		if (pf[1].revents & (POLLHUP | POLLIN))
			break;
		if (batch_ms)
			usleep(batch_ms * 1000);
	}
	if (waitpid(pid, &st, 0) < 0)
		die("waitpid");
	t1 = now_s();
	if (!WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "bench_notify: writer failed (status %#x)\n", st);
		exit(1);
	}
	close(p[0]);
	close(ifd);
	return t1 - t0;
}

int main(int argc, char **argv)
{
	double t[NMODES][64], med[NMODES], min[NMODES];
	long ev[NMODES] = { 0 }, bytes[NMODES] = { 0 }, reads[NMODES] = { 0 };
	int rounds, r, m, avail[NMODES];
	uint32_t mask;
	long lines;
	uid_t uid;

	if (argc != 6 && argc != 7) {
		fprintf(stderr, "usage: bench_notify DIR LINES ROUNDS sh|c|files|renames "
			"MASK [drain|batch:MS]\n");
		return 2;
	}
	if (argc == 7 && !strncmp(argv[6], "batch:", 6))
		batch_ms = atoi(argv[6] + 6);
	lines = atol(argv[2]);
	rounds = atoi(argv[3]);
	mask = strtoul(argv[5], NULL, 16);
	if (rounds < 1 || rounds > 64)
		return 2;
	mkdir(argv[1], 0755);
	if (getenv("BENCH_AS_USER") && *getenv("BENCH_AS_USER")) {
		uid_t u = (uid_t)strtoul(getenv("BENCH_AS_USER"), NULL, 10);

		if (chown(argv[1], u, u))
			die("chown DIR");
	}
	uid = bench_drop_privileges();
	pinned = sysconf(_SC_NPROCESSORS_ONLN) >= 2;
	if (pinned)
		pin(1);
	printf("# writer on CPU 0, consumer on CPU 1: %s; uid %u\n",
	       pinned ? "yes" : "no (one CPU)", (unsigned int)uid);
	for (m = 0; m < NMODES; m++)
		avail[m] = 1;
	for (r = 0; r < rounds; r++) {
		for (m = 0; m < NMODES; m++) {
			long n;

			if (!avail[m])
				continue;
			t[m][r] = run(argv[1], lines, argv[4], m, mask, &n);
			if (t[m][r] < 0) {
				printf("# %s: %s\n", mname[m], m == M_FAN ?
				       "no unprivileged fanotify in this kernel" :
				       "no INOTIFY_IOC_WATCH in this kernel");
				avail[m] = 0;
				continue;
			}
			ev[m] += n;
			bytes[m] += run_bytes;
			reads[m] += run_reads;
			printf("#   round %d %-10s %8.3f s  %ld events\n",
			       r + 1, mname[m], t[m][r], n);
			fflush(stdout);
		}
	}
	for (m = 0; m < NMODES; m++) {
		if (!avail[m])
			continue;
		med[m] = median(t[m], rounds);	/* sorts: t[m][0] is the min */
		min[m] = t[m][0];
	}
	for (m = 0; m < NMODES; m++) {
		if (!avail[m])
			continue;
		printf("notify writer=%s lines=%ld mask=%#x consumer=%s uid=%u "
		       "mode=%-10s median %.3f s  ratio %.2f  min %.3f s  "
		       "ratio %.2f  (%.1f us/line, events/run %ld)", argv[4],
		       lines, mask, argc == 7 ? argv[6] : "drain",
		       (unsigned int)uid, mname[m], med[m],
		       med[m] / med[M_NONE], min[m], min[m] / min[M_NONE],
		       1e6 * min[m] / lines, ev[m] / rounds);
		if (ev[m])
			printf("  bytes/event %.1f  events/read %.1f",
			       (double)bytes[m] / ev[m],
			       reads[m] ? (double)ev[m] / reads[m] : 0.0);
		printf("\n");
	}
	return 0;
}
