// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Recursive watches.
 *
 * A walk is a FIFO of steps, run a bounded number per read: no recursion,
 * at most two descriptors open at a time, one listing buffer per instance.
 * A step finds its directory again by path and checks it is still the
 * same inode (st_dev, st_ino) before listing it: a path that events not
 * read yet have changed is tried again after them.  No descriptor stays
 * open between steps: an open descriptor would pin a mount.
 *
 * Each directory is watched through openat(parent, name, O_PATH |
 * O_NOFOLLOW) before it is listed, so an entry made at any time is either
 * seen by the listing or reported by the kernel (possibly both, never
 * neither).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "backend.h"
#include "tree.h"

#define DENTS_BUF	32768
#define MAX_TRIES	3

uint32_t inofd__tree_kmask(const struct inofd__reg *r)
{
	/*
	 * IN_MASK_ADD: a directory watched by something else keeps the bits
	 * it has.  IN_ONLYDIR: if a directory was replaced by something else
	 * between open and watch, fail rather than watch it.
	 */
	return (r->mask & IN_ALL_EVENTS) | INOFD__TREE_BITS | IN_ONLYDIR |
	       IN_MASK_ADD;
}

static bool fatal(int r)
{
	return r == -ENOSPC || r == -ENOMEM;
}

int inofd__work_push(struct inofd *in, const struct inofd__step *s)
{
	size_t nl = s->name ? strlen(s->name) + 1 : 1;
	struct inofd__work *w = malloc(sizeof(*w) + nl);
	struct inofd__reg *r = (struct inofd__reg *)s->reg;

	if (!w)
		return -ENOMEM;
	w->next = NULL;
	w->kind = s->kind;
	w->reg = r->id;
	w->wd = s->wd;
	w->synth = s->synth;
	w->crawl = s->crawl;
	w->job = s->job;
	w->root_wd = s->root_wd;
	w->tries = 0;
	memcpy(w->name, s->name ? s->name : "", nl);
	if (in->wtail)
		in->wtail->next = w;
	else
		in->whead = w;
	in->wtail = w;
	if (s->crawl && s->crawl == r->gen)
		r->crawl_left++;
	return 0;
}

static void defer(struct inofd *in, struct inofd__work *w)
{
	w->next = NULL;
	if (in->dtail)
		in->dtail->next = w;
	else
		in->dhead = w;
	in->dtail = w;
}

static bool excluded(const struct inofd__reg *r, const char *name)
{
	char **e;

	for (e = r->exclude; e && *e; e++)
		if (!fnmatch(*e, name, 0))
			return true;
	return false;
}

/*
 * Watch entry name of directory dfd (tree node m).  0 when done or when
 * there is nothing to watch, -errno on failure.
 */
static int add_child(struct inofd *in, struct inofd__mem *m, int dfd,
		     const char *name, const struct inofd__work *w)
{
	struct inofd__reg *r = m->reg;
	struct inofd__mem *c;
	struct inofd__kw *kw;
	struct stat st;
	int cfd, wd, e;

	cfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0) {
		e = -errno;
		/* gone or replaced since it was seen: its events say so */
		return (e == -ENOENT || e == -ENOTDIR || e == -ELOOP) ? 0 : e;
	}
	if (fstat(cfd, &st) < 0) {
		e = -errno;
		close(cfd);
		return e;
	}
	if ((r->tflags & INOFD_TREE_XDEV) && st.st_dev != r->dev) {
		close(cfd);
		return 0;
	}
	wd = inofd__backend_add(in, cfd, inofd__tree_kmask(r));
	close(cfd);
	if (wd < 0)
		return wd == -ENOTDIR ? 0 : wd;
	kw = inofd__kw_find(in, wd);
	c = kw ? inofd__mem_of(kw, r) : NULL;
	if (c) {
		/* a bind mount of an ancestor, or met twice in one crawl */
		if (c == r->root || inofd__node_below(c, m) ||
		    (w->crawl && c->gen == w->crawl))
			return 0;
		if (c->parent != m || strcmp(c->name, name)) {
			/* ours, found elsewhere by a re-walk: it is here */
			char *nn = strdup(name);

			if (!nn)
				return -ENOMEM;
			inofd__node_unlink(in, c);
			free(c->name);
			c->name = nn;
			inofd__node_link(in, m, c);
		}
		if (c->moving) {
			c->moving = false;	/* found where it is */
			inofd__paths_changed(in);
		}
		if (!w->crawl)
			return inofd__tree_reached(in, c);
		c->gen = r->gen;
		return inofd__work_push(in, &(struct inofd__step){
			.kind = INOFD__W_LIST, .reg = r, .wd = wd,
			.name = NULL, .synth = false, .crawl = w->crawl,
			.job = w->job, .root_wd = w->root_wd });
	}
	if (!kw) {
		kw = inofd__kw_get(in, wd, st.st_dev, st.st_ino);
		if (!kw) {
			inofd__backend_rm(in, wd);
			return -ENOMEM;
		}
	}
	kw->kmask |= inofd__tree_kmask(r) & IN_ALL_EVENTS;
	c = inofd__mem_new(in, r, kw, INOFD__MEM_NODE);
	if (!c) {
		inofd__kw_put(in, kw, true);
		return -ENOMEM;
	}
	c->name = strdup(name);
	c->gen = r->gen;
	if (!c->name)
		goto nomem;
	inofd__node_link(in, m, c);
	if (inofd__work_push(in, &(struct inofd__step){
			.kind = INOFD__W_LIST, .reg = r, .wd = wd,
			.name = NULL, .synth = w->synth, .crawl = w->crawl,
			.job = w->job,
			.root_wd = w->root_wd >= 0 ? w->root_wd : wd }) < 0)
		goto nomem;
	return 0;
