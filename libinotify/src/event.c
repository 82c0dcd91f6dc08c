// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading, rename pairing, coalescing and overflow recovery.
 *
 * Every kernel event becomes a queue entry, in kernel order.  An entry is
 * handed out by inofd_next() once it is Q_READY and every entry before it
 * has been handed out, so the caller sees events in the order the kernel
 * queued them even when an IN_MOVED_FROM waits for its IN_MOVED_TO.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static void q_strings(struct qent *q)
{
	q->ev.name = q->s_name;
	q->ev.path = q->s_path;
	q->ev.from_name = q->s_from_name;
	q->ev.from_path = q->s_from_path;
}

static void q_set_target(struct qent *q, struct watch *w, const char *name)
{
	char *wp = w ? watch_path(w) : NULL;

	q->ev.wd = w ? w->wd : -1;
	q->ev.data = w ? w->data : NULL;
	q->s_name = name ? strdup(name) : NULL;
	q->s_path = join_path(wp, name);
	free(wp);
}

struct qent *q_push(struct inofd *in, int type, struct watch *w, uint32_t mask,
		    uint32_t cookie, const char *name, unsigned int flags)
{
	struct qent *q = calloc(1, sizeof(*q));

	/*
	 * Out of memory: the event is lost like in an overflow.  Callers
	 * check for NULL only where they need the entry.
	 */
	if (!q)
		return NULL;
	q->ev.type = type;
	q->ev.mask = mask;
	q->ev.cookie = cookie;
	q->ev.flags = flags;
	q->ev.from_wd = -1;
	q_set_target(q, w, name);
	q_strings(q);
	q->state = Q_READY;
	q->deliver = true;
	if (in->qtail)
		in->qtail->next = q;
	else
		in->qhead = q;
	in->qtail = q;
	return q;
}

/* Drop every entry queued after mark (NULL: all). */
void q_truncate(struct inofd *in, struct qent *mark)
{
	struct qent *q = mark ? mark->next : in->qhead, *next;

	for (; q; q = next) {
		next = q->next;
		q_free(q);
	}
	if (mark)
		mark->next = NULL;
	else
		in->qhead = NULL;
	in->qtail = mark;
}

void q_free(struct qent *q)
{
	free(q->s_name);
	free(q->s_path);
	free(q->s_from_name);
	free(q->s_from_path);
	free(q);
}

void report_error(struct inofd *in, struct watch *w, const char *name, int err)
{
	struct qent *q = q_push(in, INOFD_EV_ERROR, w, 0, 0, name, 0);

	if (q)
		q->ev.error = err;
}

static bool wants(const struct watch *w, uint32_t mask)
{
	return (mask & w->user_mask & IN_ALL_EVENTS) || (mask & ALWAYS_BITS);
}

/* Coalescing: fold mask into the watch's open INOFD_EV_CHANGED entry. */
static void mark_changed(struct inofd *in, struct watch *w, uint32_t mask)
{
	struct qent *q;

	if (w->changed) {
		w->changed->ev.mask |= mask;
		return;
	}
	q = q_push(in, INOFD_EV_CHANGED, w, mask, 0, NULL, 0);
	if (!q)
		return;
	q->state = Q_CHANGED;
	q->deadline = now_ns() + (uint64_t)in->coalesce_ms * 1000000u;
	w->changed = q;
}

static void flush_changed(struct watch *w)
{
	if (w->changed) {
		w->changed->state = Q_READY;
		w->changed = NULL;
	}
}

/*
 * Report one event on w, honouring the watch mask and coalescing.  Used
 * for kernel events and for the library's synthetic ones.
 */
static void emit(struct inofd *in, struct watch *w, uint32_t mask,
		 uint32_t cookie, const char *name, unsigned int flags)
{
	if (!wants(w, mask))
		return;
	if (in->coalesce_ms && !(mask & ALWAYS_BITS)) {
		mark_changed(in, w, mask);
		return;
	}
	/* IN_UNMOUNT/IN_IGNORED end a window early, so they come after it */
	flush_changed(w);
	q_push(in, INOFD_EV_INOTIFY, w, mask, cookie, name, flags);
}

void emit_synthetic(struct inofd *in, struct watch *w, uint32_t mask,
		    const char *name)
{
	emit(in, w, mask, 0, name, INOFD_EVF_SYNTHETIC);
}

static struct qent *find_from(struct inofd *in, uint32_t cookie)
{
	struct qent *q;

	for (q = in->qhead; q; q = q->next)
		if (q->state == Q_FROM && q->ev.cookie == cookie)
			return q;
	return NULL;
}

