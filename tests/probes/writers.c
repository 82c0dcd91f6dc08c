// SPDX-License-Identifier: GPL-2.0
/*
 * writers: issue 38's class 6, measured.  Writer processes against
 * renames and exchanges; the path of every write is known exactly.
 *
 * A tree BASE/T/R is watched recursively.  W writer processes (default 6)
 * each create files w<I>-<K> (open O_CREAT, write, close, unlink) in a
 * directory of their own, by a descriptor, while a renamer process moves
 * those directories and their parents: renames in place (a name and back),
 * across parents, into and out of the root's parent BASE/T (out of the
 * tree), and exchanges (RENAME_EXCHANGE) of two writers' directories and
 * of the two parents.  The renamer holds a seqlock (shared memory) around
 * each rename and publishes every writer directory's path; a writer reads
 * the path, creates its file and reads the sequence again: unchanged, the
 * path it read was the directory's when the file was created (a record
 * per write, in a ring per writer).  Changed, the write is not judged.
 *
 * The library reads with the backend given (-B).  Every IN_CREATE of a
 * w<I>-<K> whose write was judged is compared with the truth: the path
 * the event carries must be the write's, or NULL (not known), or carry
 * INOFD_EVF_STALE_PATH; a create in a directory that was outside the tree
 * must not be reported with a path.  A synthetic IN_CREATE (a walk listed
 * the file) is right, too, at a path its directory had at some time from
 * the write to the unlink: the walk reports the file where it found it,
 * after a rename of its directory already read (or its move into the
 * tree), and cannot know when it was made (counted apart: "synthetic at a
 * later path").  Anything else is an unflagged wrong path.
 *
 *   writers [-B procfd|fanotify] [-n RUNS] [-s SECONDS] [-w WRITERS]
 *           [-p WRITE_PAUSE_US] [-r RENAME_PAUSE_US] [-S] [-v]
 *
 * One line per run; exit 1 if any run had an unflagged wrong path, 2 on
 * a setup error.  -S (walks keep up): exit 3 if a run's second half (by
 * the renames' sequence) made 1,000 or more writes in the tree and not
 * one of them was reported: the walks of the directories that came in
 * never ran while the renames went on.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "inofd.h"

#define MAXW	16
#define PLEN	200
#define RING	(1u << 15)
#define HRING	(1u << 13)

struct wrec {
	_Atomic long	k;		/* the write's number + 1, stored last */
	_Atomic long	kend;		/* and after its unlink */
	bool		ambiguous;	/* a rename ran during it */
	bool		reported;	/* the reader saw its IN_CREATE */
	unsigned int	seq;		/* the renames' sequence then */
	unsigned int	seq_end;	/* and after its unlink */
	char		path[PLEN];	/* its directory's path then */
};

/* A writer directory's path from sequence from on (the renamer's) */
struct hrec {
	unsigned int	from;
	char		path[PLEN];
};

struct shm {
	_Atomic unsigned int	seq;	/* odd: a rename is running */
	_Atomic int		stop;
	char			path[MAXW][PLEN];
	struct wrec		ring[MAXW][RING];
	_Atomic unsigned int	nhist[MAXW];
	struct hrec		hist[MAXW][HRING];
};

static struct shm *S;
static FILE *rlog;		/* -L: every rename, by sequence */
static int nw = 6;
static char base[64], tpath[128], rpath[160];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- the renamer ----------------------------------------------------- */

/*
 * Places: parent 0 is R, 1 and 2 the directories P0 and P1 (in R or in T,
 * named p<J> or q<J>), 3 is T (outside the tree).  Writer I's directory
 * has a parent and a name slot (d<S> or e<S>: each slot is one
 * directory's at a time, so no rename ever meets an existing name).
 */
struct world {
	int	pin[2];		/* P<J>: 0 in R, 1 in T */
	int	pname[2];	/* P<J>'s name slot and letter */
	bool	palt[2];
	int	wpar[MAXW];	/* 0..3 */
	int	wslot[MAXW];
	bool	walt[MAXW];
};

