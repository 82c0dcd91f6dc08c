/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_ARENA_H
#define INOFD_ARENA_H

#include <stdlib.h>

#include "types.h"

/*
 * Memory that lives until inofd__arena_reset(); NULL when out of memory.
 * inofd__arena_alloc() is 8-byte aligned (raw event records go there);
 * inofd__arena_str() is not (strings), and is inline: it is on the path of
 * every event.
 */
INOFD__HIDDEN char *inofd__arena_alloc(struct inofd__arena *a, size_t n);
INOFD__HIDDEN char *inofd__arena_more(struct inofd__arena *a, size_t n);
INOFD__HIDDEN char *inofd__arena_join(struct inofd__arena *a, const char *dir,
				      size_t dirlen, const char *name);
INOFD__HIDDEN void inofd__arena_reset(struct inofd__arena *a);
INOFD__HIDDEN void inofd__arena_free(struct inofd__arena *a);

static inline char *inofd__arena_str(struct inofd__arena *a, size_t n)
{
	char *p = a->cur;

	if (__builtin_expect((size_t)(a->end - p) >= n, 1)) {
		a->cur = p + n;
		return p;
	}
	return inofd__arena_more(a, n);
}

/* Append x to the array *v (*n used of *cap, grown by doubling); -1 when
 * out of memory, the array left as it was. */
static inline int inofd__ints_push(int **v, size_t *n, size_t *cap, int x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		int *nv = realloc(*v, c * sizeof(**v));

		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return 0;
}

#endif
