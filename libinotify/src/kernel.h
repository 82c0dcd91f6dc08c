/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_KERNEL_H
#define INOFD_KERNEL_H

#include <stdint.h>

/* -errno on failure, like the rest of the library */
int kern_watch(int ifd, int fd, uint32_t mask);
int kern_ignore(int ifd, int wd);
int kern_probe(int ifd);	/* 1 if INOTIFY_WATCH exists */

#endif
