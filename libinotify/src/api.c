// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The public API: instances, watch calls, reading, errors, versions.
 * Everything below it is internal (inofd__*, hidden).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend.h"
#include "dispatch.h"
#include "fanotify.h"

#define OPTS_END(type, field)	(offsetof(struct type, field) + \
				 sizeof(((struct type *)0)->field))

#define FORCE_FLAGS	(INOFD_FORCE_KERNEL | INOFD_FORCE_PROCFD | \
			 INOFD_FORCE_FANOTIFY)
#define KNOWN_FLAGS	(FORCE_FLAGS | INOFD_RAW_MOVES)

/*
 * No padding anywhere in the options structs: a plain initialiser (what
 * INOFD_OPTS() is) zeroes every byte only if every byte is a field.
 */
_Static_assert(sizeof(struct inofd_opts) ==
	       sizeof(size_t) + 4 * sizeof(unsigned int) &&
	       sizeof(struct inofd_opts) == OPTS_END(inofd_opts, queue_max),
	       "struct inofd_opts has padding");
_Static_assert(sizeof(struct inofd_tree_opts) ==
	       sizeof(size_t) + sizeof(const char *const *) +
	       2 * sizeof(unsigned int) + sizeof(void *) &&
	       sizeof(struct inofd_tree_opts) ==
	       OPTS_END(inofd_tree_opts, data),
	       "struct inofd_tree_opts has padding");

/* A size-versioned struct: known fields, then zeros. */
static int opts_ok(const void *o, size_t sz, size_t min, size_t known)
{
	size_t i;

	if (sz < min)
		return -EINVAL;
	for (i = known; i < sz; i++)
		if (((const unsigned char *)o)[i])
			return -EINVAL;
	return 0;
}

/* What inofd_new() takes from its options and the environment. */
struct new_cfg {
	unsigned int flags, pair_ms, coalesce_ms, qmax;
};

/* Read and check the caller's options (NULL: all defaults). */
static int new_cfg_read(struct new_cfg *c, const struct inofd_opts *opts)
{
	int r;

	memset(c, 0, sizeof(*c));
	if (opts) {
		r = opts_ok(opts, opts->sz, OPTS_END(inofd_opts, sz),
			    OPTS_END(inofd_opts, queue_max));
		if (r)
			return r;
		if (opts->sz >= OPTS_END(inofd_opts, flags))
			c->flags = opts->flags;
		if (opts->sz >= OPTS_END(inofd_opts, pair_timeout_ms))
			c->pair_ms = opts->pair_timeout_ms;
		if (opts->sz >= OPTS_END(inofd_opts, coalesce_ms))
			c->coalesce_ms = opts->coalesce_ms;
		if (opts->sz >= OPTS_END(inofd_opts, queue_max))
			c->qmax = opts->queue_max;
	}
	if (c->flags & ~KNOWN_FLAGS)
		return -EINVAL;
	/* forcing two backends at once means nothing */
	if ((c->flags & FORCE_FLAGS) & ((c->flags & FORCE_FLAGS) - 1))
		return -EINVAL;
	if (c->pair_ms > 60000 || c->coalesce_ms > 3600000)
		return -EINVAL;
	return 0;
}

/*
 * The environment forces a backend only when the caller did not.  A
 * value it does not know is ignored: a knob must not stop programs.
 */
static unsigned int env_backend(unsigned int flags)
{
	const char *env;

	if (flags & FORCE_FLAGS)
		return flags;
	env = secure_getenv("INOFD_BACKEND");
	if (env && !strcmp(env, "kernel"))
		flags |= INOFD_FORCE_KERNEL;
	else if (env && !strcmp(env, "procfd"))
		flags |= INOFD_FORCE_PROCFD;
	else if (env && !strcmp(env, "fanotify"))
		flags |= INOFD_FORCE_FANOTIFY;
	return flags;
}

