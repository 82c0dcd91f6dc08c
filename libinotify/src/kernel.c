// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The kernel backend: INOTIFY_IOC_WATCH and INOTIFY_IOC_IGNORE.
 *
 * This file alone includes the uapi <linux/inotify.h> (from include-uapi,
 * or the installed kernel headers of a patched kernel): it pulls in
 * <linux/fcntl.h>, which cannot share a translation unit with the C
 * library's <fcntl.h> and <sys/inotify.h>.  The mask goes to the kernel
 * as the caller's layer made it: the kernel applies its own rules.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/inotify.h>

#include "kernel.h"

#ifndef INOTIFY_IOC_WATCH
#error "need the uapi <linux/inotify.h> with INOTIFY_IOC_WATCH (src/uapi)"
#endif

/* the uapi promises one layout for 32- and 64-bit tasks */
_Static_assert(sizeof(struct inotify_watch_args) == INOTIFY_WATCH_ARGS_SIZE_VER0,
	       "struct inotify_watch_args layout");

int inofd__kern_watch(int ifd, int fd, uint32_t mask)
{
	struct inotify_watch_args a;
	int r;

	memset(&a, 0, sizeof(a));	/* flags (and any tail) must be zero */
	a.fd = fd;
	a.mask = mask;
	r = ioctl(ifd, INOTIFY_IOC_WATCH, &a);
	return r < 0 ? -errno : r;
}

int inofd__kern_ignore(int ifd, int wd)
{
	/* the argument points to the wd, it is not the wd */
	return ioctl(ifd, INOTIFY_IOC_IGNORE, &wd) < 0 ? -errno : 0;
}

int inofd__kern_probe(int ifd)
{
	/* fd -1: a kernel that knows INOTIFY_IOC_WATCH says EBADF, others ENOTTY */
	return inofd__kern_watch(ifd, -1, IN_ALL_EVENTS) == -EBADF;
}
