// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Mounts inside recursive watches.
 *
 * A directory of a tree that is mounted over is still watched by the
 * library (a watch holds an inode, not a path), but its path now leads to
 * the mount's root, which nobody watches; after the umount the path leads
 * to the covered directory again.  The kernel says neither to inotify.
 * The mount namespace's table does change, and /proc/self/mountinfo says
 * so to poll(2) (POLLPRI|POLLERR, once per open file and change).
 *
 * Two descriptors of it, opened at the first tree (an instance that makes
 * none holds neither): mwake sits in the epoll instance inofd_fd()
 * returns, so that the caller's poll wakes; whoever polls the epoll
 * instance consumes its change, so the library cannot learn from it that
 * the table changed.  mfd is polled (and read) by the library only, after
 * each batch of records: if the table changed, its mount points are
 * compared, by mount id, with the last table's, and each mount point that
 * came, went or moved, and every mount point now (a umount and a mount
 * at one place can leave the table as it was, line for line), that lies
 * inside a tree is looked at by identity:
 * the node the tree holds for that path is compared (st_dev, st_ino) with
 * what the path leads to now (and, on fanotify, fsid and handle: another
 * tmpfs may take a dead one's numbers).  A node that is not what the path shows
 * (covered, or a mount that went) goes with its subtree, and the directory
 * the path shows is watched and walked as a new one, after an
 * INOFD_EV_RESCAN with the tree's wd naming that directory.  A mount over
 * the root, or over a directory above it, leaves the root where no path
 * leads: the tree is lost (INOFD_EVF_LOST), as for any such move.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "backend.h"
#include "mounts.h"

#define MOUNTINFO	"/proc/self/mountinfo"
#define MNT_NS		"/proc/self/ns/mnt"
#define PROC_MAGIC	0x9fa0	/* PROC_SUPER_MAGIC */
#define MAX_TRIES	3	/* table reads for a mount not placed */

/* The mount table, from procfs only: anything else never says a change. */
static int open_info(void)
{
	int fd = open(MOUNTINFO, O_RDONLY | O_CLOEXEC);
	struct statfs sfs;

	if (fd < 0)
		return -errno;
	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_MAGIC) {
		close(fd);
		return -ENOENT;
	}
	return fd;
}

static ino_t ns_ino(void)
{
	struct stat st;

	return stat(MNT_NS, &st) == 0 ? st.st_ino : 0;
}

static void close_info(struct inofd *in)
{
	if (in->mwake >= 0) {
		epoll_ctl(in->epfd, EPOLL_CTL_DEL, in->mwake, NULL);
		close(in->mwake);
	}
	if (in->mfd >= 0)
		close(in->mfd);
	in->mwake = in->mfd = -1;
	in->mknown = false;
}

/*
 * Descriptors a tree's walk goes on with when short of them (a directory
 * at a time: tree.c).  The table is opened just before a tree's walk, and
 * must leave them: the tree is what the caller asked for, and it works
 * without the table (saying that mounts are not seen).  RLIMIT_NOFILE is
 * what this sees; a system-wide ENFILE comes at the walk's own opens.
 */
#define WALK_FDS	2

static int room_left(int fd)
{
	int d[WALK_FDS], i, e = 0;

	for (i = 0; i < WALK_FDS; i++) {
		d[i] = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (d[i] < 0) {
			e = -errno;
			break;
		}
	}
	while (i--)
		close(d[i]);
	return e;
}

/*
 * The mountinfo descriptors of the namespace the process is in now, made
 * at the first tree (not by inofd_new(): an instance without a tree needs
 * no table), or at a tree made after a change of namespace.
 */
static void open_infos(struct inofd *in)
{
	struct epoll_event e = { .events = EPOLLPRI };
	int a, b;

	close_info(in);
	a = open_info();
	b = a < 0 ? a : open_info();
	if (a < 0 || b < 0) {
		if (a >= 0)
			close(a);
		in->merr = a < 0 ? a : b;
		return;
	}
	e.data.fd = a;
	in->merr = room_left(b);
	if (!in->merr && epoll_ctl(in->epfd, EPOLL_CTL_ADD, a, &e) < 0)
		in->merr = -errno;
	if (in->merr) {
		close(a);
		close(b);
		return;
	}
	in->mwake = a;
	in->mfd = b;
	in->mns = ns_ino();
}