/* An IN_MOVED_FROM whose other half will not come. */
static void resolve_move_out(struct inofd *in, struct qent *q, bool bookkeep)
{
	q->state = Q_READY;
	if (!(in->flags & INOFD_RAW_MOVES))
		q->ev.type = INOFD_EV_MOVE_OUT;
	if (bookkeep && (q->ev.mask & IN_ISDIR))
		tree_moved_out(in, q->ev.wd, q->s_name);
}

static void moved_to(struct inofd *in, struct watch *w, uint32_t mask,
		     uint32_t cookie, const char *name)
{
	struct qent *q = find_from(in, cookie);
	bool want = wants(w, mask) && !in->coalesce_ms;

	if (in->coalesce_ms && wants(w, mask))
		mark_changed(in, w, mask);

	if (!q) {
		struct qent *n;

		/* from outside anything this instance watches */
		n = q_push(in, (in->flags & INOFD_RAW_MOVES) ?
			   INOFD_EV_INOTIFY : INOFD_EV_MOVE_IN,
			   w, mask, cookie, name, 0);
		if (n)
			n->deliver = want;
		if ((mask & IN_ISDIR) && w->tree)
			tree_event(in, w, mask, name);
		return;
	}

	if (mask & IN_ISDIR)
		tree_moved(in, q->ev.wd, q->s_name, w, name);

	q->state = Q_READY;
	if (in->flags & INOFD_RAW_MOVES) {
		struct qent *n = q_push(in, INOFD_EV_INOTIFY, w, mask, cookie,
					name, 0);
		if (n)
			n->deliver = want;
		return;
	}
	/* one rename: the source side moves to from_*, w is the target */
	q->ev.type = INOFD_EV_RENAME;
	q->ev.mask = IN_MOVE | (mask & IN_ISDIR);
	q->ev.from_wd = q->ev.wd;
	q->ev.from_data = q->ev.data;
	q->s_from_name = q->s_name;
	q->s_from_path = q->s_path;
	q_set_target(q, w, name);
	q_strings(q);
	q->deliver = q->deliver || want;
}

/* IN_Q_OVERFLOW: close what is open, report, then repair the table. */
static void overflow(struct inofd *in);

static void process(struct inofd *in, int wd, uint32_t mask, uint32_t cookie,
		    const char *name)
{
	struct watch *w;

	if (mask & IN_Q_OVERFLOW) {
		overflow(in);
		return;
	}
	w = watch_lookup(in, wd);
	if (!w)
		return;		/* removed by the library: nothing to report */
	if (mask & IN_IGNORED) {
		emit(in, w, mask, 0, NULL, 0);
		forget_watch(in, w);
		return;
	}
	if (w->removing)
		return;		/* the caller asked to stop hearing about it */

	if ((mask & IN_ISDIR) && w->tree &&
	    (mask & (IN_OPEN | IN_ACCESS | IN_CLOSE_NOWRITE))) {
		struct watch *s = name ? find_child(w, name) : w;

		if (s && own_noise(s, mask, name != NULL))
			return;
	}
	if (mask & IN_MOVED_FROM) {
		struct qent *q = q_push(in, INOFD_EV_INOTIFY, w, mask, cookie,
					name, 0);

		if (q) {
			q->state = Q_FROM;
			q->deadline = now_ns() +
				      (uint64_t)in->pair_ms * 1000000u;
			q->deliver = wants(w, mask) && !in->coalesce_ms;
		}
		if (in->coalesce_ms && wants(w, mask))
			mark_changed(in, w, mask);
		return;
	}
	if (mask & IN_MOVED_TO) {
		moved_to(in, w, mask, cookie, name);
		return;
	}
	emit(in, w, mask, cookie, name, 0);
	if ((mask & (IN_CREATE | IN_ISDIR)) == (IN_CREATE | IN_ISDIR) &&
	    w->tree && name)
		tree_event(in, w, mask, name);
}

/* The wds the kernel still has for this instance, from fdinfo; NULL if unknown. */
static int *live_wds(struct inofd *in, size_t *n)
{
	char p[64], line[512];
	size_t cap = 0;
	int *v = NULL;
	FILE *f;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", in->ifd);
	f = fopen(p, "re");
	if (!f)
		return NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned int wd;

		if (sscanf(line, "inotify wd:%x", &wd) != 1)
			continue;
		if (*n == cap) {
			int *nv;

			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				fclose(f);
				return NULL;
			}
			v = nv;
		}
		v[(*n)++] = (int)wd;
	}
	fclose(f);
	if (!v)
		v = malloc(sizeof(*v));		/* none live: empty set */
	return v;
}

