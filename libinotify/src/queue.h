/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_QUEUE_H
#define INOFD_QUEUE_H

#include "arena.h"
#include "types.h"

/* A zeroed event at the tail, or NULL (full or no memory: a rescan is due) */
INOFD__HIDDEN struct inofd_event *inofd__q_push(struct inofd *in, int type);
/* Queue the INOFD_EV_RESCAN that a loss owes, if one is owed. */
INOFD__HIDDEN void inofd__q_rescan(struct inofd *in);
INOFD__HIDDEN struct inofd_event *inofd__q_pop(struct inofd *in);
INOFD__HIDDEN size_t inofd__q_ready(const struct inofd *in);
/* Everything handed out: start over (and free the strings); true if so. */
INOFD__HIDDEN bool inofd__q_reset(struct inofd *in);
INOFD__HIDDEN void inofd__q_free(struct inofd *in);

#endif
