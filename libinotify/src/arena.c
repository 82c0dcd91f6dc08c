// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The per-read arena: paths of the events of one read live here until the
 * next read.  Chunks are kept and reused, so a steady event stream
 * allocates nothing once the arena has grown to the largest read.  The
 * chunk in use is a bump cursor (cur, end): a string costs a compare and
 * an add.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define CHUNK	(64 * 1024)

/* The cursor cannot give n bytes: a new chunk (a spare one if it fits). */
char *inofd__arena_more(struct inofd__arena *a, size_t n)
{
	struct inofd__chunk *c;

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
	c->next = a->head;
	a->head = c;
	a->cur = c->data + n;
	a->end = c->data + c->cap;
	return c->data;
}

char *inofd__arena_alloc(struct inofd__arena *a, size_t n)
{
	uintptr_t p = (uintptr_t)a->cur, q = (p + 7) & ~(uintptr_t)7;

	n = (n + 7) & ~(size_t)7;
	/* chunk data is 8-byte aligned (struct inofd__chunk ends on a size_t) */
	if (a->cur && (uintptr_t)a->end >= q && (uintptr_t)a->end - q >= n) {
		a->cur = (char *)(q + n);
		return (char *)q;
	}
	return inofd__arena_more(a, n);
}

char *inofd__arena_join(struct inofd__arena *a, const char *dir,
			size_t dirlen, const char *name)
{
	size_t nl = name ? strlen(name) : 0;
	char *p;

	if (!dir)
		return NULL;
	p = inofd__arena_str(a, dirlen + nl + 2);
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
		c->next = a->spare;
		a->spare = c;
	}
	a->head = NULL;
	a->cur = a->end = NULL;
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
