// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * From raw event bytes to the table and the queue: one kernel event is
 * delivered to every member of its kernel watch that wants it (each with
 * its registration's id, data and path), and losses become
 * INOFD_EV_RESCAN.  The records of renames go to the rename engine
 * (rename.c), which pairs the halves and has the trees follow.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "dispatch.h"
#include "fanotify.h"

/* The kernel dropped this watch (IN_IGNORED, or found dead). */
static void kw_gone(struct inofd *in, int wd, unsigned int flags)
{
	struct inofd__kw *kw;

	while ((kw = inofd__kw_find(in, wd)) && kw->mems) {
		struct inofd__mem *m = kw->mems;
		struct inofd__reg *r = m->reg;

		if (m->kind == INOFD__MEM_PARENT) {
			unsigned int i;

			if (m == r->plink)
				r->plink = NULL;
			for (i = 0; i < r->nanc; i++)
				if (r->anc[i] == m)
					r->anc[i] = NULL;
			inofd__mem_free(in, m);
		} else if (m->kind == INOFD__MEM_PLAIN || m == r->root) {
			inofd__reg_end(in, r, true, flags);
		} else {
			inofd__subtree_end(in, m, flags);
		}
	}
	if (kw)
		inofd__kw_put(in, kw, false);
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/*
 * A loss: until every tree is crawled and the records queued before the
 * crawl ended are parsed, a path may be one the lost records had changed
 * or one the crawl found after the event (inofd__placed_now()): every
 * tree is unsure, its events flagged.
 */
static void trees_unsure(struct inofd *in)
{
	unsigned int i;

	for (i = 0; i < in->regsize; i++) {
		struct inofd__reg *r;

		for (r = in->regtab[i]; r; r = r->hnext)
			if (r->kind == INOFD__REG_TREE && !r->lost) {
				r->unsure = true;
				in->unsure = true;
			}
	}
	inofd__paths_changed(in);
}

/* Is a crawl due or under way (trees_unsure())? */
static bool crawling(const struct inofd *in)
{
	unsigned int i;

	if (in->crawl_due)
		return true;
	for (i = 0; i < in->regsize; i++) {
		const struct inofd__reg *r;

		for (r = in->regtab[i]; r; r = r->hnext)
			if (r->kind == INOFD__REG_TREE && r->crawl_left)
				return true;
	}
	return false;
}

/*
 * The records of a loss are parsed, every tree is crawled and the records
 * queued before the crawl ended are parsed: the trees are sure again.
 * Unless a rename was applied meanwhile: the crawl had put its directory
 * where it was at the crawl, and a rename from before that, applied
 * after, may have moved the wrong one (its source is found by name): the
 * trees are crawled again, and stay unsure.
 */
static void caught_up(struct inofd *in)
{
	if (!in->unsure || in->held || in->kpos < in->sure_pos ||
	    crawling(in))
		return;
	if (in->unsure_moved) {
		in->unsure_moved = false;
		in->crawl_due = true;
		return;
	}
	inofd__tree_sure(in);
}

static void overflow(struct inofd *in)
{
	size_t nlive = 0, i, ndead = 0;
	int *live = NULL, *dead;

	/*
	 * What would complete a pending half or a window may be among the
	 * lost events: they close as they are.  The crawl then puts every
	 * directory where it really is.
	 */
	inofd__settle_halves(in);
	inofd__win_expire(in, UINT64_MAX);
	in->rescan_due = true;
	inofd__q_rescan(in);
	trees_unsure(in);
	for (i = 0; i < in->kwsize; i++) {
		struct inofd__kw *kw;

		for (kw = in->kwtab[i]; kw; kw = kw->hnext) {
			kw->self_open = kw->self_access = kw->self_close = 0;
			kw->par_open = kw->par_access = kw->par_close = 0;
		}
	}
	/* lost IN_IGNORED events leave dead watches: ask the kernel */
	if (inofd__backend_live_wds(in, &live, &nlive) == 0 && in->nkw) {
		qsort(live, nlive, sizeof(*live), cmp_int);
		dead = malloc(in->nkw * sizeof(*dead));
		for (i = 0; dead && i < in->kwsize; i++) {
			struct inofd__kw *kw;

			for (kw = in->kwtab[i]; kw; kw = kw->hnext)
				if (!bsearch(&kw->wd, live, nlive,
					     sizeof(*live), cmp_int))
					dead[ndead++] = kw->wd;
		}
		for (i = 0; i < ndead; i++)
			kw_gone(in, dead[i], INOFD_EVF_SYNTHETIC);
		free(dead);
	}
	free(live);
	in->crawl_due = true;
	/*
	 * (After the dead watches: their IN_IGNORED carry the names they
	 * had before the loss, which existed.)
	 * Renames above a root may be among the lost: the roots are found
	 * now, by inode, and the renames above them among the records after
	 * this one are undone, so that those events are given the paths of
	 * their time.  That needs every record up to EAGAIN: if read(2) has
	 * not said it yet, parse() stops here and read_backlog() reads them
	 * (once per inofd_read(): a second loss in its records is checked
	 * with what is in hand).
	 */
	if (in->more && !in->buf2 && inofd__tree_chains(in))
		in->backlog_due = true;	/* see read_backlog() */
	else
		inofd__roots_check(in);
}

/*
 * IN_ATTRIB on a plain watch of a non-directory: its link count may have
 * changed.  A name unlinked while the object lives on (another hard link,
 * an open descriptor) leaves the watch's path naming nothing or another
 * object (issue 26, reproduction 7b): the path is checked, and flagged
 * maybe stale when it no longer names the object.  Not when the object's
 * end is among the records in hand: its last name went, and the path
 * stays its last one, as with IN_DELETE_SELF on inotify itself.
 */
static void name_check(struct inofd *in, struct inofd__kw *kw)
{
	struct inofd__mem *m;
	struct stat st;
	bool looked = false;

	for (m = kw->mems; m; m = m->kwnext) {
		struct inofd__reg *r = m->reg;

		if (m->kind != INOFD__MEM_PLAIN || !r->file || r->stale ||
		    !r->path)
			continue;
		/* the records in hand are looked at once, for every member */
		if (!looked && inofd__ahead_on(in, kw->wd,
					       IN_DELETE_SELF | IN_IGNORED,
					       -1, -1) > 0)
			return;
		looked = true;
		if (fstatat(AT_FDCWD, r->path, &st,
			    r->lnk ? AT_SYMLINK_NOFOLLOW : 0) < 0 ||
		    st.st_dev != kw->dev || st.st_ino != kw->ino)
			r->stale = true;
	}
}

/* One event, whatever it is (kept out of parse()'s loop: the slow path).
 * True: not applied, held (inofd__halves_first()). */
static __attribute__((noinline)) bool process(struct inofd *in, int wd,
					      uint32_t mask, uint32_t cookie,
					      const char *name)
{
	struct inofd__kw *kw;
	struct inofd__mem *m;

	if (mask & INOFD__SEEN) {
		struct inofd__reg *r = inofd__reg_find(in, (int)cookie);

		if (r && r->kind == INOFD__REG_PLAIN && r->seen == UINT64_MAX)
			r->seen = in->cur_pos;
		return false;
	}
	if (in->xw.reg)
		inofd__xw_record(in, wd, mask);
	if (mask & INOFD__MOVED_ID)
		return false;	/* read ahead only (inofd__ahead_on()) */
	if (mask & IN_Q_OVERFLOW) {
		overflow(in);
		return false;
	}
	kw = inofd__kw_find(in, wd);
	if (!kw)
		return false;	/* removed by the library: nothing to report */
	/*
	 * Records are applied in the kernel's order; a half waits for its
	 * partner whatever lies between, and a record whose path or order
	 * depends on how the half ends waits for that
	 * (inofd__halves_first()).
	 */
	if (in->npend) {
		if (inofd__halves_first(in, wd, mask, cookie, name))
			return true;
		kw = inofd__kw_find(in, wd);
		if (!kw)
			return false;
	}
	if ((mask & IN_ISDIR) && (mask & (IN_OPEN | IN_ACCESS |
					  IN_CLOSE_NOWRITE)) &&
	    !(mask & IN_IGNORED) && inofd__own_noise(kw, mask, name))
		return false;
	if (mask & IN_IGNORED) {
		kw_gone(in, wd, 0);
		return false;
	}
	if ((mask & (IN_MOVED_FROM | IN_MOVED_TO | IN_MOVE_SELF)) &&
	    in->unsure)
		in->unsure_moved = true;	/* caught_up() */
	if (mask & IN_MOVED_FROM) {
		inofd__moved_from(in, kw, mask, cookie, name);
		return false;
	}
	if (mask & IN_MOVED_TO)
		return inofd__moved_to(in, kw, mask, cookie, name);
	if (mask & INOFD__LATE) {
		inofd__late(in, kw, mask);
		mask &= ~INOFD__LATE;
	}
	if ((mask & IN_ATTRIB) && !name)
		name_check(in, kw);
	for (m = kw->mems; m; m = m->kwnext)
		inofd__emit(in, m, INOFD_EV_INOTIFY,
			    &(struct inofd__raw){ mask, cookie, name },
			    0);
	if ((mask & (IN_CREATE | IN_ISDIR)) == (IN_CREATE | IN_ISDIR) && name)
		for (m = kw->mems; m; m = m->kwnext)
			if (m->kind == INOFD__MEM_NODE)
				inofd__tree_newdir(in, m, name);
	if (mask & IN_MOVE_SELF)
		inofd__self_moved(in, wd);
	inofd__end_fired(in, wd);
	return false;
}

/*
 * Bits that make an event more than a report: table upkeep, pairing, tree
 * upkeep, own-listing noise (IN_ISDIR), losses.  An event with none of
 * them, on a kernel watch with one member whose path is known, in an
 * instance without coalescing, is only a report: parse() makes it itself.
 */
#define SLOW_BITS	(IN_Q_OVERFLOW | IN_IGNORED | IN_UNMOUNT | IN_ISDIR | \
			 IN_MOVED_FROM | IN_MOVED_TO | IN_MOVE_SELF | \
			 INOFD__MOVED_ID | INOFD__SEEN | INOFD__LATE)

/*
 * What parse() keeps in locals while events are only reports: the queue's
 * and the arena's cursors, and what it needs of the last kernel watch.
 * Anything else (process()) sees the instance as it is: the cursors are
 * put back first, and everything is looked at again after.
 */
struct run {
	struct inofd_event	*qw;		/* next free queue slot */
	struct inofd_event	*qlim;		/* block end or bound, if before */
	char			*acur, *aend;	/* free part of the arena chunk */
	int			wd;		/* the watch below, or -1: none */
	uint32_t		slow;		/* bits that need process(): all
						 * (~0) when every event does */
	uint32_t		want;		/* event bits reported; 0: drop */
	int			id;		/* its registration's */
	void			*data;
	uint64_t		ino, dev;	/* its kernel watch's */
	uint64_t		seq;		/* the next event's */
	const char		*pc;		/* its directory's path */
	size_t			pcjoin;		/* where an entry's name goes */
	size_t			alone;		/* that path and its NUL, in whole
						 * 16-byte blocks */
	const char		*fresh;		/* records before this one may
						 * precede a registration: slow */
};

static inline __attribute__((always_inline)) void
run_load(struct inofd *in, struct run *u)
{
	size_t room = inofd__q_room(in);

	/* no watch yet: slow, whatever wd an event has (-1 included) */
	*u = (struct run){ .qw = in->qw, .qlim = in->qwend,
			   .acur = in->arena.cur, .aend = in->arena.end,
			   .wd = -1, .slow = ~0u,
			   .seq = in->qseq + in->qtail + 1 };
	if ((size_t)(in->qwend - in->qw) > room)	/* 0 if NULL */
		u->qlim = in->qw + room;
}

static inline __attribute__((always_inline)) void
run_store(struct inofd *in, struct run *u)
{
	in->qtail += (size_t)(u->qw - in->qw);
	in->qw = u->qw;
	in->arena.cur = u->acur;
}

/* What an event on wd needs: what process() would do, decided once a run. */
static inline __attribute__((always_inline)) void
run_watch(struct inofd *in, struct run *u, int wd, const char *rec)
{
	struct inofd__kw *kw = inofd__kw_hot(in, wd);
	struct inofd__mem *m;
	struct inofd__reg *r;
	size_t dl;

	u->wd = wd;
	u->slow = ~0u;
	u->want = 0;
	if (!kw) {
		u->slow = SLOW_BITS;	/* removed by the library: dropped */
		return;
	}
	if (in->npend)
		return;		/* a half waits: process() settles it first */
	if (rec < u->fresh)
		return;		/* some registration is younger: it decides */
	m = kw->mems;
	if (!m || m->kwnext || m->kind == INOFD__MEM_PARENT || in->coalesce_ms)
		return;
	r = m->reg;
	if (r->oneshot || (r->kind == INOFD__REG_PLAIN && r->stale) ||
	    r->unsure || r->mstale)
		return;
	if (!inofd__mem_path(in, m, &dl))
		return;		/* no path: the name stays in the buffer */
	u->slow = SLOW_BITS | (r->file ? IN_ATTRIB : 0);	/* name_check() */
	u->want = r->mask & IN_ALL_EVENTS;
	u->id = r->id;
	u->data = r->data;
	u->ino = (uint64_t)kw->ino;
	u->dev = (uint64_t)kw->dev;
	u->pc = m->pc;
	u->pcjoin = m->pcjoin;
	u->alone = (m->pclen + 1 + 15) & ~(size_t)15;
}

/*
 * 16 bytes at a time, unaligned: a path is copied in whole blocks (n, at
 * least 1, rounded up to 16), which the cached path's buffer (table.c's
 * pc_room()) and the arena allocation leave room for.  No call: this runs
 * for every event.
 */
typedef char inofd__v16 __attribute__((vector_size(16), aligned(1),
				       may_alias));

static inline void copy16(char *d, const char *s, size_t n)
{
	size_t i = 0;

	do {
		*(inofd__v16 *)(d + i) = *(const inofd__v16 *)(s + i);
		i += 16;
	} while (i < n);
}

/*
 * Report e as process() would (inofd__emit() on the one member: the cached
 * directory path joined with the name) from the read buffer, with no call.
 * False: process() must do it (also when the queue block or the arena
 * chunk is used up: it knows how to get more).
 */
static inline __attribute__((always_inline)) bool
fast(struct inofd *in, struct run *u, const struct inotify_event *e,
     const char *ename, bool kernel)
{
	struct inofd_event *ev;
	const char *name = NULL;
	size_t n, elen = e->len;
	char *p;

	if (e->wd != u->wd)
		run_watch(in, u, e->wd, ename - sizeof(*e));
	if (e->mask & u->slow)
		return false;
	if (!(e->mask & u->want))	/* not wanted, or no such watch; */
		return u->slow != ~0u;	/* a mask of 0 is process()'s too */
	if (elen) {
		/*
		 * The path, then the name with its NUL padding over the rest
		 * of the path's last block (elen >= 16).  A name padded other
		 * than as the kernel pads it (to 16 bytes), or empty, is
		 * process()'s: only fed bytes have them (read(2) of inotify
		 * gives a name of at least one byte, NUL-padded to a multiple
		 * of 16: round_event_name_len()).
		 */
		if (!kernel && (elen % 16 || !ename[0]))
			return false;
		n = u->pcjoin + elen;
	} else {
		n = u->alone;
	}
	if (u->qw == u->qlim || (size_t)(u->aend - u->acur) < n)
		return false;
	p = u->acur;
	u->acur += n;
	if (elen) {
		/*
		 * The path's first pcjoin bytes: its NUL (or its own final
		 * '/') at pcjoin - 1 becomes the '/', the name follows.
		 */
		copy16(p, u->pc, u->pcjoin);
		p[u->pcjoin - 1] = '/';
		name = p + u->pcjoin;
		copy16((char *)name, ename, elen);
	} else {
		copy16(p, u->pc, u->alone);	/* the path and its NUL */
	}
	ev = u->qw++;
	/* field by field: no zeroing first (the padding is never read) */
	ev->seq = u->seq++;
	ev->type = INOFD_EV_INOTIFY;
	ev->wd = u->id;
	ev->mask = e->mask;
	ev->cookie = e->cookie;
	ev->flags = 0;
	ev->error = 0;
	ev->ino = u->ino;
	ev->dev = u->dev;
	ev->name = name;
	ev->path = p;
	ev->data = u->data;
	ev->from_wd = -1;
	ev->from_name = NULL;
	ev->from_path = NULL;
	ev->from_data = NULL;
	return true;
}

/*
 * The records from in->scur to in->send, at most budget of them; names
 * stay in the buffer, which lives until the next read.  in->spos is the
 * stream offset of in->scur; both move past what was parsed.  kernel: the
 * bytes are what read(2) gave, whose records are whole and whose names are
 * NUL-terminated and padded to 16 bytes, so the fast path does not check
 * that again per record (fed bytes are checked: they can be anything).
 * Record lengths are checked either way.
 */
static inline __attribute__((always_inline)) int
parse_as(struct inofd *in, size_t budget, bool kernel)
{
	const char *start = in->scur, *buf = start, *end = in->send;
	uint64_t base = in->spos;
	size_t len = (size_t)(end - buf);
	/* records before fresh were queued before some registration was
	 * made: process() reports them only to the older ones */
	const char *fresh = in->born_max <= base ? buf :
			    in->born_max - base >= len ? end :
			    buf + (in->born_max - base);
	struct run u;
	size_t n = 0;
	int r = 0;

	run_load(in, &u);
	u.fresh = fresh;
	while ((size_t)(end - buf) >= sizeof(struct inotify_event) &&
	       n++ < budget) {
		/*
		 * read(2)'s records are aligned (the buffer is malloc()'s,
		 * every record a multiple of 16 bytes long); fed records may
		 * sit at any alignment: their header is copied.
		 */
		const struct inotify_event *e = (const void *)buf;
		const char *name = buf + sizeof(*e);
		struct inotify_event h;

		if (!kernel) {
			memcpy(&h, buf, sizeof(h));
			e = &h;
		}
		if (e->len > (size_t)(end - buf) - sizeof(*e) ||
		    (!kernel && e->len && name[e->len - 1] != '\0')) {
			r = -EINVAL;
			break;
		}
		buf += sizeof(*e) + e->len;
		if (fast(in, &u, e, name, kernel))
			continue;
		run_store(in, &u);
		in->rest = buf;
		in->rest_end = end;
		in->rec = name - sizeof(*e);
		in->cur_pos = base + (uint64_t)(in->rec - start);
		in->at_rec = true;
		if (process(in, e->wd, e->mask, e->cookie,
			    (e->len && name[0]) ? name : NULL)) {
			/* held: parsed again from here (stream_step());
			 * process() may have queued events (a half decided
			 * first): the cursors are taken again, as below */
			in->at_rec = false;
			in->held = true;
			buf = in->rec;
			run_load(in, &u);
			break;
		}
		in->at_rec = false;
		run_load(in, &u);
		u.fresh = fresh;
		if (in->backlog_due)
			break;		/* the rest: read_backlog() */
	}
	run_store(in, &u);
	in->spos = base + (uint64_t)(buf - start);
	in->scur = buf;
	/* a torn or malformed record: what came before it is reported */
	if (!r && !in->backlog_due && buf != end &&
	    (size_t)(end - buf) < sizeof(struct inotify_event))
		r = -EINVAL;
	return r;
}

static int parse_read(struct inofd *in, size_t budget)
{
	if (in->nplaced)	/* before they are parsed */
		inofd__placed_scan(in, in->scur, in->send, in->spos);
	return parse_as(in, budget, true);
}

static int parse_fed(struct inofd *in)
{
	if (in->nplaced)
		inofd__placed_scan(in, in->scur, in->send, in->spos);
	return parse_as(in, SIZE_MAX, false);
}

void inofd__born(struct inofd *in, struct inofd__reg *r, uint64_t at)
{
	r->born = at;
	if (at > in->born_max)
		in->born_max = at;
}

/*
 * parse() stopped at an IN_Q_OVERFLOW record with records after it not
 * read yet.  They are read now, to EAGAIN, into a buffer of their own
 * after the records of buf not parsed yet, so that the roots' chains can
 * be checked with every rename after the loss in hand (inofd__roots_check());
 * then the stream goes on in that buffer.  The kernel's queue bounds what
 * there is to read (max_queued_events records); a writer that keeps it
 * full meets INOFD__BACKLOG_MAX, and the check is made with what was read.
 */
static int read_backlog(struct inofd *in, bool check)
{
	size_t left = (size_t)(in->rest_end - in->rest), cap, fill;
	uint64_t base = in->kpos - left;
	bool again = false;
	char *b;

	in->backlog_due = false;
	cap = left + INOFD__READ_BUF;
	b = malloc(cap);
	if (!b) {
		/* the records left cannot be parsed: a loss */
		in->rescan_due = in->crawl_due = true;
		return -ENOMEM;
	}
	memcpy(b, in->rest, left);
	fill = left;
	while (!again) {
		ssize_t n;

		if (cap - fill < INOFD__READ_MIN) {
			char *nb;

			if (cap >= INOFD__BACKLOG_MAX)
				break;
			nb = realloc(b, cap * 2);
			if (!nb)
				break;
			b = nb;
			cap *= 2;
		}
		n = inofd__backend_read(in, b + fill, cap - fill);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			again = n < 0 && errno == EAGAIN;
			break;
		}
		fill += (size_t)n;
		in->kpos += (uint64_t)n;
	}
	inofd__mounts_peek(in);
	free(in->buf2);
	in->buf2 = b;			/* names point into it: kept to the
					 * next read, as buf is */
	in->more = !again;
	in->rest = b;
	in->rest_end = b + fill;
	if (check)
		inofd__roots_check(in);
	in->scur = b;
	in->send = b + fill;
	in->spos = base;
	return 0;
}

