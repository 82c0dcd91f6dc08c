// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Instance, backends, watch table and the watch/unwatch entry points.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>

#include "internal.h"
#include "kernel.h"

#define READ_BUF_SIZE	(64 * 1024)

#define OPTS_END(field)	(offsetof(struct inofd_opts, field) + \
			 sizeof(((struct inofd_opts *)0)->field))

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- watch table ---------------------------------------------------- */

static unsigned int hslot(const struct inofd *in, int wd)
{
	return (unsigned int)wd & (in->hsize - 1);
}

struct watch *watch_lookup(const struct inofd *in, int wd)
{
	struct watch *w;

	if (wd < 0)
		return NULL;
	for (w = in->htab[hslot(in, wd)]; w; w = w->hnext)
		if (w->wd == wd)
			return w;
	return NULL;
}

static void table_grow(struct inofd *in)
{
	unsigned int nsize = in->hsize * 2, i;
	struct watch **n = calloc(nsize, sizeof(*n));
	struct watch *w, *next;

	if (!n)
		return;		/* keep the longer chains */
	for (i = 0; i < in->hsize; i++) {
		for (w = in->htab[i]; w; w = next) {
			next = w->hnext;
			w->hnext = n[(unsigned int)w->wd & (nsize - 1)];
			n[(unsigned int)w->wd & (nsize - 1)] = w;
		}
	}
	free(in->htab);
	in->htab = n;
	in->hsize = nsize;
}

struct watch *watch_new(struct inofd *in, int wd)
{
	struct watch *w = calloc(1, sizeof(*w));
	unsigned int s;

	if (!w)
		return NULL;
	if ((unsigned int)in->nwatches >= in->hsize * 2)
		table_grow(in);
	w->wd = wd;
	s = hslot(in, wd);
	w->hnext = in->htab[s];
	in->htab[s] = w;
	in->nwatches++;
	return w;
}

void tree_link(struct watch *parent, struct watch *w)
{
	w->parent = parent;
	w->prev = NULL;
	w->next = parent ? parent->child : NULL;
	if (w->next)
		w->next->prev = w;
	if (parent)
		parent->child = w;
}

void tree_unlink(struct watch *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else if (w->parent)
		w->parent->child = w->next;
	if (w->next)
		w->next->prev = w->prev;
	w->parent = w->prev = w->next = NULL;
}

/* Free one entry; children must already be gone or detached. */
void watch_free(struct inofd *in, struct watch *w)
{
	struct watch **pp;

	for (pp = &in->htab[hslot(in, w->wd)]; *pp; pp = &(*pp)->hnext) {
		if (*pp == w) {
			*pp = w->hnext;
			break;
		}
	}
	in->nwatches--;
	tree_unlink(w);
	if (w->changed) {
		/* close the coalescing window: the entry outlives the watch */
		w->changed->state = Q_READY;
		w->changed = NULL;
	}
	if (w->tree && --w->tree->members == 0)
		free(w->tree);
	free(w->name);
	free(w);
}

/*
 * Drop a watch whose kernel mark is gone.  Children that are still there
 * (an unmount reports them in any order) become roots of their own and
 * keep their full path.
 */
void orphan_children(struct watch *w)
{
	while (w->child) {
		struct watch *c = w->child;
		char *p = watch_path(c);

		tree_unlink(c);
		free(c->name);
		c->name = p;
	}
}

void forget_watch(struct inofd *in, struct watch *w)
{
	orphan_children(w);
	watch_free(in, w);
}

/*
 * Remove a watch and everything below it without reporting: used when a
 * directory leaves a tree and to roll back a failed walk.  The entries go
 * at once; the IN_IGNORED the kernel queues for them finds no entry and is
 * dropped.
 */
void remove_subtree(struct inofd *in, struct watch *w)
{
	while (w->child)
		remove_subtree(in, w->child);
	if (!w->removing)
		backend_rm(in, w->wd);
	watch_free(in, w);
}

char *join_path(const char *dir, const char *name)
{
	size_t a, b;
	char *p;

	if (!dir)
		return NULL;
	if (!name)
		return strdup(dir);
	a = strlen(dir);
	b = strlen(name);
	p = malloc(a + b + 2);
	if (!p)
		return NULL;
	memcpy(p, dir, a);
	if (a && dir[a - 1] == '/')
		a--;
	p[a] = '/';
	memcpy(p + a + 1, name, b + 1);
	return p;
}

char *watch_path(const struct watch *w)
{
	char *d, *p;

	if (!w->parent)
		return w->name ? strdup(w->name) : NULL;
	d = watch_path(w->parent);
	p = join_path(d, w->name);
	free(d);
	return p;
}

/* ---- backends ------------------------------------------------------- */

