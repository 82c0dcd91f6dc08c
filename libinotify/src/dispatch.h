/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_DISPATCH_H
#define INOFD_DISPATCH_H

#include "mounts.h"
#include "rename.h"
#include "tree.h"
#include "types.h"

/*
 * The one way events enter the library: raw struct inotify_event records,
 * as read(2) returns them.  inofd_read() feeds what it reads; the unit
 * tests and the fuzzer feed their own bytes.  Returns the number of ready
 * events (as inofd_read()), or -EINVAL for malformed bytes.
 */
INOFD__HIDDEN int inofd__feed(struct inofd *in, const void *buf, size_t len);

INOFD__HIDDEN int inofd__read(struct inofd *in);
/*
 * A batch is parsed as its events are taken (see stream_step()).  More:
 * the queue is empty; parse on until an event is ready or the batch is
 * done (false: no batch was streaming).  Finish: parse the rest of the
 * batch now; every call that changes watches does that first, so that
 * records read before it are applied before it, as when a batch was
 * parsed at once.
 */
INOFD__HIDDEN bool inofd__stream_more(struct inofd *in);
INOFD__HIDDEN void inofd__stream_finish(struct inofd *in);
INOFD__HIDDEN void inofd__born(struct inofd *in, struct inofd__reg *r,
			       uint64_t at);
INOFD__HIDDEN int inofd__timeout(const struct inofd *in);

#endif
