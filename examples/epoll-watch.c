// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * epoll-watch: libinofd in an epoll main loop.
 *
 *   epoll-watch [-r] [-C MS] PATH...
 *
 * The loop waits on the library's fd and on a signalfd, and uses
 * inofd_timeout() as the epoll timeout so that a rename half waiting for
 * its partner (or a coalescing window) is delivered on time even when
 * nothing else happens.  Renames come out paired.  SIGINT/SIGTERM end it
 * cleanly; so does the last watch going away.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include "inofd.h"

static const char *type_name(int t)
{
	switch (t) {
	case INOFD_EV_INOTIFY:	return "event";
	case INOFD_EV_RENAME:	return "rename";
	case INOFD_EV_MOVE_OUT:	return "move-out";
	case INOFD_EV_MOVE_IN:	return "move-in";
	case INOFD_EV_RESCAN:	return "rescan";
	case INOFD_EV_CHANGED:	return "changed";
	case INOFD_EV_ERROR:	return "error";
	}
	return "?";
}

static void handle(const struct inofd_event *ev)
{
	const char *root = ev->data ? ev->data : "-";

	switch (ev->type) {
	case INOFD_EV_RENAME:
		printf("%-8s [%s] %s -> %s\n", type_name(ev->type), root,
		       ev->from_path ? ev->from_path : "?",
		       ev->path ? ev->path : "?");
		break;
	case INOFD_EV_RESCAN:
		printf("%-8s events were lost: rescan everything\n",
		       type_name(ev->type));
		break;
	case INOFD_EV_ERROR:
		printf("%-8s [%s] %s: %s\n", type_name(ev->type), root,
		       ev->path ? ev->path : "?", inofd_strerror(ev->error));
		break;
	default:
		printf("%-8s [%s] %s mask=0x%08x%s\n", type_name(ev->type), root,
		       ev->path ? ev->path : "?", ev->mask,
		       (ev->flags & INOFD_EVF_SYNTHETIC) ? " (synthetic)" : "");
	}
}

int main(int argc, char **argv)
{
	struct inofd_opts o = { .sz = sizeof(o) };
	struct epoll_event e;
	int recursive = 0, ep, sfd, c, i, r;
	struct inofd *in;
	sigset_t ss;

	while ((c = getopt(argc, argv, "rC:")) != -1) {
		switch (c) {
		case 'r': recursive = 1; break;
		case 'C': o.coalesce_ms = (unsigned int)atoi(optarg); break;
		default:
			fprintf(stderr, "usage: epoll-watch [-r] [-C MS] PATH...\n");
			return 1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: epoll-watch [-r] [-C MS] PATH...\n");
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	r = inofd_new(&in, &o);
	if (r < 0) {
		fprintf(stderr, "epoll-watch: %s\n", inofd_strerror(r));
		return 1;
	}
	for (i = optind; i < argc; i++) {
		uint32_t mask = IN_CREATE | IN_DELETE | IN_MOVE | IN_MODIFY |
				IN_CLOSE_WRITE | IN_ATTRIB | IN_DELETE_SELF |
				IN_MOVE_SELF;

		r = recursive ? inofd_watch_tree_at(in, AT_FDCWD, argv[i], mask,
				&(struct inofd_tree_opts){
					.sz = sizeof(struct inofd_tree_opts),
					.data = argv[i] })
			      : inofd_watch_path(in, argv[i], mask, argv[i]);
		if (r < 0) {
			fprintf(stderr, "epoll-watch: %s: %s\n", argv[i],
				inofd_strerror(r));
			return 1;
		}
	}

	sigemptyset(&ss);
	sigaddset(&ss, SIGINT);
	sigaddset(&ss, SIGTERM);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	sfd = signalfd(-1, &ss, SFD_CLOEXEC);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0) {
		perror("epoll-watch");
		return 1;
	}
	e.events = EPOLLIN;
	e.data.fd = inofd_fd(in);
	epoll_ctl(ep, EPOLL_CTL_ADD, inofd_fd(in), &e);
	e.data.fd = sfd;
	epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &e);

	while (inofd_watch_count(in) > 0) {
		const struct inofd_event *ev;
		struct epoll_event got[2];
		int n = epoll_wait(ep, got, 2, inofd_timeout(in));

		if (n < 0 && errno != EINTR) {
			perror("epoll_wait");
			break;
		}
		for (i = 0; i < n; i++)
			if (got[i].data.fd == sfd)
				goto out;
		/* readable or timed out: both are a reason to call inofd_read */
		r = inofd_read(in);
		if (r < 0) {
			fprintf(stderr, "epoll-watch: %s\n", inofd_strerror(r));
			break;
		}
		while (inofd_next(in, &ev) > 0)
			handle(ev);
	}
out:
	inofd_free(in);
	close(ep);
	close(sfd);
	return 0;
}