int inofd_new(struct inofd **out, const struct inofd_opts *opts)
{
	struct new_cfg c;
	unsigned int flags;
	struct inofd *in;
	int r;

	if (!out)
		return -EINVAL;
	*out = NULL;
	r = new_cfg_read(&c, opts);
	if (r)
		return r;
	flags = env_backend(c.flags);

	in = calloc(1, sizeof(*in));
	if (!in)
		return -ENOMEM;
	in->ifd = in->epfd = in->mwake = in->mfd = -1;
	in->flags = flags;
	in->pair_ms = c.pair_ms ? c.pair_ms : INOFD__PAIR_MS;
	in->id_moved = -1;
	in->coalesce_ms = c.coalesce_ms;
	in->qmax = c.qmax ? c.qmax : INOFD_QUEUE_MAX;
	r = inofd__table_init(in);
	if (r)
		goto err;
	in->bufsz = INOFD__READ_BUF;
	in->buf = malloc(in->bufsz);
	if (!in->buf) {
		r = -ENOMEM;
		goto err;
	}
	/* (a fanotify backend replaces it: inofd__backend_pick()) */
	if (!(flags & INOFD_FORCE_FANOTIFY)) {
		in->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (in->ifd < 0) {
			r = -errno;
			goto err;
		}
	}
	r = inofd__backend_pick(in);
	if (r)
		goto err;
	r = inofd__mounts_init(in);
	if (r)
		goto err;
	*out = in;
	return 0;
err:
	inofd_free(in);
	return r;
}

void inofd_free(struct inofd *in)
{
	if (!in)
		return;
	inofd__mounts_free(in);
	if (in->ifd >= 0)
		close(in->ifd);
	inofd__backend_free(in);
	inofd__walk_free(in);
	inofd__pend_free(in);
	free(in->xw.to);
	free(in->placed);
	inofd__table_free(in);
	inofd__q_free(in);
	free(in->buf);
	free(in->buf2);
	free(in);
}

int inofd_fd(const struct inofd *in)
{
	return in ? inofd__mounts_fd(in) : -EINVAL;	/* mounts.c */
}

int inofd_backend(const struct inofd *in)
{
	return in ? in->backend : -EINVAL;
}

int inofd_watch_count(const struct inofd *in)
{
	return in ? (int)in->nuser : -EINVAL;
}

/* ---- watches -------------------------------------------------------- */

#define EVENT_BITS	(IN_ALL_EVENTS | IN_UNMOUNT)
#define KNOWN_BITS	(EVENT_BITS | IN_ONLYDIR | IN_DONT_FOLLOW | \
			 IN_EXCL_UNLINK | IN_MASK_CREATE | IN_MASK_ADD | \
			 IN_ONESHOT)

