// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The rename engine: the two halves of a rename paired by cookie, the trees
 * that follow what moved, by identity, and the waits both need.
 *
 * The states of a half (an IN_MOVED_FROM record), and what moves it on:
 *
 *   read      inofd__moved_from(): the source paths of every member are
 *             taken now (pend_src()), a directory's node is held by its
 *             watch (p->self) and marked moving (no path until decided).
 *             -> pending; no room: the oldest pending one moves out first,
 *             and with none to take, this one -> moved out, and a RESCAN.
 *   pending   in the cookie table and the deadline list (pend_add()).
 *             Records after it are applied while it waits, except one it
 *             concerns (concerns()): halves_first() decides the half
 *             before that record, by what is ahead in hand:
 *               its TO             -> paired, now (pair_ahead());
 *               its own MOVE_SELF  -> moved out; unless a TO ahead puts it
 *                                     back in a tree by identity
 *                                     (identity_to_ahead()): rekeyed, by_id,
 *                                     -> pending on that TO;
 *               a loss             -> moved out;
 *               nothing            -> the record is held (below).
 *             Its TO in order: inofd__moved_to() -> paired.  A loss
 *             (IN_Q_OVERFLOW): inofd__settle_halves() -> moved out.  Its
 *             deadline: inofd__halves_due() -> moved out (not while the
 *             record held is its TO: held_partner()).
 *   held      a record the half decides waits, unparsed: the parse stops at
 *             it (in->held) until more is read behind it or the deadline.
 *             A TO whose directory's MOVE_SELF is not in hand yet waits so
 *             too (self_due()): it says what the rename moved.
 *   paired    moved_to_p(): one RENAME per registration on both sides (a
 *             MOVE_IN / MOVE_OUT for the others), then the trees follow:
 *             the node is moved (landed_on() for what had the name), or
 *             freed if it left; a directory of a root's chain, renamed,
 *             -> chain_renamed().
 *   moved out moved_out(): MOVE_OUT as of the half's own record, the
 *             subtree of a node that left freed; a root's chain that moved
 *             -> inofd__tree_gone_or_back().  Paired or moved out, the half
 *             goes back to the free list (pend_put()).
 *
 * A rename in a root's chain (of the root, or of a directory above it) is
 * told by the moved directory's MOVE_SELF (moved_it()).  Not in hand, the
 * tree waits (in->xw, one at a time, r->moving: no paths): the next record
 * decides (inofd__xw_record(): MOVE_SELF, a later rename out, a loss), or
 * the deadline (inofd__xw_due()), in xw_decide().  After a loss,
 * the renames above the roots among the records in hand are undone on the
 * roots found by inode (inofd__roots_check(), anc_moves_ahead()).
 *
 * With raw halves (INOFD_RAW_MOVES, or coalescing) each record is reported
 * as it comes, in place of RENAME, MOVE_IN and MOVE_OUT; the pairing above
 * still runs, for the trees.
 *
 * Nothing here holds back an event that is ready: only ready events enter
 * the queue, and nothing here is O(queue).  The halves wait in a table
 * indexed by cookie and a list ordered by deadline (every half gets the
 * same timeout, so appending keeps the order).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include "rename.h"

/* ---- pending halves ------------------------------------------------- */

static unsigned int bucket(uint32_t cookie)
{
	return (cookie * 2654435761u) % INOFD__COOKIE_BUCKETS;
}

/* Record m's source path in p (kept buffers: no allocation once grown). */
static void pend_src(struct inofd *in, struct inofd__pend *p,
		     struct inofd__mem *m)
{
	struct inofd__mem *c;
	const char *dir;
	size_t dl = 0, nl = strlen(p->name), need;

	if (p->nsrc >= sizeof(p->src) / sizeof(p->src[0]))
		return;
	p->src[p->nsrc].reg = m->reg->id;
	p->src[p->nsrc].off = (size_t)-1;
	p->src[p->nsrc].unsure = inofd__mem_unsure(m);
	/* the node the record names, held by identity: where it goes is
	 * decided on it, whatever has its name by then */
	c = (p->mask & IN_ISDIR) && m->kind == INOFD__MEM_NODE ?
	    inofd__node_src(m, p->name) : NULL;
	p->src[p->nsrc].node = c ? c->kw->wd : -1;
	dir = inofd__mem_path(in, m, &dl);
	need = p->plen + dl + nl + 2;
	if (dir && need > p->pcap) {
		char *n = realloc(p->paths, need * 2);

		if (n) {
			p->paths = n;
			p->pcap = need * 2;
		}
	}
	if (dir && need <= p->pcap) {
		char *d = p->paths + p->plen;

		memcpy(d, dir, dl);
		if (!dl || dir[dl - 1] != '/')
			d[dl++] = '/';
		memcpy(d + dl, p->name, nl + 1);
		p->src[p->nsrc].off = p->plen;
		p->plen += dl + nl + 1;
	}
	p->nsrc++;
}

/* Was the source path of m's registration in p taken from a tree that
 * was unsure? */
static bool pend_unsure(const struct inofd__pend *p,
			const struct inofd__mem *m)
{
	unsigned int i;

	for (i = 0; i < p->nsrc; i++)
		if (p->src[i].reg == m->reg->id)
			return p->src[i].unsure;
	return false;
}

/* The source path of m's registration recorded in p, or NULL. */
static const char *pend_path(const struct inofd__pend *p,
			     const struct inofd__mem *m)
{
	unsigned int i;

	for (i = 0; i < p->nsrc; i++)
		if (p->src[i].reg == m->reg->id)
			return p->src[i].off == (size_t)-1 ? NULL :
			       p->paths + p->src[i].off;
	return NULL;
}

/* The tree node of m's registration that p's record named when it was
 * read (held by its wd), or NULL if it is gone or was none. */
static struct inofd__mem *pend_node(const struct inofd *in,
				    const struct inofd__pend *p,
				    const struct inofd__mem *m)
{
	struct inofd__kw *kw;
	unsigned int i;

	if (!(p->mask & IN_ISDIR) || m->kind != INOFD__MEM_NODE)
		return NULL;
	for (i = 0; i < p->nsrc; i++)
		if (p->src[i].reg == m->reg->id) {
			kw = p->src[i].node < 0 ? NULL :
			     inofd__kw_find(in, p->src[i].node);
			return kw ? inofd__mem_of(kw, m->reg) : NULL;
		}
	/* not recorded (no room): the name, which nothing changed since */
	return inofd__node_src(m, p->name);
}

/* The pending half of cookie, or NULL. */
static const struct inofd__pend *pend_find(const struct inofd *in,
					   uint32_t cookie)
{
	const struct inofd__pend *p;

	for (p = in->cookies[bucket(cookie)]; p; p = p->hnext)
		if (p->cookie == cookie)
			return p;
	return NULL;
}

/* A new pending half: the record of an IN_MOVED_FROM on kw (NULL: no
 * room). */
