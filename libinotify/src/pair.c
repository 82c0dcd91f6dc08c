// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Emitting events and coalescing windows.
 *
 * A coalescing window waits on its member, in a list ordered by deadline
 * (every window gets the same timeout, so appending keeps the order).  It
 * holds back no other event: only ready events enter the queue.  Nothing
 * here is O(queue).  Rename halves wait in rename.c.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pair.h"

uint64_t inofd__now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bool inofd__wants(const struct inofd__mem *m, uint32_t mask)
{
	if (m->kind == INOFD__MEM_PARENT)
		return false;
	return (mask & m->reg->mask & IN_ALL_EVENTS) ||
	       (mask & INOFD__ALWAYS_BITS);
}

/*
 * Was the record being applied queued before m's registration was made?
 * Then it is not the registration's (a kernel watch it shares with older
 * ones): only what ends it (IN_UNMOUNT, IN_IGNORED) reaches it.
 */
static bool unborn(const struct inofd *in, const struct inofd__mem *m,
		   uint32_t mask)
{
	return in->at_rec && m->reg->born > in->cur_pos &&
	       !(mask & (IN_UNMOUNT | IN_IGNORED));
}

/*
 * Is the path an event on m gets maybe stale?  A mount change not acted on
 * yet (reg->mstale, not reg->unsure) flags a path, never an event that has
 * none (given: the path is full).
 */
static bool stale_path(struct inofd *in, struct inofd__mem *m, bool given,
		       const char *full)
{
	size_t dl;

	if (m->reg->kind == INOFD__REG_PLAIN && m->reg->stale)
		return true;
	if (!inofd__mem_unsure(m))
		return false;
	return m->reg->unsure ||
	       (given ? full != NULL : inofd__mem_path(in, m, &dl) != NULL);
}

static struct inofd_event *push_at(struct inofd *in, struct inofd__mem *m,
				   int type, const char *name, bool copy,
				   bool given, const char *full)
{
	struct inofd_event *ev;
	const char *dir;
	size_t dl = 0;

	ev = inofd__q_push(in, type);
	if (!ev)
		return NULL;
	ev->wd = m->reg->id;
	ev->data = m->reg->data;
	ev->ino = (uint64_t)m->kw->ino;
	ev->dev = (uint64_t)m->kw->dev;
	if (stale_path(in, m, given, full))
		ev->flags |= INOFD_EVF_STALE_PATH;
	if (given) {
		dir = full;
		dl = full ? strlen(full) : 0;
		if (dir) {
			ev->path = inofd__arena_join(&in->arena, dir, dl, NULL);
			if (!ev->path)
				goto oom;
		}
	} else if ((dir = inofd__mem_path(in, m, &dl))) {
		/* one copy: the path, whose last component is the name */
		size_t nl = name ? strlen(name) : 0;
		char *p = inofd__arena_alloc(&in->arena, dl + nl + 2);

		if (!p)
			goto oom;
		memcpy(p, dir, dl);
		if (name) {
			if (!dl || dir[dl - 1] != '/')
				p[dl++] = '/';
			memcpy(p + dl, name, nl + 1);
			name = p + dl;
		} else {
			p[dl] = '\0';
		}
		ev->path = p;
		ev->name = name;
		return ev;
	}
	if (name && (copy || given)) {
		size_t nl = strlen(name) + 1;
		char *p = inofd__arena_alloc(&in->arena, nl);

		if (!p)
			goto oom;
		memcpy(p, name, nl);
		name = p;
	} else if (name && ev->path && !given) {
		/* the name is the path's last component */
		name = ev->path + strlen(ev->path) - strlen(name);
	}
	ev->name = name;
	return ev;
oom:
	/* lost like in an overflow, and said so the same way */
	inofd__q_unpush(in);
	in->rescan_due = true;
	return NULL;
}

static struct inofd_event *push_on(struct inofd *in, struct inofd__mem *m,
				   int type, const char *name, bool copy)
{
	return push_at(in, m, type, name, copy, false, NULL);
}

struct inofd_event *inofd__emit_path(struct inofd *in, struct inofd__mem *m,
				     int type, const struct inofd__raw *e,
				     const char *path)
{
	struct inofd_event *ev;

	if (!inofd__wants(m, e->mask) || unborn(in, m, e->mask))
		return NULL;
	inofd__win_close(in, m);
	ev = push_at(in, m, type, e->name, true, true, path);
	if (!ev)
		return NULL;
	ev->mask = e->mask;
	ev->cookie = e->cookie;
	if (m->reg->oneshot) {
		m->reg->mask = 0;
		m->reg->fired = true;
	}
	return ev;
}

static void win_unlink(struct inofd *in, struct inofd__mem *m)
{
	if (m->win_prev)
		m->win_prev->win_next = m->win_next;
	else
		in->wfirst = m->win_next;
	if (m->win_next)
		m->win_next->win_prev = m->win_prev;
	else
		in->wlast = m->win_prev;
	m->win_prev = m->win_next = NULL;
	m->win_open = false;
}

void inofd__win_close(struct inofd *in, struct inofd__mem *m)
{
	struct inofd_event *ev;
	uint32_t mask;

	if (!m->win_open)
		return;
	mask = m->win_mask;
	win_unlink(in, m);
	m->win_mask = 0;
	ev = push_on(in, m, INOFD_EV_CHANGED, NULL, false);
	if (ev)
		ev->mask = mask;
}

void inofd__win_expire(struct inofd *in, uint64_t now)
{
	while (in->wfirst && in->wfirst->win_deadline <= now)
		inofd__win_close(in, in->wfirst);
}