/*
 * The parse held a record (inofd__halves_first()): what the kernel queued since
 * is read behind it (the held records first, in a buffer of their own, as
 * after a loss), and the parse goes on from it.
 */
static int read_held(struct inofd *in)
{
	in->held = false;
	in->rest = in->scur;
	in->rest_end = in->send;
	return read_backlog(in, false);
}

/*
 * Walks wait for the halves and held records in hand (settle() below),
 * but a storm of directory renames across a tree's edge always has one
 * waiting: each directory that came in stays unwatched, and its halves
 * wait for partners that cannot come (tests/probes/writers: no walk ran
 * in 15 s).  So a wait is bounded: after INOFD__WALK_WAIT_WINDOWS pairing
 * windows (in->walk_starved), the directories' halves, the records held
 * for them and a wait above a root are decided with what is in hand, as
 * at their deadlines (a pair split so is a MOVE_OUT and a MOVE_IN); a
 * file's half keeps its window (rename.c, inofd__halves_due()).
 */
#define INOFD__WALK_WAIT_WINDOWS 2

static void walk_wait(struct inofd *in, uint64_t now)
{
	uint64_t bound = (uint64_t)in->pair_ms * INOFD__WALK_WAIT_WINDOWS *
			 1000000u;

	if (in->more || !inofd__walk_pending(in) ||
	    (!in->xw.reg && !in->held && !in->npend_dir)) {
		in->walk_blocked = 0;
		in->walk_starved = false;
	} else if (!in->walk_blocked) {
		in->walk_blocked = now;
	} else if (now - in->walk_blocked >= bound) {
		in->walk_starved = true;
	}
}

