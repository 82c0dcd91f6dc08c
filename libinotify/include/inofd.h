/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libinofd - inotify watches by file descriptor.
 *
 * Watches the object an open file descriptor refers to.  On kernels with
 * the INOTIFY_IOC_WATCH ioctl the kernel does it directly; elsewhere the library
 * falls back to inotify_add_watch("/proc/self/fd/N").  Either way the
 * descriptor may be closed as soon as the watch call returns.
 *
 * Conventions
 *   - Every exported name starts with inofd_ / INOFD_.
 *   - int functions return a non-negative value on success and -errno on
 *     failure; errno itself is not meaningful afterwards.
 *   - No global state, nothing is printed, no signal is touched.
 *
 * Threading
 *   A struct inofd is not internally locked.  Use one instance per thread,
 *   or serialise every call on one instance with your own lock (this
 *   includes inofd_next() and reading the events it returns).  Different
 *   instances are fully independent.  inofd_strerror() may be called from
 *   any thread at any time.
 *
 * Headers
 *   This header includes the C library's <sys/inotify.h> for the IN_*
 *   constants, unless the kernel's <linux/inotify.h> was included first
 *   (the two define the same structure and cannot be mixed; the kernel's
 *   one also clashes with <fcntl.h>).  The library itself needs nothing
 *   from the kernel headers at build time of your program.
 */
#ifndef INOFD_H
#define INOFD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if !defined(_UAPI_LINUX_INOTIFY_H) && !defined(_LINUX_INOTIFY_H)
#include <sys/inotify.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifndef INOFD_API
#define INOFD_API __attribute__((visibility("default")))
#endif

#define INOFD_VERSION_MAJOR	0
#define INOFD_VERSION_MINOR	4

/* Opaque handle: one inotify instance plus the library's watch table. */
struct inofd;

/* Backends, as returned by inofd_backend(). */
enum inofd_backend {
	INOFD_BACKEND_KERNEL	= 1,	/* ioctl(INOTIFY_IOC_WATCH) */
	INOFD_BACKEND_PROCFD	= 2,	/* inotify_add_watch("/proc/self/fd/N") */
	INOFD_BACKEND_FANOTIFY	= 3,	/* fanotify inode marks by fd (no /proc
					 * needed; see inofd_backend(3) for
					 * what it cannot report) */
};

/*
 * Flags: one namespace, every bit distinct.  Each place that takes flags
 * says which it knows and refuses the others with -EINVAL.
 *   struct inofd_opts.flags:       INOFD_FORCE_*, INOFD_RAW_MOVES
 *   inofd_watch_at() flags:        INOFD_AT_*
 *   struct inofd_tree_opts.flags:  INOFD_AT_*, INOFD_TREE_*
 */
#define INOFD_FORCE_KERNEL	0x0001u	/* use INOTIFY_IOC_WATCH or fail with -ENOSYS */
#define INOFD_FORCE_PROCFD	0x0002u	/* use /proc/self/fd or fail with -ENOSYS */
#define INOFD_RAW_MOVES		0x0004u	/* report IN_MOVED_FROM/IN_MOVED_TO halves
					 * instead of INOFD_EV_RENAME/MOVE_* */
#define INOFD_FORCE_FANOTIFY	0x0008u	/* use fanotify or fail with -ENOSYS */
#define INOFD_TREE_XDEV		0x0010u	/* stay on the root's filesystem */
#define INOFD_TREE_MEMBER_ENDS	0x0020u	/* report each directory of the tree
					 * that stops being watched while
					 * the tree goes on (IN_IGNORED with
					 * INOFD_EVF_MEMBER) */
#define INOFD_AT_SYMLINK_NOFOLLOW 0x0100u	/* watch a final symlink itself */
#define INOFD_AT_EMPTY_PATH	  0x1000u	/* "" means dirfd itself */

