// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Backends: INOTIFY_IOC_WATCH (kernel.c), or inotify_add_watch() on
 * /proc/self/fd/N with the same rules as the kernel's INOTIFY_IOC_WATCH
 * (mask bits as inotify_add_watch() but IN_DONT_FOLLOW and the event-only
 * bits refused; pseudo files other than pipes and sockets refused, as
 * far as userspace can tell them; read permission checked by
 * inotify_add_watch()), or
 * fanotify inode marks (fanotify.c) under the same argument rules.
 *
 * Automatic choice: the kernel's ioctl (every inotify event, no handles),
 * then /proc/self/fd (stock inotify), then fanotify, only when /proc is
 * missing: it cannot report unmounts, merges events, and refuses some
 * file systems (docs/library.md, "Backends").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>

#include <unistd.h>

#include "arena.h"
#include "backend.h"
#include "fanotify.h"
#include "kernel.h"

#define EVENT_BITS	(IN_ALL_EVENTS | IN_UNMOUNT)
#define FLAG_BITS	(IN_ONLYDIR | IN_EXCL_UNLINK | IN_MASK_ADD | \
			 IN_MASK_CREATE | IN_ONESHOT)

/*
 * INOTIFY_IOC_WATCH refuses pseudo files, the kernel's files on its
 * internal mounts, pipes and sockets apart.  Userspace cannot see that a
 * mount is internal, so the procfd backend refuses the pseudo filesystems
 * it knows by magic (anonymous inodes, namespace files, pidfs, where
 * pidfds live after 6.9, secretmem, dma-buf), and memfd by the name
 * shmem gives its files.
 */
static const unsigned long refused_magic[] = {
	0x09041934,	/* ANON_INODE_FS_MAGIC */
	0x6e736673,	/* NSFS_MAGIC */
	0x50494446,	/* PID_FS_MAGIC */
	0x5345434d,	/* SECRETMEM_MAGIC */
	0x444d4142,	/* DMA_BUF_MAGIC */
};

#define TMPFS_MAGIC	0x01021994
#define HUGETLBFS_MAGIC	0x958458f6

/*
 * A memfd is a file of shmem's (or hugetlbfs's) internal mount, named
 * "memfd:NAME" and never linked: /proc/self/fd/N reads "/memfd:NAME
 * (deleted)".  A file a user made in a tmpfs could only look the same if
 * it were named so at the root of its mount and deleted.
 */
static bool is_memfd(int fd, unsigned long magic)
{
	static const char del[] = " (deleted)";
	char p[sizeof("/proc/self/fd/") + 12], l[320];	/* "/memfd:" + 249 + del */
	ssize_t n;

	if (magic != TMPFS_MAGIC && magic != HUGETLBFS_MAGIC)
		return false;
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, l, sizeof(l) - 1);
	if (n < 0)
		return false;
	l[n] = '\0';
	return strncmp(l, "/memfd:", 7) == 0 &&
	       (size_t)n > sizeof(del) - 1 &&
	       strcmp(l + n - (sizeof(del) - 1), del) == 0;
}

static int procfd_check(int fd, uint32_t mask)
{
	struct statfs sfs;
	size_t i;

	if (mask & ~(EVENT_BITS | FLAG_BITS))
		return -EINVAL;		/* IN_DONT_FOLLOW among them */
	if ((mask & IN_MASK_ADD) && (mask & IN_MASK_CREATE))
		return -EINVAL;
	if (!mask)
		return -EINVAL;
	if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		return -EBADF;
	if (fstatfs(fd, &sfs) < 0)
		return 0;
	for (i = 0; i < sizeof(refused_magic) / sizeof(refused_magic[0]); i++)
		if ((unsigned long)sfs.f_type == refused_magic[i])
			return -EINVAL;
	if (is_memfd(fd, (unsigned long)sfs.f_type))
		return -EINVAL;
	return 0;
}

static int add(struct inofd *in, int fd, uint32_t mask, bool own_dir,
	       const struct inofd__fan_at *at)
{
	char p[sizeof("/proc/self/fd/") + 12];
	int r;

	if (in->backend == INOFD_BACKEND_KERNEL)
		return inofd__kern_watch(in->ifd, fd, mask);
	if (!own_dir) {
		r = procfd_check(fd, mask);
		if (r)
			return r;
	}
	if (in->backend == INOFD_BACKEND_FANOTIFY)
		return inofd__fan_add(in, fd, mask, at);
	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	r = inotify_add_watch(in->ifd, p, mask);
	return r < 0 ? -errno : r;
}

int inofd__backend_add(struct inofd *in, int fd, uint32_t mask)
{
	return add(in, fd, mask, false, NULL);
}

int inofd__backend_add_at(struct inofd *in, int fd, uint32_t mask,
			  const struct inofd__fan_at *at)
{
	return add(in, fd, mask, false, at);
}

