// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * lib_backends: run the same libinofd scenarios with INOFD_BACKEND=kernel
 * and INOFD_BACKEND=procfd and compare what they report, line by line.
 *
 * The procfd backend emulates INOTIFY_IOC_WATCH on a stock kernel; this test is
 * the proof that the emulation and the real thing agree (errnos, events,
 * paths, recursive watching).  Run as root and as an unprivileged user.
 *
 * Exit: 0 pass, 1 fail, 4 skip (no INOTIFY_IOC_WATCH in this kernel; a fail
 * instead if REQUIRE_INOTIFY_WATCH=1).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "inofd.h"

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

struct log {
	char	*buf;
	size_t	len, cap;
};

static char base[256];		/* per-run scratch directory */
/* every event of a run: seq 1, 2, 3, ...; a watched object's identity */
static uint64_t lastseq;
static int ident_bad;
static int wdmap[4096], nwd;	/* wd -> order of first appearance */
/* fanotify comparison: wds as "w*" (the order differs), see fan_compare() */
static int wd_any;

static void logp(struct log *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(l->buf ? l->buf + l->len : NULL,
			      l->buf ? l->cap - l->len : 0, fmt, ap);
		va_end(ap);
		if (n >= 0 && l->buf && l->len + (size_t)n < l->cap)
			break;
		l->cap = (l->cap + (size_t)n + 1) * 2;
		l->buf = realloc(l->buf, l->cap);
		if (!l->buf)
			exit(KSFT_FAIL);
	}
	l->len += (size_t)n;
}

/* wds may legitimately differ; their order of appearance may not */
static int wdname(int wd)
{
	int i;

	if (wd < 0)
		return -1;
	if (wd_any)
		return 0;
	for (i = 0; i < nwd; i++)
		if (wdmap[i] == wd)
			return i;
	if (nwd < 4096)
		wdmap[nwd++] = wd;
	return nwd - 1;
}

static const char *rel(const char *p)
{
	size_t n = strlen(base);

	if (!p)
		return "(null)";
	if (!strncmp(p, base, n))
		return p[n] ? p + n + 1 : ".";
	return p;
}

static const char *P(const char *r)
{
	static char ring[8][512];
	static int i;
	char *p = ring[i++ % 8];

	snprintf(p, 512, "%s/%s", base, r);
	return p;
}

static void touchf(const char *r)
{
	int fd = open(P(r), O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		if (write(fd, "x", 1) < 0) {}
		close(fd);
	}
}

/* collect everything until quiet, as text */
static void drain(struct inofd *in, struct log *l, int quiet_ms)
{
	for (;;) {
		struct pollfd p = { .fd = inofd_fd(in), .events = POLLIN };
		const struct inofd_event *ev;
		int t = inofd_timeout(in), got = 0;

		if (t < 0 || t > quiet_ms)
			t = quiet_ms;
		poll(&p, 1, t);
		if (inofd_read(in) < 0) {
			logp(l, "read error\n");
			return;
		}
		while (inofd_next(in, &ev) > 0) {
			got = 1;
			if (ev->seq != ++lastseq) {
				printf("# seq %llu after %llu\n",
				       (unsigned long long)ev->seq,
				       (unsigned long long)lastseq - 1);
				ident_bad++;
				lastseq = ev->seq;
			}
			/* every event read from the kernel names its object */
			if (!(ev->flags & INOFD_EVF_SYNTHETIC) &&
			    ev->type != INOFD_EV_RESCAN && !ev->ino) {
				printf("# no ino: type %d mask %08x\n",
				       ev->type, ev->mask);
				ident_bad++;
			}
			logp(l, "  ev type=%d w%d mask=%08x name=%s path=%s%s",
			     ev->type, wdname(ev->wd), ev->mask,
			     ev->name ? ev->name : "-", rel(ev->path),
			     (ev->flags & INOFD_EVF_SYNTHETIC) ? " synth" : "");
			if (ev->type == INOFD_EV_RENAME)
				logp(l, " from=w%d/%s", wdname(ev->from_wd),
				     ev->from_name);
			if (ev->type == INOFD_EV_ERROR)
				logp(l, " error=%d", ev->error);
			logp(l, " data=%s\n", ev->data ? (char *)ev->data : "-");
		}
		if (!got && !(p.revents & POLLIN) && inofd_timeout(in) < 0)
			return;
	}
}