/*
 * Options structs: sz first, no padding anywhere (every field is named,
 * so a plain initialiser zeroes every byte), new fields only at the end.
 * Bytes beyond the fields this library knows must be zero (so newer
 * callers run on older libraries when they leave the new fields zero);
 * otherwise the call fails with -EINVAL.  A NULL pointer means all
 * defaults.
 *
 * INOFD_OPTS(name, .field = value, ...) declares a struct inofd_opts,
 * INOFD_TREE_OPTS(name, ...) a struct inofd_tree_opts: sz set, every
 * field not named zero.  Plain C99 (no statement expression), so the
 * initialisers may hold compound literals, which live as long as name:
 *   INOFD_TREE_OPTS(to, .exclude = (const char *const[]){ ".git", NULL });
 * INOFD_OPTS(name) alone is valid C99 too.
 */
#define INOFD_OPTS_OF(TYPE, ...)	INOFD__OPTS(TYPE, __VA_ARGS__, )
#define INOFD__OPTS(TYPE, NAME, ...)					\
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }
#define INOFD_OPTS(...)		INOFD_OPTS_OF(inofd_opts, __VA_ARGS__)
#define INOFD_TREE_OPTS(...)	INOFD_OPTS_OF(inofd_tree_opts, __VA_ARGS__)

/* Creation options (inofd_new()). */
struct inofd_opts {
	size_t		sz;
	unsigned int	flags;		/* INOFD_FORCE_*, INOFD_RAW_MOVES */
	unsigned int	pair_timeout_ms; /* wait for IN_MOVED_TO; 0: 10 ms */
	unsigned int	coalesce_ms;	/* >0: coalescing mode, see INOFD_EV_CHANGED */
	unsigned int	queue_max;	/* ready events queued at most (a full
					 * queue drops events and queues one
					 * INOFD_EV_RESCAN); 0: INOFD_QUEUE_MAX */
};

/* The default bound on ready events (struct inofd_opts.queue_max). */
#define INOFD_QUEUE_MAX		(1u << 20)

/*
 * Recursive watch options (inofd_watch_tree_at()).  Declare them with
 * INOFD_TREE_OPTS(name, ...).
 */
struct inofd_tree_opts {
	size_t		sz;
	/*
	 * NULL-terminated fnmatch(3) patterns matched against a
	 * directory's NAME (its last component, at any depth; never a
	 * path: a pattern with a '/' is refused with -EINVAL).  A
	 * directory that matches is not watched, nor anything below it
	 * (".git", "node_modules", "build-*").  Files are never filtered:
	 * every event of a watched directory is reported, whatever its
	 * name.  Copied by the call.
	 */
	const char *const *exclude;
	unsigned int	flags;		/* INOFD_AT_*, INOFD_TREE_* */
	unsigned int	max_depth;	/* 0: no limit; n: watch directories at
					 * most n levels below the root */
	void		*data;		/* caller data of the watch */
};

/* Event types (struct inofd_event.type) */
enum inofd_event_type {
	INOFD_EV_INOTIFY = 0,	/* one inotify event; see mask */
	INOFD_EV_RENAME,	/* IN_MOVED_FROM + IN_MOVED_TO with one cookie */
	INOFD_EV_MOVE_OUT,	/* IN_MOVED_FROM with no IN_MOVED_TO in time */
	INOFD_EV_MOVE_IN,	/* IN_MOVED_TO with no IN_MOVED_FROM */
	INOFD_EV_RESCAN,	/* events were lost, or a tree's directory
				 * changed under it: rescan (what its wd, ino,
				 * dev and path mean: struct inofd_event) */
	INOFD_EV_CHANGED,	/* coalescing mode: the watched object changed */
	INOFD_EV_ERROR,		/* a recursive watch could not follow; see error */
};

/* struct inofd_event.flags */
#define INOFD_EVF_SYNTHETIC	0x0001u	/* made by the library, not read from
					 * the kernel (scan of a new directory,
					 * table repair after an overflow) */
#define INOFD_EVF_STALE_PATH	0x0002u	/* plain watch: the object moved since
					 * it was watched (or the file's name
					 * was unlinked, another link left);
					 * path is the one it had then.
					 * Tree: read right after a
					 * loss in which a rename above the
					 * root was lost; path uses the names
					 * found after the loss.  Or read
					 * after a RESCAN until the tree is
					 * walked again and the events queued
					 * before that are read: path uses
					 * the names the walk found
					 * (inofd_read(3)).  Or read after the
					 * mount table changed at or above
					 * the event's directory, or anywhere
					 * if it is at or below a mount point
					 * inside the tree, before the
					 * library acted on it (the RESCAN
					 * follows).  Or a walk's synthetic
					 * IN_CREATE listed in a directory
					 * that was no longer at its path:
					 * path is where the walk had found
					 * it */
