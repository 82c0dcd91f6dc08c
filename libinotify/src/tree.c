// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Recursive watches.
 *
 * A walk is a FIFO of steps.  A step finds its directory again by path and
 * checks it is still the same inode (st_dev, st_ino) before listing it: a
 * path that events not read yet have changed is tried again after them.
 * Below that directory the step goes depth first, as a bare walker does:
 * each subdirectory is opened once, openat(parent, name, O_RDONLY |
 * O_DIRECTORY | O_NOFOLLOW), watched through that fd, listed and closed,
 * with at most WALK_DEPTH descriptors and listing buffers (deeper levels
 * become steps of their own).  Each directory is watched before it is
 * listed, so an entry made at any time is either seen by the listing or
 * reported by the kernel (possibly both, never neither).
 *
 * A bounded run (inofd_read()) lists at most INOFD__WALK_BUDGET entries.
 * When they are spent, every open level is closed and becomes a step that
 * resumes at its getdents64 position (d_off): no descriptor stays open
 * between reads, since an open descriptor would pin a mount.  A resumed
 * step seeks there only if the directory's mtime is the one it had when
 * the step stopped, and that mtime was old enough to be trusted;
 * otherwise the listing begins again (DESIGN.md, "Recursive watching").
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "tree.h"

#define DENTS_BUF	8192	/* per level */
#define WALK_DEPTH	16	/* levels listed at once by one step */
#define MAX_TRIES	3
#define MAX_RESTARTS	2	/* then a directory is listed in one go */
#ifndef INOFD__MTIME_TRUST_NS	/* -D for stress builds (DESIGN.md) */
#define INOFD__MTIME_TRUST_NS	2000000000LL	/* older than this: no change
						 * since can share its stamp */
#endif

static long sys_getdents(int fd, void *buf, size_t len)
{
	return syscall(SYS_getdents64, fd, buf, len);
}

static long getdents(struct inofd *in, int fd, void *buf)
{
	long n = (in->getdents ? in->getdents : sys_getdents)(fd, buf,
							       DENTS_BUF);

	return n < 0 ? -errno : n;
}

/*
 * Open entry name of dfd.  Its identity is what fstat() says (inofd.h:
 * ino and dev "as stat(2) gave them"), never the entry's d_ino: on
 * overlayfs d_ino is a layer's inode number, not the merged directory's,
 * and a btrfs subvolume's root is on another st_dev than its parent
 * (DESIGN.md, "Recursive watching").
 */
static int open_dir(int dfd, const char *name, int flags, struct stat *st)
{
	int fd;

	fd = openat(dfd, name, flags);
	if (fd < 0)
		return -errno;
	if (fstat(fd, st) < 0) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

void inofd__walk_hook(struct inofd *in,
		      long (*fn)(int fd, void *buf, size_t len))
{
	in->getdents = fn;
}

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
	return r == -ENOSPC || r == -ENOMEM || r == -EMFILE || r == -ENFILE;
}

static bool no_fd(int r)
{
	return r == -EMFILE || r == -ENFILE;
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
	w->pos = 0;
	w->mtime_ns = -1;
	w->restarts = 0;
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

/* What a listing passes down to the directories it finds. */
struct wctx {
	int		wd;		/* the directory's own */
	bool		synth;
	unsigned int	crawl;
	int		job;
	int		root_wd;
};

static struct wctx ctx_of(const struct inofd__work *w)
{
	return (struct wctx){ .wd = w->wd, .synth = w->synth,
			      .crawl = w->crawl, .job = w->job,
			      .root_wd = w->root_wd };
}

static bool chain_yield(struct inofd *in, struct inofd__reg *r);

/* Is fd the root of a mount other than dfd's (or not known)? */
static bool mount_root(int dfd, int fd)
{
	struct statx a, b;

	if (statx(dfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &a) ||
	    statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &b) ||
	    !(a.stx_mask & b.stx_mask & STATX_MNT_ID))
		return true;
	return a.stx_mnt_id != b.stx_mnt_id;
}

/* Node c is m's child name now (it was elsewhere in the tree). */
static int node_move(struct inofd *in, struct inofd__mem *c,
		     struct inofd__mem *m, const char *name)
{
	int e = inofd__node_name(c, name);

	if (e < 0)
		return e;
	inofd__node_unlink(in, c);
	inofd__node_link(in, m, c);
	return 0;
}

/*
 * add_child() met c, a node tree r holds for the directory (cfd) at entry
 * name of dfd (node m, the step's wd).  0 when done, 1: list it now
 * (list), -errno.
 */
static int known_child(struct inofd *in, struct inofd__mem *m,
		       struct inofd__mem *c, int dfd, int cfd,
		       const char *name, int wd, const struct wctx *w,
		       bool list)
{
	struct inofd__reg *r = m->reg;
	bool moved, found;
	int e;

	/* a bind mount of an ancestor */
	if (c == r->root || inofd__node_below(c, m))
		return 0;
	/*
	 * Met twice in one crawl: once is enough, unless it was met first
	 * at a mount's root (mount --bind t/a t/b, t/b listed first, t/a
	 * made in the batch of the bind so the tree did not hold it yet)
	 * and now at a name that is none: that name keeps it, as below, or
	 * the bind's umount frees it and t/a is watched by no name.
	 */
	if (w->crawl && c->gen == w->crawl) {
		if ((c->parent == m && !strcmp(c->name, name)) ||
		    mount_root(dfd, cfd))
			return 0;
		e = node_move(in, c, m, name);
		if (e < 0)
			return e;
		inofd__placed_now(in, r);
		inofd__placed_add(in, c);
		return 0;
	}
	/* still where the tree has it: a second name, a bind mount of it
	 * (mount --bind t/a t/b), not a move; the name that is not a
	 * mount's root keeps it */
	if ((c->parent != m || strcmp(c->name, name)) && c->parent &&
	    c->name && !c->moving && !c->shadow &&
	    inofd__tree_entry_is(in, c->parent, c->name, c->kw) &&
	    mount_root(dfd, cfd))
		return 0;
	moved = c->parent != m || strcmp(c->name, name);
	found = c->moving || c->shadow || c->xpart;
	if (moved) {
		/* ours, found elsewhere by a re-walk: it is here */
		e = node_move(in, c, m, name);
		if (e < 0)
			return e;
	}
	if (moved || found) {
		/* where it is, by identity: the present, judged by the
		 * records that wait, and after a loss unsure until read */
		c->moving = c->shadow = c->xpart = false;
		if (w->crawl)
			inofd__placed_now(in, r);
		inofd__placed_add(in, c);
		if (found)
			inofd__paths_changed(in);
	}
	if (!w->crawl)
		return inofd__tree_reached(in, c);
	c->gen = r->gen;
	if (list)
		return 1;
	return inofd__work_push(in, &(struct inofd__step){
		.kind = INOFD__W_LIST, .reg = r, .wd = wd,
		.name = NULL, .synth = false, .crawl = w->crawl,
		.job = w->job, .root_wd = w->root_wd });
}

