/* SPDX-License-Identifier: GPL-2.0 */
/*
 * own_ns.h: a mount namespace of the test's own (and a user namespace
 * mapping the caller to 0 when it is not root), its mounts private; for
 * the guest tests that mount and unmount filesystems (fan_mark_end,
 * lib_fan_unmount).  Include after <fcntl.h>, <sched.h>, <stdio.h>,
 * <string.h>, <sys/mount.h> and <unistd.h>.
 */
#ifndef OWN_NS_H
#define OWN_NS_H

/* write s to path (a /proc or /proc/sys file): 0, or -1 with errno */
static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), r;

	if (fd < 0)
		return -1;
	r = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
	close(fd);
	return r;
}

/* 0 in a namespace of our own, -1 with errno */
static int own_namespaces(void)
{
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];

	if (uid == 0) {
		if (unshare(CLONE_NEWNS))
			return -1;
	} else {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
			return -1;
		snprintf(map, sizeof(map), "0 %u 1", (unsigned int)uid);
		if (write_file("/proc/self/uid_map", map) ||
		    write_file("/proc/self/setgroups", "deny"))
			return -1;
		snprintf(map, sizeof(map), "0 %u 1", (unsigned int)gid);
		if (write_file("/proc/self/gid_map", map))
			return -1;
	}
	return mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

#endif
