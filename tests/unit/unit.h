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

struct rec {
	int type, wd, from_wd, error;
	uint32_t mask, cookie;
	unsigned int flags;
	char name[256], path[PATH_MAX], from_name[256], from_path[PATH_MAX];
	void *data, *from_data;
	uint64_t ino, dev;
};

#define MAXREC 4096

struct fx {
	char dir[256];		/* a fresh directory, removed afterwards */
	struct inofd *in;
	struct rec *r;
	int n;
	uint32_t ignore;	/* drain() does not record these events */
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

/* read events until none came for quiet_ms; appends to f->r */
int drain(struct fx *f, int quiet_ms);
/* index of the first record matching, or -1; name NULL matches any */
/* fs.inotify.max_queued_events (16384 when it cannot be read) */
int max_queued(void);
/* in a child (in_child()): lower max_user_watches to n in a user
 * namespace of its own; -1 when that is not possible */
int limit_watches(int n);
int find(const struct fx *f, int type, uint32_t mask, const char *name);
int count(const struct fx *f, int type, uint32_t mask, const char *name);
void dump(const struct fx *f);

/* allocations made so far, and a switch that makes them all fail */
extern long unit_allocs;
extern bool unit_fail_allocs;

/* internal entry points of libinofd (libinofd-internal.a) */
int inofd__feed(struct inofd *in, const void *buf, size_t len);
int inofd__kwd_of(const struct inofd *in, dev_t dev, ino_t ino);

/* run fn in a child; returns its exit status, 77 = skip */
int in_child(int (*fn)(void *), void *arg);

#define TESTS(name) \
	extern const struct CMUnitTest name##_tests[]; \
	extern const size_t name##_ntests;
#define DEFINE_TESTS(name, ...) \
	const struct CMUnitTest name##_tests[] = { __VA_ARGS__ }; \
	const size_t name##_ntests = sizeof(name##_tests) / sizeof(name##_tests[0]);

#define T(fn)	cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define TN(fn)	cmocka_unit_test_setup_teardown(fn, fx_setup_noin, fx_teardown)

#endif
