// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Emitting events, rename halves and coalescing windows.
 *
 * A pending IN_MOVED_FROM waits aside, in a table indexed by cookie and a
 * list ordered by deadline (every half gets the same timeout, so appending
 * keeps the order); a coalescing window waits on its member, in a list
 * ordered the same way.  Neither holds back any other event: only ready
 * events enter the queue.  Nothing here is O(queue).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pair.h"

uint64_t inofd__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool inofd__wants(const struct inofd__mem *m, uint32_t mask)
{
	if (m->kind == INOFD__MEM_PARENT)
		return false;
	return (mask & m->reg->mask & IN_ALL_EVENTS) ||
	       (mask & INOFD__ALWAYS_BITS);
}

/*
 * Was the record being applied queued before m's registration was made?
 * Then it is not the registration's (a kernel watch it shares with older
 * ones): only what ends it (IN_UNMOUNT, IN_IGNORED) reaches it.
 */
static bool unborn(const struct inofd *in, const struct inofd__mem *m,
		   uint32_t mask)
{
	return in->at_rec && m->reg->born > in->cur_pos &&
	       !(mask & (IN_UNMOUNT | IN_IGNORED));
}

static struct inofd_event *push_at(struct inofd *in, struct inofd__mem *m,
				   int type, const char *name, bool copy,
				   bool given, const char *full)
{
	struct inofd_event *ev;
	const char *dir;
	size_t dl = 0;

	ev = inofd__q_push(in, type);
	if (!ev)
		return NULL;
	ev->wd = m->reg->id;
	ev->data = m->reg->data;
	ev->ino = (uint64_t)m->kw->ino;
	ev->dev = (uint64_t)m->kw->dev;
	if ((m->reg->kind == INOFD__REG_PLAIN && m->reg->stale) ||
	    inofd__mem_unsure(m))
		ev->flags |= INOFD_EVF_STALE_PATH;
	if (given) {
		dir = full;
		dl = full ? strlen(full) : 0;
		if (dir) {
			ev->path = inofd__arena_join(&in->arena, dir, dl, NULL);
			if (!ev->path)
				goto oom;
		}
	} else if ((dir = inofd__mem_path(in, m, &dl))) {
		/* one copy: the path, whose last component is the name */
		size_t nl = name ? strlen(name) : 0;
		char *p = inofd__arena_alloc(&in->arena, dl + nl + 2);

		if (!p)
			goto oom;
		memcpy(p, dir, dl);
		if (name) {
			if (!dl || dir[dl - 1] != '/')
				p[dl++] = '/';
			memcpy(p + dl, name, nl + 1);
			name = p + dl;
		} else {
			p[dl] = '\0';
		}
		ev->path = p;
		ev->name = name;
		return ev;
	}
	if (name && (copy || given)) {
		size_t nl = strlen(name) + 1;
		char *p = inofd__arena_alloc(&in->arena, nl);

		if (!p)
			goto oom;
		memcpy(p, name, nl);
		name = p;
	} else if (name && ev->path && !given) {
		/* the name is the path's last component */
		name = ev->path + strlen(ev->path) - strlen(name);
	}
	ev->name = name;
	return ev;
oom:
	/* lost like in an overflow, and said so the same way */
	inofd__q_unpush(in);
	in->rescan_due = true;
	return NULL;
}

static struct inofd_event *push_on(struct inofd *in, struct inofd__mem *m,
				   int type, const char *name, bool copy)
{
	return push_at(in, m, type, name, copy, false, NULL);
}

struct inofd_event *inofd__emit_path(struct inofd *in, struct inofd__mem *m,
				     int type, const struct inofd__raw *e,
				     const char *path)
{
	struct inofd_event *ev;

	if (!inofd__wants(m, e->mask) || unborn(in, m, e->mask))
		return NULL;
	inofd__win_close(in, m);
	ev = push_at(in, m, type, e->name, true, true, path);
	if (!ev)
		return NULL;
	ev->mask = e->mask;
	ev->cookie = e->cookie;
	if (m->reg->oneshot) {
		m->reg->mask = 0;
		m->reg->fired = true;
	}
	return ev;
}

static void win_unlink(struct inofd *in, struct inofd__mem *m)
{
	if (m->win_prev)
		m->win_prev->win_next = m->win_next;
	else
		in->wfirst = m->win_next;
	if (m->win_next)
		m->win_next->win_prev = m->win_prev;
	else
		in->wlast = m->win_prev;
	m->win_prev = m->win_next = NULL;
	m->win_open = false;
}