int inofd__mounts_init(struct inofd *in)
{
	struct epoll_event e = { .events = EPOLLIN };

	in->mwake = in->mfd = -1;
	in->merr = 0;
	in->epfd = epoll_create1(EPOLL_CLOEXEC);
	/* main-loop friendly as the inotify descriptor was (never read) */
	if (in->epfd >= 0 && fcntl(in->epfd, F_SETFL, O_NONBLOCK) == 0) {
		e.data.fd = in->ifd;
		/* the table waits for the first tree: open_infos() */
		if (epoll_ctl(in->epfd, EPOLL_CTL_ADD, in->ifd, &e) == 0)
			return 0;
	}
	/*
	 * No epoll instance (RLIMIT_NOFILE, memory): the instance still
	 * works, inofd_fd() is the backend's descriptor itself, and mounts
	 * are not seen (each tree says so).
	 */
	in->merr = -errno;
	if (in->epfd >= 0)
		close(in->epfd);
	in->epfd = -1;
	return 0;
}

void inofd__mounts_walk(struct inofd *in)
{
	bool out = in->epfd >= 0 && !in->ifd_out &&
		   epoll_ctl(in->epfd, EPOLL_CTL_DEL, in->ifd, NULL) == 0;

	inofd__walk_run(in, 0);
	if (out) {
		in->ifd_out = true;
		inofd__mounts_back(in);
	}
}

bool inofd__mounts_back(struct inofd *in)
{
	struct epoll_event e = { .events = EPOLLIN, .data.fd = in->ifd };

	if (!in->ifd_out)
		return true;
	/* added, it is polled at once: what was queued makes it readable */
	if (epoll_ctl(in->epfd, EPOLL_CTL_ADD, in->ifd, &e) < 0 &&
	    errno != EEXIST)
		return false;
	in->ifd_out = false;
	return true;
}

int inofd__mounts_fd(const struct inofd *in)
{
	return in->epfd >= 0 ? in->epfd : in->ifd;
}

/* \ooo escapes of a mountinfo field (space, tab, newline, backslash) */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

static int cmp_mnt(const void *a, const void *b)
{
	const struct inofd__mnt *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

/* The table now: its text in *bufp (paths unescaped in place), its mounts
 * by id in *tabp.  0 or -errno. */
static int read_table(int fd, char **bufp, struct inofd__mnt **tabp, size_t *np)
{
	size_t cap = 16384, len = 0, n = 0, tcap = 0;
	struct inofd__mnt *tab = NULL;
	char *buf = malloc(cap), *line, *end;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				goto nomem;
			buf = nb;
			cap *= 2;
		}
		k = pread(fd, buf + len, cap - len - 1, (off_t)len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = -errno;

			free(buf);
			return e;
		}
		if (k == 0)
			break;
		len += (size_t)k;
	}
	buf[len] = '\0';
	for (line = buf; line < buf + len; line = end + 1) {
		char *f[5], *s = line;
		int i;

		end = strchr(line, '\n');
		if (!end)
			end = buf + len;
		*end = '\0';
		/* id parent major:minor root mountpoint ... */
		for (i = 0; i < 5; i++) {
			while (*s == ' ')
				s++;
			f[i] = s;
			s += strcspn(s, " ");
			if (*s)
				*s++ = '\0';
		}
		if (!*f[4] || *f[4] != '/')
			continue;
		unescape(f[4]);
		if (n == tcap) {
			struct inofd__mnt *nt;

			tcap = tcap ? tcap * 2 : 64;
			nt = realloc(tab, tcap * sizeof(*tab));
			if (!nt)
				goto nomem;
			tab = nt;
		}
		tab[n].id = atoi(f[0]);
		tab[n].off = (size_t)(f[4] - buf);
		tab[n].src = (size_t)(f[2] - buf);
		n++;
	}
	qsort(tab, n, sizeof(*tab), cmp_mnt);
	*bufp = buf;
	*tabp = tab;
	*np = n;
	return 0;
nomem:
	free(buf);
	free(tab);
	return -ENOMEM;
}

/* A mount point that came, went or moved. */
struct item {
	const char	*path;		/* absolute, real */
	int		id;
	bool		here;		/* in the table now */
	bool		own;		/* path is malloc()ed */
};

/* Same device and root (two NUL-terminated fields, one after the other)? */
static bool same_src(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);

	return la == lb && !memcmp(a, b, la) && !strcmp(a + la + 1, b + lb + 1);
}

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	/* one path once: the one in the table now first */
	return c ? c : (int)y->here - (int)x->here;
}