/* ---- scenarios ----------------------------------------------------- */

static void sc_errors(struct inofd *in, struct log *l)
{
	int file, dir, efd, ep, closed, r, first;

	touchf("f");
	file = open(P("f"), O_RDONLY);
	dir = open(base, O_PATH | O_DIRECTORY);
	efd = eventfd(0, 0);
	ep = epoll_create1(0);
	closed = dup(file);
	close(closed);

	logp(l, "fd -1: %d\n", inofd_watch_fd(in, -1, IN_MODIFY, NULL));
	logp(l, "closed: %d\n", inofd_watch_fd(in, closed, IN_MODIFY, NULL));
	logp(l, "eventfd: %d\n", inofd_watch_fd(in, efd, IN_MODIFY, NULL));
	logp(l, "epoll: %d\n", inofd_watch_fd(in, ep, IN_MODIFY, NULL));
	logp(l, "onlydir file: %d\n",
	     inofd_watch_fd(in, file, IN_MODIFY | IN_ONLYDIR, NULL));
	logp(l, "mask 0: %d\n", inofd_watch_fd(in, file, 0, NULL));
	logp(l, "add|create: %d\n", inofd_watch_fd(in, file, IN_MODIFY |
						   IN_MASK_ADD | IN_MASK_CREATE,
						   NULL));
	first = r = inofd_watch_fd(in, dir, IN_CREATE, NULL);
	logp(l, "dir O_PATH: %s\n", r >= 0 ? "ok" : strerror(-r));
	logp(l, "mask_create again: %d\n",
	     inofd_watch_fd(in, dir, IN_CREATE | IN_MASK_CREATE, NULL));
	r = inofd_watch_fd(in, dir, IN_DELETE | IN_MASK_ADD, NULL);
	/* one more registration of the object, with a wd of its own */
	logp(l, "mask_add again: new wd %d\n", r >= 0 && r != first);
	/* an fd has no final symlink: refused, never dropped (coord ABI) */
	logp(l, "dont_follow: %d\n",
	     inofd_watch_fd(in, dir, IN_CREATE | IN_DONT_FOLLOW, NULL));

	/* unreadable: write-only fd and O_PATH fd (root may pass both) */
	close(file);
	chmod(P("f"), 0200);
	file = open(P("f"), O_WRONLY);
	logp(l, "write-only 0200: %d\n", (r = inofd_watch_fd(in, file,
							     IN_MODIFY, NULL)) < 0 ? r : 0);
	close(file);
	file = open(P("f"), O_PATH);
	logp(l, "O_PATH 0200: %d\n", (r = inofd_watch_fd(in, file, IN_MODIFY,
							 NULL)) < 0 ? r : 0);
	logp(l, "event-only bits: %d %d\n",
	     inofd_watch_fd(in, dir, IN_CREATE | IN_ISDIR, NULL),
	     inofd_watch_fd(in, dir, IN_CREATE | IN_UNMOUNT, NULL));
	close(file);
	close(dir);
	close(efd);
	close(ep);
	drain(in, l, 30);
}

/*
 * A descriptor open for reading of a file that is no longer readable:
 * both backends check read permission on the object as it is now, so an
 * unprivileged caller gets EACCES from both.
 */
