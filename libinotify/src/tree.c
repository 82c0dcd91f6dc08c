// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Recursive watches.
 *
 * Every directory is opened with openat(parent, name, O_PATH | O_DIRECTORY |
 * O_NOFOLLOW), watched through that fd, listed through openat(fd, ".") and
 * closed: a name is resolved once, and a directory is watched before it is
 * listed, so an entry made at any time is either seen by the listing or
 * reported by the kernel (possibly both; never neither).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

#define DENTS_BUF	16384

static uint32_t tree_kmask(const struct tree *t)
{
	/*
	 * IN_MASK_ADD: a directory watched twice (bind mounts, a re-walk)
	 * keeps the bits it has.  IN_ONLYDIR: if a directory was replaced by
	 * something else between open and watch, fail rather than watch it.
	 */
	return t->user_mask | TREE_BITS | IN_ONLYDIR | IN_MASK_ADD;
}

/* Errors that stop a walk; anything else skips one directory. */
static bool fatal(int r)
{
	return r == -ENOSPC || r == -ENOMEM || r == -EMFILE || r == -ENFILE;
}

static bool is_ancestor(const struct watch *a, const struct watch *w)
{
	for (; w; w = w->parent)
		if (w == a)
			return true;
	return false;
}

int tree_add_dir(struct inofd *in, struct tree *t, struct watch *parent,
		 const char *name, int pathfd, bool synth, unsigned int gen,
		 struct watch **out)
{
	char *buf;
	unsigned int calls = 0;
	struct watch *w;
	int wd, dfd, r = 0;

	if (out)
		*out = NULL;
	wd = backend_add(in, pathfd, tree_kmask(t));
	if (wd < 0)
		return wd;
	w = watch_lookup(in, wd);
	if (w) {
		/* someone else's, on its way out, or met before in this walk
		 * (a bind mount loop): do not descend */
		if (w->tree != t || w->removing || w->gen == gen)
			return 0;
		/* ours, seen again by a re-walk: put it where it really is */
		if (parent && !is_ancestor(w, parent) &&
		    (w->parent != parent || !w->name || strcmp(w->name, name))) {
			char *nn = strdup(name);

			if (nn) {
				tree_unlink(w);
				free(w->name);
				w->name = nn;
				tree_link(parent, w);
			}
		}
	} else {
		w = watch_new(in, wd);
		if (!w) {
			backend_rm(in, wd);
			return -ENOMEM;
		}
		w->tree = t;
		t->members++;
		w->user_mask = t->user_mask;
		w->data = t->data;
		w->name = name ? strdup(name) : NULL;
		if (parent)
			tree_link(parent, w);
	}
	w->gen = gen;
	if (out)
		*out = w;

	/* the same directory, not the same name: no second lookup */
	dfd = openat(pathfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		r = -errno;
		if (fatal(r))
			return r;
		/* watched, but its entries cannot be listed: say so */
		report_error(in, w, NULL, r);
		return 0;
	}
	/* on the heap: one buffer per level of a possibly deep tree */
	buf = malloc(DENTS_BUF);
	if (!buf) {
		close(dfd);
		return -ENOMEM;
	}
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, DENTS_BUF);
		long off;

		if (n <= 0) {
			if (n == 0)
				calls++;
			break;
		}
		calls++;
		for (off = 0; off < n;) {
			struct dirent64 *de = (struct dirent64 *)(buf + off);
			const char *nm = de->d_name;
			bool isdir = de->d_type == DT_DIR;
			int cfd;

			off += de->d_reclen;
			if (nm[0] == '.' && (!nm[1] || (nm[1] == '.' && !nm[2])))
				continue;
			if (de->d_type == DT_UNKNOWN) {
				struct stat st;

				isdir = fstatat(dfd, nm, &st,
						AT_SYMLINK_NOFOLLOW) == 0 &&
					S_ISDIR(st.st_mode);
			}
			if (synth)
				emit_synthetic(in, w, IN_CREATE |
					       (isdir ? IN_ISDIR : 0), nm);
			if (!isdir)
				continue;
			cfd = openat(dfd, nm, O_PATH | O_DIRECTORY |
				     O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0) {
				/* gone or replaced since getdents: its
				 * events say so */
				if (errno == EMFILE || errno == ENFILE) {
					r = -errno;
					goto out;
				}
				continue;
			}
			r = tree_add_dir(in, t, w, nm, cfd, synth, gen, NULL);
			close(cfd);
			if (fatal(r))
				goto out;
			if (r < 0)
				report_error(in, w, nm, r);
			r = 0;
		}
	}
out:
	free(buf);
	close(dfd);
	/* what this listing made the kernel report: see own_noise() */
	w->self_open++;
	w->self_close++;
	w->self_access += calls;
	if (parent) {
		w->par_open++;
		w->par_close++;
		w->par_access += calls;
	}
	return r;
}

/*
 * Is this open/getdents/close event on a directory one our own listing
 * caused?  The kernel merges identical adjacent events, so the getdents
 * count is an upper bound: the close ends the listing and the count.
 */