static void ppath(const struct world *w, int j, char *out, size_t n)
{
	if (snprintf(out, n, "%s/%c%d", w->pin[j] ? tpath : rpath,
		     w->palt[j] ? 'q' : 'p', w->pname[j]) >= (int)n)
		abort();
}

static void wpath(const struct world *w, int i, char *out, size_t n)
{
	char par[PLEN];

	if (w->wpar[i] == 0)
		snprintf(par, sizeof(par), "%s", rpath);
	else if (w->wpar[i] == 3)
		snprintf(par, sizeof(par), "%s", tpath);
	else
		ppath(w, w->wpar[i] - 1, par, sizeof(par));
	if (snprintf(out, n, "%s/%c%d", par, w->walt[i] ? 'e' : 'd',
		     w->wslot[i]) >= (int)n)
		abort();	/* base is short: cannot be */
}

static void publish(const struct world *w)
{
	int i;

	for (i = 0; i < nw; i++)
		wpath(w, i, S->path[i], PLEN);
}

/* Each writer directory whose path the last step changed: from now on */
static void history(void)
{
	unsigned int seq = atomic_load(&S->seq);
	int i;

	for (i = 0; i < nw; i++) {
		unsigned int n = atomic_load_explicit(&S->nhist[i],
						      memory_order_relaxed);
		struct hrec *h = &S->hist[i][n & (HRING - 1)];

		if (n && !strcmp(S->hist[i][(n - 1) & (HRING - 1)].path,
				 S->path[i]))
			continue;
		h->from = seq;
		memcpy(h->path, S->path[i], PLEN);
		atomic_store_explicit(&S->nhist[i], n + 1,
				      memory_order_release);
	}
}

static int xrename(const char *a, const char *b, unsigned int flags)
{
	return (int)syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, flags);
}

/* One random step: 0, or -1 if a rename failed (a bug of this program) */
static int step(struct world *w, unsigned int *rs)
{
	char a[PLEN], b[PLEN];
	struct world n = *w;
	unsigned int op = rand_r(rs) % 16, flags = 0;
	int i = rand_r(rs) % nw, j = rand_r(rs) % nw, p = rand_r(rs) % 2;

	if (op < 6) {		/* a writer's directory, in place */
		n.walt[i] = !n.walt[i];
		wpath(w, i, a, sizeof(a));
		wpath(&n, i, b, sizeof(b));
	} else if (op < 8) {	/* a parent, in place */
		n.palt[p] = !n.palt[p];
		ppath(w, p, a, sizeof(a));
		ppath(&n, p, b, sizeof(b));
	} else if (op < 11) {	/* a writer's directory, across parents */
		n.wpar[i] = (n.wpar[i] + 1 + rand_r(rs) % 3) % 4;
		wpath(w, i, a, sizeof(a));
		wpath(&n, i, b, sizeof(b));
	} else if (op < 12) {	/* a parent into or out of T */
		n.pin[p] = !n.pin[p];
		ppath(w, p, a, sizeof(a));
		ppath(&n, p, b, sizeof(b));
	} else if (op < 15 && i != j) {	/* two writers' directories */
		n.wpar[i] = w->wpar[j];
		n.wslot[i] = w->wslot[j];
		n.walt[i] = w->walt[j];
		n.wpar[j] = w->wpar[i];
		n.wslot[j] = w->wslot[i];
		n.walt[j] = w->walt[i];
		wpath(w, i, a, sizeof(a));
		wpath(w, j, b, sizeof(b));
		flags = RENAME_EXCHANGE;
	} else if (op == 15) {	/* the two parents */
		n.pin[0] = w->pin[1];
		n.pname[0] = w->pname[1];
		n.palt[0] = w->palt[1];
		n.pin[1] = w->pin[0];
		n.pname[1] = w->pname[0];
		n.palt[1] = w->palt[0];
		ppath(w, 0, a, sizeof(a));
		ppath(w, 1, b, sizeof(b));
		flags = RENAME_EXCHANGE;
	} else {
		return 0;
	}
	atomic_fetch_add_explicit(&S->seq, 1, memory_order_acq_rel);
	if (xrename(a, b, flags)) {
		fprintf(stderr, "writers: rename %s %s: %m\n", a, b);
		return -1;
	}
	if (rlog)
		fprintf(rlog, "%u %s %s%s\n", atomic_load(&S->seq), a, b,
			flags ? " EXCHANGE" : "");
	*w = n;
	publish(w);
	atomic_fetch_add_explicit(&S->seq, 1, memory_order_acq_rel);
	history();
	return 0;
}