static void sc_readfd_chmod(struct inofd *in, struct log *l)
{
	int fd, r, want;

	touchf("ro");
	fd = open(P("ro"), O_RDONLY);
	chmod(P("ro"), 0);
	r = inofd_watch_fd(in, fd, IN_MODIFY, NULL);
	close(fd);
	if (geteuid() == 0)
		want = 0;	/* root reads anything: no difference */
	else
		want = -EACCES;
	logp(l, "read fd, mode 000: %s\n",
	     (r < 0 ? r : 0) == want ? "as documented" : "UNEXPECTED");
	if ((r < 0 ? r : 0) != want)
		logp(l, "  backend %d got %d\n", inofd_backend(in), r);
}

static void sc_dir(struct inofd *in, struct log *l)
{
	int fd, wd;

	mkdir(P("d"), 0755);
	fd = open(P("d"), O_RDONLY | O_DIRECTORY);
	wd = inofd_watch_fd(in, fd, IN_ALL_EVENTS & ~(IN_ACCESS | IN_OPEN |
						       IN_CLOSE_NOWRITE), "d");
	close(fd);
	logp(l, "watch: %s\n", wd >= 0 ? "ok" : strerror(-wd));
	touchf("d/a");
	rename(P("d/a"), P("d/b"));
	mkdir(P("d/sub"), 0755);
	chmod(P("d/b"), 0600);
	unlink(P("d/b"));
	rmdir(P("d/sub"));
	rename(P("d"), P("d2"));
	rmdir(P("d2"));
	drain(in, l, 30);
	logp(l, "count: %d\n", inofd_watch_count(in));
}

static void sc_file_unwatch(struct inofd *in, struct log *l)
{
	int fd, a, b, p[2], r1, r2, r3;

	touchf("file");
	fd = open(P("file"), O_RDONLY);
	a = inofd_watch_fd(in, fd, IN_MODIFY | IN_ATTRIB, "file");
	close(fd);
	fd = open(P("gone"), O_RDWR | O_CREAT, 0600);
	unlink(P("gone"));
	b = inofd_watch_fd(in, fd, IN_MODIFY, "unlinked");
	if (write(fd, "y", 1) < 0) {}
	close(fd);
	if (pipe(p) == 0) {
		logp(l, "pipe: %s\n", inofd_watch_fd(in, p[1], IN_MODIFY,
						     "pipe") >= 0 ? "ok" : "err");
		if (write(p[1], "z", 1) < 0) {}
		close(p[0]);
		close(p[1]);
	}
	touchf("file");
	chmod(P("file"), 0600);
	drain(in, l, 30);
	/* one call per statement: argument order is unspecified */
	r1 = inofd_unwatch(in, a);
	r2 = inofd_unwatch(in, b);
	r3 = inofd_unwatch(in, a);
	logp(l, "unwatch: %d %d again: %d\n", r1, r2, r3);
	touchf("file");
	drain(in, l, 30);
}

static void sc_at(struct inofd *in, struct log *l)
{
	int dfd;

	mkdir(P("at"), 0755);
	touchf("at/target");
	touchf("at/once");
	if (symlink("target", P("at/link"))) {}
	dfd = open(P("at"), O_PATH | O_DIRECTORY);
	logp(l, "follow: %s\n", inofd_watch_at(in, dfd, "link", IN_ATTRIB, 0,
					       "t") >= 0 ? "ok" : "err");
	logp(l, "nofollow: %s\n", inofd_watch_at(in, dfd, "link",
						 IN_DELETE_SELF,
						 INOFD_AT_SYMLINK_NOFOLLOW,
						 "l") >= 0 ? "ok" : "err");
	logp(l, "empty: %s\n", inofd_watch_at(in, dfd, "", IN_CREATE,
					      INOFD_AT_EMPTY_PATH,
					      "at") >= 0 ? "ok" : "err");
	logp(l, "oneshot: %s\n", inofd_watch_path(in, P("at/once"),
						  IN_MODIFY | IN_ONESHOT,
						  "once") >= 0 ? "ok" : "err");
	close(dfd);
	chmod(P("at/target"), 0600);
	unlink(P("at/link"));
	touchf("at/new");
	touchf("at/once");
	touchf("at/once");
	drain(in, l, 30);
}

