/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_TABLE_H
#define INOFD_TABLE_H

#include "types.h"

INOFD__HIDDEN int inofd__table_init(struct inofd *in);
INOFD__HIDDEN void inofd__table_free(struct inofd *in);

/* kernel watches by wd */
INOFD__HIDDEN struct inofd__kw *inofd__kw_find(const struct inofd *in, int wd);
INOFD__HIDDEN struct inofd__kw *inofd__kw_get(struct inofd *in, int wd,
					      dev_t dev, ino_t ino);
/* drop kw if no member is left on it; rm: tell the backend too */
INOFD__HIDDEN void inofd__kw_put(struct inofd *in, struct inofd__kw *kw,
				 bool rm);

/* inofd__kw_find(), remembering the last one found (events come in runs) */
static inline struct inofd__kw *inofd__kw_hot(struct inofd *in, int wd)
{
	struct inofd__kw *kw = in->kwhot;

	if (kw && kw->wd == wd)
		return kw;
	kw = inofd__kw_find(in, wd);
	if (kw)
		in->kwhot = kw;
	return kw;
}

/* registrations by id */
INOFD__HIDDEN struct inofd__reg *inofd__reg_find(const struct inofd *in,
						 int id);
INOFD__HIDDEN struct inofd__reg *inofd__reg_new(struct inofd *in, int kind);
INOFD__HIDDEN void inofd__reg_free(struct inofd *in, struct inofd__reg *r);
/* A tree's ancestor members go, with their kernel watches if unshared. */
INOFD__HIDDEN void inofd__anc_drop(struct inofd *in, struct inofd__reg *r);

/* members */
INOFD__HIDDEN struct inofd__mem *inofd__mem_new(struct inofd *in,
						struct inofd__reg *r,
						struct inofd__kw *kw, int kind);
INOFD__HIDDEN void inofd__mem_free(struct inofd *in, struct inofd__mem *m);
/* m's name becomes a copy of name (kept in m when short); -ENOMEM, and
 * the old name is kept, without memory. */
INOFD__HIDDEN int inofd__node_name(struct inofd__mem *m, const char *name);
INOFD__HIDDEN struct inofd__mem *inofd__mem_of(const struct inofd__kw *kw,
					       const struct inofd__reg *r);
INOFD__HIDDEN void inofd__node_link(struct inofd *in, struct inofd__mem *parent,
				    struct inofd__mem *m);
INOFD__HIDDEN void inofd__node_unlink(struct inofd *in, struct inofd__mem *m);
/* m's child called name; never one another rename took the name from
 * (shadow) */
INOFD__HIDDEN struct inofd__mem *inofd__node_child(const struct inofd__mem *m,
						   const char *name);
/*
 * The child an IN_MOVED_FROM of name moves: the exchange partner that
 * holds the name (xpart) if there is one, else inofd__node_child().
 */
INOFD__HIDDEN struct inofd__mem *inofd__node_src(const struct inofd__mem *m,
						 const char *name);
INOFD__HIDDEN bool inofd__node_below(const struct inofd__mem *a,
				     const struct inofd__mem *m);

/* The member's full path (cached until a path changes), or NULL: unknown,
 * or no memory to make it (errno ENOMEM, not cached). */
INOFD__HIDDEN const char *inofd__mem_path(struct inofd *in,
					  struct inofd__mem *m, size_t *len);
/* Was m's path taken from a tree that is unsure (reg->unsure), or from
 * below a mount change not acted on yet (reg->mstale)? */
INOFD__HIDDEN bool inofd__mem_unsure(const struct inofd__mem *m);
INOFD__HIDDEN void inofd__paths_changed(struct inofd *in);
/* A crawl put a directory of tree r, already watched, where it is now. */
INOFD__HIDDEN void inofd__placed_now(struct inofd *in, struct inofd__reg *r);

/* A walk step put node c where it is now, while records may wait; the
 * step ended (what it put is judged by the records up to here); the
 * records b..end, at stream offset pos, read and not parsed yet. */
INOFD__HIDDEN void inofd__placed_add(struct inofd *in,
				     const struct inofd__mem *c);
INOFD__HIDDEN void inofd__placed_step(struct inofd *in);
INOFD__HIDDEN void inofd__placed_scan(struct inofd *in, const char *b,
				      const char *end, uint64_t pos);

/* The kernel wd watching (dev, ino), or -1 (for tests). */
INOFD__HIDDEN int inofd__kwd_of(const struct inofd *in, dev_t dev, ino_t ino);
#endif