/*
 * add_child(): a directory tree m's does not hold (kernel watch wd, kw if
 * the library has it, identity st) at entry name of node m becomes node
 * *cp.  0 when done, 1: list it now (list), -errno.
 */
static int new_child(struct inofd *in, struct inofd__mem *m,
		     struct inofd__kw *kw, int wd, const struct stat *st,
		     const char *name, const struct wctx *w, bool list,
		     struct inofd__mem **cp)
{
	struct inofd__reg *r = m->reg;
	struct inofd__mem *c;

	if (!kw) {
		kw = inofd__kw_get(in, wd, st->st_dev, st->st_ino);
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
	c->gen = r->gen;
	if (inofd__node_name(c, name) < 0)
		goto nomem;
	inofd__node_link(in, m, c);
	/*
	 * Its name is the present's: a record queued before, not read yet,
	 * may rename what had the name then, and would be taken for c's
	 * (inofd__placed_add()).  Not in the registration's own walk (a
	 * job): a rename in that time of a name it just watched is not
	 * caught (a known limit).
	 */
	if (!w->job)
		inofd__placed_add(in, c);
	*cp = c;
	if (list)
		return 1;
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

/*
 * Watch entry name of directory dfd (tree node m).  0 when done or when
 * there is nothing to watch, -errno on failure.  With lfd, a directory to
 * list is handed back open for reading (*lfd, node *cm; *seen: it was
 * watched already when it was opened) instead of becoming a step.
 */
static int add_child(struct inofd *in, struct inofd__mem *m, int dfd,
		     const char *name, ino_t ino, const struct wctx *w,
		     int *lfd, struct inofd__mem **cm, bool *seen)
{
	struct inofd__reg *r = m->reg;
	struct inofd__mem *c;
	struct inofd__kw *kw;
	struct stat st;
	int cfd, wd, e;

	(void)ino;	/* the entry's d_ino: not its identity (open_dir()) */
	cfd = open_dir(dfd, name, (lfd ? O_RDONLY : O_PATH) | O_DIRECTORY |
		       O_NOFOLLOW | O_CLOEXEC, &st);
	if (cfd < 0) {
		e = cfd;
		/* gone or replaced since it was seen: its events say so */
		return (e == -ENOENT || e == -ENOTDIR || e == -ELOOP) ? 0 : e;
	}
	e = 0;
	if ((r->tflags & INOFD_TREE_XDEV) && st.st_dev != r->dev)
		goto out;
	wd = inofd__backend_add_dir(in, cfd, inofd__tree_kmask(r));
	/* the tree's own directories come before the chain above it */
	while (wd == -ENOSPC && chain_yield(in, r))
		wd = inofd__backend_add_dir(in, cfd, inofd__tree_kmask(r));
	if (wd < 0) {
		e = wd == -ENOTDIR ? 0 : wd;
		goto out;
	}
	kw = inofd__kw_find(in, wd);
	if (seen)
		*seen = kw != NULL;
	c = kw ? inofd__mem_of(kw, r) : NULL;
	if (c)
		e = known_child(in, m, c, dfd, cfd, name, wd, w, lfd != NULL);
	else
		e = new_child(in, m, kw, wd, &st, name, w, lfd != NULL, &c);
	if (e == 1) {
		*lfd = cfd;
		*cm = c;
		return 0;
	}
out:
	close(cfd);
	return e;
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
		       const struct wctx *w, int err)
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
		/* the error copies the name; top's member frees its own */
		inofd__error(in, top->parent, top->name, err);
		inofd__subtree_free(in, top);
	} else {
		inofd__error(in, m, name, err);
	}
}

/*
 * Open m's directory when its path is too long for open(2): the root by
 * its path, then one name at a time relative to the directory above
 * (two descriptors at most).  -errno on failure.
 */
