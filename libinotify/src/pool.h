/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_POOL_H
#define INOFD_POOL_H

#include "types.h"

/*
 * Objects of one size (a tree's kernel watches and members), carved from
 * slabs and kept on a free list: a get is a pop or a bump, where malloc()
 * costs over a hundred instructions per object and a 16-byte header.
 * inofd__pool_get() returns a zeroed object, or NULL without memory.  The
 * slabs are freed when the last object is put back, and by
 * inofd__pool_free().  Built with -DINOFD__NO_POOL (or under ASan), get
 * and put are calloc() and free(), so memory checkers see every object.
 */
INOFD__HIDDEN void inofd__pool_init(struct inofd__pool *p, size_t size);
INOFD__HIDDEN void *inofd__pool_get(struct inofd__pool *p);
INOFD__HIDDEN void inofd__pool_put(struct inofd__pool *p, void *o);
INOFD__HIDDEN void inofd__pool_free(struct inofd__pool *p);

#endif