/* What the kernel's INOTIFY_WATCH checks, for the emulation. */
int check_fd(int fd)
{
	struct statfs sfs;

	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	/*
	 * All anon-inode files (eventfd, epoll, timerfd, signalfd, inotify...)
	 * share one inode: a watch on it would see every such file in the
	 * system.  The kernel refuses them; so does the emulation.
	 */
	if (fstatfs(fd, &sfs) == 0 && sfs.f_type == ANON_INODE_FS_MAGIC)
		return -EINVAL;
	return 0;
}

int backend_add(struct inofd *in, int fd, uint32_t mask)
{
	char p[sizeof("/proc/self/fd/") + 12];
	int r;

	/* a descriptor has no final symlink to follow or not */
	mask &= ~IN_DONT_FOLLOW;

	if (in->backend == INOFD_BACKEND_KERNEL)
		return kern_watch(in->ifd, fd, mask);

	r = check_fd(fd);
	if (r)
		return r;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	r = inotify_add_watch(in->ifd, p, mask);
	return r < 0 ? -errno : r;
}

int backend_rm(struct inofd *in, int wd)
{
	int r;

	if (in->backend == INOFD_BACKEND_KERNEL)
		return kern_ignore(in->ifd, wd);
	r = inotify_rm_watch(in->ifd, wd);
	return r < 0 ? -errno : 0;
}

static bool probe_procfd(void)
{
	struct statfs sfs;

	return statfs("/proc/self/fd", &sfs) == 0 &&
	       sfs.f_type == PROC_SUPER_MAGIC;
}

/* ---- instance ------------------------------------------------------- */

#define KNOWN_FLAGS	(INOFD_FORCE_KERNEL | INOFD_FORCE_PROCFD | \
			 INOFD_RAW_MOVES)

int inofd_new(struct inofd **out, const struct inofd_opts *opts)
{
	unsigned int flags = 0, pair_ms = 0, coalesce_ms = 0;
	const char *env;
	struct inofd *in;
	bool kern, procfd;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (opts) {
		size_t i;

		if (opts->sz < OPTS_END(sz))
			return -EINVAL;
		/* bytes this version does not know must be zero */
		for (i = sizeof(*opts); i < opts->sz; i++)
			if (((const unsigned char *)opts)[i])
				return -EINVAL;
		if (opts->sz >= OPTS_END(flags))
			flags = opts->flags;
		if (opts->sz >= OPTS_END(pair_timeout_ms))
			pair_ms = opts->pair_timeout_ms;
		if (opts->sz >= OPTS_END(coalesce_ms))
			coalesce_ms = opts->coalesce_ms;
	}
	if (flags & ~KNOWN_FLAGS)
		return -EINVAL;
	/* forcing both backends at once means nothing */
	if ((flags & INOFD_FORCE_KERNEL) && (flags & INOFD_FORCE_PROCFD))
		return -EINVAL;
	if (pair_ms > 60000 || coalesce_ms > 3600000)
		return -EINVAL;

	/* the environment forces a backend only when the caller did not */
	if (!(flags & (INOFD_FORCE_KERNEL | INOFD_FORCE_PROCFD))) {
		env = secure_getenv("INOFD_BACKEND");
		if (env && !strcmp(env, "kernel"))
			flags |= INOFD_FORCE_KERNEL;
		else if (env && !strcmp(env, "procfd"))
			flags |= INOFD_FORCE_PROCFD;
		else if (env && *env && strcmp(env, "auto"))
			return -EINVAL;
	}

	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->flags = flags;
	in->pair_ms = pair_ms ? pair_ms : INOFD_PAIR_TIMEOUT_MS;
	in->coalesce_ms = coalesce_ms;
	in->hsize = 64;
	in->htab = calloc(in->hsize, sizeof(*in->htab));
	in->bufsz = READ_BUF_SIZE;
	in->buf = malloc(in->bufsz);
	if (!in->htab || !in->buf) {
		r = -ENOMEM;
		goto err_free;
	}
	in->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (in->ifd < 0) {
		r = -errno;
		goto err_free;
	}

	kern = !(flags & INOFD_FORCE_PROCFD) && kern_probe(in->ifd);
	procfd = !(flags & INOFD_FORCE_KERNEL) && !kern && probe_procfd();
	if (kern) {
		in->backend = INOFD_BACKEND_KERNEL;
	} else if (procfd) {
		in->backend = INOFD_BACKEND_PROCFD;
	} else {
		r = -ENOSYS;
		goto err_close;
	}
	*out = in;
	return 0;

err_close:
	close(in->ifd);
err_free:
	free(in->buf);
	free(in->htab);
	free(in);
	return r;
}

