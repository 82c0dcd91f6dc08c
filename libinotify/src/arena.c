// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The per-read arena: paths of the events of one read live here until the
 * next read.  Chunks are kept and reused, so a steady event stream
 * allocates nothing once the arena has grown to the largest read.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define CHUNK	(64 * 1024)

char *inofd__arena_alloc(struct inofd__arena *a, size_t n)
{
	struct inofd__chunk *c = a->head;

	n = (n + 7) & ~(size_t)7;
	if (c && c->cap - c->used >= n) {
		c->used += n;
		return c->data + c->used - n;
	}
	if (a->spare && a->spare->cap >= n) {
		c = a->spare;
		a->spare = c->next;
	} else {
		size_t cap = n > CHUNK ? n : CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
	}
	c->used = n;
	c->next = a->head;
	a->head = c;
	return c->data;
}

char *inofd__arena_join(struct inofd__arena *a, const char *dir,
			size_t dirlen, const char *name)
{
	size_t nl = name ? strlen(name) : 0;
	char *p;

	if (!dir)
		return NULL;
	p = inofd__arena_alloc(a, dirlen + nl + 2);
	if (!p)
		return NULL;
	memcpy(p, dir, dirlen);
	if (name) {
		if (!dirlen || dir[dirlen - 1] != '/')
			p[dirlen++] = '/';
		memcpy(p + dirlen, name, nl);
		dirlen += nl;
	}
	p[dirlen] = '\0';
	return p;
}

void inofd__arena_reset(struct inofd__arena *a)
{
	struct inofd__chunk *c, *next;

	for (c = a->head; c; c = next) {
		next = c->next;
		c->used = 0;
		c->next = a->spare;
		a->spare = c;
	}
	a->head = NULL;
}

void inofd__arena_free(struct inofd__arena *a)
{
	struct inofd__chunk *c, *next;

	inofd__arena_reset(a);
	for (c = a->spare; c; c = next) {
		next = c->next;
		free(c);
	}
	a->spare = NULL;
}
