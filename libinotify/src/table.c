// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The watch table: kernel watches by wd, registrations by id, and the
 * members that tie a registration to a kernel watch (one for a plain
 * watch, one per directory for a tree).  A kernel watch may carry members
 * of several registrations; each keeps its own mask and data.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>

#include "backend.h"
#include "pool.h"
#include "table.h"

/* in->wd_dir_path: kernel watch wd's directory's path, as a member has it */
static const char *wd_dir_path(struct inofd *in, int wd)
{
	struct inofd__kw *kw = inofd__kw_find(in, wd);
	struct inofd__mem *m;
	const char *p = NULL;
	size_t len;

	for (m = kw ? kw->mems : NULL; m && !p; m = m->kwnext)
		p = inofd__mem_path(in, m, &len);
	return p;
}

int inofd__table_init(struct inofd *in)
{
	in->wd_dir_path = wd_dir_path;
	inofd__pool_init(&in->kwpool, sizeof(struct inofd__kw));
	inofd__pool_init(&in->mempool, sizeof(struct inofd__mem));
	in->kwsize = 64;
	in->regsize = 64;
	in->kwtab = calloc(in->kwsize, sizeof(*in->kwtab));
	in->regtab = calloc(in->regsize, sizeof(*in->regtab));
	in->next_id = 1;
	in->epoch = 1;
	return in->kwtab && in->regtab ? 0 : -ENOMEM;
}

static unsigned int slot(int key, unsigned int size)
{
	return ((unsigned int)key * 2654435761u) & (size - 1);
}

struct inofd__kw *inofd__kw_find(const struct inofd *in, int wd)
{
	struct inofd__kw *kw;

	if (wd < 0)
		return NULL;
	for (kw = in->kwtab[slot(wd, in->kwsize)]; kw; kw = kw->hnext)
		if (kw->wd == wd)
			return kw;
	return NULL;
}

static void kw_grow(struct inofd *in)
{
	unsigned int n = in->kwsize * 2, i;
	struct inofd__kw **t = calloc(n, sizeof(*t)), *kw, *next;

	if (!t)
		return;		/* longer chains, still correct */
	for (i = 0; i < in->kwsize; i++)
		for (kw = in->kwtab[i]; kw; kw = next) {
			next = kw->hnext;
			kw->hnext = t[slot(kw->wd, n)];
			t[slot(kw->wd, n)] = kw;
		}
	free(in->kwtab);
	in->kwtab = t;
	in->kwsize = n;
}

struct inofd__kw *inofd__kw_get(struct inofd *in, int wd, dev_t dev,
				ino_t ino)
{
	struct inofd__kw *kw = inofd__kw_find(in, wd);
	unsigned int s;

	if (kw)
		return kw;
	kw = inofd__pool_get(&in->kwpool);
	if (!kw)
		return NULL;
	if (in->nkw >= in->kwsize)
		kw_grow(in);
	kw->wd = wd;
	kw->dev = dev;
	kw->ino = ino;
	s = slot(wd, in->kwsize);
	kw->hnext = in->kwtab[s];
	in->kwtab[s] = kw;
	in->nkw++;
	return kw;
}

void inofd__kw_put(struct inofd *in, struct inofd__kw *kw, bool rm)
{
	struct inofd__kw **pp;

	if (kw->mems)
		return;
	if (in->kwhot == kw)
		in->kwhot = NULL;
	for (pp = &in->kwtab[slot(kw->wd, in->kwsize)]; *pp; pp = &(*pp)->hnext)
		if (*pp == kw) {
			*pp = kw->hnext;
			break;
		}
	in->nkw--;
	if (rm) {
		/*
		 * Its IN_IGNORED is queued by the kernel, finds no entry and
		 * is dropped: the caller's IN_IGNORED comes from the library.
		 */
		inofd__backend_rm(in, kw->wd);
	}
	inofd__pool_put(&in->kwpool, kw);
}

struct inofd__reg *inofd__reg_find(const struct inofd *in, int id)
{
	struct inofd__reg *r;

	if (id <= 0)
		return NULL;
	for (r = in->regtab[slot(id, in->regsize)]; r; r = r->hnext)
		if (r->id == id)
			return r;
	return NULL;
}

