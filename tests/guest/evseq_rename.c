// SPDX-License-Identifier: GPL-2.0
/*
 * evseq_rename: consecutive identical rename events, the one place where
 * the two bases merge differently.  Debian's 6.12 (from the 6.12.118
 * stable update, "inotify: do not coalesce rename events") never merges
 * an event into a queued IN_MOVED_FROM or IN_MOVED_TO, whose cookies
 * differ; 6.1 and Debian's 7.2.13 merge them like any other identical
 * pair.  The event-path series (patches/event-path/,
 * patches/6.12/event-path/, patches/7.2/event-path/) tests the merge
 * before allocating, with the base's own rule: this test checks that the
 * rule of each base is kept, which evseq, whose renames never repeat an
 * event, cannot see.
 *
 * A directory watched for IN_MOVED_FROM loses "a" twice (moved out to
 * another directory, created again, moved out again); a directory watched
 * for IN_MOVED_TO gains "z" twice.  A pair of identical IN_MODIFY is the
 * control: it merges on every base, so the merge test is on the path.
 *
 *   evseq_rename          expect the rule of the running base: 6.1.x and
 *                         7.2.x merge, 6.12.x keeps apart (by uname; another
 *                         release is a skip, as the rule is not a matter
 *                         of version: the host's 6.18.44 merges)
 *   evseq_rename merge    expect renames merged (6.1's rule)
 *   evseq_rename keep     expect renames kept apart (6.12's rule)
 *
 * Exit 0 pass, 1 fail, 4 skip.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/utsname.h>

static void die(const char *what)
{
	printf("FAIL evseq_rename: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void touch(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		die(path);
	close(fd);
}

static void xrename(const char *from, const char *to)
{
	if (rename(from, to))
		die(from);
}

/* Read everything queued; count the events and check their mask and name. */
static int count(int ifd, uint32_t mask, const char *name, unsigned int *cookies)
{
	static char buf[4096] __attribute__((aligned(8)));
	int n = 0;
	ssize_t len;
	char *p;

	while ((len = read(ifd, buf, sizeof(buf))) > 0) {
		for (p = buf; p < buf + len; ) {
			struct inotify_event *e = (void *)p;

			if (e->mask != mask || strcmp(e->name, name)) {
				printf("FAIL evseq_rename: event mask %08x name %s, "
				       "expected %08x %s\n", e->mask, e->name,
				       mask, name);
				exit(1);
			}
			if (cookies && n < 2)
				cookies[n] = e->cookie;
			n++;
			p += sizeof(*e) + e->len;
		}
	}
	if (len < 0 && errno != EAGAIN)
		die("read");
	return n;
}

int main(int argc, char **argv)
{
	unsigned int cookies[2] = { 0, 0 };
	struct utsname u;
	int keep, ifd, fd, n, major = 0, minor = 0;
	const char *rule;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (uname(&u))
		die("uname");
	if (argc > 1) {
		keep = !strcmp(argv[1], "keep");
		if (!keep && strcmp(argv[1], "merge")) {
			printf("usage: evseq_rename [merge|keep]\n");
			return 2;
		}
	} else {
		if (sscanf(u.release, "%d.%d.", &major, &minor) != 2 ||
		    !((major == 6 && (minor == 1 || minor == 12)) ||
		      (major == 7 && minor == 2))) {
			printf("evseq_rename: SKIP: release %s is no base "
			       "(6.1, 6.12, 7.2): name the rule (merge, keep)\n",
			       u.release);
			return 4;
		}
		keep = major == 6 && minor == 12;
	}
	rule = keep ? "renames kept apart" : "renames merged";

	if ((mkdir("r", 0755) && errno != EEXIST) ||
	    (mkdir("r/d", 0755) && errno != EEXIST) ||
	    (mkdir("r/e", 0755) && errno != EEXIST))
		die("mkdir");
	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");

	/* the control: two identical IN_MODIFY merge on every base */
	touch("r/d/m");
	if (inotify_add_watch(ifd, "r/d", IN_MODIFY) < 0)
		die("watch r/d");
	fd = open("r/d/m", O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0 || write(fd, "x", 1) != 1 || write(fd, "x", 1) != 1)
		die("write r/d/m");
	close(fd);
	n = count(ifd, IN_MODIFY, "m", NULL);
	if (n != 1) {
		printf("FAIL evseq_rename: 2 identical IN_MODIFY read as %d "
		       "events, not 1 merged\n", n);
		return 1;
	}

	/* "a" moved out of r/d twice */
	if (inotify_add_watch(ifd, "r/d", IN_MOVED_FROM) < 0)
		die("watch r/d");
	touch("r/d/a");
	xrename("r/d/a", "r/e/x");
	touch("r/d/a");
	xrename("r/d/a", "r/e/y");
	n = count(ifd, IN_MOVED_FROM, "a", cookies);
	if (n != (keep ? 2 : 1) ||
	    (keep && (!cookies[0] || !cookies[1] || cookies[0] == cookies[1]))) {
		printf("FAIL evseq_rename: %s, %s: 2 identical IN_MOVED_FROM "
		       "read as %d events (cookies %u %u)\n", u.release, rule,
		       n, cookies[0], cookies[1]);
		return 1;
	}

	/* "z" moved into r/e twice */
	if (inotify_add_watch(ifd, "r/d", IN_DELETE_SELF) < 0 ||
	    inotify_add_watch(ifd, "r/e", IN_MOVED_TO) < 0)
		die("watch r/e");
	touch("r/d/b");
	touch("r/d/c");
	xrename("r/d/b", "r/e/z");
	if (unlink("r/e/z"))
		die("unlink r/e/z");
	xrename("r/d/c", "r/e/z");
	n = count(ifd, IN_MOVED_TO, "z", cookies);
	if (n != (keep ? 2 : 1)) {
		printf("FAIL evseq_rename: %s, %s: 2 identical IN_MOVED_TO "
		       "read as %d events\n", u.release, rule, n);
		return 1;
	}

	close(ifd);
	if (unlink("r/d/m") || unlink("r/e/x") || unlink("r/e/y") ||
	    unlink("r/e/z") || rmdir("r/d") || rmdir("r/e") || rmdir("r"))
		die("cleanup");
	printf("evseq_rename: %s: %s (the IN_MODIFY pair merged)\n",
	       u.release, rule);
	return 0;
}