static void sc_tree(struct inofd *in, struct log *l)
{
	int r;

	mkdir(P("t"), 0755);
	mkdir(P("t/a"), 0755);
	mkdir(P("t/a/b"), 0755);
	mkdir(P("out"), 0755);
	touchf("t/a/b/f");
	r = inofd_watch_tree_at(in, AT_FDCWD, P("t"), IN_CREATE | IN_DELETE |
			     IN_MOVE | IN_CLOSE_WRITE,
			&(struct inofd_tree_opts){
				.sz = sizeof(struct inofd_tree_opts),
				.data = "tree" });
	logp(l, "tree: %s count %d\n", r >= 0 ? "ok" : strerror(-r),
	     inofd_watch_count(in));
	drain(in, l, 30);
	mkdir(P("t/n"), 0755);
	mkdir(P("t/n/m"), 0755);
	touchf("t/n/m/early");
	drain(in, l, 30);
	rename(P("t/a"), P("t/z"));
	touchf("t/z/b/after-rename");
	drain(in, l, 30);
	rename(P("t/z"), P("out/z"));
	drain(in, l, 30);
	touchf("out/z/b/unseen");
	rename(P("out/z"), P("t/back"));
	drain(in, l, 30);
	logp(l, "count: %d\n", inofd_watch_count(in));
}

static const struct {
	const char *name;
	void (*fn)(struct inofd *in, struct log *l);
	unsigned int flags;
} scenarios[] = {
	{ "errors", sc_errors, 0 },
	{ "dir-by-fd", sc_dir, 0 },
	{ "dir-by-fd-raw", sc_dir, INOFD_RAW_MOVES },
	{ "file-pipe-unwatch", sc_file_unwatch, 0 },
	{ "at-symlink-oneshot", sc_at, 0 },
	{ "tree", sc_tree, 0 },
	{ "readfd-chmod000", sc_readfd_chmod, 0 },
};
#define NSC	(sizeof(scenarios) / sizeof(scenarios[0]))

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st; (void)flag; (void)ftw;
	chmod(p, 0700);
	return remove(p);
}

static int run(const char *backend, size_t i, struct log *l)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = scenarios[i].flags };
	struct inofd *in;
	int r;

	setenv("INOFD_BACKEND", backend, 1);
	snprintf(base, sizeof(base), "/tmp/lib_backends.%s.XXXXXX", backend);
	if (!mkdtemp(base))
		return -errno;
	nwd = 0;
	lastseq = 0;
	ident_bad = 0;
	r = inofd_new(&in, &o);
	if (r < 0) {
		rmdir(base);
		return r;
	}
	if (inofd_backend(in) != (!strcmp(backend, "kernel") ?
				  INOFD_BACKEND_KERNEL :
				  !strcmp(backend, "fanotify") ?
				  INOFD_BACKEND_FANOTIFY : INOFD_BACKEND_PROCFD)) {
		inofd_free(in);
		return -EPROTO;
	}
	scenarios[i].fn(in, l);
	inofd_free(in);
	nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return ident_bad ? -EBADMSG : 0;
}

static void show(const char *tag, const struct log *l)
{
	printf("# --- %s\n", tag);
	fwrite(l->buf ? l->buf : "", 1, l->len, stdout);
}

/* ---- fanotify ------------------------------------------------------ */

/*
 * What fanotify cannot report (README, inofd_backend(3)), dropped from
 * the reference log before the comparison; each is pinned by a unit test
 * (tests/unit/test_fanotify.c):
 *   - an event on a subdirectory itself, to its parent's watch with its
 *     name (IN_ISDIR with a name, not an entry event): fanotify names the
 *     subdirectory by its own handle;
 *   - IN_UNMOUNT.
 */