/* Mount id's point is entry name of tree r's node of kernel watch wd. */
static void record(struct inofd *in, int id, int reg, int wd,
		   const char *name, const struct stat *st)
{
	struct inofd__mrec *v;
	size_t i;

	for (i = 0; i < in->nmrec; i++) {
		v = &in->mrec[i];
		if (v->mnt == id && v->reg == reg) {
			if (v->wd == wd && !strcmp(v->name, name) &&
			    (!st || (v->dev == st->st_dev &&
				     v->ino == st->st_ino)))
				return;
			break;
		}
	}
	if (i == in->nmrec) {
		if (in->nmrec == in->mreccap) {
			size_t cap = in->mreccap ? in->mreccap * 2 : 8;

			v = realloc(in->mrec, cap * sizeof(*v));
			if (!v)
				return;	/* its umount falls back on its path */
			in->mrec = v;
			in->mreccap = cap;
		}
		in->mrec[in->nmrec].name = NULL;
		in->nmrec++;
	}
	v = &in->mrec[i];
	free(v->name);
	v->mnt = id;
	v->reg = reg;
	v->wd = wd;
	v->dev = st ? st->st_dev : 0;
	v->ino = st ? st->st_ino : 0;
	v->name = strdup(name);
	if (!v->name)
		*v = in->mrec[--in->nmrec];
}

static void unrecord(struct inofd *in, size_t i)
{
	free(in->mrec[i].name);
	in->mrec[i] = in->mrec[--in->nmrec];
}

/*
 * A mount over the root or above it came or went: is the root still where
 * its path leads?  If not, and its watch died with its mount (a file
 * system unmounted: inotify says IN_UNMOUNT, which fanotify never says),
 * the tree ends as the kernel ends a watch there, IN_UNMOUNT then
 * IN_IGNORED (issue 26); a root that lives on where no path of the tree
 * leads (covered, or a bind mount gone) is lost.  True if r was freed.
 */
static bool root_hidden(struct inofd *in, struct inofd__reg *r)
{
	struct stat st;

	if (stat(r->path, &st) == 0 && st.st_dev == r->root->kw->dev &&
	    st.st_ino == r->root->kw->ino &&
	    inofd__backend_same(in, r->root->kw->wd, r->path))
		return false;
	if (!inofd__backend_live(in, r->root->kw->wd)) {
		inofd__emit(in, r->root, INOFD_EV_INOTIFY,
			    &(struct inofd__raw){ IN_UNMOUNT | IN_ISDIR, 0,
						  NULL },
			    INOFD_EVF_SYNTHETIC);
		inofd__reg_end(in, r, true, INOFD_EVF_SYNTHETIC);
		return true;
	}
	inofd__tree_lost(in, r);
	return false;
}

/*
 * The directory p (entry name of node m) shows something else than it did:
 * the subtree the tree holds there (old, if any) goes, an INOFD_EV_RESCAN
 * names the directory, and it is watched and walked again.  gone: the
 * mount the tree held there went and the kernel's IN_UNMOUNT of it was
 * not read (that ends the directory's node first): the RESCAN has
 * IN_UNMOUNT too, so that each mount gone is told once.
 */
static void replace(struct inofd *in, struct inofd__reg *r,
		    struct inofd__mem *m, struct inofd__mem *old,
		    const char *name, bool gone)
{
	char *nm = strdup(name);

	if (!nm) {
		in->rescan_due = in->crawl_due = true;
		return;
	}
	if (old)
		inofd__subtree_free(in, old);
	inofd__emit(in, m, INOFD_EV_RESCAN,
		    &(struct inofd__raw){ IN_Q_OVERFLOW | IN_ISDIR |
					  (gone ? IN_UNMOUNT : 0), 0, nm },
		    INOFD_EVF_SYNTHETIC | INOFD__COPY_NAME);
	if (inofd__work_push(in, &(struct inofd__step){
			.kind = INOFD__W_NEWDIR, .reg = r, .wd = m->kw->wd,
			.name = nm, .synth = false, .crawl = 0,
			.job = 0, .root_wd = -1 }) < 0)
		in->rescan_due = in->crawl_due = true;
	free(nm);
}

/*
 * Is the mount at m/name, of identity st, another name of a directory tree
 * r holds elsewhere (mount --bind t/a t/b)?  Then its identity does not
 * say where it is: its record keeps the parent and the name only.
 */