/* After a batch: due halves and windows, crawls, walk steps, rescans. */
static int settle(struct inofd *in)
{
	uint64_t now = inofd__now_ns();

	walk_wait(in, now);
	inofd__halves_due(in, now);
	inofd__win_expire(in, now);
	inofd__xw_due(in, now);
	/* the records of the loss are done, and those queued before a walk
	 * placed a directory (inofd__placed_now()) */
	caught_up(in);
	if (in->crawl_due && !in->held) {
		in->crawl_due = false;
		inofd__tree_crawl(in);
	}
	/*
	 * Walks look at the file system as it is now: they run once the
	 * events read so far are all there is (read(2) said EAGAIN), so no
	 * older event is given a path from after it; and not while a path
	 * above a root waits for its next records (in->xw), nor while a
	 * record is held, unparsed, nor while a directory's half waits for
	 * its partner (a directory moved into one not walked yet is found by
	 * the walk only once its half is decided: listed as new if it moved
	 * out).  A file's half does not hold walks up: a directory a umount
	 * uncovered, listed late, would miss what leaves it meanwhile (oracle
	 * seed 20105 -P -M -W -Y -C, a writer's halves always waiting).
	 */
	if (!in->more && !in->xw.reg && !in->held && !in->npend_dir) {
		/*
		 * Paced by the queue: a walk reports what it finds, so it
		 * lists no more entries than the queue has room for (a
		 * caller that reads without draining gets no new walk).
		 */
		size_t room = inofd__q_room(in);

		inofd__walk_retry(in);
		if (room)
			inofd__walk_run(in, room < INOFD__WALK_BUDGET ?
					(unsigned int)room :
					INOFD__WALK_BUDGET);
	}
	caught_up(in);	/* a crawl ended, and nothing was queued before */
	if (in->nowed)
		inofd__q_owed(in);
	inofd__q_rescan(in);
	return (int)inofd__q_ready(in);
}

