// SPDX-License-Identifier: LGPL-2.1-or-later
/* inofd_new, inofd_free, inofd_fd, inofd_backend, inofd_watch_count,
 * inofd_strerror, backend selection. */
#include "unit.h"

#include <sched.h>
#include <sys/mount.h>

static void new_defaults(void **state)
{
	struct fx *f = *state;
	int fd = inofd_fd(f->in), b = inofd_backend(f->in);

	assert_true(fd >= 0);
	/* main-loop friendly: never blocks, never leaks into exec */
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_true(b == INOFD_BACKEND_KERNEL || b == INOFD_BACKEND_PROCFD);
	assert_int_equal(inofd_watch_count(f->in), 0);
	assert_int_equal(inofd_timeout(f->in), -1);
	/* nothing to read is not an error */
	assert_int_equal(inofd_read(f->in), 0);
}

static void new_bad_args(void **state)
{
	struct inofd_opts o;
	unsigned char big[sizeof(o) + 16];
	struct inofd *in = (struct inofd *)1;

	(void)state;
	assert_int_equal(inofd_new(NULL, NULL), -EINVAL);

	memset(&o, 0, sizeof(o));
	assert_int_equal(inofd_new(&in, &o), -EINVAL);	/* sz 0 */
	assert_null(in);

	o.sz = sizeof(o);
	o.flags = 0x80000000u;
	assert_int_equal(inofd_new(&in, &o), -EINVAL);
	o.flags = INOFD_FORCE_KERNEL | INOFD_FORCE_PROCFD;
	assert_int_equal(inofd_new(&in, &o), -EINVAL);
	o.flags = 0;
	o.pair_timeout_ms = 1000000;
	assert_int_equal(inofd_new(&in, &o), -EINVAL);
	o.pair_timeout_ms = 0;
	o.coalesce_ms = 4000000;
	assert_int_equal(inofd_new(&in, &o), -EINVAL);

	/* a newer caller: unknown trailing bytes must be zero */
	memset(big, 0, sizeof(big));
	o.coalesce_ms = 0;
	o.sz = sizeof(big);
	memcpy(big, &o, sizeof(o));
	assert_int_equal(inofd_new(&in, (struct inofd_opts *)big), 0);
	inofd_free(in);
	big[sizeof(o) + 3] = 1;
	assert_int_equal(inofd_new(&in, (struct inofd_opts *)big), -EINVAL);

	/* an older caller: only sz and flags */
	o.sz = offsetof(struct inofd_opts, pair_timeout_ms);
	o.pair_timeout_ms = 1000000;	/* beyond sz: not read */
	assert_int_equal(inofd_new(&in, &o), 0);
	inofd_free(in);
}

static void accessors_null(void **state)
{
	const struct inofd_event *ev;
	struct fx *f = *state;

	assert_int_equal(inofd_fd(NULL), -EINVAL);
	assert_int_equal(inofd_backend(NULL), -EINVAL);
	assert_int_equal(inofd_watch_count(NULL), -EINVAL);
	assert_int_equal(inofd_read(NULL), -EINVAL);
	assert_int_equal(inofd_next(NULL, &ev), -EINVAL);
	assert_int_equal(inofd_next(f->in, NULL), -EINVAL);
	assert_int_equal(inofd_next(f->in, &ev), 0);
	assert_null(ev);
	assert_int_equal(inofd_timeout(NULL), -EINVAL);
	assert_int_equal(inofd_unwatch(NULL, 1), -EINVAL);
	inofd_free(NULL);	/* no-op */
}

static void env_backend(void **state)
{
	struct inofd_opts o = { .sz = sizeof(o) };
	struct inofd *in;
	int r;

	(void)state;
	setenv("INOFD_BACKEND", "procfd", 1);
	assert_int_equal(inofd_new(&in, NULL), 0);
	assert_int_equal(inofd_backend(in), INOFD_BACKEND_PROCFD);
	inofd_free(in);

	setenv("INOFD_BACKEND", "auto", 1);
	assert_int_equal(inofd_new(&in, NULL), 0);
	inofd_free(in);

	/* an unknown value is ignored: a knob must not stop a program */
	setenv("INOFD_BACKEND", "bogus", 1);
	assert_int_equal(inofd_new(&in, NULL), 0);
	inofd_free(in);

	/* an explicit flag wins over the environment */
	o.flags = INOFD_FORCE_PROCFD;
	assert_int_equal(inofd_new(&in, &o), 0);
	assert_int_equal(inofd_backend(in), INOFD_BACKEND_PROCFD);
	inofd_free(in);

	setenv("INOFD_BACKEND", "kernel", 1);
	r = inofd_new(&in, NULL);
	assert_true(r == 0 || r == -ENOSYS);
	if (r == 0) {
		assert_int_equal(inofd_backend(in), INOFD_BACKEND_KERNEL);
		inofd_free(in);
	}
	unsetenv("INOFD_BACKEND");
}

