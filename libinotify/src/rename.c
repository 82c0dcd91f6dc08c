// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The rename engine.
 *
 * A pending IN_MOVED_FROM waits aside, in a table indexed by cookie and a
 * list ordered by deadline (every half gets the same timeout, so appending
 * keeps the order).  It holds back no other event: only ready events enter
 * the queue.  Nothing here is O(queue).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