/*
 * The stream: the records read and not parsed yet (in->scur to in->send)
 * become events a few at a time, as inofd_next() asks for them, so that an
 * event is built just before it is taken and is still in the cache then
 * (a whole batch materialised first is several hundred KiB of events and
 * paths).  One step parses up to INOFD__STREAM_RECS records; the step
 * that ends the buffer ends the batch: the backlog after a loss, the
 * mount check and settle(), as when the batch was parsed at once.
 * Returns 0 or -errno (the batch is abandoned, as read(2)'s error would).
 */
static int stream_step(struct inofd *in)
{
	int r = parse_read(in, INOFD__STREAM_RECS);

	if (r == 0 && in->backlog_due)
		r = read_backlog(in, true);
	if (r == 0 && in->held && in->more && !in->buf2)
		r = read_held(in);	/* what may end the half: now */
	if (r < 0) {
		in->sact = false;
		return r;
	}
	if (in->held) {
		/*
		 * A record waits for a half (inofd__halves_first()): the batch
		 * ends here; the next inofd_read() reads what came since behind
		 * it and goes on (inofd_timeout() says when the half is due).
		 */
		in->sact = false;
		settle(in);
		return 0;
	}
	if (in->scur != in->send)
		return 0;
	in->sact = false;
	/* read(2) said EAGAIN: with every record parsed, the paths are
	 * today's; mounted over or uncovered (mounts.c) */
	if (!in->more)
		inofd__mounts_check(in);
	settle(in);
	return 0;
}

