// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * A program of a libinofd user, built by `make install-check` against an
 * installed tree with nothing but `pkg-config --cflags --libs libinofd`.
 *
 *   use_inofd DIR
 *
 * Makes an instance on the /proc/self/fd backend, watches DIR by a file
 * descriptor that it closes at once, creates DIR/hello and requires the
 * IN_CREATE for it.  Prints the file the library was loaded from (the
 * caller checks it is the installed one) and the event.  Exit 0 on
 * success, 1 on any failure (with the reason on stderr).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <inofd.h>

static int fail(const char *what, int err)
{
	fprintf(stderr, "use_inofd: %s: %s\n", what, inofd_strerror(err));
	return 1;
}

int main(int argc, char **argv)
{
	struct inofd_opts opts = { .sz = sizeof(opts), .flags = INOFD_FORCE_PROCFD };
	const struct inofd_event *ev;
	struct inofd *in;
	char file[4096];
	Dl_info dli;
	int fd, wd, r, found = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: use_inofd DIR\n");
		return 1;
	}
	if (dladdr((void *)inofd_new, &dli) && dli.dli_fname)
		printf("library: %s\n", dli.dli_fname);

	r = inofd_new(&in, &opts);
	if (r < 0)
		return fail("inofd_new", r);
	if (inofd_backend(in) != INOFD_BACKEND_PROCFD)
		return fail("inofd_backend is not procfd", -EINVAL);

	fd = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		perror("use_inofd: open");
		return 1;
	}
	wd = inofd_watch_fd(in, fd, IN_CREATE, NULL);
	close(fd);	/* the watch outlives the descriptor */
	if (wd < 0)
		return fail("inofd_watch_fd", wd);

	snprintf(file, sizeof(file), "%s/hello", argv[1]);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror("use_inofd: create");
		return 1;
	}
	close(fd);

	while (!found) {
		struct pollfd p = { .fd = inofd_fd(in), .events = POLLIN };

		r = poll(&p, 1, 5000);
		if (r == 0) {
			fprintf(stderr, "use_inofd: no event within 5 s\n");
			return 1;
		}
		r = inofd_read(in);
		if (r < 0)
			return fail("inofd_read", r);
		while ((r = inofd_next(in, &ev)) == 1) {
			if (ev->type == INOFD_EV_INOTIFY && ev->wd == wd &&
			    (ev->mask & IN_CREATE) && ev->name &&
			    !strcmp(ev->name, "hello")) {
				printf("event: wd %d IN_CREATE %s\n", ev->wd, ev->name);
				found = 1;
			}
		}
		if (r < 0)
			return fail("inofd_next", r);
	}
	inofd_free(in);
	return 0;
}
