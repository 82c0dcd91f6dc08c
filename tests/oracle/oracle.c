// SPDX-License-Identifier: GPL-2.0
/*
 * oracle: a seeded, model-based test of inofd_watch_tree().
 *
 * For each seed a private PRNG drives a random sequence of file system
 * operations on a real directory tree watched recursively by libinofd,
 * while a model of the tree is kept in memory.  The sequence depends on
 * the seed and the model only, never on what the library reports, so a
 * seed always replays the same operations.
 *
 * Layout under a fresh temporary directory BASE:
 *   BASE/a/p/<root> the watched tree; p belongs to the test (root renames),
 *                   and so does a (renames of the root's ancestors)
 *   BASE/out        outside the tree, same file system (moves out and in)
 *
 * Operations are grouped in steps: some steps read (inofd_read + drain what
 * is ready) after every operation, others batch up to 16 operations before
 * the first read.  After every step comes a quiescent check:
 *   - everything pending is drained (inofd_timeout() honoured);
 *   - a probe file is created in every real directory (in the tree, in
 *     out/, and in every directory with a plain watch); each registration
 *     that should see the directory must report exactly one event for the
 *     probe, with that registration's data, and the tree's event must carry
 *     the probe's real path (NULL only after the library reported that it
 *     lost the tree's location: an INOFD_EV_ERROR for the tree); a
 *     registration that should not see the directory must report nothing;
 *   - inofd_watch_count() equals the number of real directories in the
 *     tree, when no loss was reported and no plain watch is alive.
 * Throughout, every event is checked: a non-NULL path (and from_path) must
 * be a path that named some object of the model since the last quiescent
 * point (a history of which object held which path from which tick to
 * which, so a stale path is caught even when its name came back), unless the event is a
 * tree's flagged INOFD_EVF_STALE_PATH after a loss the library reported
 * since the last check (a rename above the root lost in an overflow:
 * where it fell is unknowable); path must end in name;
 * data must be a registration's; the mask must not carry bits the caller
 * did not ask for; IN_IGNORED must arrive exactly once per registration,
 * with its data, and only once the registration has ended.
 *
 * usage: oracle [-s SEED | -c COUNT [-S FIRST] | -T SEC] [-n OPS]
 *               [-B auto|kernel|procfd|fanotify|both|all]
 *               [-q MAX_QUEUED_EVENTS] [-x KINDS] [-D OPS] [-v] [-NXLRMCEWYU]
 *   -s SEED   run one seed;  -c COUNT  run seeds FIRST..FIRST+COUNT-1
 *   -q N      root only: lower fs.inotify.max_queued_events to N for the
 *             instance this test creates (restored right after); use it in
 *             the guest only, never on a host
 *   -T SEC    run seeds from FIRST on until SEC seconds have passed (soak)
 *   -x K,K    tolerate these divergence kinds (log and count them, go on):
 *             to look past a known bug; a run with -x proves nothing
 *   -D A,B    leave out these operations (mkdir mkdirp create write unlink
 *             rmdir rmr mvfile mvdir mvroot mvout mvin outside cleanout
 *             flood plain plainrm mvanc) or modes (relroot: the root is
 *             always absolute; batch / interleave: no steps of that kind): to
 *             narrow a divergence down to a finding
 *   -v        trace every operation and event on stderr
 *   -N        names from a small pool, reused at once (+ ops remk swap onto mvnew)
 *   -X        exclude patterns and max_depth, names crossing them
 *   -L        low RLIMIT_NOFILE and max_user_watches
 *   -R        roots given as /x/./y, /x/../x/y, /x/y/
 *   -M        tmpfs and bind mounts over directories of the tree (ops mount umount)
 *   -C        consumer checks: order of events on a path, sequence numbers
 *   -E        renameat2(): RENAME_EXCHANGE (directories, files, across
 *             parents, in and out of the tree, the root and its ancestors
 *             with a sibling) and RENAME_NOREPLACE (ops xchg norepl)
 *   -W        concurrent writers: other processes making, writing, renaming
 *             and deleting files in directories of their own, in and out of
 *             the tree, while those directories are renamed (op mvw)
 *   -Y        roots given through a symlink (to the root, or to an ancestor),
 *             the link retargeted; symlinks and hard links in the tree
 *             (ops symlink hardlink relink)
 *   -U        BASE is a mount (tmpfs or bind) that goes at the end, umount
 *             or umount -l: the tree must end or be lost, never go silent
 *   (ORACLE_FEATURES=NXLRMCEWYU in the environment adds the same; see README)
 * Every seed runs even when one fails; the exit status says if any did.
 * Exit: 0 every seed passed, 1 a divergence, 2 usage or setup error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <signal.h>
#include <sys/fanotify.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#include "inofd.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE	(1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE		(1 << 1)
#endif

/* 0.3 (issue 17): events carry seq, ino and dev; -C checks them */
#if INOFD_VERSION_MAJOR > 0 || INOFD_VERSION_MINOR >= 3
#ifndef ORACLE_HAVE_SEQ
#define ORACLE_HAVE_SEQ
#endif
#ifndef ORACLE_HAVE_INO
#define ORACLE_HAVE_INO
#endif
#endif

#define MAXDIRS		48	/* directories in the tree, at most */
#define MAXFILES	120	/* files in the tree, at most */
#define MAXOUT		24	/* directories in out/, at most */
#define MAXPLAIN	4	/* plain watches alive at once */
#define MAXREGS		64	/* registrations per seed */
#define DRAIN_SECONDS	10	/* a drain that does not settle diverges */
#define MAXMNT		2	/* -M: mounts active at once */
#define MAXWR		2	/* -W: writer processes */
#define WMAX		160	/* -W: files a writer makes per step, at most */
#define WMIN		48	/* ... and at least */

/* ------------------------------------------------------------ PRNG */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct rng {
	uint64_t s;
};

static void rng_seed(struct rng *g, uint64_t seed)
{
	uint64_t x = seed;

	g->s = splitmix64(&x);
	if (!g->s)
		g->s = 1;
}

/* xorshift64* */
static uint64_t rng_next(struct rng *g)
{
	g->s ^= g->s >> 12;
	g->s ^= g->s << 25;
	g->s ^= g->s >> 27;
	return g->s * 0x2545f4914f6cdd1dull;
}

static unsigned int rnd(struct rng *g, unsigned int n)
{
	return n ? (unsigned int)((rng_next(g) >> 33) % n) : 0;
}

/* ------------------------------------------------------------ model */

struct node {
	char name[24];
	struct node *parent;
	struct node **kid;
	int nkid, ckid;
	bool dir;
	int plain;		/* index of a live plain registration, or -1 */
	int id;			/* unique per seed, > 0 (the path history's) */
	unsigned long ino;	/* st_ino, as made */
	unsigned long ino_alt[4]; /* -M: the ones it had, covered or mounted
				   * (a ring: a mount's root stays valid for
				   * the events read after its umount) */
	int mnt;		/* a mount point: that mount's number, else 0 */
	int wdir;		/* -W: a writer's directory: its index + 1 */
	unsigned long made;	/* the step it was made in (or came into
				 * the tree in, or was uncovered in by a
				 * umount or mount --move: -M); 0: before
				 * the first.  -W, -P: not watched all
				 * step long */
	bool link;		/* -Y: a symlink (never written through) */
	bool wwas;		/* -W: watched before the rename at hand
				 * (watch_before()) */
	bool alias;		/* -F: the mount point of a bind of another
				 * directory of the tree: left out of
				 * collect() (probes, picks), as the library
				 * leaves it out of its walk */
	int pin;		/* -F: the source of that many such binds:
				 * never removed or moved */
	bool low;		/* -O: a directory of an overlay's lower */
};

/* one stretch of time during which an object held a path */
struct ivl {
	int obj;		/* a node's id, or 0: anonymous */
	long s, e;		/* ticks; e is OPEN_END while it holds it */
};

struct hent {
	char *path;
	struct ivl *v;
	int n, c;
	/* -C: the latest "earliest time" of an event seen on this path */
	long order_lo;
	unsigned long order_epoch;
};

struct reg {
	int wd;
	char tag;		/* &tag is the registration's data */
	bool tree;
	bool ended;		/* unwatched, or its directory removed */
	int ignored;		/* IN_IGNORED events seen with this data */
	bool moved;		/* its directory was renamed since it was made */
	struct node *dir;
	char path[PATH_MAX];	/* the path it was made with */
};

struct probe {
	struct node *dir;
	char path[PATH_MAX];
	int want_tree;		/* events expected with the tree's data */
	int want_plain;		/* ... and with the plain watch's (index or -1) */
	int n_tree, n_plain, n_other;
	char bad[PATH_MAX + 64];	/* first wrong event seen */
	struct stat st;		/* -F -O: the directory's, at the probe */
};

struct run {
	uint64_t seed;
	int nops, op;		/* ops asked for, ops done */
	int backend_flag;
	const char *backend_name;
	struct rng g;
	bool verbose;

	char base[PATH_MAX];
	int basefd;
	struct node *top, *a, *p, *out, *root;
	struct rng g3;		/* ancestor renames: a stream of their own */
	struct rng g4;		/* per-seed choices of -X -L -R -M */
	struct node **pool;
	int npool, cpool;
	unsigned long uniq;

	struct inofd *in;
	uint32_t mask;		/* what the caller asked for */
	uint32_t probe_bit;	/* IN_CREATE, or IN_CLOSE_WRITE without it */
	int rootmode;		/* 0 absolute, 1 dirfd-relative, 2 cwd-relative */
	bool use_plain;
	long qmax;
	struct reg regs[MAXREGS];
	int nregs;
	bool lost;		/* the library reported a loss for the tree */
	int errors, rescans;
	int rescans_at_check;	/* rescans when the last check began */
	/* mount points that changed since the last check: absolute path
	 * then, and node */
	char **mchg;
	char **mchg_rel;	/* below the root ("a/b"), or NULL */
	int *mchg_id;
	int nmchg;
	unsigned long stale_flagged;	/* tree events flagged maybe stale */
	bool mchg_chain;	/* one of them beside the root's chain */
	bool mchg_every;	/* every active mount point added */

	struct probe *probes;
	int nprobes;
	unsigned long probe_base;

	/* path history (hist_*): open addressing on the path */
	struct hent *hist;
	size_t hcap, hn;
	long tick;		/* one per file system change */
	long qtick;		/* the tick of the last quiescent point */
	unsigned long order_epoch;	/* -C: bumped at every loss */

	/* the reproducer: one line per operation, read and check */
	char **log;
	int nlog, clog;

	bool failed;
	int ntolerated;
	char why[2048];

	/* -M: mounts over directories of the tree (no nesting) */
	struct mnt {
		struct node *mp;	/* the mount point */
		struct node **hidden;	/* what it covers */
		int nhidden, chidden;
		unsigned long ino;	/* the covered directory's */
		char path[PATH_MAX];	/* as mounted (relative to BASE) */
		int kind;		/* mkinds[] */
		struct node *src;	/* -F alias: the bound directory */
		bool active;
	} mnts[MAXMNT];
	int nmnt;		/* active */
	int mnt_made;
	bool can_mount;
	bool mounts_unseen;	/* the library said -EOPNOTSUPP: no mounts */
	long watch_limit;	/* -L: max_user_watches set, or 0 */
	long nofile;		/* -L: RLIMIT_NOFILE set, or 0 */
	int root_form;		/* -R: 0 plain, else which form */
	unsigned long last_seq;	/* -C */
	bool have_seq;
	bool xd_on;		/* -X: this seed uses exclude / max_depth */
	int max_depth;
	bool refused;		/* -L: watch_tree said EMFILE/ENOSPC */
	bool limited;		/* -L: the library reported ENOSPC/EMFILE */
	bool tree_lost;		/* it said the tree is lost (INOFD_EVF_LOST) */
	int maxdirs;		/* MAXDIRS, less under -L */
	int lim_mode;		/* -L: 1 watches, 2 descriptors, 3 both */
	unsigned long excused;	/* -L: probes missing after a limit error */
	struct rlimit old_nofile;

	/* -W: writers, other processes, each in a directory of the tree */
	struct writer {
		struct node *dir;	/* its directory (the model's) */
		int xfd;		/* BASE/wxK: outside everything */
		pid_t pid;		/* running, or 0 */
		int stop;		/* closed: stop */
		int back;		/* it says it started, then what it did */
		unsigned long step;	/* in its names: x<k>_<step>_<i> */
		bool strict;		/* watched by the tree all along */
		bool ran;		/* its step's files are to be counted */
		int nfiles;
		char kind[WMAX];	/* 'x', 'y' or 'z', per file */
		unsigned char cnt[WMAX][5];	/* events seen (W_*) */
	} wr[MAXWR];
	int nwr;
	unsigned long wstep;
	int w_rescans;		/* rescans when the writers started */
	unsigned long wfiles, wstrict;	/* files counted, strict steps */
	/* -Y: the root given through BASE/lr -> a/p/<root> (1) or through
	 * BASE/la/p/<root>, la -> a (2); 0: no link */
	int rootlink;
	struct rng g5;		/* -Y and -U choices: a stream of their own */
	/* -U: BASE is a tmpfs (1) or a bind mount of BASE.src (2), which
	 * goes (umount, or umount -l when umnt_lazy) at the end */
	int umnt;
	bool umnt_lazy;
	char bsrc[PATH_MAX];
	/* -P: entries moved out of the tree since the last check, each to
	 * be reported once as a MOVE_OUT of its old path */
	struct dep {
		char path[PATH_MAX];
		char name[24];
		int rescans;	/* r->rescans when it left */
		bool seen;
	} deps[16];
	int ndeps;
	/* -O: BASE is an overlay (1: lower on the host's disk, 2: all
	 * layers on one tmpfs); layers live in ovl (BASE.ovl) and, on the
	 * host's disk, in host (made when first needed) */
	int ovlroot;
	char ovl[PATH_MAX];
	char host[PATH_MAX];
	int nlayer;
	bool noredir;		/* -O: an overlay without redirect_dir (a
				 * user namespace): its lower's directories
				 * are not renamed (EXDEV) */
	bool noovl;		/* -O: no overlays here (ovl_usable()) */
};