static struct inofd__pend *pend_add(struct inofd *in, struct inofd__kw *kw,
				    uint32_t mask, uint32_t cookie,
				    const char *name)
{
	struct inofd__pend *p = in->pfree;
	unsigned int b = bucket(cookie);
	struct inofd__mem *m;

	if (in->npend >= INOFD__PEND_MAX)
		return NULL;
	if (p)
		in->pfree = p->hnext;
	else if (!(p = calloc(1, sizeof(*p))))
		return NULL;
	p->cookie = cookie;
	p->wd = kw->wd;
	p->mask = mask;
	snprintf(p->name, sizeof(p->name), "%s", name ? name : "");
	p->nsrc = 0;
	p->self = -1;
	p->by_id = false;
	p->plen = 0;
	for (m = kw->mems; m; m = m->kwnext)
		if (m->kind != INOFD__MEM_PARENT)
			pend_src(in, p, m);
	p->deadline = inofd__now_ns() + (uint64_t)in->pair_ms * 1000000u;
	p->pos = in->cur_pos;
	p->hnext = in->cookies[b];
	in->cookies[b] = p;
	p->tprev = in->plast;
	p->tnext = NULL;
	if (in->plast)
		in->plast->tnext = p;
	else
		in->pfirst = p;
	in->plast = p;
	in->npend++;
	if (mask & IN_ISDIR)
		in->npend_dir++;
	return p;
}

/* p out of its cookie's bucket */
static void bucket_unlink(struct inofd *in, struct inofd__pend *p)
{
	struct inofd__pend **pp;

	for (pp = &in->cookies[bucket(p->cookie)]; *pp; pp = &(*pp)->hnext)
		if (*pp == p) {
			*pp = p->hnext;
			break;
		}
}

static void pend_unlink(struct inofd *in, struct inofd__pend *p)
{
	bucket_unlink(in, p);
	if (p->tprev)
		p->tprev->tnext = p->tnext;
	else
		in->pfirst = p->tnext;
	if (p->tnext)
		p->tnext->tprev = p->tprev;
	else
		in->plast = p->tprev;
	in->npend--;
	if (p->mask & IN_ISDIR)
		in->npend_dir--;
}

/* Half p waits for the record of another cookie from now on. */
static void pend_rekey(struct inofd *in, struct inofd__pend *p,
		       uint32_t cookie)
{
	bucket_unlink(in, p);
	p->cookie = cookie;
	p->hnext = in->cookies[bucket(cookie)];
	in->cookies[bucket(cookie)] = p;
}

/* The pending half of cookie, out of the table, or NULL. */
static struct inofd__pend *pend_take(struct inofd *in, uint32_t cookie)
{
	struct inofd__pend *p;

	for (p = in->cookies[bucket(cookie)]; p; p = p->hnext)
		if (p->cookie == cookie)
			break;
	if (p)
		pend_unlink(in, p);
	return p;
}

/* The oldest pending half if it is due at now (any if now is 0). */
static struct inofd__pend *pend_due(struct inofd *in, uint64_t now)
{
	struct inofd__pend *p = in->pfirst;

	if (!p || (now && p->deadline > now))
		return NULL;
	pend_unlink(in, p);
	return p;
}

/* A half decided: back to the free list. */
static void pend_put(struct inofd *in, struct inofd__pend *p)
{
	p->hnext = in->pfree;
	in->pfree = p;
}

void inofd__pend_free(struct inofd *in)
{
	struct inofd__pend *p;

	while ((p = pend_due(in, 0)))
		pend_put(in, p);
	while ((p = in->pfree)) {
		in->pfree = p->hnext;
		free(p->paths);
		free(p);
	}
}

uint64_t inofd__pair_deadline(const struct inofd *in)
{
	uint64_t d = 0;

	if (in->pfirst)
		d = in->pfirst->deadline;
	if (in->wfirst && (!d || in->wfirst->win_deadline < d))
		d = in->wfirst->win_deadline;
	if (in->xw.reg && (!d || in->xw.deadline < d))
		d = in->xw.deadline;
	return d;
}

/* ---- pairing and following ------------------------------------------ */

static bool raw_halves(const struct inofd *in)
{
	return (in->flags & INOFD_RAW_MOVES) || in->coalesce_ms;
}

/* A source path taken from a tree that was unsure: the event says so. */
static void flag_src(struct inofd_event *ev, const struct inofd__pend *p,
		     const struct inofd__mem *m)
{
	if (ev && pend_unsure(p, m))
		ev->flags |= INOFD_EVF_STALE_PATH;
}

static void moved_out_at(struct inofd *in, struct inofd__pend *p);

/* An IN_MOVED_FROM whose IN_MOVED_TO did not come (or is lost). */
static void moved_out(struct inofd *in, struct inofd__pend *p)
{
	uint64_t pos = in->cur_pos;
	bool at = in->at_rec;

	/* reported as of its own record: registrations made since do not
	 * see it */
	in->cur_pos = p->pos;
	in->at_rec = true;
	moved_out_at(in, p);
	in->cur_pos = pos;
	in->at_rec = at;
}

static void moved_out_at(struct inofd *in, struct inofd__pend *p)
{
	struct inofd__kw *kw = inofd__kw_find(in, p->wd);
	struct inofd__mem *m, *next;

	if (!kw)
		return;
	if (!raw_halves(in))
		for (m = kw->mems; m; m = m->kwnext)
			flag_src(inofd__emit_path(in, m, INOFD_EV_MOVE_OUT,
					 &(struct inofd__raw){ p->mask,
							       p->cookie,
							       p->name },
					 pend_path(p, m)), p, m);
	if (!(p->mask & IN_ISDIR))
		goto out;
	for (m = kw->mems; m; m = next) {
		struct inofd__mem *c;

		next = m->kwnext;
		if (m->kind == INOFD__MEM_PARENT) {
			/*
			 * The root, or a directory above it, went elsewhere:
			 * unless it is back already (moved out and in again
			 * before this was read), where it is now is unknown.
			 */
			if ((m == m->reg->plink &&
			     !strcmp(m->reg->rootname, p->name)) ||
			    inofd__anc_holds(m, p->name) >= 0)
				inofd__tree_gone_or_back(in, m->reg);
			continue;
		}
		/* the node the record named, not what has its name now;
		 * unless a walk found it in the tree since (!moving) */
		if (m->kind == INOFD__MEM_NODE &&
		    (c = pend_node(in, p, m)) && c != m->reg->root &&
		    c->moving && !inofd__node_below(c, m)) {
			/* next may be below c only if c holds kw: not so */
			inofd__subtree_free(in, c);
		}
	}
out:
	inofd__end_fired(in, p->wd);
}

/* Every pending half, as a move-out. */
void inofd__settle_halves(struct inofd *in)
{
	struct inofd__pend *p;

	while ((p = pend_due(in, 0))) {
		moved_out(in, p);
		pend_put(in, p);
	}
}