/*
 * fd is a directory the library opened itself (O_DIRECTORY) and mask one
 * it made: it is valid and on no kernel-internal file system, so the two
 * system calls of procfd_check() would only say so again (a walk makes
 * one watch per directory).
 */
int inofd__backend_add_dir(struct inofd *in, int fd, uint32_t mask)
{
	return add(in, fd, mask, true, NULL);
}

int inofd__backend_rm(struct inofd *in, int wd)
{
	if (in->backend == INOFD_BACKEND_KERNEL)
		return inofd__kern_ignore(in->ifd, wd);
	if (in->backend == INOFD_BACKEND_FANOTIFY)
		return inofd__fan_rm(in, wd);
	return inotify_rm_watch(in->ifd, wd) < 0 ? -errno : 0;
}

/* The wds the kernel still has for this instance, from fdinfo; -1 if unknown */
int inofd__backend_live_wds(struct inofd *in, int **out, size_t *n)
{
	char p[64], line[512];
	size_t cap = 0;
	int *v = NULL;
	FILE *f;

	if (in->backend == INOFD_BACKEND_FANOTIFY)
		return inofd__fan_live_wds(in, out, n);
	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", in->ifd);
	f = fopen(p, "re");
	if (!f)
		return -1;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned int wd;

		if (sscanf(line, "inotify wd:%x", &wd) != 1)
			continue;
		if (inofd__ints_push(&v, n, &cap, (int)wd)) {
			free(v);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	*out = v;
	return 0;
}

bool inofd__backend_live(struct inofd *in, int wd)
{
	size_t n = 0, i;
	int *v = NULL;
	bool live = true;	/* unknown: as the kernel last said */

	if (inofd__backend_live_wds(in, &v, &n) == 0)
		for (live = false, i = 0; i < n && !live; i++)
			live = v[i] == wd;
	free(v);
	return live;
}

bool inofd__backend_takes_opath(const struct inofd *in)
{
	if (in->backend == INOFD_BACKEND_FANOTIFY)
		return inofd__fan_opath(in);
	return true;
}

bool inofd__backend_same(struct inofd *in, int wd, const char *path)
{
	if (in->backend == INOFD_BACKEND_FANOTIFY)
		return inofd__fan_same(in, wd, path);
	return true;	/* inotify ends a watch with IN_UNMOUNT: no stale wd */
}

static bool have_procfd(void)
{
	struct statfs sfs;

	return statfs("/proc/self/fd", &sfs) == 0 && sfs.f_type == 0x9fa0;
}

int inofd__backend_pick(struct inofd *in)
{
	unsigned int force = in->flags & (INOFD_FORCE_KERNEL |
					  INOFD_FORCE_PROCFD |
					  INOFD_FORCE_FANOTIFY);
	int r;

	if (force != INOFD_FORCE_FANOTIFY && in->ifd >= 0) {
		if (force != INOFD_FORCE_PROCFD && inofd__kern_probe(in->ifd)) {
			in->backend = INOFD_BACKEND_KERNEL;
			return 0;
		}
		if (force != INOFD_FORCE_KERNEL && have_procfd()) {
			in->backend = INOFD_BACKEND_PROCFD;
			return 0;
		}
		if (force)
			return -ENOSYS;
	}
	r = inofd__fan_open(in);
	if (r)
		return r;
	in->backend = INOFD_BACKEND_FANOTIFY;
	return 0;
}

ssize_t inofd__backend_read(struct inofd *in, void *buf, size_t len)
{
	if (in->backend == INOFD_BACKEND_FANOTIFY)
		return inofd__fan_read(in, buf, len);
	return read(in->ifd, buf, len);
}

void inofd__backend_free(struct inofd *in)
{
	inofd__fan_free(in);
}

uint64_t inofd__stream_now(struct inofd *in)
{
	int queued = 0;

	/*
	 * fanotify: FIONREAD counts 24 bytes an event, not the records
	 * inofd__fan_read() makes of it, so it cannot place a registration
	 * in the stream.  The backend makes the records of all the group
	 * holds now (its stage, handed out first) and says their bytes:
	 * a registration that shares a watched object's mark is born after
	 * them (oracle seed 90037 -X -C: a plain watch made on a directory
	 * a tree had let go of got the DELETE its mark had queued before).
	 * Without memory for that, it is born where the unread records
	 * start.
	 */
	if (in->backend == INOFD_BACKEND_FANOTIFY) {
		ssize_t staged = inofd__fan_staged(in);

		return in->kpos + (staged > 0 ? (uint64_t)staged : 0);
	}
	/* what the kernel holds was queued before now; FIONREAD counts
	 * the bytes read(2) would return */
	if (ioctl(in->ifd, FIONREAD, &queued) < 0 || queued < 0)
		queued = 0;
	return in->kpos + (uint64_t)queued;
}
