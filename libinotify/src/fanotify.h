/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_FANOTIFY_H
#define INOFD_FANOTIFY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "types.h"

/*
 * The fanotify backend: an unprivileged FAN_REPORT_DFID_NAME |
 * FAN_REPORT_FID group, inode marks by fd, objects known by fsid + file
 * handle and numbered like inotify's wds.  Its read turns fanotify records
 * into inotify records (struct inotify_event, names padded as the kernel
 * pads them), so everything above the backend reads one format.
 */

/* Make the group: in->ifd becomes its fd (the old one is closed). */
INOFD__HIDDEN int inofd__fan_open(struct inofd *in);
INOFD__HIDDEN void inofd__fan_free(struct inofd *in);
/* The kernel marks the object of an O_PATH fd (patches/fanotify/). */
INOFD__HIDDEN bool inofd__fan_opath(const struct inofd *in);
/* inofd__backend_add()'s rules, on fanotify: the wd, or -errno.  at: the
 * name fd was opened by (O_PATH, not a directory), or NULL. */
INOFD__HIDDEN int inofd__fan_add(struct inofd *in, int fd, uint32_t mask,
				 const struct inofd__fan_at *at);
INOFD__HIDDEN int inofd__fan_rm(struct inofd *in, int wd);
/* false if the directory at path is known not to be wd's object (its
 * fsid or handle differ; (dev, ino) may be reused by another tmpfs) */
INOFD__HIDDEN bool inofd__fan_same(struct inofd *in, int wd,
				   const char *path);
/* read(2) of in->ifd as inotify records: bytes, or -1 and errno. */
INOFD__HIDDEN ssize_t inofd__fan_read(struct inofd *in, void *buf,
				      size_t len);
/*
 * Where the group's queue ends now, in its own bytes (what it holds is
 * read into the backlog first), and: a private INOFD__SEEN record for
 * registration id, put among the records made when conversion reaches
 * raw.  0, or -ENOMEM.
 */
INOFD__HIDDEN uint64_t inofd__fan_now(struct inofd *in);
INOFD__HIDDEN int inofd__fan_seen(struct inofd *in, uint64_t raw, int id);
/*
 * Make records of all the group holds into a stage that inofd__fan_read()
 * hands out first: the bytes staged (where a registration made now is
 * born), or -errno.
 */
INOFD__HIDDEN ssize_t inofd__fan_staged(struct inofd *in);
/* Records read from the group and not handed out yet (timeout 0). */
INOFD__HIDDEN bool inofd__fan_pending(const struct inofd *in);
/* The wds whose kernel marks live (fdinfo): 0, or -1 when unknown. */
INOFD__HIDDEN int inofd__fan_live_wds(struct inofd *in, int **out,
				      size_t *n);

#endif