static void reg_grow(struct inofd *in)
{
	unsigned int n = in->regsize * 2, i;
	struct inofd__reg **t = calloc(n, sizeof(*t)), *r, *next;

	if (!t)
		return;
	for (i = 0; i < in->regsize; i++)
		for (r = in->regtab[i]; r; r = next) {
			next = r->hnext;
			r->hnext = t[slot(r->id, n)];
			t[slot(r->id, n)] = r;
		}
	free(in->regtab);
	in->regtab = t;
	in->regsize = n;
}

struct inofd__reg *inofd__reg_new(struct inofd *in, int kind)
{
	struct inofd__reg *r = calloc(1, sizeof(*r));
	unsigned int s;

	if (!r)
		return NULL;
	if (in->nreg >= in->regsize)
		reg_grow(in);
	/* ids are not reused until they wrap: a late event never meets a
	 * newer registration under an old id */
	do {
		r->id = in->next_id;
		in->next_id = in->next_id == 0x7fffffff ? 1 : in->next_id + 1;
	} while (inofd__reg_find(in, r->id));
	r->kind = kind;
	s = slot(r->id, in->regsize);
	r->hnext = in->regtab[s];
	in->regtab[s] = r;
	in->nreg++;
	return r;
}

void inofd__reg_free(struct inofd *in, struct inofd__reg *r)
{
	struct inofd__reg **pp;
	char **e;

	for (pp = &in->regtab[slot(r->id, in->regsize)]; *pp; pp = &(*pp)->hnext)
		if (*pp == r) {
			*pp = r->hnext;
			break;
		}
	in->nreg--;
	for (e = r->exclude; e && *e; e++)
		free(*e);
	free(r->exclude);
	free(r->path);
	free(r->rootname);
	free(r->anc);
	free(r->anc_id);
	while (r->nmmark)
		free(r->mmark[--r->nmmark].name);
	free(r->mmark);
	free(r);
}

void inofd__anc_drop(struct inofd *in, struct inofd__reg *r)
{
	unsigned int i;

	for (i = 0; i < r->nanc; i++) {
		struct inofd__mem *m = r->anc[i];
		struct inofd__kw *kw;

		if (!m)
			continue;
		kw = m->kw;
		inofd__mem_free(in, m);
		inofd__kw_put(in, kw, true);
	}
	free(r->anc);
	free(r->anc_id);
	r->anc = NULL;
	r->anc_id = NULL;
	r->nanc = 0;
}

struct inofd__mem *inofd__mem_new(struct inofd *in, struct inofd__reg *r,
				  struct inofd__kw *kw, int kind)
{
	struct inofd__mem *m = inofd__pool_get(&in->mempool);

	if (!m)
		return NULL;
	m->kw = kw;
	m->reg = r;
	m->kind = kind;
	m->kwnext = kw->mems;
	kw->mems = m;
	if (kind != INOFD__MEM_PARENT && kw->nuser++ == 0)
		in->nuser++;
	return m;
}

struct inofd__mem *inofd__mem_of(const struct inofd__kw *kw,
				 const struct inofd__reg *r)
{
	struct inofd__mem *m;

	for (m = kw->mems; m; m = m->kwnext)
		if (m->reg == r && m->kind != INOFD__MEM_PARENT)
			return m;
	return NULL;
}

void inofd__node_link(struct inofd *in, struct inofd__mem *parent,
		      struct inofd__mem *m)
{
	struct inofd__mem *c;

	m->parent = parent;
	m->prev = NULL;
	m->next = parent->child;
	if (m->next)
		m->next->prev = m;
	parent->child = m;
	m->depth = parent->depth + 1;
	/* what moved with it is as deep as it now is: pre-order, no stack */
	for (c = m->child; c && c != m;) {
		c->depth = c->parent->depth + 1;
		if (c->child) {
			c = c->child;
			continue;
		}
		while (c != m && !c->next)
			c = c->parent;
		if (c != m)
			c = c->next;
	}
	inofd__paths_changed(in);
}

