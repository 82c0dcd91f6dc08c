/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_ARENA_H
#define INOFD_ARENA_H

#include "types.h"

/* Strings that live until inofd__arena_reset(); NULL when out of memory. */
INOFD__HIDDEN char *inofd__arena_alloc(struct inofd__arena *a, size_t n);
INOFD__HIDDEN char *inofd__arena_join(struct inofd__arena *a, const char *dir,
				      size_t dirlen, const char *name);
INOFD__HIDDEN void inofd__arena_reset(struct inofd__arena *a);
INOFD__HIDDEN void inofd__arena_free(struct inofd__arena *a);

#endif