nomem:
	inofd__subtree_free(in, c);
	return -ENOMEM;
}

int inofd__tree_reached(struct inofd *in, struct inofd__mem *c)
{
	struct inofd__reg *r = c->reg;

	if (c->gen == r->gen)
		return 0;
	c->gen = r->gen;
	/* a crawl under way must still reach what is below it */
	if (!r->crawl_left)
		return 0;
	return inofd__work_push(in, &(struct inofd__step){
			.kind = INOFD__W_LIST, .reg = r, .wd = c->kw->wd,
			.name = NULL, .synth = false, .crawl = r->gen,
			.job = 0, .root_wd = -1 });
}

/* A fatal error in an event-made subtree: it goes, and an error names it. */
static void job_failed(struct inofd *in, struct inofd__reg *r,
		       struct inofd__mem *m, const char *name,
		       const struct inofd__work *w, int err)
{
	struct inofd__kw *kw;
	struct inofd__mem *top;

	if (w->job) {
		in->walk_err = err;
		return;
	}
	kw = inofd__kw_find(in, w->root_wd);
	top = kw ? inofd__mem_of(kw, r) : NULL;
	if (top && top != r->root && top->parent) {
		struct inofd__mem *p = top->parent;
		char *nm = top->name;

		top->name = NULL;
		inofd__error(in, p, nm, err);
		free(nm);
		inofd__subtree_free(in, top);
	} else {
		inofd__error(in, m, name, err);
	}
}

/* Open m's directory by its path, checked to be m's inode. */
static int open_checked(struct inofd *in, struct inofd__mem *m, int flags)
{
	struct stat st;
	const char *p;
	size_t len;
	int fd, e;

	p = inofd__mem_path(in, m, &len);
	if (!p)
		return -ESTALE;
	fd = open(p, flags | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		return (e == -ENOENT || e == -ENOTDIR || e == -ELOOP) ?
			-ESTALE : e;
	}
	if (fstat(fd, &st) < 0 || st.st_dev != m->kw->dev ||
	    st.st_ino != m->kw->ino) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static bool is_dot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

void inofd__root_renamed(struct inofd *in, struct inofd__reg *r,
			 const char *name)
{
	const char *slash = strrchr(r->path, '/');
	size_t dl = (size_t)(slash - r->path) + 1;
	char *np = malloc(dl + strlen(name) + 1), *nn = strdup(name);

	if (!np || !nn) {
		free(np);
		free(nn);
		inofd__tree_lost(in, r);
		return;
	}
	memcpy(np, r->path, dl);
	strcpy(np + dl, name);
	free(r->path);
	free(r->rootname);
	r->path = np;
	r->rootname = nn;
	r->moving = false;
	inofd__paths_changed(in);
}

/*
 * The root's path does not lead to it (its rename was among lost events):
 * look for it in its watched parent, by inode.  True if found.
 */
static bool relocate_root(struct inofd *in, struct inofd__reg *r)
{
	struct inofd__mem *root = r->root;
	const char *slash;
	struct stat st;
	bool found = false;
	char *dir;
	int dfd;

	if (!r->plink || r->lost || !r->path ||
	    !(slash = strrchr(r->path, '/')))
		return false;
	dir = strndup(r->path, slash == r->path ? 1 : (size_t)(slash - r->path));
	if (!dir)
		return false;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (dfd < 0)
		return false;
	if (fstat(dfd, &st) < 0 || st.st_dev != r->plink->kw->dev ||
	    st.st_ino != r->plink->kw->ino)
		goto out;
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, in->dents, DENTS_BUF);
		long off;

		if (n <= 0)
			break;
		for (off = 0; off < n && !found;) {
			struct dirent64 *de = (void *)(in->dents + off);

			off += de->d_reclen;
			if (is_dot(de->d_name) || de->d_ino != root->kw->ino ||
			    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			    st.st_dev != root->kw->dev ||
			    st.st_ino != root->kw->ino)
				continue;
			inofd__root_renamed(in, r, de->d_name);
			found = true;
		}
		if (found)
			break;
	}
