// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fanotify backend (DESIGN.md, "A fanotify backend for libinofd").
 *
 * One unprivileged group: FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
 * FAN_REPORT_FID (the FID record names a watched non-directory, whose own
 * events otherwise come with its parent's handle and its name only).
 * Objects are inode marks made by fd; each is known by (fsid, handle) and
 * numbered as inotify numbers its wds: from 1 up, one number per object
 * while it is watched.  read() gives inotify records made from the
 * fanotify ones:
 *   - a directory-entry event (create, delete, rename halves) goes to the
 *     directory's wd with the entry's name;
 *   - an event on a child goes to the directory's wd with the child's name
 *     and, when the child itself is watched, to its wd with no name;
 *   - an event on a watched directory itself (fanotify's name ".") goes to
 *     its wd with no name, IN_ISDIR from FAN_ONDIR;
 *   - FAN_RENAME (5.17+) becomes IN_MOVED_FROM + IN_MOVED_TO with one
 *     cookie of the backend's (fanotify has no cookies), either half alone
 *     when only one directory is watched;
 *   - FAN_DELETE_SELF is followed by IN_IGNORED (the kernel drops the mark
 *     with the inode and says nothing);
 *   - FAN_IGNORED (the project's fanotify series v2: patches/fanotify/,
 *     patches/6.12/fanotify/, patches/7.2/fanotify/),
 *     the last event of every mark that ends with its inode, becomes
 *     IN_UNMOUNT + IN_IGNORED when no FAN_DELETE_SELF ended the object
 *     before (the backend's marks are not evictable: the filesystem was
 *     shut down), nothing after one;
 *   - FAN_UNMOUNT (the series v1, in git history)
 *     becomes IN_UNMOUNT + IN_IGNORED, as inotify says it;
 *   - FAN_Q_OVERFLOW becomes IN_Q_OVERFLOW;
 *   - fanotify merges queued events of one object and name whatever their
 *     type: a merged mask is split into one record per bit, in the order
 *     of ORDER[] below; but a merged IN_CREATE|IN_DELETE (an unlink and a
 *     link of one inode: rm x; ln keep x) in the order the name says now
 *     (delete_first()).
 * Each is probed at open (probe_ignored(), probe_unmount()) and asked for
 * in every mark, FAN_IGNORED first.  Never reported: IN_UNMOUNT on a
 * kernel without either (fanotify drops inode marks at unmount silently:
 * the mount table tells the library of a tree's root, mounts.c, and
 * nothing tells it of a plain watch), events on a subdirectory itself
 * to its parent's watch
 * (fanotify names the subdirectory by its own handle, not by parent and
 * name).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "arena.h"
#include "fanotify.h"

#ifndef FAN_REPORT_DFID_NAME
#define FAN_REPORT_DIR_FID		0x00000400
#define FAN_REPORT_NAME			0x00000800
#define FAN_REPORT_DFID_NAME		(FAN_REPORT_DIR_FID | FAN_REPORT_NAME)
#endif
#ifndef FAN_RENAME
#define FAN_RENAME			0x10000000
#endif
#ifndef FAN_REPORT_TARGET_FID
#define FAN_REPORT_TARGET_FID		0x00001000
#endif
#ifndef FAN_EVENT_INFO_TYPE_DFID_NAME
#define FAN_EVENT_INFO_TYPE_DFID_NAME	2
#define FAN_EVENT_INFO_TYPE_DFID	3
#endif
#ifndef FAN_EVENT_INFO_TYPE_OLD_DFID_NAME
#define FAN_EVENT_INFO_TYPE_OLD_DFID_NAME 10
#define FAN_EVENT_INFO_TYPE_NEW_DFID_NAME 12
#endif
#ifndef MAX_HANDLE_SZ
#define MAX_HANDLE_SZ			128
#endif
/* the project's fanotify series (patches/fanotify/, patch 3) */
#ifndef FAN_UNMOUNT
#define FAN_UNMOUNT			0x00002000
#endif
/* the series v2 (patches/7.2/fanotify/, patch 3) */
#ifndef FAN_IGNORED
#define FAN_IGNORED			0x00400000
#endif

#define EVENT_BITS	(IN_ALL_EVENTS | IN_UNMOUNT)
/* directory-entry events: fanotify refuses them on a non-directory */
#define DIRENT_BITS	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO)
#define SELF_BITS	(IN_DELETE_SELF | IN_MOVE_SELF)

/*
 * The mask translation, in one place: inotify bit, fanotify bit.  The
 * order is the order in which a merged fanotify mask is reported.
 */
static const struct {
	uint32_t	in, fan;
} ORDER[] = {
	{ IN_CREATE,		FAN_CREATE },
	{ IN_MOVED_FROM,	FAN_MOVED_FROM },
	{ IN_MOVED_TO,		FAN_MOVED_TO },
	{ IN_OPEN,		FAN_OPEN },
	{ IN_ACCESS,		FAN_ACCESS },
	{ IN_MODIFY,		FAN_MODIFY },
	{ IN_ATTRIB,		FAN_ATTRIB },
	{ IN_CLOSE_WRITE,	FAN_CLOSE_WRITE },
	{ IN_CLOSE_NOWRITE,	FAN_CLOSE_NOWRITE },
	{ IN_DELETE,		FAN_DELETE },
	{ IN_MOVE_SELF,		FAN_MOVE_SELF },
	{ IN_DELETE_SELF,	FAN_DELETE_SELF },
};
#define NORDER	(sizeof(ORDER) / sizeof(ORDER[0]))

struct key {
	uint64_t	fsid;		/* __kernel_fsid_t's two words */
	int32_t		type;
	uint32_t	bytes;
	unsigned char	h[MAX_HANDLE_SZ];
};

struct obj {
	int		wd;
	uint32_t	imask;		/* inotify event bits asked for */
	bool		dir;
	bool		own_handle;	/* k.h from name_to_handle_at() */
	bool		stale;		/* (dev, ino) now another object's */
	bool		ending;		/* its IN_DELETE_SELF put off: later_end() */
	dev_t		dev;
	ino_t		ino;
	uint64_t	birth;		/* events read from here on are its */
	struct key	k;
	struct obj	*wnext, *knext, *inext;	/* by wd, key, dev+ino */
};

static void backlog(struct inofd *in);

#define NBUCKET	1024u
#define WIN_MAX	256u	/* grows with the objects: see grow() */

struct inofd__fan {
	struct obj	**bywd, **bykey, **byino;
	unsigned int	nb, nobj;
	int		next_wd;
	uint32_t	cookie;
	bool		no_rename;	/* FAN_RENAME refused: a kernel < 5.17 */
	bool		target_fid;	/* FAN_REPORT_TARGET_FID taken (5.17) */
	/*
	 * The kernel marks the object of an O_PATH fd (fdget_raw(): the
	 * project's fanotify series, patches/fanotify/): probed at open,
	 * learned again if a mark says EBADF.
	 */
	bool		opath;
	/* FAN_UNMOUNT taken (the series' patch 3): probed at open too */
	bool		unmount;
	/* FAN_IGNORED taken (the series v2): probed at open, used first */
	bool		ignored;
	/* fanotify bytes read but not turned into records yet */
	char		*sbuf;
	size_t		scap, spos, send;
	/*
	 * Records made and not handed out yet: what the group held when a
	 * registration was made (inofd__fan_staged()), so that it is born
	 * after them, as inotify's FIONREAD places it.
	 */
	char		*stage;
	size_t		stcap, stpos, stlen;
	uint64_t	consumed;	/* bytes read from the group so far */
	/*
	 * The renames read since the queue was last empty: (object, source)
	 * hashes.  fanotify merges an event into an identical one still
	 * queued, so a rename repeated after it was undone (a -> b, b -> a,
	 * a -> b) reads as a -> b, b -> a.  A rename back to a source of the
	 * same object in one window may hide such a merge: it is reported as
	 * a loss (IN_Q_OVERFLOW), and the library's rescan puts things right.
	 */
	uint64_t	win[WIN_MAX][2];
	unsigned int	nwin;
	uint64_t	win_end;	/* the queue was empty here: the window
					 * restarts when conversion reaches it */
	/*
	 * Records to put when conversion reaches raw, in order: the
	 * INOFD__SEEN records of plain watches, and the ends of objects
	 * whose FAN_DELETE_SELF came merged into an earlier event (raw
	 * UINT64_MAX until what the group holds is read: convert()).
	 */
	struct later {
		uint64_t	raw;
		int		wd;
		uint32_t	mask;
		uint32_t	cookie;
	}		*later;
	size_t		nlater, latercap;
};

static uint64_t mix(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ull;	/* FNV-1a */
	return h;
}

static unsigned int kslot(const struct inofd__fan *f, const struct key *k)
{
	uint64_t h = mix(0xcbf29ce484222325ull, &k->fsid, sizeof(k->fsid));

	h = mix(h, &k->type, sizeof(k->type));
	h = mix(h, k->h, k->bytes);
	return (unsigned int)(h % f->nb);
}

static unsigned int wslot(const struct inofd__fan *f, int wd)
{
	return (unsigned int)wd % f->nb;
}

static unsigned int islot(const struct inofd__fan *f, dev_t dev, ino_t ino)
{
	return (unsigned int)((ino * 31 + dev) % f->nb);
}

static bool key_eq(const struct key *a, const struct key *b)
{
	return a->fsid == b->fsid && a->type == b->type &&
	       a->bytes == b->bytes && !memcmp(a->h, b->h, a->bytes);
}

static struct obj *by_key(const struct inofd__fan *f, const struct key *k)
{
	struct obj *o;

	for (o = f->bykey[kslot(f, k)]; o; o = o->knext)
		if (key_eq(&o->k, k))
			return o;
	return NULL;
}

static struct obj *by_wd(const struct inofd__fan *f, int wd)
{
	struct obj *o;

	if (wd <= 0)
		return NULL;
	for (o = f->bywd[wslot(f, wd)]; o; o = o->wnext)
		if (o->wd == wd)
			return o;
	return NULL;
}

static struct obj *by_ino(const struct inofd__fan *f, dev_t dev, ino_t ino)
{
	struct obj *o;

	for (o = f->byino[islot(f, dev, ino)]; o; o = o->inext)
		if (!o->stale && o->dev == dev && o->ino == ino)
			return o;
	return NULL;
}

static void link_obj(struct inofd__fan *f, struct obj *o)
{
	unsigned int s;

	s = wslot(f, o->wd);
	o->wnext = f->bywd[s];
	f->bywd[s] = o;
	s = kslot(f, &o->k);
	o->knext = f->bykey[s];
	f->bykey[s] = o;
	s = islot(f, o->dev, o->ino);
	o->inext = f->byino[s];
	f->byino[s] = o;
}

static void unlink_obj(struct inofd__fan *f, struct obj *o)
{
	struct obj **pp;

	for (pp = &f->bywd[wslot(f, o->wd)]; *pp; pp = &(*pp)->wnext)
		if (*pp == o) {
			*pp = o->wnext;
			break;
		}
	for (pp = &f->bykey[kslot(f, &o->k)]; *pp; pp = &(*pp)->knext)
		if (*pp == o) {
			*pp = o->knext;
			break;
		}
	for (pp = &f->byino[islot(f, o->dev, o->ino)]; *pp; pp = &(*pp)->inext)
		if (*pp == o) {
			*pp = o->inext;
			break;
		}
}

static int alloc_tabs(struct inofd__fan *f, unsigned int nb)
{
	f->bywd = calloc(nb, sizeof(*f->bywd));
	f->bykey = calloc(nb, sizeof(*f->bykey));
	f->byino = calloc(nb, sizeof(*f->byino));
	f->nb = nb;
	if (f->bywd && f->bykey && f->byino)
		return 0;
	free(f->bywd);
	free(f->bykey);
	free(f->byino);
	return -ENOMEM;
}

/* Twice the buckets when there are twice as many objects (no failure:
 * a table that cannot grow stays as it is, only slower). */
static void grow(struct inofd__fan *f)
{
	struct obj **w = f->bywd, **k = f->bykey, **i = f->byino, *o, *next;
	unsigned int nb = f->nb, s;

	if (f->nobj < 2 * nb || alloc_tabs(f, 2 * nb)) {
		f->bywd = w;
		f->bykey = k;
		f->byino = i;
		f->nb = nb;
		return;
	}
	for (s = 0; s < nb; s++)
		for (o = w[s]; o; o = next) {
			next = o->wnext;
			link_obj(f, o);
		}
	free(w);
	free(k);
	free(i);
}

/*
 * Ask the group without adding a mark: remove one it does not have from
 * "/" opened with oflags.  The errno of FAN_MARK_REMOVE (0 if it
 * succeeded), or -1 when "/" cannot be opened.
 */
static int probe_remove(int g, int oflags, uint64_t mask)
{
	int fd, e;

	fd = open("/", oflags | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	e = fanotify_mark(g, FAN_MARK_REMOVE, mask, fd, NULL) < 0 ? errno : 0;
	close(fd);
	return e;
}

/*
 * Does the group take an O_PATH fd as the object of a mark?  ENOENT when
 * the fd was taken, EBADF when it was refused (fdget()).  Anything else
 * (no read permission on "/") says nothing: assume it was taken, and
 * let the first mark by an O_PATH fd decide (mark()).
 */
static bool probe_opath(int g)
{
	return probe_remove(g, O_PATH, FAN_CLOSE_WRITE) != EBADF;
}

/*
 * Does the group take FAN_UNMOUNT?  ENOENT (no mark on "/") where taken,
 * EINVAL where the bit is unknown.
 */
static bool probe_unmount(int g)
{
	return probe_remove(g, O_RDONLY, FAN_UNMOUNT | FAN_ONDIR) == ENOENT;
}

/*
 * Does the group take FAN_IGNORED?  ENOENT (no mark on "/") where taken,
 * EINVAL where the bit is unknown.
 */
static bool probe_ignored(int g)
{
	return probe_remove(g, O_RDONLY, FAN_IGNORED | FAN_ONDIR) == ENOENT;
}

int inofd__fan_open(struct inofd *in)
{
	struct inofd__fan *f;
	bool tfid;
	int g;

	/*
	 * FAN_REPORT_TARGET_FID (5.17): entry events carry the entry's own
	 * handle, so those of two objects under one name are not merged (two
	 * moves out of one name would be one, an rmdir and a mkdir of one
	 * name one CREATE|DELETE); without it, older kernels.
	 */
	g = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
			  FAN_REPORT_FID | FAN_REPORT_TARGET_FID |
			  FAN_NONBLOCK | FAN_CLOEXEC,
			  O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	tfid = g >= 0;
	if (g < 0 && errno == EINVAL)
		g = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
				  FAN_REPORT_FID | FAN_NONBLOCK | FAN_CLOEXEC,
				  O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (g < 0)
		return (errno == EINVAL || errno == ENOSYS) ? -ENOSYS : -errno;
	f = calloc(1, sizeof(*f));
	if (!f || alloc_tabs(f, NBUCKET)) {
		free(f);
		close(g);
		return -ENOMEM;
	}
	f->target_fid = tfid;
	f->next_wd = 1;
	f->opath = probe_opath(g);
	f->ignored = probe_ignored(g);
	f->unmount = !f->ignored && probe_unmount(g);
	if (in->ifd >= 0)
		close(in->ifd);
	in->ifd = g;
	in->fan = f;
	return 0;
}

bool inofd__fan_opath(const struct inofd *in)
{
	return in->fan && in->fan->opath;
}

void inofd__fan_free(struct inofd *in)
{
	struct inofd__fan *f = in->fan;
	struct obj *o, *next;
	unsigned int s;

	if (!f)
		return;
	for (s = 0; s < f->nb; s++)
		for (o = f->bywd[s]; o; o = next) {
			next = o->wnext;
			free(o);
		}
	free(f->bywd);
	free(f->bykey);
	free(f->byino);
	free(f->sbuf);
	free(f->stage);
	free(f->later);
	free(f);
	in->fan = NULL;
}

static uint32_t to_fan(uint32_t imask)
{
	uint32_t m = 0;
	size_t i;

	for (i = 0; i < NORDER; i++)
		if (imask & ORDER[i].in)
			m |= ORDER[i].fan;
	return m;
}

/* The kernel's dev_t of a stat(2) st_dev, as fdinfo prints it. */
static unsigned long kdev(dev_t d)
{
	return ((unsigned long)major(d) << 20) | minor(d);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* One fdinfo mark line: its ino and sdev, its handle into k; false if none */
static bool fdinfo_mark(const char *line, unsigned long *ino,
			unsigned long *sdev, struct key *k)
{
	unsigned int bytes, type;
	const char *p;
	size_t i;

	if (sscanf(line, "fanotify ino:%lx sdev:%lx", ino, sdev) != 2)
		return false;
	p = strstr(line, "fhandle-bytes:");
	if (!p || sscanf(p, "fhandle-bytes:%x fhandle-type:%x", &bytes,
			 &type) != 2 || bytes > MAX_HANDLE_SZ)
		return false;
	p = strstr(p, "f_handle:");
	if (!p)
		return false;
	p += strlen("f_handle:");
	for (i = 0; i < bytes; i++) {
		int hi = hexval(p[2 * i]), lo = hi < 0 ? -1 : hexval(p[2 * i + 1]);

		if (lo < 0)
			return false;
		k->h[i] = (unsigned char)(hi << 4 | lo);
	}
	k->type = (int32_t)type;
	k->bytes = bytes;
	return true;
}

/*
 * The handle of a marked object: name_to_handle_at() where the kernel has
 * it (CONFIG_FHANDLE), else the group's own fdinfo, which prints each
 * mark's handle.  -EOPNOTSUPP when neither can say.
 */
static int handle_of(struct inofd *in, int fd, const struct stat *st,
		     struct key *k, bool *own)
{
	struct {
		struct file_handle fh;
		unsigned char b[MAX_HANDLE_SZ];
	} h;
	char p[64], line[1024];
	int mnt, r = -EOPNOTSUPP;
	FILE *fi;

	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(fd, "", &h.fh, &mnt, AT_EMPTY_PATH) == 0) {
		k->type = h.fh.handle_type;
		k->bytes = h.fh.handle_bytes;
		memcpy(k->h, h.fh.f_handle, k->bytes);
		*own = true;
		return 0;
	}
	*own = false;
	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", in->ifd);
	fi = fopen(p, "re");
	if (!fi)
		return r;
	while (fgets(line, sizeof(line), fi)) {
		unsigned long ino, sdev;

		if (fdinfo_mark(line, &ino, &sdev, k) && ino == st->st_ino &&
		    sdev == kdev(st->st_dev)) {
			r = 0;
			break;
		}
	}
	fclose(fi);
	return r;
}

/*
 * Is fd's object (same dev, ino) still o's?  (dev, ino) do not say: a
 * tmpfs unmounted and another mounted takes the same anonymous device
 * number and root inode number, and fanotify says nothing when the first
 * one's superblock dies (no IN_UNMOUNT: its marks go silently).  Its fsid
 * (random per tmpfs on 6.18) or its handle (a random generation) differs.
 * false only when known to differ.
 */
static bool obj_is(const struct obj *o, int fd)
{
	struct {
		struct file_handle fh;
		unsigned char b[MAX_HANDLE_SZ];
	} h;
	struct statfs sfs;
	uint64_t fsid;
	int mnt;

	if (fstatfs(fd, &sfs) == 0) {
		memcpy(&fsid, &sfs.f_fsid, sizeof(fsid));
		if (fsid != o->k.fsid)
			return false;
	}
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (o->own_handle &&
	    name_to_handle_at(fd, "", &h.fh, &mnt, AT_EMPTY_PATH) == 0 &&
	    (h.fh.handle_type != o->k.type ||
	     h.fh.handle_bytes != o->k.bytes ||
	     memcmp(h.fh.f_handle, o->k.h, o->k.bytes)))
		return false;
	return true;
}

bool inofd__fan_same(struct inofd *in, int wd, const char *path)
{
	struct obj *o = by_wd(in->fan, wd);
	bool same;
	int fd;

	if (!o)
		return true;
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return true;	/* the caller's stat() said; nothing more */
	same = obj_is(o, fd);
	close(fd);
	return same;
}

static int mark(struct inofd *in, unsigned int flags, uint32_t fmask, int fd,
		bool dir, bool opath, const struct inofd__fan_at *at)
{
	int r;

	/*
	 * A kernel with the fanotify series takes an O_PATH fd as the object
	 * itself (a symlink's, taken with O_NOFOLLOW, marks the link).
	 */
	if (opath && in->fan->opath) {
		r = fanotify_mark(in->ifd, flags, fmask, fd, NULL);
		if (r == 0 || errno != EBADF)
			return r < 0 ? -errno : 0;
		in->fan->opath = false;	/* the probe could not tell */
	}
	/*
	 * Elsewhere an O_PATH fd is refused as the object (fdget()); a
	 * directory's is accepted as the base of the lookup of ".".  A
	 * non-directory's cannot be reopened without /proc: -EBADF, as for
	 * no fd, unless the caller named it (inofd_watch_at()): then fanotify
	 * looks the name up again, and the object is checked to be the one
	 * the fd holds.
	 */
	if (opath && !dir && at) {
		r = fanotify_mark(in->ifd, flags | (at->nofollow ?
						    FAN_MARK_DONT_FOLLOW : 0),
				  fmask, at->dirfd, at->path);
		return r < 0 ? -errno : 0;
	}
	if (opath && !dir)
		return -EBADF;
	r = fanotify_mark(in->ifd, flags, fmask, fd, opath ? "." : NULL);
	return r < 0 ? -errno : 0;
}

/* The fanotify mask of a mark asking for inotify's ev on a (dir)ectory */
static uint32_t fan_mask(const struct inofd__fan *f, uint32_t ev, bool dir)
{
	uint32_t fmask = to_fan(ev);

	if (dir && (fmask & (FAN_MOVED_FROM | FAN_MOVED_TO)) && !f->no_rename)
		fmask = (fmask & ~(FAN_MOVED_FROM | FAN_MOVED_TO)) | FAN_RENAME;
	if (dir)
		fmask |= FAN_EVENT_ON_CHILD | FAN_ONDIR;
	/* the end of the mark, whatever was asked: IN_IGNORED comes of it */
	fmask |= FAN_DELETE_SELF;
	if (f->ignored)
		fmask |= FAN_IGNORED;
	else if (f->unmount)
		fmask |= FAN_UNMOUNT;
	return fmask;
}

/*
 * Mark fd's object (st) with *fmask, without FAN_RENAME before 5.17
 * (*fmask then says what was marked): 0 or -errno.
 */
static int mark_add(struct inofd *in, uint32_t *fmask, uint32_t ev, int fd,
		    const struct stat *st, bool opath,
		    const struct inofd__fan_at *at)
{
	bool dir = S_ISDIR(st->st_mode);
	struct stat now;
	int r = mark(in, FAN_MARK_ADD, *fmask, fd, dir, opath, at);

	if (r == -EINVAL && (*fmask & FAN_RENAME)) {
		/* before 5.17: the two halves, no pairing (no cookies) */
		in->fan->no_rename = true;
		*fmask = (*fmask & ~FAN_RENAME) | (to_fan(ev) &
				(FAN_MOVED_FROM | FAN_MOVED_TO));
		r = mark(in, FAN_MARK_ADD, *fmask, fd, dir, opath, at);
	}
	if (r || !opath || dir || !at)
		return r;
	/* the name still names the fd's object: else the mark went to
	 * another one (a rename in between), which is left as is */
	if (fstatat(at->dirfd, at->path, &now, AT_EMPTY_PATH |
		    (at->nofollow ? AT_SYMLINK_NOFOLLOW : 0)) < 0 ||
	    now.st_dev != st->st_dev || now.st_ino != st->st_ino)
		return -EAGAIN;
	return 0;
}

/* A new object for fd's (st), marked with fmask: its wd, or -errno (the
 * mark taken back) */
static int obj_new(struct inofd *in, int fd, const struct stat *st,
		   uint32_t ev, uint32_t fmask, bool opath,
		   const struct inofd__fan_at *at)
{
	struct inofd__fan *f = in->fan;
	bool dir = S_ISDIR(st->st_mode), own = false;
	struct statfs sfs;
	struct obj *o;
	struct key k;
	int r;

	memset(&k, 0, sizeof(k));
	if (fstatfs(fd, &sfs) < 0)
		r = -errno;
	else
		r = handle_of(in, fd, st, &k, &own);
	o = r ? NULL : calloc(1, sizeof(*o));
	if (!o) {
		/* a mark nobody can route to: take it back */
		mark(in, FAN_MARK_REMOVE, fmask, fd, dir, opath, at);
		return r ? r : -ENOMEM;
	}
	memcpy(&k.fsid, &sfs.f_fsid, sizeof(k.fsid));
	o->k = k;
	o->wd = f->next_wd++;
	o->imask = ev;
	o->birth = f->consumed;
	o->dir = dir;
	o->own_handle = own;
	o->dev = st->st_dev;
	o->ino = st->st_ino;
	link_obj(f, o);
	f->nobj++;
	grow(f);
	return o->wd;
}

int inofd__fan_add(struct inofd *in, int fd, uint32_t mask,
		   const struct inofd__fan_at *at)
{
	struct inofd__fan *f = in->fan;
	uint32_t fmask, ev = mask & IN_ALL_EVENTS;
	struct stat st;
	struct obj *o;
	bool dir, opath;
	int fl, r;

	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fstat(fd, &st) < 0)
		return -EBADF;
	dir = S_ISDIR(st.st_mode);
	opath = fl & O_PATH;
	if ((mask & IN_ONLYDIR) && !dir)
		return -ENOTDIR;
	/*
	 * IN_EXCL_UNLINK has no fanotify equivalent: refused rather than
	 * ignored (events of unlinked children would be reported).
	 */
	if (mask & IN_EXCL_UNLINK)
		return -EINVAL;
	o = by_ino(f, st.st_dev, st.st_ino);
	if (o && !obj_is(o, fd)) {
		/*
		 * Its object is gone (its marks with it) and another took its
		 * numbers: it keeps its wd until the library lets go of it
		 * (the mount table says: mounts.c), this one is a new object.
		 */
		o->stale = true;
		o = NULL;
	}
	if (o && (mask & IN_MASK_CREATE))
		return -EEXIST;
	if (!dir)
		ev &= ~DIRENT_BITS;	/* never happen on a non-directory */
	fmask = fan_mask(f, ev, dir);
	/*
	 * What the group has queued now predates the watch: a mark the
	 * library let go of (inofd__fan_rm()) may have queued events of the
	 * object, and a watched directory those of its children, which are
	 * not the new watch's (inotify's would carry no wd of it).  They are
	 * read now, into the backlog, and a new object takes the events read
	 * after them.  (FIONREAD cannot say where they end: on 6.18 it counts
	 * 24 bytes per event, whatever its records.)
	 */
	if (!o)
		backlog(in);
	r = mark_add(in, &fmask, ev, fd, &st, opath, at);
	if (r)
		return r;
	if (!o)
		return obj_new(in, fd, &st, ev, fmask, opath, at);
	/* IN_MASK_ADD adds; otherwise the asked mask replaces ours (the
	 * kernel's mark only grows: we filter) */
	o->imask = (mask & IN_MASK_ADD) ? (o->imask | ev) : ev;
	return o->wd;
}

static void drop(struct inofd__fan *f, struct obj *o)
{
	unlink_obj(f, o);
	f->nobj--;
	free(o);
}

/*
 * fanotify removes a mark by naming its object, and the library keeps no
 * descriptor: the object leaves the table (nothing more is reported for
 * it) and the kernel's mark stays until the object is deleted or the
 * group closed (DESIGN.md).
 */
int inofd__fan_rm(struct inofd *in, int wd)
{
	struct obj *o = by_wd(in->fan, wd);

	if (!o)
		return -EINVAL;
	drop(in->fan, o);
	return 0;
}

int inofd__fan_live_wds(struct inofd *in, int **out, size_t *n)
{
	struct inofd__fan *f = in->fan;
	char p[64], line[1024];
	size_t cap = 0;
	int *v = NULL;
	FILE *fi;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", in->ifd);
	fi = fopen(p, "re");
	if (!fi)
		return -1;
	*n = 0;
	while (fgets(line, sizeof(line), fi)) {
		unsigned long ino, sdev;
		struct key k;
		struct obj *o;

		memset(&k, 0, sizeof(k));
		if (!fdinfo_mark(line, &ino, &sdev, &k))
			continue;
		/* the fsid is not printed: an object by ino, dev and handle */
		o = by_ino(f, makedev(sdev >> 20, sdev & 0xfffff), ino);
		if (o && (o->k.type != k.type || o->k.bytes != k.bytes ||
			  memcmp(o->k.h, k.h, k.bytes)))
			o = NULL;
		if (!o)
			continue;
		if (inofd__ints_push(&v, n, &cap, o->wd)) {
			free(v);
			fclose(fi);
			return -1;
		}
	}
	fclose(fi);
	*out = v;
	return 0;
}

/* ---- records -------------------------------------------------------- */

struct out {
	char	*p, *end;
	bool	full;
};

static void put(struct out *o, int wd, uint32_t mask, uint32_t cookie,
		const char *name)
{
	size_t nl = name ? strlen(name) : 0;
	size_t len = nl ? (nl + 1 + 15) & ~(size_t)15 : 0;
	struct inotify_event e = { .wd = wd, .mask = mask, .cookie = cookie,
				   .len = (uint32_t)len };

	if (o->full || (size_t)(o->end - o->p) < sizeof(e) + len) {
		o->full = true;
		return;
	}
	memcpy(o->p, &e, sizeof(e));
	o->p += sizeof(e);
	if (len) {
		memset(o->p, 0, len);
		memcpy(o->p, name, nl);
		o->p += len;
	}
}

/* Every bit of imask in ORDER[] (one record each) for object ob. */
static void put_bits(struct inofd__fan *f, struct out *o,
		     const struct obj *ob, uint32_t imask, uint32_t isdir,
		     const char *name)
{
	uint32_t ck;
	size_t i;

	if (!ob)
		return;
	imask &= ob->imask;
	for (i = 0; i < NORDER; i++) {
		if (!(imask & ORDER[i].in))
			continue;
		/* halves without FAN_RENAME: a cookie each, never paired */
		ck = 0;
		if (ORDER[i].in & (IN_MOVED_FROM | IN_MOVED_TO))
			ck = ++f->cookie ? f->cookie : ++f->cookie;
		/* inotify never puts IN_ISDIR on these two (inotify_fsnotify.c) */
		put(o, ob->wd, ORDER[i].in |
		    ((ORDER[i].in & SELF_BITS) ? 0 : isdir), ck, name);
	}
}

struct rec {
	struct key	k;
	const char	*name;		/* NULL: none */
	bool		have;
};

/* An info record's fsid, handle and name into r; false if malformed. */
static bool take(struct rec *r, const char *p, size_t len, bool named)
{
	const struct fanotify_event_info_fid *fi = (const void *)p;
	struct file_handle fh;
	const char *name;
	size_t hl;

	if (len < sizeof(*fi) + sizeof(fh))
		return false;
	memcpy(&fh, fi->handle, sizeof(fh));
	hl = sizeof(*fi) + sizeof(fh) + fh.handle_bytes;
	if (fh.handle_bytes > MAX_HANDLE_SZ || hl > len)
		return false;
	memset(&r->k, 0, sizeof(r->k));
	memcpy(&r->k.fsid, &fi->fsid, sizeof(r->k.fsid));
	r->k.type = fh.handle_type;
	r->k.bytes = fh.handle_bytes;
	memcpy(r->k.h, fi->handle + sizeof(fh), fh.handle_bytes);
	r->name = NULL;
	if (named) {
		name = p + hl;
		if (!memchr(name, '\0', len - hl))
			return false;
		r->name = name;
	}
	r->have = true;
	return true;
}

/* An object's hash, or an entry's (with name) */
static uint64_t key_hash(const struct key *k, const char *name)
{
	uint64_t h = mix(0xcbf29ce484222325ull, &k->fsid, sizeof(k->fsid));

	h = mix(h, &k->type, sizeof(k->type));
	h = mix(h, k->h, k->bytes);
	return name ? mix(h, name, strlen(name) + 1) : h;
}

/*
 * A rename of object c from (d, name) to (d2, name2): true when it goes
 * back to where the same object was renamed from earlier in the window
 * (see struct inofd__fan.win).  commit: record its source.
 */
static bool rename_back(struct inofd__fan *f, const struct rec *d,
			const struct rec *d2, const struct rec *c, bool commit)
{
	uint64_t obj, to, from;
	unsigned int i;
	bool back = false;

	if (!c->have)
		return false;	/* no target FID (before 5.17): no FAN_RENAME */
	obj = key_hash(&c->k, NULL);
	to = d2->have ? key_hash(&d2->k, d2->name) : 0;
	for (i = 0; to && i < f->nwin; i++)
		if (f->win[i][0] == obj && f->win[i][1] == to)
			back = true;
	if (!commit || !d->have)
		return back;
	from = key_hash(&d->k, d->name);
	if (f->nwin == WIN_MAX)
		return true;	/* no room to tell: a loss, and a new window */
	f->win[f->nwin][0] = obj;
	f->win[f->nwin++][1] = from;
	return back;
}

/* A record to put when conversion reaches raw (in order): 0 or -ENOMEM. */
static int later_add(struct inofd__fan *f, uint64_t raw, int wd,
		     uint32_t mask, uint32_t cookie)
{
	if (f->nlater == f->latercap) {
		size_t cap = f->latercap ? 2 * f->latercap : 8;
		struct later *n = realloc(f->later, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		f->later = n;
		f->latercap = cap;
	}
	f->later[f->nlater++] = (struct later){ .raw = raw, .wd = wd,
						.mask = mask, .cookie = cookie };
	return 0;
}

/*
 * o's end (end: IN_DELETE_SELF or IN_UNMOUNT, then IN_IGNORED) after what
 * the group holds: 0, -ENOMEM
 */
static int later_end(struct inofd__fan *f, struct obj *o, uint32_t end)
{
	if (later_add(f, UINT64_MAX, o->wd, end | INOFD__LATE, 0))
		return -ENOMEM;
	if (later_add(f, UINT64_MAX, o->wd, IN_IGNORED, 0)) {
		f->nlater--;
		return -ENOMEM;
	}
	return 0;
}

static struct obj *at_pos(struct obj *o, uint64_t pos)
{
	return o && pos >= o->birth ? o : NULL;
}

/*
 * path's handle as fanotify reports it: one to compare, not to open
 * (AT_HANDLE_FID, 6.5).  overlayfs gives no other kind without nfs_export
 * (EOPNOTSUPP); elsewhere the two are the same.  An older kernel refuses
 * the flag (EINVAL): then a plain one.
 */
#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID	0x200
#endif
static int fid_at(int dirfd, const char *path, struct file_handle *fh,
		  int flags)
{
	unsigned int sz = fh->handle_bytes;
	int mnt;

	if (!name_to_handle_at(dirfd, path, fh, &mnt, flags | AT_HANDLE_FID))
		return 0;
	if (errno != EINVAL)
		return -1;
	fh->handle_bytes = sz;
	return name_to_handle_at(dirfd, path, fh, &mnt, flags);
}

/*
 * Does path hold c's object now (by its handle)?  -1: no handle can be
 * taken to compare (a kernel without CONFIG_FHANDLE says ENOSYS).
 */
static int holds(const char *path, const struct rec *c)
{
	struct {
		struct file_handle fh;
		unsigned char b[MAX_HANDLE_SZ];
	} h;

	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (fid_at(AT_FDCWD, path, &h.fh, 0))
		return errno == ENOSYS || errno == EOPNOTSUPP ? -1 : 0;
	return h.fh.handle_type == c->k.type &&
	       h.fh.handle_bytes == c->k.bytes &&
	       !memcmp(h.fh.f_handle, c->k.h, c->k.bytes);
}

/*
 * fanotify merged an IN_CREATE and an IN_DELETE of name in od (one
 * object, c, under one name: an unlink and a link of one inode, in either
 * order).  Which came first is what the name is now: held by c (by
 * anything, without FAN_REPORT_TARGET_FID or where no handle can be
 * taken to compare: relink_no_fhandle), the delete; gone, the create.
 * 1: delete first, 0: create first, -1: not known (od's path, as the
 * library has it now, is not od: a record not applied yet moved it).
 * By path, no descriptor: a descriptor of a watched directory would be
 * an event of its own.
 */
static int delete_first(struct inofd *in, const struct obj *od,
			const struct rec *c, const char *name)
{
	const char *dir = in->wd_dir_path ? in->wd_dir_path(in, od->wd) : NULL;
	char p[PATH_MAX];
	struct stat st;

	if (!dir || strchr(name, '/') ||
	    snprintf(p, sizeof(p), "%s/%s", dir, name) >= (int)sizeof(p))
		return -1;
	if (stat(dir, &st) || st.st_dev != od->dev || st.st_ino != od->ino)
		return -1;
	if (lstat(p, &st))
		return errno == ENOENT ? 0 : -1;
	return !in->fan->target_fid || !c->have || holds(p, c) != 0;
}

/* od's records for an entry's event (bits), a merged create and delete
 * in the filesystem's order */
static void put_entry(struct inofd *in, struct out *out,
		      const struct obj *od, const struct rec *c,
		      uint32_t bits, uint32_t isdir, const char *name)
{
	struct inofd__fan *f = in->fan;
	int first;

	if (!od || (bits & (IN_CREATE | IN_DELETE)) !=
		   (IN_CREATE | IN_DELETE) ||
	    (od->imask & (IN_CREATE | IN_DELETE)) !=
		   (IN_CREATE | IN_DELETE)) {
		put_bits(f, out, od, bits, isdir, name);
		return;
	}
	first = delete_first(in, od, c, name);
	if (first == 1) {
		put_bits(f, out, od, IN_DELETE, isdir, name);
		put_bits(f, out, od, bits & ~IN_DELETE, isdir, name);
		return;
	}
	/*
	 * Gone, or not known (the directory's path is stale: a record not
	 * applied yet moved it): create first, the order of a file made and
	 * removed, by far the most common merge.  A relink in a directory
	 * moved in the same batch is then reported in the wrong order.
	 */
	put_bits(f, out, od, bits, isdir, name);
}

/* The info records of an event (from off) into d, d2 and c */
static void take_info(const char *ev, size_t elen, size_t off, struct rec *d,
		      struct rec *d2, struct rec *c)
{
	while (off + sizeof(struct fanotify_event_info_header) <= elen) {
		const struct fanotify_event_info_header *h =
			(const void *)(ev + off);

		if (h->len < sizeof(*h) || off + h->len > elen)
			break;
		switch (h->info_type) {
		case FAN_EVENT_INFO_TYPE_DFID_NAME:
		case FAN_EVENT_INFO_TYPE_OLD_DFID_NAME:
			take(d, ev + off, h->len, true);
			break;
		case FAN_EVENT_INFO_TYPE_DFID:
			take(d, ev + off, h->len, false);
			break;
		case FAN_EVENT_INFO_TYPE_NEW_DFID_NAME:
			take(d2, ev + off, h->len, true);
			break;
		case FAN_EVENT_INFO_TYPE_FID:
			take(c, ev + off, h->len, false);
			break;
		}
		off += h->len;
	}
}

/* FAN_RENAME of c from (d, od) to (d2, od2): the two halves, one cookie */
static void put_rename(struct inofd__fan *f, struct out *out,
		       const struct rec *d, const struct rec *d2,
		       const struct rec *c, const struct obj *od,
		       const struct obj *od2, const struct obj *oc,
		       uint32_t isdir)
{
	uint32_t ck = ++f->cookie ? f->cookie : ++f->cookie;

	if (od && (od->imask & IN_MOVED_FROM))
		put(out, od->wd, IN_MOVED_FROM | isdir, ck, d->name);
	if (od2 && (od2->imask & IN_MOVED_TO))
		put(out, od2->wd, IN_MOVED_TO | isdir, ck, d2->name);
	/* what moved, by identity (types.h) */
	if ((od || od2) && oc)
		put(out, oc->wd, INOFD__MOVED_ID, 0, NULL);
	if ((od || od2) && rename_back(f, d, d2, c, false)) {
		put(out, -1, IN_Q_OVERFLOW, 0, NULL);
		/*
		 * The rename it may hide is this object's: until the crawl
		 * finds it, where it is is not known (records after the loss
		 * name its subtree with no path, not with the name it had
		 * before the hidden rename).
		 */
		if (oc)
			put(out, oc->wd, INOFD__LATE, 0, NULL);
	}
	if (!out->full && rename_back(f, d, d2, c, true) &&
	    f->nwin == WIN_MAX) {
		put(out, -1, IN_Q_OVERFLOW, 0, NULL);
		f->nwin = 0;
	}
}

/*
 * The records of bits for the objects the event names (od: its directory,
 * c: its child): the object the event is on, the one its end ends, or
 * NULL.
 */
static struct obj *put_views(struct inofd *in, struct out *out,
			     const struct rec *d, const struct rec *c,
			     struct obj *od, struct obj *oc, uint32_t bits,
			     uint32_t isdir)
{
	struct inofd__fan *f = in->fan;

	if (d->have && d->name && !strcmp(d->name, ".")) {
		/* an event on the directory itself */
		put_bits(f, out, od, bits, isdir, NULL);
		return od;
	}
	if (d->have && d->name) {
		/* an entry, or a child: the directory's view with the name */
		put_entry(in, out, od, c, bits & ~SELF_BITS, isdir, d->name);
		/* the child's own view: not its entry events */
		if (c->have)
			put_bits(f, out, oc, bits & ~DIRENT_BITS, isdir, NULL);
		return oc;
	}
	if (c->have) {
		put_bits(f, out, oc, bits & ~DIRENT_BITS, isdir, NULL);
		return oc;
	}
	if (d->have) {
		put_bits(f, out, od, bits & ~DIRENT_BITS, isdir, NULL);
		return od;
	}
	return NULL;
}

/*
 * oc's end merged into an earlier event (see convert()), put after what
 * the group holds (end: IN_DELETE_SELF or IN_UNMOUNT); without memory for
 * that, now and a loss.
 */
static void end_later(struct inofd__fan *f, struct out *out, struct obj *oc,
		      uint32_t end)
{
	oc->ending = true;
	if (!later_end(f, oc, end))
		return;
	/* no room to put the end later: now, and a loss */
	put(out, oc->wd, end, 0, NULL);
	put(out, oc->wd, IN_IGNORED, 0, NULL);
	put(out, -1, IN_Q_OVERFLOW, 0, NULL);
	drop(f, oc);
}

/*
 * One fanotify event (at raw offset pos) into inotify records.  False
 * when out is full (the event is tried again at the next read).
 */
static bool convert(struct inofd *in, const char *ev, size_t elen,
		    uint64_t pos, struct out *out)
{
	struct inofd__fan *f = in->fan;
	struct rec d = { 0 }, d2 = { 0 }, c = { 0 };
	struct fanotify_event_metadata m;
	struct obj *od, *od2, *oc = NULL;
	struct out save = *out;
	uint32_t isdir, unmount = 0, bits = 0;
	bool merged = false;
	size_t i;

	/* events are 4-byte aligned, the metadata's mask 8: copied */
	memcpy(&m, ev, sizeof(m));
	isdir = (m.mask & FAN_ONDIR) ? IN_ISDIR : 0;
	if (m.mask & FAN_Q_OVERFLOW) {
		put(out, -1, IN_Q_OVERFLOW, 0, NULL);
		goto done;
	}
	take_info(ev, elen, m.metadata_len, &d, &d2, &c);
	/* an object watched after the event was queued does not get it */
	od = d.have ? at_pos(by_key(f, &d.k), pos) : NULL;
	od2 = d2.have ? at_pos(by_key(f, &d2.k), pos) : NULL;
	oc = c.have ? at_pos(by_key(f, &c.k), pos) : NULL;
	for (i = 0; i < NORDER; i++)
		if (m.mask & ORDER[i].fan)
			bits |= ORDER[i].in;
	if (m.mask & FAN_RENAME)
		put_rename(f, out, &d, &d2, &c, od, od2, oc, isdir);
	/*
	 * FAN_DELETE_SELF merged into an earlier event of the object still
	 * queued (fanotify merges identical events): the object went at some
	 * point up to now, not where that event was queued.  Its end is put
	 * after what the group holds now, so that the records queued before
	 * it went (a rename out of the directory, then rm -r) still find it.
	 * The same for FAN_UNMOUNT, which ends the mark too (unmount: what
	 * inotify says before IN_IGNORED, with IN_ISDIR as inotify puts it;
	 * none on IN_DELETE_SELF: put_bits()).
	 */
	unmount = (m.mask & (FAN_UNMOUNT | FAN_IGNORED)) ?
		  IN_UNMOUNT | isdir : 0;
	merged = ((bits & IN_DELETE_SELF) && (bits & ~IN_DELETE_SELF)) ||
		 (unmount && bits);
	if (merged)
		bits &= ~IN_DELETE_SELF;
	oc = put_views(in, out, &d, &c, od, oc, bits, isdir);
	if (!oc)
		merged = false;
	/* FAN_IGNORED after a FAN_DELETE_SELF whose end is put off: said */
	if ((m.mask & FAN_IGNORED) && oc && oc->ending)
		oc = NULL;
	if (((bits & IN_DELETE_SELF) || unmount) && !merged && oc) {
		/* the kernel dropped the mark with the inode, silently */
		if (unmount)
			put(out, oc->wd, unmount, 0, NULL);
		put(out, oc->wd, IN_IGNORED, 0, NULL);
		if (!out->full)
			drop(f, oc);
	}
done:
	if (out->full) {
		*out = save;
		out->full = true;
		return false;
	}
	if (merged)
		end_later(f, out, oc, unmount ? unmount : IN_DELETE_SELF);
	return true;
}

#define SBUF_MIN	(16 * 1024)	/* room for a read(): many events */
#define SBUF_MAX	(8u << 20)	/* backlog, at most (the unprivileged
					 * queue holds 16,384 events) */

/*
 * At least min bytes free after *end in the buffer *buf of *cap bytes whose
 * data starts at *pos: moved to the front, or grown (doubled, at most
 * max).  0, 1 when max is reached, -ENOMEM.
 */
static int make_room(char **buf, size_t *cap, size_t *pos, size_t *end,
		     size_t min, size_t max)
{
	size_t ncap;
	char *nb;

	if (*pos == *end) {
		*pos = *end = 0;
	} else if (*pos && *cap - *end < min) {
		memmove(*buf, *buf + *pos, *end - *pos);
		*end -= *pos;
		*pos = 0;
	}
	if (*cap - *end >= min)
		return 0;
	if (*cap >= max)
		return 1;
	ncap = *cap ? 2 * *cap : 4 * min;
	nb = realloc(*buf, ncap);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

/* Read what the group has into the backlog, to EAGAIN (or SBUF_MAX). */
static int fill(struct inofd *in, bool once)
{
	struct inofd__fan *f = in->fan;

	for (;;) {
		ssize_t n;
		int r = make_room(&f->sbuf, &f->scap, &f->spos, &f->send,
				  SBUF_MIN, SBUF_MAX);

		if (r > 0)
			return 0;	/* the rest stays queued */
		if (r < 0) {
			errno = ENOMEM;
			return -1;
		}
		n = read(in->ifd, f->sbuf + f->send, f->scap - f->send);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			f->win_end = f->consumed;	/* nothing queued */
		if (n <= 0)
			return (int)n;
		f->send += (size_t)n;
		f->consumed += (uint64_t)n;
		if (once)
			return 1;
	}
}

static void backlog(struct inofd *in)
{
	int e = errno;

	fill(in, false);
	errno = e;
}

uint64_t inofd__fan_now(struct inofd *in)
{
	backlog(in);
	return in->fan->consumed;
}

int inofd__fan_seen(struct inofd *in, uint64_t raw, int id)
{
	/* raw never goes back, and no end waits unplaced (inofd__fan_read()
	 * places them before it returns): the list stays in order */
	return later_add(in->fan, raw, -1, INOFD__SEEN, (uint32_t)id);
}

/*
 * The ends convert() put off have their place: where what the group holds
 * now ends.  Read between two events (fill() may move the backlog).
 */
static void place_ends(struct inofd *in)
{
	struct inofd__fan *f = in->fan;
	size_t i;

	if (!f->nlater || f->later[f->nlater - 1].raw != UINT64_MAX)
		return;
	backlog(in);
	for (i = 0; i < f->nlater; i++)
		if (f->later[i].raw == UINT64_MAX)
			f->later[i].raw = f->consumed;
}

/* Put the records due at raw offset pos; false: no room. */
static bool put_later(struct inofd__fan *f, struct out *o, uint64_t pos)
{
	size_t i;

	for (i = 0; i < f->nlater && f->later[i].raw <= pos; i++) {
		const struct later *l = &f->later[i];
		struct obj *ob;

		put(o, l->wd, l->mask, l->cookie, NULL);
		if (o->full)
			break;
		if ((l->mask & IN_IGNORED) && (ob = by_wd(f, l->wd)))
			drop(f, ob);
	}
	if (i) {
		memmove(f->later, f->later + i,
			(f->nlater - i) * sizeof(*f->later));
		f->nlater -= i;
	}
	return !o->full;
}

bool inofd__fan_pending(const struct inofd *in)
{
	return in->fan && (in->fan->spos < in->fan->send || in->fan->nlater ||
			   in->fan->stpos < in->fan->stlen);
}

/* Records made of what the group holds, into buf: bytes, 0, or -1 */
static ssize_t produce(struct inofd *in, void *buf, size_t len)
{
	struct inofd__fan *f = in->fan;
	struct out o = { .p = buf, .end = (char *)buf + len };

	for (;;) {
		int r;

		while (f->spos < f->send) {
			size_t left = f->send - f->spos;
			uint32_t elen = 0;

			if (left >= sizeof(elen))
				memcpy(&elen, f->sbuf + f->spos, sizeof(elen));
			if (left < FAN_EVENT_METADATA_LEN ||
			    elen < FAN_EVENT_METADATA_LEN || elen > left) {
				f->spos = f->send;	/* torn: cannot be */
				break;
			}
			place_ends(in);
			if (f->nlater && !put_later(f, &o, f->consumed -
						    f->send + f->spos))
				return o.p - (char *)buf;
			if (f->win_end && f->consumed - f->send + f->spos >=
			    f->win_end) {
				f->nwin = 0;
				f->win_end = 0;
			}
			if (!convert(in, f->sbuf + f->spos, elen,
				     f->consumed - f->send + f->spos, &o))
				return o.p - (char *)buf;
			f->spos += elen;
		}
		place_ends(in);
		if (f->nlater && !put_later(f, &o, f->consumed))
			return o.p - (char *)buf;
		if (o.p != (char *)buf)
			return o.p - (char *)buf;
		r = fill(in, true);
		if (r <= 0)
			return r;
	}
}

#define STAGE_MIN	(64 * 1024)	/* room for the longest record, and more */

/*
 * Make records of everything the group holds now, into the stage, and
 * say how many bytes of records wait there: where a registration made
 * now is born (inofd__stream_now()).  fanotify's FIONREAD counts its
 * events, not the records made of them, and a registration that shares
 * a watched object's mark must not get what was queued before it.
 * Without memory, -ENOMEM: it is born where the unread records start.
 */
ssize_t inofd__fan_staged(struct inofd *in)
{
	struct inofd__fan *f = in->fan;

	for (;;) {
		ssize_t n;

		if (make_room(&f->stage, &f->stcap, &f->stpos, &f->stlen,
			      STAGE_MIN, SIZE_MAX))
			return -ENOMEM;
		n = produce(in, f->stage + f->stlen, f->stcap - f->stlen);
		if (n < 0 && errno != EAGAIN)
			return -errno;
		if (n <= 0)	/* the queue is read to its end */
			return (ssize_t)(f->stlen - f->stpos);
		f->stlen += (size_t)n;
	}
}

ssize_t inofd__fan_read(struct inofd *in, void *buf, size_t len)
{
	struct inofd__fan *f = in->fan;
	size_t n = 0;

	/* the stage first, whole records */
	while (f->stpos + n + sizeof(struct inotify_event) <= f->stlen) {
		const struct inotify_event *e =
			(const void *)(f->stage + f->stpos + n);
		size_t rl = sizeof(*e) + e->len;

		if (n + rl > len)
			break;
		n += rl;
	}
	if (n || f->stpos < f->stlen) {
		if (!n) {
			errno = EINVAL;	/* buf too small for a record */
			return -1;
		}
		memcpy(buf, f->stage + f->stpos, n);
		f->stpos += n;
		return (ssize_t)n;
	}
	return produce(in, buf, len);
}
