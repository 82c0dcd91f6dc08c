// SPDX-License-Identifier: GPL-2.0
/*
 * runas UID GID CMD [ARGS...]: drop every privilege and exec CMD, for the
 * tests that run as an unprivileged user.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	uid_t uid;
	gid_t gid;

	if (argc < 4) {
		fprintf(stderr, "usage: runas UID GID CMD [ARGS...]\n");
		return 2;
	}
	uid = (uid_t)strtoul(argv[1], NULL, 10);
	gid = (gid_t)strtoul(argv[2], NULL, 10);
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) ||
	    setresuid(uid, uid, uid)) {
		fprintf(stderr, "runas: %s\n", strerror(errno));
		return 2;
	}
	if (geteuid() != uid || getuid() != uid || !setuid(0)) {
		fprintf(stderr, "runas: privileges were not dropped\n");
		return 2;
	}
	prctl(PR_SET_DUMPABLE, 1);
	execvp(argv[3], argv + 3);
	fprintf(stderr, "runas: %s: %s\n", argv[3], strerror(errno));
	return 127;
}