static bool alias(struct inofd *in, struct inofd__reg *r,
		  const struct inofd__mem *m, const char *name,
		  const struct stat *st)
{
	int wd = inofd__kwd_of(in, st->st_dev, st->st_ino);
	struct inofd__kw *kw = wd >= 0 ? inofd__kw_find(in, wd) : NULL;
	struct inofd__mem *c = kw ? inofd__mem_of(kw, r) : NULL;

	return c && (c->parent != m || !c->name || strcmp(c->name, name));
}

/*
 * Mount point it (absolute, real) came, went or moved; tree r's root is
 * really at root (rl bytes).  look: act on it (else only record where a
 * mount in the table is).  True if r was freed (its mount went).
 */
static bool one_point(struct inofd *in, struct inofd__reg *r,
		      const char *root, size_t rl, const struct item *it,
		      bool look)
{
	const char *p = it->path, *s;
	size_t pl = strlen(p);
	struct inofd__mem *m = r->root, *c;
	char comp[NAME_MAX + 1];
	struct stat st;

	/* over the root or a directory above it */
	if (pl <= rl && !strncmp(root, p, pl) &&
	    (pl == rl || p[pl - 1] == '/' || root[pl] == '/')) {
		return look && root_hidden(in, r);
	}
	/* below the root? */
	if (rl == 1)
		s = p + 1;
	else if (pl > rl + 1 && !strncmp(root, p, rl) && p[rl] == '/')
		s = p + rl + 1;
	else
		return false;
	for (;;) {
		size_t len = strcspn(s, "/");

		if (!len || len > NAME_MAX)
			return false;
		memcpy(comp, s, len);
		comp[len] = '\0';
		s += len;
		c = inofd__node_child(m, comp);
		if (!*s)
			break;
		if (!c) {
			/*
			 * Not watched (excluded, too deep), or not yet: a
			 * walk to come may reach it, or records not read
			 * yet rename what leads to it.  Then the table is
			 * read again after the next batch (its paths are
			 * current then); for the records, a few times.
			 */
			if (inofd__walk_pending(in) || in->dhead ||
			    (in->mtries < MAX_TRIES &&
			     inofd__tree_wants(r, m, comp, r->dev)))
				in->mretry = true;
			return false;
		}
		m = c;
		s++;
	}
	if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
		if (it->here)
			record(in, it->id, r->id, m->kw->wd, comp, NULL);
		if (!look)
			return false;
		/* the table does not match the names: a re-walk says */
		if (c)
			in->rescan_due = in->crawl_due = true;
		return false;
	}
	if (it->here)
		record(in, it->id, r->id, m->kw->wd, comp,
		       alias(in, r, m, comp, &st) ? NULL : &st);
	if (!look)
		return false;
	/* (dev, ino) may be another tmpfs's: the backend checks further */
	if (c && st.st_dev == c->kw->dev && st.st_ino == c->kw->ino &&
	    inofd__backend_same(in, c->kw->wd, p))
		return false;		/* what the tree holds: no change */
	if (!c && !inofd__tree_wants(r, m, comp, st.st_dev))
		return false;
	replace(in, r, m, c, comp, c && !it->here);
	return false;
}

/* Every tree (or only tree only), for each mount point of v (sorted:
 * shallow first). */
static void act(struct inofd *in, const struct item *v, size_t n,
		struct inofd__reg *only)
{
	unsigned int i;

	for (i = 0; i < in->regsize; i++) {
		struct inofd__reg *r, *next;

		for (r = in->regtab[i]; r; r = next) {
			char *root;
			size_t k, rl;

			next = r->hnext;
			if (r->kind != INOFD__REG_TREE || !r->root ||
			    r->lost || r->moving || !r->path ||
			    (only && r != only))
				continue;
			/*
			 * mountinfo's paths are real: so is the root's, made
			 * real at watch time (api.c) and renamed since by
			 * records all applied (the table is read after
			 * EAGAIN).  Its path leading nowhere is no reason to
			 * look away: the mount that held it may have gone.
			 */
			root = realpath(r->path, NULL);
			if (!root && errno == ENOMEM) {
				in->rescan_due = in->crawl_due = true;
				continue;
			}
			if (!root && !(root = strdup(r->path)))
				continue;
			rl = strlen(root);
			for (k = 0; k < n && !r->lost; k++)
				if (one_point(in, r, root, rl, &v[k], !only))
					break;	/* r ended */
			free(root);
		}
	}
}

/*
 * Where mount id, which went, was: its recorded parent node's real path
 * now and its name, for each tree that held it (or its old path alone).
 */