out:
	close(dfd);
	return found;
}

/* Is the root where its path says?  If not, try to find it. */
static bool root_ok(struct inofd *in, struct inofd__reg *r)
{
	struct stat st;

	if (r->lost || r->moving || !r->path)
		return false;
	if (stat(r->path, &st) == 0 && st.st_dev == r->root->kw->dev &&
	    st.st_ino == r->root->kw->ino)
		return true;
	return relocate_root(in, r);
}

static void sweep(struct inofd *in, struct inofd__reg *r);

/* Returns true when the step is finished (false: deferred). */
static bool list_dir(struct inofd *in, struct inofd__reg *r,
		     struct inofd__mem *m, struct inofd__work *w)
{
	unsigned int calls = 0;
	int dfd, e = 0;

	dfd = open_checked(in, m, O_RDONLY);
	if (dfd == -ESTALE && root_ok(in, r))
		dfd = open_checked(in, m, O_RDONLY);
	if (dfd == -ESTALE && !r->lost && w->tries < MAX_TRIES)
		return false;
	if (dfd < 0) {
		if (dfd == -ESTALE && m == r->root) {
			inofd__tree_lost(in, r);
			return true;
		}
		if (r->lost)
			return true;
		if (dfd == -ESTALE) {
			/* lost track of it: a re-walk finds where it is */
			in->rescan_due = in->crawl_due = true;
			return true;
		}
		inofd__error(in, m, NULL, dfd);
		return true;
	}
	m->kw->self_open++;
	m->kw->self_close++;
	if (m->parent) {
		m->kw->par_open++;
		m->kw->par_close++;
	}
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, in->dents, DENTS_BUF);
		long off;

		calls++;
		if (n < 0) {
			inofd__error(in, m, NULL, -errno);
			break;
		}
		if (n == 0)
			break;
		for (off = 0; off < n;) {
			struct dirent64 *de = (void *)(in->dents + off);
			const char *nm = de->d_name;
			bool isdir = de->d_type == DT_DIR;

			off += de->d_reclen;
			if (is_dot(nm))
				continue;
			if (de->d_type == DT_UNKNOWN) {
				struct stat st;

				isdir = fstatat(dfd, nm, &st,
						AT_SYMLINK_NOFOLLOW) == 0 &&
					S_ISDIR(st.st_mode);
			}
			if (w->synth) {
				uint32_t mk = IN_CREATE | (isdir ? IN_ISDIR : 0);

				inofd__emit(in, m, INOFD_EV_INOTIFY,
					    &(struct inofd__raw){ mk, 0, nm },
					    INOFD_EVF_SYNTHETIC |
					    INOFD__COPY_NAME);
			}
			if (!isdir || excluded(r, nm) ||
			    (r->max_depth && m->depth + 1 > r->max_depth))
				continue;
			e = add_child(in, m, dfd, nm, w);
			if (fatal(e)) {
				job_failed(in, r, m, nm, w, e);
				goto out;
			}
			if (e < 0)
				inofd__error(in, m, nm, e);
		}
	}
