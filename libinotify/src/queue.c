// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The queue of ready events: blocks of events that never move (an event
 * handed out stays where it is until the next read), bounded by in->qmax.
 * Only ready events are queued: a pending rename half or an open
 * coalescing window waits elsewhere (pair.c), so nothing blocks the head.
 * A cursor into the tail's block and one into the head's make a push and
 * a pop a compare and an increment; the block arithmetic runs once per
 * block.
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

static size_t head(const struct inofd *in)
{
	return in->qbase + (size_t)(in->qr - in->qrbase);
}

size_t inofd__q_room(const struct inofd *in)
{
	size_t n = in->qtail - head(in);

	return n < in->qmax ? in->qmax - n : 0;
}

/* The tail's slot (no bound), and the cursor set to the rest of its block */
static struct inofd_event *tail_slot(struct inofd *in)
{
	struct inofd_event *ev = slot(in, in->qtail);

	if (!ev) {
		in->qw = in->qwend = NULL;
		in->rescan_due = true;
		return NULL;
	}
	in->qw = ev + 1;
	in->qwend = ev + (INOFD__QBLOCK - in->qtail % INOFD__QBLOCK);
	in->qtail++;
	return ev;
}

static void init(struct inofd_event *ev, int type)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	ev->wd = -1;
	ev->from_wd = -1;
}

struct inofd_event *inofd__q_push(struct inofd *in, int type)
{
	struct inofd_event *ev;

	if (!inofd__q_room(in)) {
		in->rescan_due = true;
		return NULL;
	}
	if (in->qw != in->qwend) {
		ev = in->qw++;
		in->qtail++;
	} else {
		ev = tail_slot(in);
	}
	if (ev)
		init(ev, type);
	return ev;
}

void inofd__q_unpush(struct inofd *in)
{
	in->qtail--;
	in->qw = in->qwend = NULL;	/* found again at the next push */
}

size_t inofd__q_mark(const struct inofd *in)
{
	return in->qtail;
}

void inofd__q_rollback(struct inofd *in, size_t mark)
{
	in->qtail = mark;
	in->qw = in->qwend = NULL;
}

void inofd__q_rescan(struct inofd *in)
{
	struct inofd_event *ev;

	if (!in->rescan_due)
		return;
	ev = tail_slot(in);			/* one past the bound */
	if (!ev)
		return;				/* still owed */
	init(ev, INOFD_EV_RESCAN);
	ev->mask = IN_Q_OVERFLOW;
	in->rescan_due = false;
}

/*
 * The cursor reached what it knew: the rest of the head's block that is
 * queued now (queued events are in blocks that exist), or NULL.
 */
struct inofd_event *inofd__q_next(struct inofd *in)
{
	size_t h = head(in), off = h % INOFD__QBLOCK, n = INOFD__QBLOCK - off;
	struct inofd_event *ev;

	if (h >= in->qtail) {
		in->qbase = h;
		in->qr = in->qrend = in->qrbase = NULL;
		return NULL;
	}
	if (n > in->qtail - h)
		n = in->qtail - h;
	ev = &in->qblk[h / INOFD__QBLOCK][off];
	in->qbase = h;
	in->qrbase = ev;
	in->qr = ev + 1;
	in->qrend = ev + n;
	return ev;
}

size_t inofd__q_ready(const struct inofd *in)
{
	return in->qtail - head(in);
}

bool inofd__q_reset(struct inofd *in)
{
	if (head(in) != in->qtail)
		return false;
	in->qbase = in->qtail = 0;
	in->qw = in->qwend = in->qr = in->qrend = in->qrbase = NULL;
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
