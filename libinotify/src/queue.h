/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_QUEUE_H
#define INOFD_QUEUE_H

#include "arena.h"
#include "types.h"

/* A zeroed event at the tail, or NULL (full or no memory: a rescan is due) */
INOFD__HIDDEN struct inofd_event *inofd__q_push(struct inofd *in, int type);
/* The tail's slot when its block is used up: the slow part of q_slot(). */
INOFD__HIDDEN struct inofd_event *inofd__q_grow(struct inofd *in);
/* Take back the last event pushed (it could not be completed). */
INOFD__HIDDEN void inofd__q_unpush(struct inofd *in);
/* Drop every event pushed since inofd__q_mark() returned mark. */
INOFD__HIDDEN size_t inofd__q_mark(const struct inofd *in);
INOFD__HIDDEN void inofd__q_rollback(struct inofd *in, size_t mark);
/* Queue the INOFD_EV_RESCAN that a loss owes, if one is owed. */
INOFD__HIDDEN void inofd__q_rescan(struct inofd *in);
INOFD__HIDDEN struct inofd_event *inofd__q_first(struct inofd *in);
INOFD__HIDDEN size_t inofd__q_ready(const struct inofd *in);
/* Everything handed out: start over (and free the strings); true if so. */
INOFD__HIDDEN bool inofd__q_reset(struct inofd *in);
INOFD__HIDDEN void inofd__q_free(struct inofd *in);

/*
 * The slot at the tail, not initialised (the caller sets every field), or
 * NULL: the queue is at its bound or out of memory, and a rescan is due.
 * Inline: every event takes this path.
 */
static inline struct inofd_event *inofd__q_slot(struct inofd *in)
{
	struct inofd_event *ev = in->qw;

	if (__builtin_expect(ev != in->qwend &&
			     in->qtail - in->qhead < in->qmax, 1)) {
		in->qw = ev + 1;
		in->qtail++;
		return ev;
	}
	return inofd__q_grow(in);
}

/* The next ready event, or NULL. */
static inline struct inofd_event *inofd__q_pop(struct inofd *in)
{
	struct inofd_event *ev = in->qr;

	if (in->qhead == in->qtail)
		return NULL;
	if (__builtin_expect(ev == in->qrend, 0))
		ev = inofd__q_first(in);
	in->qr = ev + 1;
	in->qhead++;
	return ev;
}

#endif