void inofd__moved_from(struct inofd *in, struct inofd__kw *kw,
			uint32_t mask, uint32_t cookie, const char *name)
{
	struct inofd__pend *p;
	struct inofd__mem *m;

	if (raw_halves(in))
		for (m = kw->mems; m; m = m->kwnext)
			inofd__emit(in, m, INOFD_EV_INOTIFY,
			    &(struct inofd__raw){ mask, cookie, name },
			    0);
	/* the source paths are taken now, before anything else moves */
	p = pend_add(in, kw, mask, cookie, name);
	if (!p && (p = pend_due(in, 0))) {
		moved_out(in, p);		/* the oldest one goes */
		pend_put(in, p);
		p = pend_add(in, kw, mask, cookie, name);
	}
	if (!p) {
		struct inofd__pend tmp = { .wd = kw->wd, .mask = mask,
					   .cookie = cookie, .nsrc = 0,
					   .pos = in->cur_pos, .self = -1 };

		snprintf(tmp.name, sizeof(tmp.name), "%s", name ? name : "");
		moved_out(in, &tmp);
		in->rescan_due = in->crawl_due = true;
		return;
	}
	if (!(mask & IN_ISDIR))
		return;
	for (m = kw->mems; m; m = m->kwnext) {
		struct inofd__mem *c;

		struct inofd__reg *r = m->reg;
		int lvl;

		/* where it went is unknown until the other half */
		if (m->kind == INOFD__MEM_NODE &&
		    (c = inofd__node_src(m, name))) {
			c->xpart = false;	/* this is its half */
			c->moving = true;
			p->self = c->kw->wd;
			inofd__paths_changed(in);
		}
		if (m->kind != INOFD__MEM_PARENT)
			continue;
		lvl = inofd__anc_holds(m, name);
		if (m == r->plink && !strcmp(r->rootname, name ? name : "")) {
			r->moving = true;
			p->self = r->root ? r->root->kw->wd : -1;
			inofd__paths_changed(in);
		} else if (lvl >= 0) {
			/* anc[lvl] holds the moving level: the next one is
			 * it (the root's parent past the last) */
			struct inofd__mem *o = (unsigned int)lvl + 1 < r->nanc ?
					       r->anc[lvl + 1] : r->plink;

			r->moving = true;
			if (o)
				p->self = o->kw->wd;
			inofd__paths_changed(in);
		}
	}
}

/*
 * The record at *b, before end, into *h (fed bytes: any alignment), and
 * *b past it; its name, or NULL at the end or at a torn record.
 */
static const char *rec_step(const char **b, const char *end,
			    struct inotify_event *h)
{
	const char *name;

	if (!*b || (size_t)(end - *b) < sizeof(*h))
		return NULL;
	memcpy(h, *b, sizeof(*h));
	if (h->len > (size_t)(end - *b) - sizeof(*h))
		return NULL;
	name = *b + sizeof(*h);
	*b = name + h->len;
	return name;
}

/*
 * Exchanges (renameat2(RENAME_EXCHANGE); docs/library.md,
 * "The rename engine").  The
 * kernel reports one as two renames, each with its cookie, one after the
 * other under the same locks:
 *   MOVED_FROM(x,c1) MOVED_TO(y,c1) MOVE_SELF(X) MOVED_FROM(y,c2)
 *   MOVED_TO(x,c2) MOVE_SELF(Y)
 * and a rename onto an existing directory (replaced) as one, with
 * DELETE_SELF and IGNORED for the replaced one after it.  What a rename
 * moved is told by identity: the MOVE_SELF that follows it is on the
 * moved directory's own watch (the fanotify backend's INOFD__MOVED_ID:
 * types.h).  So the records after the current one that are in hand are
 * looked at: the first on wd with a bit of mask gives its mask (> 0); 0
 * if an IN_MOVED_FROM on stop1 or stop2 comes first (a later rename out
 * of either directory of this one: the kernel queues a rename's MOVE_SELF
 * before it unlocks the two directories, so nothing about this rename
 * comes after it); -1 if the records in hand end first; -2 if a loss comes
 * first.
 */
int64_t inofd__ahead_on(const struct inofd *in, int wd, uint32_t mask,
			int stop1, int stop2)
{
	const char *b = in->rest;
	struct inotify_event h;

	while (rec_step(&b, in->rest_end, &h)) {
		if (h.mask & IN_Q_OVERFLOW)
			return -2;
		if (h.wd == wd && (h.mask & mask))
			return h.mask;
		if ((h.mask & IN_MOVED_FROM) && h.wd >= 0 &&
		    (h.wd == stop1 || h.wd == stop2))
			return 0;
	}
	return -1;
}

/* What says that wd's directory was moved by the rename just read */
#define MOVED_BITS	(IN_MOVE_SELF | INOFD__MOVED_ID)

/*
 * A directory arrived as name in tree node t (c: the node that moved
 * there, or NULL: it came from outside), where node o had that name.  o
 * was exchanged (its MOVE_SELF is ahead: the next IN_MOVED_FROM of name
 * is its own), or replaced (its DELETE_SELF or IGNORED is ahead: it ends
 * there).  Neither in hand: neither node is found by name and both have
 * no path until a walk finds each by its watch; a RESCAN says so.
 */
static void landed_on(struct inofd *in, struct inofd__mem *t,
		      struct inofd__mem *c, const char *name)
{
	struct inofd__mem *o;
	int64_t b;

	for (o = t->child; o; o = o->next)
		if (o != c && !o->shadow && o->name && !strcmp(o->name, name))
			break;
	if (!o)
		return;
	b = inofd__ahead_on(in, o->kw->wd,
			    MOVED_BITS | IN_DELETE_SELF | IN_IGNORED, -1, -1);
	if (b > 0 && (b & MOVED_BITS)) {
		o->xpart = o->moving = true;
	} else if (b > 0) {
		o->shadow = true;	/* its path is still its own */
	} else {
		o->shadow = o->moving = true;
		if (c)
			c->shadow = c->moving = true;
		in->rescan_due = in->crawl_due = true;
	}
	inofd__paths_changed(in);
}

/*
 * Did the rename just read (from directory from_wd to to_wd) move d?  1 it
 * did (its MOVE_SELF follows), 0 it did not (an exchange's other half,
 * which names it too: a later rename out of either directory comes
 * first), -1 not known from the records in hand (no watch on d, or the
 * records end first).
 */
static int moved_it(const struct inofd *in, const struct inofd__mem *d,
		    int from_wd, int to_wd)
{
	int64_t b;

	if (!d)
		return -1;
	if (d->kw->wd == in->id_moved)
		return 1;	/* told by identity (a half by_id) */
	b = inofd__ahead_on(in, d->kw->wd, MOVED_BITS, from_wd, to_wd);
	return b > 0 ? 1 : (int)b;
}

/*
 * What a rename to name to in r's chain, of the root (lvl -1) or of the
 * directory at level lvl + 1, did, once told: it moved that directory
 * (it > 0), or it was the other half of an exchange (0: the directory
 * stays where it was), or it is not known (< 0: checked by identity where
 * the path says, a RESCAN; else lost).
 */