void inofd_free(struct inofd *in)
{
	struct qent *q, *next;
	unsigned int i;

	if (!in)
		return;
	close(in->ifd);
	/*
	 * Watches first: a watch with a coalescing window open points into
	 * the queue (w->changed) and watch_free() closes that window, so the
	 * queue must still be there.
	 */
	for (i = 0; i < in->hsize; i++) {
		while (in->htab[i]) {
			struct watch *w = in->htab[i];

			while (w->child)
				tree_unlink(w->child);
			watch_free(in, w);
		}
	}
	for (q = in->qhead; q; q = next) {
		next = q->next;
		q_free(q);
	}
	for (q = in->done; q; q = next) {
		next = q->next;
		q_free(q);
	}
	free(in->htab);
	free(in->buf);
	free(in);
}

int inofd_fd(const struct inofd *in)
{
	return in ? in->ifd : -EINVAL;
}

int inofd_backend(const struct inofd *in)
{
	return in ? in->backend : -EINVAL;
}

int inofd_watch_count(const struct inofd *in)
{
	return in ? in->nwatches : -EINVAL;
}

/* ---- watches -------------------------------------------------------- */

static int check_mask(uint32_t mask)
{
	if (mask & ~KNOWN_BITS)
		return -EINVAL;
	if (!(mask & IN_ALL_EVENTS))
		return -EINVAL;
	/* "add to the mask" and "only create" contradict each other */
	if ((mask & IN_MASK_ADD) && (mask & IN_MASK_CREATE))
		return -EINVAL;
	return 0;
}

