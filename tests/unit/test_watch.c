// SPDX-License-Identifier: LGPL-2.1-or-later
/* inofd_watch_fd, inofd_watch_at, inofd_watch_path, inofd_unwatch. */
#include "unit.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>

static void watch_fd_closed_after(void **state)
{
	struct fx *f = *state;
	char real[PATH_MAX];
	int fd, wd, i;

	mkfile(P(f, "file"));
	fd = open(P(f, "file"), O_RDONLY);
	wd = inofd_watch_fd(f->in, fd, IN_MODIFY, &wd);
	close(fd);		/* the watch outlives the descriptor */
	assert_true(wd >= 0);
	assert_int_equal(inofd_watch_count(f->in), 1);

	fd = open(P(f, "file"), O_WRONLY);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);
	drain(f, 50);
	i = find(f, INOFD_EV_INOTIFY, IN_MODIFY, NULL);
	assert_true(i >= 0);
	assert_int_equal(f->r[i].wd, wd);
	assert_ptr_equal(f->r[i].data, &wd);
	assert_int_equal(f->r[i].from_wd, -1);
	assert_non_null(realpath(P(f, "file"), real));
	assert_string_equal(f->r[i].path, real);
	assert_string_equal(f->r[i].name, "");
}

static void watch_fd_opath_dir(void **state)
{
	struct fx *f = *state;
	int fd, wd, i;
	char want[PATH_MAX + 8];

	fd = open(f->dir, O_PATH | O_DIRECTORY);
	wd = inofd_watch_fd(f->in, fd, IN_CREATE | IN_ONLYDIR, NULL);
	close(fd);
	assert_true(wd >= 0);
	mkfile(P(f, "new"));
	drain(f, 50);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "new");
	assert_true(i >= 0);
	snprintf(want, sizeof(want), "%s/new", f->dir);
	assert_string_equal(f->r[i].path, want);
}

/* Table-driven: what the kernel's INOTIFY_IOC_WATCH answers, both backends. */
static void watch_fd_errors(void **state)
{
	struct fx *f = *state;
	int file, dir, efd, ep, mfd, ns, pipefd[2], closed, wd;

	mkfile(P(f, "f"));
	file = open(P(f, "f"), O_RDONLY);
	dir = open(f->dir, O_RDONLY | O_DIRECTORY);
	efd = eventfd(0, 0);
	ep = epoll_create1(0);
	/* the longest name memfd_create() takes (249): no truncated match */
	mfd = memfd_create("test_watch_a_memfd_name_of_the_longest_length_"
			   "memfd_create_takes_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
			   "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
			   MFD_CLOEXEC);
	ns = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	assert_true(mfd >= 0 && ns >= 0);
	assert_int_equal(pipe2(pipefd, O_CLOEXEC), 0);
	closed = dup(file);
	close(closed);

	const struct { int fd; uint32_t mask; int err; const char *what; } t[] = {
		{ -1, IN_MODIFY, -EBADF, "fd -1" },
		{ closed, IN_MODIFY, -EBADF, "closed fd" },
		{ efd, IN_MODIFY, -EINVAL, "eventfd (anon inode)" },
		{ ep, IN_MODIFY, -EINVAL, "epoll (anon inode)" },
		{ mfd, IN_MODIFY, -EINVAL, "memfd (shmem's internal mount)" },
		{ ns, IN_MODIFY, -EINVAL, "namespace file (nsfs)" },
		{ file, 0, -EINVAL, "empty mask" },
		{ file, IN_ISDIR | IN_ONESHOT, -EINVAL, "no event bit" },
		{ file, IN_MODIFY | 0x00100000u, -EINVAL, "unknown bit" },
		{ file, IN_MODIFY | IN_ISDIR, -EINVAL, "event-only IN_ISDIR" },
		{ file, IN_MODIFY | IN_IGNORED, -EINVAL, "event-only IN_IGNORED" },
		{ file, IN_MODIFY | IN_MASK_ADD | IN_MASK_CREATE, -EINVAL,
		  "MASK_ADD|MASK_CREATE" },
		{ file, IN_MODIFY | IN_ONLYDIR, -ENOTDIR, "ONLYDIR on a file" },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int r = inofd_watch_fd(f->in, t[i].fd, t[i].mask, NULL);

		if (r != t[i].err)
			fail_msg("%s: got %d, want %d", t[i].what, r, t[i].err);
	}
	assert_int_equal(inofd_watch_fd(NULL, file, IN_MODIFY, NULL), -EINVAL);
	assert_int_equal(inofd_watch_count(f->in), 0);

	wd = inofd_watch_fd(f->in, dir, IN_CREATE, NULL);
	assert_true(wd >= 0);
	assert_int_equal(inofd_watch_fd(f->in, dir, IN_CREATE | IN_MASK_CREATE,
					NULL), -EEXIST);
	/* a pipe is a pseudo file too, but accepted, as by the kernel */
	assert_true(inofd_watch_fd(f->in, pipefd[0], IN_MODIFY, NULL) >= 0);
	close(file);
	close(dir);
	close(efd);
	close(ep);
	close(mfd);
	close(ns);
	close(pipefd[0]);
	close(pipefd[1]);
}