static size_t went(struct inofd *in, int id, const char *old, struct item *v)
{
	size_t i = 0, n = 0;

	while (i < in->nmrec) {
		struct inofd__mrec *x = &in->mrec[i];
		struct inofd__reg *r = inofd__reg_find(in, x->reg);
		struct inofd__kw *kw = inofd__kw_find(in, x->wd);
		struct inofd__mem *m = r && kw ? inofd__mem_of(kw, r) : NULL;
		const char *dir, *name = x->name;
		char *real, *p;
		size_t dl;

		if (x->mnt != id) {
			i++;
			continue;
		}
		/* the mount's root, by identity, wherever renames took it */
		if (r && x->ino) {
			int nwd = inofd__kwd_of(in, x->dev, x->ino);
			struct inofd__kw *nkw = nwd >= 0 ?
						inofd__kw_find(in, nwd) : NULL;
			struct inofd__mem *c = nkw ? inofd__mem_of(nkw, r) :
					       NULL;

			/*
			 * Not where it was recorded, whose parent the tree
			 * still holds: the tree holds that directory under
			 * another name, of which the mount was a second one
			 * (mount --bind t/a t/b with t/a made in the same
			 * batch, not watched yet when the mount was seen, so
			 * alias() could not tell): it went where it was.
			 */
			if (c && c->parent && c->name &&
			    (!m || (c->parent == m && !strcmp(c->name, name)))) {
				m = c->parent;
				name = c->name;
			}
		}
		dir = m ? inofd__mem_path(in, m, &dl) : NULL;
		real = dir ? realpath(dir, NULL) : NULL;
		if (real && asprintf(&p, "%s%s%s", real,
				     strcmp(real, "/") ? "/" : "",
				     name) > 0) {
			v[n++] = (struct item){ .path = p, .id = id,
						.here = false, .own = true };
		} else if (r) {
			/*
			 * Where it was in tree r is not known any more (the
			 * directory it was recorded under is not the tree's:
			 * oracle seed 132 -N -X -R -M -C -E -W -Y -U, after a
			 * loss and renames above the root): the directory it
			 * uncovered is found by a crawl, and a RESCAN says so.
			 */
			in->rescan_due = in->crawl_due = true;
		}
		free(real);
		unrecord(in, i);
	}
	if (!n)
		v[n++] = (struct item){ .path = old, .id = id };
	return n;
}

/*
 * Is mount id, whose path in the table is now p, on the directory entry it
 * was recorded on (a rename above it changed its path, not its place)?
 */
static bool same_place(struct inofd *in, int id, const char *p)
{
	const char *base = strrchr(p, '/');
	struct inofd__kw *kw;
	struct stat st;
	char *dir;
	size_t i;
	int e;

	if (!base || base == p || !base[1])
		return false;
	for (i = 0; i < in->nmrec && in->mrec[i].mnt != id; i++)
		;
	if (i == in->nmrec || strcmp(in->mrec[i].name, base + 1) ||
	    !(kw = inofd__kw_find(in, in->mrec[i].wd)) ||
	    !(dir = strndup(p, (size_t)(base - p))))
		return false;
	e = stat(dir, &st);
	free(dir);
	return !e && st.st_dev == kw->dev && st.st_ino == kw->ino;
}

/*
 * The mount points that came, went or moved from the last table to this
 * one (tab, n, its paths in buf), into v (room for 2 * n + 2 * nmtab +
 * nmrec items): by id, a mount in the last table only went, one in this
 * table only came, one in both with another path or source moved (or went
 * and its id was taken again).  placed: a mount that went is placed by
 * what was recorded when it was seen (went(), which forgets the record);
 * else by its last path only, and a mount whose path changed by a rename
 * above it is no change.  The number of items.
 */
static size_t diff(struct inofd *in, const char *buf,
		   const struct inofd__mnt *tab, size_t n, struct item *v,
		   bool placed)
{
	size_t i, j, nv = 0;

	for (i = j = 0; i < in->nmtab || j < n;) {
		const struct inofd__mnt *o = i < in->nmtab ? &in->mtab[i] : NULL;
		const struct inofd__mnt *w = j < n ? &tab[j] : NULL;
		const char *op = o ? in->mnames + o->off : NULL;
		const char *np = w ? buf + w->off : NULL;
		bool gone = o && (!w || o->id < w->id);
		bool came = w && (!o || w->id < o->id);

		if (!gone && !came &&
		    (strcmp(op, np) || !same_src(in->mnames + o->src,
						  buf + w->src)) &&
		    (placed || !same_place(in, w->id, np)))
			gone = came = true;	/* moved, or id taken again */
		if (gone && placed)
			nv += went(in, o->id, op, v + nv);
		else if (gone)
			v[nv++] = (struct item){ .path = op, .id = o->id };
		if (came)
			v[nv++] = (struct item){ .path = np, .id = w->id,
						 .here = true };
		if (o && (!w || o->id <= w->id))
			i++;
		if (w && (!o || w->id <= o->id))
			j++;
	}
	return nv;
}

