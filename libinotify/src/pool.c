// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Fixed-size objects in slabs (pool.h).  A slab starts with a link to the
 * one made before it; its objects follow, each size rounded up to 16
 * bytes.  Slabs grow from 4 KiB to 16 KiB, so a small instance stays
 * small and a large tree makes few of them.
 */
#include <stdlib.h>
#include <string.h>

#include "pool.h"

#if defined(__SANITIZE_ADDRESS__) && !defined(INOFD__NO_POOL)
#define INOFD__NO_POOL
#endif

#define SLAB_MIN	4096
#define SLAB_MAX	16384
#define SLAB_HDR	16	/* the link, padded: objects stay 16-aligned */

void inofd__pool_init(struct inofd__pool *p, size_t size)
{
	memset(p, 0, sizeof(*p));
	p->size = (size + 15) & ~(size_t)15;
}

#ifdef INOFD__NO_POOL

void *inofd__pool_get(struct inofd__pool *p)
{
	void *o = calloc(1, p->size);

	if (o)
		p->live++;
	return o;
}

void inofd__pool_put(struct inofd__pool *p, void *o)
{
	p->live--;
	free(o);
}

void inofd__pool_free(struct inofd__pool *p)
{
	(void)p;
}

#else

static void *slab_new(struct inofd__pool *p)
{
	size_t sz = p->slab ? p->slab * 2 : SLAB_MIN;
	char *s;

	if (sz > SLAB_MAX)
		sz = SLAB_MAX;
	if (sz < SLAB_HDR + p->size)
		sz = SLAB_HDR + p->size;
	s = malloc(sz);
	if (!s)
		return NULL;
	*(void **)s = p->slabs;
	p->slabs = s;
	p->slab = sz;
	p->cur = s + SLAB_HDR;
	p->end = s + sz;
	return s;
}

void *inofd__pool_get(struct inofd__pool *p)
{
	void *o = p->free;

	if (o) {
		p->free = *(void **)o;
	} else {
		if ((size_t)(p->end - p->cur) < p->size && !slab_new(p))
			return NULL;
		o = p->cur;
		p->cur += p->size;
	}
	memset(o, 0, p->size);
	p->live++;
	return o;
}

void inofd__pool_free(struct inofd__pool *p)
{
	void *s = p->slabs;

	while (s) {
		void *next = *(void **)s;

		free(s);
		s = next;
	}
	p->slabs = p->free = NULL;
	p->cur = p->end = NULL;
	p->slab = 0;
	p->live = 0;
}

void inofd__pool_put(struct inofd__pool *p, void *o)
{
	*(void **)o = p->free;
	p->free = o;
	/* the last one back: a tree unwatched gives its memory back */
	if (--p->live == 0)
		inofd__pool_free(p);
}

#endif