void inofd__node_unlink(struct inofd *in, struct inofd__mem *m)
{
	if (m->prev)
		m->prev->next = m->next;
	else if (m->parent)
		m->parent->child = m->next;
	if (m->next)
		m->next->prev = m->prev;
	m->parent = m->prev = m->next = NULL;
	inofd__paths_changed(in);
}

struct inofd__mem *inofd__node_child(const struct inofd__mem *m,
				     const char *name)
{
	struct inofd__mem *c;

	if (!name)
		return NULL;
	for (c = m->child; c; c = c->next)
		if (c->name && !c->shadow && !strcmp(c->name, name))
			return c;
	return NULL;
}

struct inofd__mem *inofd__node_src(const struct inofd__mem *m,
				   const char *name)
{
	struct inofd__mem *c;

	if (!name)
		return NULL;
	for (c = m->child; c; c = c->next)
		if (c->xpart && c->name && !strcmp(c->name, name))
			return c;
	return inofd__node_child(m, name);
}

bool inofd__node_below(const struct inofd__mem *a, const struct inofd__mem *m)
{
	for (; m; m = m->parent)
		if (m == a)
			return true;
	return false;
}

/*
 * Tree node m is about to go: a plain watch of the same kernel watch took
 * its path from m (build()), so what m knew becomes the plain watch's own
 * (one truth per object, issue 26): the path it has now, or, where m did
 * not know it (moving), its own path flagged maybe stale.  Not for a
 * plain watch whose path was taken after the record being applied (its
 * reg->seen: that path is newer).  Called while m's ancestors are still
 * linked.
 */
static void hand_over(struct inofd *in, struct inofd__mem *m)
{
	struct inofd__mem *n;
	const char *p;
	size_t len;
	char *dup;
	/* the stream position applied: the record at hand, or all read */
	uint64_t at = in->at_rec ? in->cur_pos :
		      in->kpos - (uint64_t)(in->rest_end - in->rest);

	for (n = m->kw->mems; n; n = n->kwnext) {
		/* its path taken after the record at hand: newer than
		 * what the tree knows at this record */
		if (n->kind != INOFD__MEM_PLAIN || n->reg->seen > at)
			continue;
		p = inofd__mem_path(in, n, &len);
		if (!p) {
			n->reg->stale = true;
			continue;
		}
		if (n->reg->path && !strcmp(n->reg->path, p))
			continue;
		dup = strdup(p);
		if (!dup) {
			n->reg->stale = true;
			continue;
		}
		free(n->reg->path);
		n->reg->path = dup;
		inofd__paths_changed(in);
	}
}

/* Free one member; tree children must be gone or unlinked already. */
void inofd__mem_free(struct inofd *in, struct inofd__mem *m)
{
	struct inofd__kw *kw = m->kw;
	struct inofd__mem **pp;

	if (m->kind == INOFD__MEM_NODE)
		hand_over(in, m);

	for (pp = &kw->mems; *pp; pp = &(*pp)->kwnext)
		if (*pp == m) {
			*pp = m->kwnext;
			break;
		}
	if (m->kind != INOFD__MEM_PARENT && --kw->nuser == 0)
		in->nuser--;
	if (m->parent)
		inofd__node_unlink(in, m);
	if (m->win_open) {
		if (m->win_prev)
			m->win_prev->win_next = m->win_next;
		else
			in->wfirst = m->win_next;
		if (m->win_next)
			m->win_next->win_prev = m->win_prev;
		else
			in->wlast = m->win_prev;
	}
	if (m->name != m->nbuf)
		free(m->name);
	free(m->pc);
	inofd__pool_put(&in->mempool, m);
}

int inofd__node_name(struct inofd__mem *m, const char *name)
{
	size_t n = strlen(name) + 1;
	char *p = n <= sizeof(m->nbuf) ? m->nbuf : malloc(n);
	char *old = m->name != m->nbuf ? m->name : NULL;

	if (!p)
		return -ENOMEM;
	memmove(p, name, n);	/* name may be m's own */
	m->name = p;
	free(old);
	return 0;
}

