// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * From raw event bytes to the table and the queue: one kernel event is
 * delivered to every member of its kernel watch that wants it (each with
 * its registration's id, data and path), rename halves are paired by
 * cookie, trees follow what moves, and losses become INOFD_EV_RESCAN.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "dispatch.h"
#include "fanotify.h"

static bool raw_halves(const struct inofd *in)
{
	return (in->flags & INOFD_RAW_MOVES) || in->coalesce_ms;
}

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

/* A source path taken from a tree that was unsure: the event says so. */
static void flag_src(struct inofd_event *ev, const struct inofd__pend *p,
		     const struct inofd__mem *m)
{
	if (ev && inofd__pend_unsure(p, m))
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
					 inofd__pend_path(p, m)), p, m);
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
		    (c = inofd__pend_node(in, p, m)) && c != m->reg->root &&
		    c->moving && !inofd__node_below(c, m)) {
			/* next may be below c only if c holds kw: not so */
			inofd__subtree_free(in, c);
		}
	}
out:
	inofd__end_fired(in, p->wd);
}

/* Every pending half, as a move-out. */
static void settle_halves(struct inofd *in)
{
	struct inofd__pend *p;

	while ((p = inofd__pend_due(in, 0))) {
		moved_out(in, p);
		inofd__pend_put(in, p);
	}
}

