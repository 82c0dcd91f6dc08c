/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_BACKEND_H
#define INOFD_BACKEND_H

#include <sys/types.h>

#include "types.h"

/* Watch the object fd refers to: the wd, or -errno (ABI.md's rules). */
INOFD__HIDDEN int inofd__backend_add(struct inofd *in, int fd, uint32_t mask);
/* The same, fd an O_PATH one opened by at (fanotify marks by name then) */
INOFD__HIDDEN int inofd__backend_add_at(struct inofd *in, int fd,
					uint32_t mask,
					const struct inofd__fan_at *at);
/* The same for a directory the library opened and a mask it made. */
INOFD__HIDDEN int inofd__backend_add_dir(struct inofd *in, int fd,
					 uint32_t mask);
INOFD__HIDDEN int inofd__backend_rm(struct inofd *in, int wd);
/*
 * The directory at path has wd's (dev, ino): is it wd's object?  false
 * only when the backend knows it is not (fanotify: another tmpfs took the
 * device and inode numbers of one whose marks died silently).
 */
INOFD__HIDDEN bool inofd__backend_same(struct inofd *in, int wd,
				       const char *path);
/* The wds the kernel still has for this instance (fdinfo, or the
 * fanotify group's marks) in a malloc'ed *out; -1 if unknown. */
INOFD__HIDDEN int inofd__backend_live_wds(struct inofd *in, int **out,
					  size_t *n);
/*
 * Does the backend take an O_PATH fd of any object as it is?  (inotify:
 * yes; fanotify: only with the project's fanotify series, else a file is
 * opened again or marked by name: inofd_backend(3))
 */
INOFD__HIDDEN bool inofd__backend_takes_opath(const struct inofd *in);
/* Does the kernel still have wd?  (true when that cannot be known) */
INOFD__HIDDEN bool inofd__backend_live(struct inofd *in, int wd);
/* Pick a backend for in->flags: 0 or -ENOSYS. */
INOFD__HIDDEN int inofd__backend_pick(struct inofd *in);
/*
 * The one read path: read(2) of the instance as inotify records (bytes,
 * 0, or -1 and errno as read(2)); the fanotify backend converts.
 */
INOFD__HIDDEN ssize_t inofd__backend_read(struct inofd *in, void *buf,
					  size_t len);
INOFD__HIDDEN void inofd__backend_free(struct inofd *in);

/*
 * The offset in the kernel's event stream of the next record queued from
 * now on (bytes read so far plus FIONREAD).  A watch call takes it before
 * it asks the kernel, and inofd__born() gives it to the registration:
 * records queued before it (a kernel watch it shares with older
 * registrations) are not reported to it, only its end is.
 */
INOFD__HIDDEN uint64_t inofd__stream_now(struct inofd *in);

#endif