static int open_by_names(struct inofd__mem *m, int flags)
{
	struct inofd__mem *n, *c;
	int fd, nfd;

	fd = open(m->reg->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* from the root down: each time the child of the last one on the
	 * way to m (no stack: the way is found again from m) */
	for (c = m->reg->root; c != m; c = n) {
		for (n = m; n->parent != c; n = n->parent)
			if (!n->parent) {
				close(fd);
				return -ESTALE;
			}
		nfd = openat(fd, n->name, (n == m ? flags : O_PATH) |
			     O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (nfd < 0)
			return -errno;
		fd = nfd;
	}
	if (m == m->reg->root && flags != O_PATH) {
		nfd = openat(fd, ".", flags | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = nfd < 0 ? -errno : nfd;
	}
	return fd;
}

/* Open m's directory by its path, checked to be m's inode. */
static int open_checked(struct inofd *in, struct inofd__mem *m, int flags,
			struct stat *stp)
{
	struct stat sb, *stp2 = stp ? stp : &sb;
	const char *p;
	size_t len;
	int fd, e;

	p = inofd__mem_path(in, m, &len);
	if (!p)
		return errno == ENOMEM ? -ENOMEM : -ESTALE;
	if (len >= PATH_MAX)
		fd = open_by_names(m, flags);
	else
		fd = open(p, flags | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		e = -errno;
		return (e == -ENOENT || e == -ENOTDIR || e == -ELOOP) ?
			-ESTALE : e;
	}
	if (fstat(fd, stp2) < 0) {
		close(fd);
		return -ESTALE;
	}
	if (stp2->st_dev != m->kw->dev || stp2->st_ino != m->kw->ino) {
		/*
		 * Another directory, or this one under an identity taken
		 * before (a file system that changed it): the kernel
		 * knows.  Adding bits the watch has already returns its wd
		 * for the same inode, and a new one (removed again) for
		 * another.
		 */
		int wd = inofd__backend_add_dir(in, fd, m->kw->kmask | IN_MASK_ADD);

		if (wd != m->kw->wd) {
			if (wd >= 0 && !inofd__kw_find(in, wd))
				inofd__backend_rm(in, wd);
			close(fd);
			return -ESTALE;
		}
		m->kw->dev = stp2->st_dev;
		m->kw->ino = stp2->st_ino;
	}
	return fd;
}

bool inofd__tree_entry_is(struct inofd *in, struct inofd__mem *t,
			  const char *name, const struct inofd__kw *kw)
{
	struct stat st;
	int fd = open_checked(in, t, O_PATH, NULL);
	bool is;

	if (fd < 0)
		return false;
	is = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	     S_ISDIR(st.st_mode) && st.st_dev == kw->dev &&
	     st.st_ino == kw->ino;
	close(fd);
	return is;
}

static bool is_dot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

/*
 * The new name of the root or of a directory above it could not be
 * stored: the tree is not lost for that.  Its path stays as it was, and a
 * crawl finds the root again by inode (root_ok()), after a RESCAN.
 */
static void nomem_rename(struct inofd *in, struct inofd__reg *r)
{
	r->moving = false;
	inofd__paths_changed(in);
	in->rescan_due = in->crawl_due = true;
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
		nomem_rename(in, r);
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
 * In directory fd, the entry that is the directory (dev, ino): its name in
 * buf (NAME_MAX + 1 bytes), or NULL.
 */
static char *find_entry(int fd, dev_t dev, ino_t ino, char *buf)
{
	char dents[4096] __attribute__((aligned(8)));
	bool found = false;
	struct stat st;
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return NULL;
	while (!found) {
		long n = syscall(SYS_getdents64, dfd, dents, sizeof(dents));
		long off;

		if (n <= 0)
			break;
		for (off = 0; off < n && !found;) {
			struct dirent64 *de = (void *)(dents + off);

			off += de->d_reclen;
			if (is_dot(de->d_name) ||
			    (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) ||
			    fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
			    st.st_dev != dev || st.st_ino != ino)
				continue;
			snprintf(buf, NAME_MAX + 1, "%s", de->d_name);
			found = true;
		}
	}
	close(dfd);
	return found ? buf : NULL;
}

/*
 * The root's path does not lead to it (its rename was among lost events):
 * look for it in its watched parent, by inode.  True if found.
 */
static bool relocate_root(struct inofd *in, struct inofd__reg *r)
{
	char *dir, name[NAME_MAX + 1];
	struct inofd__dirid pid;
	const char *slash;
	struct stat st;
	bool found = false;
	int dfd;

	if ((!r->plink && !r->anc_id) || r->lost || !r->path ||
	    !(slash = strrchr(r->path, '/')))
		return false;
	dir = strndup(r->path, slash == r->path ? 1 : (size_t)(slash - r->path));
	if (!dir)
		return false;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dir);
	if (dfd < 0)
		return false;
	pid = r->plink ? (struct inofd__dirid){ r->plink->kw->dev,
						r->plink->kw->ino } :
			 r->anc_id[r->nanc];
	if (fstat(dfd, &st) == 0 && st.st_dev == pid.dev &&
	    st.st_ino == pid.ino &&
	    find_entry(dfd, r->root->kw->dev, r->root->kw->ino, name)) {
		inofd__root_renamed(in, r, name);
		found = true;
	}
	close(dfd);
	return found;
}

/*
 * Split an absolute directory path into its components, in place: "/a/b"
 * gives {"a", "b"} in *vp (allocated, as many as there are: no depth is
 * too deep; the caller frees it).  The number of components, -1 if one
 * is "." or "..", -ENOMEM.
 */
static int split_dir(char *p, char ***vp)
{
	int n = 0, max = 1;
	char *s, *save = NULL, **v;

	*vp = NULL;
	for (s = p; *s; s++)
		max += *s == '/';
	v = malloc((size_t)max * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (s = strtok_r(p, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
		if (is_dot(s)) {
			free(v);
			return -1;
		}
		v[n++] = s;
	}
	*vp = v;
	return n;
}

/*
 * After a loss, the renames of directories above the root may be among
 * the lost events: walk the root's path from "/" again, checking each
 * directory against its watch (st_dev, st_ino).  One renamed within the
 * directory above it is found there by inode and the root's path takes
 * its new name; one that went elsewhere cannot be followed: false (the
 * caller says the tree is lost).
 */
static bool reroot(struct inofd *in, struct inofd__reg *r)
{
	char *copy, *base, **comp = NULL, **newname = NULL;
	char found[NAME_MAX + 1];
	bool ok = false;
	struct stat st;
	int n, i, fd;

	if (!r->anc || (!r->plink && !r->anc_id) ||
	    !(base = strrchr(r->path, '/')))
		return false;
	copy = strndup(r->path, (size_t)(base - r->path));
	n = copy ? split_dir(copy, &comp) : -1;
	if (n >= 0 && n == (int)r->nanc)
		newname = calloc((size_t)n + 1, sizeof(*newname));
	if (!newname) {
		free(comp);
		free(copy);
		return false;
	}
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; fd >= 0 && i < n; i++) {
		struct inofd__mem *m = i == n - 1 ? r->plink : r->anc[i + 1];
		struct inofd__dirid id = { 0, 0 };
		bool known = m || r->anc_id;
		int nfd;

		if (m)
			id = (struct inofd__dirid){ m->kw->dev, m->kw->ino };
		else if (r->anc_id)
			id = r->anc_id[i + 1];
		if (known && (fstatat(fd, comp[i], &st, AT_SYMLINK_NOFOLLOW) ||
			      st.st_dev != id.dev || st.st_ino != id.ino)) {
			if (!find_entry(fd, id.dev, id.ino, found) ||
			    !(newname[i] = strdup(found)))
				break;
			comp[i] = newname[i];
		}
		nfd = openat(fd, comp[i], O_PATH | O_DIRECTORY | O_NOFOLLOW |
			     O_CLOEXEC);
		close(fd);
		fd = nfd;
		if (fd >= 0 && known && (fstat(fd, &st) || st.st_dev != id.dev ||
					 st.st_ino != id.ino))
			break;		/* moved again meanwhile */
		ok = fd >= 0 && i == n - 1;
	}
	if (fd >= 0)
		close(fd);
	/* the whole chain checked: only then does the path change */
	for (i = 0; ok && i < n; i++)
		if (newname[i])
			inofd__anc_renamed(in, r, (unsigned int)i, newname[i]);
	ok = ok && !r->lost;
	for (i = 0; i < n; i++)
		free(newname[i]);
	free(newname);
	free(comp);
	free(copy);
	return ok;
}

/*
 * Is the root where its path says?  If not, try to find it: by inode in
 * its parent, and after a loss (crawl) also above it.  Only after a loss:
 * otherwise the renames not read yet say where it went, in order.
 */
static bool root_ok(struct inofd *in, struct inofd__reg *r, bool crawl)
{
	struct stat st;

	if (r->lost || r->moving || !r->path)
		return false;
	if (stat(r->path, &st) == 0 && st.st_dev == r->root->kw->dev &&
	    st.st_ino == r->root->kw->ino)
		return true;
	if (crawl && r->anc && reroot(in, r) && stat(r->path, &st) == 0 &&
	    st.st_dev == r->root->kw->dev && st.st_ino == r->root->kw->ino)
		return true;
	return relocate_root(in, r);
}

void inofd__tree_gone_or_back(struct inofd *in, struct inofd__reg *r)
{
	if (r->lost)
		return;
	/*
	 * Moved out and in again before the records were read (or renamed
	 * in its parent by a record that was lost): found by inode, it
	 * stays, and what happened to it meanwhile is a RESCAN.
	 */
	r->moving = false;
	inofd__paths_changed(in);
	if (root_ok(in, r, true)) {
		/*
		 * Its path is today's, and records not applied yet may name
		 * places from before renames above it: they get today's
		 * names, flagged, after the RESCAN that says so, queued now
		 * (oracle seed 97076 -N -C -E).
		 */
		r->unsure = true;
		in->unsure = true;
		in->rescan_due = in->crawl_due = true;
		inofd__q_rescan(in);
		return;
	}
	inofd__tree_lost(in, r);
}

/* Component lvl of the root's path: its start, and its length in *len. */
static const char *path_comp(const struct inofd__reg *r, unsigned int lvl,
			     size_t *len)
{
	const char *s = r->path;
	unsigned int i = 0;

	for (;;) {
		while (*s == '/')
			s++;
		if (!*s)
			return NULL;
		*len = strcspn(s, "/");
		if (i++ == lvl)
			return s[*len] ? s : NULL;	/* the root's own: no */
		s += *len;
	}
}

/* Is component lvl of the root's path (not the root's own) name? */
static bool comp_is(const struct inofd__reg *r, unsigned int lvl,
		    const char *name)
{
	size_t len;
	const char *c = path_comp(r, lvl, &len);

	return c && strlen(name) == len && !memcmp(c, name, len);
}

/* The level of r's chain that kernel watch wd is: anc[i], nanc (the
 * parent), or -1. */
static int chain_level(const struct inofd__reg *r, int wd)
{
	unsigned int i;

	if (r->plink && r->plink->kw->wd == wd)
		return (int)r->nanc;
	for (i = 0; i < r->nanc; i++)
		if (r->anc[i] && r->anc[i]->kw->wd == wd)
			return (int)i;
	return -1;
}

static void undo_renames(struct inofd *in, struct inofd__reg *r,
			 const struct inofd__mv *v, int n)
{
	int k, j;

	for (k = n - 1; k >= 0 && !r->lost; k--) {
		int lvl = chain_level(r, v[k].wd);

		if (!(v[k].mask & IN_MOVED_TO) || lvl < 0)
			continue;
		for (j = k - 1; j >= 0; j--)
			if ((v[j].mask & IN_MOVED_FROM) &&
			    v[j].cookie == v[k].cookie)
				break;
		if (j < 0 || v[j].wd != v[k].wd)
			continue;	/* from elsewhere: not ours */
		if (lvl == (int)r->nanc) {
			if (!strcmp(r->rootname, v[k].name))
				inofd__root_renamed(in, r, v[j].name);
			continue;
		}
		if (comp_is(r, (unsigned int)lvl, v[k].name))
			inofd__anc_renamed(in, r, (unsigned int)lvl, v[j].name);
	}
}

bool inofd__tree_chains(const struct inofd *in)
{
	unsigned int i;

	for (i = 0; i < in->regsize; i++) {
		const struct inofd__reg *r;

		for (r = in->regtab[i]; r; r = r->hnext)
			if (r->kind == INOFD__REG_TREE && r->anc && !r->lost)
				return true;
	}
	return false;
}

void inofd__tree_roots_check(struct inofd *in, const struct inofd__mv *v,
			     int n, bool unsure)
{
	unsigned int i;

	for (i = 0; i < in->regsize; i++) {
		struct inofd__reg *r;

		for (r = in->regtab[i]; r; r = r->hnext) {
			char *was;

			if (r->kind != INOFD__REG_TREE || !r->anc || r->lost)
				continue;
			was = strdup(r->path);
			if (root_ok(in, r, true))
				undo_renames(in, r, v, n);
			/*
			 * A rename above the root was lost.  The kernel queues
			 * one IN_Q_OVERFLOW until it is read: records after it
			 * may have gaps too, so where among them the rename
			 * fell is not known.  Their events get today's names
			 * (less the renames they hold), flagged.
			 */
			if (!r->lost && (unsure || !was || strcmp(was, r->path))) {
				r->unsure = true;
				in->unsure = true;
				inofd__paths_changed(in);
			}
			free(was);
		}
	}
}

void inofd__tree_recheck(struct inofd *in)
{
	unsigned int i;

	for (i = 0; i < in->regsize; i++) {
		struct inofd__reg *r;

		for (r = in->regtab[i]; r; r = r->hnext) {
			struct stat st;

			if (r->kind != INOFD__REG_TREE || !r->chain_short ||
			    r->lost || r->moving || !r->path || !r->root)
				continue;
			if (stat(r->path, &st) == 0 &&
			    st.st_dev == r->root->kw->dev &&
			    st.st_ino == r->root->kw->ino)
				continue;
			/* a rename in a hole of the chain: found by inode */
			root_ok(in, r, true);
		}
	}
}

void inofd__tree_sure(struct inofd *in)
{
	unsigned int i;

	for (i = 0; i < in->regsize; i++) {
		struct inofd__reg *r;

		for (r = in->regtab[i]; r; r = r->hnext)
			r->unsure = r->chain_short;
	}
	in->unsure = false;
	inofd__paths_changed(in);
}

static void sweep(struct inofd *in, struct inofd__reg *r);

/* One level of a depth-first listing. */
struct frame {
	int			fd;
	struct inofd__mem	*m;
	struct wctx		cx;
	long			n, off;		/* in this level's buffer */
	off_t			pos;		/* d_off of the last entry taken */
	unsigned int		calls;		/* getdents64 calls */
	unsigned int		restarts;
	bool			seen;		/* watched before it was opened */
	bool			whole;		/* to the end, whatever the budget */
	bool			moved;		/* not at its path when its
						 * buffer was listed
						 * (still_at()) */
};

static int64_t ts_ns(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000LL + t->tv_nsec;
}

/*
 * The directory's mtime if it can prove, at the next step, that no entry
 * changed since now: it is older than any timestamp a change made from
 * now on can get (whatever the file system's granularity), else -1.
 */
static int64_t trusted_mtime(int fd)
{
	struct timespec now;
	struct stat st;
	int64_t mt;

	if (fstat(fd, &st) < 0 || clock_gettime(CLOCK_REALTIME_COARSE, &now))
		return -1;
	mt = ts_ns(&st.st_mtim);
	return ts_ns(&now) - mt > INOFD__MTIME_TRUST_NS ? mt : -1;
}

/*
 * Is f's member still there?  Only a fatal error in a subtree frees
 * members during a listing: until one (*gone), all are.
 */
static bool frame_ok(struct inofd *in, struct inofd__reg *r,
		     const struct frame *f, bool gone)
{
	struct inofd__kw *kw;

	if (!gone)
		return true;
	kw = inofd__kw_find(in, f->cx.wd);

	return kw && inofd__mem_of(kw, r) == f->m;
}

/* Close a level; count the events its open, listing and close make. */
static void frame_close(struct inofd *in, struct inofd__reg *r,
			struct frame *f, bool gone)
{
	close(f->fd);
	if (!frame_ok(in, r, f, gone))
		return;
	if (f->seen)
		f->m->kw->self_open++;
	f->m->kw->self_close++;
	f->m->kw->self_access += f->calls;
	if (f->m->parent) {
		f->m->kw->par_open++;
		f->m->kw->par_close++;
		f->m->kw->par_access += f->calls;
	}
}

/* The budget is spent: the level becomes a step that resumes at pos. */
static void frame_suspend(struct inofd *in, struct inofd__reg *r,
			  struct frame *f, bool gone)
{
	if (frame_ok(in, r, f, gone)) {
		if (inofd__work_push(in, &(struct inofd__step){
				.kind = INOFD__W_LIST, .reg = r, .wd = f->cx.wd,
				.name = NULL, .synth = f->cx.synth,
				.crawl = f->cx.crawl, .job = f->cx.job,
				.root_wd = f->cx.root_wd }) < 0) {
			in->rescan_due = in->crawl_due = true;
		} else {
			in->wtail->pos = f->pos;
			in->wtail->mtime_ns = f->pos ? trusted_mtime(f->fd) : -1;
			in->wtail->restarts = f->restarts;
		}
	}
	frame_close(in, r, f, gone);
}

/*
 * The budget is spent: open levels from the top down become steps that
 * resume at the next read.  A level whose directory changed too recently
 * for its mtime to prove anything at the next step, or one that is to be
 * listed whole, goes on to its end (without descending: what it finds
 * becomes steps).
 */
static void suspend(struct inofd *in, struct inofd__reg *r, struct frame *f,
		    int *top, bool gone)
{
	for (; *top >= 0; (*top)--) {
		struct frame *t = &f[*top];

		if (!t->whole && t->pos && trusted_mtime(t->fd) < 0)
			t->whole = true;
		if (t->whole)
			return;
		frame_suspend(in, r, t, gone);
	}
}

/* Where a resumed step starts: its position, or again from the start. */
static void resume(struct frame *f, const struct inofd__work *w,
		   const struct stat *st)
{
	f->restarts = w->restarts;
	if (!w->pos)
		return;
	if (w->mtime_ns >= 0 && w->mtime_ns == ts_ns(&st->st_mtim) &&
	    lseek(f->fd, w->pos, SEEK_SET) == w->pos) {
		f->pos = w->pos;
		return;
	}
	/*
	 * Entries changed since (or may have): a position in a changed
	 * directory may skip entries that were there all along (tmpfs
	 * counts positions).  Begin again; entries already watched cost a
	 * lookup each.  A directory that keeps changing is listed in one go.
	 */
	if (lseek(f->fd, 0, SEEK_SET) != 0) {
		f->whole = true;
		return;
	}
	if (++f->restarts > MAX_RESTARTS)
		f->whole = true;
}

/* Room for n levels of listing buffers (grown as a walk goes deeper). */
static bool dents_room(struct inofd *in, unsigned int n)
{
	char *p;

	if (n <= in->dents_levels)
		return true;
	p = realloc(in->dents, (size_t)n * DENTS_BUF);
	if (!p)
		return false;	/* deeper levels become steps */
	in->dents = p;
	in->dents_levels = n;
	return true;
}

static bool budget_left(const struct inofd *in)
{
	return !in->walk_bounded || in->walk_left;
}

/*
 * Step w's directory (m) opened for listing, or -1: the step is done
 * (*done: finished; false: deferred, to be tried again).
 */
static int list_open(struct inofd *in, struct inofd__reg *r,
		     struct inofd__mem *m, struct inofd__work *w,
		     struct stat *st, bool *done)
{
	int dfd;

	*done = true;
	dfd = open_checked(in, m, O_RDONLY, st);
	if (dfd == -ESTALE && root_ok(in, r, w->crawl != 0))
		dfd = open_checked(in, m, O_RDONLY, st);
	if (dfd == -ESTALE && !r->lost && w->tries < MAX_TRIES) {
		*done = false;
		return -1;
	}
	if (dfd < 0 && w->job && fatal(dfd)) {
		in->walk_err = dfd;	/* the first walk: all or nothing */
		return -1;
	}
	if (dfd < 0) {
		if (dfd == -ESTALE && m == r->root) {
			inofd__tree_lost(in, r);
			return -1;
		}
		if (r->lost)
			return -1;
		if (dfd == -ESTALE) {
			/* lost track of it: a re-walk finds where it is */
			in->rescan_due = in->crawl_due = true;
			return -1;
		}
		inofd__error(in, m, NULL, dfd);
		return -1;
	}
	return dfd;
}

/* A level of the listing: directory fd, node m, listed from the start. */
static void frame_start(struct frame *f, int fd, struct inofd__mem *m,
			const struct wctx *cx, bool seen)
{
	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->m = m;
	f->cx = *cx;
	f->seen = seen;
}

/*
 * Is level t's directory still at the path the tree has for it, the path
 * its synthetic events get?  A step finds its directory by path, but
 * lists it later, by descriptor: renamed in between, a file made in it
 * after the rename is listed and would be reported at a path it never
 * had (issue 38 class 6, tests/probes/writers: the directory renamed in
 * place, or out of the tree and back, while the walk of a new directory
 * listed it).  Asked after each getdents64 call, which saw no file made
 * later: a rename before it is seen here, unless one more put the
 * directory back.  Only where the listing is reported (synth): never in
 * the oracle, whose renames never run during a read.
 */
static bool still_at(struct inofd *in, const struct frame *t)
{
	const struct inofd__kw *kw = t->m->kw;
	const char *p;
	struct stat st;
	size_t len;

	p = inofd__mem_path(in, t->m, &len);
	if (!p)
		return true;	/* no path: its events have none */
	return fstatat(AT_FDCWD, p, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       st.st_dev == kw->dev && st.st_ino == kw->ino;
}

/*
 * The next entry of level f[*top] (from its buffer buf, refilled when
 * used up), or NULL: the level was suspended (budget) or ended (*top, the
 * level now listed, moved up).
 */
static struct dirent64 *next_dirent(struct inofd *in, struct inofd__reg *r,
				    struct frame *f, int *top, bool gone,
				    char *buf)
{
	struct frame *t = &f[*top];
	struct dirent64 *de;

	if (t->off >= t->n) {
		long n;

		if (!t->whole && !budget_left(in)) {
			suspend(in, r, f, top, gone);
			return NULL;
		}
		n = getdents(in, t->fd, buf);
		t->calls++;
		if (n < 0)
			inofd__error(in, t->m, NULL, (int)n);
		if (n <= 0) {
			frame_close(in, r, t, gone);
			(*top)--;
			return NULL;
		}
		t->n = n;
		t->off = 0;
		t->moved = t->cx.synth && !still_at(in, t);
	}
	de = (void *)(buf + t->off);
	t->off += de->d_reclen;
	return de;
}

/* Is entry de of level t a directory?  A synthetic IN_CREATE for it first,
 * where the walk reports what it finds. */
static bool entry_isdir(struct inofd *in, const struct frame *t,
			const struct dirent64 *de)
{
	const char *nm = de->d_name;
	bool isdir = de->d_type == DT_DIR;

	if (de->d_type == DT_UNKNOWN) {
		struct stat cst;

		isdir = fstatat(t->fd, nm, &cst, AT_SYMLINK_NOFOLLOW) == 0 &&
			S_ISDIR(cst.st_mode);
	}
	if (t->cx.synth) {
		uint32_t mk = IN_CREATE | (isdir ? IN_ISDIR : 0);

		inofd__emit(in, t->m, INOFD_EV_INOTIFY,
			    &(struct inofd__raw){ mk, 0, nm },
			    INOFD_EVF_SYNTHETIC | INOFD__COPY_NAME |
			    (t->moved ? INOFD_EVF_STALE_PATH : 0));
	}
	return isdir;
}

/*
 * Directory nm of level f[*top] could not be added (fatal e): the first
 * walk ends (true: all or nothing), else this level's listing or the
 * subtree that went with it ends (*top moved up), those above go on.
 */
static bool entry_failed(struct inofd *in, struct inofd__reg *r,
			 struct frame *f, int *top, const char *nm, int e)
{
	struct frame *t = &f[*top];
	int k;

	job_failed(in, r, t->m, nm, &t->cx, e);
	if (t->cx.job) {
		/* the first walk is all or nothing: it ends */
		for (; *top >= 0; (*top)--)
			close(f[*top].fd);
		return true;
	}
	for (k = 0; k <= *top && frame_ok(in, r, &f[k], true); k++)
		;
	if (k > *top) {
		/* this directory's listing ends there */
		frame_close(in, r, &f[*top], true);
		(*top)--;
	} else {
		/* a subtree went: its levels end, those above it go on */
		for (; *top >= k; (*top)--)
			close(f[*top].fd);
	}
	return false;
}

/* Returns true when the step is finished (false: deferred). */
static bool list_dir(struct inofd *in, struct inofd__reg *r,
		     struct inofd__mem *m, struct inofd__work *w)
{
	struct frame f[WALK_DEPTH];
	bool gone = false, done;	/* gone: a fatal error freed members */
	struct wctx cx = ctx_of(w);
	struct stat st;
	int top = 0, dfd, e;

	dfd = list_open(in, r, m, w, &st, &done);
	if (dfd < 0)
		return done;
	frame_start(&f[0], dfd, m, &cx, true);
	resume(&f[0], w, &st);
	while (top >= 0) {
		struct frame *t = &f[top];
		/* grown here, before any name points into the buffers */
		bool room = top + 1 < WALK_DEPTH &&
			    dents_room(in, (unsigned int)top + 2);
		char *buf = in->dents + (size_t)top * DENTS_BUF;
		struct inofd__mem *c = NULL;
		struct dirent64 *de;
		bool descend, seen = false;
		off_t before;
		int cfd = -1;
		const char *nm;

		de = next_dirent(in, r, f, &top, gone, buf);
		if (!de)
			continue;
		before = t->pos;
		t->pos = de->d_off;
		if (in->walk_left)
			in->walk_left--;
		nm = de->d_name;
		if (is_dot(nm))
			continue;
		if (!entry_isdir(in, t, de) || excluded(r, nm) ||
		    (r->max_depth && t->m->depth + 1 > r->max_depth))
			continue;
		descend = room && budget_left(in) && !in->walk_fd_short;
		e = add_child(in, t->m, t->fd, nm, de->d_ino, &t->cx,
			      descend ? &cfd : NULL, &c, &seen);
		if (no_fd(e) && descend) {
			/*
			 * Out of descriptors (RLIMIT_NOFILE): every open level
			 * becomes a step, this one again at this entry, and
			 * the walk goes on a directory at a time (two
			 * descriptors).  Only if that fails too is it an error.
			 */
			t->pos = before;
			in->walk_fd_short = true;
			for (; top >= 0; top--)
				frame_suspend(in, r, &f[top], gone);
			break;
		}
		if (fatal(e)) {
			if (entry_failed(in, r, f, &top, nm, e))
				break;
			gone = true;
			continue;
		}
		if (e < 0)
			inofd__error(in, t->m, nm, e);
		if (cfd < 0)
			continue;
		frame_start(&f[top + 1], cfd, c, &t->cx, seen);
		f[top + 1].cx.wd = c->kw->wd;
		if (t->cx.root_wd < 0)
			f[top + 1].cx.root_wd = c->kw->wd;
		top++;
	}
	return true;
}

static bool new_dir(struct inofd *in, struct inofd__reg *r,
		    struct inofd__mem *m, struct inofd__work *w)
{
	struct wctx cx;
	int pfd, e;

	if (r->lost)
		return true;	/* said once; new directories cannot be found */
	/* m may have moved since the step was queued: the options again */
	if (excluded(r, w->name) ||
	    (r->max_depth && m->depth + 1 > r->max_depth))
		return true;
	pfd = open_checked(in, m, O_PATH, NULL);
	if (pfd == -ESTALE && root_ok(in, r, w->crawl != 0))
		pfd = open_checked(in, m, O_PATH, NULL);
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
	cx = ctx_of(w);
	e = add_child(in, m, pfd, w->name, 0, &cx, NULL, NULL, NULL);
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

	/*
	 * A step of a crawl that a newer one replaced: the newer crawl lists
	 * everything from the root again, and this step would mark what it
	 * reaches as the newer crawl's while skipping what the older one
	 * reached (a node met twice), which the newer crawl then sweeps
	 * (oracle seed 97008 -N -C -E).
	 */
	if (r && w->crawl && w->crawl != r->gen)
		m = NULL;
	if (m && !(w->job && in->walk_err)) {
		if (w->kind == INOFD__W_LIST)
			done = list_dir(in, r, m, w);
		else
			done = new_dir(in, r, m, w);
		inofd__placed_step(in);	/* what it placed, judged from here */
	}
	if (!done) {
		w->tries++;
		defer(in, w);
		return;
	}
	r = inofd__reg_find(in, w->reg);	/* a failed job may end it */
	if (r && w->crawl && w->crawl == r->gen && r->crawl_left &&
	    --r->crawl_left == 0) {
		sweep(in, r);
		inofd__placed_now(in, r);	/* after a loss: catch up */
	}
	free(w);
}

void inofd__walk_run(struct inofd *in, unsigned int budget)
{
	if (!dents_room(in, 1)) {
		in->rescan_due = true;
		return;
	}
	in->walk_bounded = budget != 0;
	in->walk_left = budget;
	in->walk_fd_short = false;
	while (in->whead && budget_left(in)) {
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
	in->dents_levels = 0;
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

bool inofd__tree_wants(const struct inofd__reg *r, const struct inofd__mem *m,
			const char *name, dev_t dev)
{
	return !excluded(r, name) &&
	       !(r->max_depth && m->depth + 1 > r->max_depth) &&
	       !((r->tflags & INOFD_TREE_XDEV) && dev != r->dev);
}

void inofd__tree_node_moved(struct inofd *in, struct inofd__mem *c,
			    unsigned int was)
{
	struct inofd__reg *r = c->reg;
	struct inofd__mem *n = c;
	unsigned int max = r->max_depth;

	if (excluded(r, c->name) || (max && c->depth > max)) {
		inofd__subtree_free(in, c);	/* out of the tree's bounds */
		return;
	}
	if (!max || c->depth == was)
		return;
	/* pre-order over c's subtree, no stack */
	while (n) {
		if (n->depth >= max) {
			/* deeper now: what is below the limit goes */
			while (n->child)
				inofd__subtree_free(in, n->child);
		} else if (n->depth + was - c->depth >= max) {
			/* was at the limit, is above it now: list it */
			if (inofd__work_push(in, &(struct inofd__step){
					.kind = INOFD__W_LIST, .reg = r,
					.wd = n->kw->wd, .name = NULL,
					.synth = false, .crawl = 0, .job = 0,
					.root_wd = -1 }) < 0)
				in->rescan_due = in->crawl_due = true;
		}
		if (n->child) {
			n = n->child;
			continue;
		}
		while (n != c && !n->next)
			n = n->parent;
		n = n == c ? NULL : n->next;
	}
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
				/* no memory: the crawl is tried again */
				in->rescan_due = in->crawl_due = true;
		}
	}
}

/*
 * Watch the ancestors of the root's parent (pst, at dir), "/" first, for
 * renames in them, as the parent is watched for the root's: a rename of
 * any directory above the root is then seen in order with the events, and
 * the root's path follows it (inofd__anc_renamed()).  The chain is walked
 * from "/" one component at a time, without following symlinks, and must
 * end at the parent: a path through a symlink, or below a directory the
 * caller may not watch, gets no chain (DESIGN.md, "Known limits").  No
 * descriptor stays open.
 */
/*
 * A watch above the root could not be made (ENOSPC at max_user_watches,
 * ENOMEM, EACCES): renames there will not be seen, and the caller is told
 * so, once, by an INOFD_EV_ERROR on the root with that error.
 */
static void chain_failed(struct inofd *in, struct inofd__reg *r, int err)
{
	inofd__error(in, r->root, NULL, err);
	/*
	 * A rename up there is not seen when it happens: every path may be
	 * stale, and says so; the chain is checked by identity before each
	 * batch, so that the path is right again from the next one.
	 */
	r->chain_short = true;
	r->unsure = true;
	in->unsure = true;
	in->chain_short = true;
	inofd__paths_changed(in);	/* plain watches stop borrowing */
}

/*
 * The watch limit (ENOSPC) stopped a directory of tree r: one watch of
 * its chain above the root gives way, from "/" down (the upper levels are
 * the least likely to be renamed), the parent last.  Only a watch the
 * chain alone holds frees a slot.  The chain then has a hole, said once
 * (chain_failed(): an ERROR -ENOSPC on the root, every path flagged maybe
 * stale, the root's path checked by identity before each batch), as when
 * it could not be made whole at the start.  True if a watch was removed.
 */
static bool chain_yield(struct inofd *in, struct inofd__reg *r)
{
	struct inofd__mem **slot = NULL;
	struct inofd__kw *kw;
	unsigned int i;

	if (r->lost)
		return false;
	for (i = 0; i <= r->nanc && !slot; i++) {
		struct inofd__mem **s = i < r->nanc ? &r->anc[i] : &r->plink;

		if (i == r->nanc && !r->anc_id)
			break;		/* no identities: the parent stays */
		if (*s && (*s)->kw->mems == *s && !(*s)->kwnext)
			slot = s;
	}
	if (!slot)
		return false;
	kw = (*slot)->kw;
	inofd__mem_free(in, *slot);
	*slot = NULL;
	inofd__kw_put(in, kw, true);
	if (!r->chain_short)
		chain_failed(in, r, -ENOSPC);
	return true;
}

/*
 * The chain's first error, if e (an errno) is one of resources: out of
 * descriptors or memory.  The chain then ends there, and the caller is
 * told (chain_failed()).  A path that changed under the walk, or went
 * through a symlink, is no error: no chain, as DESIGN.md says.
 */
static int res_err(int e, int err)
{
	if (err)
		return err;
	return (e == EMFILE || e == ENFILE || e == ENOMEM) ? -e : 0;
}

static void link_ancestors(struct inofd *in, struct inofd__reg *r,
			   const char *dir, const struct stat *pst, int err)
{
	char *copy = strdup(dir), **comp = NULL;
	struct inofd__mem **v = NULL;
	bool reached = false;
	struct stat st;
	int n, i, fd = -1;

	n = !copy ? -ENOMEM : dir[0] == '/' ? split_dir(copy, &comp) : -1;
	if (n == -ENOMEM) {
		chain_failed(in, r, -ENOMEM);
		goto out;
	}
	if (n <= 0) {	/* the parent is "/", which never moves */
		if (err)
			chain_failed(in, r, err);
		goto out;
	}
	v = calloc((size_t)n, sizeof(*v));
	r->anc_id = calloc((size_t)n + 1, sizeof(*r->anc_id));
	if (!v || !r->anc_id) {
		free(v);
		free(r->anc_id);
		r->anc_id = NULL;
		chain_failed(in, r, -ENOMEM);
		goto out;
	}
	r->anc = v;
	r->nanc = (unsigned int)n;
	fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		err = res_err(errno, err);
	for (i = 0; fd >= 0 && fstat(fd, &st) == 0; i++) {
		struct inofd__kw *kw;
		int nfd, wd;

		r->anc_id[i] = (struct inofd__dirid){ st.st_dev, st.st_ino };
		if (i == n) {		/* the parent: watched already */
			reached = st.st_dev == pst->st_dev &&
				  st.st_ino == pst->st_ino;
			break;
		}
		/*
		 * A watch that cannot be made leaves a hole (NULL): the
		 * levels below are still watched, and the hole is checked
		 * by identity before each batch (inofd__tree_recheck()).
		 */
		wd = err ? err : inofd__backend_add_dir(in, fd,
							INOFD__PARENT_BITS |
							IN_MASK_ADD);
		if (wd < 0) {
			err = wd;
		} else if (!(kw = inofd__kw_get(in, wd, st.st_dev,
						 st.st_ino))) {
			inofd__backend_rm(in, wd);
			err = -ENOMEM;
		} else if (!(v[i] = inofd__mem_new(in, r, kw,
						   INOFD__MEM_PARENT))) {
			inofd__kw_put(in, kw, true);
			err = -ENOMEM;
		}
		nfd = openat(fd, comp[i], O_PATH | O_DIRECTORY | O_NOFOLLOW |
			     O_CLOEXEC);
		if (nfd < 0)
			err = res_err(errno, err);
		close(fd);
		fd = nfd;
	}
	if (fd >= 0)
		close(fd);
	if (!reached)
		inofd__anc_drop(in, r);		/* no chain, no guard */
	if (err)
		chain_failed(in, r, err);
out:
	free(comp);
	free(copy);
}

int inofd__anc_holds(const struct inofd__mem *m, const char *name)
{
	const struct inofd__reg *r = m->reg;
	unsigned int i;

	if (!name || r->lost || !r->path)
		return -1;
	for (i = 0; i < r->nanc && r->anc[i] != m; i++)
		;
	return i < r->nanc && comp_is(r, i, name) ? (int)i : -1;
}

/*
 * The chain's next level (identity dev, ino) is an entry of dir under
 * another name (renamed by records not parsed yet): is it an entry other
 * than name, so that the mount point name is beside the chain?  Each
 * directory of dir is asked by statx(2), never by its d_ino: on overlayfs
 * (without xino) d_ino is a layer's inode number, not the merged
 * directory's (open_dir()), and never matched.  An entry on another mount
 * than dir is a mount's root, not the chain (a bind of the chain's
 * directory shows its identity too).  False when not known.
 */
static bool chain_beside(const char *dir, const char *name, dev_t dev,
			 ino_t ino)
{
	DIR *d = opendir(dir);
	struct statx sd, s;
	struct dirent *e;
	bool other = false;

	if (!d)
		return false;
	if (statx(dirfd(d), "", AT_EMPTY_PATH, STATX_INO | STATX_MNT_ID,
		  &sd) || !(sd.stx_mask & STATX_MNT_ID)) {
		closedir(d);
		return false;
	}
	while (!other && (e = readdir(d))) {
		if ((e->d_type != DT_DIR && e->d_type != DT_UNKNOWN) ||
		    !strcmp(e->d_name, name) ||
		    statx(dirfd(d), e->d_name, AT_SYMLINK_NOFOLLOW |
			  AT_NO_AUTOMOUNT | AT_STATX_DONT_SYNC,
			  STATX_INO | STATX_MNT_ID, &s))
			continue;
		other = (s.stx_mask & STATX_MNT_ID) &&
			s.stx_mnt_id == sd.stx_mnt_id && s.stx_ino == ino &&
			makedev(s.stx_dev_major, s.stx_dev_minor) == dev;
	}
	closedir(d);
	return other;
}

bool inofd__anc_beside(const struct inofd__mem *a, const char *dir,
		       const char *name)
{
	const struct inofd__reg *r = a->reg;
	const char *comp = NULL;
	char p[PATH_MAX];
	struct stat st;
	dev_t dev = 0;
	ino_t ino = 0;
	unsigned int i;
	size_t len = 0;

	for (i = 0; i < r->nanc && r->anc[i] != a; i++)
		;
	if (i < r->nanc && r->anc_id) {
		comp = path_comp(r, i, &len);
		dev = r->anc_id[i + 1].dev;
		ino = r->anc_id[i + 1].ino;
	} else if (a == r->plink && r->rootname && r->root) {
		comp = r->rootname;
		len = strlen(comp);
		dev = r->root->kw->dev;
		ino = r->root->kw->ino;
	}
	if (!comp || r->lost || (strlen(name) == len && !memcmp(name, comp, len)))
		return false;
	/* the chain goes on by the tree's name: beside it */
	if (snprintf(p, sizeof(p), "%s/%.*s", strcmp(dir, "/") ? dir : "",
		     (int)len, comp) >= (int)sizeof(p))
		return false;
	if (stat(p, &st) == 0 && st.st_dev == dev && st.st_ino == ino)
		return true;
	return chain_beside(dir, name, dev, ino);
}

void inofd__anc_renamed(struct inofd *in, struct inofd__reg *r,
			unsigned int lvl, const char *name)
{
	size_t len = 0, nl = strlen(name), pre;
	const char *c = path_comp(r, lvl, &len);
	char *np;

	if (!c) {
		inofd__tree_lost(in, r);
		return;
	}
	pre = (size_t)(c - r->path);
	np = malloc(strlen(r->path) - len + nl + 1);
	if (!np) {
		nomem_rename(in, r);
		return;
	}
	memcpy(np, r->path, pre);
	memcpy(np + pre, name, nl);
	strcpy(np + pre + nl, c + len);
	free(r->path);
	r->path = np;
	r->moving = false;
	inofd__paths_changed(in);
}

void inofd__tree_lost(struct inofd *in, struct inofd__reg *r)
{
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
	inofd__anc_drop(in, r);
	inofd__q_lost(in, r);	/* past the queue's bound, or owed */
}

/*
 * The root's path as given, less its "." components and repeated or
 * trailing '/' (a trailing '/' would hide the parent); one with a ".."
 * component is taken from the kernel (/proc/self/fd), which resolved it
 * (a lexical ".." is wrong after a symlink).
 */
static void norm_root_path(struct inofd *in, struct inofd__reg *r, int rootfd)
{
	const char *p = r->path, *s;
	bool dotdot = false;
	char *n, *o;

	if (!p || p[0] != '/')
		return;
	n = malloc(strlen(p) + 2);
	if (!n)
		return;
	o = n;
	for (s = p; *s;) {
		size_t len;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		len = strcspn(s, "/");
		if (len == 2 && s[0] == '.' && s[1] == '.')
			dotdot = true;
		if (!(len == 1 && s[0] == '.')) {
			*o++ = '/';
			memcpy(o, s, len);
			o += len;
		}
		s += len;
	}
	if (o == n)
		*o++ = '/';
	*o = '\0';
	if (dotdot) {
		char link[32], buf[PATH_MAX];
		ssize_t k;

		free(n);
		snprintf(link, sizeof(link), "/proc/self/fd/%d", rootfd);
		k = readlink(link, buf, sizeof(buf) - 1);
		if (k <= 0 || buf[0] != '/')
			return;
		buf[k] = '\0';
		if (strstr(buf, " (deleted)") || !(n = strdup(buf)))
			return;
	}
	if (strcmp(n, p)) {
		free(r->path);
		r->path = n;
		inofd__paths_changed(in);
	} else {
		free(n);
	}
}

void inofd__tree_link_parent(struct inofd *in, struct inofd__reg *r, int rootfd)
{
	struct stat pst, rst, st;
	struct inofd__kw *kw;
	const char *slash;
	char *dir;
	int pfd, wd;

	norm_root_path(in, r, rootfd);
	if (!r->path || !(slash = strrchr(r->path, '/')) || !slash[1])
		return;
	dir = strndup(r->path, slash == r->path ? 1 : (size_t)(slash - r->path));
	r->rootname = strdup(slash + 1);
	if (!dir || !r->rootname)
		goto out;
	/* the parent by name must hold the root under that name */
	pfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0) {
		int err = res_err(errno, 0);

		/* out of descriptors or memory: no chain, and said so */
		if (err)
			chain_failed(in, r, err);
		goto out;
	}
	if (fstat(pfd, &pst) < 0 || fstat(rootfd, &rst) < 0 ||
	    fstatat(pfd, r->rootname, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st.st_dev != rst.st_dev || st.st_ino != rst.st_ino) {
		close(pfd);
		goto out;
	}
	wd = inofd__backend_add_dir(in, pfd, INOFD__PARENT_BITS | IN_MASK_ADD);
	close(pfd);
	kw = wd < 0 ? NULL : inofd__kw_get(in, wd, pst.st_dev, pst.st_ino);
	if (kw)
		r->plink = inofd__mem_new(in, r, kw, INOFD__MEM_PARENT);
	if (kw && !r->plink)
		inofd__kw_put(in, kw, true);
	if (!kw && wd >= 0)
		inofd__backend_rm(in, wd);
	/* without the parent's watch, the chain's identities still */
	link_ancestors(in, r, dir, &pst, r->plink ? 0 : wd < 0 ? wd : -ENOMEM);
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