/* The absolute path an fd refers to, or NULL. */
static char *fd_path(int fd)
{
	char link[sizeof("/proc/self/fd/") + 12], buf[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	if (n > 10 && !strcmp(buf + n - 10, " (deleted)"))
		return NULL;
	return strdup(buf);
}

/* Watch fd; takes ownership of path. */
static int add_plain(struct inofd *in, int fd, uint32_t mask, void *data,
		     char *path)
{
	struct watch *w;
	int wd;

	wd = backend_add(in, fd, mask);
	if (wd < 0) {
		free(path);
		return wd;
	}
	w = watch_lookup(in, wd);
	if (w && w->tree) {
		/*
		 * The directory belongs to a recursive watch and the kernel just
		 * replaced (or extended) its mask.  Put the tree's mask back
		 * and refuse: one wd cannot carry two owners.
		 */
		uint32_t tm = w->tree->user_mask | TREE_BITS;

		if (!(mask & IN_MASK_ADD))
			backend_add(in, fd, tm);
		free(path);
		return (mask & IN_MASK_CREATE) ? -EEXIST : -EBUSY;
	}
	if (w && !w->removing) {
		/* same object again: same wd, like inotify_add_watch(2) */
		w->user_mask = (mask & IN_MASK_ADD) ? (w->user_mask | mask) : mask;
		w->data = data;
		if (path) {
			free(w->name);
			w->name = path;
		}
		return wd;
	}
	if (w)
		forget_watch(in, w);	/* wd recycled before its IN_IGNORED */
	w = watch_new(in, wd);
	if (!w) {
		backend_rm(in, wd);
		free(path);
		return -ENOMEM;
	}
	w->user_mask = mask;
	w->data = data;
	w->name = path;
	return wd;
}

int inofd_watch_fd(struct inofd *in, int fd, uint32_t mask, void *data)
{
	int r;

	if (!in)
		return -EINVAL;
	r = check_mask(mask);
	if (r)
		return r;
	if (fd < 0)
		return -EBADF;
	return add_plain(in, fd, mask, data, fd_path(fd));
}

#define AT_FLAGS	(INOFD_AT_SYMLINK_NOFOLLOW | INOFD_AT_EMPTY_PATH)

/* Open what (dirfd, path, flags) names as O_PATH; sets *own if we opened it. */
static int open_at(int dirfd, const char *path, unsigned int flags,
		   int oflags, bool *own)
{
	int fd;

	*own = false;
	if (!*path && (flags & INOFD_AT_EMPTY_PATH)) {
		if (dirfd != AT_FDCWD)
			return dirfd;
		path = ".";
	}
	oflags |= O_PATH | O_CLOEXEC;
	if (flags & INOFD_AT_SYMLINK_NOFOLLOW)
		oflags |= O_NOFOLLOW;
	fd = openat(dirfd, path, oflags);
	if (fd < 0)
		return -errno;
	*own = true;
	return fd;
}

/* The argument checks inofd_watch_at() and inofd_watch_tree() share. */
static int check_at_args(const struct inofd *in, const char *path,
			 uint32_t mask, unsigned int flags)
{
	if (!in || !path || (flags & ~AT_FLAGS))
		return -EINVAL;
	return check_mask(mask);
}

static char *at_path(int dirfd, const char *path, int fd)
{
	if (*path && (path[0] == '/' || dirfd == AT_FDCWD))
		return strdup(path);
	return fd_path(fd);
}

int inofd_watch_at(struct inofd *in, int dirfd, const char *path,
		   uint32_t mask, unsigned int flags, void *data)
{
	bool own;
	int fd, r;

	r = check_at_args(in, path, mask, flags);
	if (r)
		return r;
	/* the path is resolved once, here; the watch is made on the result */
	fd = open_at(dirfd, path, flags,
		     (mask & IN_ONLYDIR) ? O_DIRECTORY : 0, &own);
	if (fd < 0)
		return fd;
	r = add_plain(in, fd, mask, data, at_path(dirfd, path, fd));
	if (own)
		close(fd);
	return r;
}

int inofd_watch_path(struct inofd *in, const char *path, uint32_t mask,
		     void *data)
{
	return inofd_watch_at(in, AT_FDCWD, path, mask,
			      (mask & IN_DONT_FOLLOW) ?
			      INOFD_AT_SYMLINK_NOFOLLOW : 0, data);
}

int inofd_watch_tree(struct inofd *in, int dirfd, const char *path,
		     uint32_t mask, unsigned int flags, void *data)
{
	struct watch *root = NULL;
	struct qent *mark;
	char *rootname;
	struct tree *t;
	bool own;
	int fd, r;

	r = check_at_args(in, path, mask, flags);
	if (r)
		return r;
	/* a tree is one owner of many watches: no per-call mask games */
	if (mask & (IN_MASK_ADD | IN_MASK_CREATE | IN_ONESHOT))
		return -EINVAL;
	fd = open_at(dirfd, path, flags, O_DIRECTORY, &own);
	if (fd < 0)
		return fd;
	if (!own) {
		struct stat st;

		if (fstat(fd, &st) < 0)
			return -errno;
		if (!S_ISDIR(st.st_mode))
			return -ENOTDIR;
	}
	t = calloc(1, sizeof(*t));
	if (!t) {
		r = -ENOMEM;
		goto out_close;
	}
	t->user_mask = mask & (IN_ALL_EVENTS | IN_EXCL_UNLINK | IN_DONT_FOLLOW);
	t->data = data;
	t->members = 1;		/* held by this function until the walk ends */

	mark = in->qtail;
	rootname = at_path(dirfd, path, fd);
	r = tree_add_dir(in, t, NULL, rootname, fd, false, ++in->gen, &root);
	free(rootname);
	if (r >= 0 && !root)
		r = -EBUSY;	/* the directory is already watched */
	if (r < 0) {
		/* all or nothing: a failed walk leaves no watch behind */
		if (root)
			remove_subtree(in, root);
		q_truncate(in, mark);	/* and no report about it */
	} else {
		r = root->wd;
	}
	if (--t->members == 0)
		free(t);
out_close:
	if (own)
		close(fd);
	return r;
}

int inofd_unwatch(struct inofd *in, int wd)
{
	struct watch *w;
	int r;

	if (!in)
		return -EINVAL;
	w = watch_lookup(in, wd);
	/* only what the caller added: not a directory inside a tree */
	if (!w || w->removing || w->parent)
		return -EINVAL;
	while (w->child)
		remove_subtree(in, w->child);
	r = backend_rm(in, wd);
	/* EINVAL: the kernel already dropped it; its IN_IGNORED is queued */
	if (r < 0 && r != -EINVAL)
		return r;
	/* keep the entry: its IN_IGNORED still carries the caller's data */
	w->removing = true;
	return 0;
}

const char *inofd_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case -ENOSPC:
		return "inotify watch limit reached "
		       "(raise fs.inotify.max_user_watches)";
	case -EMFILE:
		return "inotify instance or file descriptor limit reached "
		       "(fs.inotify.max_user_instances, RLIMIT_NOFILE)";
	case -ENOSYS:
		return "no inotify backend: the kernel lacks INOTIFY_WATCH "
		       "and /proc is not mounted (or the forced backend is "
		       "missing)";
	case -EBADF:
		return "bad file descriptor";
	case -EINVAL:
		return "invalid argument (mask, flags, watch descriptor, or "
		       "an anonymous-inode file)";
	case -EBUSY:
		return "directory already belongs to another watch of this "
		       "instance";
	case -EEXIST:
		return "object already watched (IN_MASK_CREATE)";
	case -ENOTDIR:
		return "not a directory (IN_ONLYDIR or recursive watch)";
	case -EACCES:
		return "permission denied: the object is not readable";
	case -ESTALE:
		return "a recursive watch lost track of a directory (its path "
		       "changed under it); rescan it";
	case -ENOMEM:
		return "out of memory";
	default:
		if (err < 0 && err > -4096)
			return strerror(-err);
		return "unknown error";
	}
}