bool own_noise(struct watch *w, uint32_t mask, bool parent)
{
	unsigned int *op = parent ? &w->par_open : &w->self_open;
	unsigned int *ac = parent ? &w->par_access : &w->self_access;
	unsigned int *cl = parent ? &w->par_close : &w->self_close;

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

struct watch *find_child(struct watch *w, const char *name)
{
	struct watch *c;

	if (!name)
		return NULL;
	for (c = w->child; c; c = c->next)
		if (c->name && !strcmp(c->name, name))
			return c;
	return NULL;
}

/*
 * Open the directory w stands for, by its path, and check it still is w:
 * re-adding the tree's bits to the same inode returns the same wd.
 */
static int reopen_checked(struct inofd *in, struct watch *w)
{
	char *dp = watch_path(w);
	int fd, wd;

	if (!dp)
		return -ESTALE;
	fd = open(dp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	free(dp);
	if (fd < 0)
		return fatal(-errno) ? -errno : -ESTALE;
	wd = backend_add(in, fd, tree_kmask(w->tree));
	if (wd == w->wd)
		return fd;
	/* something else lives at that path now: undo the stray watch */
	if (wd >= 0 && !watch_lookup(in, wd))
		backend_rm(in, wd);
	close(fd);
	return wd < 0 && fatal(wd) ? wd : -ESTALE;
}

/*
 * A directory appeared as name in w (created or moved in): watch it and
 * everything below it, and report what is already inside as synthetic
 * IN_CREATE events, since those entries may predate the new watches.
 * On failure the new subtree is left entirely unwatched and an
 * INOFD_EV_ERROR names it.
 */
void tree_event(struct inofd *in, struct watch *w, uint32_t mask,
		const char *name)
{
	struct watch *c = NULL;
	int dfd, cfd, r;

	(void)mask;
	dfd = reopen_checked(in, w);
	if (dfd < 0) {
		report_error(in, w, name, dfd);
		return;
	}
	cfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	r = -errno;
	close(dfd);
	if (cfd < 0) {
		/* removed or renamed already: the events that follow say so */
		if (r != -ENOENT && r != -ENOTDIR)
			report_error(in, w, name, r);
		return;
	}
	r = tree_add_dir(in, w->tree, w, name, cfd, true, ++in->gen, &c);
	close(cfd);
	if (r < 0) {
		/*
		 * c may be w or one of its ancestors (a bind mount of a
		 * directory below itself, or a tree out of date): it is not
		 * new then, and dropping it would drop w with it.
		 */
		if (c && !is_ancestor(c, w))
			remove_subtree(in, c);
		report_error(in, w, name, r);
	}
}

/*
 * The tree says w is somewhere the kernel just proved it is not: take it
 * (with what is below it) out of its place.  It stays watched, as a root
 * whose path is unknown, so its events come with a NULL path, and a
 * re-walk that meets it puts it back where it really is.
 */
static void lose_track(struct watch *w)
{
	tree_unlink(w);
	free(w->name);
	w->name = NULL;
}

/*
 * A directory left from_name in from_wd for to_name in to.  to is the
 * target of the event being processed: the caller still uses it, so it
 * is never freed here.
 */
void tree_moved(struct inofd *in, int from_wd, const char *from_name,
		struct watch *to, const char *to_name)
{
	struct watch *fw = watch_lookup(in, from_wd), *m = NULL;

	if (fw && fw->tree && !fw->removing)
		m = find_child(fw, from_name);
	if (m && is_ancestor(m, to)) {
		/*
		 * Moved into its own subtree (or into itself).  The kernel
		 * refuses such a rename, so the tree is out of date (events
		 * were lost): to is not below m, or m was not the directory at
		 * from_name.  Where to really is cannot be known: the caller
		 * is told to rescan (the error names to by its last known
		 * path), and to loses its place (paths below it become
		 * unknown, none is made up).  Then the rename is applied as
		 * the kernel reports it: m goes below to, nothing is
		 * unwatched.  If m is to, what moved in is not m, and to's
		 * path, needed to walk it, is unknown: the error says so.
		 */
		report_error(in, to, NULL, -ESTALE);
		lose_track(to);
		if (m == to)
			return;
	}
	if (m && to->tree == m->tree && !to->removing) {
		/* a rename inside one tree: the watches stay, the names move */
		char *nn = strdup(to_name);

		if (nn) {
			tree_unlink(m);
			free(m->name);
			m->name = nn;
			tree_link(to, m);
			return;
		}
	}
	/* left the tree (or went to another one, with another mask) */
	if (m)
		remove_subtree(in, m);
	if (to->tree && !to->removing)
		tree_event(in, to, IN_ISDIR, to_name);
}

void tree_moved_out(struct inofd *in, int from_wd, const char *from_name)
{
	struct watch *fw = watch_lookup(in, from_wd), *m;

	if (!fw || !fw->tree)
		return;
	m = find_child(fw, from_name);
	if (m)
		remove_subtree(in, m);
}

/* After an overflow: re-walk every tree to watch what was missed. */
void tree_rescan(struct inofd *in)
{
	unsigned int i, n = 0;
	int *roots;

	if (!in->nwatches)
		return;
	roots = malloc((size_t)in->nwatches * sizeof(*roots));
	if (!roots)
		return;
	for (i = 0; i < in->hsize; i++) {
		struct watch *w;

		for (w = in->htab[i]; w; w = w->hnext)
			if (w->tree && !w->parent && !w->removing)
				roots[n++] = w->wd;
	}
	for (i = 0; i < n; i++) {
		struct watch *w = watch_lookup(in, roots[i]);
		int fd, r;

		/* gone, or put back in its place by the walk of another root */
		if (!w || w->parent)
			continue;
		fd = reopen_checked(in, w);
		if (fd < 0) {
			report_error(in, w, NULL, fd);
			continue;
		}
		r = tree_add_dir(in, w->tree, NULL, NULL, fd, false, ++in->gen,
				 NULL);
		close(fd);
		if (r < 0)
			report_error(in, w, NULL, r);
	}
	free(roots);
}