/* Two watches of one object are two registrations (issue 9, finding 6). */
static void watch_fd_same_object(void **state)
{
	struct fx *f = *state;
	int a, b, fd, i;

	fd = open(f->dir, O_PATH);
	a = inofd_watch_fd(f->in, fd, IN_CREATE, "first");
	b = inofd_watch_fd(f->in, fd, IN_DELETE | IN_MASK_ADD, "second");
	close(fd);
	assert_true(a >= 0 && b >= 0);
	assert_int_not_equal(a, b);
	assert_int_equal(inofd_watch_count(f->in), 1);	/* one kernel watch */
	mkfile(P(f, "x"));
	unlink(P(f, "x"));
	drain(f, 50);
	/* each is told what it asked for, with its own data */
	assert_int_equal(f->n, 2);
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "x");
	assert_true(i >= 0);
	assert_int_equal(f->r[i].wd, a);
	assert_string_equal(f->r[i].data, "first");
	i = find(f, INOFD_EV_INOTIFY, IN_DELETE, "x");
	assert_true(i >= 0);
	assert_int_equal(f->r[i].wd, b);
	assert_string_equal(f->r[i].data, "second");
	/* unwatching one leaves the other */
	f->n = 0;
	assert_int_equal(inofd_unwatch(f->in, a), 0);
	mkfile(P(f, "y"));
	unlink(P(f, "y"));
	drain(f, 50);
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL), 1);
	i = find(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL);
	assert_string_equal(f->r[i].data, "first");
	assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_CREATE, "y"), -1);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_DELETE, "y") >= 0);
	assert_int_equal(inofd_watch_count(f->in), 1);
}

static void watch_fd_unlinked_and_pipe(void **state)
{
	struct fx *f = *state;
	int fd, p[2], wd, pwd, i;

	fd = open(P(f, "gone"), O_RDWR | O_CREAT, 0600);
	unlink(P(f, "gone"));
	wd = inofd_watch_fd(f->in, fd, IN_MODIFY, NULL);
	assert_true(wd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);

	assert_int_equal(pipe(p), 0);
	/* pipes are watched as through /proc/self/fd: a write is IN_MODIFY */
	pwd = inofd_watch_fd(f->in, p[1], IN_MODIFY, p);
	assert_true(pwd >= 0);
	assert_true(pwd != wd);
	assert_int_equal(write(p[1], "y", 1), 1);
	drain(f, 50);
	i = find(f, INOFD_EV_INOTIFY, IN_MODIFY, NULL);
	assert_true(i >= 0);
	assert_int_equal(f->r[i].wd, wd);
	assert_string_equal(f->r[i].path, "");	/* no path for a deleted file */
	assert_int_equal(count(f, INOFD_EV_INOTIFY, IN_MODIFY, NULL), 2);
	close(p[0]);
	close(p[1]);
}

