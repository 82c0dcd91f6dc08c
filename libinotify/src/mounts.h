/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_MOUNTS_H
#define INOFD_MOUNTS_H

#include "tree.h"
#include "types.h"

/*
 * Mounts inside recursive watches (issue 17, finding 4).  The kernel tells
 * inotify nothing when a directory of a tree is mounted over or uncovered
 * (IN_UNMOUNT only when a superblock dies), so the library watches the
 * mount table: /proc/self/mountinfo is pollable (POLLPRI when the mount
 * namespace's table changes).  inofd_fd() is an epoll instance holding
 * the backend's descriptor and, from the first tree on, one mountinfo
 * descriptor (to wake the caller); a second one, polled and read here
 * only, says whether the table changed since the library last looked
 * (DESIGN.md, "Mounts inside a tree").
 */

/* The epoll instance, if it can be made (else in->merr says why: mounts
 * are not seen); 0.  The mountinfo descriptors wait for the first tree. */
INOFD__HIDDEN int inofd__mounts_init(struct inofd *in);
/* What inofd_fd() returns: the epoll instance, or without one ifd. */
INOFD__HIDDEN int inofd__mounts_fd(const struct inofd *in);
INOFD__HIDDEN void inofd__mounts_free(struct inofd *in);
/*
 * A new tree's walk, to the end (inofd__walk_run(in, 0)), with the
 * backend's descriptor out of the epoll set meanwhile: the walk's own
 * opens, listings and closes queue events on the watches it makes, and
 * every one queued would run epoll's wake-up callback (0.7 us a directory
 * by instruction count, bench 1b; asking for no event, EPOLL_CTL_MOD,
 * saves nothing).  Added back, the descriptor is polled at once, so
 * nothing queued meanwhile is missed.
 */
INOFD__HIDDEN void inofd__mounts_walk(struct inofd *in);
/*
 * The backend's descriptor back in the epoll set, if a walk took it out
 * and adding it back failed then (ENOMEM): true once it is in.  While it
 * is out, inofd_timeout() is 0 (the caller reads, and every read tries
 * again) rather than leave inofd_fd() silent.
 */
INOFD__HIDDEN bool inofd__mounts_back(struct inofd *in);
/* Before a tree's first walk: open the table if this is the first tree
 * (or the last one found none), and look at it (acting on the trees that
 * exist), so that it is known when the new one starts.  True if no tree
 * was made before. */
INOFD__HIDDEN bool inofd__mounts_tree_new(struct inofd *in);
/* The tree whose inofd__mounts_tree_new() said first failed: the table is
 * closed again (no tree, no mountinfo descriptor). */
INOFD__HIDDEN void inofd__mounts_tree_failed(struct inofd *in, bool first);
/* A tree r was made: if mounts cannot be seen, say so once (an
 * INOFD_EV_ERROR -EOPNOTSUPP on its root). */
INOFD__HIDDEN void inofd__mounts_tree_made(struct inofd *in,
					   struct inofd__reg *r);
/* Records were just read: if the table changed meanwhile, the trees it
 * changed in are unsure (their events flagged INOFD_EVF_STALE_PATH) until
 * inofd__mounts_check() has acted on it. */
INOFD__HIDDEN void inofd__mounts_peek(struct inofd *in);
/* After a batch (no record left unread): if the table changed, every tree
 * directory mounted over or uncovered is watched again by identity, with
 * an INOFD_EV_RESCAN naming it. */
INOFD__HIDDEN void inofd__mounts_check(struct inofd *in);

#endif