static void chain_told(struct inofd *in, struct inofd__reg *r, int lvl,
		       const char *to, int it)
{
	if (it > 0 && lvl < 0) {
		inofd__root_renamed(in, r, to);
	} else if (it > 0) {
		inofd__anc_renamed(in, r, (unsigned int)lvl, to);
	} else if (it == 0) {
		r->moving = false;
		inofd__paths_changed(in);
	} else {
		inofd__tree_gone_or_back(in, r);
	}
}

/*
 * The decision in->xw waits for: moved (1: the directory's MOVE_SELF came
 * first), not moved (0: its next rename came first), or not known (-1:
 * a loss, the pairing timeout, or another such wait: it is checked by
 * identity where the path says, a RESCAN; else lost).
 */
static void xw_decide(struct inofd *in, int it)
{
	struct inofd__reg *r = inofd__reg_find(in, in->xw.reg);

	in->xw.reg = 0;
	if (r && r->kind == INOFD__REG_TREE && !r->lost)
		chain_told(in, r, in->xw.lvl, in->xw.to, it);
	free(in->xw.to);
	in->xw.to = NULL;
}

/* A record while in->xw waits: does it decide? */
void inofd__xw_record(struct inofd *in, int wd, uint32_t mask)
{
	if (mask & IN_Q_OVERFLOW)
		xw_decide(in, -1);
	else if (wd == in->xw.dir_wd && (mask & MOVED_BITS))
		xw_decide(in, 1);
	else if (wd == in->xw.from_wd && (mask & IN_MOVED_FROM))
		xw_decide(in, 0);
}

/*
 * A rename (to name to) in a directory of r's chain that names the root
 * (lvl -1) or the directory at level lvl + 1, d: it moved d (it > 0), or
 * it is the other half of an exchange (0), or the records in hand do not
 * say (-1): then d has no path until the next records do, within the
 * pairing timeout.
 */
static void chain_renamed(struct inofd *in, struct inofd__reg *r, int lvl,
			  const struct inofd__mem *d, int from_wd,
			  const char *to)
{
	int it = moved_it(in, d, from_wd, from_wd);

	if (it >= 0) {
		chain_told(in, r, lvl, to, it);
		return;
	}
	if (in->xw.reg)
		xw_decide(in, -1);	/* one wait at a time */
	if (!d || !(in->xw.to = strdup(to))) {
		inofd__tree_gone_or_back(in, r);
		return;
	}
	in->xw.reg = r->id;
	in->xw.lvl = lvl;
	in->xw.dir_wd = d->kw->wd;
	in->xw.from_wd = from_wd;
	in->xw.deadline = inofd__now_ns() + (uint64_t)in->pair_ms * 1000000u;
	r->moving = true;	/* no path until then */
	inofd__paths_changed(in);
}

/* The directory that level lvl of r's chain holds (names) */
static struct inofd__mem *anc_dir(const struct inofd__reg *r, int lvl)
{
	return (unsigned int)lvl + 1 < r->nanc ? r->anc[lvl + 1] : r->plink;
}

/* r's member on the source's watch, if r existed when the half was
 * queued (a registration made since never saw it leave) */
static struct inofd__mem *src_of(const struct inofd__kw *fkw,
				 const struct inofd__reg *r,
				 const struct inofd__pend *p)
{
	struct inofd__mem *f = fkw ? inofd__mem_of(fkw, r) : NULL;

	return f && f->reg->born <= p->pos ? f : NULL;
}

/* Target member m's RENAME, from f, the source's member it pairs with. */
static void report_rename(struct inofd *in, struct inofd__mem *m,
			  struct inofd__mem *f, uint32_t mask,
			  uint32_t cookie, const char *name,
			  const struct inofd__pend *p)
{
	struct inofd_event *ev;

	f->paired = true;
	ev = inofd__emit(in, m, INOFD_EV_RENAME,
			 &(struct inofd__raw){ IN_MOVE | (mask & IN_ISDIR),
					       cookie, name },
			 0);
	if (ev)
		inofd__set_from(in, ev, f, p->name, pend_path(p, f));
	flag_src(ev, p, f);
}

/*
 * The reports of a rename, with the paths from before the move.  A
 * registration on both sides sees one rename; a target with no source of
 * its own takes a source no other target took; what is left moved in or
 * out.
 */
static void pair_reports(struct inofd *in, struct inofd__kw *kw,
			 struct inofd__kw *fkw, uint32_t mask,
			 uint32_t cookie, const char *name,
			 struct inofd__pend *p)
{
	struct inofd__mem *m;

	for (m = fkw ? fkw->mems : NULL; m; m = m->kwnext)
		m->paired = false;
	for (m = kw->mems; m; m = m->kwnext) {
		struct inofd__mem *f = src_of(fkw, m->reg, p);

		/* a watch above a root never takes a half: into it is out */
		if (m->kind == INOFD__MEM_PARENT)
			f = NULL;
		if (raw_halves(in)) {
			inofd__emit(in, m, INOFD_EV_INOTIFY,
			    &(struct inofd__raw){ mask, cookie, name },
			    0);
			continue;
		}
		if (f)
			report_rename(in, m, f, mask, cookie, name, p);
	}
	for (m = raw_halves(in) ? NULL : kw->mems; m; m = m->kwnext) {
		struct inofd__mem *f = NULL;

		if (src_of(fkw, m->reg, p) || !inofd__wants(m, mask))
			continue;
		for (f = fkw ? fkw->mems : NULL; f; f = f->kwnext)
			if (!f->paired && inofd__wants(f, p->mask) &&
			    f->reg->born <= p->pos &&
			    !inofd__mem_of(kw, f->reg))
				break;
		if (!f) {
			inofd__emit(in, m, INOFD_EV_MOVE_IN,
			    &(struct inofd__raw){ mask, cookie, name },
			    0);
			continue;
		}
		report_rename(in, m, f, mask, cookie, name, p);
	}
	for (m = (fkw && !raw_halves(in)) ? fkw->mems : NULL; m; m = m->kwnext)
		if (!m->paired && m->reg->born <= p->pos)
			flag_src(inofd__emit_path(in, m, INOFD_EV_MOVE_OUT,
					 &(struct inofd__raw){ p->mask, cookie,
							       p->name },
					 pend_path(p, m)), p, m);
}

/* A directory renamed out of fkw, where m, a member of a root's chain, is:
 * the chain follows it to name in kw, or the tree is gone or back. */
static void follow_chain(struct inofd *in, struct inofd__mem *m,
			 const struct inofd__kw *fkw,
			 const struct inofd__kw *kw,
			 const struct inofd__pend *p, const char *name)
{
	struct inofd__reg *r = m->reg;
	int lvl = inofd__anc_holds(m, p->name);

	/*
	 * Only if it moved that directory (an exchange's other half names it
	 * too): told by identity.  Moved to another directory: out of the
	 * chain.  Not lost yet: records not applied yet may bring it back
	 * (mv G/P/T G/tmp; mv G/tmp G/P/T, issue 26), and the file system
	 * says where it is now.  Back, it is a RESCAN; anywhere else, lost.
	 */
	if (lvl >= 0 && fkw == kw)
		chain_renamed(in, r, lvl, anc_dir(r, lvl), fkw->wd, name);
	else if (lvl >= 0)
		inofd__tree_gone_or_back(in, r);
	if (m != r->plink || !r->rootname || strcmp(r->rootname, p->name))
		return;
	if (fkw == kw)
		chain_renamed(in, r, -1, r->root, fkw->wd, name);
	else
		inofd__tree_gone_or_back(in, r);
}

