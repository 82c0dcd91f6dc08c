/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_KERNEL_H
#define INOFD_KERNEL_H

#include <stdint.h>

#define INOFD__KHIDDEN	__attribute__((visibility("hidden")))

/* -errno on failure, like the rest of the library */
INOFD__KHIDDEN int inofd__kern_watch(int ifd, int fd, uint32_t mask);
INOFD__KHIDDEN int inofd__kern_ignore(int ifd, int wd);
INOFD__KHIDDEN int inofd__kern_probe(int ifd);	/* 1 if INOTIFY_IOC_WATCH exists */

#endif