/* Steps until an event is ready or the batch is done. */
static int stream_fill(struct inofd *in)
{
	int r = 0;

	while (in->sact && !r && !inofd__q_ready(in))
		r = stream_step(in);
	return r;
}

bool inofd__stream_more(struct inofd *in)
{
	int r;

	if (!in->sact)
		return false;
	r = stream_fill(in);
	if (r < 0 && !in->serr)
		in->serr = r;	/* inofd_read() says it */
	return true;
}

void inofd__stream_finish(struct inofd *in)
{
	/* a held record too: its half is settled with what is in hand */
	if (in->held) {
		in->held = false;
		in->sact = true;
	}
	in->nohold = true;
	while (in->sact) {
		int r = stream_step(in);

		if (r < 0 && !in->serr)
			in->serr = r;
	}
	in->nohold = false;
}

int inofd__feed(struct inofd *in, const void *buf, size_t len)
{
	char *copy;
	int r;

	if (!in || (!buf && len))
		return -EINVAL;
	inofd__stream_finish(in);
	inofd__q_reset(in);
	copy = inofd__arena_alloc(&in->arena, len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, len);
	in->more = false;	/* fed bytes are all there is */
	in->kpos += len;
	in->scur = copy;
	in->send = copy + len;
	in->spos = in->kpos - len;
	in->nohold = true;
	r = parse_fed(in);
	in->nohold = false;
	in->scur = in->send = NULL;
	if (r < 0)
		return r;
	return settle(in);
}