/* A directory renamed out of tree node m's (on fkw) to name in kw: the
 * node the half named follows it in m's tree, or leaves the tree. */
static void follow_node(struct inofd *in, struct inofd__mem *m,
			struct inofd__kw *fkw, struct inofd__kw *kw,
			const struct inofd__pend *p, const char *name)
{
	struct inofd__reg *r = m->reg;
	struct inofd__mem *c, *t;
	int it;

	if (m->kind != INOFD__MEM_NODE ||
	    !(c = pend_node(in, p, m)) || c == r->root ||
	    inofd__node_below(c, m))
		return;
	/*
	 * Did it move c, the node its name gave?  An exchange's other half
	 * names c too when c took the name of a directory the tree does not
	 * know (not watched, or not yet): that one is then found by the walk
	 * below, by identity.  Not known: c is found by a crawl (a RESCAN).
	 */
	it = moved_it(in, c, fkw->wd, kw->wd);
	if (it <= 0) {
		c->moving = it < 0;
		c->shadow = it < 0;
		if (it < 0)
			in->rescan_due = in->crawl_due = true;
		inofd__paths_changed(in);
		return;
	}
	t = inofd__mem_of(kw, r);
	if (t && !inofd__node_below(c, t)) {
		if (inofd__node_name(c, name) == 0) {
			unsigned int was = c->depth;

			inofd__node_unlink(in, c);
			c->moving = c->xpart = c->shadow = false;
			inofd__node_link(in, t, c);
			landed_on(in, t, c, name);
			if (inofd__tree_reached(in, c) < 0)
				in->rescan_due = in->crawl_due = true;
			/* its new name and depth against the options */
			inofd__tree_node_moved(in, c, was);
			return;
		}
	}
	if (t) {
		/* into its own subtree: the kernel refuses that, so events
		 * were lost; the crawl puts things right */
		in->rescan_due = in->crawl_due = true;
		/* c stays without a path until the crawl finds it */
		return;
	}
	inofd__subtree_free(in, c);	/* left this tree */
}

/* A directory renamed to name in wd (from fwd, or -1): the trees there
 * have it, new unless it moved within the tree (followed above). */
static void follow_target(struct inofd *in, int wd, int fwd,
			  const struct inofd__pend *p, const char *name)
{
	/* kw may have gone with a subtree: look it up again */
	struct inofd__kw *kw = inofd__kw_find(in, wd), *fkw;
	struct inofd__mem *m;

	for (m = kw ? kw->mems : NULL; m; m = m->kwnext) {
		struct inofd__mem *f, *c;

		if (m->kind != INOFD__MEM_NODE)
			continue;
		fkw = fwd >= 0 ? inofd__kw_find(in, fwd) : NULL;
		f = fkw ? inofd__mem_of(fkw, m->reg) : NULL;
		/* moved within the tree: followed above, unless unknown
		 * (its node, held by the half, is where the record says) */
		c = f ? pend_node(in, p, f) : NULL;
		if (c && c->parent == m && c->name && !strcmp(c->name, name))
			continue;
		landed_on(in, m, NULL, name);
		inofd__tree_newdir(in, m, name);
	}
}

/* The TO of a rename; p: its half, taken (NULL: none came) */
static void moved_to_p(struct inofd *in, struct inofd__kw *kw, uint32_t mask,
		       uint32_t cookie, const char *name,
		       struct inofd__pend *p)
{
	struct inofd__kw *fkw = p ? inofd__kw_find(in, p->wd) : NULL;
	struct inofd__mem *m, *next;
	int wd = kw->wd, fwd = fkw ? fkw->wd : -1;

	pair_reports(in, kw, fkw, mask, cookie, name, p);
	if (!(mask & IN_ISDIR))
		goto out;
	/* then the trees follow: rename inside, out of, or into a tree */
	for (m = fkw ? fkw->mems : NULL; m; m = next) {
		next = m->kwnext;
		if (m->kind == INOFD__MEM_PARENT)
			follow_chain(in, m, fkw, kw, p, name);
		else
			follow_node(in, m, fkw, kw, p, name);
	}
	follow_target(in, wd, fwd, p, name);
out:
	if (p)
		pend_put(in, p);
	inofd__end_fired(in, wd);
	if (fwd >= 0)
		inofd__end_fired(in, fwd);
}

static void moved_to(struct inofd *in, struct inofd__kw *kw, uint32_t mask,
		     uint32_t cookie, const char *name)
{
	struct inofd__pend *p = pend_take(in, cookie);
	int was = in->id_moved;

	if (p && p->by_id)
		in->id_moved = p->self;	/* moved: told by identity */
	moved_to_p(in, kw, mask, cookie, name, p);
	in->id_moved = was;
}

/*
 * Does a tree that is sure of its paths hold kw where it is now (its
 * rename applied: IN_MOVE_SELF comes after the move's two halves)?
 */
static bool tree_knows(struct inofd *in, struct inofd__kw *kw)
{
	struct inofd__mem *n;
	size_t len;

	for (n = kw->mems; n; n = n->kwnext)
		if (n->kind == INOFD__MEM_NODE && !inofd__mem_unsure(n) &&
		    !n->reg->lost && inofd__mem_path(in, n, &len))
			return true;
	return false;
}

void inofd__self_moved(struct inofd *in, int wd)
{
	struct inofd__kw *kw = inofd__kw_find(in, wd);
	struct inofd__mem *m, *next;

	for (m = kw ? kw->mems : NULL; m; m = next) {
		next = m->kwnext;
		if (m->kind == INOFD__MEM_PLAIN) {
			/* a move from before its path was taken is not one
			 * since (its path is the one it was made with); a
			 * tree that followed the move knows where it is */
			if (m->reg->seen <= in->cur_pos && !tree_knows(in, kw))
				m->reg->stale = true;
		} else if (m->kind == INOFD__MEM_NODE && m == m->reg->root &&
			   !m->reg->plink) {
			/* no parent in sight: found by inode if it can be
			 * (a RESCAN), else where it went is unknown */
			inofd__tree_gone_or_back(in, m->reg);
		}
	}
}

/*
 * The records after the current one (in->rest) that rename something in a
 * root's parent or above it, in order, into v (room for max); their number.
 * *loss: another loss is among them.
 */
