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
#define INOFD_VERSION_MINOR	1

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
 * Creation options.  Set .sz = sizeof(struct inofd_opts); bytes the library
 * does not know must be zero (so newer callers run on older libraries when
 * they do not use the new fields).  A NULL pointer means all defaults.
 */
struct inofd_opts {
	size_t		sz;
	unsigned int	flags;		/* INOFD_FORCE_*, INOFD_RAW_MOVES */
	unsigned int	pair_timeout_ms; /* wait for IN_MOVED_TO; 0: 10 ms */
	unsigned int	coalesce_ms;	/* >0: coalescing mode, see INOFD_EV_CHANGED */
};

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

/*
 * One event.  Returned by inofd_next(); the structure and every string in
 * it stay valid until the next inofd_read() or inofd_free() on the instance.
 *
 * wd, name, path and data describe the object the event is about: for
 * INOFD_EV_RENAME and INOFD_EV_MOVE_IN the destination, for
 * INOFD_EV_MOVE_OUT the source.  from_* describe the source of a rename
 * (from_wd is -1 for every other type).  path is the watch's path joined
 * with name, or NULL when the library does not know the watch's path.
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

/* Removal: returns 0 or -errno. */
INOFD_API int inofd_unwatch(struct inofd *in, int wd);

/*
 * Events: inofd_read() returns the number of events ready for inofd_next(),
 * inofd_next() returns 1 with *ev set, or 0 when none is ready, and
 * inofd_timeout() returns the poll(2) timeout in ms the caller should use
 * (0: events ready, -1: nothing pending); all three return -errno on failure.
 */
INOFD_API int inofd_read(struct inofd *in);
INOFD_API int inofd_next(struct inofd *in, const struct inofd_event **ev);
INOFD_API int inofd_timeout(const struct inofd *in);

/* Errors: a static, thread-safe description of a -errno from this library. */
INOFD_API const char *inofd_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* INOFD_H */
