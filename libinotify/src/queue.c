// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The queue of ready events: blocks of events that never move (an event
 * handed out stays where it is until the next read), bounded by in->qmax.
 * Only ready events are queued: a pending rename half or an open
 * coalescing window waits elsewhere (pair.c), so nothing blocks the head.
 */
#include <stdlib.h>
#include <string.h>

#include "queue.h"

static struct inofd_event *slot(struct inofd *in, size_t i)
{
	size_t b = i / INOFD__QBLOCK;

	if (b >= in->nqblk) {
		size_t n = in->nqblk ? in->nqblk * 2 : 4;
		struct inofd_event **t = realloc(in->qblk, n * sizeof(*t));

		if (!t)
			return NULL;
		memset(t + in->nqblk, 0, (n - in->nqblk) * sizeof(*t));
		in->qblk = t;
		in->nqblk = n;
	}
	if (!in->qblk[b]) {
		in->qblk[b] = malloc(INOFD__QBLOCK * sizeof(struct inofd_event));
		if (!in->qblk[b])
			return NULL;
	}
	return &in->qblk[b][i % INOFD__QBLOCK];
}

static struct inofd_event *push(struct inofd *in, int type)
{
	struct inofd_event *ev = slot(in, in->qtail);

	if (!ev) {
		in->rescan_due = true;
		return NULL;
	}
	in->qtail++;
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->wd = -1;
	ev->from_wd = -1;
	return ev;
}

struct inofd_event *inofd__q_push(struct inofd *in, int type)
{
	if (in->qtail - in->qhead >= in->qmax) {
		in->rescan_due = true;
		return NULL;
	}
	return push(in, type);
}

void inofd__q_rescan(struct inofd *in)
{
	struct inofd_event *ev;

	if (!in->rescan_due)
		return;
	ev = push(in, INOFD_EV_RESCAN);		/* one past the bound */
	if (!ev)
		return;				/* still owed */
	ev->mask = IN_Q_OVERFLOW;
	in->rescan_due = false;
}

struct inofd_event *inofd__q_pop(struct inofd *in)
{
	if (in->qhead == in->qtail)
		return NULL;
	return slot(in, in->qhead++);
}

size_t inofd__q_ready(const struct inofd *in)
{
	return in->qtail - in->qhead;
}

bool inofd__q_reset(struct inofd *in)
{
	if (in->qhead != in->qtail)
		return false;
	in->qhead = in->qtail = 0;
	inofd__arena_reset(&in->arena);
	return true;
}

void inofd__q_free(struct inofd *in)
{
	size_t i;

	for (i = 0; i < in->nqblk; i++)
		free(in->qblk[i]);
	free(in->qblk);
	inofd__arena_free(&in->arena);
}