static size_t anc_moves_ahead(const struct inofd *in, struct inofd__mv *v,
			      size_t max, bool *loss)
{
	const char *b = in->rest, *name;
	struct inotify_event h;
	size_t n = 0;

	*loss = false;
	while ((name = rec_step(&b, in->rest_end, &h))) {
		const struct inofd__kw *kw;
		const struct inofd__mem *m;

		if (h.mask & IN_Q_OVERFLOW)
			*loss = true;
		if (!(h.mask & (IN_MOVED_FROM | IN_MOVED_TO)) || !h.len ||
		    !(kw = inofd__kw_find(in, h.wd)))
			continue;
		for (m = kw->mems; m; m = m->kwnext)
			if (m->kind == INOFD__MEM_PARENT)
				break;
		if (!m)
			continue;
		if (n < max)
			v[n] = (struct inofd__mv){ .wd = h.wd, .mask = h.mask,
						   .cookie = h.cookie,
						   .name = name };
		n++;
	}
	return n;
}

/*
 * An end put late, or alone after a loss a rename back may hide
 * (INOFD__LATE, types.h), on kw: where it was, or is, is not known.
 * Alone, for a root or a directory above one: the loss found the root by
 * inode (inofd__roots_check()), but a rename there and back leaves the
 * path as it was, and the records after the loss may be from before the
 * rename back: the tree is unsure, its events flagged, until they are
 * parsed (oracle seed 180053 -N -C -E on fanotify: a0 -> a1 -> a0 -> a1
 * -> a0 above the root read as a0 -> a1 -> a0, a rename in the tree at a1
 * reported under a0, unflagged).  The crawl finds the other nodes.
 */
void inofd__late(struct inofd *in, struct inofd__kw *kw, uint32_t mask)
{
	struct inofd__mem *m;
	bool intree = false;

	for (m = kw->mems; m; m = m->kwnext)
		intree |= m->kind == INOFD__MEM_NODE;
	for (m = kw->mems; m; m = m->kwnext) {
		if (m->kind == INOFD__MEM_NODE && m->parent) {
			m->moving = true;
		} else if (m->kind == INOFD__MEM_NODE &&
			   (mask & ~INOFD__LATE)) {
			m->reg->moving = true;
		} else if (m->kind == INOFD__MEM_NODE ||
			   m->kind == INOFD__MEM_PARENT) {
			m->reg->unsure = true;
			in->unsure = true;
		} else if ((mask & ~INOFD__LATE) && intree) {
			/*
			 * A plain watch's end, put late, on a directory whose
			 * path it takes from a tree: the tree knows where it
			 * is now, not where it was when it went.  No path,
			 * for its IN_IGNORED too (the tree's node handed over
			 * a name another inode had by then: oracle seed
			 * 520084 -N -C).  Alone, it keeps its own.
			 */
			m->reg->lost = true;
		}
	}
	inofd__paths_changed(in);
}

/* After a loss, with every record after it in hand: the roots' chains. */
void inofd__roots_check(struct inofd *in)
{
	struct inofd__mv one[16], *v = one;
	bool loss;
	size_t n = anc_moves_ahead(in, one, 16, &loss);

	if (n > 16) {
		v = malloc(n * sizeof(*v));
		if (!v) {
			/* no undo list: today's names, flagged */
			inofd__tree_roots_check(in, NULL, 0, true);
			return;
		}
		anc_moves_ahead(in, v, n, &loss);
	}
	/*
	 * Another loss among them (a writer refilled the queue while it was
	 * read): renames lost there cannot be told from renames lost here,
	 * so every tree with a chain is unsure until they are parsed.
	 */
	inofd__tree_roots_check(in, v, (int)n, loss);
	if (v != one)
		free(v);
}

/*
 * Does the record (on kw, with name) depend on how half p ends?  An event
 * inside the directory that moves (its path is where the directory went),
 * or one on the half's source name (its order against the half's report:
 * `mv d away; mkdir d`).
 */
/* What moves or ends a directory (on its parent's watch, or its own) */
#define DIR_GOES	(IN_MOVED_FROM | IN_DELETE | IN_MOVE_SELF | \
			 IN_DELETE_SELF | IN_IGNORED | IN_UNMOUNT)

/*
 * Does the record (mask, on kw, with name) move or end the directory half
 * p left, or one above it?  Then the half is decided first: its report
 * needs that directory where it was (mv d/a out; mv d out: a's MOVE_OUT
 * before d goes, with d's path; after, nothing would be left to report
 * it on).
 */
static bool moves_source(const struct inofd *in, const struct inofd__pend *p,
			 const struct inofd__kw *kw, uint32_t mask,
			 const char *name)
{
	const struct inofd__kw *src;
	const struct inofd__mem *m, *t, *n;

	if (!(mask & DIR_GOES) || !(src = inofd__kw_find(in, p->wd)))
		return false;
	for (m = kw->mems; m; m = m->kwnext) {
		if (m->kind != INOFD__MEM_NODE)
			continue;
		t = name ? inofd__node_child(m, name) : m;
		if (!t)
			continue;
		for (n = src->mems; n; n = n->kwnext)
			if (n->kind == INOFD__MEM_NODE && inofd__node_below(t, n))
				return true;
	}
	return false;
}

static bool concerns(const struct inofd *in, const struct inofd__pend *p,
		     const struct inofd__kw *kw, uint32_t mask,
		     const char *name)
{
	const struct inofd__mem *m, *a;
	unsigned int i;

	if (p->wd == kw->wd && name && !strcmp(name, p->name))
		return true;
	if (moves_source(in, p, kw, mask, name))
		return true;
	if (!(p->mask & IN_ISDIR) || p->self < 0)
		return false;
	if (kw->wd == p->self)
		return true;
	for (m = kw->mems; m; m = m->kwnext) {
		if (m->kind != INOFD__MEM_NODE)
			continue;
		for (a = m; a; a = a->parent)
			if (a->kw->wd == p->self)
				return true;
		if (!m->reg->moving)
			continue;
		/* the root or a directory above it moves */
		if (m->reg->plink && m->reg->plink->kw->wd == p->self)
			return true;
		for (i = 0; i < m->reg->nanc; i++)
			if (m->reg->anc[i] && m->reg->anc[i]->kw->wd == p->self)
				return true;
	}
	return false;
}

enum { AHEAD_NONE, AHEAD_TO, AHEAD_OUT };

/*
 * Bits with which process() does not apply a record as an IN_MOVED_TO
 * (it ends the watch, is private, or is the instance's own noise): such a
 * record is no partner to pair ahead (fuzz_events: a fed IN_IGNORED |
 * IN_MOVED_TO was reported, and its watch lived on).
 */
#define NOT_A_TO	(IN_IGNORED | IN_MOVED_FROM | INOFD__SEEN | \
			 INOFD__MOVED_ID | IN_OPEN | IN_ACCESS | \
			 IN_CLOSE_NOWRITE)

/*
 * What ends half p among the records after the current one: its partner
 * (*at: that record), the moving directory's IN_MOVE_SELF before any
 * partner (fsnotify_move() queues FROM, TO, MOVE_SELF: no partner will
 * come), or a loss (overflow() settles every half).
 */