static void renamer(struct world *w, unsigned int seed, int pause_us)
{
	unsigned int rs = seed;

	if (rlog)
		fprintf(rlog, "# seed %u\n", seed);
	while (!atomic_load(&S->stop)) {
		if (step(w, &rs))
			_exit(1);
		if (pause_us)
			usleep((useconds_t)pause_us);
	}
	if (rlog)
		fflush(rlog);
	_exit(0);
}

/* ---- a writer -------------------------------------------------------- */

static void writer(int i, int pause_us)
{
	char p[PLEN], nm[48];
	int dfd = open(S->path[i], O_PATH | O_DIRECTORY | O_CLOEXEC);
	long k;

	if (dfd < 0)
		_exit(1);
	for (k = 0; !atomic_load(&S->stop); k++) {
		struct wrec *r = &S->ring[i][k & (RING - 1)];
		unsigned int s1, s2;
		int fd;

		do {
			s1 = atomic_load_explicit(&S->seq,
						  memory_order_acquire);
		} while ((s1 & 1) && (sched_yield(), 1));
		memcpy(p, S->path[i], PLEN);
		snprintf(nm, sizeof(nm), "w%d-%ld", i, k);
		fd = openat(dfd, nm, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, "x", 1) != 1)
			_exit(1);
		close(fd);
		atomic_thread_fence(memory_order_acquire);
		s2 = atomic_load_explicit(&S->seq, memory_order_acquire);
		r->ambiguous = s1 != s2;
		r->reported = false;
		r->seq = s1;
		memcpy(r->path, p, PLEN);
		atomic_store_explicit(&r->k, k + 1, memory_order_release);
		unlinkat(dfd, nm, 0);
		r->seq_end = atomic_load_explicit(&S->seq,
						  memory_order_acquire);
		atomic_store_explicit(&r->kend, k + 1, memory_order_release);
		if (pause_us)
			usleep((useconds_t)pause_us);
	}
	_exit(0);
}

/* ---- the reader ------------------------------------------------------ */

struct count {
	uint64_t last_rescan, last_flagged;
	long events, creates, checked, ambiguous, unchecked, ok, nopath,
	     wrong, flagged_wrong, flagged, rescans, listed, intree, missed,
	     late, late_missed;
};

/*
 * A synthetic IN_CREATE is a walk's: the file was in its directory when
 * the walk listed it, at the path the directory had then, which may be
 * one it got after the file was made (the directory renamed, or moved
 * into the tree, before the walk listed it: no record waited, the path is
 * true, only later).  Right if the directory had that path at some time
 * from the write to the unlink (the renamer's history of its paths).
 */