void inofd__win_close(struct inofd *in, struct inofd__mem *m)
{
	struct inofd_event *ev;
	uint32_t mask;

	if (!m->win_open)
		return;
	mask = m->win_mask;
	win_unlink(in, m);
	m->win_mask = 0;
	ev = push_on(in, m, INOFD_EV_CHANGED, NULL, false);
	if (ev)
		ev->mask = mask;
}

void inofd__win_expire(struct inofd *in, uint64_t now)
{
	while (in->wfirst && in->wfirst->win_deadline <= now)
		inofd__win_close(in, in->wfirst);
}

static void fold(struct inofd *in, struct inofd__mem *m, uint32_t mask)
{
	if (!m->win_open) {
		m->win_open = true;
		m->win_deadline = inofd__now_ns() +
				  (uint64_t)in->coalesce_ms * 1000000u;
		m->win_prev = in->wlast;
		m->win_next = NULL;
		if (in->wlast)
			in->wlast->win_next = m;
		else
			in->wfirst = m;
		in->wlast = m;
	}
	m->win_mask |= mask;
}

struct inofd_event *inofd__emit(struct inofd *in, struct inofd__mem *m,
				int type, const struct inofd__raw *e,
				unsigned int flags)
{
	struct inofd_event *ev;

	if (!inofd__wants(m, e->mask) || unborn(in, m, e->mask))
		return NULL;
	if (in->coalesce_ms && !(e->mask & INOFD__ALWAYS_BITS) &&
	    type != INOFD_EV_ERROR) {
		fold(in, m, e->mask);
		return NULL;
	}
	/* IN_UNMOUNT and IN_IGNORED end a window early: they come after it */
	inofd__win_close(in, m);
	ev = push_on(in, m, type, e->name, flags & INOFD__COPY_NAME);
	if (!ev)
		return NULL;
	ev->mask = e->mask;
	ev->cookie = e->cookie;
	ev->flags |= flags & ~INOFD__COPY_NAME;
	if (m->reg->oneshot && !(e->mask & IN_IGNORED)) {
		m->reg->mask = 0;	/* fired: the dispatcher ends it */
		m->reg->fired = true;
	}
	return ev;
}

void inofd__error(struct inofd *in, struct inofd__mem *m, const char *name,
		  int err)
{
	struct inofd_event *ev;

	if (m->kind == INOFD__MEM_PARENT)
		m = m->reg->root;
	ev = push_on(in, m, INOFD_EV_ERROR, name, true);
	if (ev)
		ev->error = err;
}

void inofd__set_from(struct inofd *in, struct inofd_event *ev,
		     struct inofd__mem *m, const char *name, const char *path)
{
	const char *dir = path;

	ev->from_wd = m->reg->id;
	ev->from_data = m->reg->data;
	ev->from_path = dir ? inofd__arena_join(&in->arena, dir, strlen(dir),
						NULL) : NULL;
	ev->from_name = NULL;
	if (name) {
		size_t nl = strlen(name) + 1;
		char *p = inofd__arena_alloc(&in->arena, nl);

		if (p)
			memcpy(p, name, nl);
		ev->from_name = p;
	}
	if ((dir && !ev->from_path) || (name && !ev->from_name))
		in->rescan_due = true;
}

void inofd__reg_end(struct inofd *in, struct inofd__reg *r, bool report,
		    unsigned int flags)
{
	struct inofd__mem *root = r->root;
	bool owed = false;

	if (report && root) {
		inofd__win_close(in, root);
		/* a LOST not told yet comes first */
		if (r->owe_lost)
			inofd__q_lost(in, r);
		/* IN_IGNORED: wants() is true whatever the mask; past the
		 * queue's bound (queue.c): an end is never dropped */
		r->oneshot = false;
		in->qpast = true;
		owed = r->owe_lost ||
		       !inofd__emit(in, root, INOFD_EV_INOTIFY,
				    &(struct inofd__raw){ IN_IGNORED, 0, NULL },
				    flags);
		in->qpast = false;
	}
	if (r->plink) {
		struct inofd__kw *kw = r->plink->kw;

		inofd__mem_free(in, r->plink);
		inofd__kw_put(in, kw, true);
	}
	inofd__anc_drop(in, r);
	if (root)
		inofd__subtree_free(in, root);
	if (owed)
		inofd__q_owe_end(in, r, flags);	/* told at the next read */
	else
		inofd__reg_free(in, r);
}

