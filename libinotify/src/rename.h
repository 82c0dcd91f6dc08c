/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_RENAME_H
#define INOFD_RENAME_H

#include "tree.h"
#include "types.h"

/* The records of a rename, as they come (the states: rename.c). */
INOFD__HIDDEN void inofd__moved_from(struct inofd *in, struct inofd__kw *kw,
				     uint32_t mask, uint32_t cookie,
				     const char *name);
/* True: the TO is held, until its directory's MOVE_SELF is in hand. */
INOFD__HIDDEN bool inofd__moved_to(struct inofd *in, struct inofd__kw *kw,
				   uint32_t mask, uint32_t cookie,
				   const char *name);
/* IN_MOVE_SELF on wd: plain watches and roots with no parent in sight. */
INOFD__HIDDEN void inofd__self_moved(struct inofd *in, int wd);
/* Halves waiting when a record comes: decide the ones it concerns
 * first.  True: hold the record. */
INOFD__HIDDEN bool inofd__halves_first(struct inofd *in, int wd,
				       uint32_t mask, uint32_t cookie,
				       const char *name);
/* A record while in->xw waits: does it decide? */
INOFD__HIDDEN void inofd__xw_record(struct inofd *in, int wd, uint32_t mask);

/* Deadlines: due halves (as move-outs), a wait above a root not told. */
INOFD__HIDDEN void inofd__halves_due(struct inofd *in, uint64_t now);
INOFD__HIDDEN void inofd__xw_due(struct inofd *in, uint64_t now);
/* The earliest deadline of a half, a window or in->xw, 0 if none. */
INOFD__HIDDEN uint64_t inofd__pair_deadline(const struct inofd *in);

/* A loss: every pending half, as a move-out. */
INOFD__HIDDEN void inofd__settle_halves(struct inofd *in);
/* After a loss, with every record after it in hand: the roots' chains. */
INOFD__HIDDEN void inofd__roots_check(struct inofd *in);
/* An end put late, or alone after a loss (INOFD__LATE), on kw. */
INOFD__HIDDEN void inofd__late(struct inofd *in, struct inofd__kw *kw,
			       uint32_t mask);

/*
 * The records after the current one that are in hand (in->rest): the
 * first on wd with a bit of mask gives its mask (> 0); 0 if an
 * IN_MOVED_FROM on stop1 or stop2 comes first; -1 if the records end
 * first; -2 if a loss comes first.
 */
INOFD__HIDDEN int64_t inofd__ahead_on(const struct inofd *in, int wd,
				      uint32_t mask, int stop1, int stop2);
/* Every half and its buffers freed (the instance ends). */
INOFD__HIDDEN void inofd__pend_free(struct inofd *in);

#endif