bool inofd__mem_unsure(const struct inofd__mem *m)
{
	const struct inofd__reg *r = m->reg;

	/* a plain watch takes no path from an unsure tree (table.c) */
	if (r->unsure)
		return true;
	if (!r->mstale)
		return false;
	/* a mount changed on m or above it, not acted on yet (mounts.c);
	 * the watches above the root: on the root or above it */
	if (m->kind != INOFD__MEM_NODE)
		m = r->root;
	for (; m; m = m->parent) {
		unsigned int i;

		if (m->mgen == r->mgen)
			return true;
		for (i = 0; i < r->nmmark && m->name; i++)
			if (r->mmark[i].dir == m->parent &&
			    !strcmp(r->mmark[i].name, m->name))
				return true;
	}
	return false;
}

void inofd__paths_changed(struct inofd *in)
{
	if (++in->epoch == 0)
		in->epoch = 1;
}

/*
 * Room for a cached path of n bytes with its NUL, in whole 16-byte blocks:
 * dispatch.c's fast path copies a path and its NUL by blocks.
 */
static bool pc_room(struct inofd__mem *m, size_t n)
{
	size_t cap = (n + 1 + 15) & ~(size_t)15;
	char *q;

	if (cap <= m->pccap)
		return true;
	q = realloc(m->pc, cap);
	if (!q)
		return false;
	m->pc = q;
	m->pccap = cap;
	return true;
}

static const char *memcpy_path(struct inofd__mem *m, const char *p,
			       size_t n, size_t *len)
{
	if (!pc_room(m, n))
		return NULL;
	memcpy(m->pc, p, n + 1);
	*len = n;
	return m->pc;
}

static const char *build(struct inofd *in, struct inofd__mem *m, size_t *len)
{
	const char *d = NULL;
	size_t dl = 0, nl, need;

	if (m->kind == INOFD__MEM_NODE && m->parent) {
		if (m->moving)
			return NULL;
		d = inofd__mem_path(in, m->parent, &dl);
		if (!d || !m->name)
			return NULL;
	} else if (m->reg->kind == INOFD__REG_TREE) {
		if (m != m->reg->root || m->reg->lost || m->reg->moving)
			return NULL;
		d = m->reg->path;
		dl = d ? strlen(d) : 0;
		if (!d)
			return NULL;
		nl = 0;
		goto copy;
	} else {
		struct inofd__mem *n;

		if (m->reg->lost)
			return NULL;	/* its end came late (inofd__late()) */
		/*
		 * Inside a tree, the tree knows where the object is at each
		 * record, unless it is unsure (a rename above its root not
		 * seen when it happened: its paths are flagged maybe stale,
		 * which a plain watch's path must never be) or lost: then
		 * the watch's own path, as outside any tree.
		 */
		for (n = m->kw->mems; n; n = n->kwnext)
			if (n->kind == INOFD__MEM_NODE && !inofd__mem_unsure(n) &&
			    !n->reg->lost)
				return inofd__mem_path(in, n, len) ?
				       memcpy_path(m, n->pc, *len, len) : NULL;
		d = m->reg->path;
		if (!d)
			return NULL;
		dl = strlen(d);
		nl = 0;
		goto copy;
	}
	nl = strlen(m->name) + 1;
copy:
	need = dl + nl + 1;
	if (!pc_room(m, need - 1))
		return NULL;
	memmove(m->pc, d, dl);
	if (nl) {
		if (dl && m->pc[dl - 1] == '/') {
			dl--;
			need--;
		}
		m->pc[dl] = '/';
		memcpy(m->pc + dl + 1, m->name, nl - 1);
	}
	m->pc[need - 1] = '\0';
	*len = need - 1;
	return m->pc;
}

const char *inofd__mem_path(struct inofd *in, struct inofd__mem *m,
			    size_t *len)
{
	const char *p;

	if (m->pcepoch == in->epoch) {
		*len = m->pclen;
		return m->pc_null ? NULL : m->pc;
	}
	errno = 0;
	p = build(in, m, len);
	if (!p && errno == ENOMEM)
		return NULL;	/* not known to be unknown: not cached */
	m->pcepoch = in->epoch;
	m->pc_null = !p;
	m->pclen = p ? *len : 0;
	/* an entry's name goes after a '/', unless the path ends in one */
	m->pcjoin = m->pclen + (!p || !m->pclen || p[m->pclen - 1] != '/');
	*len = m->pclen;
	return p;
}