static int check_mask(uint32_t mask)
{
	if (mask & ~KNOWN_BITS)
		return -EINVAL;
	if (!(mask & EVENT_BITS))
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

/*
 * The absolute path of what (dirfd, path) named, made when the watch is
 * made: a later chdir() changes nothing.  NULL when it cannot be known,
 * or with errno ENOMEM when there was no memory for it.
 */
static char *abs_path(int dirfd, const char *path, int fd)
{
	char cwd[PATH_MAX], *p;

	errno = 0;

	if (path[0] == '/')
		return strdup(path);
	p = fd_path(fd);
	if (p || dirfd != AT_FDCWD)
		return p;
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (!*path)
		return strdup(cwd);
	if (asprintf(&p, "%s/%s", strcmp(cwd, "/") ? cwd : "", path) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	return p;
}

/*
 * A tree's root path: what the root is, symlinks resolved, at watch time
 * (inofd_watch_tree_at(3)).  The kernel's own name for the directory
 * (/proc/self/fd), else realpath(3) of what was given, else that as given.
 * Every ancestor of the root is then a real directory, which the chain
 * above the root watches (tree.c); a symlink changed later changes
 * nothing, as it does not change what the watches hold.
 */
static char *real_path(int dirfd, const char *path, int fd)
{
	char *p, *q;

	errno = 0;
	p = fd_path(fd);
	if (p || errno == ENOMEM)
		return p;
	p = abs_path(dirfd, path, fd);
	if (!p)
		return NULL;	/* errno ENOMEM when there was no memory */
	q = realpath(p, NULL);
	if (!q) {
		if (errno != ENOMEM)
			return p;	/* the path as given: the best known */
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	free(p);
	return q;
}

/* Watch fd for a new plain registration; takes ownership of path. */
static int add_plain(struct inofd *in, int fd, uint32_t mask, void *data,
		     char *path, const struct inofd__fan_at *at)
{
	struct inofd__reg *r = NULL;
	struct inofd__kw *kw;
	struct stat st;
	uint32_t kmask;
	uint64_t born, raw = 0;
	bool fan = in->backend == INOFD_BACKEND_FANOTIFY;
	int wd;

	inofd__stream_finish(in);	/* what was read comes before it */
	born = inofd__stream_now(in);	/* before the kernel's mark */
	if (fan)
		raw = inofd__fan_now(in);	/* where its path is taken */

	/*
	 * The kernel mark is shared by every registration on the object:
	 * it only ever grows (IN_MASK_ADD), each registration filters its
	 * own events, and IN_ONESHOT is the library's (one registration
	 * fires once; the others stay).  IN_MOVE_SELF says the path is stale.
	 */
	kmask = (mask & ~(IN_ONESHOT | IN_MASK_ADD | IN_MASK_CREATE)) |
		IN_MOVE_SELF;
	kmask |= (mask & IN_MASK_CREATE) ? IN_MASK_CREATE : IN_MASK_ADD;
	if (fstat(fd, &st) < 0)
		memset(&st, 0, sizeof(st));
	/* a non-directory: IN_ATTRIB says a link went (dispatch.c's
	 * name_check()) */
	if (st.st_mode && !S_ISDIR(st.st_mode))
		kmask |= IN_ATTRIB;
	wd = inofd__backend_add_at(in, fd, kmask, at);
	if (wd < 0)
		goto fail;
	kw = inofd__kw_get(in, wd, st.st_dev, st.st_ino);
	if (!kw) {
		inofd__backend_rm(in, wd);
		wd = -ENOMEM;
		goto fail;
	}
	kw->kmask |= kmask & EVENT_BITS;
	r = inofd__reg_new(in, INOFD__REG_PLAIN);
	if (r)
		r->root = inofd__mem_new(in, r, kw, INOFD__MEM_PLAIN);
	if (!r || !r->root) {
		if (r)
			inofd__reg_free(in, r);
		inofd__kw_put(in, kw, true);
		wd = -ENOMEM;
		goto fail;
	}
	r->mask = mask & EVENT_BITS;
	r->oneshot = mask & IN_ONESHOT;
	r->file = st.st_mode && !S_ISDIR(st.st_mode);
	r->lnk = S_ISLNK(st.st_mode);
	r->data = data;
	r->path = path;
	inofd__born(in, r, born);
	/*
	 * fanotify's born follows the records the backend made of what the
	 * group held (inofd__stream_now()); without memory for those, it is
	 * where the unread records start, so where the path was taken is
	 * said by a record of the backend's own as well (without room for
	 * it, the path counts as taken at born).
	 */
	r->seen = born;
	if (fan && inofd__fan_seen(in, raw, r->id) == 0)
		r->seen = UINT64_MAX;
	return r->id;
fail:
	free(path);
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
	/*
	 * An fd has no final symlink to follow or not: refused here, on
	 * every backend, never dropped in silence (tests/unit/test_core.c,
	 * dont_follow).  The kernel's INOTIFY_IOC_WATCH takes it and ignores
	 * it, as fanotify_mark() does with an fd; the library's answer does
	 * not depend on which kernel it runs on.
	 */
	if (mask & IN_DONT_FOLLOW)
		return -EINVAL;
	return add_plain(in, fd, mask, data, fd_path(fd), NULL);
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

static int check_at_args(const struct inofd *in, const char *path,
			 uint32_t mask, unsigned int flags)
{
	if (!in || !path || (flags & ~AT_FLAGS))
		return -EINVAL;
	return check_mask(mask);
}

/*
 * A stock kernel's fanotify marks an object by a descriptor open on it,
 * not an O_PATH one (a directory's O_PATH fd is accepted as the base of
 * "."): a regular file named by (dirfd, path) is opened again for
 * reading, and kept only if it is the object resolved first.  Its close
 * after the mark is seen (IN_CLOSE_NOWRITE; IN_OPEN too on a watch of its
 * directory): documented in inofd_backend(3).  Anything else is left to
 * the backend (-EBADF).  A kernel with the fanotify series takes the
 * O_PATH fd itself: nothing is opened again
 * (inofd__backend_takes_opath()).
 */
static int fan_reopen(int dirfd, const char *path, unsigned int flags,
		      int fd)
{
	struct stat a, b;
	int rfd;

	if (fstat(fd, &a) < 0 || !S_ISREG(a.st_mode))
		return -1;
	if (!*path && (flags & INOFD_AT_EMPTY_PATH))
		return -1;	/* dirfd itself: nothing to open again */
	rfd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_NOCTTY |
		     O_CLOEXEC | ((flags & INOFD_AT_SYMLINK_NOFOLLOW) ?
				  O_NOFOLLOW : 0));
	if (rfd < 0)
		return -1;
	if (fstat(rfd, &b) < 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(rfd);
		return -1;
	}
	return rfd;
}

int inofd_watch_at(struct inofd *in, int dirfd, const char *path,
		   uint32_t mask, unsigned int flags, void *data)
{
	bool own;
	int fd, r, rfd = -1;
	char *p;

	r = check_at_args(in, path, mask, flags);
	if (r)
		return r;
	/* IN_DONT_FOLLOW is honoured here, where a name is resolved */
	if (mask & IN_DONT_FOLLOW)
		flags |= INOFD_AT_SYMLINK_NOFOLLOW;
	mask &= ~IN_DONT_FOLLOW;
	/* the path is resolved once, here; the watch is made on the result */
	fd = open_at(dirfd, path, flags,
		     (mask & IN_ONLYDIR) ? O_DIRECTORY : 0, &own);
	if (fd < 0)
		return fd;
	if (own && !inofd__backend_takes_opath(in))
		rfd = fan_reopen(dirfd, path, flags, fd);
	p = abs_path(dirfd, path, fd);
	if (!p && errno == ENOMEM)	/* all or nothing: no watch without it */
		r = -ENOMEM;
	else
		r = add_plain(in, rfd >= 0 ? rfd : fd, mask, data, p,
			      own ? &(struct inofd__fan_at){ dirfd, path,
					flags & INOFD_AT_SYMLINK_NOFOLLOW } : NULL);
	if (rfd >= 0)
		close(rfd);
	if (own)
		close(fd);
	return r;
}

int inofd_watch_path(struct inofd *in, const char *path, uint32_t mask,
		     void *data)
{
	return inofd_watch_at(in, AT_FDCWD, path, mask, 0, data);
}

#define TREE_KEPT	(INOFD_TREE_XDEV | INOFD_TREE_MEMBER_ENDS)
#define TREE_FLAGS	(AT_FLAGS | TREE_KEPT)

/* The options a tree keeps; the call's own flags go to *flags. */
static int copy_tree_opts(struct inofd__reg *r,
			  const struct inofd_tree_opts *o, unsigned int *flags)
{
	size_t n = 0, i;
	int e;

	*flags = 0;
	if (!o)
		return 0;
	e = opts_ok(o, o->sz, OPTS_END(inofd_tree_opts, sz),
		    OPTS_END(inofd_tree_opts, data));
	if (e)
		return e;
	if (o->sz >= OPTS_END(inofd_tree_opts, flags)) {
		if (o->flags & ~TREE_FLAGS)
			return -EINVAL;
		r->tflags = o->flags & TREE_KEPT;
		*flags = o->flags & AT_FLAGS;
	}
	if (o->sz >= OPTS_END(inofd_tree_opts, max_depth))
		r->max_depth = o->max_depth;
	if (o->sz >= OPTS_END(inofd_tree_opts, data))
		r->data = o->data;
	if (o->sz < OPTS_END(inofd_tree_opts, exclude) || !o->exclude)
		return 0;
	/* a pattern matches a name: one with a '/' would match nothing */
	while (o->exclude[n])
		if (!*o->exclude[n] || strchr(o->exclude[n++], '/'))
			return -EINVAL;
	r->exclude = calloc(n + 1, sizeof(*r->exclude));
	if (!r->exclude)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (!(r->exclude[i] = strdup(o->exclude[i])))
			return -ENOMEM;
	return 0;
}

static int walk_root(struct inofd *in, struct inofd__reg *r, int fd,
		     const struct stat *st)
{
	static const int job = 1;
	struct inofd__work *wh = in->whead, *wt = in->wtail;
	struct inofd__work *dh = in->dhead, *dt = in->dtail, *w;
	bool rescan = in->rescan_due, crawl = in->crawl_due;
	struct inofd__kw *kw;
	int wd, e;

	wd = inofd__backend_add(in, fd, inofd__tree_kmask(r));
	if (wd < 0)
		return wd;
	kw = inofd__kw_get(in, wd, st->st_dev, st->st_ino);
	if (!kw) {
		inofd__backend_rm(in, wd);
		return -ENOMEM;
	}
	kw->kmask |= inofd__tree_kmask(r) & EVENT_BITS;
	r->root = inofd__mem_new(in, r, kw, INOFD__MEM_NODE);
	if (!r->root) {
		inofd__kw_put(in, kw, true);
		return -ENOMEM;
	}
	r->gen = r->root->gen = 1;
	/* this walk alone, to the end: the steps of other walks wait */
	in->whead = in->wtail = NULL;
	in->dhead = in->dtail = NULL;
	in->walk_err = 0;
	e = inofd__work_push(in, &(struct inofd__step){
			.kind = INOFD__W_LIST, .reg = r, .wd = wd,
			.name = NULL, .synth = false, .crawl = 0,
			.job = job, .root_wd = -1 });
	if (!e) {
		inofd__mounts_walk(in);
		e = in->walk_err;
		/*
		 * A step of this walk that did not run (no memory for the
		 * listing buffers): the walk did not reach everything, and
		 * the call is all or nothing.
		 */
		if (!e && in->whead)
			e = -ENOMEM;
	}
	if (e) {
		/* this walk's steps go with it, and what it made due */
		while ((w = in->whead)) {
			in->whead = w->next;
			free(w);
		}
		in->wtail = NULL;
		in->rescan_due = rescan;
		in->crawl_due = crawl;
	}
	/* what met a moving path is tried again at the next read */
	if (in->dhead) {
		in->dtail->next = dh;
		dh = in->dhead;
		if (!dt)
			dt = in->dtail;
	}
	in->whead = wh;
	in->wtail = wt;
	in->dhead = dh;
	in->dtail = dt;
	return e;
}

int inofd_watch_tree_at(struct inofd *in, int dirfd, const char *path,
			uint32_t mask, const struct inofd_tree_opts *opts)
{
	struct inofd__reg *r;
	unsigned int flags;
	size_t mark;
	struct stat st;
	bool own, first;
	int fd, e;

	e = check_at_args(in, path, mask, 0);
	if (e)
		return e;
	/* a tree is one owner of many watches: no per-call mask games */
	if (mask & (IN_MASK_ADD | IN_MASK_CREATE | IN_ONESHOT))
		return -EINVAL;
	inofd__stream_finish(in);	/* what was read comes before it */
	r = inofd__reg_new(in, INOFD__REG_TREE);
	if (!r)
		return -ENOMEM;
	e = copy_tree_opts(r, opts, &flags);
	if (e) {
		inofd__reg_free(in, r);
		return e;
	}
	if (mask & IN_DONT_FOLLOW)
		flags |= INOFD_AT_SYMLINK_NOFOLLOW;
	fd = open_at(dirfd, path, flags, O_DIRECTORY, &own);
	if (fd < 0) {
		inofd__reg_free(in, r);
		return fd;
	}
	if (fstat(fd, &st) < 0)
		e = -errno;
	else if (!S_ISDIR(st.st_mode))
		e = -ENOTDIR;
	if (e) {
		inofd__reg_free(in, r);
		goto out;
	}
	r->mask = mask & EVENT_BITS;
	r->dev = st.st_dev;
	r->path = real_path(dirfd, path, fd);
	if (!r->path && errno == ENOMEM) {
		e = -ENOMEM;	/* all or nothing: no tree without its path */
		inofd__reg_free(in, r);
		goto out;
	}
	inofd__born(in, r, inofd__stream_now(in));	/* before its marks */
	first = inofd__mounts_tree_new(in);	/* the table as the walk starts */
	mark = inofd__q_mark(in);
	e = walk_root(in, r, fd, &st);
	if (e < 0) {
		/* all or nothing: a failed walk leaves no watch behind */
		inofd__reg_end(in, r, false, 0);
		inofd__q_rollback(in, mark);	/* and no report about it */
		inofd__mounts_tree_failed(in, first);
		goto out;
	}
	inofd__tree_link_parent(in, r, fd);
	inofd__mounts_tree_made(in, r);
	e = r->id;
out:
	if (own)
		close(fd);
	return e;
}

int inofd_unwatch(struct inofd *in, int wd)
{
	struct inofd__reg *r;

	if (!in)
		return -EINVAL;
	inofd__stream_finish(in);	/* its events read so far come first */
	r = inofd__reg_find(in, wd);
	if (!r || r->owe_end)		/* ended: its IN_IGNORED is owed */
		return -EINVAL;
	/* its IN_IGNORED is queued now, with its data: the moment to free it */
	inofd__reg_end(in, r, true, INOFD_EVF_SYNTHETIC);
	return 0;
}

int inofd_wd_path(const struct inofd *in, int wd, const char **path)
{
	struct inofd__reg *r = in ? inofd__reg_find(in, wd) : NULL;

	if (!r || !path)
		return -EINVAL;
	*path = (r->lost || r->moving) ? NULL : r->path;
	return 0;
}

int inofd_wd_path_copy(const struct inofd *in, int wd, char *buf, size_t size)
{
	struct inofd__reg *r = in ? inofd__reg_find(in, wd) : NULL;
	size_t len;

	if (!r || !buf)
		return -EINVAL;
	if (r->lost || r->moving || !r->path)
		return -ENOENT;
	len = strlen(r->path);
	if (len >= size || len > INT_MAX)
		return -ERANGE;
	memcpy(buf, r->path, len + 1);
	return (int)len;
}

int inofd_wd_data(const struct inofd *in, int wd, void **data)
{
	struct inofd__reg *r = in ? inofd__reg_find(in, wd) : NULL;

	if (!r || !data)
		return -EINVAL;
	*data = r->data;
	return 0;
}

/* ---- events --------------------------------------------------------- */

int inofd_read(struct inofd *in)
{
	return in ? inofd__read(in) : -EINVAL;
}

/* The end of what the queue's cursor knew: look again, then stream. */
static __attribute__((noinline)) int next_slow(struct inofd *in,
					       const struct inofd_event **ev)
{
	*ev = inofd__q_next(in);
	/* none queued: a batch still streaming makes its next events */
	if (!*ev && inofd__stream_more(in))
		*ev = inofd__q_next(in);
	return *ev != NULL;
}

/* A leaf while the cursor has events: a compare and an increment. */
int inofd_next(struct inofd *in, const struct inofd_event **ev)
{
	struct inofd_event *e;

	if (__builtin_expect(!in || !ev, 0))
		return -EINVAL;
	e = in->qr;
	if (__builtin_expect(e == in->qrend, 0))
		return next_slow(in, ev);
	in->qr = e + 1;
	*ev = e;
	return 1;
}

int inofd_timeout(const struct inofd *in)
{
	return in ? inofd__timeout(in) : -EINVAL;
}

/* ---- errors and versions -------------------------------------------- */

static const struct {
	int err;
	const char *text;
} errors[] = {
	{ 0, "success" },
	{ ENOSPC, "inotify watch limit reached "
		  "(raise fs.inotify.max_user_watches)" },
	{ EMFILE, "inotify instance or file descriptor limit reached "
		  "(fs.inotify.max_user_instances, RLIMIT_NOFILE)" },
	{ ENFILE, "system-wide file descriptor limit reached" },
	{ ENOSYS, "no backend: the kernel lacks INOTIFY_IOC_WATCH, /proc is not "
		  "mounted and fanotify is unavailable (or the forced backend "
		  "is missing)" },
	{ EBADF, "bad file descriptor" },
	{ EINVAL, "invalid argument (mask, flags, watch descriptor, options, "
		  "or an object that cannot be watched: anonymous inode, "
		  "namespace file)" },
	{ EEXIST, "object already watched (IN_MASK_CREATE)" },
	{ ENOTDIR, "not a directory (IN_ONLYDIR or recursive watch)" },
	{ EACCES, "permission denied: the object is not readable" },
	{ EPERM, "operation not permitted" },
	{ ENOENT, "no such file or directory" },
	{ ELOOP, "too many symbolic links, or a symbolic link where none "
		 "may be followed" },
	{ ENAMETOOLONG, "file name too long" },
	{ ESTALE, "a recursive watch lost track of a directory (its path "
		  "changed where the library cannot see); rescan it" },
	{ ENOMEM, "out of memory" },
	{ EINTR, "interrupted" },
	{ EAGAIN, "try again" },
	{ EIO, "input/output error" },
	{ EFAULT, "bad address" },
	{ ENOTTY, "inappropriate ioctl (no INOTIFY_IOC_WATCH in this kernel)" },
	{ EOPNOTSUPP, "not supported here: the fanotify backend cannot mark "
		      "this file system (no file handles: overlayfs before "
		      "6.6), or mounts inside a recursive watch cannot be "
		      "seen (/proc/self/mountinfo cannot be opened)" },
	{ ENODEV, "no such device" },
	{ EOVERFLOW, "value too large" },
};

const char *inofd_strerror(int err)
{
	size_t i;

	for (i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (-errors[i].err == err)
			return errors[i].text;
	return "unknown error";
}

unsigned int inofd_major_version(void)
{
	return INOFD_VERSION_MAJOR;
}

unsigned int inofd_minor_version(void)
{
	return INOFD_VERSION_MINOR;
}
