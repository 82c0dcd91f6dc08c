/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libinofd - inotify watches by file descriptor.
 *
 * Watches the object an open file descriptor refers to.  On kernels with
 * the INOTIFY_WATCH ioctl the kernel does it directly; elsewhere the library
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
#define INOFD_VERSION_MINOR	2

/* Opaque handle: one inotify instance plus the library's watch table. */
struct inofd;

/* Backends, as returned by inofd_backend(). */
enum inofd_backend {
	INOFD_BACKEND_KERNEL	= 1,	/* ioctl(INOTIFY_WATCH) */
	INOFD_BACKEND_PROCFD	= 2,	/* inotify_add_watch("/proc/self/fd/N") */
};

/* struct inofd_opts.flags */
#define INOFD_FORCE_KERNEL	0x0001u	/* use INOTIFY_WATCH or fail with -ENOSYS */
#define INOFD_FORCE_PROCFD	0x0002u	/* use /proc/self/fd or fail with -ENOSYS */
#define INOFD_RAW_MOVES		0x0004u	/* report IN_MOVED_FROM/IN_MOVED_TO halves
					 * instead of INOFD_EV_RENAME/MOVE_* */

/*
 * Creation options.  Declare them with INOFD_OPTS(), which sets .sz and
 * zeroes every other byte; bytes the library does not know must be zero
 * (so newer callers run on older libraries when they do not use the new
 * fields), and so must reserved.  A NULL pointer means all defaults.
 */
struct inofd_opts {
	size_t		sz;
	unsigned int	flags;		/* INOFD_FORCE_*, INOFD_RAW_MOVES */
	unsigned int	pair_timeout_ms; /* wait for IN_MOVED_TO; 0: 10 ms */
	unsigned int	coalesce_ms;	/* >0: coalescing mode, see INOFD_EV_CHANGED */
	unsigned int	reserved;	/* must be 0 (was tail padding) */
};

/*
 * INOFD_OPTS(name, .field = value, ...): a struct inofd_opts (or any
 * options struct of this header, with INOFD_TREE_OPTS) with sz set and
 * every other byte, padding included, zero.
 */
#define INOFD_OPTS_OF(TYPE, NAME, ...)					\
	struct TYPE NAME = ({						\
		memset(&NAME, 0, sizeof(struct TYPE));			\
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ };	\
	})
#define INOFD_OPTS(NAME, ...)	INOFD_OPTS_OF(inofd_opts, NAME, __VA_ARGS__)

/* struct inofd_tree_opts.flags */
#define INOFD_TREE_XDEV		0x0001u	/* stay on the root's filesystem */

/*
 * Recursive watch options (inofd_watch_tree_opts()).  Declare them with
 * INOFD_TREE_OPTS(name, ...).
 */
struct inofd_tree_opts {
	size_t		sz;
	/* NULL-terminated fnmatch(3) patterns: a directory whose name
	 * matches one is not watched, nor anything below it (".git",
	 * "node_modules", "*.tmp").  Copied by the call. */
	const char *const *exclude;
	unsigned int	flags;		/* INOFD_TREE_* */
	unsigned int	max_depth;	/* 0: no limit; n: watch directories at
					 * most n levels below the root */
};
#define INOFD_TREE_OPTS(NAME, ...) \
	INOFD_OPTS_OF(inofd_tree_opts, NAME, __VA_ARGS__)

/* inofd_watch_at() / inofd_watch_tree() flags */
#define INOFD_AT_SYMLINK_NOFOLLOW 0x0100u	/* watch a final symlink itself */
#define INOFD_AT_EMPTY_PATH	  0x1000u	/* "" means dirfd itself */

/* Event types (struct inofd_event.type) */
enum inofd_event_type {
	INOFD_EV_INOTIFY = 0,	/* one inotify event; see mask */
	INOFD_EV_RENAME,	/* IN_MOVED_FROM + IN_MOVED_TO with one cookie */
	INOFD_EV_MOVE_OUT,	/* IN_MOVED_FROM with no IN_MOVED_TO in time */
	INOFD_EV_MOVE_IN,	/* IN_MOVED_TO with no IN_MOVED_FROM */
	INOFD_EV_RESCAN,	/* IN_Q_OVERFLOW: events were lost, rescan */
	INOFD_EV_CHANGED,	/* coalescing mode: the watched object changed */
	INOFD_EV_ERROR,		/* a recursive watch could not follow; see error */
};

/* struct inofd_event.flags */
#define INOFD_EVF_SYNTHETIC	0x0001u	/* made by the library, not read from
					 * the kernel (scan of a new directory,
					 * table repair after an overflow) */
#define INOFD_EVF_STALE_PATH	0x0002u	/* plain watch: the object moved since
					 * it was watched; path is the one it
					 * had then.  Tree: read right after a
					 * loss in which a rename above the
					 * root was lost; path uses the names
					 * found after the loss */
#define INOFD_EVF_LOST		0x0004u	/* INOFD_EV_ERROR -ESTALE: the tree's
					 * root moved where the library cannot
					 * see; its paths are NULL from now on */

/*
 * One event.  Returned by inofd_next(); the structure and every string in
 * it stay valid until the next inofd_read() or inofd_free() on the instance.
 *
 * wd is what the watch call returned (one per call: two watches of one
 * object are two registrations, each with its own mask and data, each
 * told of every event it wants).  For a recursive watch every event of
 * every directory of the tree carries the tree's wd and data.
 * name, path and data describe the object the event is about: for
 * INOFD_EV_RENAME and INOFD_EV_MOVE_IN the destination, for
 * INOFD_EV_MOVE_OUT the source.  from_* describe the source of a rename
 * (from_wd is -1 for every other type).  path is the watch's path joined
 * with name, or NULL when the library does not know the watch's path; it
 * is never a path the library knows to be wrong (see INOFD_EVF_LOST and
 * INOFD_EVF_STALE_PATH).
 */
struct inofd_event {
	int		type;		/* enum inofd_event_type */
	int		wd;		/* -1 for INOFD_EV_RESCAN */
	uint32_t	mask;		/* IN_* bits; OR of all for CHANGED */
	uint32_t	cookie;
	unsigned int	flags;		/* INOFD_EVF_* */
	int		error;		/* INOFD_EV_ERROR: -errno, else 0 */
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
INOFD_API int inofd_watch_tree(struct inofd *in, int dirfd, const char *path,
			       uint32_t mask, unsigned int flags, void *data);
INOFD_API int inofd_watch_tree_opts(struct inofd *in, int dirfd,
				    const char *path, uint32_t mask,
				    unsigned int flags, void *data,
				    const struct inofd_tree_opts *opts);

/* A watch's path (NULL if unknown) and data: 0, or -EINVAL for a bad wd. */
INOFD_API int inofd_wd_path(const struct inofd *in, int wd, const char **path);
INOFD_API int inofd_wd_data(const struct inofd *in, int wd, void **data);

/* Removal: returns 0 or -errno. */
INOFD_API int inofd_unwatch(struct inofd *in, int wd);

/*
 * Events: inofd_read() reads the instance until read(2) says EAGAIN (or a
 * bound; then inofd_timeout() says 0) and returns the number of events
 * ready for inofd_next(); while events of the last read are still queued
 * it reads nothing new.  inofd_next() returns 1 with *ev set, or 0 when
 * none is ready.  inofd_timeout() returns the poll(2) timeout in ms the
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