static bool listed_later(int i, long k, struct wrec *r,
			 const struct inofd_event *ev)
{
	char p[PLEN + 48];
	unsigned int n, j;
	double until = now() + 1;

	while (atomic_load_explicit(&r->kend, memory_order_acquire) <= k &&
	       now() < until)
		sched_yield();
	if (atomic_load_explicit(&r->kend, memory_order_acquire) != k + 1)
		return false;
	n = atomic_load_explicit(&S->nhist[i], memory_order_acquire);
	for (j = n; j-- > 0 && j + HRING > n;) {
		const struct hrec *h = &S->hist[i][j & (HRING - 1)];

		if ((int)(h->from - r->seq) <= 0)
			break;		/* the write's own path: judged */
		if ((int)(h->from - r->seq_end) > 0)
			continue;	/* after the unlink */
		snprintf(p, sizeof(p), "%s/%s", h->path, ev->name);
		if (!strcmp(p, ev->path))
			return true;
	}
	return false;
}

/* -v: when the directory of writer i had the event's path (sequence of
 * the rename that gave it, newest first), for a wrong event */
static void path_when(int i, const struct wrec *r,
		      const struct inofd_event *ev)
{
	char p[PLEN + 48];
	unsigned int n, j;
	double until = now() + 1;

	while (atomic_load_explicit(&r->kend, memory_order_acquire) <
	       atomic_load_explicit(&r->k, memory_order_acquire) &&
	       now() < until)
		sched_yield();
	n = atomic_load_explicit(&S->nhist[i], memory_order_acquire);
	fprintf(stderr, "    write at sequence %u, unlink by %u; path the directory's from:",
		r->seq, r->seq_end);
	for (j = n; j-- > 0 && j + HRING > n;) {
		const struct hrec *h = &S->hist[i][j & (HRING - 1)];

		snprintf(p, sizeof(p), "%s/%s", h->path, ev->name);
		if (!strcmp(p, ev->path))
			fprintf(stderr, " %u", h->from);
	}
	fprintf(stderr, "\n");
}

static void judge(const struct inofd_event *ev, struct count *c, int verbose)
{
	char truth[PLEN + 48];
	struct wrec *r;
	long k, got;
	int i;
	double until;

	if (!(ev->mask & IN_CREATE) || !ev->name ||
	    sscanf(ev->name, "w%d-%ld", &i, &k) != 2 || i < 0 || i >= nw)
		return;
	c->creates++;
	if (ev->flags & INOFD_EVF_STALE_PATH) {
		c->flagged++;
		c->last_flagged = ev->seq;
	}
	r = &S->ring[i][k & (RING - 1)];
	/* the writer stores its record just after the create: wait for it */
	until = now() + 1;
	while ((got = atomic_load_explicit(&r->k, memory_order_acquire)) <= k &&
	       now() < until)
		sched_yield();
	if (got != k + 1) {
		c->unchecked++;
		return;
	}
	r->reported = true;
	if (r->ambiguous) {
		c->ambiguous++;
		return;
	}
	c->checked++;
	snprintf(truth, sizeof(truth), "%s/%s", r->path, ev->name);
	/* a create outside the tree has no true path in it */
	if (strncmp(truth, rpath, strlen(rpath)) ||
	    truth[strlen(rpath)] != '/')
		truth[0] = '\0';
	if (!ev->path) {
		c->nopath++;
	} else if (!strcmp(ev->path, truth)) {
		c->ok++;
	} else if (ev->flags & INOFD_EVF_STALE_PATH) {
		c->flagged_wrong++;
	} else if ((ev->flags & INOFD_EVF_SYNTHETIC) &&
		   listed_later(i, k, r, ev)) {
		c->listed++;
	} else {
		c->wrong++;
		if (verbose)
			fprintf(stderr, "  seq %llu flags %#x (last RESCAN %llu, flagged %llu; renames %u): %s, true: %s\n",
				(unsigned long long)ev->seq, ev->flags,
				(unsigned long long)c->last_rescan,
				(unsigned long long)c->last_flagged, r->seq,
				ev->path,
				truth[0] ? truth : "(outside the tree)");
		if (verbose)
			path_when(i, r, ev);
	}
}

