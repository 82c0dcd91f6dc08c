/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_QUEUE_H
#define INOFD_QUEUE_H

#include "arena.h"
#include "types.h"

/* A zeroed event at the tail, or NULL (full or no memory: a rescan is due) */
INOFD__HIDDEN struct inofd_event *inofd__q_push(struct inofd *in, int type);
/* inofd__q_push() past the bound: an end (IN_IGNORED, LOST) the caller
 * must be told; NULL only without memory. */
INOFD__HIDDEN struct inofd_event *inofd__q_push_end(struct inofd *in,
						    int type);
/* r's INOFD_EVF_LOST error, past the bound; owed when it cannot be. */
INOFD__HIDDEN void inofd__q_lost(struct inofd *in, struct inofd__reg *r);
/* r ended but its IN_IGNORED could not be queued: keep r (its members
 * are gone) until inofd__q_owed() queues it. */
INOFD__HIDDEN void inofd__q_owe_end(struct inofd *in, struct inofd__reg *r,
				    unsigned int flags);
/* Queue what registrations owe (in->nowed), freeing those that ended. */
INOFD__HIDDEN void inofd__q_owed(struct inofd *in);
/* Take back the last event pushed (it could not be completed). */
INOFD__HIDDEN void inofd__q_unpush(struct inofd *in);
/* Drop every event pushed since inofd__q_mark() returned mark. */
INOFD__HIDDEN size_t inofd__q_mark(const struct inofd *in);
INOFD__HIDDEN void inofd__q_rollback(struct inofd *in, size_t mark);
/* Queue the INOFD_EV_RESCAN that a loss owes, if one is owed. */
INOFD__HIDDEN void inofd__q_rescan(struct inofd *in);
/* The next ready event, or NULL: inofd_next() calls it when its cursor
 * (in->qr to in->qrend, the rest of one block) is used up. */
INOFD__HIDDEN struct inofd_event *inofd__q_next(struct inofd *in);
INOFD__HIDDEN size_t inofd__q_ready(const struct inofd *in);
/* How many more events may be queued before the bound. */
INOFD__HIDDEN size_t inofd__q_room(const struct inofd *in);
/* Everything handed out: start over (and free the strings); true if so. */
INOFD__HIDDEN bool inofd__q_reset(struct inofd *in);
INOFD__HIDDEN void inofd__q_free(struct inofd *in);

#endif