/* v (nv items, their paths freed here if own): each path once, shallow
 * first, acted on in every tree. */
static void act_all(struct inofd *in, struct item *v, size_t nv)
{
	size_t i, k;

	qsort(v, nv, sizeof(*v), cmp_item);
	for (i = k = 0; i < nv; i++) {
		if (k && !strcmp(v[k - 1].path, v[i].path)) {
			if (v[i].own)
				free((char *)v[i].path);
			continue;
		}
		v[k++] = v[i];
	}
	act(in, v, k, NULL);
	for (i = 0; i < k; i++)
		if (v[i].own)
			free((char *)v[i].path);
}

/*
 * The table changed (or a mount was not placed: every): act on what
 * changed from the last table to this one (without memory for it, every
 * tree is walked again instead).
 */
static void changes(struct inofd *in, const char *buf,
		    const struct inofd__mnt *tab, size_t n, bool every)
{
	/* two items per mount that moved, one per tree holding one that
	 * went, and every mount of the table now */
	struct item *v = malloc((3 * n + 2 * in->nmtab + in->nmrec + 1) *
				sizeof(*v));
	size_t i, nv;

	if (!v) {
		in->rescan_due = in->crawl_due = true;
		return;
	}
	nv = diff(in, buf, tab, n, v, true);
	/*
	 * Every mount where it is now, too (the same ones: no change).  A
	 * umount and a mount at one place can leave the table as it was,
	 * line for line: the mount id, the anonymous device number and the
	 * root are reused (a tmpfs unmounted and another mounted, in one
	 * batch).  Identity says.
	 */
	if (every)
		for (i = 0; i < n; i++)
			v[nv++] = (struct item){ .path = buf + tab[i].off,
						 .id = tab[i].id,
						 .here = true };
	if (nv)
		act_all(in, v, nv);
	free(v);
}

/* The table is acted on: what inofd__mounts_peek() flagged is not any more
 * (the nodes it marked keep an old generation). */
static void stale_done(struct inofd *in)
{
	unsigned int i;
	struct inofd__reg *r;

	for (i = 0; i < in->regsize; i++)
		for (r = in->regtab[i]; r; r = r->hnext) {
			r->mstale = false;
			while (r->nmmark)
				free(r->mmark[--r->nmmark].name);
		}
	inofd__paths_changed(in);
}

void inofd__mounts_check(struct inofd *in)
{
	struct pollfd pf = { .fd = in->mfd, .events = POLLPRI };
	struct inofd__mnt *tab = NULL;
	size_t n = 0;
	char *buf = NULL;
	bool retry, changed;

	if (!in->mtrees || in->mfd < 0)
		return;
	/* POLLPRI once per change of the table (and open file); a change a
	 * peek consumed is in->mchanged */
	if (poll(&pf, 1, 0) < 0)
		return;
	retry = in->mretry;
	in->mretry = false;
	changed = (pf.revents & (POLLPRI | POLLERR)) || in->mchanged;
	in->mchanged = false;
	if (changed)
		in->mtries = 0;
	else if (retry)
		in->mtries++;
	else if (in->mknown)
		return;
	if (read_table(in->mfd, &buf, &tab, &n)) {
		/* not known: every tree is walked again, by identity */
		in->rescan_due = in->crawl_due = true;
		in->mknown = false;
		stale_done(in);
		return;
	}
	if (in->mknown)
		changes(in, buf, tab, n, retry || changed);
	free(in->mtab);
	free(in->mnames);
	in->mtab = tab;
	in->mnames = buf;
	in->nmtab = n;
	in->mknown = true;
	stale_done(in);
}

/* Tree r has events to flag until the table is acted on (stale_done()). */
static void stale_begin(struct inofd__reg *r)
{
	if (!r->mstale) {
		r->mstale = true;
		if (++r->mgen == 0)	/* 0: a node never marked */
			r->mgen = 1;
	}
}

/* Tree r's events on m and below are flagged until the table is acted on. */
static void mark(struct inofd__reg *r, struct inofd__mem *m)
{
	stale_begin(r);
	m->mgen = r->mgen;
}