void inofd__end_fired(struct inofd *in, int wd)
{
	for (;;) {
		struct inofd__kw *kw = inofd__kw_find(in, wd);
		struct inofd__mem *m;

		for (m = kw ? kw->mems : NULL; m && !m->reg->fired; m = m->kwnext)
			;
		if (!m)
			return;
		inofd__reg_end(in, m->reg, true, INOFD_EVF_SYNTHETIC);
	}
}

/* A tree node's end, told as the kernel tells a watch's: past the bound. */
static void member_end(struct inofd *in, struct inofd__mem *m,
		       unsigned int flags)
{
	struct inofd_event *ev;

	inofd__win_close(in, m);
	in->qpast = true;
	ev = push_on(in, m, INOFD_EV_INOTIFY, NULL, false);
	in->qpast = false;
	if (ev) {
		ev->mask = IN_IGNORED;
		ev->flags |= INOFD_EVF_MEMBER | flags;
	}
}

void inofd__subtree_end(struct inofd *in, struct inofd__mem *m,
			unsigned int flags)
{
	struct inofd__mem *top = m;
	bool tell = (m->reg->tflags & INOFD_TREE_MEMBER_ENDS) &&
		    m != m->reg->root;

	/* it leaves from where the record named it: its path is that one */
	if (m->moving) {
		m->moving = false;
		inofd__paths_changed(in);
	}
	/* post-order without recursion: a deep tree needs no stack; a
	 * node's path is built while the nodes above it are still there */
	for (;;) {
		struct inofd__mem *parent;
		struct inofd__kw *kw;

		while (m->child)
			m = m->child;
		parent = m == top ? NULL : m->parent;
		if (tell)
			member_end(in, m, m == top ? flags :
					  INOFD_EVF_SYNTHETIC);
		kw = m->kw;
		inofd__mem_free(in, m);
		inofd__kw_put(in, kw, true);
		if (!parent)
			return;
		m = parent;
	}
}

void inofd__subtree_free(struct inofd *in, struct inofd__mem *m)
{
	inofd__subtree_end(in, m, INOFD_EVF_SYNTHETIC);
}

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

bool inofd__mem_unsure(const struct inofd__mem *m)
{
	/* a plain watch takes no path from an unsure tree (table.c) */
	return m->reg->unsure;
}

bool inofd__pend_unsure(const struct inofd__pend *p,
			const struct inofd__mem *m)
{
	unsigned int i;

	for (i = 0; i < p->nsrc; i++)
		if (p->src[i].reg == m->reg->id)
			return p->src[i].unsure;
	return false;
}

const char *inofd__pend_path(const struct inofd__pend *p,
			     const struct inofd__mem *m)
{
	unsigned int i;

	for (i = 0; i < p->nsrc; i++)
		if (p->src[i].reg == m->reg->id)
			return p->src[i].off == (size_t)-1 ? NULL :
			       p->paths + p->src[i].off;
	return NULL;
}

struct inofd__mem *inofd__pend_node(const struct inofd *in,
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

const struct inofd__pend *inofd__pend_find(const struct inofd *in,
					   uint32_t cookie)
{
	const struct inofd__pend *p;

	for (p = in->cookies[bucket(cookie)]; p; p = p->hnext)
		if (p->cookie == cookie)
			return p;
	return NULL;
}

struct inofd__pend *inofd__pend_add(struct inofd *in, struct inofd__kw *kw,
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
}

void inofd__pend_rekey(struct inofd *in, struct inofd__pend *p,
		       uint32_t cookie)
{
	bucket_unlink(in, p);
	p->cookie = cookie;
	p->hnext = in->cookies[bucket(cookie)];
	in->cookies[bucket(cookie)] = p;
}

struct inofd__pend *inofd__pend_take(struct inofd *in, uint32_t cookie)
{
	struct inofd__pend *p;

	for (p = in->cookies[bucket(cookie)]; p; p = p->hnext)
		if (p->cookie == cookie)
			break;
	if (p)
		pend_unlink(in, p);
	return p;
}

struct inofd__pend *inofd__pend_due(struct inofd *in, uint64_t now)
{
	struct inofd__pend *p = in->pfirst;

	if (!p || (now && p->deadline > now))
		return NULL;
	pend_unlink(in, p);
	return p;
}

void inofd__pend_put(struct inofd *in, struct inofd__pend *p)
{
	p->hnext = in->pfree;
	in->pfree = p;
}

void inofd__pend_free(struct inofd *in)
{
	struct inofd__pend *p;

	while ((p = inofd__pend_due(in, 0)))
		inofd__pend_put(in, p);
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