static bool fan_cannot(const char *line)
{
	unsigned int mask;
	const char *m = strstr(line, " mask="), *n = strstr(line, " name=");

	if (!m || !n || sscanf(m, " mask=%x", &mask) != 1)
		return false;
	if (mask & IN_UNMOUNT)
		return true;
	return (mask & IN_ISDIR) && strncmp(n, " name=- ", 8) &&
	       !(mask & (IN_CREATE | IN_DELETE | IN_MOVE));
}

/*
 * Lines that differ on purpose: the reference's line, fanotify's line.
 * A stock kernel's fanotify refuses an O_PATH descriptor of a
 * non-directory (EBADF: it cannot open it again without /proc), so as
 * root, where the others accept it, the next watch gets the id it would
 * have had.  A kernel with the fanotify series (patches/fanotify/) takes
 * it, and the lines are the reference's (fan_refuses_opath()).
 */
static const struct {
	const char *scen, *ref, *fan;
} fan_differs[] = {
	{ "errors", "O_PATH 0200: 0", "O_PATH 0200: -9" },
	{ "errors", "O_PATH 0200: -13", "O_PATH 0200: -9" },
	{ "errors", "event-only bits: -22 5", "event-only bits: -22 4" },
};

/* Does this kernel's fanotify_mark() refuse an O_PATH fd (EBADF)? */
static bool fan_refuses_opath(void)
{
	static int known = -1;
	int g, fd, r, e;

	if (known >= 0)
		return known;
	g = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID, O_RDONLY);
	fd = open("/", O_PATH | O_DIRECTORY);
	r = fanotify_mark(g, FAN_MARK_REMOVE, FAN_CREATE, fd, NULL);
	e = errno;
	close(fd);
	if (g >= 0)
		close(g);
	known = r < 0 && e == EBADF;
	return known;
}

/*
 * Pipes: fanotify refuses them before 6.8 (pipefs has no fsid: ENODEV),
 * and accepts them from 6.8 on (weak fsids): the reference's "pipe: ok"
 * and the pipe's events are expected only there.
 */
static bool fan_pipe_refused(void)
{
	struct utsname u;
	int maj = 0, min = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &maj, &min) != 2)
		return false;
	return maj < 6 || (maj == 6 && min < 8);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The log as compared with fanotify's: the lines above dropped or
 * rewritten (ref), and the events of each drain sorted (fanotify merges
 * the queued events of one object and name, so their order differs; which
 * events come, with which names, paths and data, must not).
 */
static char *fan_norm(const struct log *l, const char *scen, bool ref)
{
	char *text = strndup(l->buf ? l->buf : "", l->len), *save = NULL;
	char **v = NULL, *out, *line;
	size_t n = 0, cap = 0, i, j, len = 0, start = 0;

	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (ref && fan_cannot(line))
			continue;
		if (ref && fan_pipe_refused()) {
			if (strstr(line, " data=pipe"))
				continue;
			if (!strcmp(line, "pipe: ok"))
				line = "pipe: err";
		}
		for (i = 0; ref && fan_refuses_opath() &&
			    i < sizeof(fan_differs) /
					sizeof(fan_differs[0]); i++)
			if (!strcmp(scen, fan_differs[i].scen) &&
			    !strcmp(line, fan_differs[i].ref))
				line = (char *)fan_differs[i].fan;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			v = realloc(v, cap * sizeof(*v));
			if (!v)
				exit(KSFT_FAIL);
		}
		v[n++] = line;
	}
	for (i = 0; i <= n; i++)
		if (i == n || strncmp(v[i], "  ev ", 5)) {
			qsort(v + start, i - start, sizeof(*v), cmp_line);
			start = i + 1;
		}
	for (i = 0; i < n; i++)
		len += strlen(v[i]) + 1;
	out = malloc(len + 1);
	if (!out)
		exit(KSFT_FAIL);
	for (i = j = 0; i < n; i++)
		j += (size_t)sprintf(out + j, "%s\n", v[i]);
	out[j] = '\0';
	free(v);
	free(text);
	return out;
}