#define INOFD_EVF_LOST		0x0004u	/* INOFD_EV_ERROR -ESTALE: the tree's
					 * root moved where the library cannot
					 * see; its paths are NULL from now on */
#define INOFD_EVF_MEMBER	0x0008u	/* IN_IGNORED of ONE directory of a
					 * tree (INOFD_TREE_MEMBER_ENDS): path,
					 * ino and dev say which; the tree goes
					 * on.  Not the tree's end: never free
					 * the tree's data on it */

/*
 * One event.  Returned by inofd_next(); the structure and every string in
 * it stay valid until the next inofd_read() or inofd_free() on the instance.
 *
 * seq numbers the events of an instance in the order inofd_next() hands
 * them out: 1, 2, 3, ... with no gap (events the library had to drop are
 * not numbered; an INOFD_EV_RESCAN says they were lost).
 *
 * wd is what the watch call returned (one per call: two watches of one
 * object are two registrations, each with its own mask and data, each
 * told of every event it wants).  For a recursive watch every event of
 * every directory of the tree carries the tree's wd and data.
 *
 * ino and dev identify the watched object the kernel reported the event
 * on, as stat(2) gave them when the library watched it: for an event with
 * a name, the directory holding the entry (so dev, ino and name name the
 * entry as fanotify's DFID_NAME does; in a tree, the tree's directory the
 * entry is in, not the tree's root); for an event without a name, the
 * object itself.  INOFD_EV_RENAME: the destination directory;
 * INOFD_EV_MOVE_OUT: the source directory.  INOFD_EV_RESCAN: below.  0
 * for a tree's INOFD_EVF_LOST error (the root's are given) and when
 * stat(2) failed.  inotify never says an entry's own inode; these do not
 * either.
 *
 * INOFD_EV_RESCAN comes in two kinds, told apart by wd:
 *  - wd -1 (mask IN_Q_OVERFLOW): events of the whole instance were lost
 *    (a kernel queue overflow, the library's queue bound, no memory).
 *    Plain watches and trees alike: rescan whatever you watch.  name,
 *    path and data are NULL, ino and dev 0.  Every tree is walked again
 *    by the library (its later events are right); what changed meanwhile
 *    was not reported.
 *  - wd a tree's (mask IN_Q_OVERFLOW | IN_ISDIR, INOFD_EVF_SYNTHETIC): one
 *    directory of that tree changed under it (a mount or umount over
 *    it): rescan path, the tree's directory name names; ino and dev are
 *    those of the tree's directory holding it (as for any event with a
 *    name), data the tree's.  The library walks it again itself.  A
 *    mount the tree held that went is told once: by the kernel's
 *    IN_UNMOUNT | IN_ISDIR of the directory (inotify backends, when read
 *    before the mount table), or else by IN_UNMOUNT in this mask (always
 *    on fanotify).  What is there now is the directory it covered.
 *  A plain watch never gets a RESCAN of its own: its losses are the
 *  instance's (wd -1).
 *  Events before a RESCAN (lower seq) happened before the loss, events
 *  after it after the loss, in order, with the paths of their time
 *  (a tree's flagged INOFD_EVF_STALE_PATH until the library's walk
 *  after the loss has caught up: a path may be the walk's).  A
 *  consumer that re-walks at the RESCAN may find some of them done
 *  already: it applies them as news to look at again (is path there
 *  now?), never as changes to its walked state (inofd_read(3)).
 *
 * name, path and data describe the object the event is about: for
 * INOFD_EV_RENAME and INOFD_EV_MOVE_IN the destination, for
 * INOFD_EV_MOVE_OUT the source.  from_* describe the source of a rename
 * (from_wd is -1 for every other type).  path is the watch's path joined
 * with name, or NULL when the library does not know the watch's path; it
 * is never a path the library knows to be wrong (see INOFD_EVF_LOST and
 * INOFD_EVF_STALE_PATH).
 */