/*
 * Fill in->buf from the backend, while it has room and rounds are left
 * (*rounds counts them); *again: read(2) said EAGAIN.  The bytes read, or
 * -errno when a read failed before any.
 */
static ssize_t read_fill(struct inofd *in, unsigned int *rounds, bool *again)
{
	size_t fill = 0;

	*again = false;
	while (in->bufsz - fill >= INOFD__READ_MIN &&
	       *rounds < INOFD__READ_ROUNDS) {
		ssize_t n = inofd__backend_read(in, in->buf + fill,
						in->bufsz - fill);

		(*rounds)++;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			*again = true;
			break;
		}
		if (n < 0) {
			if (!fill)
				return -errno;
			break;
		}
		if (n == 0)
			break;
		fill += (size_t)n;
	}
	return (ssize_t)fill;
}

int inofd__read(struct inofd *in)
{
	unsigned int rounds = 0;
	int ready = 0, r;

	if (in->ifd_out)
		inofd__mounts_back(in);	/* inofd_timeout() was 0 meanwhile */
	if (in->serr) {
		r = in->serr;
		in->serr = 0;
		return r;
	}
	/* a batch still streaming: its next events */
	if (in->sact) {
		r = stream_fill(in);
		return r < 0 ? r : (int)inofd__q_ready(in);
	}
	if (!in->buf) {
		in->buf = malloc(INOFD__READ_BUF);
		if (!in->buf)
			return -ENOMEM;
		in->bufsz = INOFD__READ_BUF;
	}
	/* events of the last read still queued: their names live in buf */
	if (!inofd__q_reset(in))
		return settle(in);
	/* a record held for a half: what came since, behind it */
	if (in->held) {
		r = read_held(in);
		if (r < 0)
			return r;
		in->sact = true;
		r = stream_fill(in);
		return r < 0 ? r : (int)inofd__q_ready(in);
	}
	free(in->buf2);
	in->buf2 = NULL;
	for (;;) {
		bool again;
		ssize_t got = read_fill(in, &rounds, &again);
		size_t fill;

		if (got < 0)
			return (int)got;
		fill = (size_t)got;
		in->more = !again;	/* known to the parse: see overflow() */
		in->kpos += fill;
		if (fill)
			inofd__mounts_peek(in);	/* a mount change before? */
		if (in->chain_short && fill)
			inofd__tree_recheck(in);	/* holes above roots */
		in->scur = in->buf;
		in->send = in->buf + fill;
		in->spos = in->kpos - fill;
		in->sact = true;
		r = stream_fill(in);
		if (r < 0)
			return r;
		ready = (int)inofd__q_ready(in);
		/*
		 * Read until EAGAIN (edge-triggered epoll needs that) or until
		 * there is something to hand out: the buffer cannot be reused
		 * before the events that point into it are taken (a batch
		 * still streaming has some ready: stream_fill()).
		 */
		if (ready || !in->more || rounds >= INOFD__READ_ROUNDS)
			break;
		inofd__q_reset(in);
		free(in->buf2);		/* nothing points into it now */
		in->buf2 = NULL;
	}
	return ready;
}

int inofd__timeout(const struct inofd *in)
{
	uint64_t d, now;

	if (inofd__q_ready(in) || in->sact || in->serr || in->ifd_out ||
	    (inofd__walk_pending(in) && !in->xw.reg) || in->rescan_due ||
	    in->crawl_due || in->dhead || in->more || in->nowed ||
	    inofd__fan_pending(in))
		return 0;
	d = inofd__pair_deadline(in);
	if (!d)
		return in->held ? 0 : -1;	/* its half was settled */
	now = inofd__now_ns();
	if (d <= now)
		return 0;
	/* round up: waking early would only spin */
	return (int)((d - now + 999999u) / 1000000u);
}
