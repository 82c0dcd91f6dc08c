// SPDX-License-Identifier: LGPL-2.1-or-later
#include "unit.h"

#include <ftw.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <time.h>
#include <sys/wait.h>

static int fx_make(void **state, bool with_in)
{
	struct fx *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/inofd-unit.XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->r = calloc(MAXREC, sizeof(*f->r));
	if (!f->r)
		return -1;
	if (with_in && inofd_new(&f->in, NULL) < 0)
		return -1;
	*state = f;
	return 0;
}

int fx_setup(void **state)
{
	return fx_make(state, true);
}

int fx_setup_noin(void **state)
{
	return fx_make(state, false);
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	chmod(p, 0700);
	return remove(p);
}

int fx_teardown(void **state)
{
	struct fx *f = *state;

	inofd_free(f->in);
	nftw(f->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(f->r);
	free(f);
	return 0;
}

const char *P(struct fx *f, const char *rel)
{
	static char ring[8][PATH_MAX];
	static int i;
	char *p = ring[i++ % 8];

	snprintf(p, PATH_MAX, "%s/%s", f->dir, rel);
	return p;
}

void mkfile(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	close(fd);
}

void mkdirp(const char *path)
{
	assert_int_equal(mkdir(path, 0755), 0);
}

static void copy(char *dst, size_t n, const char *s, unsigned int *nulls,
		 unsigned int bit)
{
	snprintf(dst, n, "%s", s ? s : "");
	if (!s)
		*nulls |= bit;
}

void rec_copy(struct rec *r, const struct inofd_event *ev)
{
	r->type = ev->type;
	r->wd = ev->wd;
	r->from_wd = ev->from_wd;
	r->error = ev->error;
	r->mask = ev->mask;
	r->cookie = ev->cookie;
	r->flags = ev->flags;
	r->nulls = 0;
	r->data = ev->data;
	r->from_data = ev->from_data;
	r->ino = ev->ino;
	r->dev = ev->dev;
	copy(r->name, sizeof(r->name), ev->name, &r->nulls, REC_NULL_NAME);
	copy(r->path, sizeof(r->path), ev->path, &r->nulls, REC_NULL_PATH);
	copy(r->from_name, sizeof(r->from_name), ev->from_name, &r->nulls,
	     REC_NULL_FROM_NAME);
	copy(r->from_path, sizeof(r->from_path), ev->from_path, &r->nulls,
	     REC_NULL_FROM_PATH);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

int read_quiet(struct inofd *in, int quiet_ms,
	       int (*fn)(const struct inofd_event *ev, void *arg), void *arg)
{
	long end = now_ms() + QUIET_LIMIT_MS;
	int total = 0;

	for (;;) {
		struct pollfd p = { .fd = inofd_fd(in), .events = POLLIN };
		const struct inofd_event *ev;
		int t = inofd_timeout(in), got = 0, r;

		/* quiet_ms 0: no busy loop while a half is pending */
		if (t < 0 || (quiet_ms > 0 && t > quiet_ms))
			t = quiet_ms;
		if (now_ms() > end) {
			fprintf(stderr, "read_quiet: not quiet after %d ms "
				"(%d events)\n", QUIET_LIMIT_MS, total);
			return -ETIME;
		}
		if (poll(&p, 1, t) < 0 && errno != EINTR) {
			r = -errno;
			fprintf(stderr, "read_quiet: poll: %s\n", strerror(-r));
			return r;
		}
		r = inofd_read(in);
		if (r < 0) {
			fprintf(stderr, "read_quiet: inofd_read: %s\n",
				inofd_strerror(r));
			return r;
		}
		while ((r = inofd_next(in, &ev)) > 0) {
			got++;
			total++;
			if (fn && (r = fn(ev, arg)))
				return r;
		}
		if (r < 0) {
			fprintf(stderr, "read_quiet: inofd_next: %s\n",
				inofd_strerror(r));
			return r;
		}
		if (!got && !(p.revents & POLLIN) && inofd_timeout(in) < 0)
			return total;
	}
}

struct collection {
	struct rec *r;
	int *n, max;
	uint32_t ignore;
};

static int collect_one(const struct inofd_event *ev, void *arg)
{
	struct collection *c = arg;

	if (ev->type == INOFD_EV_INOTIFY && (ev->mask & c->ignore))
		return 0;
	if (*c->n >= c->max) {
		fprintf(stderr, "collect_quiet: more than %d events to keep\n",
			c->max);
		return -ENOSPC;
	}
	rec_copy(&c->r[(*c->n)++], ev);
	return 0;
}

int collect_quiet(struct inofd *in, int quiet_ms, uint32_t ignore,
		  struct rec *r, int *n, int max)
{
	struct collection c = { .r = r, .n = n, .max = max, .ignore = ignore };

	return read_quiet(in, quiet_ms, collect_one, &c);
}

int drain_at(struct fx *f, int quiet_ms, const char *file, int line)
{
	int r = collect_quiet(f->in, quiet_ms, f->ignore, f->r, &f->n, MAXREC);

	if (r < 0) {
		print_error("drain(%d ms) failed: %s\n", quiet_ms,
			    strerror(-r));
		_fail(file, line);
	}
	return f->n;
}

static bool match(const struct rec *r, int type, uint32_t mask,
		  const char *name)
{
	return r->type == type && (r->mask & mask) == mask &&
	       (!name || !strcmp(r->name, name));
}

int find(const struct fx *f, int type, uint32_t mask, const char *name)
{
	int i;

	for (i = 0; i < f->n; i++)
		if (match(&f->r[i], type, mask, name))
			return i;
	return -1;
}

int count(const struct fx *f, int type, uint32_t mask, const char *name)
{
	int i, n = 0;

	for (i = 0; i < f->n; i++)
		n += match(&f->r[i], type, mask, name);
	return n;
}

void dump(const struct fx *f)
{
	int i;

	for (i = 0; i < f->n; i++)
		print_message("  ev %d: type %d wd %d mask 0x%x name '%s' path '%s' "
			      "from '%s' flags %u err %d\n", i, f->r[i].type,
			      f->r[i].wd, f->r[i].mask, f->r[i].name,
			      f->r[i].path, f->r[i].from_path, f->r[i].flags,
			      f->r[i].error);
}

int in_child(int (*fn)(void *), void *arg)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		/* a crash ends the child, not cmocka's handler in it */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		signal(SIGABRT, SIG_DFL);
		_exit(fn(arg));
	}
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void in_child_watches(int (*fn)(void *), void *arg, const char *what)
{
	int r = in_child(fn, arg);

	if (r == 77) {
		print_message("no user namespace to lower max_user_watches: "
			      "skipped\n");
		skip();
	}
	if (r)
		fail_msg("%s failed at step %d", what, r);
}

int max_queued(void)
{
	FILE *fp = fopen("/proc/sys/fs/inotify/max_queued_events", "r");
	int n = 16384;

	if (fp) {
		if (fscanf(fp, "%d", &n) != 1 || n <= 0)
			n = 16384;
		fclose(fp);
	}
	return n;
}

/*
 * Allocation counting and failure (the binary is linked with
 * --wrap=malloc,calloc,realloc): every allocation of the library and of
 * the test goes through here.
 */
void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
long unit_allocs;
bool unit_fail_allocs;

void *__wrap_malloc(size_t n)
{
	unit_allocs++;
	return unit_fail_allocs ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
	unit_allocs++;
	return unit_fail_allocs ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
	unit_allocs++;
	return unit_fail_allocs ? NULL : __real_realloc(p, n);
}

int __real_epoll_ctl(int epfd, int op, int fd, struct epoll_event *e);
bool unit_fail_epoll_add;

int __wrap_epoll_ctl(int epfd, int op, int fd, struct epoll_event *e)
{
	if (unit_fail_epoll_add && op == EPOLL_CTL_ADD) {
		errno = ENOMEM;
		return -1;
	}
	return __real_epoll_ctl(epfd, op, fd, e);
}

/* max_user_watches, lowered in a user namespace of our own */
int limit_watches(int n)
{
	char map[64];
	FILE *fp;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	int fd;

	if (unshare(CLONE_NEWUSER) < 0)
		return -1;
	fd = open("/proc/self/setgroups", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "deny", 4) < 0) {}
		close(fd);
	}
	snprintf(map, sizeof(map), "0 %u 1", uid);
	fd = open("/proc/self/uid_map", O_WRONLY);
	if (fd < 0 || write(fd, map, strlen(map)) < 0)
		return -1;
	close(fd);
	snprintf(map, sizeof(map), "0 %u 1", gid);
	fd = open("/proc/self/gid_map", O_WRONLY);
	if (fd < 0 || write(fd, map, strlen(map)) < 0)
		return -1;
	close(fd);
	fp = fopen("/proc/sys/user/max_inotify_watches", "w");
	if (!fp)
		return -1;
	fprintf(fp, "%d\n", n);
	return fclose(fp) ? -1 : 0;
}

/*
 * A fresh instance on one forced backend (INOFD_FORCE_PROCFD, _FANOTIFY);
 * false where that backend is not to be had here (the caller skips it).
 */
bool fx_backend(struct fx *f, unsigned int flag)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = flag };
	int r;

	if (f->in)
		inofd_free(f->in);
	f->in = NULL;
	f->n = 0;
	r = inofd_new(&f->in, &o);
	if (r == -ENOSYS || r == -EPERM || r == -EINVAL)
		return false;
	assert_int_equal(r, 0);
	return true;
}

const struct unit_backend unit_backends[UNIT_NBACKENDS] = {
	{ INOFD_FORCE_PROCFD, "procfd" },
	{ INOFD_FORCE_FANOTIFY, "fanotify" },
};

const char *PB(struct fx *f, const char *be, const char *rel)
{
	char b[PATH_MAX];

	snprintf(b, sizeof(b), "%s/%s", be, rel);
	return P(f, b);
}

int touch_path(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}