int main(void)
{
	const char *req = getenv("REQUIRE_INOTIFY_WATCH");
	struct inofd_opts o = { .sz = sizeof(o), .flags = INOFD_FORCE_KERNEL };
	int have_kernel, have_fan, fails = 0, r;
	struct inofd *in;
	size_t i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(022);
	r = inofd_new(&in, &o);
	have_kernel = r == 0;
	inofd_free(in);
	o.flags = INOFD_FORCE_FANOTIFY;
	r = inofd_new(&in, &o);
	have_fan = r == 0;
	inofd_free(in);
	printf("# uid %d, kernel backend %s, fanotify backend %s\n",
	       (int)getuid(), have_kernel ? "present" : "absent",
	       have_fan ? "present" : "absent");
	printf("1..%zu\n", 2 * NSC);

	for (i = 0; i < NSC; i++) {
		struct log k = { 0 }, p = { 0 };

		r = run("procfd", i, &p);
		if (r < 0) {
			printf("not ok %zu - %s: procfd backend: %s\n", i + 1,
			       scenarios[i].name, inofd_strerror(r));
			fails++;
			continue;
		}
		if (!have_kernel) {
			show("procfd", &p);
			printf("ok %zu - %s # SKIP no INOTIFY_IOC_WATCH to compare "
			       "with\n", i + 1, scenarios[i].name);
			continue;
		}
		r = run("kernel", i, &k);
		if (r < 0) {
			printf("not ok %zu - %s: kernel backend: %s\n", i + 1,
			       scenarios[i].name, inofd_strerror(r));
			fails++;
		} else if (k.len != p.len || memcmp(k.buf, p.buf, k.len)) {
			show("kernel", &k);
			show("procfd", &p);
			printf("not ok %zu - %s: the backends disagree\n", i + 1,
			       scenarios[i].name);
			fails++;
		} else {
			show("both", &k);
			printf("ok %zu - %s\n", i + 1, scenarios[i].name);
		}
		free(k.buf);
		free(p.buf);
	}

	/*
	 * fanotify against the reference (the kernel backend, or procfd
	 * without it): the same events, names, paths and data, less what
	 * fanotify cannot report (fan_cannot()), in any order within a drain.
	 */
	for (i = 0; i < NSC; i++) {
		const char *refb = have_kernel ? "kernel" : "procfd";
		struct log k = { 0 }, f = { 0 };
		char *a, *b;

		if (!have_fan) {
			printf("ok %zu - %s: fanotify # SKIP no fanotify "
			       "backend here\n", NSC + i + 1, scenarios[i].name);
			continue;
		}
		wd_any = 1;
		r = run(refb, i, &k);
		if (r >= 0)
			r = run("fanotify", i, &f);
		wd_any = 0;
		if (r < 0) {
			printf("not ok %zu - %s: fanotify: %s\n", NSC + i + 1,
			       scenarios[i].name, inofd_strerror(r));
			fails++;
			continue;
		}
		a = fan_norm(&k, scenarios[i].name, true);
		b = fan_norm(&f, scenarios[i].name, false);
		if (strcmp(a, b)) {
			printf("# --- %s (as compared)\n%s# --- fanotify (as "
			       "compared)\n%s", refb, a, b);
			printf("not ok %zu - %s: fanotify and %s disagree\n",
			       NSC + i + 1, scenarios[i].name, refb);
			fails++;
		} else {
			printf("# --- fanotify and %s (as compared)\n%s", refb, a);
			printf("ok %zu - %s: fanotify\n", NSC + i + 1,
			       scenarios[i].name);
		}
		free(a);
		free(b);
		free(k.buf);
		free(f.buf);
	}
	if (fails)
		return KSFT_FAIL;
	if (!have_kernel) {
		if (req && !strcmp(req, "1")) {
			printf("# REQUIRE_INOTIFY_WATCH=1 but this kernel has "
			       "no INOTIFY_IOC_WATCH: FAIL\n");
			return KSFT_FAIL;
		}
		return KSFT_SKIP;
	}
	return KSFT_PASS;
}
