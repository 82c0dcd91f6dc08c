// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Allocation-failure injection (issue 26), as the kernel's fail-nth does
 * it: run a scenario once and count the library's allocations (N), then
 * for n = 1..N run it again, each time in a new child, with the n-th
 * allocation failing.  Built with the library's sources under
 * AddressSanitizer (so the slab pools are compiled out, pool.c: every
 * object is an allocation of its own), and linked with
 * --wrap=malloc,calloc,realloc,strdup,strndup,asprintf,realpath,fopen:
 * every allocation call site of the library goes through here; the
 * test's own code makes none while counting (libc's internal ones are
 * not wrapped).
 *
 * The scenario: a tree watch on a small tree, then new directories,
 * renames in the tree, out of it and into it, the root renamed, a queue
 * overflow (a fed IN_Q_OVERFLOW record), and, in a private mount
 * namespace when one can be made (as tests/unit/test_mounts.c does), a
 * tmpfs mounted in the tree and unmounted.  Each run must:
 *   - not crash, and leak nothing (LeakSanitizer at the child's exit);
 *   - surface the failure: a call returns -ENOMEM, or the instance
 *     reports an INOFD_EV_ERROR, an INOFD_EV_RESCAN or a lost tree; a
 *     run that reports none of them must give exactly the events of the
 *     run without a failure;
 *   - leave the tree correct or honestly flagged: at the end a probe
 *     file is made in every real directory of the tree (as the oracle
 *     does), and each must be reported with its real path, unless an
 *     error named its directory or one above it, the tree was lost, or
 *     the failure fell in the probes' own reading.
 *
 * Exit 0: every run passed; 1: one failed (its n and why on stderr).
 * FAILNTH_N=n runs the n-th alone (0: the counting run), verbosely.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>

#include "inofd.h"

int inofd__feed(struct inofd *in, const void *buf, size_t len);
int inofd__kwd_of(const struct inofd *in, dev_t dev, ino_t ino);

/* ---- the allocation wrappers ------------------------------------------ */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
char *__real_realpath(const char *p, char *buf);
FILE *__real_fopen(const char *p, const char *mode);

#define MAX_SITES	512

/* shared with the parent: what the counting run saw */
struct shared {
	long		count;		/* allocations of the run */
	int		nrescan;	/* RESCANs it reported */
	int		nsites;
	uintptr_t	sites[MAX_SITES];
	size_t		loglen;
	char		log[1 << 16];	/* the counting run's events */
};

static struct shared *sh;
static bool counting;		/* the scenario is running */
static long calls, fail_at;	/* fail the fail_at-th call (0: none) */
static bool hit;		/* and it was made */
static bool verbose;

static void site(uintptr_t a)
{
	int i;

	if (fail_at || !sh)
		return;
	for (i = 0; i < sh->nsites; i++)
		if (sh->sites[i] == a)
			return;
	if (sh->nsites < MAX_SITES)
		sh->sites[sh->nsites++] = a;
}

/* true: this call fails */
static bool fails(uintptr_t a)
{
	if (!counting)
		return false;
	calls++;
	site(a);
	if (calls != fail_at)
		return false;
	hit = true;
	if (verbose) {
		fprintf(stderr, "failnth: allocation %ld fails (site %#" PRIxPTR "):\n",
			calls, a);
		__sanitizer_print_stack_trace();
	}
	errno = ENOMEM;
	return true;
}

#define SITE	((uintptr_t)__builtin_return_address(0))

void *__wrap_malloc(size_t n)
{
	return fails(SITE) ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	return fails(SITE) ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fails(SITE) ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fails(SITE) ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fails(SITE) ? NULL : __real_strndup(s, n);
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (fails(SITE))
		return -1;
	va_start(ap, fmt);
	r = vasprintf(out, fmt, ap);
	va_end(ap);
	return r;
}

char *__wrap_realpath(const char *p, char *buf)
{
	if (!buf && fails(SITE))
		return NULL;
	return __real_realpath(p, buf);
}

FILE *__wrap_fopen(const char *p, const char *mode)
{
	return fails(SITE) ? NULL : __real_fopen(p, mode);
}

/* ---- one run ---------------------------------------------------------- */

#define MASK	(IN_CREATE | IN_DELETE | IN_MOVE | IN_DELETE_SELF | IN_MOVE_SELF)

static char base[64];
static char log_[1 << 16];
static size_t loglen;
static int wd = -1;

/* what the run reported */
static bool flagged;		/* an error return, ERROR, RESCAN or loss */
static bool gone;		/* the tree ended or was lost */
static bool probe_flag;		/* one of them while the probes were read */
static bool probing;
static int nrescan;
#define MAX_ERR	64
static char errdir[MAX_ERR][PATH_MAX];
static int nerr;

#define MAX_PROBES	64
static struct probe {
	char	path[PATH_MAX];		/* where it is */
	char	dir[PATH_MAX];
	char	got[PATH_MAX];		/* what the event said */
	int	seen;			/* events with its name */
	bool	null_path;
} probes[MAX_PROBES];
static int nprobes;

#define FAIL(...) do { fprintf(stderr, "failnth: n=%ld: ", fail_at); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); _exit(1); } while (0)

static void note_flag(void)
{
	flagged = true;
	if (probing)
		probe_flag = true;
}

/* p less the run's base directory (the runs' logs are compared) */
static const char *rel(const char *p)
{
	size_t l = strlen(base);

	if (!p)
		return "-";
	return strncmp(p, base, l) ? p : p + l;
}

static void record(const struct inofd_event *ev)
{
	int k;

	if (loglen < sizeof(log_) - 1)
		loglen += (size_t)snprintf(log_ + loglen, sizeof(log_) - loglen,
			"%d %#x %#x %d %s %s %s\n", ev->type, ev->mask,
			ev->flags, ev->error, ev->name ? ev->name : "-",
			rel(ev->path), rel(ev->from_path));
	if (loglen >= sizeof(log_))
		loglen = sizeof(log_) - 1;
	if (verbose)
		fprintf(stderr, "  ev type %d mask %#x flags %#x err %d name %s path %s from %s\n",
			ev->type, ev->mask, ev->flags, ev->error,
			ev->name ? ev->name : "-", ev->path ? ev->path : "-",
			ev->from_path ? ev->from_path : "-");
	switch (ev->type) {
	case INOFD_EV_ERROR:
		note_flag();
		if (ev->flags & INOFD_EVF_LOST)
			gone = true;
		if (nerr < MAX_ERR)
			snprintf(errdir[nerr++], PATH_MAX, "%s",
				 ev->path ? ev->path : "/");
		return;
	case INOFD_EV_RESCAN:
		/* the scenario makes some: more than those say a failure */
		if (++nrescan > sh->nrescan || probing)
			note_flag();
		return;
	case INOFD_EV_INOTIFY:
		if ((ev->mask & IN_IGNORED) && !(ev->flags & INOFD_EVF_MEMBER)) {
			note_flag();
			gone = true;
		}
		break;
	default:
		break;
	}
	if (ev->type != INOFD_EV_INOTIFY || !(ev->mask & IN_CREATE) ||
	    !ev->name || strncmp(ev->name, "probe", 5))
		return;
	k = atoi(ev->name + 5);
	if (k < 0 || k >= nprobes)
		return;
	probes[k].seen++;
	probes[k].null_path = !ev->path;
	snprintf(probes[k].got, PATH_MAX, "%s", ev->path ? ev->path : "(null)");
}

/* Read the instance until it is quiet. */
static void pump(struct inofd *in)
{
	for (int rounds = 0; rounds < 10000; rounds++) {
		struct pollfd p = { .fd = inofd_fd(in), .events = POLLIN };
		const struct inofd_event *ev;
		int t = inofd_timeout(in), got = 0, r;

		if (poll(&p, 1, t < 0 ? 0 : t) < 0 && errno != EINTR)
			FAIL("poll: %m");
		r = inofd_read(in);
		if (r < 0) {
			if (r != -ENOMEM)
				FAIL("inofd_read: %s", inofd_strerror(r));
			note_flag();
			continue;
		}
		while ((r = inofd_next(in, &ev)) > 0) {
			got++;
			record(ev);
		}
		if (r < 0) {
			if (r != -ENOMEM)
				FAIL("inofd_next: %s", inofd_strerror(r));
			note_flag();
			continue;
		}
		if (!got && !(p.revents & POLLIN) && inofd_timeout(in) < 0)
			return;
	}
	FAIL("not quiet");
}

static const char *B(const char *rel)
{
	static char ring[8][PATH_MAX];
	static int i;
	char *p = ring[i++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", base, rel);
	return p;
}

#define DO(c) do { if ((c) < 0) FAIL("%s: %m", #c); } while (0)

static int add_probe(const char *p, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	struct probe *pr;
	int fd;

	(void)st; (void)ftw;
	if (flag != FTW_D)
		return 0;
	if (nprobes == MAX_PROBES)
		FAIL("too many directories");
	pr = &probes[nprobes];
	snprintf(pr->dir, PATH_MAX, "%s", p);
	snprintf(pr->path, PATH_MAX, "%s/probe%d", p, nprobes);
	fd = open(pr->path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		FAIL("%s: %m", pr->path);
	close(fd);
	nprobes++;
	return 0;
}

/* p below the root, whatever the root's name was then ("" for it) */
static const char *in_root(const char *p)
{
	p = rel(p);
	if (*p == '/')
		p = strchr(p + 1, '/');
	return p ? p : "";
}

/* dir is at or below an error's directory */
static bool excused(const char *dir)
{
	const char *d = in_root(dir);

	for (int i = 0; i < nerr; i++) {
		const char *e = in_root(errdir[i]);
		size_t l = strlen(e);

		if (!strncmp(d, e, l) && (d[l] == '\0' || d[l] == '/'))
			return true;
	}
	return false;
}

/*
 * Is line w (a run with a failure) line b of the run without, degraded
 * honestly?  A path the library could not make is NULL ("-"), a path it
 * can no longer vouch for is flagged INOFD_EVF_STALE_PATH (a walk's note
 * of what it placed not kept: its tree unsure), and a whole-instance
 * RESCAN (wd -1) may stand for one directory's.
 */
static bool same_line(const char *b, size_t bl, const char *w, size_t wl)
{
	char bf[8][PATH_MAX], wf[8][PATH_MAX];
	int bn, wn;

	if (bl == wl && !memcmp(b, w, bl))
		return true;
	bn = sscanf(b, "%s %s %s %s %s %s %s", bf[0], bf[1], bf[2], bf[3], bf[4],
		    bf[5], bf[6]);
	wn = sscanf(w, "%s %s %s %s %s %s %s", wf[0], wf[1], wf[2], wf[3], wf[4],
		    wf[5], wf[6]);
	if (bn != 7 || wn != 7 || strcmp(bf[0], wf[0]))
		return false;
	if (!strcmp(bf[0], "4") && !strcmp(wf[5], "-"))
		return true;
	for (int i = 1; i < 7; i++)
		if (strcmp(bf[i], wf[i]) && !(i >= 5 && !strcmp(wf[i], "-")) &&
		    !(i == 2 && strtoul(wf[2], NULL, 16) ==
		      (strtoul(bf[2], NULL, 16) | INOFD_EVF_STALE_PATH)))
			return false;
	return true;
}

static bool same_log(const char *b, const char *w)
{
	while (*b && *w) {
		size_t bl = strcspn(b, "\n"), wl = strcspn(w, "\n");

		if (!same_line(b, bl, w, wl))
			return false;
		b += bl + (b[bl] == '\n');
		w += wl + (w[wl] == '\n');
	}
	return !*b && !*w;
}

static bool mounts;
static struct inofd *cur_in;

static int watched(const char *p, const struct stat *st, int flag,
		   struct FTW *ftw)
{
	(void)ftw;
	if (flag == FTW_D && inofd__kwd_of(cur_in, st->st_dev, st->st_ino) < 0)
		FAIL("inofd_watch_tree_at() succeeded, but %s is not watched "
		     "(the first walk is all or nothing)", p);
	return 0;
}

static int scenario(void)
{
	static char overflow[sizeof(struct inotify_event)] __attribute__((aligned(8)));
	struct inotify_event *q = (struct inotify_event *)overflow;
	struct inofd *in = NULL;
	int r;

	DO(mkdir(B("t"), 0755));
	DO(mkdir(B("t/a"), 0755));
	DO(mkdir(B("t/a/a1"), 0755));
	DO(mkdir(B("t/a/a2"), 0755));
	DO(mkdir(B("t/a/a2/deep"), 0755));
	DO(mkdir(B("t/b"), 0755));
	DO(mkdir(B("t/b/b1"), 0755));
	DO(mkdir(B("t/c"), 0755));
	DO(mkdir(B("t/mnt"), 0755));
	DO(mkdir(B("out"), 0755));
	DO(mkdir(B("out/in"), 0755));
	DO(mkdir(B("out/in/in1"), 0755));

	counting = true;
	r = inofd_new(&in, NULL);
	if (r < 0) {
		if (r != -ENOMEM || !hit)
			FAIL("inofd_new: %s", inofd_strerror(r));
		return 0;
	}
	wd = inofd_watch_tree_at(in, AT_FDCWD, B("t"), MASK, NULL);
	if (wd < 0) {
		if (wd != -ENOMEM || !hit)
			FAIL("inofd_watch_tree_at: %s", inofd_strerror(wd));
		/* all or nothing: no watch left */
		if (inofd_watch_count(in) != 0)
			FAIL("a failed inofd_watch_tree_at left %d watch(es)",
			     inofd_watch_count(in));
		inofd_free(in);
		return 0;
	}
	/* all or nothing: every directory of the tree is watched */
	cur_in = in;
	if (nftw(B("t"), watched, 16, FTW_PHYS | FTW_MOUNT) < 0)
		FAIL("nftw: %m");
	pump(in);
	DO(mkdir(B("t/new"), 0755));
	DO(mkdir(B("t/new/x"), 0755));
	pump(in);
	DO(rename(B("t/a"), B("t/a2")));		/* in the tree */
	DO(rename(B("t/c"), B("t/new/c")));		/* across parents */
	pump(in);
	DO(rename(B("t/b"), B("out/b")));		/* out */
	DO(rename(B("out/in"), B("t/in")));		/* in */
	pump(in);
	/* a queue overflow: the library crawls the tree again */
	q->wd = -1;
	q->mask = IN_Q_OVERFLOW;
	r = inofd__feed(in, overflow, sizeof(overflow));
	if (r < 0 && r != -ENOMEM)
		FAIL("inofd__feed: %s", inofd_strerror(r));
	if (r < 0)
		note_flag();
	{
		const struct inofd_event *ev;

		while ((r = inofd_next(in, &ev)) > 0)
			record(ev);
		if (r < 0 && r != -ENOMEM)
			FAIL("inofd_next: %s", inofd_strerror(r));
		if (r < 0)
			note_flag();
	}
	DO(mkdir(B("t/a2/a1/after"), 0755));
	pump(in);
	if (mounts) {
		DO(mount("failnth", B("t/mnt"), "tmpfs", 0, NULL));
		DO(mkdir(B("t/mnt/m1"), 0755));
		pump(in);
		DO(mkdir(B("t/mnt/m1/m2"), 0755));
		pump(in);
		DO(umount(B("t/mnt")));
		pump(in);
	}
	DO(rename(B("t"), B("tt")));			/* the root */
	DO(mkdir(B("tt/new/y"), 0755));
	pump(in);

	/* the probes: one in every real directory of the tree */
	probing = true;
	if (nftw(B("tt"), add_probe, 16, FTW_PHYS) < 0)
		FAIL("nftw: %m");
	pump(in);
	probing = false;
	counting = false;

	for (int i = 0; i < nprobes; i++) {
		struct probe *pr = &probes[i];

		if (pr->seen == 1 && (pr->null_path || !strcmp(pr->got, pr->path)))
			continue;
		if (gone || probe_flag || excused(pr->dir))
			continue;
		if (pr->seen)
			FAIL("probe %s reported %d time(s), last as %s",
			     pr->path, pr->seen, pr->got);
		FAIL("probe %s not reported, and no error said why", pr->path);
	}
	if (!fail_at) {
		memcpy(sh->log, log_, loglen + 1);
		sh->loglen = loglen;
		sh->count = calls;
		sh->nrescan = nrescan;
		if (flagged)
			FAIL("the run without failure reported a failure:\n%s", log_);
	} else if (hit && !flagged && !same_log(sh->log, log_)) {
		FAIL("allocation %ld failed, nothing said so, and the events "
		     "differ from the run without failure:\n--- without:\n%s"
		     "--- with:\n%s", fail_at, sh->log, log_);
	}
	inofd_free(in);
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	return remove(p);
}

static int run(long n, bool *ok)
{
	pid_t pid;
	int st;

	snprintf(base, sizeof(base), "/tmp/inofd-failnth.XXXXXX");
	if (!mkdtemp(base))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		fail_at = n;
		alarm(30);
		exit(scenario());
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	umount2(B("t/mnt"), MNT_DETACH);
	umount2(B("tt/mnt"), MNT_DETACH);
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	*ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
	if (!*ok && WIFSIGNALED(st))
		fprintf(stderr, "failnth: n=%ld: killed by signal %d\n", n,
			WTERMSIG(st));
	else if (!*ok)
		fprintf(stderr, "failnth: n=%ld: exit status %d\n", n,
			WEXITSTATUS(st));
	return 0;
}

int main(void)
{
	const char *one = getenv("FAILNTH_N");
	struct timespec t0, t1;
	long n, failed = 0;
	bool ok;

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 1;
	/* a private mount namespace for the mounts, when one can be made */
	mounts = unshare(CLONE_NEWNS) == 0 &&
		 mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0;
	sh->nrescan = INT_MAX;		/* the counting run's are all expected */
	if (one) {
		verbose = true;
		n = atol(one);
		if (n && (run(0, &ok) < 0 || !ok))
			return 1;
		return run(n, &ok) < 0 || !ok;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (run(0, &ok) < 0 || !ok) {
		fprintf(stderr, "failnth: the run without failure failed\n");
		return 1;
	}
	for (n = 1; n <= sh->count; n++) {
		if (run(n, &ok) < 0)
			return 1;
		failed += !ok;
		if (failed >= 10)
			break;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("failnth: %ld allocations from %d call sites, each failed in turn "
	       "(%s): %ld run(s) failed, %.1f s\n", sh->count, sh->nsites,
	       mounts ? "with mounts" : "no mount namespace: no mounts",
	       failed, (double)(t1.tv_sec - t0.tv_sec) +
	       (t1.tv_nsec - t0.tv_nsec) / 1e9);
	return failed ? 1 : 0;
}