out:
	close(dfd);
	/* m may be gone if its own subtree failed: look it up again */
	{
		struct inofd__kw *kw = inofd__kw_find(in, w->wd);

		if (kw && inofd__mem_of(kw, r) == m) {
			kw->self_access += calls;
			if (m->parent)
				kw->par_access += calls;
		}
	}
	return true;
}

static bool new_dir(struct inofd *in, struct inofd__reg *r,
		    struct inofd__mem *m, struct inofd__work *w)
{
	int pfd, e;

	if (r->lost)
		return true;	/* said once; new directories cannot be found */
	pfd = open_checked(in, m, O_PATH);
	if (pfd == -ESTALE && root_ok(in, r))
		pfd = open_checked(in, m, O_PATH);
	if (pfd == -ESTALE && w->tries < MAX_TRIES)
		return false;
	if (pfd == -ESTALE) {
		/* lost track of where it is: a re-walk finds it */
		in->rescan_due = in->crawl_due = true;
		return true;
	}
	if (pfd < 0) {
		inofd__error(in, m, w->name, pfd);
		return true;
	}
	e = add_child(in, m, pfd, w->name, w);
	close(pfd);
	if (e < 0)
		inofd__error(in, m, w->name, e);
	return true;
}

static void run_one(struct inofd *in, struct inofd__work *w)
{
	struct inofd__reg *r = inofd__reg_find(in, w->reg);
	struct inofd__kw *kw = inofd__kw_find(in, w->wd);
	struct inofd__mem *m = r && kw ? inofd__mem_of(kw, r) : NULL;
	bool done = true;

	if (m && !(w->job && in->walk_err)) {
		if (w->kind == INOFD__W_LIST)
			done = list_dir(in, r, m, w);
		else
			done = new_dir(in, r, m, w);
	}
	if (!done) {
		w->tries++;
		defer(in, w);
		return;
	}
	r = inofd__reg_find(in, w->reg);	/* a failed job may end it */
	if (r && w->crawl && w->crawl == r->gen && r->crawl_left &&
	    --r->crawl_left == 0)
		sweep(in, r);
	free(w);
}

void inofd__walk_run(struct inofd *in, unsigned int budget)
{
	unsigned int n = 0;

	if (!in->dents) {
		in->dents = malloc(DENTS_BUF);
		if (!in->dents) {
			in->rescan_due = true;
			return;
		}
	}
	while (in->whead && (!budget || n++ < budget)) {
		struct inofd__work *w = in->whead;

		in->whead = w->next;
		if (!in->whead)
			in->wtail = NULL;
		run_one(in, w);
	}
}

bool inofd__walk_pending(const struct inofd *in)
{
	return in->whead != NULL;
}

void inofd__walk_retry(struct inofd *in)
{
	if (!in->dhead)
		return;
	if (in->wtail)
		in->wtail->next = in->dhead;
	else
		in->whead = in->dhead;
	in->wtail = in->dtail;
	in->dhead = in->dtail = NULL;
}

void inofd__walk_free(struct inofd *in)
{
	struct inofd__work *w;

	inofd__walk_retry(in);
	while ((w = in->whead)) {
		in->whead = w->next;
		free(w);
	}
	in->wtail = NULL;
	free(in->dents);
	in->dents = NULL;
}

void inofd__tree_newdir(struct inofd *in, struct inofd__mem *m,
			const char *name)
{
	struct inofd__reg *r = m->reg;

	if (excluded(r, name) || (r->max_depth && m->depth + 1 > r->max_depth))
		return;
	if (inofd__work_push(in, &(struct inofd__step){
			.kind = INOFD__W_NEWDIR, .reg = r, .wd = m->kw->wd,
			.name = name, .synth = true, .crawl = 0,
			.job = 0, .root_wd = -1 }) < 0)
		in->rescan_due = in->crawl_due = true;
}

/* Drop the nodes a finished crawl did not reach: they are not there. */
static void sweep(struct inofd *in, struct inofd__reg *r)
{
	struct inofd__mem *root = r->root, *m = root;

	if (!m || r->lost)
		return;
	/* pre-order without recursion; stale children go before the visit */
	while (m) {
		struct inofd__mem *c = m->child, *next;

		for (; c; c = next) {
			next = c->next;
			if (c->gen != r->gen)
				inofd__subtree_free(in, c);
		}
		if (m->child) {
			m = m->child;
			continue;
		}
		while (m != root && !m->next)
			m = m->parent;
		m = m == root ? NULL : m->next;
	}
}