static void moved_from(struct inofd *in, struct inofd__kw *kw, uint32_t mask,
		       uint32_t cookie, const char *name)
{
	struct inofd__pend *p;
	struct inofd__mem *m;

	if (raw_halves(in))
		for (m = kw->mems; m; m = m->kwnext)
			inofd__emit(in, m, INOFD_EV_INOTIFY,
			    &(struct inofd__raw){ mask, cookie, name },
			    0);
	/* the source paths are taken now, before anything else moves */
	p = inofd__pend_add(in, kw, mask, cookie, name);
	if (!p && (p = inofd__pend_due(in, 0))) {
		moved_out(in, p);		/* the oldest one goes */
		inofd__pend_put(in, p);
		p = inofd__pend_add(in, kw, mask, cookie, name);
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
 * Exchanges (renameat2(RENAME_EXCHANGE); DESIGN.md, "Exchanges").  The
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
static int64_t ahead_on(const struct inofd *in, int wd, uint32_t mask,
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
	b = ahead_on(in, o->kw->wd, MOVED_BITS | IN_DELETE_SELF | IN_IGNORED,
		     -1, -1);
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
	b = ahead_on(in, d->kw->wd, MOVED_BITS, from_wd, to_wd);
	return b > 0 ? 1 : (int)b;
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
	if (r && r->kind == INOFD__REG_TREE && !r->lost) {
		if (it > 0 && in->xw.lvl < 0)
			inofd__root_renamed(in, r, in->xw.to);
		else if (it > 0)
			inofd__anc_renamed(in, r, (unsigned int)in->xw.lvl,
					   in->xw.to);
		else if (it == 0) {
			r->moving = false;
			inofd__paths_changed(in);
		} else {
			inofd__tree_gone_or_back(in, r);
		}
	}
	free(in->xw.to);
	in->xw.to = NULL;
}

/* A record while in->xw waits: does it decide? */
static void xw_record(struct inofd *in, int wd, uint32_t mask)
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

	if (it > 0 && lvl < 0) {
		inofd__root_renamed(in, r, to);
		return;
	}
	if (it > 0) {
		inofd__anc_renamed(in, r, (unsigned int)lvl, to);
		return;
	}
	if (it == 0) {
		/* the other half of an exchange: it stays where it was */
		r->moving = false;
		inofd__paths_changed(in);
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

/* The TO of a rename; p: its half, taken (NULL: none came) */
static void moved_to_p(struct inofd *in, struct inofd__kw *kw, uint32_t mask,
		       uint32_t cookie, const char *name,
		       struct inofd__pend *p)
{
	struct inofd__kw *fkw = p ? inofd__kw_find(in, p->wd) : NULL;
	struct inofd__mem *m, *next;
	int wd = kw->wd, fwd = fkw ? fkw->wd : -1;

	/*
	 * The reports, with the paths from before the move.  A registration
	 * on both sides sees one rename; a target with no source of its own
	 * takes a source no other target took; what is left moved in or out.
	 */
	for (m = fkw ? fkw->mems : NULL; m; m = m->kwnext)
		m->paired = false;
	for (m = kw->mems; m; m = m->kwnext) {
		struct inofd__mem *f = src_of(fkw, m->reg, p);

		if (raw_halves(in)) {
			inofd__emit(in, m, INOFD_EV_INOTIFY,
			    &(struct inofd__raw){ mask, cookie, name },
			    0);
			continue;
		}
		if (f) {
			struct inofd_event *ev;

			f->paired = true;
			ev = inofd__emit(in, m, INOFD_EV_RENAME,
			    &(struct inofd__raw){ IN_MOVE | (mask & IN_ISDIR),
						  cookie, name },
			    0);
			if (ev)
				inofd__set_from(in, ev, f, p->name,
						inofd__pend_path(p, f));
			flag_src(ev, p, f);
		}
	}
	for (m = raw_halves(in) ? NULL : kw->mems; m; m = m->kwnext) {
		struct inofd__mem *f = NULL;
		struct inofd_event *ev;

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
		f->paired = true;
		ev = inofd__emit(in, m, INOFD_EV_RENAME,
			    &(struct inofd__raw){ IN_MOVE | (mask & IN_ISDIR),
						  cookie, name },
			    0);
		if (ev)
			inofd__set_from(in, ev, f, p->name,
					inofd__pend_path(p, f));
		flag_src(ev, p, f);
	}
	for (m = (fkw && !raw_halves(in)) ? fkw->mems : NULL; m; m = m->kwnext)
		if (!m->paired && m->reg->born <= p->pos)
			flag_src(inofd__emit_path(in, m, INOFD_EV_MOVE_OUT,
					 &(struct inofd__raw){ p->mask, cookie,
							       p->name },
					 inofd__pend_path(p, m)), p, m);

	if (!(mask & IN_ISDIR))
		goto out;
	/* then the trees follow: rename inside, out of, or into a tree */
	for (m = fkw ? fkw->mems : NULL; m; m = next) {
		struct inofd__mem *c, *t;
		struct inofd__reg *r = m->reg;
		int it;

		next = m->kwnext;
		if (m->kind == INOFD__MEM_PARENT) {
			int lvl = inofd__anc_holds(m, p->name);

			/*
			 * Only if it moved that directory (an exchange's
			 * other half names it too): told by identity.
			 * Moved to another directory: out of the chain.  Not
			 * lost yet: records not applied yet may bring it back
			 * (mv G/P/T G/tmp; mv G/tmp G/P/T, issue 26), and the
			 * file system says where it is now.  Back, it is a
			 * RESCAN; anywhere else, lost.
			 */
			if (lvl >= 0 && fkw == kw)
				chain_renamed(in, r, lvl, anc_dir(r, lvl),
					      fkw->wd, name);
			else if (lvl >= 0)
				inofd__tree_gone_or_back(in, r);
			if (m != r->plink || !r->rootname ||
			    strcmp(r->rootname, p->name))
				continue;
			if (fkw == kw)
				chain_renamed(in, r, -1, r->root, fkw->wd,
					      name);
			else
				inofd__tree_gone_or_back(in, r);
			continue;
		}
		if (m->kind != INOFD__MEM_NODE ||
		    !(c = inofd__pend_node(in, p, m)) || c == r->root ||
		    inofd__node_below(c, m))
			continue;
		/*
		 * Did it move c, the node its name gave?  An exchange's other
		 * half names c too when c took the name of a directory the
		 * tree does not know (not watched, or not yet): that one is
		 * then found by the walk below, by identity.  Not known: c
		 * is found by a crawl (a RESCAN).
		 */
		it = moved_it(in, c, fkw->wd, wd);
		if (it <= 0) {
			c->moving = it < 0;
			c->shadow = it < 0;
			if (it < 0)
				in->rescan_due = in->crawl_due = true;
			inofd__paths_changed(in);
			continue;
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
				continue;
			}
		}
		if (t) {
			/* into its own subtree: the kernel refuses that, so
			 * events were lost; the crawl puts things right */
			in->rescan_due = in->crawl_due = true;
			/* c stays without a path until the crawl finds it */
			continue;
		}
		inofd__subtree_free(in, c);	/* left this tree */
	}
	/* kw may have gone with a subtree: look it up again */
	kw = inofd__kw_find(in, wd);
	for (m = kw ? kw->mems : NULL; m; m = m->kwnext) {
		struct inofd__mem *f, *c;

		if (m->kind != INOFD__MEM_NODE)
			continue;
		fkw = fwd >= 0 ? inofd__kw_find(in, fwd) : NULL;
		f = fkw ? inofd__mem_of(fkw, m->reg) : NULL;
		/* moved within the tree: followed above, unless unknown
		 * (its node, held by the half, is where the record says) */
		c = f ? inofd__pend_node(in, p, f) : NULL;
		if (c && c->parent == m && c->name && !strcmp(c->name, name))
			continue;
		landed_on(in, m, NULL, name);
		inofd__tree_newdir(in, m, name);
	}
out:
	if (p)
		inofd__pend_put(in, p);
	inofd__end_fired(in, wd);
	if (fwd >= 0)
		inofd__end_fired(in, fwd);
}

static void moved_to(struct inofd *in, struct inofd__kw *kw, uint32_t mask,
		     uint32_t cookie, const char *name)
{
	struct inofd__pend *p = inofd__pend_take(in, cookie);
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
		if (n->kind == INOFD__MEM_NODE && !n->reg->unsure &&
		    !n->reg->lost && inofd__mem_path(in, n, &len))
			return true;
	return false;
}

static void self_moved(struct inofd *in, int wd)
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

/* After a loss, with every record after it in hand: the roots' chains. */
static void roots_check(struct inofd *in)
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

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
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
	settle_halves(in);
	inofd__win_expire(in, UINT64_MAX);
	in->rescan_due = true;
	inofd__q_rescan(in);
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
		roots_check(in);
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
		if (!looked && ahead_on(in, kw->wd, IN_DELETE_SELF | IN_IGNORED,
					-1, -1) > 0)
			return;
		looked = true;
		if (fstatat(AT_FDCWD, r->path, &st,
			    r->lnk ? AT_SYMLINK_NOFOLLOW : 0) < 0 ||
		    st.st_dev != kw->dev || st.st_ino != kw->ino)
			r->stale = true;
	}
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
		struct inofd__pend *p = inofd__pend_take(in, h.cookie);

		if (p) {
			moved_out(in, p);
			inofd__pend_put(in, p);
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
		    h.len && name[0] && !inofd__pend_find(in, h.cookie) &&
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
static bool self_due(struct inofd *in, const struct inofd__pend *p,
		     int to_wd)
{
	const struct inofd__kw *d;
	const struct inofd__mem *m;

	if (!p || !(p->mask & IN_ISDIR) || p->self < 0 || in->nohold)
		return false;
	/* a node below a root: a root or a directory above one has its own
	 * wait, after the TO (chain_renamed(), in->xw) */
	d = inofd__kw_find(in, p->self);
	for (m = d ? d->mems : NULL; m; m = m->kwnext)
		if (m->kind == INOFD__MEM_NODE && m->parent)
			break;
	if (!m)
		return false;
	if (ahead_on(in, p->self, MOVED_BITS, p->wd, to_wd) != -1)
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
			inofd__pend_rekey(in, p, h.cookie);
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
			if (!in->nohold && (in->more || p->deadline > now))
				return true;
			break;
		}
out:
		/* no partner will come, or its time is up: it moved out */
		p = inofd__pend_take(in, p->cookie);
		if (p) {
			moved_out(in, p);
			inofd__pend_put(in, p);
		}
		goto again;
	}
	return false;
}

