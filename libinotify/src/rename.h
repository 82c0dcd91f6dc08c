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

#endif