static int ahead(const struct inofd *in, const struct inofd__pend *p,
		 const char **at)
{
	const char *b = in->rest, *rec = b;
	struct inotify_event h;

	/* a torn record ends it: parse() says so */
	for (; rec_step(&b, in->rest_end, &h); rec = b) {
		if (h.mask & IN_Q_OVERFLOW)
			return AHEAD_OUT;
		if ((h.mask & IN_MOVED_TO) && !(h.mask & NOT_A_TO) &&
		    h.cookie == p->cookie) {
			*at = rec;
			return AHEAD_TO;
		}
		if ((h.mask & MOVED_BITS) && p->self >= 0 && h.wd == p->self)
			return AHEAD_OUT;
	}
	return AHEAD_NONE;
}

/* Half p's partner, found at *at ahead: applied now, at the half's place. */
static void pair_ahead(struct inofd *in, const char *at)
{
	struct inotify_event h, gone;
	const char *name = at + sizeof(h);
	struct inofd__kw *kw;
	uint64_t pos = in->cur_pos;

	memcpy(&h, at, sizeof(h));
	/* the record is done: parse() meets a record of no watch, of no
	 * bits, and drops it (the buffer is the library's) */
	gone = h;
	gone.wd = -1;
	gone.mask = 0;
	memcpy((char *)at, &gone, sizeof(gone));
	kw = inofd__kw_find(in, h.wd);
	in->cur_pos = pos + (uint64_t)(at - in->rec);
	if (kw) {
		moved_to(in, kw, h.mask, h.cookie,
			 h.len && name[0] ? name : NULL);
	} else {
		/* its target was unwatched by the library: it went out */
		struct inofd__pend *p = pend_take(in, h.cookie);

		if (p) {
			moved_out(in, p);
			pend_put(in, p);
		}
	}
	in->cur_pos = pos;
}

/*
 * Is name in directory wd in a record from b to end?  Then what has the
 * name now may have come after the TO that named it first (oracle seed
 * 133012 -W -N -C on fanotify: a directory moved in under a name that
 * was renamed away and taken again by the half's directory).
 */
static bool name_after(const char *b, const char *end, int wd,
		       const char *name)
{
	struct inotify_event h;
	const char *n;

	while ((n = rec_step(&b, end, &h)))
		if (h.wd == wd && h.mask && h.len && !strcmp(n, name))
			return true;
	return false;
}

/*
 * Is nothing among the records from b to end the FROM of the TO's
 * cookie (then the two are a pair), about d's subtree (d's own
 * IN_MOVE_SELF apart), about the half's source name (p) or about to_name
 * in to_wd (where the TO puts it)?  Then where the directory was
 * meanwhile changes nothing a caller sees.
 */
static bool quiet_between(const struct inofd *in, const char *b,
			  const char *end, const struct inofd__kw *d,
			  const struct inofd__pend *p, uint32_t cookie,
			  int to_wd, const char *to_name)
{
	struct inotify_event h;
	const char *name;

	while ((name = rec_step(&b, end, &h))) {
		const struct inofd__kw *kw;
		const struct inofd__mem *m, *a;

		if ((h.mask & IN_MOVED_FROM) && h.cookie == cookie)
			return false;
		if (h.wd < 0 || !h.mask)
			continue;
		if (h.len && name[0] &&
		    ((h.wd == p->wd && !strcmp(name, p->name)) ||
		     (h.wd == to_wd && !strcmp(name, to_name))))
			return false;
		if (h.wd == d->wd && !(h.mask & ~(uint32_t)MOVED_BITS))
			continue;
		kw = inofd__kw_find(in, h.wd);
		for (m = kw ? kw->mems : NULL; m; m = m->kwnext) {
			if (m->kind != INOFD__MEM_NODE)
				continue;
			for (a = m; a; a = a->parent)
				if (a->kw == d)
					return false;
		}
	}
	return true;
}

/*
 * Half p, a directory (p->self: its watch), has no partner: the kernel
 * queued no IN_MOVED_TO because the directory it went to was not watched.
 * That directory may be inside a tree, made in the same batch and not
 * walked yet, and the moved directory may have gone on from there to a
 * watched one: an IN_MOVED_TO ahead whose IN_MOVED_FROM was never queued
 * (the source was the unwatched directory).  If the entry that TO names
 * is p's directory now, by identity, the two records are one move within
 * the tree: the half waits for that TO as its partner (by_id), and the
 * pair is applied there.  The TO found, or NULL.
 */
static const char *identity_to_ahead(struct inofd *in,
				     const struct inofd__pend *p)
{
	const char *b = in->rest, *at = b, *name;
	struct inotify_event h;
	struct inofd__kw *d;

	if (!(p->mask & IN_ISDIR) || p->self < 0 ||
	    !(d = inofd__kw_find(in, p->self)))
		return NULL;
	for (; (name = rec_step(&b, in->rest_end, &h)); at = b) {
		struct inofd__kw *kw;
		struct inofd__mem *t;

		if (h.mask & IN_Q_OVERFLOW)
			return NULL;
		/*
		 * Not back where it left (the same name in the same
		 * directory): one event cannot be the departure, at the
		 * FROM's place, and the arrival, after what happened
		 * meanwhile (oracle seed 121006 -N -C, [order]); it stays a
		 * move-out and a move-in.
		 */
		if ((h.mask & (IN_MOVED_TO | IN_ISDIR)) ==
		    (IN_MOVED_TO | IN_ISDIR) && !(h.mask & NOT_A_TO) &&
		    h.len && name[0] && !pend_find(in, h.cookie) &&
		    (h.wd != p->wd || strcmp(name, p->name)) &&
		    !name_after(b, in->rest_end, h.wd, name) &&
		    (kw = inofd__kw_find(in, h.wd)))
			for (t = kw->mems; t; t = t->kwnext)
				if (t->kind == INOFD__MEM_NODE &&
				    inofd__mem_of(d, t->reg) &&
				    quiet_between(in, in->rest, at, d, p,
						  h.cookie, h.wd, name) &&
				    inofd__tree_entry_is(in, t, name, d))
					return at;
	}
	return NULL;
}

/*
 * A directory's rename is told by identity (moved_it()): the IN_MOVE_SELF
 * that fsnotify_move() queues on the directory's own watch after the
 * IN_MOVED_TO.  The kernel queues the two one after the other, not at
 * once: a read can come between them (the guest's lib_inotifywait, "moved
 * out", one run in 15 on 6.12 under TCG), and with nothing after the TO
 * in hand the move was not known and cost a RESCAN.  So the TO (on to_wd)
 * of half p, a tree node's (below a root) whose watch the half knows
 * (p->self), is held, like a record that waits for a half, while the
 * records in hand end before its MOVE_SELF, before a later rename out of
 * either directory and before a loss; until more is read, or the half's
 * deadline.  The same holds where the TO is applied ahead, at its half's
 * place (halves_first(): a record of another task between the FROM and
 * the TO; the debug kernel's split_rename, 2 to 7 RESCANs in 10,000
 * renames).  True: hold it.
 */