/* One event, whatever it is (kept out of parse()'s loop: the slow path).
 * True: not applied, held (halves_first()). */
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
		xw_record(in, wd, mask);
	if (mask & INOFD__MOVED_ID)
		return false;	/* read ahead only (ahead_on()) */
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
	 * depends on how the half ends waits for that (halves_first()).  A
	 * TO is its own half's partner, and may concern another half all
	 * the same: a rename onto the source name of a half that waits.
	 */
	if (in->npend) {
		const struct inofd__pend *mine = (mask & IN_MOVED_TO) ?
			inofd__pend_find(in, cookie) : NULL;

		if (halves_first(in, wd, mask, name, mine))
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
	if (mask & IN_MOVED_FROM) {
		moved_from(in, kw, mask, cookie, name);
		return false;
	}
	if (mask & IN_MOVED_TO) {
		if (self_due(in, inofd__pend_find(in, cookie), kw->wd))
			return true;
		moved_to(in, kw, mask, cookie, name);
		return false;
	}
	if (mask & INOFD__LATE) {
		/*
		 * An end put late, or alone after a loss a rename back may
		 * hide (types.h): where it was, or is, is not known.  Alone,
		 * for a root or a directory above one: the loss found the
		 * root by inode (roots_check()), but a rename there and back
		 * leaves the path as it was, and the records after the loss
		 * may be from before the rename back: the tree is unsure,
		 * its events flagged, until they are parsed (oracle seed
		 * 180053 -N -C -E on fanotify: a0 -> a1 -> a0 -> a1 -> a0
		 * above the root read as a0 -> a1 -> a0, a rename in the tree
		 * at a1 reported under a0, unflagged).  The crawl finds the
		 * other nodes.
		 */
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
			}
		}
		inofd__paths_changed(in);
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
		self_moved(in, wd);
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
	    r->unsure)
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
	return parse_as(in, budget, true);
}