/*
 * Entry name of node m and below, whatever node has that name by then: a
 * mount point the tree holds no node for yet (made, or renamed there, by
 * records not parsed yet).  Without memory, m and below.
 */
static void mark_name(struct inofd__reg *r, struct inofd__mem *m,
		      const char *name)
{
	struct inofd__mmark *v = realloc(r->mmark, (r->nmmark + 1) *
					 sizeof(*v));
	char *n = v ? strdup(name) : NULL;

	if (v)
		r->mmark = v;
	if (!n) {
		mark(r, m);
		return;
	}
	stale_begin(r);
	v[r->nmmark++] = (struct inofd__mmark){ .dir = m, .name = n };
}

/*
 * Tree r's directory of identity (dev, ino): its node, or NULL; *above:
 * the watch of the root's chain on it (a directory above the root).
 */
static struct inofd__mem *member(struct inofd *in, struct inofd__reg *r,
				 dev_t dev, ino_t ino,
				 struct inofd__mem **above)
{
	int wd = inofd__kwd_of(in, dev, ino);
	struct inofd__kw *kw = wd >= 0 ? inofd__kw_find(in, wd) : NULL;
	struct inofd__mem *m;

	*above = NULL;
	for (m = kw ? kw->mems : NULL; m; m = m->kwnext)
		if (m->reg == r && m->kind == INOFD__MEM_NODE)
			return m;
		else if (m->reg == r && m->kind == INOFD__MEM_PARENT)
			*above = m;
	return NULL;
}

/*
 * Mount point p, in the table now: by identity, not by the tree's paths
 * (the records that rename them are not parsed yet).  Its parent is a
 * directory of tree r: the node of its name is marked (or the parent, if
 * the tree holds no such node); a directory above the root: the root.
 */
static void peek_here(struct inofd *in, struct inofd__reg *r, const char *p)
{
	const char *base = strrchr(p, '/');
	struct inofd__mem *m, *c, *above;
	struct stat st;
	char *dir;

	if (!base || !base[1])
		base = NULL;	/* "/" itself: above every root */
	dir = strndup(p, base && base != p ? (size_t)(base - p) : 1);
	if (!dir || stat(dir, &st) < 0) {
		free(dir);
		return;
	}
	m = member(in, r, st.st_dev, st.st_ino, &above);
	if (!base || (above && !inofd__anc_beside(above, dir, base + 1)))
		mark(r, r->root);	/* on the chain, or not known */
	else if (m && (c = inofd__node_child(m, base + 1)))
		mark(r, c);
	else if (m)
		mark_name(r, m, base + 1);
	free(dir);
}

/*
 * Mount id, gone from the table (or moved away from old): where tree r
 * recorded it when it saw it (its root's identity, or its parent node and
 * name), or, not recorded in r (it was not inside: above the root, say),
 * old as a point of the table now.
 */
static void peek_gone(struct inofd *in, struct inofd__reg *r, int id,
		      const char *old)
{
	struct inofd__mem *above;
	bool found = false;
	size_t i;

	for (i = 0; i < in->nmrec; i++) {
		struct inofd__mrec *x = &in->mrec[i];
		struct inofd__kw *kw;
		struct inofd__mem *m = NULL, *c;

		if (x->mnt != id || x->reg != r->id)
			continue;
		found = true;
		if (x->ino)
			m = member(in, r, x->dev, x->ino, &above);
		if (m) {
			mark(r, m);
		} else if ((kw = inofd__kw_find(in, x->wd)) &&
			   (m = inofd__mem_of(kw, r))) {
			c = inofd__node_child(m, x->name);
			if (c)
				mark(r, c);
			else
				mark_name(r, m, x->name);
		} else {
			mark(r, r->root);	/* not found: all of it */
		}
	}
	if (!found)
		peek_here(in, r, old);
}

/*
 * Tree r, for each changed point of v; and every mount point recorded in
 * r, changed or not: a table that changed may have had a mount of the
 * tree elsewhere in between though its place now looks the same (moved
 * away and back between two looks: mount_moved_away_and_back), and
 * records read since may be from then, naming the mount's directories by
 * watch.
 */
static void peek_tree(struct inofd *in, struct inofd__reg *r,
		      const struct item *v, size_t nv)
{
	size_t i;

	for (i = 0; i < nv; i++)
		if (v[i].here)
			peek_here(in, r, v[i].path);
		else
			peek_gone(in, r, v[i].id, v[i].path);
	for (i = 0; i < in->nmrec; i++)
		if (in->mrec[i].reg == r->id)
			peek_gone(in, r, in->mrec[i].mnt, NULL);
}