static int setup(struct world *w)
{
	char p[PLEN];
	int i, j;

	snprintf(base, sizeof(base), "/tmp/wr-stress.XXXXXX");
	if (!mkdtemp(base))
		return -1;
	snprintf(tpath, sizeof(tpath), "%s/T", base);
	snprintf(rpath, sizeof(rpath), "%s/R", tpath);
	if (mkdir(tpath, 0755) || mkdir(rpath, 0755))
		return -1;
	memset(w, 0, sizeof(*w));
	for (j = 0; j < 2; j++) {
		w->pname[j] = j;
		ppath(w, j, p, sizeof(p));
		if (mkdir(p, 0755))
			return -1;
	}
	for (i = 0; i < nw; i++) {
		w->wpar[i] = i % 3;	/* R, P0, P1 */
		w->wslot[i] = i;
		wpath(w, i, p, sizeof(p));
		if (mkdir(p, 0755))
			return -1;
	}
	publish(w);
	history();
	return 0;
}

/*
 * Completeness, counted and not judged: of the writes still in the rings
 * (the last RING of each writer), those made in the tree with no rename
 * during them whose IN_CREATE never came.  A RESCAN excuses some (the
 * records were lost); the others were made in a directory the library did
 * not watch yet (moved in from outside the tree, listed later, the file
 * gone by then): no watch, no record.
 */
static void count_missed(struct count *c, int verbose)
{
	unsigned int half = atomic_load(&S->seq) / 2;
	size_t rl = strlen(rpath);
	unsigned int q;
	int i;

	for (i = 0; i < nw; i++)
		for (q = 0; q < RING; q++) {
			const struct wrec *r = &S->ring[i][q];
			bool late = r->seq >= half;

			if (!atomic_load(&r->kend) || r->ambiguous ||
			    strncmp(r->path, rpath, rl) || r->path[rl] != '/')
				continue;
			c->intree++;
			c->late += late;
			if (r->reported)
				continue;
			c->late_missed += late;
			if (verbose > 1)
				fprintf(stderr, "  not reported: w%d-%ld in %s (sequence %u)\n",
					i, atomic_load(&r->k) - 1, r->path, r->seq);
			c->missed++;
		}
}