void inofd__table_free(struct inofd *in)
{
	unsigned int i;

	for (i = 0; in->kwtab && i < in->kwsize; i++)
		while (in->kwtab[i]) {
			struct inofd__kw *kw = in->kwtab[i];

			while (kw->mems) {
				struct inofd__mem *m = kw->mems;

				while (m->child)
					inofd__node_unlink(in, m->child);
				inofd__mem_free(in, m);
			}
			inofd__kw_put(in, kw, false);
		}
	for (i = 0; in->regtab && i < in->regsize; i++)
		while (in->regtab[i])
			inofd__reg_free(in, in->regtab[i]);
	free(in->kwtab);
	free(in->regtab);
	inofd__pool_free(&in->kwpool);
	inofd__pool_free(&in->mempool);
}

int inofd__kwd_of(const struct inofd *in, dev_t dev, ino_t ino)
{
	unsigned int i;
	struct inofd__kw *kw;

	for (i = 0; i < in->kwsize; i++)
		for (kw = in->kwtab[i]; kw; kw = kw->hnext)
			if (kw->dev == dev && kw->ino == ino)
				return kw->wd;
	return -1;
}

/*
 * Tree r is unsure until the records the kernel held at stream offset at
 * are parsed (caught_up(), dispatch.c): its events are flagged
 * INOFD_EVF_STALE_PATH meanwhile.
 */
static void unsure_until(struct inofd *in, struct inofd__reg *r, uint64_t at)
{
	if (!r || r->kind != INOFD__REG_TREE || r->lost)
		return;
	r->unsure = true;
	in->unsure = true;
	if (at > in->sure_pos)
		in->sure_pos = at;
	inofd__paths_changed(in);
}

/*
 * After a loss (tree r unsure), its crawl put a directory the library
 * already watched where it is now, or ended (run_one()'s sweep): that is
 * the present.  The records queued before that step and not parsed yet
 * are from the past, and a rename among the lost (fanotify's rename back
 * that may hide a merged one, a kernel overflow) may have had the
 * directory elsewhere then: their events could be given a path that was
 * not true when they happened (a create under a directory renamed a -> b
 * -> a -> b, read as a -> b, b -> a, reported at b when it was made at
 * a).  The tree stays unsure, its events flagged INOFD_EVF_STALE_PATH,
 * until the records the kernel held at the step are parsed (settle(),
 * dispatch.c).  A directory watched for the first time needs none of
 * this: its watch takes only records queued after it was made.
 */
void inofd__placed_now(struct inofd *in, struct inofd__reg *r)
{
	if (r->unsure)	/* else no loss: the records in hand are in order */
		unsure_until(in, r, inofd__stream_now(in));
}

/*
 * A walk step of tree c->reg put node c (new, or already watched) where it
 * is now: at its parent's entry c->name.  The kernel may hold records
 * queued before that and not read yet; one of them may rename what had
 * that name then (read later, taken for c's), or rename c itself (c's
 * records before it were made at a place that is not c's now).  Only then
 * is the tree unsure; a walk whose waiting records rename none of what it
 * placed (a mkdir -p, a burst of directories moved in: the records that
 * wait are its own listing's opens and closes, the creates below) flags
 * nothing.  The step's end (inofd__placed_step()) says where the stream
 * ended, once for all it placed; inofd__placed_scan() looks at the
 * records up to there when they are read, before they are parsed.
 */
void inofd__placed_add(struct inofd *in, const struct inofd__mem *c)
{
	struct inofd__placed *p;

	if (!c->parent || !c->kw || !c->parent->kw)
		return;
	if (in->nplaced == in->placed_cap) {
		unsigned int cap = in->placed_cap ? in->placed_cap * 2 : 16;

		p = cap <= INOFD__PLACED_MAX ?
		    realloc(in->placed, cap * sizeof(*p)) : NULL;
		if (!p) {
			/* not told apart: the tree is unsure from here */
			in->placed_over = true;
			in->placed_tree = c->reg->id;
			return;
		}
		in->placed = p;
		in->placed_cap = cap;
	}
	p = &in->placed[in->nplaced++];
	p->reg = c->reg->id;
	p->wd = c->kw->wd;
	p->pwd = c->parent->kw->wd;
	p->at = UINT64_MAX;
	in->placed_open++;
}