static void fold(struct inofd *in, struct inofd__mem *m, uint32_t mask)
{
	if (!m->win_open) {
		m->win_open = true;
		m->win_deadline = inofd__now_ns() +
				  (uint64_t)in->coalesce_ms * 1000000u;
		m->win_prev = in->wlast;
		m->win_next = NULL;
		if (in->wlast)
			in->wlast->win_next = m;
		else
			in->wfirst = m;
		in->wlast = m;
	}
	m->win_mask |= mask;
}

struct inofd_event *inofd__emit(struct inofd *in, struct inofd__mem *m,
				int type, const struct inofd__raw *e,
				unsigned int flags)
{
	struct inofd_event *ev;

	if (!inofd__wants(m, e->mask) || unborn(in, m, e->mask))
		return NULL;
	if (in->coalesce_ms && !(e->mask & INOFD__ALWAYS_BITS) &&
	    type != INOFD_EV_ERROR) {
		fold(in, m, e->mask);
		return NULL;
	}
	/* IN_UNMOUNT and IN_IGNORED end a window early: they come after it */
	inofd__win_close(in, m);
	ev = push_on(in, m, type, e->name, flags & INOFD__COPY_NAME);
	if (!ev)
		return NULL;
	ev->mask = e->mask;
	ev->cookie = e->cookie;
	ev->flags |= flags & ~INOFD__COPY_NAME;
	if (m->reg->oneshot && !(e->mask & IN_IGNORED)) {
		m->reg->mask = 0;	/* fired: the dispatcher ends it */
		m->reg->fired = true;
	}
	return ev;
}

void inofd__error(struct inofd *in, struct inofd__mem *m, const char *name,
		  int err)
{
	struct inofd_event *ev;

	if (m->kind == INOFD__MEM_PARENT)
		m = m->reg->root;
	ev = push_on(in, m, INOFD_EV_ERROR, name, true);
	if (ev)
		ev->error = err;
}

void inofd__set_from(struct inofd *in, struct inofd_event *ev,
		     struct inofd__mem *m, const char *name, const char *path)
{
	const char *dir = path;

	ev->from_wd = m->reg->id;
	ev->from_data = m->reg->data;
	ev->from_path = dir ? inofd__arena_join(&in->arena, dir, strlen(dir),
						NULL) : NULL;
	ev->from_name = NULL;
	if (name) {
		size_t nl = strlen(name) + 1;
		char *p = inofd__arena_alloc(&in->arena, nl);

		if (p)
			memcpy(p, name, nl);
		ev->from_name = p;
	}
	if ((dir && !ev->from_path) || (name && !ev->from_name))
		in->rescan_due = true;
}

void inofd__reg_end(struct inofd *in, struct inofd__reg *r, bool report,
		    unsigned int flags)
{
	struct inofd__mem *root = r->root;
	bool owed = false;

	if (report && root) {
		inofd__win_close(in, root);
		/* a LOST not told yet comes first */
		if (r->owe_lost)
			inofd__q_lost(in, r);
		/* IN_IGNORED: wants() is true whatever the mask; past the
		 * queue's bound (queue.c): an end is never dropped */
		r->oneshot = false;
		in->qpast = true;
		owed = r->owe_lost ||
		       !inofd__emit(in, root, INOFD_EV_INOTIFY,
				    &(struct inofd__raw){ IN_IGNORED, 0, NULL },
				    flags);
		in->qpast = false;
	}
	if (r->plink) {
		struct inofd__kw *kw = r->plink->kw;

		inofd__mem_free(in, r->plink);
		inofd__kw_put(in, kw, true);
	}
	inofd__anc_drop(in, r);
	if (root)
		inofd__subtree_free(in, root);
	if (owed)
		inofd__q_owe_end(in, r, flags);	/* told at the next read */
	else
		inofd__reg_free(in, r);
}

void inofd__end_fired(struct inofd *in, int wd)
{
	for (;;) {
		struct inofd__kw *kw = inofd__kw_find(in, wd);
		struct inofd__mem *m;

		for (m = kw ? kw->mems : NULL; m && !m->reg->fired; m = m->kwnext)
			;
		if (!m)
			return;
		inofd__reg_end(in, m->reg, true, INOFD_EVF_SYNTHETIC);
	}
}

/* A tree node's end, told as the kernel tells a watch's: past the bound. */
static void member_end(struct inofd *in, struct inofd__mem *m,
		       unsigned int flags)
{
	struct inofd_event *ev;

	inofd__win_close(in, m);
	in->qpast = true;
	ev = push_on(in, m, INOFD_EV_INOTIFY, NULL, false);
	in->qpast = false;
	if (ev) {
		ev->mask = IN_IGNORED;
		ev->flags |= INOFD_EVF_MEMBER | flags;
	}
}

void inofd__subtree_end(struct inofd *in, struct inofd__mem *m,
			unsigned int flags)
{
	struct inofd__mem *top = m;
	bool tell = (m->reg->tflags & INOFD_TREE_MEMBER_ENDS) &&
		    m != m->reg->root;

	/* it leaves from where the record named it: its path is that one */
	if (m->moving) {
		m->moving = false;
		inofd__paths_changed(in);
	}
	/* post-order without recursion: a deep tree needs no stack; a
	 * node's path is built while the nodes above it are still there */
	for (;;) {
		struct inofd__mem *parent;
		struct inofd__kw *kw;

		while (m->child)
			m = m->child;
		parent = m == top ? NULL : m->parent;
		if (tell)
			member_end(in, m, m == top ? flags :
					  INOFD_EVF_SYNTHETIC);
		kw = m->kw;
		inofd__mem_free(in, m);
		inofd__kw_put(in, kw, true);
		if (!parent)
			return;
		m = parent;
	}
}

void inofd__subtree_free(struct inofd *in, struct inofd__mem *m)
{
	inofd__subtree_end(in, m, INOFD_EVF_SYNTHETIC);
}