struct inofd_event {
	uint64_t	seq;
	int		type;		/* enum inofd_event_type */
	int		wd;		/* INOFD_EV_RESCAN: -1 or a tree's (above) */
	uint32_t	mask;		/* IN_* bits; OR of all for CHANGED */
	uint32_t	cookie;
	unsigned int	flags;		/* INOFD_EVF_* */
	int		error;		/* INOFD_EV_ERROR: -errno, else 0 */
	uint64_t	ino;		/* the watched object's (see above) */
	uint64_t	dev;
	const char	*name;		/* entry name in a directory, or NULL */
	const char	*path;
	void		*data;		/* caller data of the watch */
	int		from_wd;
	const char	*from_name;
	const char	*from_path;
	void		*from_data;
};

/* Instance: these return 0 or -errno. */
INOFD_API int inofd_new(struct inofd **out, const struct inofd_opts *opts);
INOFD_API void inofd_free(struct inofd *in);

/* Accessors: these return the value, or -EINVAL for a NULL instance. */
INOFD_API int inofd_fd(const struct inofd *in);
INOFD_API int inofd_backend(const struct inofd *in);
INOFD_API int inofd_watch_count(const struct inofd *in);

/* Watches: these return a watch descriptor (>= 0) or -errno. */
INOFD_API int inofd_watch_fd(struct inofd *in, int fd, uint32_t mask,
			     void *data);
INOFD_API int inofd_watch_at(struct inofd *in, int dirfd, const char *path,
			     uint32_t mask, unsigned int flags, void *data);
INOFD_API int inofd_watch_path(struct inofd *in, const char *path,
			       uint32_t mask, void *data);
/* A directory and every directory below it; opts last (NULL: defaults),
 * the caller's data and the INOFD_AT_* flags inside it. */
INOFD_API int inofd_watch_tree_at(struct inofd *in, int dirfd,
				  const char *path, uint32_t mask,
				  const struct inofd_tree_opts *opts);

/*
 * A watch's path (NULL if unknown) and data: 0, or -EINVAL for a bad wd.
 * The path string belongs to the library: it stays valid until the next
 * inofd_read(), inofd_next(), inofd_unwatch() or inofd_free() on the
 * instance (a rename the library follows replaces it, and a read's
 * records are applied as inofd_next() takes its events); copy it to keep
 * it.
 */
INOFD_API int inofd_wd_path(const struct inofd *in, int wd, const char **path);
INOFD_API int inofd_wd_data(const struct inofd *in, int wd, void **data);
/*
 * The same path copied into the caller's buf of size bytes, NUL included
 * (valid as long as the caller keeps it): its length (without the NUL),
 * -ERANGE if it does not fit (buf untouched), -ENOENT if the library does
 * not know it (where inofd_wd_path() gives NULL), -EINVAL for a NULL in
 * or buf or a bad wd.  (0.4)
 */
INOFD_API int inofd_wd_path_copy(const struct inofd *in, int wd, char *buf,
				 size_t size);

/* Removal: returns 0 or -errno. */
INOFD_API int inofd_unwatch(struct inofd *in, int wd);

/*
 * Events: inofd_read() reads the instance until read(2) says EAGAIN (or a
 * bound; then inofd_timeout() says 0) and returns the number of events
 * ready now (at least 1 if there is any: the records read become events
 * as inofd_next() takes them, in the kernel's order); while events of the
 * last read are still queued or still to be made it reads nothing new.
 * inofd_next() returns 1 with *ev set, or 0 when none is ready.  inofd_timeout() returns the poll(2) timeout in ms the
 * caller should use (0: call inofd_read() now, -1: nothing pending).  All
 * three return -errno on failure.  Edge-triggered epoll: call inofd_read()
 * and drain inofd_next() until inofd_read() returns 0.
 */
INOFD_API int inofd_read(struct inofd *in);
INOFD_API int inofd_next(struct inofd *in, const struct inofd_event **ev);
INOFD_API int inofd_timeout(const struct inofd *in);

/* Errors: a static, thread-safe description of a -errno from this library. */
INOFD_API const char *inofd_strerror(int err);

/* The version of the library running (INOFD_VERSION_* are the header's). */
INOFD_API unsigned int inofd_major_version(void);
INOFD_API unsigned int inofd_minor_version(void);

#ifdef __cplusplus
}
#endif

#endif /* INOFD_H */