static int parse_fed(struct inofd *in)
{
	return parse_as(in, SIZE_MAX, false);
}

uint64_t inofd__stream_now(struct inofd *in)
{
	int queued = 0;

	/*
	 * fanotify: FIONREAD counts 24 bytes an event, not the records
	 * inofd__fan_read() makes of it, so it cannot place a registration
	 * in the stream.  The backend makes the records of all the group
	 * holds now (its stage, handed out first) and says their bytes:
	 * a registration that shares a watched object's mark is born after
	 * them (oracle seed 90037 -X -C: a plain watch made on a directory
	 * a tree had let go of got the DELETE its mark had queued before).
	 * Without memory for that, it is born where the unread records
	 * start.
	 */
	if (in->backend == INOFD_BACKEND_FANOTIFY) {
		ssize_t staged = inofd__fan_staged(in);

		return in->kpos + (staged > 0 ? (uint64_t)staged : 0);
	}
	/* what the kernel holds was queued before now; FIONREAD counts
	 * the bytes read(2) would return */
	if (ioctl(in->ifd, FIONREAD, &queued) < 0 || queued < 0)
		queued = 0;
	return in->kpos + (uint64_t)queued;
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
 * be checked with every rename after the loss in hand (roots_check());
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
	free(in->buf2);
	in->buf2 = b;			/* names point into it: kept to the
					 * next read, as buf is */
	in->more = !again;
	in->rest = b;
	in->rest_end = b + fill;
	if (check)
		roots_check(in);
	in->scur = b;
	in->send = b + fill;
	in->spos = base;
	return 0;
}

/*
 * The parse held a record (halves_first()): what the kernel queued since
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

/* After a batch: due halves and windows, crawls, walk steps, rescans. */
static int settle(struct inofd *in)
{
	uint64_t now = inofd__now_ns();
	struct inofd__pend *p;

	/*
	 * The window is for a half that ends what the kernel had queued: with
	 * records still unread (in->more), its partner may be the next one,
	 * and the next record settles it either way.
	 */
	while (!in->more && in->pfirst && !held_partner(in, in->pfirst) &&
	       (p = inofd__pend_due(in, now))) {
		moved_out(in, p);
		inofd__pend_put(in, p);
	}
	inofd__win_expire(in, now);
	if (in->xw.reg && !in->more && in->xw.deadline <= now)
		xw_decide(in, -1);	/* not told in time: checked */
	if (in->unsure && !in->held)
		inofd__tree_sure(in);	/* the records of the loss are done */
	if (in->crawl_due && !in->held) {
		in->crawl_due = false;
		inofd__tree_crawl(in);
	}
	/*
	 * Walks look at the file system as it is now: they run once the
	 * events read so far are all there is (read(2) said EAGAIN), so no
	 * older event is given a path from after it; and not while a path
	 * above a root waits for its next records (in->xw), nor while a
	 * record is held, unparsed, nor while a half waits for its partner
	 * (a directory moved into one not walked yet is found by the walk
	 * only once its half is decided: listed as new if it moved out).
	 */
	if (!in->more && !in->xw.reg && !in->held && !in->npend) {
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
		 * A record waits for a half (halves_first()): the batch ends
		 * here; the next inofd_read() reads what came since behind it
		 * and goes on (inofd_timeout() says when the half is due).
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
		size_t fill = 0;
		bool again = false;

		while (in->bufsz - fill >= INOFD__READ_MIN &&
		       rounds < INOFD__READ_ROUNDS) {
			ssize_t n = inofd__backend_read(in, in->buf + fill,
							in->bufsz - fill);

			rounds++;
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 && errno == EAGAIN) {
				again = true;
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
		in->more = !again;	/* known to the parse: see overflow() */
		in->kpos += fill;
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