/*
 * Records were just read (not parsed yet).  A mount change and records
 * have no common order: the kernel tells the one to mountinfo's poll and
 * the other to inotify, and the table is acted on only after the batch
 * (inofd__mounts_check(), which needs every record parsed).  Records read
 * after the table changed may be from after the change: a tree with a
 * mount point that came, went or moved inside it, on its root or above
 * it has no path it can vouch for, until the check has acted: it is
 * unsure, its events flagged INOFD_EVF_STALE_PATH.  A change seen here
 * was before every record read since the last look, and after every
 * record read before it: the flag is on exactly the records that may
 * follow the change.  (The poll consumes the change: in->mchanged tells
 * the check.)
 */
void inofd__mounts_peek(struct inofd *in)
{
	struct pollfd pf = { .fd = in->mfd, .events = POLLPRI };
	struct inofd__mnt *tab;
	struct item *v;
	size_t n, nv;
	unsigned int i;
	char *buf;

	if (!in->mtrees || in->mfd < 0 || !in->mknown ||
	    poll(&pf, 1, 0) <= 0 || !(pf.revents & (POLLPRI | POLLERR)))
		return;
	in->mchanged = true;
	if (read_table(in->mfd, &buf, &tab, &n)) {
		/* what changed is not known: every tree below, and a loss */
		buf = NULL;
		tab = NULL;
		n = 0;
		in->rescan_due = in->crawl_due = true;
	}
	v = malloc((2 * n + 2 * in->nmtab + 1) * sizeof(*v));
	/* not known where: every tree ("/" is above every root) */
	nv = v && buf ? diff(in, buf, tab, n, v, false) : 0;
	if (v && !buf)
		v[nv++] = (struct item){ .path = "/", .here = true };
	for (i = 0; v && i < in->regsize; i++) {
		struct inofd__reg *r;

		for (r = in->regtab[i]; r; r = r->hnext)
			if (r->kind == INOFD__REG_TREE && r->path &&
			    r->root && !r->lost)
				peek_tree(in, r, v, nv);
	}
	if (!v)	/* nothing can be flagged: a loss */
		in->rescan_due = in->crawl_due = true;
	inofd__paths_changed(in);
	free(v);
	free(buf);
	free(tab);
}

void inofd__mounts_free(struct inofd *in)
{
	if (in->epfd >= 0) {
		close_info(in);
		close(in->epfd);
	}
	in->epfd = -1;
	free(in->mtab);
	free(in->mnames);
	in->mtab = NULL;
	in->mnames = NULL;
	in->nmtab = 0;
	while (in->nmrec)
		unrecord(in, 0);
	free(in->mrec);
	in->mrec = NULL;
}

bool inofd__mounts_tree_new(struct inofd *in)
{
	bool first = !in->mtrees;

	in->mtrees = true;
	/*
	 * The first tree opens the table (its baseline is read just below:
	 * what changed before is no change); a tree made after a setns() or
	 * unshare() of the mount namespace follows it; a tree made after one
	 * that found no table (RLIMIT_NOFILE) tries again.
	 */
	if (in->epfd >= 0 && (in->mfd < 0 || ns_ino() != in->mns))
		open_infos(in);
	inofd__mounts_check(in);
	return first;
}

void inofd__mounts_tree_failed(struct inofd *in, bool first)
{
	if (!first)
		return;
	/* no tree after all: the instance as it was before, without a table */
	if (in->epfd >= 0) {
		close_info(in);
		in->merr = 0;
	}
	free(in->mtab);
	free(in->mnames);
	in->mtab = NULL;
	in->mnames = NULL;
	in->nmtab = 0;
	in->mtrees = in->mretry = false;
	in->mtries = 0;
}

void inofd__mounts_tree_made(struct inofd *in, struct inofd__reg *r)
{
	struct item *v;
	size_t i;

	if (in->mfd < 0 && r->root)
		inofd__error(in, r->root, NULL, -EOPNOTSUPP);
	if (!in->mknown || !in->nmtab || !r->root)
		return;
	/* where the mounts inside it are, for their umount */
	v = malloc(in->nmtab * sizeof(*v));
	if (!v)
		return;
	for (i = 0; i < in->nmtab; i++)
		v[i] = (struct item){ .path = in->mnames + in->mtab[i].off,
				      .id = in->mtab[i].id, .here = true };
	act(in, v, in->nmtab, r);
	free(v);
}