static int run(int no, unsigned int flags, double secs, int wpause,
	       int rpause, int verbose, struct count *c)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = flags };
	struct inofd_tree_opts to = { .sz = sizeof(to) };
	const struct inofd_event *ev;
	pid_t pid[MAXW + 1];
	struct world w;
	struct pollfd pf;
	struct inofd *in;
	double end, quiet = 0;
	char cmd[128];
	int i, bad = 0;

	memset(c, 0, sizeof(*c));
	memset(S, 0, sizeof(*S));
	if (setup(&w) || inofd_new(&in, &o) < 0)
		return -1;
	if (inofd_watch_tree_at(in, AT_FDCWD, rpath, IN_CREATE, &to) < 0)
		return -1;
	for (i = 0; i < nw; i++) {
		pid[i] = fork();
		if (!pid[i])
			writer(i, wpause);
	}
	pid[nw] = fork();
	if (!pid[nw])
		renamer(&w, (unsigned int)(no * 7919 + 1), rpause);
	pf.fd = inofd_fd(in);
	pf.events = POLLIN;
	end = now() + secs;
	for (;;) {
		int t = inofd_timeout(in);

		if (!atomic_load(&S->stop) && now() >= end) {
			atomic_store(&S->stop, 1);
			for (i = 0; i <= nw; i++) {
				int st;

				waitpid(pid[i], &st, 0);
				if (!WIFEXITED(st) || WEXITSTATUS(st))
					bad = 1;
			}
			quiet = now() + 1;
		}
		if (poll(&pf, 1, t < 0 || t > 50 ? 50 : t) < 0)
			return -1;
		if (inofd_read(in) < 0)
			return -1;
		while (inofd_next(in, &ev) > 0) {
			c->events++;
			if (quiet)
				quiet = now() + 1;
			if (ev->type == INOFD_EV_RESCAN) {
				c->rescans++;
				c->last_rescan = ev->seq;
				if (verbose > 1)
					fprintf(stderr, "  seq %llu: RESCAN wd %d mask %#x\n",
						(unsigned long long)ev->seq,
						ev->wd, ev->mask);
			}
			else if (ev->type == INOFD_EV_INOTIFY)
				judge(ev, c, verbose);
		}
		if (quiet && now() > quiet && inofd_timeout(in) < 0)
			break;
	}
	count_missed(c, verbose);
	inofd_free(in);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", base);
	if (system(cmd) || bad)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int flags = 0;
	int runs = 1, wpause = 200, rpause = 500, c, r;
	double secs = 15;
	int verbose = 0, starve = 0;
	bool check_starve = false;
	long total = 0, listed = 0, flagged = 0, missed = 0, intree = 0;
	const char *bname = "default";

	while ((c = getopt(argc, argv, "B:n:s:w:p:r:vL:S")) != -1) {
		if (c == 'B' && !strcmp(optarg, "procfd"))
			flags = INOFD_FORCE_PROCFD;
		else if (c == 'B' && !strcmp(optarg, "fanotify"))
			flags = INOFD_FORCE_FANOTIFY;
		else if (c == 'n')
			runs = atoi(optarg);
		else if (c == 's')
			secs = atof(optarg);
		else if (c == 'w')
			nw = atoi(optarg);
		else if (c == 'p')
			wpause = atoi(optarg);
		else if (c == 'r')
			rpause = atoi(optarg);
		else if (c == 'v')
			verbose++;
		else if (c == 'S')
			check_starve = true;
		else if (c == 'L' && !(rlog = fopen(optarg, "w")))
			return 2;
		else if (c != 'L')
			goto usage;
	}
	if (nw < 2 || nw > MAXW || runs < 1 || secs <= 0)
		goto usage;
	if (flags == INOFD_FORCE_PROCFD)
		bname = "procfd";
	else if (flags == INOFD_FORCE_FANOTIFY)
		bname = "fanotify";
	S = mmap(NULL, sizeof(*S), PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S == MAP_FAILED)
		return 2;
	for (r = 1; r <= runs; r++) {
		struct count k;

		if (run(r, flags, secs, wpause, rpause, verbose, &k)) {
			fprintf(stderr, "writers: run %d: setup or child failed\n", r);
			return 2;
		}
		printf("writers %s run %d/%d (%gs, %d writers): %ld creates reported, %ld judged: %ld right, %ld NULL, %ld wrong flagged, %ld synthetic at a later path, %ld WRONG UNFLAGGED; %ld flagged in all; %ld not judged (rename during the write), %ld too old; %ld RESCAN; %ld of %ld writes in the tree not reported\n",
		       bname, r, runs, secs, nw, k.creates, k.checked, k.ok,
		       k.nopath, k.flagged_wrong, k.listed, k.wrong,
		       k.flagged, k.ambiguous, k.unchecked, k.rescans,
		       k.missed, k.intree);
		fflush(stdout);
		total += k.wrong;
		listed += k.listed;
		flagged += k.flagged;
		missed += k.missed;
		intree += k.intree;
		if (k.late >= 1000 && k.late_missed == k.late) {
			printf("writers %s run %d: none of the %ld writes in the tree in the run's second half was reported (walks starved)\n",
			       bname, r, k.late);
			starve++;
		}
	}
	printf("writers %s: %ld unflagged wrong paths in %d runs (%ld synthetic at a later path, %ld flagged); %ld of %ld writes in the tree not reported\n",
	       bname, total, runs, listed, flagged, missed, intree);
	if (total)
		return 1;
	return check_starve && starve ? 3 : 0;
usage:
	fprintf(stderr, "usage: writers [-B procfd|fanotify] [-n RUNS] [-s SECONDS] [-w WRITERS] [-p WRITE_PAUSE_US] [-r RENAME_PAUSE_US] [-S] [-v]\n");
	return 2;
}
