/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Shared helpers of the libinofd unit tests. */
#ifndef UNIT_H
#define UNIT_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "inofd.h"

/* A copy of one event (rec_copy()): a NULL string is kept as "", and
 * said in nulls (REC_NULL_*). */
struct rec {
	int type, wd, from_wd, error;
	uint32_t mask, cookie;
	unsigned int flags, nulls;
	char name[256], path[PATH_MAX], from_name[256], from_path[PATH_MAX];
	void *data, *from_data;
	uint64_t ino, dev;
};

#define REC_NULL_NAME		0x1u
#define REC_NULL_PATH		0x2u
#define REC_NULL_FROM_NAME	0x4u
#define REC_NULL_FROM_PATH	0x8u

#define MAXREC 4096

struct fx {
	char dir[256];		/* a fresh directory, removed afterwards */
	struct inofd *in;
	struct rec *r;
	int n;
	uint32_t ignore;	/* drain() does not keep these events */
};

/* fixture: temp dir + a default instance */
int fx_setup(void **state);
int fx_teardown(void **state);
/* the same with a caller-chosen instance (fx->in == NULL) */
int fx_setup_noin(void **state);

/* p = dir/rel, in a static ring of buffers */
const char *P(struct fx *f, const char *rel);
void mkfile(const char *path);
void mkdirp(const char *path);

/*
 * Reading an instance until it is quiet: the one loop of the tests.
 * Neither function below uses a cmocka assert, so both can run in a child
 * (in_child()): they say what went wrong on stderr and return a negative
 * number.
 *
 * read_quiet(): rounds of poll(2) on inofd_fd(), inofd_read() and
 * inofd_next() until the instance is quiet: a round in which the
 * descriptor did not become readable, the read brought no event, and
 * after which nothing is pending (inofd_timeout() -1).  A round's poll
 * waits quiet_ms, or less when inofd_timeout() asks for less (a rename
 * half due sooner); quiet_ms 0 takes what is ready without waiting, but
 * still waits for what is pending.  Every event goes to
 * fn(ev, arg) (fn NULL: dropped); fn returns 0 to go on, or a negative
 * number that stops the reading and is returned.  Returns the number of
 * events read, or -errno when poll(), inofd_read() or inofd_next() fails,
 * or -ETIME when the instance is still not quiet after QUIET_LIMIT_MS.
 */
#define QUIET_LIMIT_MS	60000
int read_quiet(struct inofd *in, int quiet_ms,
	       int (*fn)(const struct inofd_event *ev, void *arg), void *arg);
/*
 * collect_quiet(): read_quiet(), each event copied with rec_copy() into
 * the caller's array r[0..max - 1] at r[*n], *n advanced; inotify events
 * with a mask bit in ignore are read but not kept.  Returns the number of
 * events read (kept or not), or as read_quiet(), or -ENOSPC as soon as an
 * event is to be kept and *n is already max (nothing is dropped silently).
 */
int collect_quiet(struct inofd *in, int quiet_ms, uint32_t ignore,
		  struct rec *r, int *n, int max);
/* one event copied, its strings too */
void rec_copy(struct rec *r, const struct inofd_event *ev);
/* the fixture's collect_quiet(): f->in into f->r (MAXREC), f->n, past
 * f->ignore; a failure fails the test at the caller's line */
#define drain(f, quiet_ms)	drain_at((f), (quiet_ms), __FILE__, __LINE__)
int drain_at(struct fx *f, int quiet_ms, const char *file, int line);
/* index of the first record matching, or -1; name NULL matches any */
int find(const struct fx *f, int type, uint32_t mask, const char *name);
int count(const struct fx *f, int type, uint32_t mask, const char *name);
void dump(const struct fx *f);

/* fs.inotify.max_queued_events (16384 when it cannot be read) */
int max_queued(void);
/* in a child (in_child()): lower max_user_watches to n in a user
 * namespace of its own; -1 when that is not possible */
int limit_watches(int n);

/* allocations made so far, and a switch that makes them all fail */
extern long unit_allocs;
extern bool unit_fail_allocs;
/* a switch that makes epoll_ctl(EPOLL_CTL_ADD) fail with ENOMEM */
extern bool unit_fail_epoll_add;

/* internal entry points of libinofd (libinofd-internal.a) */
int inofd__feed(struct inofd *in, const void *buf, size_t len);
int inofd__kwd_of(const struct inofd *in, dev_t dev, ino_t ino);

/* run fn in a child; returns its exit status, 77 = skip */
int in_child(int (*fn)(void *), void *arg);
/* in_child() for a scenario that lowers max_user_watches (limit_watches()
 * returning -1: 77): 77 skips the test, any other non-zero status fails
 * it, saying "WHAT failed at step N" */
void in_child_watches(int (*fn)(void *), void *arg, const char *what);

/* a scenario step run in a child: on failure say where, return code */
#define CHECK(c, code) do { if (!(c)) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, #c); \
	return code; } } while (0)
/* create (or truncate) a file: 0, or -1 with errno */
int touch_path(const char *path);
#define MKD(p)	CHECK(mkdir(p, 0755) == 0, 90)
#define MKF(p)	CHECK(touch_path(p) == 0, 91)

/* the host's backends, each test run on both (EACH_BACKEND) */
struct unit_backend {
	unsigned int flag;
	const char *name;
};
#define UNIT_NBACKENDS 2
extern const struct unit_backend unit_backends[UNIT_NBACKENDS];
bool fx_backend(struct fx *f, unsigned int flag);
/* for (each backend) with be its name; one not to be had here is skipped */
#define EACH_BACKEND(f, be) \
	for (size_t k_ = 0; k_ < UNIT_NBACKENDS; k_++) \
		if (((be) = unit_backends[k_].name), \
		    !fx_backend((f), unit_backends[k_].flag)) \
			print_message("%s: not here, skipped\n", (be)); \
		else
/* be/rel under the fixture's directory: each backend's own copy */
const char *PB(struct fx *f, const char *be, const char *rel);

#define TESTS(name) \
	extern const struct CMUnitTest name##_tests[]; \
	extern const size_t name##_ntests;
#define DEFINE_TESTS(name, ...) \
	const struct CMUnitTest name##_tests[] = { __VA_ARGS__ }; \
	const size_t name##_ntests = sizeof(name##_tests) / sizeof(name##_tests[0]);

#define T(fn)	cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define TN(fn)	cmocka_unit_test_setup_teardown(fn, fx_setup_noin, fx_teardown)

#endif