static void force_procfd(void **state)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = INOFD_FORCE_PROCFD };
	struct fx *f = *state;

	assert_int_equal(inofd_new(&f->in, &o), 0);
	assert_int_equal(inofd_backend(f->in), INOFD_BACKEND_PROCFD);
	assert_true(inofd_watch_path(f->in, f->dir, IN_CREATE, NULL) >= 0);
	mkfile(P(f, "x"));
	drain(f, 50);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_CREATE, "x") >= 0);
}

/* The kernel backend: runs where INOTIFY_IOC_WATCH exists, skips elsewhere. */
static void force_kernel(void **state)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = INOFD_FORCE_KERNEL };
	struct fx *f = *state;
	int r = inofd_new(&f->in, &o), fd, wd;

	if (r == -ENOSYS) {
		print_message("kernel lacks INOTIFY_IOC_WATCH: kernel backend "
			      "test skipped\n");
		skip();
	}
	assert_int_equal(r, 0);
	assert_int_equal(inofd_backend(f->in), INOFD_BACKEND_KERNEL);
	fd = open(f->dir, O_PATH | O_DIRECTORY);
	wd = inofd_watch_fd(f->in, fd, IN_CREATE, f);
	close(fd);
	assert_true(wd >= 0);
	assert_int_equal(inofd_watch_fd(f->in, -1, IN_CREATE, NULL), -EBADF);
	mkfile(P(f, "k"));
	drain(f, 50);
	r = find(f, INOFD_EV_INOTIFY, IN_CREATE, "k");
	assert_true(r >= 0);
	assert_ptr_equal(f->r[r].data, f);
	assert_int_equal(inofd_unwatch(f->in, wd), 0);
	drain(f, 50);
	assert_true(find(f, INOFD_EV_INOTIFY, IN_IGNORED, NULL) >= 0);
	assert_int_equal(inofd_watch_count(f->in), 0);
}

static int no_proc_child(void *arg)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = INOFD_FORCE_PROCFD };
	struct inofd *in;
	int r;

	(void)arg;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return 77;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("none", "/proc", "tmpfs", 0, NULL) < 0)
		return 77;
	if (inofd_new(&in, &o) != -ENOSYS)
		return 1;
	r = inofd_new(&in, NULL);
	if (r == 0) {
		/*
		 * Without /proc: INOTIFY_IOC_WATCH if the kernel has it, else
		 * fanotify (5.13+ unprivileged), never procfd.
		 */
		r = (inofd_backend(in) == INOFD_BACKEND_KERNEL ||
		     inofd_backend(in) == INOFD_BACKEND_FANOTIFY) ? 0 : 2;
		inofd_free(in);
		return r;
	}
	return r == -ENOSYS ? 0 : 3;
}

static void no_backend(void **state)
{
	int r;

	(void)state;
	r = in_child(no_proc_child, NULL);
	if (r == 77) {
		print_message("cannot unshare a mount namespace: skipped\n");
		skip();
	}
	assert_int_equal(r, 0);
}

static void strerror_texts(void **state)
{
	(void)state;
	assert_non_null(strstr(inofd_strerror(-ENOSPC), "max_user_watches"));
	assert_non_null(strstr(inofd_strerror(-ENOSYS), "INOTIFY_IOC_WATCH"));
	assert_non_null(strstr(inofd_strerror(-ESTALE), "rescan"));
	assert_string_equal(inofd_strerror(0), "success");
	assert_string_equal(inofd_strerror(-EPERM), "operation not permitted");
	/* no strerror(3) fallback: a fixed text for what is not known */
	assert_string_equal(inofd_strerror(-EHWPOISON), "unknown error");
	assert_string_equal(inofd_strerror(-4095), "unknown error");
	assert_string_equal(inofd_strerror(5), "unknown error");
	assert_string_equal(inofd_strerror(-100000), "unknown error");
}

DEFINE_TESTS(instance,
	T(new_defaults),
	T(new_bad_args),
	T(accessors_null),
	T(env_backend),
	TN(force_procfd),
	TN(force_kernel),
	T(no_backend),
	T(strerror_texts),
)