static bool self_due(struct inofd *in, const struct inofd__pend *p, int to_wd)
{
	const struct inofd__kw *d;
	const struct inofd__mem *m;

	if (!p || !(p->mask & IN_ISDIR) || p->self < 0 || in->nohold ||
	    in->walk_starved)
		return false;	/* starved: a directory's half decides now */
	/* a node below a root: a root or a directory above one has its own
	 * wait, after the TO (chain_renamed(), in->xw) */
	d = inofd__kw_find(in, p->self);
	for (m = d ? d->mems : NULL; m; m = m->kwnext)
		if (m->kind == INOFD__MEM_NODE && m->parent)
			break;
	if (!m)
		return false;
	if (inofd__ahead_on(in, p->self, MOVED_BITS, p->wd, to_wd) != -1)
		return false;
	return in->more || p->deadline > inofd__now_ns();
}

/*
 * Halves waiting when a record that is not a partner comes (issue 26).
 * The kernel queues a rename's IN_MOVED_FROM and IN_MOVED_TO one after the
 * other, but not atomically: a record of another task, even one inside the
 * directory that moves, can land between them.  A record that does not
 * concern a waiting half is applied while the half waits.  One that does
 * (concerns()) has the half decided first, whatever lies between: by its
 * partner later in what was read (the rename was done before its FROM was
 * queued, so a record queued after the FROM is about the object where the
 * rename put it: the pair is applied now, at the FROM's place, and the
 * partner's record is dropped when parse() reaches it), by the moving
 * directory's IN_MOVE_SELF ahead with no partner before it, or a loss
 * ahead (it moved out), or by its deadline.  Else the record is held:
 * parse() stops at it until more is read or the deadline passes.  Fed
 * bytes are all there is: a half with nothing ahead moved out.
 * True: hold the record.
 */
static bool halves_first(struct inofd *in, int wd, uint32_t mask,
			 const char *name, const struct inofd__pend *mine)
{
	struct inofd__pend *p;
	struct inofd__kw *kw;
	uint64_t now = 0;
	const char *at;
	bool self_rec;

again:
	kw = inofd__kw_find(in, wd);
	if (!kw)
		return false;
	for (p = in->pfirst; p; p = p->tnext) {
		if (p == mine || !concerns(in, p, kw, mask, name))
			continue;
		/*
		 * The record is the moving directory's own IN_MOVE_SELF: no
		 * partner came before it, so none will (fsnotify_move()
		 * queues FROM, TO, MOVE_SELF).  Held, it waited for what
		 * could not come while other reads went on (seed 80070 on
		 * fanotify: the root was found by identity meanwhile, and
		 * the held records got its later path: a false path).
		 */
		self_rec = kw->wd == p->self && (mask & MOVED_BITS);
		if (self_rec && p->by_id)
			continue;	/* its TO is ahead: it waits for it */
		if (self_rec && (at = identity_to_ahead(in, p))) {
			struct inotify_event h;

			/*
			 * It went through a directory not watched (yet):
			 * the TO ahead that put it back in the tree is its
			 * partner, applied where it is, as a rename
			 * (identity_to_ahead(), oracle seed 93079).
			 */
			memcpy(&h, at, sizeof(h));
			pend_rekey(in, p, h.cookie);
			p->by_id = true;
			continue;
		}
		if (self_rec)
			goto out;
		switch (ahead(in, p, &at)) {
		case AHEAD_TO: {
			struct inotify_event h;

			memcpy(&h, at, sizeof(h));
			if (self_due(in, p, h.wd))
				return true;
			pair_ahead(in, at);
			goto again;
		}
		case AHEAD_NONE:
			/* the partner may be among what is not read yet,
			 * whatever the time: the window counts from then */
			if (!now)
				now = inofd__now_ns();
			if (!in->nohold &&
			    !(in->walk_starved && (p->mask & IN_ISDIR)) &&
			    (in->more || p->deadline > now))
				return true;
			break;
		}
out:
		/* no partner will come, or its time is up: it moved out */
		p = pend_take(in, p->cookie);
		if (p) {
			moved_out(in, p);
			pend_put(in, p);
		}
		goto again;
	}
	return false;
}

/*
 * Is the record held (halves_first()) half p's partner, its TO?  Then p is
 * not settled by its deadline: the parse goes on from that record, decides
 * the halves it waited for, and pairs it with p.  Settled here, p was a
 * MOVE_OUT and its TO a MOVE_IN, its subtree's watches dropped (oracle
 * seed 96061 -W -N -C on fanotify, under load: a TO onto the name of a
 * directory that had moved out unwatched waited for that half's deadline,
 * and its own half, read with it, was due by then too).
 */
static bool held_partner(const struct inofd *in, const struct inofd__pend *p)
{
	const char *b = in->scur;
	struct inotify_event h;

	if (!in->held || !rec_step(&b, in->send, &h))
		return false;
	return (h.mask & IN_MOVED_TO) && !(h.mask & NOT_A_TO) &&
	       h.cookie == p->cookie;
}

/*
 * The window is for a half that ends what the kernel had queued: with
 * records still unread (in->more), its partner may be the next one, and
 * the next record settles it either way.  Walks that waited too long for
 * the halves (in->walk_starved, dispatch.c's settle()) have every
 * directory's half decided now, as at its deadline; a file's keeps its
 * window (a file's half holds walks up only while a record waits on it,
 * for one window at most).
 */
void inofd__halves_due(struct inofd *in, uint64_t now)
{
	struct inofd__pend *p, *next;

	while (!in->more && in->pfirst &&
	       !held_partner(in, in->pfirst) &&
	       (p = pend_due(in, now))) {
		moved_out(in, p);
		pend_put(in, p);
	}
	if (in->more || !in->walk_starved)
		return;
	for (p = in->pfirst; p; p = next) {
		next = p->tnext;	/* moved_out() leaves the list as it is */
		if (!(p->mask & IN_ISDIR) || held_partner(in, p))
			continue;
		pend_unlink(in, p);
		moved_out(in, p);
		pend_put(in, p);
	}
}

/* A wait above a root (in->xw) not told in time: checked. */
void inofd__xw_due(struct inofd *in, uint64_t now)
{
	if (in->xw.reg && !in->more &&
	    (in->xw.deadline <= now || in->walk_starved))
		xw_decide(in, -1);
}

/*
 * Before the record (mask, cookie, name on wd) is applied: the halves it
 * concerns are decided (halves_first()).  A TO is its own half's partner,
 * and may concern another half all the same: a rename onto the source
 * name of a half that waits.  True: hold the record.
 */
bool inofd__halves_first(struct inofd *in, int wd, uint32_t mask,
			 uint32_t cookie, const char *name)
{
	const struct inofd__pend *mine = (mask & IN_MOVED_TO) ?
		pend_find(in, cookie) : NULL;

	return halves_first(in, wd, mask, name, mine);
}

/* An IN_MOVED_TO record: its rename applied, unless it waits for its
 * directory's MOVE_SELF (self_due()).  True: hold it. */
bool inofd__moved_to(struct inofd *in, struct inofd__kw *kw, uint32_t mask,
		     uint32_t cookie, const char *name)
{
	if (self_due(in, pend_find(in, cookie), kw->wd))
		return true;
	moved_to(in, kw, mask, cookie, name);
	return false;
}
