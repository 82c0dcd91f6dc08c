/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_PAIR_H
#define INOFD_PAIR_H

#include "queue.h"
#include "table.h"
#include "types.h"

INOFD__HIDDEN uint64_t inofd__now_ns(void);

/* Does m's registration want an event with this mask? */
INOFD__HIDDEN bool inofd__wants(const struct inofd__mem *m, uint32_t mask);
/*
 * Report one event on m: honours the mask, coalescing and IN_ONESHOT.
 * e->name must live until the next read (in the read buffer) unless
 * flags has INOFD__COPY_NAME; the other flags are INOFD_EVF_*.
 */
INOFD__HIDDEN struct inofd_event *inofd__emit(struct inofd *in,
					      struct inofd__mem *m, int type,
					      const struct inofd__raw *e,
					      unsigned int flags);
/* An INOFD_EV_ERROR about entry name of m (or m itself). */
INOFD__HIDDEN void inofd__error(struct inofd *in, struct inofd__mem *m,
				const char *name, int err);
/* Set ev's from_* to m/name; path: the source's full path (or NULL). */
INOFD__HIDDEN void inofd__set_from(struct inofd *in, struct inofd_event *ev,
				   struct inofd__mem *m, const char *name,
				   const char *path);
/* inofd__emit() with the full path given (NULL: unknown). */
INOFD__HIDDEN struct inofd_event *inofd__emit_path(struct inofd *in,
						   struct inofd__mem *m,
						   int type,
						   const struct inofd__raw *e,
						   const char *path);

/* End the registrations on wd whose IN_ONESHOT event fired. */
INOFD__HIDDEN void inofd__end_fired(struct inofd *in, int wd);

/*
 * Free tree node m and every node below it, unwatching what is left
 * unused.  Unless m is its tree's root (the tree ends: its one IN_IGNORED
 * is inofd__reg_end()'s), a tree with INOFD_TREE_MEMBER_ENDS is told of
 * each node, children first: IN_IGNORED with INOFD_EVF_MEMBER, past the
 * queue's bound.  inofd__subtree_end(): m's own report has flags (0: the
 * kernel's IN_IGNORED), the others are INOFD_EVF_SYNTHETIC, as every
 * report of inofd__subtree_free() is.
 */
INOFD__HIDDEN void inofd__subtree_end(struct inofd *in, struct inofd__mem *m,
				      unsigned int flags);
INOFD__HIDDEN void inofd__subtree_free(struct inofd *in, struct inofd__mem *m);
/* End a registration: its one IN_IGNORED (if report, with flags). */
INOFD__HIDDEN void inofd__reg_end(struct inofd *in, struct inofd__reg *r,
				  bool report, unsigned int flags);

/* Coalescing windows. */
INOFD__HIDDEN void inofd__win_close(struct inofd *in, struct inofd__mem *m);
INOFD__HIDDEN void inofd__win_expire(struct inofd *in, uint64_t now);

#endif