/* A walk step ended: what it placed is judged by the records to here. */
void inofd__placed_step(struct inofd *in)
{
	uint64_t at;
	unsigned int i;

	if (!in->placed_open && !in->placed_over)
		return;
	at = inofd__stream_now(in);
	if (in->placed_over) {
		in->placed_over = false;
		unsure_until(in, inofd__reg_find(in, in->placed_tree), at);
	}
	i = in->nplaced - in->placed_open;
	in->placed_open = 0;
	if (at <= in->kpos) {
		in->nplaced = i;	/* nothing waits: the present is now */
		return;
	}
	for (; i < in->nplaced; i++)
		in->placed[i].at = at;
	if (at > in->placed_max)
		in->placed_max = at;
}

/* Does the record (wd, mask, name) at stream offset pos rename p's
 * directory, or out of or into its name? */
static bool placed_touched(struct inofd *in, const struct inofd__placed *p,
			   int wd, uint32_t mask, const char *name)
{
	struct inofd__reg *r;
	struct inofd__kw *kw;
	struct inofd__mem *c;

	if (mask & (IN_MOVE_SELF | INOFD__MOVED_ID))
		return p->wd == wd;
	if (p->pwd != wd || !name)
		return false;
	r = inofd__reg_find(in, p->reg);
	kw = inofd__kw_find(in, p->wd);
	c = r && kw ? inofd__mem_of(kw, r) : NULL;
	/* gone since: its name is its parent's again, as the records say */
	return c && c->parent && c->parent->kw->wd == wd && c->name &&
	       !strcmp(c->name, name);
}

/*
 * The records from b to end, at stream offset pos, are read and not
 * parsed yet: those queued before a walk placed a directory (up to its
 * placement's at) are looked at, once, for a rename that touches it
 * (placed_touched()); its tree is then unsure until they are parsed.
 * What the records in hand do not reach is not known: unsure too.
 */
void inofd__placed_scan(struct inofd *in, const char *b, const char *end,
			uint64_t pos)
{
	const uint32_t mv = IN_MOVED_FROM | IN_MOVED_TO | IN_MOVE_SELF |
			    INOFD__MOVED_ID;
	uint64_t top = pos + (uint64_t)(end - b);
	unsigned int i, n;

	if (!in->nplaced || in->placed_open || top <= in->placed_scan)
		return;
	if (in->placed_scan > pos) {
		b += in->placed_scan - pos;
		pos = in->placed_scan;
	}
	while (pos < in->placed_max &&
	       (size_t)(end - b) >= sizeof(struct inotify_event)) {
		struct inotify_event h;
		const char *name = b + sizeof(h);

		memcpy(&h, b, sizeof(h));
		if (h.len > (size_t)(end - name))
			break;
		if (h.mask & mv)
			for (i = 0; i < in->nplaced; i++) {
				struct inofd__placed *p = &in->placed[i];

				if (p->at > pos && p->reg &&
				    placed_touched(in, p, h.wd, h.mask,
						   h.len && name[0] ?
						   name : NULL)) {
					unsure_until(in, inofd__reg_find(in,
								p->reg), p->at);
					p->reg = 0;	/* said */
				}
			}
		b = name + h.len;
		pos += sizeof(h) + h.len;
	}
	in->placed_scan = pos;
	/* the placements judged, or to be judged by records not in hand */
	for (i = n = 0; i < in->nplaced; i++) {
		struct inofd__placed *p = &in->placed[i];

		if (!p->reg || p->at <= pos)
			continue;
		if (pos >= top) {
			/* the records in hand end before its at */
			unsure_until(in, inofd__reg_find(in, p->reg), p->at);
			continue;
		}
		in->placed[n++] = *p;
	}
	in->nplaced = n;
	if (!n)
		in->placed_max = 0;
}