static void note(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* generators and checks beyond the default ones (options -N -X -L -R -M -C) */
#define F_NAMES		0x01u	/* -N: names from a small pool */
#define F_XD		0x02u	/* -X: exclude patterns and max_depth */
#define F_LIMITS	0x04u	/* -L: low RLIMIT_NOFILE, max_user_watches */
#define F_ROOTF		0x08u	/* -R: roots given as /x/./y, /x/../x/y, /x/y/ */
#define F_MOUNTS	0x10u	/* -M: bind and tmpfs mounts inside the tree */
#define F_CONSUMER	0x20u	/* -C: event order and sequence numbers */
#define F_XCHG		0x40u	/* -E: renameat2() EXCHANGE and NOREPLACE */
#define F_WRITER	0x80u	/* -W: concurrent writers (other processes) */
#define F_SYMLINKS	0x100u	/* -Y: roots through symlinks, symlinks and
				 * hard links in the tree */
#define F_UMNT		0x200u	/* -U: the mount holding the root goes */
#define F_PLACES	0x400u	/* -P: moves between places, relinks */
#define F_FS		0x800u	/* -F: a tree directory bound onto another, a
				 * second file system before the watch, moves
				 * across it (EXDEV: copy and delete), a tmpfs
				 * over the root at the end (implies -M) */
#define F_OVL		0x1000u	/* -O: overlayfs as BASE and over directories
				 * of the tree (implies -M) */
static unsigned int feat;

static const char *featargs(void)
{
	static char b[48];

	snprintf(b, sizeof(b), "%s%s%s%s%s%s%s%s%s%s%s%s%s", feat & F_NAMES ? " -N" : "",
		 feat & F_XD ? " -X" : "", feat & F_LIMITS ? " -L" : "",
		 feat & F_ROOTF ? " -R" : "", feat & F_MOUNTS ? " -M" : "",
		 feat & F_CONSUMER ? " -C" : "", feat & F_XCHG ? " -E" : "",
		 feat & F_WRITER ? " -W" : "",
		 feat & F_SYMLINKS ? " -Y" : "", feat & F_UMNT ? " -U" : "",
		 feat & F_PLACES ? " -P" : "", feat & F_FS ? " -F" : "",
		 feat & F_OVL ? " -O" : "");
	return b[0] ? b + 1 : b;
}
static bool mounts_ok;		/* -M: this process may mount */

/*
 * Divergence kinds: the word in brackets that starts every message.  -x
 * lists kinds to tolerate (logged, counted, not failed) so that a run can
 * look past a known bug at the next one; never used by make oracle.
 */
static const char *tolerate = "";
static struct {
	char kind[32];
	unsigned long n;
} kinds[32];

static bool tolerated(const char *kind)
{
	size_t kl = strlen(kind);
	const char *t;

	for (t = tolerate; *kind && (t = strstr(t, kind)); t += kl)
		if ((t == tolerate || t[-1] == ',') &&
		    (t[kl] == ',' || !t[kl]))
			return true;
	return false;
}

static void tally(const char *kind)
{
	int i;

	for (i = 0; i < 32; i++) {
		if (!kinds[i].kind[0])
			snprintf(kinds[i].kind, sizeof(kinds[i].kind), "%s",
				 kind);
		if (!strcmp(kinds[i].kind, kind)) {
			kinds[i].n++;
			return;
		}
	}
}

static void note(struct run *r, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	if (r->nlog == r->clog) {
		r->clog = r->clog ? 2 * r->clog : 256;
		r->log = realloc(r->log, r->clog * sizeof(*r->log));
		if (!r->log) {
			perror("oracle: realloc");
			exit(2);
		}
	}
	r->log[r->nlog++] = s;
	if (r->verbose)
		fprintf(stderr, "  %s\n", s);
}

static void diverge(struct run *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void diverge(struct run *r, const char *fmt, ...)
{
	char m[sizeof(r->why)], kind[32] = "";
	const char *e;
	va_list ap;

	if (r->failed)
		return;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	e = strchr(m, ']');
	if (m[0] == '[' && e && e - m < (long)sizeof(kind))
		memcpy(kind, m + 1, e - m - 1);
	tally(kind);
	if (tolerated(kind)) {
		r->ntolerated++;
		note(r, "# tolerated (-x): %s", m);
		return;
	}
	r->failed = true;
	memcpy(r->why, m, sizeof(m));
}

/* snprintf that must not truncate (paths here are short) */
#define fmt_path(buf, sz, ...) do { \
	int w_ = snprintf(buf, sz, __VA_ARGS__); \
	if (w_ < 0 || (size_t)w_ >= (size_t)(sz)) { \
		fprintf(stderr, "oracle: path too long\n"); \
		exit(2); \
	} \
} while (0)

static void die(const char *what)
{
	fprintf(stderr, "oracle: %s: %s\n", what, strerror(errno));
	exit(2);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	if (!p)
		die("calloc");
	return p;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

/*
 * Path history: for every path the test ever made, the objects that held
 * it and when (ticks: one per file system change).  An event's path must
 * have named some object during the window since the last quiescent
 * point: a stale path (the name reused since) or a made-up one is caught
 * even though names repeat (-N).  Object 0 is anonymous (probes, flood
 * files).
 */
#define OPEN_END	LONG_MAX

static struct hent *hist_find(struct run *r, const char *path, bool add)
{
	size_t i;

	if (add && 2 * (r->hn + 1) > r->hcap) {
		struct hent *old = r->hist;
		size_t oc = r->hcap, j;

		r->hcap = oc ? 2 * oc : 4096;
		r->hist = xcalloc(r->hcap, sizeof(*r->hist));
		for (j = 0; j < oc; j++) {
			if (!old[j].path)
				continue;
			for (i = hash(old[j].path) & (r->hcap - 1);
			     r->hist[i].path; i = (i + 1) & (r->hcap - 1))
				;
			r->hist[i] = old[j];
		}
		free(old);
	}
	if (!r->hcap)
		return NULL;
	for (i = hash(path) & (r->hcap - 1); r->hist[i].path;
	     i = (i + 1) & (r->hcap - 1))
		if (!strcmp(r->hist[i].path, path))
			return &r->hist[i];
	if (!add)
		return NULL;
	r->hist[i].path = strdup(path);
	if (!r->hist[i].path)
		die("strdup");
	r->hn++;
	return &r->hist[i];
}

/* obj starts holding path now */
static void hist_open(struct run *r, const char *path, int obj)
{
	struct hent *h = hist_find(r, path, true);

	if (h->n == h->c) {
		h->c = h->c ? 2 * h->c : 2;
		h->v = realloc(h->v, h->c * sizeof(*h->v));
		if (!h->v)
			die("realloc");
	}
	h->v[h->n++] = (struct ivl){ .obj = obj, .s = r->tick, .e = OPEN_END };
}

/* obj stops holding path now */
static void hist_close(struct run *r, const char *path, int obj)
{
	struct hent *h = hist_find(r, path, false);
	int i;

	for (i = 0; h && i < h->n; i++)
		if (h->v[i].obj == obj && h->v[i].e == OPEN_END)
			h->v[i].e = r->tick;
}

/* the path named some object since the last quiescent point */
static bool hist_window(struct run *r, const char *path)
{
	struct hent *h = hist_find(r, path, false);
	int i;

	for (i = 0; h && i < h->n; i++)
		if (h->v[i].e >= r->qtick)
			return true;
	return false;
}

static struct node *node_new(struct run *r, struct node *parent,
			     const char *name, bool dir)
{
	struct node *n = xcalloc(1, sizeof(*n));

	snprintf(n->name, sizeof(n->name), "%s", name);
	n->dir = dir;
	n->plain = -1;
	n->id = r->npool + 1;
	if (r->npool == r->cpool) {
		r->cpool = r->cpool ? 2 * r->cpool : 256;
		r->pool = realloc(r->pool, r->cpool * sizeof(*r->pool));
		if (!r->pool)
			die("realloc");
	}
	r->pool[r->npool++] = n;
	if (parent) {
		if (parent->nkid == parent->ckid) {
			parent->ckid = parent->ckid ? 2 * parent->ckid : 8;
			parent->kid = realloc(parent->kid,
					      parent->ckid * sizeof(*parent->kid));
			if (!parent->kid)
				die("realloc");
		}
		parent->kid[parent->nkid++] = n;
		n->parent = parent;
	}
	return n;
}

static void node_unlink(struct node *n)
{
	struct node *p = n->parent;
	int i;

	for (i = 0; i < p->nkid; i++)
		if (p->kid[i] == n) {
			/* keep the order: choices depend on it */
			memmove(&p->kid[i], &p->kid[i + 1],
				(p->nkid - i - 1) * sizeof(*p->kid));
			p->nkid--;
			break;
		}
	n->parent = NULL;
}

static void node_link(struct node *p, struct node *n)
{
	if (p->nkid == p->ckid) {
		p->ckid = p->ckid ? 2 * p->ckid : 8;
		p->kid = realloc(p->kid, p->ckid * sizeof(*p->kid));
		if (!p->kid)
			die("realloc");
	}
	p->kid[p->nkid++] = n;
	n->parent = p;
}

/* path relative to BASE */
static void rel(const struct node *n, char *buf, size_t sz)
{
	const struct node *v[256];
	int k = 0;
	size_t o = 0;

	for (; n && n->parent; n = n->parent)
		v[k++] = n;
	buf[0] = 0;
	while (k-- > 0) {
		int w = snprintf(buf + o, sz - o, "%s%s", o ? "/" : "",
				 v[k]->name);

		if (w < 0 || (size_t)w >= sz - o)
			break;
		o += w;
	}
}

static void absp(const struct run *r, const struct node *n, char *buf,
		 size_t sz)
{
	char b[PATH_MAX];

	rel(n, b, sizeof(b));
	fmt_path(buf, sz, "%s/%s", r->base, b);
}

static bool below(const struct node *n, const struct node *a)
{
	for (; n; n = n->parent)
		if (n == a)
			return true;
	return false;
}

static bool in_tree(const struct run *r, const struct node *n)
{
	return r->root && below(n, r->root);
}

/* n and everything below it start holding their paths (now) */
static void record(struct run *r, struct node *n)
{
	char b[PATH_MAX];
	int i;

	absp(r, n, b, sizeof(b));
	hist_open(r, b, n->id);
	for (i = 0; i < n->nkid; i++)
		record(r, n->kid[i]);
}

/* ... and stop holding them (now) */
static void unrecord(struct run *r, struct node *n)
{
	char b[PATH_MAX];
	int i;

	absp(r, n, b, sizeof(b));
	hist_close(r, b, n->id);
	for (i = 0; i < n->nkid; i++)
		unrecord(r, n->kid[i]);
}

struct list {
	struct node **v;
	int n, c;
};

static void list_add(struct list *l, struct node *n)
{
	if (l->n == l->c) {
		l->c = l->c ? 2 * l->c : 64;
		l->v = realloc(l->v, l->c * sizeof(*l->v));
		if (!l->v)
			die("realloc");
	}
	l->v[l->n++] = n;
}

/* depth-first, in child order: deterministic; never a -F alias (its
 * entries are the bound directory's, under that directory's path) */
static void collect(struct node *n, bool dirs, bool files, struct list *l)
{
	int i;

	if (n->alias)
		return;
	if (n->dir ? dirs : files)
		list_add(l, n);
	for (i = 0; i < n->nkid; i++)
		collect(n->kid[i], dirs, files, l);
}

static int count(struct node *n, bool dir)
{
	struct list l = { 0 };
	int c;

	if (!n)
		return 0;
	collect(n, dir, !dir, &l);
	c = l.n;
	free(l.v);
	return c;
}

static struct node *child_named(const struct node *d, const char *name)
{
	int i;

	for (i = 0; d && i < d->nkid; i++)
		if (!strcmp(d->kid[i]->name, name))
			return d->kid[i];
	return NULL;
}

/* -X: the seed's exclude patterns and max_depth (0: none) */
static const char *const xd_exclude[] = { ".git", "*.tmp", NULL };

static bool excluded_name(const char *name)
{
	int i;

	for (i = 0; xd_exclude[i]; i++)
		if (!fnmatch(xd_exclude[i], name, 0))
			return true;
	return false;
}

/* d, a directory of the tree, should be watched by it */
static bool watched(const struct run *r, const struct node *d)
{
	int depth = 0;

	if (!r->xd_on)
		return true;
	for (; d && d != r->root; d = d->parent, depth++)
		if (excluded_name(d->name))
			return false;
	return !r->max_depth || depth <= r->max_depth;
}

/* -M: the mount a directory's entries live on (0: BASE's file system) */
static int mnt_of(const struct node *d)
{
	for (; d; d = d->parent)
		if (d->mnt)
			return d->mnt;
	return 0;
}

/* a mount point, or (-F) the source of a bind of a tree directory */
static bool has_mount(const struct node *n)
{
	int i;

	if (n->mnt || n->pin)
		return true;
	for (i = 0; i < n->nkid; i++)
		if (has_mount(n->kid[i]))
			return true;
	return false;
}

/* -W: a writer works at or below n: it is not removed nor mounted over */
static bool has_writer(const struct node *n)
{
	int i;

	if (n->wdir)
		return true;
	for (i = 0; i < n->nkid; i++)
		if (has_writer(n->kid[i]))
			return true;
	return false;
}

/* m may be renamed into directory to: no EXDEV, no EBUSY */
static bool mount_ok(const struct run *r, const struct node *m,
		     const struct node *to)
{
	if (!r->nmnt)
		return true;
	return !has_mount(m) && mnt_of(m->parent) == mnt_of(to);
}

static struct node *pick(struct run *r, struct node *top, bool dir,
			 bool nottop)
{
	struct list l = { 0 };
	struct node *n = NULL;
	int off;

	if (!top)
		return NULL;
	collect(top, dir, !dir, &l);
	off = nottop && dir ? 1 : 0;
	if (l.n > off)
		n = l.v[off + rnd(&r->g, l.n - off)];
	free(l.v);
	return n;
}

static void fresh(struct run *r, char c, char *buf, size_t sz)
{
	snprintf(buf, sz, "%c%lu", c, ++r->uniq);
}

/*
 * The name of a new entry of parent (or of one moved there).  Without -N
 * and -X: a fresh one, never used before in this seed (no PRNG draw).
 * -N: from a small pool (n0..n5 for files and directories, r0..r2 for the
 * root, a0/a1 and p0/p1 for its ancestors), one not in use in parent, so
 * that a name freed by a move or delete comes back at once.  -X: now and
 * then a directory name the seed's exclude patterns match.
 */
static void name_for(struct run *r, struct rng *g, const struct node *parent,
		     char c, char *buf, size_t sz)
{
	const char *pfx = "n";
	unsigned int n = 6, k, i;

	if ((feat & F_XD) && c == 'd') {
		k = rnd(g, 6);
		if (k == 0)
			snprintf(buf, sz, ".git");
		else if (k == 1 && (feat & F_NAMES))
			snprintf(buf, sz, "n%u.tmp", rnd(g, 2));
		else if (k == 1)
			snprintf(buf, sz, "d%lu.tmp", ++r->uniq);
		if (k <= 1 && !child_named(parent, buf))
			return;
	}
	if (!(feat & F_NAMES) || c == 't') {
		fresh(r, c, buf, sz);
		return;
	}
	switch (c) {
	case 'r': pfx = "r"; n = 3; break;
	case 'a': pfx = "a"; n = 2; break;
	case 'p': pfx = "p"; n = 2; break;
	}
	k = rnd(g, n);
	for (i = 0; i < n; i++) {
		snprintf(buf, sz, "%s%u", pfx, (k + i) % n);
		if (!child_named(parent, buf))
			return;
	}
	fresh(r, c, buf, sz);
}

/* ------------------------------------------------------------ events */

static struct reg *reg_of(struct run *r, const void *data)
{
	int i;

	for (i = 0; i < r->nregs; i++)
		if (data == &r->regs[i].tag)
			return &r->regs[i];
	return NULL;
}

static const char *tname(int t)
{
	static const char *const n[] = { "INOTIFY", "RENAME", "MOVE_OUT",
		"MOVE_IN", "RESCAN", "CHANGED", "ERROR" };

	return t >= 0 && t <= INOFD_EV_ERROR ? n[t] : "?";
}

static void describe(struct run *r, const struct inofd_event *ev, char *b,
		     size_t sz)
{
	struct reg *g = reg_of(r, ev->data);

	snprintf(b, sz, "%s wd=%d mask=0x%x%s%s err=%d data=%s%d name=%s path=%s%s%s",
		 tname(ev->type), ev->wd, ev->mask,
		 ev->flags & INOFD_EVF_SYNTHETIC ? " synthetic" : "",
		 ev->mask & IN_IGNORED ? " IN_IGNORED" : "",
		 ev->error, g ? (g->tree ? "tree" : "plain") : "?",
		 g ? (int)(g - r->regs) : -1,
		 ev->name ? ev->name : "(null)",
		 ev->path ? ev->path : "(null)",
		 ev->from_path ? " from_path=" : "",
		 ev->from_path ? ev->from_path : "");
}

static void mchg_add(struct run *r, const char *abs, const struct node *d);
static void alias_chg(struct run *r, const struct mnt *mt);

/*
 * Once the table changed in a window, every active mount point in the
 * tree is a changed one: a mount moved away and back between two of the
 * library's looks leaves the table as it was, so the library marks every
 * mount point a tree recorded (those inside it) at any change (mounts.c
 * peek_tree(); oracle seed 310115), and records below any of them, or
 * below an alias's source (alias_chg()), may be flagged.  A point outside
 * the tree (moved beside the chain) is not recorded, and stays as strict
 * as before.
 */
static void mchg_every(struct run *r)
{
	char abs[PATH_MAX];
	int i;

	if (r->mchg_every)
		return;
	r->mchg_every = true;
	for (i = 0; i < MAXMNT; i++)
		if (r->mnts[i].active && in_tree(r, r->mnts[i].mp)) {
			absp(r, r->mnts[i].mp, abs, sizeof(abs));
			mchg_add(r, abs, r->mnts[i].mp);
			alias_chg(r, &r->mnts[i]);
		}
}

/* A mount point changed (mount, umount, move: both ends) since the last
 * check: its absolute path, and its node (whatever paths it had). */
static void mchg_add(struct run *r, const char *abs, const struct node *d)
{
	char **v = realloc(r->mchg, (r->nmchg + 1) * sizeof(*v));
	char **rl = v ? realloc(r->mchg_rel, (r->nmchg + 1) * sizeof(*rl)) :
		   NULL;
	int *id = rl ? realloc(r->mchg_id, (r->nmchg + 1) * sizeof(*id)) :
		  NULL;
	const struct node *n;
	char b[PATH_MAX] = "";
	size_t k;

	if (v)
		r->mchg = v;
	if (rl)
		r->mchg_rel = rl;
	if (id)
		r->mchg_id = id;
	if (!v || !rl || !id || !(v[r->nmchg] = strdup(abs))) {
		fprintf(stderr, "oracle: out of memory\n");
		exit(2);
	}
	rl[r->nmchg] = NULL;
	if (r->root && d != r->root && below(d, r->root)) {
		/* its path below the root: d's rel() less the root's */
		rel(d, b, sizeof(b));
		for (k = 0, n = r->root; n && n->parent; n = n->parent)
			k += strlen(n->name) + 1;
		rl[r->nmchg] = strdup(b + (k <= strlen(b) ? k : strlen(b)));
	}
	id[r->nmchg++] = d->id;
	mchg_every(r);
	/*
	 * A point whose parent is above the root (out/, a side directory of
	 * an ancestor): the library marks the whole tree when it cannot
	 * tell, by the chain's names then, that the point is beside the
	 * chain (inofd__anc_beside(): an ancestor renamed in the same batch)
	 */
	if (r->root && d->parent && below(r->root, d->parent) &&
	    !below(d, r->root))
		r->mchg_chain = true;
}

/* Did the root hold path q (a prefix of an event's) since the last
 * quiescent point? */
static bool root_held(struct run *r, const char *q)
{
	struct hent *h = r->root ? hist_find(r, q, false) : NULL;
	int i;

	for (i = 0; h && i < h->n; i++)
		if (h->v[i].e >= r->qtick && h->v[i].obj == r->root->id)
			return true;
	return false;
}

/* dir (dl bytes) is the root's path then and rel, at or below a changed
 * mount point's path below the root? */
static bool rel_near(struct run *r, const char *dir, size_t dl)
{
	char q[PATH_MAX];
	size_t k, ml;
	int i;

	if (dl >= sizeof(q))
		return false;
	for (k = 1; k <= dl; k++) {
		if (k < dl && dir[k] != '/')
			continue;
		memcpy(q, dir, k);
		q[k] = '\0';
		if (!root_held(r, q))
			continue;
		for (i = 0; i < r->nmchg; i++) {
			ml = r->mchg_rel[i] ? strlen(r->mchg_rel[i]) : 0;
			if (ml && dl >= k + 1 + ml && dir[k] == '/' &&
			    !strncmp(dir + k + 1, r->mchg_rel[i], ml) &&
			    (dl == k + 1 + ml || dir[k + 1 + ml] == '/'))
				return true;
		}
	}
	return false;
}

/* Did a changed mount point hold path q since the last quiescent point? */
static bool mchg_held(struct run *r, const char *q)
{
	struct hent *h = hist_find(r, q, false);
	int i, j;

	for (i = 0; h && i < h->n; i++)
		for (j = 0; j < r->nmchg; j++)
			if (h->v[i].e >= r->qtick && h->v[i].obj == r->mchg_id[j])
				return true;
	return false;
}

static void mchg_reset(struct run *r)
{
	r->mchg_chain = false;
	r->mchg_every = false;
	while (r->nmchg) {
		r->nmchg--;
		free(r->mchg[r->nmchg]);
		free(r->mchg_rel[r->nmchg]);
	}
}

/* Is the directory an event with path (and name) is on at or below a mount
 * point that changed since the last check (at the path it had then, or
 * any path it had since the last quiescent point)? */
static bool mount_near(struct run *r, const char *path, const char *name)
{
	char q[PATH_MAX];
	size_t dl, ml;
	int i;

	if (!path)
		return false;
	dl = strlen(path);
	if (name && dl > strlen(name))
		dl -= strlen(name) + 1;
	for (i = 0; i < r->nmchg; i++) {
		ml = strlen(r->mchg[i]);
		if (dl >= ml && !strncmp(path, r->mchg[i], ml) &&
		    (dl == ml || path[ml] == '/'))
			return true;
	}
	if (dl >= sizeof(q))
		return false;
	if (rel_near(r, path, dl))
		return true;	/* by the root's path then: renames above */
	memcpy(q, path, dl);
	q[dl] = '\0';
	for (;;) {
		char *sl;

		if (mchg_held(r, q))
			return true;
		sl = strrchr(q, '/');
		if (!sl || sl == q)
			return false;
		*sl = '\0';
	}
}

/*
 * A tree's event may be flagged INOFD_EVF_STALE_PATH after a loss the
 * library reported since the last check, or after it reported an ERROR
 * for the tree at all, or (inofd_read(3)) read after the mount table
 * changed and before the library acted on it, in a directory at or
 * below a mount point that changed (mount, umount, mount --move): the
 * change and the records have no common order.
 */
static bool stale_ok(struct run *r, const struct inofd_event *ev)
{
	/* with no path at all (a RENAME whose both halves the library
	 * could not place) the flag qualifies nothing false: a mount point
	 * changed since the last check is reason enough */
	if (!ev->path && !ev->from_path && r->nmchg)
		return true;
	return r->rescans != r->rescans_at_check || r->lost ||
	       r->mchg_chain || mount_near(r, ev->path, ev->name) ||
	       mount_near(r, ev->from_path, ev->from_name);
}

/* Paths a registration's events are held to: see the file comment. */
/*
 * -F: path through an alias D of a tree directory S (D/x), as S's (S/x),
 * in buf; else path itself.  The library watches the one inode at one of
 * its two paths (docs/library.md, "Known limits"): S's when its walk met
 * S first, D's when it met D first (S made in the batch of the bind).
 */
static const char *unalias(struct run *r, const char *path, char *buf,
			   size_t sz)
{
	char dp[PATH_MAX], sp[PATH_MAX];
	size_t dl;
	int i;

	for (i = 0; path && i < MAXMNT; i++) {
		const struct mnt *mt = &r->mnts[i];

		if (!mt->active || !mt->src)
			continue;
		absp(r, mt->mp, dp, sizeof(dp));
		dl = strlen(dp);
		if (strncmp(path, dp, dl) || (path[dl] && path[dl] != '/'))
			continue;
		absp(r, mt->src, sp, sizeof(sp));
		if ((size_t)snprintf(buf, sz, "%s%s", sp, path + dl) < sz)
			return buf;
	}
	return path;
}

static void check_path(struct run *r, const struct inofd_event *ev,
		       const char *path, const char *name, struct reg *g,
		       const char *what)
{
	char d[PATH_MAX * 3];
	size_t pl, nl;

	if (!path)
		return;
	if (name) {
		pl = strlen(path);
		nl = strlen(name);
		if (pl <= nl || strcmp(path + pl - nl, name) ||
		    path[pl - nl - 1] != '/') {
			describe(r, ev, d, sizeof(d));
			diverge(r, "[path-name] %s does not end in its name: %s",
				what, d);
			return;
		}
	}
	/* a plain watch's path is the one it was made with (documented) */
	if (g && !g->tree && g->moved)
		return;
	/*
	 * A tree's path flagged as maybe stale: only in the events read
	 * right after a loss the library reported (a rename above the root
	 * lost in an overflow: DESIGN.md), or once it reported an ERROR for
	 * the tree (a chain above the root it could not watch).  Not held
	 * to the history.
	 */
	if (g && g->tree && (ev->flags & INOFD_EVF_STALE_PATH) &&
	    stale_ok(r, ev)) {
		r->stale_flagged++;
		return;
	}
	if (!hist_window(r, path) &&
	    !hist_window(r, unalias(r, path, d, sizeof(d)))) {
		describe(r, ev, d, sizeof(d));
		diverge(r, "[false-path] %s names a path that no object had since the last quiescent point: %s",
			what, d);
	}
}

/*
 * -C, the consumer's view.  Each event on a path is given the earliest
 * and latest tick it can be about: a creation or arrival (IN_CREATE,
 * IN_MOVED_TO, MOVE_IN, a RENAME's path) is when some object started
 * holding the path, a removal or departure (IN_DELETE, IN_MOVED_FROM,
 * MOVE_OUT, a RENAME's from_path) when one stopped, anything else any
 * time one held it; only stretches since the last quiescent point count.
 * An event whose latest tick is before the earliest tick of an earlier
 * event on the same path arrived out of order (CREATE root/a, then the
 * MOVE_OUT of the root/a that left before it was made).  Synthetic
 * events (scans) and the stretch after a loss are not held to it.
 */
enum { ORD_ANY, ORD_START, ORD_END };

static void order_check(struct run *r, const struct inofd_event *ev,
			const char *path, int cls)
{
	struct hent *h;
	long lo = LONG_MAX, hi = -1, t;
	char d[PATH_MAX * 3];
	int i;

	if (!(feat & F_CONSUMER) || !path || (ev->flags & INOFD_EVF_SYNTHETIC))
		return;
	h = hist_find(r, path, false);
	for (i = 0; h && i < h->n; i++) {
		const struct ivl *v = &h->v[i];

		if (v->e < r->qtick)
			continue;
		if (cls == ORD_START) {
			if (v->s < r->qtick)
				continue;
			t = v->s;
			lo = t < lo ? t : lo;
			hi = t > hi ? t : hi;
		} else if (cls == ORD_END) {
			if (v->e == OPEN_END)
				continue;
			t = v->e;
			lo = t < lo ? t : lo;
			hi = t > hi ? t : hi;
		} else {
			t = v->s > r->qtick ? v->s : r->qtick;
			lo = t < lo ? t : lo;
			hi = v->e > hi ? v->e : hi;
		}
	}
	if (hi < 0)
		return;
	if (h->order_epoch == r->order_epoch + 1 && hi < h->order_lo) {
		describe(r, ev, d, sizeof(d));
		diverge(r, "[order] %s of %s is about tick %ld at the latest, after an event on that path about tick %ld or later: %s",
			cls == ORD_START ? "an arrival" : cls == ORD_END ?
			"a departure" : "an event", path, hi, h->order_lo, d);
		return;
	}
	if (h->order_epoch != r->order_epoch + 1) {
		h->order_epoch = r->order_epoch + 1;
		h->order_lo = lo;
	} else if (lo > h->order_lo) {
		h->order_lo = lo;
	}
}

/* the class of ev's path (from: its from_path) for order_check() */
static int order_class(const struct inofd_event *ev, bool from)
{
	switch (ev->type) {
	case INOFD_EV_RENAME:
		return from ? ORD_END : ORD_START;
	case INOFD_EV_MOVE_IN:
		return ORD_START;
	case INOFD_EV_MOVE_OUT:
		return ORD_END;
	case INOFD_EV_INOTIFY:
		if (!ev->name)
			return ORD_ANY;
		if (ev->mask & (IN_CREATE | IN_MOVED_TO))
			return ORD_START;
		if (ev->mask & (IN_DELETE | IN_MOVED_FROM))
			return ORD_END;
		return ORD_ANY;
	}
	return ORD_ANY;
}

#ifdef ORACLE_HAVE_INO
/*
 * The event's inode is the watched directory's the kernel reported it on
 * (inofd.h): for an event with a name the directory holding the entry,
 * else the object itself.  That directory's path (path less "/name") must
 * have named the object of that inode since the last quiescent point.
 */
static bool alt_ino(const struct node *n, uint64_t ino)
{
	size_t i;

	for (i = 0; i < sizeof(n->ino_alt) / sizeof(n->ino_alt[0]); i++)
		if (n->ino_alt[i] && n->ino_alt[i] == ino)
			return true;
	return false;
}

static void ino_check(struct run *r, const struct inofd_event *ev,
		      const char *path, const char *name, struct reg *g)
{
	char dp[PATH_MAX], d[PATH_MAX * 3];
	struct hent *h;
	size_t l;
	int i;

	if (!path || !ev->ino || (g && !g->tree && g->moved))
		return;
	if (g && g->tree && (ev->flags & INOFD_EVF_STALE_PATH))
		return;
	l = strlen(path);
	if (name) {
		if (l <= strlen(name) + 1)
			return;		/* [path-name] said so already */
		l -= strlen(name) + 1;
	}
	if (l >= sizeof(dp))
		return;
	memcpy(dp, path, l);
	dp[l] = 0;
	h = hist_find(r, dp, false);
	if (!h) {
		char ua[PATH_MAX];

		h = hist_find(r, unalias(r, dp, ua, sizeof(ua)), false);
	}
	for (i = 0; h && i < h->n; i++) {
		const struct ivl *v = &h->v[i];
		const struct node *n;

		if (v->e < r->qtick)
			continue;
		if (!v->obj)
			return;
		n = r->pool[v->obj - 1];
		if (n->ino == ev->ino || alt_ino(n, ev->ino))
			return;
	}
	describe(r, ev, d, sizeof(d));
	diverge(r, "[ino] %s never named inode %llu since the last quiescent point: %s",
		dp, (unsigned long long)ev->ino, d);
}
#endif

/*
 * -W: the writers' files.  Names: x<k>_<step>_<i> (made, written and closed
 * in the writer's directory W, then renamed to x...r there, deleted, or
 * kept and deleted when the writer stops), y... (made in W, then moved out
 * to BASE/wx<k>), z... (made in BASE/wx<k>, moved into W, deleted there),
 * q... (made and deleted in BASE/wx<k>: never reported).  The model does
 * not know them; their events are checked here.
 */
enum { W_CLOSE, W_DEL, W_OUT, W_IN, W_SPLIT };

static bool wname(const char *name, char *c, int *k, unsigned long *st,
		  int *i)
{
	int n = -1;

	if (!name || !strchr("xyzq", name[0]) ||
	    sscanf(name + 1, "%d_%lu_%d%n", k, st, i, &n) != 3 || n < 0)
		return false;
	*c = name[0];
	n++;
	return !name[n] || !strcmp(name + n, ".r");
}

/*
 * A writer's file's path: it ends in its name, and its directory is a path
 * that named the writer's directory since the last quiescent point.  Which
 * of those is legitimately ambiguous: the writer's events and the renames
 * of its directory race (the kernel orders them, this test cannot).
 */
static void writer_path(struct run *r, const struct inofd_event *ev,
			const char *path, const char *name, struct reg *g,
			const char *what)
{
	char dp[PATH_MAX], d[PATH_MAX * 3];
	unsigned long st;
	struct hent *h;
	size_t pl, nl;
	int k, i, j;
	char c;

	if (!path)
		return;
	pl = strlen(path);
	nl = strlen(name);
	if (pl <= nl || strcmp(path + pl - nl, name) ||
	    path[pl - nl - 1] != '/' || pl - nl - 1 >= sizeof(dp)) {
		describe(r, ev, d, sizeof(d));
		diverge(r, "[path-name] %s does not end in its name: %s", what,
			d);
		return;
	}
	if (g && !g->tree && g->moved)
		return;
	if (g && g->tree && (ev->flags & INOFD_EVF_STALE_PATH) &&
	    stale_ok(r, ev)) {
		r->stale_flagged++;
		return;
	}
	memcpy(dp, path, pl - nl - 1);
	dp[pl - nl - 1] = 0;
	if (wname(name, &c, &k, &st, &i) && k >= 0 && k < r->nwr &&
	    c != 'q' && (h = hist_find(r, dp, false)))
		for (j = 0; j < h->n; j++)
			if (h->v[j].obj == r->wr[k].dir->id &&
			    h->v[j].e >= r->qtick)
				return;
	describe(r, ev, d, sizeof(d));
	diverge(r, "[writer-path] %s of a writer's file is not in a path its directory had since the last quiescent point: %s",
		what, d);
}

/* True if ev is about a writer's file (checked and counted here). */
static bool writer_event(struct run *r, const struct inofd_event *ev,
			 struct reg *g)
{
	const char *fn = ev->type == INOFD_EV_RENAME ? ev->from_name : NULL;
	char c, d[PATH_MAX * 3];
	unsigned long st;
	struct writer *w;
	int k, i;

	if (!(feat & F_WRITER) || !((ev->name && wname(ev->name, &c, &k, &st,
						       &i)) ||
				    (fn && wname(fn, &c, &k, &st, &i))))
		return false;
	writer_path(r, ev, ev->path, ev->name ? ev->name : "", g, "path");
	if (fn)
		writer_path(r, ev, ev->from_path, fn, reg_of(r, ev->from_data),
			    "from_path");
#ifdef ORACLE_HAVE_INO
	if (feat & F_CONSUMER)
		ino_check(r, ev, ev->path, ev->name, g);
#endif
	if (r->failed || !g->tree || (ev->flags & INOFD_EVF_SYNTHETIC))
		return true;
	if (!ev->name || !wname(ev->name, &c, &k, &st, &i) || k < 0 ||
	    k >= r->nwr || r->wr[k].step != st || !r->wr[k].ran ||
	    i < 0 || i >= WMAX || c == 'q') {
		describe(r, ev, d, sizeof(d));
		diverge(r, "[writer-extra] an event of no writer's file of this step: %s",
			d);
		return true;
	}
	w = &r->wr[k];
	switch (ev->type) {
	case INOFD_EV_INOTIFY:
		if (ev->mask & IN_CLOSE_WRITE)
			w->cnt[i][W_CLOSE]++;
		if (ev->mask & IN_DELETE)
			w->cnt[i][W_DEL]++;
		break;
	case INOFD_EV_MOVE_OUT:
		w->cnt[i][c == 'y' ? W_OUT : W_SPLIT]++;
		break;
	case INOFD_EV_MOVE_IN:
		w->cnt[i][c == 'z' ? W_IN : W_SPLIT]++;
		break;
	case INOFD_EV_RENAME:
		/* only x -> x.r renames stay in W */
		if (c != 'x' || !fn || ev->name[strlen(ev->name) - 1] != 'r') {
			describe(r, ev, d, sizeof(d));
			diverge(r, "[writer-rename] a rename the writer did not do: %s",
				d);
		}
		break;
	}
	return true;
}

static void probe_event(struct run *r, const struct inofd_event *ev)
{
	unsigned long k;
	struct probe *pr;
	struct reg *g;
	char *end;

	if (ev->type != INOFD_EV_INOTIFY || !(ev->mask & r->probe_bit) ||
	    !ev->name || strncmp(ev->name, "probe", 5))
		return;
	k = strtoul(ev->name + 5, &end, 10);
	if (*end || k < r->probe_base || k >= r->probe_base + r->nprobes)
		return;
	pr = &r->probes[k - r->probe_base];
	g = reg_of(r, ev->data);
	if (g && g->tree) {
		pr->n_tree++;
		/* flagged maybe stale where allowed: the path may be wrong */
		if ((ev->flags & INOFD_EVF_STALE_PATH) && stale_ok(r, ev))
			return;
		char ua[PATH_MAX];

		if (ev->path ? strcmp(unalias(r, ev->path, ua, sizeof(ua)),
				      pr->path) != 0 : !r->lost) {
			if (!pr->bad[0])
				snprintf(pr->bad, sizeof(pr->bad), "path=%s",
					 ev->path ? ev->path : "(null)");
		}
#ifdef ORACLE_HAVE_INO
		/*
		 * -F -O: ino and dev are the directory's as stat(2) gives
		 * them (inofd.h), on every file system: on overlayfs the
		 * overlay's, not a layer's
		 */
		if ((feat & (F_FS | F_OVL)) && !pr->bad[0] &&
		    (ev->ino != pr->st.st_ino || ev->dev != pr->st.st_dev))
			snprintf(pr->bad, sizeof(pr->bad),
				 "ino %llu dev 0x%llx, but stat(2) of its directory says ino %llu dev 0x%llx",
				 (unsigned long long)ev->ino,
				 (unsigned long long)ev->dev,
				 (unsigned long long)pr->st.st_ino,
				 (unsigned long long)pr->st.st_dev);
#endif
	} else if (g && pr->want_plain >= 0 && g == &r->regs[pr->want_plain]) {
		pr->n_plain++;
	} else {
		pr->n_other++;
	}
}

static void dep_event(struct run *r, const struct inofd_event *ev);

static void event(struct run *r, const struct inofd_event *ev)
{
	char d[PATH_MAX * 3];
	struct reg *g;
	uint32_t bits;

	if (r->verbose) {
		describe(r, ev, d, sizeof(d));
		fprintf(stderr, "    ev %s\n", d);
	}
	if (ev->type < INOFD_EV_INOTIFY || ev->type > INOFD_EV_ERROR) {
		diverge(r, "[type] unknown event type %d", ev->type);
		return;
	}
#ifdef ORACLE_HAVE_SEQ
	/*
	 * -C: every event's sequence number is above the one before; the
	 * header promises more, 1, 2, 3, ... with no gap
	 */
	if ((feat & F_CONSUMER) && ev->seq != r->last_seq + 1) {
		describe(r, ev, d, sizeof(d));
		diverge(r, "[seq] sequence number %llu after %llu%s: %s",
			(unsigned long long)ev->seq,
			(unsigned long long)r->last_seq,
			ev->seq > r->last_seq ? " (a gap)" : "", d);
		return;
	}
	r->have_seq = true;
	r->last_seq = ev->seq;
#endif
	if (ev->type == INOFD_EV_RESCAN) {
		r->order_epoch++;
		r->rescans++;
		note(r, "# lib: RESCAN");
		return;
	}
	g = reg_of(r, ev->data);
	if (!g) {
		describe(r, ev, d, sizeof(d));
		diverge(r, "[data] event with no registration's data: %s", d);
		return;
	}
	if (ev->type == INOFD_EV_ERROR) {
		describe(r, ev, d, sizeof(d));
		note(r, "# lib: %s", d);
		r->order_epoch++;
		r->errors++;
		if (g->tree && (ev->flags & INOFD_EVF_LOST))
			r->tree_lost = true;
		/*
		 * -EOPNOTSUPP: no mount table (the library opens it at the
		 * first tree, and only with descriptors to spare: -L often
		 * leaves none).  The tree goes on; only mounts inside it
		 * are not followed, as the library said: this run makes no
		 * more mounts (counted and printed, never a silent pass),
		 * and is relaxed only if some are already there.
		 */
		if (g->tree && ev->error == -EOPNOTSUPP) {
			/* -U: the mount above the root is not seen either */
			if (r->can_mount || r->umnt)
				r->mounts_unseen = true;
			r->can_mount = false;
			if (r->nmnt)
				r->lost = true;
		} else if (g->tree) {
			r->lost = true;
		}
		/*
		 * -L: the library said it hit max_user_watches; see check().
		 * Not EMFILE: a walk can go on with the descriptors left
		 * (issue 17, 8), so a directory left out for want of one
		 * still diverges.
		 */
		if (g->tree && (feat & F_LIMITS) && ev->error == -ENOSPC)
			r->limited = true;
		return;
	}
	if (ev->type == INOFD_EV_CHANGED) {
		diverge(r, "[type] INOFD_EV_CHANGED without coalescing");
		return;
	}
	if (g->tree && (ev->flags & INOFD_EVF_STALE_PATH) && !stale_ok(r, ev)) {
		describe(r, ev, d, sizeof(d));
		diverge(r, "[stale-flag] a tree's event flagged stale with no loss reported since the last check, and no error for the tree: %s",
			d);
		return;
	}
	if (ev->type == INOFD_EV_RENAME && !reg_of(r, ev->from_data)) {
		describe(r, ev, d, sizeof(d));
		diverge(r, "[data] rename source with no registration's data: %s", d);
		return;
	}
	bits = ev->mask & ~(uint32_t)(IN_ISDIR | IN_IGNORED | IN_Q_OVERFLOW |
				      IN_UNMOUNT);
	if (ev->type == INOFD_EV_INOTIFY && (bits & ~r->mask)) {
		describe(r, ev, d, sizeof(d));
		diverge(r, "[mask] event bits 0x%x not asked for (mask 0x%x): %s",
			bits & ~r->mask, r->mask, d);
		return;
	}
	if (writer_event(r, ev, g))
		return;
	dep_event(r, ev);
	check_path(r, ev, ev->path, ev->name, g, "path");
	if (ev->type == INOFD_EV_RENAME)
		check_path(r, ev, ev->from_path, ev->from_name,
			   reg_of(r, ev->from_data), "from_path");
	if (!(g->tree && (ev->flags & INOFD_EVF_STALE_PATH)) &&
	    !(!g->tree && g->moved)) {
		order_check(r, ev, ev->path, order_class(ev, false));
		if (ev->type == INOFD_EV_RENAME)
			order_check(r, ev, ev->from_path, order_class(ev, true));
	}
#ifdef ORACLE_HAVE_INO
	if (feat & F_CONSUMER)
		ino_check(r, ev, ev->path, ev->name, g);
#endif
	if (ev->mask & IN_IGNORED) {
		describe(r, ev, d, sizeof(d));
		if (ev->wd != g->wd) {
			diverge(r, "[ignored-member] IN_IGNORED of wd %d reaches the caller with the data of %s registration %d (wd %d): %s",
				ev->wd, g->tree ? "tree" : "plain",
				(int)(g - r->regs), g->wd, d);
			return;
		}
		g->ignored++;
		if (!g->ended)
			diverge(r, "[ignored-live] IN_IGNORED for a registration that is still alive (%s wd %d): %s",
				g->tree ? "tree" : "plain", g->wd, d);
		else if (g->ignored > 1)
			diverge(r, "[ignored-twice] IN_IGNORED number %d for one registration: %s",
				g->ignored, d);
	}
	probe_event(r, ev);
}

static void consume(struct run *r)
{
	const struct inofd_event *ev;
	int n;

	while (!r->failed && (n = inofd_next(r->in, &ev)) > 0)
		event(r, ev);
	if (!r->failed && n < 0)
		diverge(r, "[api] inofd_next: %s", inofd_strerror(n));
}

static void read_some(struct run *r)
{
	int n = inofd_read(r->in);

	if (n < 0) {
		diverge(r, "[api] inofd_read: %s", inofd_strerror(n));
		return;
	}
	consume(r);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Everything the kernel queued is read and every window has closed. */
static void drain(struct run *r)
{
	double end = now() + DRAIN_SECONDS;
	struct pollfd p = { .fd = inofd_fd(r->in), .events = POLLIN };

	while (!r->failed) {
		int t;

		read_some(r);
		if (r->failed)
			return;
		t = inofd_timeout(r->in);
		if (t < -1) {
			diverge(r, "[api] inofd_timeout: %s", inofd_strerror(t));
			return;
		}
		if (t == -1 && poll(&p, 1, 0) == 0)
			return;
		if (now() > end) {
			diverge(r, "[drain] events still coming after %d s of reading (inofd_timeout %d, fd %sreadable)",
				DRAIN_SECONDS, t, poll(&p, 1, 0) > 0 ? "" : "not ");
			return;
		}
		if (t > 0)
			poll(&p, 1, t);
	}
}

/* ------------------------------------------------------------ operations */

static void fs_fail(struct run *r, const char *what, const char *path)
{
	/* the model and the real tree disagree: the test's own bug */
	fprintf(stderr, "oracle: seed %llu: %s %s: %s (test bug)\n",
		(unsigned long long)r->seed, what, path, strerror(errno));
	exit(2);
}

/* -M: n's path showed inode ino too (covered, or a mount's root) */
static void alt_push(struct node *n, unsigned long ino)
{
	memmove(n->ino_alt + 1, n->ino_alt,
		sizeof(n->ino_alt) - sizeof(n->ino_alt[0]));
	n->ino_alt[0] = ino;
}

static void set_ino(struct run *r, struct node *n, const char *relpath)
{
	struct stat st;

	if (fstatat(r->basefd, relpath, &st, AT_SYMLINK_NOFOLLOW))
		fs_fail(r, "stat", relpath);
	n->ino = st.st_ino;
}

static void make_dir(struct run *r, struct node *parent, const char *name,
		     struct node **out)
{
	char b[PATH_MAX];
	struct node *n = node_new(r, parent, name, true);

	n->made = r->wstep;
	rel(n, b, sizeof(b));
	if (mkdirat(r->basefd, b, 0755))
		fs_fail(r, "mkdir", b);
	r->tick++;
	record(r, n);
	set_ino(r, n, b);
	if (out)
		*out = n;
}

static void make_file(struct run *r, struct node *parent, const char *name,
		      bool data)
{
	char b[PATH_MAX];
	struct node *n = node_new(r, parent, name, false);
	int fd;

	rel(n, b, sizeof(b));
	r->tick++;
	record(r, n);
	fd = openat(r->basefd, b, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
	if (fd < 0)
		fs_fail(r, "create", b);
	if (data && write(fd, "x", 1) != 1)
		fs_fail(r, "write", b);
	close(fd);
	set_ino(r, n, b);
}

static void plain_end(struct run *r, struct node *n)
{
	if (n->plain >= 0) {
		r->regs[n->plain].ended = true;
		r->regs[n->plain].dir = NULL;
		n->plain = -1;
	}
}

/* rm -r, children first; the nodes stay in the pool */
static void remove_tree(struct run *r, struct node *n)
{
	char b[PATH_MAX];

	while (n->nkid)
		remove_tree(r, n->kid[n->nkid - 1]);
	rel(n, b, sizeof(b));
	if (unlinkat(r->basefd, b, n->dir ? AT_REMOVEDIR : 0))
		fs_fail(r, n->dir ? "rmdir" : "unlink", b);
	r->tick++;
	unrecord(r, n);
	plain_end(r, n);
	node_unlink(n);
}

static void mark_moved(struct run *r, struct node *m)
{
	int i;

	for (i = 0; i < r->nregs; i++)
		if (!r->regs[i].ended && !r->regs[i].tree &&
		    r->regs[i].dir && below(r->regs[i].dir, m))
			r->regs[i].moved = true;
}

/* -W: n and everything below it came into the tree now */
static void made_now(struct run *r, struct node *n)
{
	int i;

	n->made = r->wstep;
	for (i = 0; i < n->nkid; i++)
		made_now(r, n->kid[i]);
}

/*
 * -W, -X, -R: a rename can bring a directory into the watched part of the
 * tree (out of an excluded name, or up within max_depth).  The library
 * walks it after the batch, so it is not watched yet: for the writers'
 * records it is as new as a directory made now, and so is what is renamed
 * into it later in the step (landed(); oracle seed 158 -N -X -R -M -C -E
 * -W -Y -U: a directory renamed into one that had just come within
 * max_depth is a move out, found again by the walk).
 */
static void watch_before(struct run *r, struct node *n)
{
	int i;

	n->wwas = in_tree(r, n) && watched(r, n);
	for (i = 0; i < n->nkid; i++)
		watch_before(r, n->kid[i]);
}

static void watch_after(struct run *r, struct node *n)
{
	int i;

	if (n->dir && !n->wwas && in_tree(r, n) && watched(r, n)) {
		made_now(r, n);
		return;
	}
	for (i = 0; i < n->nkid; i++)
		watch_after(r, n->kid[i]);
}

/*
 * -W: n was renamed into a directory made in this step, or below one: the
 * library has not walked it yet, so the kernel queues no IN_MOVED_TO and
 * n's half is a move out (DESIGN.md, "a half whose directory has no
 * partner").  What n reaches from there is a move in, found by a walk, as
 * new as a directory made now, and so is what is renamed into n later in
 * the step (its watches went with the move out: oracle seed 150058 -W -N
 * -C, a writer's directory renamed into a directory that had gone so and
 * come back).  The library may do better (identity_to_ahead()): the
 * writers are then only not held to every record.
 */
static void landed(struct run *r, struct node *n)
{
	const struct node *d;

	for (d = n->parent; d && d != r->root; d = d->parent)
		if (d->made == r->wstep) {
			made_now(r, n);
			return;
		}
}

/* -O: m is a directory an overlay without redirect_dir cannot rename */
static bool stuck(const struct run *r, const struct node *m)
{
	return r->noredir && m->dir && m->low;
}

static void move(struct run *r, struct node *m, struct node *to,
		 const char *name)
{
	char a[PATH_MAX], b[PATH_MAX];
	struct node *victim = child_named(to, name);
	bool was_in = in_tree(r, m);

	rel(m, a, sizeof(a));
	if (stuck(r, m)) {
		note(r, "# mv %s: not drawn (EXDEV: a lower directory of an overlay without redirect_dir)",
		     a);
		return;
	}
	if (victim && victim != m && !m->dir && !victim->dir && m->ino &&
	    victim->ino == m->ino && mnt_of(to) == mnt_of(m->parent)) {
		/*
		 * -Y: two hard links of one file.  rename(2) does nothing
		 * then, and says so with success (vfs_rename(): source ==
		 * target), and no event is made.
		 */
		rel(victim, b, sizeof(b));
		if (renameat(r->basefd, a, r->basefd, b))
			fs_fail(r, "rename", a);
		note(r, "mv %s %s   # hard links of one file: nothing happens", a, b);
		return;
	}
	r->tick++;
	watch_before(r, m);
	unrecord(r, m);
	if (victim && victim != m) {
		/* rename(2) onto an existing file or empty directory */
		unrecord(r, victim);
		plain_end(r, victim);
		node_unlink(victim);
	}
	node_unlink(m);
	snprintf(m->name, sizeof(m->name), "%s", name);
	node_link(to, m);
	rel(m, b, sizeof(b));
	if (renameat(r->basefd, a, r->basefd, b))
		fs_fail(r, "rename", a);
	note(r, "mv %s %s%s", a, b, victim && victim != m ? "   # onto an existing one" : "");
	record(r, m);
	mark_moved(r, m);
	if (!was_in && in_tree(r, m))
		made_now(r, m);
	else
		landed(r, m);
	watch_after(r, m);
}

/*
 * -E: renameat2(x, y, RENAME_EXCHANGE), applied to the model exactly: one
 * tick (the exchange is atomic), x takes y's place and name and y takes
 * x's, whatever they are (files, directories, the root, its ancestors).
 */
static void exchange(struct run *r, struct node *x, struct node *y,
		     const char *why)
{
	char a[PATH_MAX], b[PATH_MAX], nx[sizeof(x->name)];
	struct node *px = x->parent, *py = y->parent;

	rel(x, a, sizeof(a));
	rel(y, b, sizeof(b));
	if (syscall(SYS_renameat2, r->basefd, a, r->basefd, b,
		    RENAME_EXCHANGE))
		fs_fail(r, "renameat2(RENAME_EXCHANGE)", a);
	r->tick++;
	watch_before(r, x);
	watch_before(r, y);
	unrecord(r, x);
	unrecord(r, y);
	node_unlink(x);
	node_unlink(y);
	snprintf(nx, sizeof(nx), "%s", x->name);
	snprintf(x->name, sizeof(x->name), "%s", y->name);
	snprintf(y->name, sizeof(y->name), "%s", nx);
	node_link(py, x);
	node_link(px, y);
	note(r, "mv --exchange %s %s   # %s", a, b, why);
	record(r, x);
	record(r, y);
	mark_moved(r, x);
	mark_moved(r, y);
	landed(r, x);
	landed(r, y);
	watch_after(r, x);
	watch_after(r, y);
}

/* a directory of parent other than keep, else a new one (name 's'...) */
static struct node *sibling(struct run *r, struct node *parent,
			    const struct node *keep)
{
	char b[PATH_MAX], nm[32];
	struct node *s = NULL;
	int i;

	for (i = 0; i < parent->nkid; i++)
		if (parent->kid[i] != keep && parent->kid[i]->dir &&
		    parent->kid[i] != r->out && !parent->kid[i]->mnt &&
		    strcmp(parent->kid[i]->name, "bsrc"))
			s = parent->kid[i];
	if (s && rnd(&r->g, 3))
		return s;
	fresh(r, 's', nm, sizeof(nm));
	make_dir(r, parent, nm, &s);
	rel(s, b, sizeof(b));
	note(r, "mkdir %s", b);
	if (rnd(&r->g, 2)) {
		struct node *k;

		fresh(r, 'd', nm, sizeof(nm));
		make_dir(r, s, nm, &k);
		rel(k, b, sizeof(b));
		note(r, "mkdir %s", b);
	}
	return s;
}

/* x and y may be exchanged: neither holds the other, no mount crossed */
static bool xchg_ok(const struct run *r, const struct node *x,
		    const struct node *y)
{
	if (!x || !y || x == y || below(x, y) || below(y, x))
		return false;
	if (!r->nmnt)
		return true;
	return !has_mount(x) && !has_mount(y) &&
	       mnt_of(x->parent) == mnt_of(y->parent);
}

static bool xchg_op(struct run *r)
{
	struct node *x = NULL, *y = NULL;
	int ndirs = count(r->root, true);
	unsigned int k = rnd(&r->g, 20);

	if (k < 7) {			/* directory/directory in the tree */
		x = pick(r, r->root, true, true);
		y = pick(r, r->root, true, true);
		if (!xchg_ok(r, x, y))
			return false;
		exchange(r, x, y, x->parent == y->parent ? "directories" :
			 "directories, across parents");
	} else if (k < 9) {		/* directory/file in the tree */
		x = pick(r, r->root, true, true);
		y = pick(r, r->root, false, false);
		if (!xchg_ok(r, x, y))
			return false;
		if (rnd(&r->g, 2))
			exchange(r, x, y, "a directory and a file");
		else
			exchange(r, y, x, "a file and a directory");
	} else if (k < 11) {		/* file/file in the tree */
		x = pick(r, r->root, false, false);
		y = pick(r, r->root, false, false);
		if (!xchg_ok(r, x, y))
			return false;
		exchange(r, x, y, "files");
	} else if (k < 15) {		/* the tree and out/ */
		x = pick(r, r->root, rnd(&r->g, 4) != 0, true);
		y = pick(r, r->out, rnd(&r->g, 4) != 0, true);
		if (!xchg_ok(r, x, y) ||
		    ndirs - count(x, true) + count(y, true) > r->maxdirs ||
		    count(r->out, true) - count(y, true) + count(x, true) - 1 >
		    MAXOUT)
			return false;
		if (rnd(&r->g, 2))
			exchange(r, x, y, "in and out of the tree");
		else
			exchange(r, y, x, "out of and into the tree");
	} else if (k < 17) {		/* the root and a sibling */
		if (r->nmnt)
			return false;
		y = sibling(r, r->p, r->root);
		if (rnd(&r->g, 2))
			exchange(r, r->root, y, "the root and a sibling");
		else
			exchange(r, y, r->root, "a sibling and the root");
	} else if (k < 19) {		/* the root's parent and a sibling */
		if (r->nmnt)
			return false;
		y = sibling(r, r->a, r->p);
		exchange(r, r->p, y, "the root's parent and a sibling");
	} else {			/* its grandparent and a sibling */
		if (r->nmnt)
			return false;
		y = sibling(r, r->top, r->a);
		exchange(r, y, r->a, "a sibling and the root's grandparent");
	}
	return true;
}

/*
 * -E: renameat2(m, to/name, RENAME_NOREPLACE): a free name (a move like
 * any other) or one in use (EEXIST, nothing changes).
 */
static bool norepl_op(struct run *r)
{
	char a[PATH_MAX], b[PATH_MAX], nm[24];
	struct node *m, *to, *o;
	long ret;

	m = pick(r, r->root, rnd(&r->g, 2), true);
	to = pick(r, r->root, true, false);
	if (!m || !to || below(to, m) || !mount_ok(r, m, to))
		return false;
	o = to->nkid ? to->kid[rnd(&r->g, to->nkid)] : NULL;
	if (o && o != m && rnd(&r->g, 2)) {
		rel(m, a, sizeof(a));
		rel(o, b, sizeof(b));
		ret = syscall(SYS_renameat2, r->basefd, a, r->basefd, b,
			      RENAME_NOREPLACE);
		if (ret == 0 || errno != EEXIST)
			fs_fail(r, "renameat2(RENAME_NOREPLACE) onto an existing name",
				a);
		note(r, "mv --no-clobber %s %s   # EEXIST", a, b);
		return true;
	}
	name_for(r, &r->g, to, m->dir ? 'd' : 'f', nm, sizeof(nm));
	if (child_named(to, nm))
		return false;
	rel(m, a, sizeof(a));
	r->tick++;
	unrecord(r, m);
	node_unlink(m);
	snprintf(m->name, sizeof(m->name), "%s", nm);
	node_link(to, m);
	rel(m, b, sizeof(b));
	if (syscall(SYS_renameat2, r->basefd, a, r->basefd, b,
		    RENAME_NOREPLACE))
		fs_fail(r, "renameat2(RENAME_NOREPLACE)", a);
	note(r, "mv --no-clobber %s %s", a, b);
	record(r, m);
	mark_moved(r, m);
	return true;
}

/* -O: a fresh directory for a layer, on BASE.ovl's file system or (host)
 * on the host's disk (/var/tmp, else /tmp: not a tmpfs, as a rule) */
static void layer_dir(struct run *r, bool host, const char *what, char *b,
		      size_t sz)
{
	if (host && !r->host[0]) {
		fmt_path(r->host, sizeof(r->host), "%s/inofd-oracle-low.XXXXXX",
			 access("/var/tmp", W_OK | X_OK) ? "/tmp" : "/var/tmp");
		if (!mkdtemp(r->host))
			die("mkdtemp (host layers)");
	}
	if (!r->ovl[0]) {
		fmt_path(r->ovl, sizeof(r->ovl), "%s.ovl", r->base);
		if (mkdir(r->ovl, 0755))
			die(r->ovl);
	}
	fmt_path(b, sz, "%s/%s%d", host ? r->host : r->ovl, what, ++r->nlayer);
	if (mkdir(b, 0755))
		die(b);
}

/*
 * -O: an overlay on abs over lower (made and filled by the caller: on the
 * host's disk, or beside the upper), upper and work on BASE.ovl's file
 * system.  Root gets redirect_dir=on (the lower's directories are renamed
 * in place); a user namespace may not have it, and gets userxattr (which
 * implies redirect_dir=nofollow).
 */
static int ovl_mount(struct run *r, const char *abs, const char *lower)
{
	char up[PATH_MAX], wk[PATH_MAX], o[PATH_MAX * 3 + 64];

	layer_dir(r, false, "u", up, sizeof(up));
	layer_dir(r, false, "w", wk, sizeof(wk));
	fmt_path(o, sizeof(o), "lowerdir=%s,upperdir=%s,workdir=%s,%s", lower,
		 up, wk, geteuid() == 0 ? "redirect_dir=on" : "userxattr");
	if (geteuid() == 0 && !mount("oracle", abs, "overlay", 0, o))
		return 0;
	fmt_path(o, sizeof(o), "lowerdir=%s,upperdir=%s,workdir=%s,userxattr",
		 lower, up, wk);
	r->noredir = true;
	return mount("oracle", abs, "overlay", 0, o);
}

/* nodes for what is in d already (an overlay's lower), sorted by name */
static void adopt(struct run *r, struct node *d)
{
	struct dirent **e;
	char b[PATH_MAX];
	int i, n;

	rel(d, b, sizeof(b));
	n = scandirat(r->basefd, b, &e, NULL, alphasort);
	if (n < 0)
		fs_fail(r, "scandir", b);
	for (i = 0; i < n; i++) {
		struct node *k;

		if (!strcmp(e[i]->d_name, ".") || !strcmp(e[i]->d_name, "..")) {
			free(e[i]);
			continue;
		}
		k = node_new(r, d, e[i]->d_name, e[i]->d_type == DT_DIR);
		free(e[i]);
		k->made = r->wstep;
		rel(k, b, sizeof(b));
		r->tick++;
		record(r, k);
		set_ino(r, k, b);
		k->low = k->dir;
		if (k->dir)
			adopt(r, k);
	}
	free(e);
}

/*
 * -M kinds of mount, one entry each (a new kind is one more entry), each
 * drawn only with its option: make it over abs (d's path, b relative to
 * BASE) and say how in the op list, or say false (nothing made); the
 * model's side is mount_op()'s, which calls fill, if any, once d shows
 * the mount.
 */
struct mkind {
	const char *name;
	unsigned int feat;
	bool (*make)(struct run *r, struct mnt *mt, struct node *d,
		     const char *abs, const char *b);
	void (*fill)(struct run *r, struct node *d);
};

/* a tmpfs */
static bool mk_tmpfs(struct run *r, struct mnt *mt, struct node *d,
		     const char *abs, const char *b)
{
	(void)mt; (void)d;
	if (mount("oracle", abs, "tmpfs", 0, "size=4m,mode=0755"))
		fs_fail(r, "mount tmpfs", abs);
	note(r, "mount -t tmpfs oracle %s", b);
	return true;
}

/* a bind mount of a fresh empty directory BASE/bsrc/bN */
static bool mk_bind(struct run *r, struct mnt *mt, struct node *d,
		    const char *abs, const char *b)
{
	char src[PATH_MAX];

	(void)mt; (void)d;
	fmt_path(src, sizeof(src), "%s/bsrc/b%d", r->base, ++r->mnt_made);
	if (mkdir(src, 0755))
		fs_fail(r, "mkdir", src);
	if (mount(src, abs, NULL, MS_BIND, NULL))
		fs_fail(r, "mount --bind", abs);
	note(r, "mount --bind bsrc/b%d %s", r->mnt_made, b);
	return true;
}

/*
 * -F: a bind of another directory S of the tree (the root included; not
 * at or below d, not in a mount): d is S under a second name, which the
 * library leaves out of its walk (docs/library.md), and so does the model
 * (collect()); S stays where it is until the umount (pin: never removed
 * or moved), after which d shows what it covered again
 */
static bool mk_alias(struct run *r, struct mnt *mt, struct node *d,
		     const char *abs, const char *b)
{
	struct node *s = pick(r, r->root, true, false);
	char sp[PATH_MAX], sb[PATH_MAX];

	if (!s || below(s, d) || mnt_of(s))
		return false;
	absp(r, s, sp, sizeof(sp));
	rel(s, sb, sizeof(sb));
	if (mount(sp, abs, NULL, MS_BIND, NULL))
		fs_fail(r, "mount --bind", abs);
	note(r, "mount --bind %s %s   # a directory of the tree onto another",
	     sb, b);
	mt->src = s;
	s->pin++;
	return true;
}

/*
 * -O: an overlay whose lower (on the host's disk, or on the upper's file
 * system) holds a file and a directory with a file in it
 */
static bool mk_ovl(struct run *r, struct mnt *mt, struct node *d,
		   const char *abs, const char *b)
{
	char low[PATH_MAX], e[PATH_MAX + 32];
	bool host = rnd(&r->g, 2);
	static const char *const ent[] = { "od/", "od/of", "of" };
	int fd, k;

	(void)mt; (void)d;
	if (r->noovl)
		return false;
	layer_dir(r, host, "l", low, sizeof(low));
	for (k = 0; k < 3; k++) {
		fmt_path(e, sizeof(e), "%s/%s", low, ent[k]);
		if (k == 0) {
			if (mkdir(e, 0755))
				die(e);
			continue;
		}
		fd = open(e, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			die(e);
		close(fd);
	}
	if (ovl_mount(r, abs, low))
		fs_fail(r, "mount overlay", abs);
	note(r, "mount -t overlay oracle -o lowerdir=%s(od/of of) %s   # upper on BASE.ovl",
	     host ? "HOST" : "BASE.ovl", b);
	return true;
}

/*
 * -F: an alias's root is its source's directory, which the library may
 * have recorded by identity (the source made in the batch of the bind,
 * not watched yet: alias() cannot tell), and then marks as a changed
 * mount point (docs/library.md, "Records read after a change"): the
 * source's events too may be flagged maybe stale
 */
static void alias_chg(struct run *r, const struct mnt *mt)
{
	char sp[PATH_MAX];

	if (!mt->src)
		return;
	absp(r, mt->src, sp, sizeof(sp));
	mchg_add(r, sp, mt->src);
}

static const struct mkind mkinds[] = {
	{ "tmpfs", F_MOUNTS, mk_tmpfs, NULL },
	{ "bind", F_MOUNTS, mk_bind, NULL },
	{ "alias", F_FS, mk_alias, NULL },
	{ "overlay", F_OVL, mk_ovl, adopt },
};

#define NMKINDS	(int)(sizeof(mkinds) / sizeof(mkinds[0]))

/*
 * -M: a mount of a kind of mkinds[] over a directory of the tree (not the
 * root, not inside another mount, no plain watch at or below it).  In the
 * model the directory's entries are put aside and it starts as the mount
 * shows it; the umount brings them back.
 */
static bool mount_op(struct run *r)
{
	char b[PATH_MAX], abs[PATH_MAX];
	struct mnt *mt = NULL;
	struct node *d;
	int i, kind;

	if (!r->can_mount || r->nmnt >= MAXMNT)
		return false;
	d = pick(r, r->root, true, true);
	if (!d || has_mount(d) || mnt_of(d) || has_writer(d))
		return false;
	for (i = 0; i < r->nregs; i++)
		if (!r->regs[i].ended && !r->regs[i].tree && r->regs[i].dir &&
		    below(r->regs[i].dir, d))
			return false;
	for (i = 0; i < MAXMNT; i++)
		if (!r->mnts[i].active) {
			mt = &r->mnts[i];
			break;
		}
	/* -M alone draws as it always did: tmpfs or bind */
	kind = rnd(&r->g, (feat & (F_FS | F_OVL)) ? NMKINDS : 2);
	if (!(feat & mkinds[kind].feat))
		return false;
	rel(d, b, sizeof(b));
	absp(r, d, abs, sizeof(abs));
	mt->src = NULL;
	if (!mkinds[kind].make(r, mt, d, abs, b))
		return false;
	mt->kind = kind;
	r->tick++;
	mchg_add(r, abs, d);
	alias_chg(r, mt);
	mt->active = true;
	mt->mp = d;
	snprintf(mt->path, sizeof(mt->path), "%s", b);
	for (i = 0; i < d->nkid; i++)
		unrecord(r, d->kid[i]);
	free(mt->hidden);
	mt->hidden = d->kid;
	mt->nhidden = d->nkid;
	mt->chidden = d->ckid;
	d->kid = NULL;
	d->nkid = d->ckid = 0;
	mt->ino = d->ino;
	set_ino(r, d, b);
	alt_push(d, mt->ino);
	d->mnt = (int)(mt - r->mnts) + 1;
	d->alias = mt->src != NULL;
	r->nmnt++;
	if (mkinds[kind].fill)
		mkinds[kind].fill(r, d);
	return true;
}

/*
 * d shows what its mount covered again (umount, mount --move away).  The
 * library dropped the covered directory's watch (and its subtree's) when
 * the mount came, and watches it again, as new, only once it has read the
 * table after the read that follows (mounts.c, DESIGN.md "Mounts inside a
 * tree"), on every backend: until then what is made in d, or moved into
 * it, and moved out again, is seen by no watch, neither its coming nor
 * its going (oracle seed 300144 -F -O -P -C, procfd).  d is as new as a
 * directory made now: what leaves from below it owes no MOVE_OUT
 * (dep_add()); d's own departure is owed (its parent's watch sees it).
 */
static void uncovered(struct run *r, struct node *d)
{
	d->made = r->wstep;
}

/* which: a mount's index, or -1 for a random active one */
static bool umount_op(struct run *r, int which)
{
	struct mnt *mt;
	struct node *d;
	char b[PATH_MAX], abs[PATH_MAX];
	int i, k;

	if (!r->nmnt)
		return false;
	if (which < 0) {
		k = rnd(&r->g, r->nmnt);
		for (i = 0; i < MAXMNT; i++)
			if (r->mnts[i].active && !k--)
				which = i;
	}
	mt = &r->mnts[which];
	d = mt->mp;
	rel(d, b, sizeof(b));
	absp(r, d, abs, sizeof(abs));
	if (umount2(abs, 0)) {
		if (errno != EBUSY || umount2(abs, MNT_DETACH))
			fs_fail(r, "umount", abs);
		note(r, "umount -l %s   # busy", b);
	} else {
		note(r, "umount %s", b);
	}
	r->tick++;
	mchg_add(r, abs, d);
	alias_chg(r, mt);
	while (d->nkid) {
		struct node *k2 = d->kid[d->nkid - 1];

		unrecord(r, k2);
		node_unlink(k2);
	}
	free(d->kid);
	d->kid = mt->hidden;
	d->nkid = mt->nhidden;
	d->ckid = mt->chidden;
	mt->hidden = NULL;
	mt->nhidden = mt->chidden = 0;
	for (i = 0; i < d->nkid; i++)
		record(r, d->kid[i]);
	alt_push(d, d->ino);
	d->ino = mt->ino;
	d->mnt = 0;
	d->alias = false;
	uncovered(r, d);
	if (mt->src)
		mt->src->pin--;
	mt->src = NULL;
	mt->active = false;
	mt->mp = NULL;
	r->nmnt--;
	return true;
}

static void umount_all(struct run *r)
{
	int i;

	for (i = 0; i < MAXMNT; i++)
		if (r->mnts[i].active)
			umount_op(r, i);
}


/* ------------------------------------------------------------ -P places */

/*
 * -P: the places any move takes its source and its destination from, one
 * entry each (a new kind of place is one more entry): a directory of
 * that place, or NULL when it has none now.
 */
static struct node *pl_tree(struct run *r)
{
	return pick(r, r->root, true, false);
}

/* the root's parent, or an ancestor up to BASE: the library watches
 * them all (to follow the root), the user none */
static struct node *pl_anc(struct run *r)
{
	struct node *d;
	unsigned int k;

	if (!r->root)
		return NULL;
	d = r->root->parent;
	for (k = rnd(&r->g, 3); k && d->parent; k--)
		d = d->parent;
	return d;
}

/* neither the chain (the root and its ancestors) nor in the tree, nor
 * a mount point or anything below one */
static bool off_chain(const struct run *r, const struct node *n)
{
	const struct node *c;

	if (!r->root || below(r->root, n) || in_tree(r, n))
		return false;
	for (c = n; c; c = c->parent)
		if (c->mnt)
			return false;
	return true;
}

/* an ancestor's other children and what is below them: sibling trees
 * (made when there are none), out/ */
static struct node *pl_side(struct run *r)
{
	struct list l = { 0 };
	struct node *n = NULL;
	int i, k;

	if (!r->root)
		return NULL;
	collect(r->top, true, false, &l);
	for (i = k = 0; i < l.n; i++)
		if (off_chain(r, l.v[i]))
			l.v[k++] = l.v[i];
	if (k && rnd(&r->g, 4))
		n = l.v[rnd(&r->g, k)];
	free(l.v);
	return n ? n : sibling(r, pl_anc(r), r->root);
}

static const struct place {
	const char *name;
	struct node *(*dir)(struct run *r);
} places[] = {
	{ "tree", pl_tree },
	{ "ancestor", pl_anc },
	{ "side", pl_side },
};

#define NPLACES	(int)(sizeof(places) / sizeof(places[0]))

/* an entry of d a move may take: not the chain, not out/, no mount or
 * writer in it */
static struct node *pl_entry(struct run *r, struct node *d)
{
	struct node *c[64];
	int i, k = 0;

	for (i = 0; i < d->nkid && k < 64; i++)
		if (!below(r->root, d->kid[i]) && d->kid[i] != r->out &&
		    !has_mount(d->kid[i]) && !has_writer(d->kid[i]))
			c[k++] = d->kid[i];
	return k ? c[rnd(&r->g, k)] : NULL;
}

/* m is leaving the tree: its MOVE_OUT is due, if the tree reports it */
static void dep_add(struct run *r, struct node *m)
{
	struct dep *e;
	const struct node *n;

	/* a directory that came this step may not be watched yet (the
	 * library walks it after the read) */
	for (n = m->parent; n && n != r->root; n = n->parent)
		if (n->made == r->wstep)
			return;
	if (!in_tree(r, m) || !(r->mask & IN_MOVED_FROM) || r->xd_on ||
	    r->regs[0].ended || !watched(r, m->parent) ||
	    r->ndeps >= (int)(sizeof(r->deps) / sizeof(r->deps[0])))
		return;
	e = &r->deps[r->ndeps++];
	absp(r, m, e->path, sizeof(e->path));
	snprintf(e->name, sizeof(e->name), "%s", m->name);
	e->rescans = r->rescans;
	e->seen = false;
}

/*
 * The tree's departure, if one is due: its MOVE_OUT, or a RENAME whose
 * source is the tree's (a plain watch on the destination took the half)
 */
static void dep_event(struct run *r, const struct inofd_event *ev)
{
	const struct reg *g = reg_of(r, ev->data);
	const char *name = ev->name, *path = ev->path;
	int i;

	if (ev->type == INOFD_EV_RENAME) {
		g = reg_of(r, ev->from_data);
		name = ev->from_name;
		path = ev->from_path;
	} else if (ev->type != INOFD_EV_MOVE_OUT) {
		return;
	}
	if (!g || !g->tree || !name)
		return;
	for (i = 0; i < r->ndeps; i++)
		if (!r->deps[i].seen && !strcmp(r->deps[i].name, name) &&
		    ((path && !strcmp(path, r->deps[i].path)) ||
		     (ev->flags & INOFD_EVF_STALE_PATH))) {
			r->deps[i].seen = true;
			return;
		}
}

/* at a check: every departure reported, unless a loss was said since */
static void dep_check(struct run *r)
{
	int i;

	for (i = 0; i < r->ndeps && !r->failed; i++)
		if (!r->deps[i].seen && !r->lost &&
		    r->rescans == r->deps[i].rescans)
			diverge(r, "[departure-missing] %s left the tree: no MOVE_OUT",
				r->deps[i].path);
	r->ndeps = 0;
}

/* mv from a place to a place (the same or another) */
static bool mvplace_op(struct run *r)
{
	const struct place *sp = &places[rnd(&r->g, NPLACES)];
	const struct place *dp = &places[rnd(&r->g, NPLACES)];
	struct node *sd = sp->dir(r), *dd, *m;
	char nm[32];

	if (!sd || !(m = sp == &places[0] ? pick(r, r->root, rnd(&r->g, 2),
						  true) : pl_entry(r, sd)))
		return false;
	if (m == r->root || m == r->out || below(r->root, m) ||
	    has_mount(m) || has_writer(m))
		return false;
	dd = dp->dir(r);
	if (!dd || below(dd, m) || !mount_ok(r, m, dd) ||
	    mnt_of(dd) != mnt_of(m->parent))
		return false;
	if (in_tree(r, dd) && !in_tree(r, m) &&
	    (count(r->root, true) + count(m, true) > r->maxdirs ||
	     count(r->root, false) + count(m, false) > MAXFILES))
		return false;
	if (in_tree(r, dd))
		name_for(r, &r->g, dd, m->dir ? 'd' : 'f', nm, sizeof(nm));
	else
		fresh(r, m->dir ? 'e' : 'g', nm, sizeof(nm));
	if (stuck(r, m))
		return false;
	note(r, "# place %s -> %s", sp->name, dp->name);
	if (!in_tree(r, dd))
		dep_add(r, m);
	move(r, m, dd, nm);
	return true;
}

/* -P -M: no plain watch at or below n (its path would move with a mount) */
static bool no_plain_below(const struct run *r, const struct node *n)
{
	int i;

	for (i = 0; i < r->nregs; i++)
		if (!r->regs[i].ended && !r->regs[i].tree && r->regs[i].dir &&
		    below(r->regs[i].dir, n))
			return false;
	return true;
}

/*
 * -P -M: mount --move of one of the mounts (over a directory of the tree,
 * or one moved out before) onto a directory of a place: within the tree,
 * out of it (a side directory) or into it.  In the model the mount point
 * left shows what it covered again, and the one reached has its entries
 * put aside and shows the mount's.  The ancestors are no destination: a
 * mount there hides the root (-U covers that).
 */
static bool mvmnt_op(struct run *r)
{
	const struct place *dp = &places[rnd(&r->g, NPLACES)];
	char a[PATH_MAX], b[PATH_MAX], ra[PATH_MAX], rb[PATH_MAX];
	struct node *d, *e, **kid;
	struct mnt *mt = NULL;
	int i, k, nkid, ckid;
	unsigned long root_ino;

	if (!r->can_mount || !r->nmnt || dp->dir == pl_anc)
		return false;
	k = rnd(&r->g, r->nmnt);
	for (i = 0; i < MAXMNT; i++)
		if (r->mnts[i].active && !k--)
			mt = &r->mnts[i];
	if (mt->src)
		return false;	/* -F: an alias stays where it is */
	d = mt->mp;
	e = dp->dir(r);
	if (!e || below(e, d) || below(d, e) || below(r->root, e) ||
	    has_mount(e) || mnt_of(e) || has_writer(e) || has_writer(d) ||
	    !no_plain_below(r, e) || !no_plain_below(r, d))
		return false;
	rel(d, ra, sizeof(ra));
	rel(e, rb, sizeof(rb));
	absp(r, d, a, sizeof(a));
	absp(r, e, b, sizeof(b));
	if (mount(a, b, NULL, MS_MOVE, NULL))
		fs_fail(r, "mount --move", b);
	note(r, "mount --move %s %s   # place %s", ra, rb, dp->name);
	r->tick++;
	mchg_add(r, a, d);
	mchg_add(r, b, e);
	/* d shows what it covered again */
	for (i = 0; i < d->nkid; i++)
		unrecord(r, d->kid[i]);
	kid = d->kid;
	nkid = d->nkid;
	ckid = d->ckid;
	root_ino = d->ino;
	d->kid = mt->hidden;
	d->nkid = mt->nhidden;
	d->ckid = mt->chidden;
	for (i = 0; i < d->nkid; i++)
		record(r, d->kid[i]);
	alt_push(d, d->ino);
	d->ino = mt->ino;
	d->mnt = 0;
	uncovered(r, d);
	/* e shows the mount's root and what is in it */
	for (i = 0; i < e->nkid; i++)
		unrecord(r, e->kid[i]);
	mt->hidden = e->kid;
	mt->nhidden = e->nkid;
	mt->chidden = e->ckid;
	e->kid = kid;
	e->nkid = nkid;
	e->ckid = ckid;
	for (i = 0; i < e->nkid; i++) {
		e->kid[i]->parent = e;
		record(r, e->kid[i]);
	}
	mt->ino = e->ino;
	alt_push(e, e->ino);
	e->ino = root_ino;
	e->mnt = (int)(mt - r->mnts) + 1;
	mt->mp = e;
	snprintf(mt->path, sizeof(mt->path), "%s", rb);
	return true;
}

/* ln m's inode as name in d (one tick) */
static struct node *relink_to(struct run *r, struct node *m, struct node *d,
			      const char *name)
{
	char s[PATH_MAX], b[PATH_MAX];
	struct node *n = node_new(r, d, name, false);

	rel(m, s, sizeof(s));
	rel(n, b, sizeof(b));
	r->tick++;
	record(r, n);
	if (linkat(r->basefd, s, r->basefd, b, 0))
		fs_fail(r, "link", b);
	n->ino = m->ino;
	note(r, "ln %s %s", s, b);
	return n;
}

static void rm_note(struct run *r, struct node *m)
{
	char b[PATH_MAX];

	rel(m, b, sizeof(b));
	note(r, "rm %s", b);
	remove_tree(r, m);
}

/*
 * One inode's name unlinked and linked again, before one read: rm x;
 * ln keep x, or an editor's save through a backup link: ln x x~; rm x;
 * ln x~ x; rm x~.  (fanotify merges the unlink and the link of x.)
 */
static bool relnk_op(struct run *r)
{
	struct node *m = pick(r, r->root, false, false), *d, *k, *x;
	char nm[32], xn[24];

	if (!m || m->link || !m->ino || count(r->root, false) + 2 > MAXFILES)
		return false;
	d = m->parent;
	snprintf(xn, sizeof(xn), "%s", m->name);
	if (rnd(&r->g, 2)) {
		snprintf(nm, sizeof(nm), "%.20s~", xn);
		if (child_named(d, nm))
			return false;
		k = relink_to(r, m, d, nm);
		rm_note(r, m);
		x = relink_to(r, k, d, xn);
		rm_note(r, k);
	} else {
		struct node *kd = rnd(&r->g, 2) ? d : pick(r, r->root, true,
							     false);

		if (mnt_of(kd) != mnt_of(d))
			return false;
		name_for(r, &r->g, kd, 'f', nm, sizeof(nm));
		k = relink_to(r, m, kd, nm);
		rm_note(r, m);
		x = relink_to(r, k, d, xn);
	}
	return x != NULL;
}

/* -F: cp -r m to/name (new inodes, one tick each) */
static void copy_to(struct run *r, struct node *m, struct node *to,
		    const char *name)
{
	struct node *n;
	int i;

	if (!m->dir) {
		make_file(r, to, name, true);
		return;
	}
	make_dir(r, to, name, &n);
	for (i = 0; i < m->nkid; i++)
		copy_to(r, m->kid[i], n, m->kid[i]->name);
}

/* -F: m may go to directory to across a mount, as mv does it (EXDEV) */
static bool xdev_ok(const struct run *r, const struct node *m,
		    const struct node *to)
{
	int i;

	if (!(feat & F_FS) || has_mount(m) || has_writer(m) ||
	    mnt_of(m->parent) == mnt_of(to) || below(to, m))
		return false;
	for (i = 0; i < r->nregs; i++)
		if (!r->regs[i].ended && !r->regs[i].tree && r->regs[i].dir &&
		    below(r->regs[i].dir, m))
			return false;
	return true;
}

/*
 * mv m to/name: rename(2), or across a mount (-F, xdev_ok()) what mv(1)
 * does when rename(2) says EXDEV: cp -r, then rm -r.  The tree sees
 * creates and deletes, never a move.
 */
static void relocate(struct run *r, struct node *m, struct node *to,
		     const char *name)
{
	char a[PATH_MAX], b[PATH_MAX];

	if (mnt_of(m->parent) == mnt_of(to) || !xdev_ok(r, m, to)) {
		move(r, m, to, name);
		return;
	}
	rel(m, a, sizeof(a));
	rel(to, b, sizeof(b));
	fmt_path(b + strlen(b), sizeof(b) - strlen(b), "/%s", name);
	if (!renameat(r->basefd, a, r->basefd, b) || errno != EXDEV)
		fs_fail(r, "rename (EXDEV expected)", a);
	note(r, "mv %s %s   # EXDEV: cp -r, then rm -r", a, b);
	copy_to(r, m, to, name);
	remove_tree(r, m);
}

enum op {
	OP_MKDIR, OP_MKDIRP, OP_CREATE, OP_WRITE, OP_UNLINK, OP_RMDIR,
	OP_RMR, OP_MVFILE, OP_MVDIR, OP_MVROOT, OP_MVOUT, OP_MVIN,
	OP_OUTSIDE, OP_CLEANOUT, OP_FLOOD, OP_PLAIN_ADD, OP_PLAIN_RM,
	/* -N */
	OP_REMK, OP_SWAP, OP_ONTO, OP_MVNEW,
	/* -M */
	OP_MOUNT, OP_UMOUNT,
	/* -E */
	OP_XCHG, OP_NOREPL,
	/* -W */
	OP_MVW,
	/* -Y */
	OP_SYMLINK, OP_HARDLINK, OP_RELINK,
	/* -P */
	OP_MVPLACE, OP_RELNK,
	/* -P -M */
	OP_MVMNT,
	OP_N
};

static const char *const opname[OP_N] = {
	"mkdir", "mkdirp", "create", "write", "unlink", "rmdir", "rmr",
	"mvfile", "mvdir", "mvroot", "mvout", "mvin", "outside", "cleanout",
	"flood", "plain", "plainrm",
	"remk", "swap", "onto", "mvnew", "mount", "umount",
	"xchg", "norepl", "mvw",
	"symlink", "hardlink", "relink",
	"mvplace", "relnk",
	"mvmnt",
};

/* -D: operations (and "relroot", "batch", "interleave") left out */
static const char *disabled = "";

static bool is_disabled(const char *what)
{
	size_t l = strlen(what);
	const char *t;

	for (t = disabled; (t = strstr(t, what)); t += l)
		if ((t == disabled || t[-1] == ',') &&
		    (t[l] == ',' || !t[l]))
			return true;
	return false;
}

static unsigned int weight[OP_N] = {
	[OP_MKDIR] = 14, [OP_MKDIRP] = 6, [OP_CREATE] = 14, [OP_WRITE] = 8,
	[OP_UNLINK] = 6, [OP_RMDIR] = 5, [OP_RMR] = 2, [OP_MVFILE] = 6,
	[OP_MVDIR] = 10, [OP_MVROOT] = 2, [OP_MVOUT] = 5, [OP_MVIN] = 5,
	[OP_OUTSIDE] = 4, [OP_CLEANOUT] = 1, [OP_FLOOD] = 1,
	[OP_PLAIN_ADD] = 2, [OP_PLAIN_RM] = 2,
	/* the ops of -N and -M: 0 unless asked for (main) */
};

static int plain_alive(const struct run *r)
{
	int i, n = 0;

	for (i = 0; i < r->nregs; i++)
		n += !r->regs[i].tree && !r->regs[i].ended;
	return n;
}

/*
 * Overflow the queue: with IN_MODIFY in the mask, alternate one-byte
 * writes to two new files (the kernel merges only an event identical to
 * the last one queued, so each write queues one); without it, create and
 * unlink files.  No read happens meanwhile.
 */
static void flood(struct run *r, struct node *d)
{
	char b[PATH_MAX], f[2][PATH_MAX + 32], nm[32];
	long i, n;
	int fd[2], k;

	rel(d, b, sizeof(b));
	if (r->mask & IN_MODIFY) {
		n = r->qmax + 64;
		note(r, "flood %s %ld   # two new files, %ld alternate writes, no read",
		     b, n, n);
		for (k = 0; k < 2; k++) {
			fresh(r, 'z', nm, sizeof(nm));
			fmt_path(f[k], sizeof(f[k]), "%s/%s/%s", r->base, b, nm);
			r->tick++;
			hist_open(r, f[k], 0);
			fd[k] = open(f[k], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
				     0644);
			if (fd[k] < 0)
				fs_fail(r, "create", f[k]);
		}
		for (i = 0; i < n; i++)
			if (write(fd[i & 1], "z", 1) != 1)
				fs_fail(r, "write", f[i & 1]);
		for (k = 0; k < 2; k++) {
			close(fd[k]);
			if (unlink(f[k]))
				fs_fail(r, "unlink", f[k]);
			r->tick++;
			hist_close(r, f[k], 0);
		}
		return;
	}
	n = r->qmax / 2 + 64;
	note(r, "flood %s %ld   # create+unlink %ld files, no read", b, n, n);
	for (i = 0; i < n; i++) {
		fresh(r, 'z', nm, sizeof(nm));
		fmt_path(f[0], sizeof(f[0]), "%s/%s/%s", r->base, b, nm);
		r->tick++;
		hist_open(r, f[0], 0);
		fd[0] = open(f[0], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		if (fd[0] < 0)
			fs_fail(r, "create", f[0]);
		close(fd[0]);
		if (unlink(f[0]))
			fs_fail(r, "unlink", f[0]);
		r->tick++;
		hist_close(r, f[0], 0);
	}
}

/* One random operation; false if it does not apply now (draw again). */
static bool do_op(struct run *r, enum op op)
{
	char b[PATH_MAX], nm[32];
	struct node *d, *m, *to;
	int ndirs = count(r->root, true), nfiles = count(r->root, false);
	int i, k;

	switch (op) {
	case OP_MKDIR:
		if (ndirs >= r->maxdirs)
			return false;
		d = pick(r, r->root, true, false);
		name_for(r, &r->g, d, 'd', nm, sizeof(nm));
		make_dir(r, d, nm, &m);
		rel(m, b, sizeof(b));
		note(r, "mkdir %s", b);
		return true;
	case OP_MKDIRP:
		if (ndirs + 4 > r->maxdirs)
			return false;
		d = pick(r, r->root, true, false);
		k = 2 + rnd(&r->g, 3);
		for (i = 0; i < k; i++) {
			name_for(r, &r->g, d, 'd', nm, sizeof(nm));
			make_dir(r, d, nm, &d);
		}
		rel(d, b, sizeof(b));
		note(r, "mkdir -p %s", b);
		return true;
	case OP_CREATE:
		if (nfiles >= MAXFILES)
			return false;
		d = pick(r, r->root, true, false);
		name_for(r, &r->g, d, 'f', nm, sizeof(nm));
		make_file(r, d, nm, rnd(&r->g, 2));
		rel(d, b, sizeof(b));
		note(r, "touch %s/%s", b, nm);
		return true;
	case OP_WRITE: {
		int fd;

		m = pick(r, r->root, false, false);
		if (!m || m->link)
			return false;
		rel(m, b, sizeof(b));
		fd = openat(r->basefd, b, O_WRONLY | O_APPEND | O_CLOEXEC);
		if (fd < 0 || write(fd, "y", 1) != 1)
			fs_fail(r, "write", b);
		close(fd);
		note(r, "echo y >> %s", b);
		return true;
	}
	case OP_UNLINK:
		m = pick(r, r->root, false, false);
		if (!m)
			return false;
		rel(m, b, sizeof(b));
		note(r, "rm %s", b);
		remove_tree(r, m);
		return true;
	case OP_RMDIR: {
		struct list l = { 0 };

		collect(r->root, true, false, &l);
		for (i = 1, k = 0; i < l.n; i++)
			if (!l.v[i]->nkid)
				l.v[k++] = l.v[i];
		m = k ? l.v[rnd(&r->g, k)] : NULL;
		free(l.v);
		if (!m || m->mnt || m->wdir || m->pin)
			return false;
		rel(m, b, sizeof(b));
		note(r, "rmdir %s", b);
		remove_tree(r, m);
		return true;
	}
	case OP_RMR:
		m = pick(r, r->root, true, true);
		if (!m || has_mount(m) || has_writer(m))
			return false;
		rel(m, b, sizeof(b));
		note(r, "rm -r %s", b);
		remove_tree(r, m);
		return true;
	case OP_MVFILE:
		m = pick(r, r->root, false, false);
		if (!m)
			return false;
		to = pick(r, r->root, true, false);
		name_for(r, &r->g, to, 'f', nm, sizeof(nm));
		if (!mount_ok(r, m, to) && !xdev_ok(r, m, to))
			return false;
		relocate(r, m, to, nm);
		return true;
	case OP_MVDIR: {
		struct list l = { 0 };

		m = pick(r, r->root, true, true);
		if (!m)
			return false;
		collect(r->root, true, false, &l);
		for (i = 0, k = 0; i < l.n; i++)
			if (!below(l.v[i], m))
				l.v[k++] = l.v[i];
		to = l.v[rnd(&r->g, k)];	/* the root is always there */
		free(l.v);
		name_for(r, &r->g, to, 'd', nm, sizeof(nm));
		if (!mount_ok(r, m, to) && !xdev_ok(r, m, to))
			return false;
		relocate(r, m, to, nm);
		return true;
	}
	case OP_MVROOT:
		name_for(r, &r->g, r->p, 'r', nm, sizeof(nm));
		move(r, r->root, r->p, nm);
		return true;
	case OP_MVOUT:
		if (count(r->out, true) - 1 >= MAXOUT)
			return false;
		m = pick(r, r->root, true, true);
		if (!m)
			return false;
		name_for(r, &r->g, r->out, 'o', nm, sizeof(nm));
		if (!mount_ok(r, m, r->out) && !xdev_ok(r, m, r->out))
			return false;
		relocate(r, m, r->out, nm);
		return true;
	case OP_MVIN:
		m = pick(r, r->out, true, true);
		if (!m || ndirs + count(m, true) > r->maxdirs)
			return false;
		to = pick(r, r->root, true, false);
		name_for(r, &r->g, to, 'd', nm, sizeof(nm));
		if (!mount_ok(r, m, to) && !xdev_ok(r, m, to))
			return false;
		relocate(r, m, to, nm);
		return true;
	case OP_OUTSIDE:
		d = pick(r, r->out, true, true);
		if (!d)
			return false;
		name_for(r, &r->g, d, 'x', nm, sizeof(nm));
		make_file(r, d, nm, true);
		rel(d, b, sizeof(b));
		note(r, "touch %s/%s   # outside the tree", b, nm);
		return true;
	case OP_CLEANOUT:
		m = pick(r, r->out, true, true);
		/* -P -M: a mount moved out of the tree is never removed */
		if (!m || has_writer(m) || has_mount(m))
			return false;
		rel(m, b, sizeof(b));
		note(r, "rm -r %s", b);
		remove_tree(r, m);
		return true;
	case OP_FLOOD:
		flood(r, pick(r, r->root, true, false));
		return true;
	case OP_PLAIN_ADD: {
		struct reg *g;
		int wd;

		if (!r->use_plain || plain_alive(r) >= MAXPLAIN ||
		    r->nregs >= MAXREGS)
			return false;
		d = pick(r, r->root, true, true);
		if (!d || d->plain >= 0 || mnt_of(d))
			return false;
		g = &r->regs[r->nregs];
		memset(g, 0, sizeof(*g));
		absp(r, d, g->path, sizeof(g->path));
		rel(d, b, sizeof(b));
		wd = inofd_watch_path(r->in, g->path, r->mask, &g->tag);
		note(r, "watch_path %s   # plain watch, reg %d, wd %d", b,
		     r->nregs, wd);
		if (wd < 0 && wd == -ENOSPC && r->watch_limit &&
		    (r->limited || !watched(r, d))) {
			/*
			 * -L: the tree said it hit a limit, or (-X) does not
			 * watch this directory, so there may be no kernel
			 * watch to share: a new one may not fit
			 */
			note(r, "# plain watch refused after a limit: %s",
			     inofd_strerror(wd));
			return true;
		}
		if (wd < 0) {
			diverge(r, "[plain] inofd_watch_path(%s) inside the tree: %s",
				b, inofd_strerror(wd));
			return true;
		}
		g->wd = wd;
		g->dir = d;
		d->plain = r->nregs++;
		return true;
	}
	case OP_PLAIN_RM: {
		struct reg *g = NULL;
		int ret;

		k = plain_alive(r);
		if (!k)
			return false;
		k = rnd(&r->g, k);
		for (i = 0; i < r->nregs; i++)
			if (!r->regs[i].tree && !r->regs[i].ended && !k--) {
				g = &r->regs[i];
				break;
			}
		ret = inofd_unwatch(r->in, g->wd);
		note(r, "unwatch %d   # plain watch, reg %d", g->wd, i);
		g->ended = true;
		if (g->dir)
			g->dir->plain = -1;
		g->dir = NULL;
		if (ret < 0)
			diverge(r, "[plain] inofd_unwatch(%d) of a live plain watch: %s",
				g->wd, inofd_strerror(ret));
		return true;
	}
	case OP_REMK:
		/* mv d away && mkdir d */
		if (ndirs + 1 > r->maxdirs || count(r->out, true) - 1 >= MAXOUT)
			return false;
		m = pick(r, r->root, true, true);
		if (!m)
			return false;
		d = m->parent;
		snprintf(b, sizeof(b), "%s", m->name);
		if (rnd(&r->g, 2)) {
			to = r->out;
		} else {
			to = pick(r, r->root, true, false);
			if (below(to, m))
				return false;
		}
		if (!mount_ok(r, m, to))
			return false;
		name_for(r, &r->g, to, 'd', nm, sizeof(nm));
		move(r, m, to, nm);
		make_dir(r, d, b, &m);
		rel(m, b, sizeof(b));
		note(r, "mkdir %s   # the name just freed", b);
		return true;
	case OP_SWAP: {
		/* mv root/d out/d && mv root/e root/d */
		char old[32];

		if (count(r->out, true) - 1 >= MAXOUT)
			return false;
		m = pick(r, r->root, true, true);
		if (!m || !mount_ok(r, m, r->out))
			return false;
		d = m->parent;
		snprintf(old, sizeof(old), "%s", m->name);
		if (child_named(r->out, old))
			name_for(r, &r->g, r->out, 'o', nm, sizeof(nm));
		else
			snprintf(nm, sizeof(nm), "%s", old);
		to = pick(r, r->root, rnd(&r->g, 2), true);
		if (!to || to == m || below(to, m) || below(d, to) ||
		    !mount_ok(r, to, d))
			return false;
		move(r, m, r->out, nm);
		move(r, to, d, old);
		return true;
	}
	case OP_ONTO: {
		/*
		 * rename onto an existing empty directory (or file), the
		 * source new in its parent, which is then moved out of the
		 * tree: all before one read when the step batches.
		 */
		struct node *src, *victim;

		if (rnd(&r->g, 3) == 0) {
			m = pick(r, r->root, false, false);
			victim = pick(r, r->root, false, false);
			if (!m || !victim || m == victim ||
			    !mount_ok(r, m, victim->parent))
				return false;
			move(r, m, victim->parent, victim->name);
			return true;
		}
		if (ndirs + 1 > r->maxdirs || count(r->out, true) - 1 >= MAXOUT)
			return false;
		d = pick(r, r->root, true, true);	/* the source's parent */
		victim = pick(r, r->root, true, true);
		if (!d || !victim || victim->nkid || victim->mnt ||
		    victim->wdir ||
		    below(d, victim) || !mount_ok(r, d, r->out) ||
		    mnt_of(d) != mnt_of(victim->parent))
			return false;
		name_for(r, &r->g, d, 'd', nm, sizeof(nm));
		make_dir(r, d, nm, &src);
		rel(src, b, sizeof(b));
		note(r, "mkdir %s", b);
		move(r, src, victim->parent, victim->name);
		if (rnd(&r->g, 4)) {
			name_for(r, &r->g, r->out, 'o', nm, sizeof(nm));
			move(r, d, r->out, nm);
		}
		return true;
	}
	case OP_MVNEW:
		/* mkdir x && mv y x/y */
		if (ndirs + 1 > r->maxdirs)
			return false;
		d = pick(r, r->root, true, false);
		m = pick(r, r->root, rnd(&r->g, 2), true);
		if (!m || below(d, m) || !mount_ok(r, m, d))
			return false;
		name_for(r, &r->g, d, 'd', nm, sizeof(nm));
		make_dir(r, d, nm, &to);
		rel(to, b, sizeof(b));
		note(r, "mkdir %s", b);
		snprintf(nm, sizeof(nm), "%s", m->name);
		move(r, m, to, nm);
		return true;
	case OP_MVW: {
		/*
		 * -W: a writer's directory, or one of its ancestors below the
		 * root, renamed inside the tree while the writer works in it
		 */
		struct list l = { 0 };

		if (!r->nwr)
			return false;
		m = r->wr[rnd(&r->g, r->nwr)].dir;
		if (!in_tree(r, m) || m == r->root)
			return false;
		for (k = rnd(&r->g, 3); k > 0 && m->parent != r->root; k--)
			m = m->parent;
		collect(r->root, true, false, &l);
		for (i = 0, k = 0; i < l.n; i++)
			if (!below(l.v[i], m))
				l.v[k++] = l.v[i];
		to = l.v[rnd(&r->g, k)];	/* the root is always there */
		free(l.v);
		name_for(r, &r->g, to, 'd', nm, sizeof(nm));
		if (!mount_ok(r, m, to))
			return false;
		move(r, m, to, nm);
		return true;
	}
	case OP_MOUNT:
		return mount_op(r);
	case OP_UMOUNT:
		return umount_op(r, -1);
	case OP_XCHG:
		return xchg_op(r);
	case OP_NOREPL:
		return norepl_op(r);
	case OP_SYMLINK: {
		/* a symlink in the tree (or in out/): an entry, never a
		 * directory of the tree, whatever it points to */
		static const char *const tg[] = { "..", ".", "nowhere" };
		char t[PATH_MAX];

		if (nfiles >= MAXFILES)
			return false;
		d = rnd(&r->g, 4) ? pick(r, r->root, true, false) :
				    pick(r, r->out, true, false);
		k = rnd(&r->g, 5);
		if (k < 3) {
			fmt_path(t, sizeof(t), "%s", tg[k]);
		} else {
			to = pick(r, k == 3 ? r->root : r->out, true, false);
			if (!to)
				return false;
			absp(r, to, t, sizeof(t));
		}
		name_for(r, &r->g, d, 'f', nm, sizeof(nm));
		m = node_new(r, d, nm, false);
		m->link = true;
		rel(m, b, sizeof(b));
		r->tick++;
		record(r, m);
		if (symlinkat(t, r->basefd, b))
			fs_fail(r, "symlink", b);
		set_ino(r, m, b);
		note(r, "ln -s %s %s", t, b);
		return true;
	}
	case OP_HARDLINK: {
		/* a second name for a file of the tree, in it or in out/ */
		char s[PATH_MAX];

		m = pick(r, r->root, false, false);
		if (!m || m->link || nfiles >= MAXFILES)
			return false;
		d = rnd(&r->g, 2) ? pick(r, r->root, true, false) :
				    pick(r, r->out, true, false);
		if (!d || mnt_of(d) != mnt_of(m->parent))
			return false;	/* EXDEV */
		rel(m, s, sizeof(s));
		name_for(r, &r->g, d, 'f', nm, sizeof(nm));
		to = node_new(r, d, nm, false);
		rel(to, b, sizeof(b));
		r->tick++;
		record(r, to);
		if (linkat(r->basefd, s, r->basefd, b, 0))
			fs_fail(r, "link", b);
		to->ino = m->ino;
		note(r, "ln %s %s", s, b);
		return true;
	}
	case OP_MVPLACE:
		return mvplace_op(r);
	case OP_MVMNT:
		return mvmnt_op(r);
	case OP_RELNK:
		return relnk_op(r);
	case OP_RELINK: {
		/* the link the root was given through: ln -sfn elsewhere,
		 * or back to where the root (or a) now is */
		char t[PATH_MAX];
		const char *ln = r->rootlink == 1 ? "lr" : "la";

		if (!r->rootlink)
			return false;
		if (rnd(&r->g5, 2))
			fmt_path(t, sizeof(t), "out");
		else if (r->rootlink == 2)
			fmt_path(t, sizeof(t), "%s", r->a->name);
		else if (r->root)
			rel(r->root, t, sizeof(t));
		else
			return false;
		fmt_path(b, sizeof(b), "%s.new", ln);
		if (symlinkat(t, r->basefd, b) ||
		    renameat(r->basefd, b, r->basefd, ln))
			fs_fail(r, "ln -sfn", ln);
		r->tick++;
		note(r, "ln -sfn %s %s", t, ln);
		return true;
	}
	default:
		return false;
	}
}

static void random_op(struct run *r)
{
	unsigned int tot = 0, x, i;

	for (i = 0; i < OP_N; i++)
		tot += weight[i];
	if (!tot) {
		fprintf(stderr, "oracle: -D left no operation\n");
		exit(2);
	}
	for (;;) {
		x = rnd(&r->g, tot);
		for (i = 0; i < OP_N && x >= weight[i]; i++)
			x -= weight[i];
		if (do_op(r, (enum op)i))
			return;
	}
}

/* ------------------------------------------------------------ -W writers */

static bool full_write(int fd, const void *b, size_t n)
{
	const char *p = b;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

static bool full_read(int fd, void *b, size_t n)
{
	char *p = b;

	while (n) {
		ssize_t w = read(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

static bool wmake(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
			0644);
	bool ok = fd >= 0 && write(fd, "w", 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * The writer process: files in its directory W (by a descriptor: wherever
 * the test renames W meanwhile) and in BASE/wx<k>, until the test closes
 * the stop pipe or WMAX files.  Then it deletes what it kept in W, says
 * how many files it made and their kinds, and exits.  Never returns.
 */
static void writer_child(int k, unsigned long step, uint64_t seed, int wfd,
			 int xfd, int stopfd, int backfd)
{
	struct pollfd pf = { .fd = stopfd, .events = POLLIN };
	char kind[WMAX], keep[WMAX], nm[64], nr[72];
	struct rng g;
	int n = 0, i, bad = 0;

	rng_seed(&g, seed ^ ((uint64_t)(k + 1) << 40) ^ step);
	for (i = 0; i < WMAX && !bad; i++) {
		unsigned int x = rnd(&g, 8);

		/* it says it started after a few files (the test's
		 * operations then race with it), and makes WMIN at least */
		if (i == 8 && !full_write(backfd, "s", 1))
			_exit(3);
		if (i >= WMIN && poll(&pf, 1, 0) > 0)
			break;
		keep[i] = 0;
		kind[i] = x < 5 ? 'x' : x < 7 ? 'y' : 'z';
		snprintf(nm, sizeof(nm), "%c%d_%lu_%d", kind[i], k, step, i);
		snprintf(nr, sizeof(nr), "%s.r", nm);
		switch (kind[i]) {
		case 'x':
			if (!wmake(wfd, nm)) {
				bad = 1;
				break;
			}
			x = rnd(&g, 3);
			if (x == 0 && renameat(wfd, nm, wfd, nr))
				bad = 2;
			else if (x == 1 && unlinkat(wfd, nm, 0))
				bad = 3;
			keep[i] = x == 0 ? 2 : x == 2 ? 1 : 0;
			break;
		case 'y':
			if (!wmake(wfd, nm) || renameat(wfd, nm, xfd, nm) ||
			    unlinkat(xfd, nm, 0))
				bad = 4;
			break;
		case 'z':
			if (!wmake(xfd, nm) || renameat(xfd, nm, wfd, nm))
				bad = 5;
			else if (!rnd(&g, 2))
				keep[i] = 1;
			else if (unlinkat(wfd, nm, 0))
				bad = 6;
			break;
		}
		if (!rnd(&g, 4)) {
			/* outside: never reported */
			snprintf(nm, sizeof(nm), "q%d_%lu_%d", k, step, i);
			if (!wmake(xfd, nm) || unlinkat(xfd, nm, 0))
				bad = 7;
		}
		n = i + 1;
	}
	if (n < 8 && !full_write(backfd, "s", 1))
		_exit(3);
	if (!bad)
		poll(&pf, 1, -1);	/* until the test says stop */
	for (i = 0; i < n && !bad; i++) {
		snprintf(nm, sizeof(nm), "%c%d_%lu_%d", kind[i], k, step, i);
		snprintf(nr, sizeof(nr), "%s.r", nm);
		if (keep[i] && unlinkat(wfd, keep[i] == 2 ? nr : nm, 0))
			bad = 8;
	}
	if (bad)
		n = -bad;
	if (!full_write(backfd, &n, sizeof(n)) ||
	    (n > 0 && !full_write(backfd, kind, (size_t)n)))
		_exit(3);
	_exit(0);
}

/*
 * Is writer w's directory watched by the tree now, and was it all along
 * since the step began?  Not if it, or a directory above it, was made or
 * came into the tree during the step: a rename into a directory the
 * library has not walked yet has no IN_MOVED_TO it can see (a move out,
 * then a new directory: what happened in between is not seen, as in any
 * new directory before its watch).
 */
static bool writer_watched(const struct run *r, const struct writer *w)
{
	const struct node *n;

	if (!r->root || r->regs[0].ended || !in_tree(r, w->dir) ||
	    !watched(r, w->dir))
		return false;
	for (n = w->dir; n && n != r->root; n = n->parent)
		if (n->made == r->wstep)
			return false;
	return true;
}

/* At the start of a step: each writer starts working. */
static void writers_start(struct run *r)
{
	char b[PATH_MAX], c;
	int k, wfd, stop[2], back[2];

	r->wstep++;
	r->w_rescans = r->rescans;
	for (k = 0; k < r->nwr; k++) {
		struct writer *w = &r->wr[k];

		absp(r, w->dir, b, sizeof(b));
		wfd = open(b, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (wfd < 0 && (errno == EMFILE || errno == ENFILE)) {
			note(r, "# writer %d not started: %s", k,
			     strerror(errno));	/* -L */
			continue;
		}
		if (wfd < 0)
			fs_fail(r, "open", b);
		if (pipe2(stop, O_CLOEXEC)) {
			close(wfd);
			note(r, "# writer %d not started: %s", k,
			     strerror(errno));
			continue;
		}
		if (pipe2(back, O_CLOEXEC)) {
			close(wfd);
			close(stop[0]);
			close(stop[1]);
			note(r, "# writer %d not started: %s", k,
			     strerror(errno));
			continue;
		}
		w->step = r->wstep;
		fflush(NULL);
		w->pid = fork();
		if (w->pid < 0)
			die("fork");
		if (!w->pid) {
			int j;

			/* the other writers' pipes: their ends are theirs */
			for (j = 0; j < k; j++)
				if (r->wr[j].pid) {
					close(r->wr[j].stop);
					close(r->wr[j].back);
				}
			close(stop[1]);
			close(back[0]);
			writer_child(k, w->step, r->seed, wfd, w->xfd, stop[0],
				     back[1]);
		}
		close(wfd);
		close(stop[0]);
		close(back[1]);
		w->stop = stop[1];
		w->back = back[0];
		if (!full_read(w->back, &c, 1))
			die("writer start");
		memset(w->cnt, 0, sizeof(w->cnt));
		w->nfiles = 0;
		w->ran = true;
		w->strict = writer_watched(r, w);
		rel(w->dir, b, sizeof(b));
		note(r, "# writer %d (pid %d) works in %s, step %lu   # x%d_%lu_*: make, write, rename/delete; y*: make, move out; z*: move in, delete",
		     k, (int)w->pid, b, w->step, k, w->step);
	}
}

/* After each operation: a writer's directory left the tree (or -X). */
static void writers_track(struct run *r)
{
	int k;

	for (k = 0; k < r->nwr; k++)
		if (r->wr[k].pid && !writer_watched(r, &r->wr[k]))
			r->wr[k].strict = false;
}

/* Before a step's check: each writer stops, cleans up and says what it did. */
static void writers_stop(struct run *r)
{
	int k, n, st;

	for (k = 0; k < r->nwr; k++) {
		struct writer *w = &r->wr[k];

		if (!w->pid)
			continue;
		close(w->stop);
		if (!full_read(w->back, &n, sizeof(n)) ||
		    (n > 0 && !full_read(w->back, w->kind, (size_t)n)))
			n = -100;
		close(w->back);
		if (waitpid(w->pid, &st, 0) < 0 || !WIFEXITED(st) ||
		    WEXITSTATUS(st) || n < 0) {
			fprintf(stderr, "oracle: seed %llu: writer %d failed (%d, status 0x%x) (test bug)\n",
				(unsigned long long)r->seed, k, n, st);
			exit(2);
		}
		w->pid = 0;
		w->nfiles = n;
		note(r, "# writer %d stopped: %d files%s", k, n,
		     w->strict ? "" : " (its directory was not watched all along)");
	}
}

/*
 * After the check's drain: every event of a writer's files arrived once
 * (a file made and closed in W: one IN_CLOSE_WRITE; deleted in W: one
 * IN_DELETE; moved out: one MOVE_OUT; moved in: one MOVE_IN), when its
 * directory was in the tree and watched all along and nothing was lost
 * (no RESCAN, no ERROR); otherwise at most once.  An x file's rename in W
 * is never a MOVE_OUT or a MOVE_IN.
 */
static void writers_check(struct run *r)
{
	int k, i, j;

	for (k = 0; k < r->nwr && !r->failed; k++) {
		struct writer *w = &r->wr[k];
		bool strict = w->strict && r->rescans == r->w_rescans &&
			      !r->lost && !r->limited;

		if (!w->ran)
			continue;
		w->ran = false;
		for (i = 0; i < w->nfiles && !r->failed; i++) {
			unsigned char want[5] = { 0 };
			char c = w->kind[i];
			static const char *const what[5] = {
				"IN_CLOSE_WRITE", "IN_DELETE", "MOVE_OUT",
				"MOVE_IN", "MOVE_OUT/MOVE_IN of a rename in its directory" };

			want[W_CLOSE] = c != 'z' && (r->mask & IN_CLOSE_WRITE);
			want[W_DEL] = c != 'y' && (r->mask & IN_DELETE);
			want[W_OUT] = c == 'y' && (r->mask & IN_MOVED_FROM);
			want[W_IN] = c == 'z' && (r->mask & IN_MOVED_TO);
			for (j = 0; j < 5; j++) {
				if (w->cnt[i][j] > want[j] && (j != W_SPLIT || strict))
					diverge(r, "[writer-%s] writer %d's %c%d_%lu_%d: %d %s (want %s%d)",
						j == W_SPLIT ? "split" : "extra",
						k, c, k, w->step, i, w->cnt[i][j],
						what[j], strict ? "" : "at most ", want[j]);
				else if (strict && w->cnt[i][j] < want[j])
					diverge(r, "[writer-missing] writer %d's %c%d_%lu_%d: %d %s (want %d; its directory was watched all along, nothing lost)",
						k, c, k, w->step, i, w->cnt[i][j],
						what[j], want[j]);
				if (r->failed)
					break;
			}
		}
		r->wfiles += (unsigned long)w->nfiles;
		r->wstrict += strict;
	}
}

/* ------------------------------------------------------------ checks */

static int count_watched(struct run *r)
{
	struct list l = { 0 };
	int i, c = 0;

	if (!r->root)
		return 0;
	collect(r->root, true, false, &l);
	for (i = 0; i < l.n; i++)
		c += watched(r, l.v[i]);
	free(l.v);
	return c;
}

static void check(struct run *r, const char *when)
{
	struct list l = { 0 };
	char b[PATH_MAX + 32];
	int i, want;

	note(r, "# check (%s)", when);
	drain(r);
	if (!r->failed)
		writers_check(r);
	if (!r->failed)
		dep_check(r);
	r->rescans_at_check = r->rescans;
	mchg_reset(r);
	if (r->failed)
		goto out;

	/* every ended registration has had its IN_IGNORED */
	for (i = 0; i < r->nregs; i++)
		if (r->regs[i].ended && r->regs[i].ignored != 1) {
			diverge(r, "[ignored-missing] %s registration %d (wd %d) ended but got %d IN_IGNORED",
				r->regs[i].tree ? "tree" : "plain", i,
				r->regs[i].wd, r->regs[i].ignored);
			goto out;
		}

	/* probes: the tree, p/ and out/, and every plain watch's directory */
	if (r->root)
		collect(r->root, true, false, &l);
	list_add(&l, r->p);
	collect(r->out, true, false, &l);
	if (feat & F_PLACES) {
		/* -P: the ancestors' other children, and what came there */
		struct list o = { 0 };

		collect(r->top, true, false, &o);
		for (i = 0; i < o.n; i++)
			if (off_chain(r, o.v[i]) && !below(o.v[i], r->out) &&
			    o.v[i]->plain < 0)
				list_add(&l, o.v[i]);
		free(o.v);
	}
	for (i = 0; i < r->nregs; i++)
		if (!r->regs[i].ended && r->regs[i].dir && r->regs[i].dir != r->p &&
		    !in_tree(r, r->regs[i].dir) && !below(r->regs[i].dir, r->out))
			list_add(&l, r->regs[i].dir);
	r->probes = xcalloc(l.n ? l.n : 1, sizeof(*r->probes));
	r->nprobes = l.n;
	r->probe_base = r->uniq + 1;
	r->uniq += l.n;
	for (i = 0; i < l.n; i++) {
		struct probe *pr = &r->probes[i];
		int fd;

		pr->dir = l.v[i];
		pr->want_tree = in_tree(r, l.v[i]) && watched(r, l.v[i]) &&
				!r->regs[0].ended;
		pr->want_plain = l.v[i]->plain;
		rel(l.v[i], b, sizeof(b));
		if (fstatat(r->basefd, b[0] ? b : ".", &pr->st, 0))
			fs_fail(r, "stat", b);
		fmt_path(b + strlen(b), sizeof(b) - strlen(b), "/probe%lu",
			 r->probe_base + i);
		fmt_path(pr->path, sizeof(pr->path), "%s/%s", r->base, b);
		r->tick++;
		hist_open(r, pr->path, 0);
		fd = openat(r->basefd, b, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC,
			    0644);
		if (fd < 0)
			fs_fail(r, "create", b);
		close(fd);
	}
	note(r, "touch probe%lu..probe%lu   # one in each of %d directories",
	     r->probe_base, r->probe_base + l.n - 1, l.n);
	drain(r);
	for (i = 0; i < l.n && !r->failed; i++) {
		struct probe *pr = &r->probes[i];

		/*
		 * -L: after the library reported ENOSPC (max_user_watches)
		 * for the tree, a missing event is what it announced (and
		 * counted): only extra or wrong ones diverge.
		 */
		/*
		 * A tree the library said is lost (INOFD_EVF_LOST: its root
		 * cannot be found, e.g. renames above it with no chain of
		 * watches, -L's EMFILE) adds no new directory from then on
		 * (inofd_watch_tree_at(3)): the same.
		 */
		if ((r->limited || r->tree_lost) &&
		    pr->n_tree < pr->want_tree) {
			r->excused++;
			pr->want_tree = pr->n_tree;
		}
		if (pr->n_tree != pr->want_tree || pr->n_other ||
		    pr->n_plain != (pr->want_plain >= 0)) {
			diverge(r, "[probe-%s] %s: %d event(s) with the tree's data (want %d), %d with its plain watch's (want %d), %d with other data",
				pr->n_tree < pr->want_tree ? "missing" :
				pr->n_tree > pr->want_tree ? "extra" : "data",
				pr->path, pr->n_tree, pr->want_tree,
				pr->n_plain, pr->want_plain >= 0,
				pr->n_other);
		} else if (pr->bad[0]) {
			diverge(r, "[probe-%s] %s reported with %s%s",
				strncmp(pr->bad, "ino ", 4) ? "path" : "ino",
				pr->path, pr->bad,
				r->lost ? "" : " (no loss was reported)");
		}
	}
	if (r->failed)
		goto out;

	want = count_watched(r);
	/* with a mount active, the covered directories' watches are moot */
	if (r->root && !r->lost && !plain_alive(r) && !r->regs[0].ended &&
	    !r->nmnt && !r->limited) {
		int c = inofd_watch_count(r->in);

		if (c != want)
			diverge(r, "[count] inofd_watch_count() is %d, the tree has %d directories",
				c, want);
	}

	/* the probes go; their events are checked like any other */
	for (i = 0; i < l.n; i++) {
		rel(r->probes[i].dir, b, sizeof(b));
		fmt_path(b + strlen(b), sizeof(b) - strlen(b), "/probe%lu",
			 r->probe_base + i);
		if (unlinkat(r->basefd, b, 0))
			fs_fail(r, "unlink", b);
		r->tick++;
		hist_close(r, r->probes[i].path, 0);
	}
	if (l.n)
		note(r, "rm probe*");
	drain(r);
	r->qtick = r->tick;
out:
	free(l.v);
	free(r->probes);
	r->probes = NULL;
	r->nprobes = 0;
}

struct conf {
	int nops;
	long qset;		/* -q: lower max_queued_events (root) */
	bool verbose;
};

/* ------------------------------------------------------------ -X -L -M setup */

static int watch_tree(struct run *r, int dirfd, const char *path)
{
	struct inofd_tree_opts to;

#if INOFD_VERSION_MAJOR > 0 || INOFD_VERSION_MINOR >= 3
	/* 0.3: one entry point, data and flags in the options */
	memset(&to, 0, sizeof(to));
	to.sz = sizeof(to);
	to.data = &r->regs[0].tag;
	if (r->xd_on) {
		to.exclude = xd_exclude;
		to.max_depth = r->max_depth;
	}
	return inofd_watch_tree_at(r->in, dirfd, path, r->mask, &to);
#else
	if (!r->xd_on)
		return inofd_watch_tree(r->in, dirfd, path, r->mask, 0,
					&r->regs[0].tag);
	memset(&to, 0, sizeof(to));
	to.sz = sizeof(to);
	to.exclude = xd_exclude;
	to.max_depth = r->max_depth;
	return inofd_watch_tree_opts(r->in, dirfd, path, r->mask, 0,
				     &r->regs[0].tag, &to);
#endif
}

/*
 * -L: where max_user_watches is set.  In a user namespace of our own
 * (/proc/sys/user/max_inotify_watches is per namespace, and the limit of
 * every ancestor namespace holds too) when one can be made: nothing else
 * on the machine is affected.  In the guest as root: the global sysctl,
 * restored after each seed.
 */
static const char *watch_limit_file;
static long watch_limit_old = -1;
static bool in_userns;
static unsigned long skipped_limits, skipped_mounts, refusals,
		     unseen_mounts, skipped_ovl, skipped_ovl_fan;

static long read_long(const char *f)
{
	FILE *fp = fopen(f, "r");
	long v = -1;

	if (fp) {
		if (fscanf(fp, "%ld", &v) != 1)
			v = -1;
		fclose(fp);
	}
	return v;
}

static int write_str(const char *f, const char *s)
{
	int fd = open(f, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

static int write_long(const char *f, long v)
{
	char b[32];

	snprintf(b, sizeof(b), "%ld\n", v);
	return write_str(f, b);
}

/* a user namespace mapping our own uid and gid only */
static bool enter_userns(void)
{
	char b[64];
	uid_t u = geteuid();
	gid_t g = getegid();

	if (in_userns)
		return true;
	if (unshare(CLONE_NEWUSER))
		return false;
	snprintf(b, sizeof(b), "%u %u 1\n", u, u);
	if (write_str("/proc/self/uid_map", b))
		die("uid_map");
	if (write_str("/proc/self/setgroups", "deny\n") && errno != ENOENT)
		die("setgroups");
	snprintf(b, sizeof(b), "%u %u 1\n", g, g);
	if (write_str("/proc/self/gid_map", b))
		die("gid_map");
	in_userns = true;
	return true;
}

/* once per process, before any instance exists */
static void features_setup(void)
{
	bool guest_root = geteuid() == 0 && getenv("REQUIRE_INOTIFY_WATCH");

	if (feat & F_LIMITS) {
		if (guest_root) {
			watch_limit_file = "/proc/sys/fs/inotify/max_user_watches";
		} else if (enter_userns()) {
			watch_limit_file = "/proc/sys/user/max_inotify_watches";
		}
		if (watch_limit_file)
			watch_limit_old = read_long(watch_limit_file);
		if (watch_limit_old <= 0)
			watch_limit_file = NULL;
	}
	if (feat & (F_MOUNTS | F_UMNT)) {
		/* root: a mount namespace of our own; else in a user one */
		if (geteuid() != 0 && !in_userns && !enter_userns())
			return;
		if (unshare(CLONE_NEWNS) ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
			return;
		mounts_ok = true;
	}
}

/* the RLIMIT_NOFILE that leaves exactly k descriptors free */
static long nofile_for(int k)
{
	int i;

	for (i = 0; k; i++)
		if (fcntl(i, F_GETFD) < 0)
			k--;
	return i;
}

/* -L: just before inofd_watch_tree() */
static void limits_set(struct run *r, const struct conf *cf)
{
	struct rlimit rl;

	(void)cf;
	if (!(feat & F_LIMITS))
		return;
	/* per seed: 1 max_user_watches only, 2 RLIMIT_NOFILE only, 3 both */
	r->lim_mode = 1 + rnd(&r->g4, 3);
	if (!(r->lim_mode & 1))
		goto nofile;
	if (watch_limit_file) {
		/*
		 * Room for the tree as it is and its plain watches, and for
		 * 0..6 more (the root's ancestors up to / are 6: the chain
		 * may not fit).  The tree then grows no further than what
		 * fits without the ancestors.
		 */
		int d = count(r->root, true), pl = plain_alive(r);

		r->watch_limit = d + pl + rnd(&r->g4, 7);
		r->maxdirs = r->watch_limit - MAXPLAIN - 1;
		if (r->maxdirs > MAXDIRS)
			r->maxdirs = MAXDIRS;
		if (write_long(watch_limit_file, r->watch_limit))
			die("set max_user_watches");
		note(r, "# max_user_watches %ld (%s)", r->watch_limit,
		     watch_limit_file);
	} else {
		skipped_limits++;
	}
nofile:
	if (!(r->lim_mode & 2))
		return;
	if (getrlimit(RLIMIT_NOFILE, &r->old_nofile))
		die("getrlimit");
	rl = r->old_nofile;
	r->nofile = nofile_for(3 + rnd(&r->g4, 5));
	rl.rlim_cur = r->nofile;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit");
	note(r, "ulimit -n %ld", r->nofile);
}

static void limits_restore(struct run *r)
{
	if (r->watch_limit && write_long(watch_limit_file, watch_limit_old))
		die("restore max_user_watches");
	r->watch_limit = 0;
	if (r->nofile && setrlimit(RLIMIT_NOFILE, &r->old_nofile))
		die("restore RLIMIT_NOFILE");
	r->nofile = 0;
}

/* ------------------------------------------------------------ one seed */

static int rm_cb(const char *p, const struct stat *st, int flag,
		 struct FTW *f)
{
	(void)st; (void)flag; (void)f;
	remove(p);
	return 0;
}

static void cleanup(struct run *r)
{
	int i;

	for (i = 0; i < r->nwr; i++) {
		struct writer *w = &r->wr[i];

		if (w->pid) {
			/* the writer this run started, still running */
			close(w->stop);
			close(w->back);
			kill(w->pid, SIGKILL);
			waitpid(w->pid, NULL, 0);
			w->pid = 0;
		}
		if (w->xfd > 0)
			close(w->xfd);
	}
	if (r->in)
		inofd_free(r->in);
	r->in = NULL;
	for (i = 0; i < MAXMNT; i++)
		if (r->mnts[i].active) {
			char b[PATH_MAX];

			absp(r, r->mnts[i].mp, b, sizeof(b));
			if (umount2(b, MNT_DETACH))
				perror("oracle: umount");
		}
	for (i = 0; i < MAXMNT; i++)
		free(r->mnts[i].hidden);
	if (r->umnt && r->basefd >= 0)
		umount2(r->base, MNT_DETACH);	/* a failure before the end */
	if (r->ovlroot && umount2(r->base, MNT_DETACH))
		perror("oracle: umount BASE (overlay)");
	if (r->basefd >= 0)
		close(r->basefd);
	r->basefd = -1;
	if (r->base[0])
		nftw(r->base, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	if (r->bsrc[0])
		nftw(r->bsrc, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	if (r->ovl[0])
		nftw(r->ovl, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	if (r->host[0])
		nftw(r->host, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
	for (i = 0; i < r->npool; i++) {
		free(r->pool[i]->kid);
		free(r->pool[i]);
	}
	free(r->pool);
	for (i = 0; (size_t)i < r->hcap; i++) {
		free(r->hist[i].path);
		free(r->hist[i].v);
	}
	free(r->hist);
	for (i = 0; i < r->nlog; i++)
		free(r->log[i]);
	free(r->log);
	mchg_reset(r);
	free(r->mchg);
	free(r->mchg_rel);
	free(r->mchg_id);
}

static long sysctl_get(void)
{
	long v = -1;
	FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "r");

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int sysctl_set(long v)
{
	FILE *f = fopen("/proc/sys/fs/inotify/max_queued_events", "w");
	int ok;

	if (!f)
		return -1;
	ok = fprintf(f, "%ld\n", v) > 0;
	return fclose(f) == 0 && ok ? 0 : -1;
}


/* 0 pass, 1 divergence */
static void umnt_end(struct run *r);

/*
 * -F: a tmpfs over the root, its parent or its grandparent (the unit
 * tests mount_over_root_fd_flagged and mount_over_root_is_lost make one
 * each): the tree is lost and says so (docs/library.md: INOFD_EV_ERROR
 * -ESTALE, INOFD_EVF_LOST), and a file made at the root's path in the
 * tmpfs is not reported with a path (nothing of the tree is there; its
 * path is in no history, so check_path() says [path]).  Then the umount;
 * the tree stays lost, and its unwatch is the end.
 */
static void cover_end(struct run *r)
{
	char b[PATH_MAX], abs[PATH_MAX], rp[PATH_MAX], c[PATH_MAX + 32];
	struct node *x = r->root;
	int k, fd;

	for (k = rnd(&r->g, 3); k && x->parent != r->top; k--)
		x = x->parent;
	rel(x, b, sizeof(b));
	absp(r, x, abs, sizeof(abs));
	rel(r->root, rp, sizeof(rp));
	if (mount("oracle", abs, "tmpfs", 0, "size=4m,mode=0755"))
		fs_fail(r, "mount tmpfs", abs);
	note(r, "mount -t tmpfs oracle %s   # -F: over the root%s", b,
	     x == r->root ? "" : "'s ancestor");
	r->tick++;
	mchg_add(r, abs, x);
	drain(r);
	if (!r->failed && !r->tree_lost)
		diverge(r, "[cover] a tmpfs over %s: the tree goes on, no loss reported",
			b);
	if (!r->failed) {
		fmt_path(c, sizeof(c), "mkdir -p %s/%s", r->base, rp);
		if (system(c))
			die(c);
		fmt_path(c, sizeof(c), "%s/covered", rp);
		fd = openat(r->basefd, c, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			fs_fail(r, "create", c);
		close(fd);
		note(r, "mkdir -p %s; touch %s/covered   # in the tmpfs", rp, rp);
		drain(r);
	}
	if (umount2(abs, 0) && (errno != EBUSY || umount2(abs, MNT_DETACH)))
		fs_fail(r, "umount", abs);
	note(r, "umount %s", b);
	r->tick++;
	mchg_add(r, abs, x);
	if (!r->failed)
		drain(r);
}

/*
 * -O as a user: overlayfs keeps its state in user.overlay.* xattrs on the
 * upper (userxattr), BASE.ovl on BASE's parent's file system.  Without
 * user xattrs there (tmpfs before 6.6: the 6.1 guest) it still mounts,
 * but a directory moved into a merged one fails with EXDEV and one made
 * over a whiteout with EIO: overlays are then not drawn, and the summary
 * says SKIPPED.  Root's trusted.* xattrs are on every such file system.
 */
static bool ovl_usable(const struct run *r)
{
	if (geteuid() == 0)
		return true;
	if (!setxattr(r->base, "user.inofd-oracle", "1", 1, 0)) {
		removexattr(r->base, "user.inofd-oracle");
		return true;
	}
	return errno != EOPNOTSUPP;
}

/*
 * -O on fanotify: can fanotify mark a directory of an overlay here?  It
 * needs file handles, which overlayfs gives fanotify only from 6.6 (on
 * 6.1 the mark fails with EOPNOTSUPP, as inofd_backend(3) says: the
 * library reports the overlay's directory in an INOFD_EV_ERROR, or
 * refuses a tree on one).  Asked of the kernel, not the library, once:
 * an overlay on four directories in dir, an inode mark as the library's
 * unprivileged groups make.  Without it overlays are not drawn on
 * fanotify, and the summary says SKIPPED.
 */
static bool fan_marks_ovl(const char *dir)
{
	static int ok = -1;
	char l[PATH_MAX], u[PATH_MAX], w[PATH_MAX], m[PATH_MAX];
	char o[PATH_MAX * 3 + 64];
	int fd;

	if (ok >= 0)
		return ok;
	fmt_path(l, sizeof(l), "%s/.fl", dir);
	fmt_path(u, sizeof(u), "%s/.fu", dir);
	fmt_path(w, sizeof(w), "%s/.fw", dir);
	fmt_path(m, sizeof(m), "%s/.fm", dir);
	if (mkdir(l, 0755) || mkdir(u, 0755) || mkdir(w, 0755) ||
	    mkdir(m, 0755))
		die("mkdir (fanotify overlay probe)");
	fmt_path(o, sizeof(o), "lowerdir=%s,upperdir=%s,workdir=%s%s", l, u,
		 w, geteuid() == 0 ? "" : ",userxattr");
	if (mount("oracle", m, "overlay", 0, o))
		die("mount overlay (fanotify overlay probe)");
	ok = 0;
	fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME, 0);
	if (fd >= 0) {
		ok = !fanotify_mark(fd, FAN_MARK_ADD, FAN_CREATE | FAN_ONDIR,
				    AT_FDCWD, m);
		close(fd);
	}
	if (umount2(m, MNT_DETACH))
		die("umount (fanotify overlay probe)");
	rmdir(m);
	/* (w holds overlayfs's work/, emptied at umount) */
	fmt_path(o, sizeof(o), "%s/work", w);
	rmdir(o);
	rmdir(w);
	rmdir(u);
	rmdir(l);
	return ok;
}

/*
 * -O: BASE becomes an overlay whose lower (lower, made by layer_dir())
 * holds what was made so far; the model's inodes are the overlay's now
 */
static void ovlroot_mount(struct run *r, const char *lower)
{
	struct list l = { 0 };
	char b[PATH_MAX];
	int i;

	if (ovl_mount(r, r->base, lower))
		die("overlay on BASE");
	close(r->basefd);
	r->basefd = open(r->base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->basefd < 0)
		die(r->base);
	note(r, "mount -t overlay oracle -o lowerdir=%s BASE   # -O: what is there so far is the lower's",
	     r->ovlroot == 1 ? "HOST" : "BASE.ovl");
	collect(r->top, true, true, &l);
	for (i = 1; i < l.n; i++) {
		rel(l.v[i], b, sizeof(b));
		set_ino(r, l.v[i], b);
		l.v[i]->low = l.v[i]->dir;
	}
	free(l.v);
}

static int run_seed(uint64_t seed, int backend_flag, const char *bname,
		    const struct conf *cf)
{
	struct run *r = xcalloc(1, sizeof(*r));
	struct inofd_opts o = { .sz = sizeof(o), .flags = backend_flag };
	struct rng g2;
	const char *tmp = getenv("TMPDIR");
	struct stat st;
	char b[PATH_MAX], nm[32];
	struct node *d;
	long oldq = -1;
	int i, k, wd, ret, endmode;

	r->seed = seed;
	r->maxdirs = MAXDIRS;
	r->nops = cf->nops;
	r->backend_flag = backend_flag;
	r->backend_name = bname;
	r->verbose = cf->verbose;
	r->basefd = -1;
	rng_seed(&r->g, seed);
	rng_seed(&g2, seed ^ 0x5eedull << 32);
	rng_seed(&r->g3, seed ^ 0xa11ceull << 32);
	rng_seed(&r->g4, seed ^ 0xfea7ull << 32);
	rng_seed(&r->g5, seed ^ 0x5171ull << 32);
	if (feat & F_XD) {
		r->xd_on = rnd(&r->g4, 4) != 0;
		r->max_depth = rnd(&r->g4, 4);
	}
	if (feat & F_ROOTF)
		r->root_form = 1 + rnd(&r->g4, 4);
	r->can_mount = (feat & F_MOUNTS) && mounts_ok;
	if ((feat & F_MOUNTS) && !mounts_ok)
		skipped_mounts++;

	/* per-seed choices, all from the PRNG */
	r->mask = IN_CREATE | IN_DELETE | IN_MOVE | IN_CLOSE_WRITE |
		  IN_MODIFY | IN_DELETE_SELF | IN_MOVE_SELF | IN_ATTRIB;
	switch (rnd(&r->g, 8)) {
	case 0:
		r->mask = IN_ALL_EVENTS;
		break;
	case 1:
		r->mask = IN_CLOSE_WRITE | IN_DELETE;
		break;
	}
	r->probe_bit = r->mask & IN_CREATE ? IN_CREATE : IN_CLOSE_WRITE;
	i = rnd(&r->g, 8);
	r->rootmode = i == 0 ? 1 : i == 1 ? 2 : 0;
	if (is_disabled("relroot"))
		r->rootmode = 0;
	r->use_plain = rnd(&r->g, 3) == 0;
	endmode = rnd(&r->g, 2);

	/* TMPDIR, else /dev/shm (tmpfs: floods are cheap there), else /tmp */
	if (!tmp || !*tmp)
		tmp = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
		      access("/dev/shm", W_OK | X_OK) == 0 ? "/dev/shm" : "/tmp";
	fmt_path(r->base, sizeof(r->base), "%s/inofd-oracle.XXXXXX", tmp);
	if (!mkdtemp(r->base))
		die("mkdtemp");
	if (!realpath(r->base, b))
		die("realpath");
	fmt_path(r->base, sizeof(r->base), "%s", b);
	/* (before -U mounts over BASE: BASE.ovl is beside it) */
	if ((feat & F_OVL) && mounts_ok && !ovl_usable(r)) {
		r->noovl = true;
		skipped_ovl++;
	}
#ifdef INOFD_FORCE_FANOTIFY
	if ((feat & F_OVL) && mounts_ok && !r->noovl &&
	    backend_flag == INOFD_FORCE_FANOTIFY && !fan_marks_ovl(r->base)) {
		r->noovl = true;
		skipped_ovl_fan++;
	}
#endif
	/*
	 * -U: BASE itself is a mount (a tmpfs, or a bind mount of a
	 * directory beside it), which goes at the end with the tree on it
	 */
	if ((feat & F_UMNT) && mounts_ok) {
		r->umnt = 1 + rnd(&r->g5, 2);
		r->umnt_lazy = rnd(&r->g5, 2);
		if (r->umnt == 2) {
			fmt_path(r->bsrc, sizeof(r->bsrc), "%s.src", r->base);
			if (mkdir(r->bsrc, 0755) ||
			    mount(r->bsrc, r->base, NULL, MS_BIND, NULL))
				die("bind mount BASE");
		} else if (mount("oracle", r->base, "tmpfs", 0, "mode=0755")) {
			die("tmpfs on BASE");
		}
		r->use_plain = false;	/* (their ends: see umnt_end()) */
	} else if ((feat & F_UMNT) && !(feat & F_MOUNTS)) {
		skipped_mounts++;	/* (-M counts it already) */
	}
	/*
	 * -O: in 2 seeds of 3 BASE is an overlay, mounted once what the
	 * tree starts with is made: made in its lower (on the host's disk,
	 * or on the upper's file system), so that the tree starts on it
	 */
	if ((feat & F_OVL) && mounts_ok && !r->umnt && !r->noovl)
		r->ovlroot = rnd(&r->g, 3);
	if (r->ovlroot) {
		layer_dir(r, r->ovlroot == 1, "l", b, sizeof(b));
		r->basefd = open(b, O_PATH | O_DIRECTORY | O_CLOEXEC);
	} else {
		r->basefd = open(r->base, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (r->basefd < 0)
		die(r->base);
	r->top = node_new(r, NULL, "", true);
	make_dir(r, r->top, "a", &r->a);
	make_dir(r, r->a, "p", &r->p);
	make_dir(r, r->top, "out", &r->out);
	if (r->can_mount && mkdirat(r->basefd, "bsrc", 0755))
		die("mkdir bsrc");
	fresh(r, 't', nm, sizeof(nm));
	make_dir(r, r->p, nm, &r->root);
	note(r, "# seed %llu, %d ops, backend %s, mask 0x%x, root %s, plain watches %s",
	     (unsigned long long)seed, cf->nops, bname, r->mask,
	     r->rootmode == 0 ? "absolute" : r->rootmode == 1 ?
	     "relative to a dirfd" : "relative to the cwd",
	     r->use_plain ? "on" : "off");
	note(r, "cd BASE; mkdir -p a/p out a/p/%s", nm);
	if (feat & (F_XD | F_ROOTF | F_MOUNTS | F_LIMITS))
		note(r, "# -X %s (max_depth %d, exclude .git *.tmp), -R form %d, -M %s",
		     r->xd_on ? "on" : "off", r->max_depth, r->root_form,
		     r->can_mount ? "on" : (feat & F_MOUNTS) ? "skipped" : "off");

	/* something to walk first (-L: a tree of some size) */
	k = rnd(&r->g, 6) + (feat & F_LIMITS ? 16 : 0);
	for (i = 0; i < k; i++)
		do_op(r, rnd(&r->g, 2) ? OP_MKDIR : OP_CREATE);
	if (rnd(&r->g, 2))
		do_op(r, OP_MKDIRP);
	if (r->ovlroot)
		ovlroot_mount(r, b);
	/*
	 * -F -O: in 1 seed of 2 a mount of the tree before the watch (the
	 * walk meets it: a second file system, a directory bound onto
	 * another, an overlay), with a few entries of its own
	 */
	if ((feat & (F_FS | F_OVL)) && r->can_mount && rnd(&r->g, 2)) {
		for (i = 0; i < 8 && !r->nmnt; i++)
			mount_op(r);
		for (i = 0; i < MAXMNT; i++)
			if (r->mnts[i].active && !r->mnts[i].src)
				for (k = rnd(&r->g, 4); k > 0; k--) {
					d = pick(r, r->mnts[i].mp, true, false);
					name_for(r, &r->g, d, k & 1 ? 'd' : 'f',
						 nm, sizeof(nm));
					if (k & 1)
						make_dir(r, d, nm, NULL);
					else
						make_file(r, d, nm, true);
					rel(d, b, sizeof(b));
					note(r, "%s %s/%s   # in the mount", k & 1 ?
					     "mkdir" : "touch", b, nm);
				}
	}
	/*
	 * -W: one or two writers, each in a directory of its own in the tree
	 * (never removed while it is there) and one outside everything
	 */
	if (feat & F_WRITER) {
		r->nwr = 1 + rnd(&r->g4, MAXWR);
		for (i = 0; i < r->nwr; i++) {
			struct writer *w = &r->wr[i];

			d = pick(r, r->root, true, false);
			fresh(r, 'w', nm, sizeof(nm));
			make_dir(r, d, nm, &w->dir);
			w->dir->wdir = i + 1;
			rel(w->dir, b, sizeof(b));
			note(r, "mkdir %s   # writer %d's directory", b, i);
			fmt_path(b, sizeof(b), "wx%d", i);
			if (mkdirat(r->basefd, b, 0755))
				fs_fail(r, "mkdir", b);
			w->xfd = openat(r->basefd, b, O_PATH | O_DIRECTORY |
					O_CLOEXEC);
			if (w->xfd < 0)
				fs_fail(r, "open", b);
		}
	}

	if (cf->qset > 0 && geteuid() == 0) {
		oldq = sysctl_get();
		if (sysctl_set(cf->qset))
			die("set max_queued_events");
	}
	ret = inofd_new(&r->in, &o);
	if (oldq > 0 && sysctl_set(oldq))
		die("restore max_queued_events");
	if (ret < 0) {
		fprintf(stderr, "oracle: inofd_new(%s): %s\n", bname,
			inofd_strerror(ret));
		cleanup(r);
		free(r);
		exit(2);
	}
	r->qmax = cf->qset > 0 && geteuid() == 0 ? cf->qset : sysctl_get();
	if (r->qmax <= 0)
		r->qmax = 16384;

	r->nregs = 1;
	/* a plain watch made first, inside what becomes the tree */
	if (r->use_plain && rnd(&r->g, 2) && weight[OP_PLAIN_ADD])
		do_op(r, OP_PLAIN_ADD);
	/*
	 * and one on p, the root's parent: the library can see the root's
	 * renames there.  Drawn from a second stream, so that the main one
	 * (and every seed kept in regress/) stays as it was.
	 */
	if (r->use_plain && rnd(&g2, 3) == 0 && weight[OP_PLAIN_ADD]) {
		struct reg *g = &r->regs[r->nregs];

		absp(r, r->p, g->path, sizeof(g->path));
		wd = inofd_watch_path(r->in, g->path, r->mask, &g->tag);
		note(r, "watch_path p   # plain watch, reg %d, wd %d", r->nregs,
		     wd);
		if (wd < 0) {
			diverge(r, "[plain] inofd_watch_path(p): %s",
				inofd_strerror(wd));
			goto done;
		}
		g->wd = wd;
		g->dir = r->p;
		r->p->plain = r->nregs++;
	}
	r->regs[0].tree = true;
	r->regs[0].dir = r->root;
	absp(r, r->root, r->regs[0].path, sizeof(r->regs[0].path));
	limits_set(r, cf);
	if (r->rootmode == 1) {
		char pp[PATH_MAX];
		int pfd;

		absp(r, r->p, pp, sizeof(pp));
		pfd = open(pp, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (pfd < 0)
			die(pp);
		wd = watch_tree(r, pfd, r->root->name);
		close(pfd);
		note(r, "watch_tree dirfd(p) %s   # wd %d", r->root->name, wd);
	} else if (r->rootmode == 2) {
		if (chdir(r->base))
			die("chdir");
		wd = watch_tree(r, AT_FDCWD, r->regs[0].path +
				strlen(r->base) + 1);
		if (chdir("/"))
			die("chdir /");
		note(r, "cd BASE; watch_tree a/p/%s; cd /   # wd %d",
		     r->root->name, wd);
	} else if ((feat & F_SYMLINKS) && (r->rootlink = rnd(&r->g5, 3))) {
		char pp[PATH_MAX];

		/* -Y: through BASE/lr -> a/p/<root>, or BASE/la/p/<root>
		 * with la -> a; the tree is the real directory */
		if (r->rootlink == 1) {
			fmt_path(pp, sizeof(pp), "a/p/%s", r->root->name);
			if (symlinkat(pp, r->basefd, "lr"))
				fs_fail(r, "symlink", "lr");
			fmt_path(pp, sizeof(pp), "%s/lr", r->base);
		} else {
			if (symlinkat("a", r->basefd, "la"))
				fs_fail(r, "symlink", "la");
			fmt_path(pp, sizeof(pp), "%s/la/p/%s", r->base,
				 r->root->name);
		}
		wd = watch_tree(r, AT_FDCWD, pp);
		note(r, "ln -s %s; watch_tree %s   # wd %d (-Y)",
		     r->rootlink == 1 ? "a/p/ROOT lr" : "a la", pp, wd);
	} else if (r->root_form) {
		char pp[PATH_MAX];
		static const char *const fm[] = { "",
			"%s/a/p/./%s", "%s/a/../a/p/%s", "%s/a/p/%s/",
			"%s/./a//p/%s/." };
		/* a and p are still called a and p here */
		fmt_path(pp, sizeof(pp), fm[r->root_form], r->base,
			 r->root->name);
		wd = watch_tree(r, AT_FDCWD, pp);
		note(r, "watch_tree %s   # wd %d (-R: root form %d)", pp, wd,
		     r->root_form);
	} else {
		wd = watch_tree(r, AT_FDCWD, r->regs[0].path);
		note(r, "watch_tree BASE/a/p/%s   # wd %d", r->root->name, wd);
	}
	if (wd < 0 && r->nofile && (wd == -EMFILE || wd == -ENFILE)) {
		/* a clear refusal is allowed; counted, not a pass */
		note(r, "# watch_tree refused under RLIMIT_NOFILE %ld: %s",
		     r->nofile, inofd_strerror(wd));
		r->refused = true;
		goto done;
	}
	if (wd < 0 && r->watch_limit && wd == -ENOSPC) {
		note(r, "# watch_tree refused under max_user_watches %ld: %s",
		     r->watch_limit, inofd_strerror(wd));
		r->refused = true;
		goto done;
	}
	if (wd < 0) {
		diverge(r, "[api] inofd_watch_tree: %s", inofd_strerror(wd));
		goto done;
	}
	r->regs[0].wd = wd;
	check(r, "after watch_tree");

	while (!r->failed && r->op < r->nops) {
		bool batch = rnd(&r->g, 2);

		if (is_disabled("batch"))
			batch = false;
		else if (is_disabled("interleave"))
			batch = true;
		int len = 1 + rnd(&r->g, batch ? 16 : 8);

		note(r, "# step: %d op(s), %s", len,
		     batch ? "one read at the end" : "read after each");
		writers_start(r);
		for (i = 0; i < len && r->op < r->nops && !r->failed; i++) {
			random_op(r);
			r->op++;
			writers_track(r);
			/*
			 * Now and then the root's parent or grandparent is
			 * renamed in place: the library must follow it.
			 * From a stream of its own, so that the main one
			 * (and every seed kept in regress/) stays as it was.
			 */
			if (!is_disabled("mvanc") && !r->failed &&
			    rnd(&r->g3, 24) == 0) {
				struct node *n = rnd(&r->g3, 2) ? r->a : r->p;

				name_for(r, &r->g3, n->parent, n == r->a ? 'a' : 'p',
					 nm, sizeof(nm));
				move(r, n, n->parent, nm);
				writers_track(r);
			}
			if (!batch && !r->failed)
				read_some(r);
		}
		writers_stop(r);
		if (!r->failed)
			check(r, "quiescent");
	}
	if (r->failed)
		goto done;

	/* the end: every registration goes, each with one IN_IGNORED */
	if (r->nmnt) {
		umount_all(r);
		check(r, "after umount");
		if (r->failed)
			goto done;
	}
	/* -F: in 1 seed of 3 a tmpfs over the root or an ancestor first */
	if ((feat & F_FS) && r->can_mount && !r->mounts_unseen && !r->umnt &&
	    r->root && rnd(&r->g, 3) == 0) {
		cover_end(r);
		endmode = 0;	/* the lost tree is unwatched */
		if (r->failed)
			goto done;
	}
	if (r->umnt && r->mounts_unseen) {
		/*
		 * -U, but the library said it has no mount table: the mount
		 * holding the root going is not seen (inofd_watch_tree_at(3)),
		 * so it stays, and the run ends as without -U (counted and
		 * printed with the runs that made no more mounts).
		 */
		note(r, "# -U: BASE stays mounted: the library has no mount table (-EOPNOTSUPP)");
	} else if (r->umnt) {
		umnt_end(r);
		goto done;
	}
	if (endmode) {
		rel(r->root, b, sizeof(b));
		note(r, "rm -r %s   # the whole tree", b);
		remove_tree(r, r->root);
		r->root = NULL;
	} else {
		ret = inofd_unwatch(r->in, r->regs[0].wd);
		note(r, "unwatch %d   # the tree", r->regs[0].wd);
		if (ret < 0)
			diverge(r, "[api] inofd_unwatch(tree): %s",
				inofd_strerror(ret));
	}
	r->regs[0].ended = true;
	for (i = 1; i < r->nregs && !r->failed; i++) {
		struct reg *g = &r->regs[i];

		if (g->ended)
			continue;
		ret = inofd_unwatch(r->in, g->wd);
		note(r, "unwatch %d   # plain watch, reg %d", g->wd, i);
		g->ended = true;
		if (g->dir)
			g->dir->plain = -1;
		g->dir = NULL;
		if (ret < 0)
			diverge(r, "[plain] inofd_unwatch(%d): %s", g->wd,
				inofd_strerror(ret));
	}
	if (!r->failed)
		check(r, "after the end");
	if (!r->failed && (ret = inofd_watch_count(r->in)) != 0)
		diverge(r, "[count] inofd_watch_count() is %d after every registration ended",
			ret);

done:
	limits_restore(r);
	if (r->refused)
		refusals++;
	if (r->failed) {
		printf("FAIL seed %llu (%s): after op %d of %d: %s%s\n",
		       (unsigned long long)seed, bname, r->op, r->nops, r->why,
		       r->lim_mode == 1 ? " (-L: max_user_watches)" :
		       r->lim_mode == 2 ? " (-L: RLIMIT_NOFILE)" :
		       r->lim_mode == 3 ? " (-L: both limits)" : "");
		printf("  replay: make oracle ORACLE_SEED=%llu ORACLE_OPS=%d ORACLE_ARGS='%s'   (or oracle -s %llu -n %d -B %s %s -v)\n",
		       (unsigned long long)seed, r->nops, featargs(),
		       (unsigned long long)seed, r->nops, bname, featargs());
		printf("  BASE=%s; errors reported %d, rescans %d\n", r->base,
		       r->errors, r->rescans);
		for (i = 0; i < r->nlog; i++)
			printf("    %s\n", r->log[i]);
	} else {
		char wb[96] = "";

		if (r->nwr)
			snprintf(wb, sizeof(wb), ", %d writer(s): %lu files, %lu writer-steps counted exactly",
				 r->nwr, r->wfiles, r->wstrict);
		printf("ok seed %llu (%s): %d ops, %d errors, %d rescans%s%s%s%s%s%s\n",
		       (unsigned long long)seed, bname, r->nops, r->errors,
		       r->rescans, wb,
		       r->stale_flagged ? ", paths flagged stale after a loss" : "",
		       r->ntolerated ? ", divergences tolerated (-x)" : "",
		       r->mounts_unseen ? ", no mounts or umounts made: the library has no mount table (-EOPNOTSUPP)" : "",
		       r->refused ? ", watch_tree refused under -L (not a pass of the run)" :
		       r->limited ? ", a limit reported by the library (-L)" : "",
		       (feat & F_MOUNTS) && !r->can_mount &&
		       !r->mounts_unseen ? ", mounts SKIPPED" : "");
	}
	if (r->mounts_unseen)
		unseen_mounts++;
	fflush(stdout);
	ret = r->failed;
	cleanup(r);
	free(r);
	return ret;
}

/*
 * -U: the mount that holds the tree (BASE) goes, umount or umount -l.
 * The tree must end (its IN_IGNORED) or be lost (an INOFD_EV_ERROR),
 * never go on silently; and no event of it may have a path once the
 * paths name nothing of it: neither an entry made through the bind
 * mount's source (the tree's objects live on there) nor one made in
 * the covered directory at the same path.
 */
static void umnt_end(struct run *r)
{
	char b[PATH_MAX], rp[PATH_MAX] = "";
	int ret, fd;

	if (r->root)
		rel(r->root, rp, sizeof(rp));
	note(r, "umount%s BASE   # -U: %s", r->umnt_lazy ? " -l" : "",
	     r->umnt == 1 ? "a tmpfs" : "a bind mount of BASE.src");
	close(r->basefd);
	r->basefd = -1;
	/* -W: the writers' directories outside the tree are on it too */
	for (ret = 0; ret < r->nwr; ret++)
		if (r->wr[ret].xfd > 0) {
			close(r->wr[ret].xfd);
			r->wr[ret].xfd = -1;
		}
	r->regs[0].ended = true;	/* its IN_IGNORED may come now */
	if (umount2(r->base, r->umnt_lazy ? MNT_DETACH : 0))
		die("umount BASE");
	r->tick++;
	mchg_add(r, r->base, r->top);	/* its events may be flagged */
	unrecord(r, r->top);
	drain(r);
	if (r->failed)
		return;
	if (!r->regs[0].ignored && !r->lost) {
		diverge(r, "[umount] the mount holding the root went: no IN_IGNORED, no loss reported");
		return;
	}
	r->qtick = r->tick;	/* the old paths are no one's now */
	if (r->root && r->umnt == 2) {
		fmt_path(b, sizeof(b), "%s/%s/after-src", r->bsrc, rp);
		fd = open(b, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			die(b);
		close(fd);
		note(r, "touch BASE.src/%s/after-src", rp);
	}
	if (r->root) {
		fmt_path(b, sizeof(b), "mkdir -p %s/%s", r->base, rp);
		if (system(b))
			die(b);
		fmt_path(b, sizeof(b), "%s/%s/after-covered", r->base, rp);
		fd = open(b, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0)
			die(b);
		close(fd);
		note(r, "mkdir -p BASE/%s; touch BASE/%s/after-covered", rp,
		     rp);
	}
	drain(r);
	if (r->failed)
		return;
	if (!r->regs[0].ignored) {
		ret = inofd_unwatch(r->in, r->regs[0].wd);
		note(r, "unwatch %d   # the lost tree", r->regs[0].wd);
		if (ret < 0)
			diverge(r, "[api] inofd_unwatch(lost tree): %s",
				inofd_strerror(ret));
		drain(r);
	}
	if (!r->failed && r->regs[0].ignored != 1)
		diverge(r, "[ignored] %d IN_IGNORED for the tree after its mount went",
			r->regs[0].ignored);
	if (!r->failed && (ret = inofd_watch_count(r->in)) != 0)
		diverge(r, "[count] inofd_watch_count() is %d after the tree ended",
			ret);
}

/* ------------------------------------------------------------ main */

static void usage(void)
{
	fprintf(stderr, "usage: oracle [-s SEED | -c COUNT [-S FIRST] | -T SECONDS] [-n OPS]\n"
		"              [-B auto|kernel|procfd|fanotify|both|all] [-q MAX_QUEUED] [-x KINDS] [-D OPS] [-v]\n"
		"              [-N names reused] [-X exclude/max_depth] [-L limits] [-R root forms]\n"
		"              [-M mounts] [-C consumer checks] [-E renameat2 exchange]\n"
		"              [-W concurrent writers] [-Y symlinks, hard links]\n"
		"              [-U the root's mount goes] [-P places, relinks]\n"
		"              [-F binds of the tree, a second fs, EXDEV, over the root] [-O overlayfs]\n"
		"              (tests/oracle/README)\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct conf cf = { .nops = 200 };
	unsigned long long first = 1, cnt = 20, s, seeds = 0, fails = 0;
	const char *be = "auto";
	double secs = 0, t0;
	bool one = false;
	int c;

	while ((c = getopt(argc, argv, "s:c:S:n:B:q:T:vkx:D:NXLRMCEWYUPFO")) != -1) {
		switch (c) {
		case 's':
			first = strtoull(optarg, NULL, 0);
			cnt = 1;
			one = true;
			break;
		case 'c':
			cnt = strtoull(optarg, NULL, 0);
			break;
		case 'S':
			first = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			cf.nops = atoi(optarg);
			break;
		case 'B':
			be = optarg;
			break;
		case 'q':
			cf.qset = atol(optarg);
			break;
		case 'T':
			secs = atof(optarg);
			break;
		case 'v':
			cf.verbose = true;
			break;
		case 'k':
			break;
		case 'x':
			tolerate = optarg;
			break;
		case 'D':
			disabled = optarg;
			break;
		case 'N':
			feat |= F_NAMES;
			break;
		case 'X':
			feat |= F_XD;
			break;
		case 'L':
			feat |= F_LIMITS;
			break;
		case 'R':
			feat |= F_ROOTF;
			break;
		case 'M':
			feat |= F_MOUNTS;
			break;
		case 'C':
			feat |= F_CONSUMER;
			break;
		case 'E':
			feat |= F_XCHG;
			break;
		case 'W':
			feat |= F_WRITER;
			break;
		case 'Y':
			feat |= F_SYMLINKS;
			break;
		case 'U':
			feat |= F_UMNT;
			break;
		case 'P':
			feat |= F_PLACES;
			break;
		case 'F':
			feat |= F_FS | F_MOUNTS;
			break;
		case 'O':
			feat |= F_OVL | F_MOUNTS;
			break;
		default:
			usage();
		}
	}
	/*
	 * ORACLE_FEATURES=NXLRMC (letters of the options) adds features: the
	 * guest takes it from the kernel command line (oracle_features=M,
	 * which the kernel gives /init as an environment variable).
	 */
	if (getenv("ORACLE_FEATURES") || getenv("oracle_features")) {
		const char *e = getenv("ORACLE_FEATURES") ?
				getenv("ORACLE_FEATURES") : getenv("oracle_features");

		feat |= (strchr(e, 'N') ? F_NAMES : 0) | (strchr(e, 'X') ? F_XD : 0) |
			(strchr(e, 'L') ? F_LIMITS : 0) | (strchr(e, 'R') ? F_ROOTF : 0) |
			(strchr(e, 'M') ? F_MOUNTS : 0) | (strchr(e, 'C') ? F_CONSUMER : 0) |
			(strchr(e, 'E') ? F_XCHG : 0) | (strchr(e, 'W') ? F_WRITER : 0) |
			(strchr(e, 'Y') ? F_SYMLINKS : 0) | (strchr(e, 'U') ? F_UMNT : 0) |
			(strchr(e, 'P') ? F_PLACES : 0) |
			(strchr(e, 'F') ? F_FS | F_MOUNTS : 0) |
			(strchr(e, 'O') ? F_OVL | F_MOUNTS : 0);
	}
	if (feat & F_NAMES) {
		weight[OP_REMK] = 4;
		weight[OP_SWAP] = 3;
		weight[OP_ONTO] = 4;
		weight[OP_MVNEW] = 3;
	}
	if (feat & F_MOUNTS) {
		weight[OP_MOUNT] = 3;
		weight[OP_UMOUNT] = 2;
	}
	if (feat & F_XCHG) {
		weight[OP_XCHG] = 8;
		weight[OP_NOREPL] = 3;
	}
	if (feat & F_WRITER)
		weight[OP_MVW] = 10;
	if (feat & F_PLACES) {
		weight[OP_MVPLACE] = 10;
		weight[OP_RELNK] = 3;
		if (feat & F_MOUNTS)
			weight[OP_MVMNT] = 4;
	}
	if (feat & F_SYMLINKS) {
		weight[OP_SYMLINK] = 3;
		weight[OP_HARDLINK] = 3;
		weight[OP_RELINK] = 2;
	}
	for (c = 0; c < OP_N; c++)
		if (is_disabled(opname[c]))
			weight[c] = 0;
	features_setup();
	if (optind != argc || cf.nops < 0 ||
	    (strcmp(be, "auto") && strcmp(be, "kernel") &&
	     strcmp(be, "procfd") && strcmp(be, "both") &&
	     strcmp(be, "fanotify") && strcmp(be, "all")))
		usage();
	/* the soak run of the guest gives a time instead of a count */
	if (!one && !secs && getenv("STRESS_SECONDS"))
		secs = atof(getenv("STRESS_SECONDS"));
	setvbuf(stdout, NULL, _IOLBF, 0);
	t0 = now();
	for (s = first; secs ? now() - t0 < secs : s < first + cnt; s++) {
		if (!strcmp(be, "kernel") || !strcmp(be, "both") ||
		    !strcmp(be, "all"))
			fails += run_seed(s, INOFD_FORCE_KERNEL, "kernel", &cf);
		if (!strcmp(be, "procfd") || !strcmp(be, "both") ||
		    !strcmp(be, "all"))
			fails += run_seed(s, INOFD_FORCE_PROCFD, "procfd", &cf);
#ifdef INOFD_FORCE_FANOTIFY
		if (!strcmp(be, "fanotify") || !strcmp(be, "all"))
			fails += run_seed(s, INOFD_FORCE_FANOTIFY, "fanotify",
					  &cf);
#endif
		if (!strcmp(be, "auto"))
			fails += run_seed(s, 0, "auto", &cf);
		seeds++;
	}
	printf("oracle: %llu seed(s) x %d ops, backend %s%s%s: %llu failing run(s)\n",
	       seeds, cf.nops, be, featargs()[0] ? " " : "", featargs(), fails);
	if (unseen_mounts)
		printf("oracle: %lu run(s) made no more mounts (-M) and kept BASE mounted (-U) after the library said it has no mount table (-EOPNOTSUPP)\n",
		       unseen_mounts);
	if (skipped_mounts)
		printf("oracle: SKIPPED the mounts of -M in %lu run(s): cannot mount here (no root, no user namespace)\n",
		       skipped_mounts);
	if (mounts_ok && in_userns && (feat & F_MOUNTS))
		printf("oracle: mounts made in a user namespace of the oracle's own (uid %u)%s\n",
		       (unsigned int)geteuid(), (feat & F_OVL) && !skipped_ovl ?
		       ": overlays with userxattr, no redirect_dir (their lower's directories are not renamed)" : "");
	if (skipped_ovl)
		printf("oracle: SKIPPED the overlays of -O in %lu run(s): no user xattrs on BASE's file system for userxattr (tmpfs has them from 6.6)\n",
		       skipped_ovl);
	if (skipped_ovl_fan)
		printf("oracle: SKIPPED the overlays of -O in %lu fanotify run(s): this kernel's fanotify cannot mark overlayfs (no file handles before 6.6; the library says -EOPNOTSUPP)\n",
		       skipped_ovl_fan);
	if (skipped_limits)
		printf("oracle: SKIPPED max_user_watches of -L in %lu run(s): no user namespace (RLIMIT_NOFILE still applied)\n",
		       skipped_limits);
	if (refusals)
		printf("oracle: %lu run(s) ended early: watch_tree refused under -L (EMFILE/ENOSPC)\n",
		       refusals);
	for (c = 0; c < 32 && kinds[c].kind[0]; c++)
		printf("oracle:   %-16s %lu%s\n", kinds[c].kind, kinds[c].n,
		       tolerated(kinds[c].kind) ? " (tolerated)" : "");
	if (!fails && (feat & (F_MOUNTS | F_UMNT)) && skipped_mounts == seeds *
	    (!strcmp(be, "both") ? 2 : !strcmp(be, "all") ? 3 : 1))
		return 4;	/* kselftest's skip: nothing of -M ran */
	return fails ? 1 : 0;
}
