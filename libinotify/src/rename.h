/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_RENAME_H
#define INOFD_RENAME_H

#include "tree.h"
#include "types.h"

/* Was the source path of m's registration in p taken so? */
INOFD__HIDDEN bool inofd__pend_unsure(const struct inofd__pend *p,
				      const struct inofd__mem *m);
/* The source path of m's registration recorded in p, or NULL. */
INOFD__HIDDEN const char *inofd__pend_path(const struct inofd__pend *p,
					   const struct inofd__mem *m);
/* Pending IN_MOVED_FROM halves by cookie. */
INOFD__HIDDEN struct inofd__pend *inofd__pend_add(struct inofd *in,
						  struct inofd__kw *kw,
						  uint32_t mask,
						  uint32_t cookie,
						  const char *name);
/* The tree node of m's registration that p's record named when it was
 * read (held by its wd), or NULL if it is gone or was none. */
INOFD__HIDDEN struct inofd__mem *inofd__pend_node(const struct inofd *in,
						  const struct inofd__pend *p,
						  const struct inofd__mem *m);
/* The pending half of cookie, or NULL. */
INOFD__HIDDEN const struct inofd__pend *inofd__pend_find(const struct inofd *in,
							 uint32_t cookie);
/* Half p waits for the record of another cookie from now on. */
INOFD__HIDDEN void inofd__pend_rekey(struct inofd *in, struct inofd__pend *p,
				     uint32_t cookie);
INOFD__HIDDEN struct inofd__pend *inofd__pend_take(struct inofd *in,
						   uint32_t cookie);
/* The oldest pending half if it is due at now (any if now is 0). */
INOFD__HIDDEN struct inofd__pend *inofd__pend_due(struct inofd *in,
						  uint64_t now);
INOFD__HIDDEN void inofd__pend_put(struct inofd *in, struct inofd__pend *p);
INOFD__HIDDEN void inofd__pend_free(struct inofd *in);

/* The earliest deadline of a half or a window, 0 if none. */
INOFD__HIDDEN uint64_t inofd__pair_deadline(const struct inofd *in);

/*
 * The records after the current one that are in hand (in->rest): the
 * first on wd with a bit of mask gives its mask (> 0); 0 if an
 * IN_MOVED_FROM on stop1 or stop2 comes first; -1 if the records end
 * first; -2 if a loss comes first.
 */
INOFD__HIDDEN int64_t inofd__ahead_on(const struct inofd *in, int wd,
				      uint32_t mask, int stop1, int stop2);
/* Halves waiting when a record comes: decide the ones it concerns
 * first.  True: hold the record. */
INOFD__HIDDEN bool inofd__halves_first(struct inofd *in, int wd,
				       uint32_t mask, uint32_t cookie,
				       const char *name);
/* The two halves of a rename, as their records come. */
INOFD__HIDDEN void inofd__moved_from(struct inofd *in, struct inofd__kw *kw,
				     uint32_t mask, uint32_t cookie,
				     const char *name);
/* True: the TO is held, until its directory's MOVE_SELF is in hand. */
INOFD__HIDDEN bool inofd__moved_to(struct inofd *in, struct inofd__kw *kw,
				   uint32_t mask, uint32_t cookie,
				   const char *name);
/* IN_MOVE_SELF on wd: plain watches and roots with no parent in sight. */
INOFD__HIDDEN void inofd__self_moved(struct inofd *in, int wd);
/* A record while in->xw waits: does it decide?  And its decision. */
INOFD__HIDDEN void inofd__xw_record(struct inofd *in, int wd, uint32_t mask);
INOFD__HIDDEN void inofd__xw_decide(struct inofd *in, int it);
/* Deadlines: due halves (as move-outs), a wait above a root not told. */
INOFD__HIDDEN void inofd__halves_due(struct inofd *in, uint64_t now);
INOFD__HIDDEN void inofd__xw_due(struct inofd *in, uint64_t now);
/* Is the record held by the parse half p's partner? */
INOFD__HIDDEN bool inofd__held_partner(const struct inofd *in,
				       const struct inofd__pend *p);
/* A loss: every pending half, as a move-out. */
INOFD__HIDDEN void inofd__settle_halves(struct inofd *in);
/* After a loss, with every record after it in hand: the roots' chains. */
INOFD__HIDDEN void inofd__roots_check(struct inofd *in);
/* An end put late, or alone after a loss (INOFD__LATE), on kw. */
INOFD__HIDDEN void inofd__late(struct inofd *in, struct inofd__kw *kw,
			       uint32_t mask);

#endif