static int eacces_child(void *arg)
{
	struct fx *f = arg;
	char p[PATH_MAX + 8];
	struct inofd *in;
	int fd, r;

	if (setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return 77;
	if (inofd_new(&in, NULL))
		return 2;
	snprintf(p, sizeof(p), "%s/wo", f->dir);
	fd = open(p, O_WRONLY | O_CREAT, 0200);
	if (fd < 0)
		return 3;
	r = inofd_watch_fd(in, fd, IN_MODIFY, NULL);	/* write-only fd */
	close(fd);
	if (r != -EACCES)
		return 4;
	fd = open(p, O_PATH);
	r = inofd_watch_fd(in, fd, IN_MODIFY, NULL);	/* O_PATH, unreadable */
	close(fd);
	if (r != -EACCES)
		return 5;
	chmod(p, 0600);
	fd = open(p, O_WRONLY);
	r = inofd_watch_fd(in, fd, IN_MODIFY, NULL);	/* readable again */
	close(fd);
	inofd_free(in);
	return r >= 0 ? 0 : 6;
}

static void watch_fd_eacces(void **state)
{
	struct fx *f = *state;
	int r;

	if (geteuid() != 0) {
		print_message("not root: cannot drop to uid 65534, skipped\n");
		skip();
	}
	chmod(f->dir, 0777);
	r = in_child(eacces_child, f);
	if (r == 77)
		skip();
	assert_int_equal(r, 0);
}

static void watch_at_variants(void **state)
{
	struct fx *f = *state;
	char real[PATH_MAX];
	int dfd, wd, i;

	mkdirp(P(f, "d"));
	mkfile(P(f, "d/target"));
	assert_int_equal(symlink("target", P(f, "d/link")), 0);
	dfd = open(P(f, "d"), O_PATH | O_DIRECTORY);

	/* relative to a dirfd, following the link: watches target */
	wd = inofd_watch_at(f->in, dfd, "link", IN_ATTRIB, 0, "t");
	assert_true(wd >= 0);
	/* not following: watches the link itself */
	i = inofd_watch_at(f->in, dfd, "link", IN_DELETE_SELF,
			   INOFD_AT_SYMLINK_NOFOLLOW, "l");
	assert_true(i >= 0);
	assert_int_not_equal(i, wd);
	/* the dirfd itself */
	assert_true(inofd_watch_at(f->in, dfd, "", IN_CREATE,
				   INOFD_AT_EMPTY_PATH, "d") >= 0);
	assert_int_equal(inofd_watch_count(f->in), 3);

	chmod(P(f, "d/target"), 0600);
	unlink(P(f, "d/link"));
	mkfile(P(f, "d/c"));
	drain(f, 50);
	i = find(f, INOFD_EV_INOTIFY, IN_ATTRIB, NULL);
	assert_true(i >= 0);
	assert_string_equal(f->r[i].data, "t");
	assert_non_null(realpath(P(f, "d/target"), real));
	assert_string_equal(f->r[i].path, real);
	i = find(f, INOFD_EV_INOTIFY, IN_DELETE_SELF, NULL);
	assert_true(i >= 0);
	assert_string_equal(f->r[i].data, "l");
	i = find(f, INOFD_EV_INOTIFY, IN_CREATE, "c");
	assert_true(i >= 0);
	assert_string_equal(f->r[i].data, "d");
	close(dfd);
}

static void watch_at_errors(void **state)
{
	struct fx *f = *state;
	int dfd = open(f->dir, O_PATH | O_DIRECTORY);

	mkfile(P(f, "file"));
	assert_int_equal(inofd_watch_at(f->in, dfd, NULL, IN_CREATE, 0, NULL),
			 -EINVAL);
	assert_int_equal(inofd_watch_at(NULL, dfd, "file", IN_CREATE, 0, NULL),
			 -EINVAL);
	assert_int_equal(inofd_watch_at(f->in, dfd, "file", IN_CREATE, 0x4, NULL),
			 -EINVAL);
	assert_int_equal(inofd_watch_at(f->in, dfd, "file", 0, 0, NULL),
			 -EINVAL);
	assert_int_equal(inofd_watch_at(f->in, dfd, "nope", IN_CREATE, 0, NULL),
			 -ENOENT);
	assert_int_equal(inofd_watch_at(f->in, dfd, "", IN_CREATE, 0, NULL),
			 -ENOENT);
	assert_int_equal(inofd_watch_at(f->in, 12345, "file", IN_CREATE, 0,
					NULL), -EBADF);
	assert_int_equal(inofd_watch_at(f->in, dfd, "file",
					IN_CREATE | IN_ONLYDIR, 0, NULL),
			 -ENOTDIR);
	/* AT_FDCWD with an empty path is the working directory */
	assert_true(inofd_watch_at(f->in, AT_FDCWD, "", IN_CREATE,
				   INOFD_AT_EMPTY_PATH, NULL) >= 0);
	assert_int_equal(inofd_watch_count(f->in), 1);
	close(dfd);
}

static void watch_path_variants(void **state)
{
	struct fx *f = *state;
	int a, b, i;

	mkfile(P(f, "target"));
	assert_int_equal(symlink("target", P(f, "link")), 0);
	a = inofd_watch_path(f->in, P(f, "link"), IN_ATTRIB, NULL);
	b = inofd_watch_path(f->in, P(f, "link"),
			     IN_DELETE_SELF | IN_DONT_FOLLOW, NULL);
	assert_true(a >= 0 && b >= 0 && a != b);
	assert_int_equal(inofd_watch_path(f->in, "", IN_ATTRIB, NULL), -ENOENT);
	assert_int_equal(inofd_watch_path(f->in, NULL, IN_ATTRIB, NULL), -EINVAL);
	assert_int_equal(inofd_watch_path(NULL, "/", IN_ATTRIB, NULL), -EINVAL);
	assert_int_equal(inofd_watch_path(f->in, P(f, "nope"), IN_ATTRIB, NULL),
			 -ENOENT);
	unlink(P(f, "link"));
	drain(f, 50);
	i = find(f, INOFD_EV_INOTIFY, IN_DELETE_SELF, NULL);
	assert_true(i >= 0);
	assert_int_equal(f->r[i].wd, b);
	/* the path as given */
	assert_string_equal(f->r[i].path, P(f, "link"));
}

static void unwatch_basic(void **state)
{
	struct fx *f = *state;
	int wd, i;

	wd = inofd_watch_path(f->in, f->dir, IN_CREATE, "mine");
	assert_true(wd >= 0);
	assert_int_equal(inofd_unwatch(f->in, wd), 0);
	assert_int_equal(inofd_unwatch(f->in, wd), -EINVAL);	/* twice */
	assert_int_equal(inofd_unwatch(f->in, -1), -EINVAL);
	assert_int_equal(inofd_unwatch(f->in, wd + 1000), -EINVAL);
	mkfile(P(f, "after"));		/* must not be reported */
	drain(f, 50);
	assert_int_equal(find(f, INOFD_EV_INOTIFY, IN_CREATE, NULL), -1);
	i = find(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL);
	assert_true(i >= 0);
	/* IN_IGNORED carries the data: the moment to free it */
	assert_string_equal(f->r[i].data, "mine");
	assert_int_equal(inofd_watch_count(f->in), 0);
}

static void ignored_removes_watch(void **state)
{
	struct fx *f = *state;
	int i;

	mkdirp(P(f, "sub"));
	assert_true(inofd_watch_path(f->in, P(f, "sub"), IN_ONESHOT | IN_CREATE,
				     NULL) >= 0);
	assert_true(inofd_watch_path(f->in, P(f, "sub"), IN_CREATE, NULL) >= 0);
	assert_int_equal(inofd_watch_count(f->in), 1);
	rmdir(P(f, "sub"));
	drain(f, 50);
	i = find(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL);
	assert_true(i >= 0);
	assert_int_equal(inofd_watch_count(f->in), 0);
}

DEFINE_TESTS(watch,
	T(watch_fd_closed_after),
	T(watch_fd_opath_dir),
	T(watch_fd_errors),
	T(watch_fd_same_object),
	T(watch_fd_unlinked_and_pipe),
	T(watch_fd_eacces),
	T(watch_at_variants),
	T(watch_at_errors),
	T(watch_path_variants),
	T(unwatch_basic),
	T(ignored_removes_watch),
)