void inofd__tree_crawl(struct inofd *in)
{
	unsigned int i;

	for (i = 0; i < in->regsize; i++) {
		struct inofd__reg *r;

		for (r = in->regtab[i]; r; r = r->hnext) {
			if (r->kind != INOFD__REG_TREE || !r->root || r->lost)
				continue;
			if (++r->gen == 0)
				r->gen = 1;
			r->crawl_left = 0;
			r->root->gen = r->gen;
			if (inofd__work_push(in, &(struct inofd__step){
			.kind = INOFD__W_LIST, .reg = r, .wd = r->root->kw->wd,
			.name = NULL, .synth = false, .crawl = r->gen,
			.job = 0, .root_wd = -1 }) < 0)
				in->rescan_due = true;
		}
	}
}

void inofd__tree_lost(struct inofd *in, struct inofd__reg *r)
{
	struct inofd_event *ev;

	if (r->lost)
		return;
	r->lost = true;
	r->moving = false;
	inofd__paths_changed(in);
	if (r->plink) {
		struct inofd__kw *kw = r->plink->kw;

		inofd__mem_free(in, r->plink);
		r->plink = NULL;
		inofd__kw_put(in, kw, true);
	}
	ev = inofd__q_push(in, INOFD_EV_ERROR);
	if (!ev)
		return;
	ev->wd = r->id;
	ev->data = r->data;
	ev->error = -ESTALE;
	ev->flags = INOFD_EVF_LOST;
}

void inofd__tree_link_parent(struct inofd *in, struct inofd__reg *r, int rootfd)
{
	struct stat pst, rst, st;
	struct inofd__kw *kw;
	const char *slash;
	char *dir;
	int pfd, wd;

	if (!r->path || !(slash = strrchr(r->path, '/')) || !slash[1])
		return;
	dir = strndup(r->path, slash == r->path ? 1 : (size_t)(slash - r->path));
	r->rootname = strdup(slash + 1);
	if (!dir || !r->rootname)
		goto out;
	/* the parent by name must hold the root under that name */
	pfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		goto out;
	if (fstat(pfd, &pst) < 0 || fstat(rootfd, &rst) < 0 ||
	    fstatat(pfd, r->rootname, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_dev != rst.st_dev || st.st_ino != rst.st_ino) {
		close(pfd);
		goto out;
	}
	wd = inofd__backend_add(in, pfd, INOFD__PARENT_BITS | IN_MASK_ADD);
	close(pfd);
	if (wd < 0)
		goto out;
	kw = inofd__kw_get(in, wd, pst.st_dev, pst.st_ino);
	if (kw)
		r->plink = inofd__mem_new(in, r, kw, INOFD__MEM_PARENT);
	if (kw && !r->plink)
		inofd__kw_put(in, kw, true);
	if (!kw)
		inofd__backend_rm(in, wd);
out:
	free(dir);
}

bool inofd__own_noise(struct inofd__kw *kw, uint32_t mask, const char *name)
{
	unsigned int *op, *ac, *cl;

	if (name) {
		struct inofd__mem *m, *c = NULL;

		for (m = kw->mems; m && !c; m = m->kwnext)
			if (m->kind == INOFD__MEM_NODE)
				c = inofd__node_child(m, name);
		if (!c)
			return false;
		kw = c->kw;
		op = &kw->par_open;
		ac = &kw->par_access;
		cl = &kw->par_close;
	} else {
		op = &kw->self_open;
		ac = &kw->self_access;
		cl = &kw->self_close;
	}
	/*
	 * The kernel merges identical adjacent events, so the getdents count
	 * is an upper bound: the close ends the listing and the count.
	 */
	if ((mask & IN_OPEN) && *op) {
		(*op)--;
		return true;
	}
	if ((mask & IN_ACCESS) && *ac) {
		(*ac)--;
		return true;
	}
	if ((mask & IN_CLOSE_NOWRITE) && *cl) {
		if (--(*cl) == 0)
			*ac = 0;
		return true;
	}
	return false;
}
