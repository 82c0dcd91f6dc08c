// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The queue of ready events: blocks of events that never move (an event
 * handed out stays where it is until the next read), bounded by in->qmax.
 * Only ready events are queued: a pending rename half or an open
 * coalescing window waits elsewhere (pair.c), so nothing blocks the head.
 * A cursor into the tail's block and one into the head's make a push and
 * a pop a compare and an increment; the block arithmetic runs once per
 * block.
 *
 * The event at index i has sequence number qseq + i + 1: numbers follow
 * the order of the queue, which is the order events are handed out, and
 * an event taken back (unpush, rollback) gives its number back.
 *
 * What ends a watch for the caller (its IN_IGNORED, a tree's LOST error)
 * is queued past the bound: the room is reserved in that there is at
 * most one of each per registration.  Without memory for it, the
 * registration is kept (no member, no kernel watch, its id taken) and
 * owes it; inofd__q_owed() tries again at every read.  The caller's data
 * is never left without its IN_IGNORED.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "queue.h"
#include "table.h"

/* Blocks kept allocated across reads; more are freed when the queue
 * empties (a burst does not pin its memory). */
#define QKEEP	64

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

/* i: the event's index (its sequence number follows) */
static void init(struct inofd *in, struct inofd_event *ev, int type, size_t i)
{
	memset(ev, 0, sizeof(*ev));
	ev->seq = in->qseq + i + 1;
	ev->type = type;
	ev->wd = -1;
	ev->from_wd = -1;
}

struct inofd_event *inofd__q_push(struct inofd *in, int type)
{
	struct inofd_event *ev;

	if (!inofd__q_room(in) && !in->qpast) {
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
		init(in, ev, type, in->qtail - 1);
	return ev;
}

struct inofd_event *inofd__q_push_end(struct inofd *in, int type)
{
	struct inofd_event *ev;

	in->qpast = true;
	ev = inofd__q_push(in, type);
	in->qpast = false;
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
	init(in, ev, INOFD_EV_RESCAN, in->qtail - 1);
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
	size_t i;

	if (head(in) != in->qtail)
		return false;
	for (i = QKEEP; i < in->nqblk && in->qblk[i]; i++) {
		free(in->qblk[i]);
		in->qblk[i] = NULL;
	}
	in->qseq += in->qtail;
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

void inofd__q_lost(struct inofd *in, struct inofd__reg *r)
{
	struct inofd_event *ev = inofd__q_push_end(in, INOFD_EV_ERROR);

	if (!ev) {
		if (!r->owe_lost && !r->owe_end)
			in->nowed++;
		r->owe_lost = true;
		return;
	}
	if (r->owe_lost && !r->owe_end)
		in->nowed--;
	r->owe_lost = false;
	ev->wd = r->id;
	ev->data = r->data;
	ev->error = -ESTALE;
	ev->flags = INOFD_EVF_LOST;
	if (r->root) {
		ev->ino = (uint64_t)r->root->kw->ino;
		ev->dev = (uint64_t)r->root->kw->dev;
	}
}

void inofd__q_owe_end(struct inofd *in, struct inofd__reg *r,
		      unsigned int flags)
{
	if (!r->owe_lost && !r->owe_end)
		in->nowed++;
	r->owe_end = true;
	r->owe_flags = flags;
	/* nothing of it is left to walk, crawl or report on */
	r->kind = INOFD__REG_PLAIN;
	r->root = NULL;
	r->plink = NULL;
	r->crawl_left = 0;
}

/* The IN_IGNORED r owes; false if it still cannot be queued. */
static bool end_owed(struct inofd *in, struct inofd__reg *r)
{
	struct inofd_event *ev = inofd__q_push_end(in, INOFD_EV_INOTIFY);

	if (!ev)
		return false;
	ev->wd = r->id;
	ev->data = r->data;
	ev->mask = IN_IGNORED;
	ev->flags = r->owe_flags | (r->stale ? INOFD_EVF_STALE_PATH : 0);
	/* its path if memory allows: NULL is "not known", never wrong */
	if (r->path && !r->lost && !r->moving)
		ev->path = inofd__arena_join(&in->arena, r->path,
					     strlen(r->path), NULL);
	return true;
}

void inofd__q_owed(struct inofd *in)
{
	unsigned int i;

	for (i = 0; in->nowed && i < in->regsize; i++) {
		struct inofd__reg *r, *next;

		for (r = in->regtab[i]; r; r = next) {
			next = r->hnext;
			if (r->owe_lost) {
				inofd__q_lost(in, r);
				if (r->owe_lost)
					return;		/* still no memory */
			}
			if (!r->owe_end)
				continue;
			if (!end_owed(in, r))
				return;
			in->nowed--;
			inofd__reg_free(in, r);
		}
	}
}