static bool in_set(const int *v, size_t n, int wd)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i] == wd)
			return true;
	return false;
}

static void overflow(struct inofd *in)
{
	struct watch **dead = NULL;
	size_t nlive = 0, ndead = 0, i;
	struct qent *q;
	int *live;

	/*
	 * Pending halves and windows are closed as they are: the events that
	 * would complete them may be among the lost ones.  The tree walk below
	 * puts directories where they really are.
	 */
	for (q = in->qhead; q; q = q->next) {
		if (q->state == Q_FROM)
			resolve_move_out(in, q, false);
	}
	for (i = 0; i < in->hsize; i++) {
		struct watch *w;

		for (w = in->htab[i]; w; w = w->hnext) {
			flush_changed(w);
			/* the listing's own events may be among the lost */
			w->self_open = w->self_access = w->self_close = 0;
			w->par_open = w->par_access = w->par_close = 0;
		}
	}
	q_push(in, INOFD_EV_RESCAN, NULL, IN_Q_OVERFLOW, 0, NULL, 0);

	/* lost IN_IGNORED events leave stale entries: ask the kernel */
	live = live_wds(in, &nlive);
	if (live && in->nwatches > 0) {
		dead = calloc((size_t)in->nwatches, sizeof(*dead));
		for (i = 0; dead && i < in->hsize; i++) {
			struct watch *w;

			for (w = in->htab[i]; w; w = w->hnext)
				if (!in_set(live, nlive, w->wd))
					dead[ndead++] = w;
		}
		/* report while every path can still be built */
		for (i = 0; i < ndead; i++)
			q_push(in, INOFD_EV_INOTIFY, dead[i], IN_IGNORED, 0,
			       NULL, INOFD_EVF_SYNTHETIC);
		for (i = 0; i < ndead; i++)
			orphan_children(dead[i]);
		for (i = 0; i < ndead; i++)
			watch_free(in, dead[i]);
		free(dead);
	}
	free(live);
	tree_rescan(in);
}

static void expire(struct inofd *in, uint64_t now)
{
	struct qent *q;

	for (q = in->qhead; q; q = q->next) {
		if (q->state == Q_READY || q->deadline > now)
			continue;
		if (q->state == Q_FROM) {
			resolve_move_out(in, q, true);
		} else {
			struct watch *w = watch_lookup(in, q->ev.wd);

			if (w && w->changed == q)
				w->changed = NULL;
			q->state = Q_READY;
		}
	}
}

static void free_done(struct inofd *in)
{
	struct qent *q, *next;

	for (q = in->done; q; q = next) {
		next = q->next;
		q_free(q);
	}
	in->done = NULL;
}

/* Entries ready to hand out, and the first one that is not (or NULL). */
static int count_ready(const struct inofd *in, const struct qent **blocker)
{
	const struct qent *q;
	int n = 0;

	for (q = in->qhead; q && q->state == Q_READY; q = q->next)
		n += q->deliver;
	*blocker = q;
	return n;
}

int inofd_read(struct inofd *in)
{
	const struct qent *b;
	ssize_t n;
	char *p;

	if (!in)
		return -EINVAL;
	free_done(in);
	n = read(in->ifd, in->buf, in->bufsz);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		n = 0;
	}
	for (p = in->buf; p < in->buf + n;) {
		struct inotify_event *e = (struct inotify_event *)p;

		process(in, e->wd, e->mask, e->cookie,
			(e->len && e->name[0]) ? e->name : NULL);
		p += sizeof(*e) + e->len;
	}
	expire(in, now_ns());
	return count_ready(in, &b);
}

int inofd_next(struct inofd *in, const struct inofd_event **ev)
{
	struct qent *q;

	if (!in || !ev)
		return -EINVAL;
	*ev = NULL;
	while ((q = in->qhead) && q->state == Q_READY) {
		in->qhead = q->next;
		if (!in->qhead)
			in->qtail = NULL;
		if (!q->deliver) {
			q_free(q);
			continue;
		}
		q->next = in->done;
		in->done = q;
		*ev = &q->ev;
		return 1;
	}
	return 0;
}

int inofd_timeout(const struct inofd *in)
{
	const struct qent *b;
	uint64_t now;

	if (!in)
		return -EINVAL;
	if (count_ready(in, &b) > 0)
		return 0;
	if (!b)
		return -1;
	now = now_ns();
	if (b->deadline <= now)
		return 0;
	/* round up: waking early would only spin */
	return (int)((b->deadline - now + 999999u) / 1000000u);
}
