// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch-fd: inotifywait(1) by file descriptor.
 *
 * Each FILE is opened (O_PATH by default), watched through its descriptor
 * with libinofd, and the descriptor is closed at once: the watch pins no
 * fd, so the filesystem stays unmountable.  Options, output and exit codes
 * are those of Debian 12's inotifywait (inotify-tools 3.22); what
 * inotifywait lacks comes as options (--pair-moves, --use-rdonly, -C, -v)
 * or as clearly marked output (the Q_OVERFLOW rescan line).  See
 * watch-fd(1).
 *
 * This file holds the watches and the event loop: every libinofd call is
 * here.  The command line is watch-fd-opts.c, the output watch-fd-out.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inofd.h"
#include "watch-fd.h"

/* One watched FILE argument. */
struct arg {
	char *disp;		/* %w: as given, '/' appended for a directory */
	int wd;			/* -1: not watched (named before: a duplicate) */
	int tree;		/* a recursive watch */
	int ncomp;		/* tree: components of the library's root path */
	int lost;		/* tree: its root moved where no path leads */
	int own_close;		/* --use-rdonly: our close(2) is still to come */
	int have_id;
	dev_t dev;		/* the object watched */
	ino_t ino;
	char *real;		/* tree: realpath(3) of FILE when watched */
	int linked;		/* tree: FILE goes through a symlink: %w is
				 * FILE while FILE names the tree's root, else
				 * the library's (real) path */
};

/* The run. */
struct wf {
	struct cfg *c;
	struct inofd *in;
	struct arg *args;
	size_t nargs;		/* FILEs set up so far */
	int stdin_lent;		/* fd 0 was closed to watch with ulimit -n 4 */
};

/* ---------------------------------------------------------- paths */

/*
 * Skip n components of the first len bytes of an absolute path, then the
 * slashes after them.  Returns the rest (*rl bytes) or NULL if the path
 * has fewer components.
 */
static const char *skip_comps(const char *p, size_t len, int n, size_t *rl)
{
	const char *e = p + len;

	while (n-- > 0) {
		while (p < e && *p == '/')
			p++;
		if (p == e)
			return NULL;
		while (p < e && *p != '/')
			p++;
	}
	while (p < e && *p == '/')
		p++;
	*rl = (size_t)(e - p);
	return p;
}

static int count_comps(const char *p)
{
	size_t rl;
	int n = 0;

	while (skip_comps(p, strlen(p), n + 1, &rl))
		n++;
	return n;
}

/* The length of path without its last component "/name", if it is. */
static size_t dir_len(const char *path, const char *name)
{
	size_t pl = strlen(path), nl = name ? strlen(name) : 0;

	if (nl && pl > nl && path[pl - nl - 1] == '/' &&
	    !strcmp(path + pl - nl, name))
		pl -= nl + 1;
	return pl;
}

/*
 * Does FILE (through its link) still name the tree's root, the first
 * a->ncomp components of the library's path?
 */
static int still_named(const struct arg *a, const char *path, size_t pl)
{
	char *now = realpath(a->disp, NULL);
	const char *rel;
	size_t rl, n;
	int same;

	if (!now)
		return 0;
	rel = skip_comps(path, pl, a->ncomp, &rl);
	n = rel ? (size_t)(rel - path) : pl;
	while (n > 1 && path[n - 1] == '/')
		n--;
	same = strlen(now) == n && !strncmp(now, path, n);
	free(now);
	return same;
}

/*
 * %w of an event: the FILE as the user typed it, or for a directory
 * inside a recursive watch, that FILE followed by the directory's path
 * below the tree's root.  A tree's root keeps its number of path
 * components however it is renamed (the library follows renames within
 * the same parent only, its own or an ancestor's), so what is below the
 * root is what follows that many components: the user's prefix survives
 * a rename of the root or of a directory above it.  Returns a malloc'ed
 * string, or NULL for an unknown watch (Q_OVERFLOW).
 */
static char *tree_disp(const struct arg *a, const char *path, size_t pl)
{
	const char *rel;
	size_t rl;
	char *s;

	/*
	 * FILE went through a symlink: the tree is what the link named when
	 * it was watched, and FILE may name something else by now (ln -sfn).
	 * While it names the tree's root, FILE as the user gave it (as
	 * inotifywait prints it); else the library's path, the real one,
	 * renames followed.
	 */
	if (a->linked && !still_named(a, path, pl)) {
		if (asprintf(&s, "%.*s%s", (int)pl, path,
			     pl && path[pl - 1] == '/' ? "" : "/") < 0)
			return NULL;
		return s;
	}

	rel = skip_comps(path, pl, a->ncomp, &rl);
	if (!rel || !rl)
		return strdup(a->disp);
	if (asprintf(&s, "%s%.*s/", a->disp, (int)rl, rel) < 0)
		return NULL;
	return s;
}

static char *watch_disp(const struct arg *a, const char *path,
			const char *name)
{
	if (!a)
		return NULL;
	if (!a->tree || !path)
		return strdup(a->disp);
	return tree_disp(a, path, dir_len(path, name));
}

/* Does FILE go through a symlink (its last component included)? */
static int through_link(const char *file)
{
	char *p = strdup(file), *s;
	struct stat st;
	int linked = 0;

	if (!p)
		return 0;
	for (s = p; !linked && *s; ) {
		char c;

		s += strspn(s, "/");
		if (!*s)
			break;
		s += strcspn(s, "/");
		c = *s;
		*s = '\0';
		linked = !lstat(p, &st) && S_ISLNK(st.st_mode);
		*s = c;
	}
	free(p);
	return linked;
}

/* Is FILE's real path below (or at) a tree's? */
static int below(const char *p, const char *root)
{
	size_t rl = strlen(root);

	return !strncmp(p, root, rl) &&
	       (!p[rl] || p[rl] == '/' || (rl == 1 && *root == '/'));
}

/* ---------------------------------------------------------- setup */

static void watch_error(const struct cfg *c, const char *file, int err)
{
	if (err == -ENOSPC) {
		wf_diag(c, "Failed to watch %s; upper limit on inotify "
			"watches reached!\n", file);
		wf_diag(c, "Please increase the amount of inotify watches "
			"allowed per user via `/proc/sys/fs/inotify/"
			"max_user_watches'.\n");
	} else {
		/* strerror, not inofd_strerror: inotifywait's words */
		wf_diag(c, "Couldn't watch %s: %s\n", file, strerror(-err));
	}
}

/*
 * With every descriptor in use (ulimit -n 4: 0, 1, 2 and the inotify
 * instance), there is none to watch through.  inotifywait needs none:
 * it watches by path.  Lend standard input, which neither tool reads
 * after start-up, once; /dev/null takes its place when the watches are
 * set up.  Returns 1 if a descriptor was freed.
 */
static int lend_stdin(struct wf *w, int err)
{
	if (err != -EMFILE || w->stdin_lent)
		return 0;
	w->stdin_lent = 1;
	close(STDIN_FILENO);
	return 1;
}

static int open_file(struct wf *w, const char *file, int flags)
{
	int fd = open(file, flags);

	if (fd < 0 && lend_stdin(w, -errno))
		fd = open(file, flags);
	return fd < 0 ? -errno : fd;
}

static long handle(struct wf *w, const struct inofd_event *ev);
static void tree_error(struct wf *w, const struct inofd_event *ev);

/*
 * Errors of a tree's first walk, queued by the watch call.  inotifywait
 * skips a subdirectory it may not read or that went away meanwhile, and
 * fails on anything else (EMFILE) as if the FILE could not be watched.
 */
static int walk_errors(struct wf *w, const char *file)
{
	const struct inofd_event *ev;

	while (inofd_next(w->in, &ev) > 0) {
		if (ev->type != INOFD_EV_ERROR) {
			handle(w, ev);
			continue;
		}
		if (!ev->name) {
			/* the directories above FILE: the tree goes on */
			tree_error(w, ev);
			continue;
		}
		switch (-ev->error) {
		case EACCES: case EPERM: case ENOENT: case ENOTDIR:
		case ELOOP: case ESTALE:
			continue;
		default:
			watch_error(w->c, file, ev->error);
			return 1;
		}
	}
	return 0;
}

/*
 * The object FILE names (what the watch will be on), to watch it once:
 * inotifywait's watches are per inode, and an event prints under the
 * first name given.
 */
static int duplicate(struct wf *w, const char *file, struct arg *a)
{
	const struct cfg *c = w->c;
	struct stat st, ls;
	size_t j;

	if (stat(file, &st) < 0) {
		if (lstat(file, &st) < 0)
			return 0;	/* the watch says why */
	} else if (c->nofollow && !lstat(file, &ls) && S_ISLNK(ls.st_mode) &&
		   !(c->recursive && S_ISDIR(st.st_mode))) {
		st = ls;
	}
	a->dev = st.st_dev;
	a->ino = st.st_ino;
	a->have_id = 1;
	if (c->recursive && S_ISDIR(st.st_mode))
		a->real = realpath(file, NULL);
	for (j = 0; j < w->nargs; j++) {
		const struct arg *b = &w->args[j];

		if (b->wd < 0)
			continue;
		if (b->have_id && b->dev == a->dev && b->ino == a->ino)
			return 1;
		/* a tree inside a tree named before: covered by it */
		if (a->real && b->real && below(a->real, b->real))
			return 1;
	}
	return 0;
}

/* Open, watch by fd, close.  Returns 0 or 1 (exit status). */
static int add_watch(struct wf *w, const char *file, uint32_t kmask,
		     struct arg *a)
{
	const struct cfg *c = w->c;
	struct inofd *in = w->in;
	struct stat st;
	const char *root;
	int fd, r, isdir;

	a->wd = -1;
	if (duplicate(w, file, a))
		return 0;
	/* -P: a symlink itself; with -r, inotifywait walks a link to a dir */
	if (c->nofollow && !lstat(file, &st) && S_ISLNK(st.st_mode) &&
	    !(c->recursive && !stat(file, &st) && S_ISDIR(st.st_mode))) {
		/* the library opens it O_PATH|O_NOFOLLOW, watches, closes */
		do
			r = inofd_watch_at(in, AT_FDCWD, file, kmask,
					   INOFD_AT_SYMLINK_NOFOLLOW, a);
		while (lend_stdin(w, r));
		if (r < 0) {
			watch_error(c, file, r);
			return 1;
		}
		a->wd = r;
		isdir = 0;
		goto name;
	}
	fd = open_file(w, file, (c->rdonly ? O_RDONLY | O_NONBLOCK : O_PATH) |
		       O_CLOEXEC);
	if (fd < 0) {
		watch_error(c, file, fd);
		return 1;
	}
	isdir = !fstat(fd, &st) && S_ISDIR(st.st_mode);
	if (c->recursive && isdir) {
		INOFD_TREE_OPTS(to, .flags = INOFD_AT_EMPTY_PATH |
				    ((c->events & IN_IGNORED) ?
				     INOFD_TREE_MEMBER_ENDS : 0),
				.data = a);

		a->tree = 1;
		r = inofd_watch_tree_at(in, fd, "", kmask & ~IN_ONESHOT, &to);
	} else {
		r = inofd_watch_fd(in, fd, kmask, a);
	}
	/* the point of the exercise: the watch outlives the descriptor */
	close(fd);
	if (r < 0) {
		watch_error(c, file, r);
		return 1;
	}
	a->wd = r;
	a->own_close = c->rdonly;
	if (a->tree) {
		a->linked = through_link(file);
		if (inofd_wd_path(in, r, &root) == 0 && root)
			a->ncomp = count_comps(root);
		else if (a->real)
			a->ncomp = count_comps(a->real);
	}
	/* inotifytools: a directory named by a symlink gets no '/' without -r */
	if (!c->recursive)
		isdir = !lstat(file, &st) && S_ISDIR(st.st_mode);
name:
	if (isdir && file[strlen(file) - 1] != '/') {
		if (asprintf(&a->disp, "%s/", file) < 0)
			return 1;
	} else {
		a->disp = strdup(file);
	}
	if (!a->disp)
		return 1;
	return a->tree ? walk_errors(w, file) : 0;
}

/* ---------------------------------------------------------- events */

/*
 * A tree's event in a directory that the tree of a FILE named before
 * covers too: that tree prints it (inotifywait prints an event once,
 * under the first name).
 */
static int covered(const struct wf *w, const struct arg *a, const char *dir,
		   size_t dl)
{
	const struct arg *b;
	const char *root;
	size_t rl;

	for (b = w->args; b < a; b++) {
		if (!b->tree || b->wd < 0 ||
		    inofd_wd_path(w->in, b->wd, &root) < 0 || !root)
			continue;
		rl = strlen(root);
		if (dl >= rl && !strncmp(dir, root, rl) &&
		    (dl == rl || dir[rl] == '/' || rl == 1))
			return 1;
	}
	return 0;
}

/* "@FILE" exclusions: W below an excluded directory (as strings). */
static int excluded_dir(const struct cfg *c, const char *w)
{
	size_t i;

	for (i = 0; w && i < c->nexcl; i++) {
		size_t el = strlen(c->excl[i]);

		if (!el)
			continue;	/* also named as a FILE: watched */
		while (el > 1 && c->excl[i][el - 1] == '/')
			el--;
		if (!strncmp(w, c->excl[i], el) && w[el] == '/')
			return 1;
	}
	return 0;
}

/* --exclude/--include: the regex runs on "%w%f" */
static int regex_drops(const struct cfg *c, const char *w, const char *f)
{
	char *s;
	int match;

	if (!c->have_re)
		return 0;
	if (asprintf(&s, "%s%s", w ? w : "", f ? f : "") < 0)
		return 0;
	match = regexec(&c->re, s, 0, NULL, 0) == 0;
	free(s);
	return c->invert_re ? !match : match;
}

/* A tree could not follow: inotifywait's words for a new directory. */
static void tree_error(struct wf *w, const struct inofd_event *ev)
{
	struct arg *a = ev->data;
	char *d;

	if (ev->flags & INOFD_EVF_LOST) {
		/* moved where no path leads: the tree goes silent */
		if (a)
			a->lost = 1;
		if (w->c->verbose)
			fprintf(stderr, "watch-fd: %s: %s\n", a ? a->disp : "",
				inofd_strerror(ev->error));
		return;
	}
	if (!ev->name) {
		/*
		 * The directories above the top one could not all be watched
		 * (max_user_watches, EACCES): the tree goes on, and renames
		 * up there are not followed as they happen (inotifywait
		 * never watches them).
		 */
		wf_diag(w->c, "Couldn't watch the directories above %s: %s\n",
			a ? a->disp : "", strerror(-ev->error));
		return;
	}
	/* path names the directory that could not be watched */
	d = a && a->tree && ev->path ?
	    tree_disp(a, ev->path, strlen(ev->path)) : NULL;
	wf_diag(w->c, "Couldn't watch new directory %s: %s\n",
		d ? d : "", strerror(-ev->error));
	free(d);
}

static long handle(struct wf *w, const struct inofd_event *ev);

/*
 * A directory of a tree changed under it: a mount came or went there
 * (the library walks it again itself; no event was lost).  inotifywait
 * prints the kernel's UNMOUNT of the directory whose mount went (when
 * asked for it, -e unmount) and nothing when a mount comes: so does
 * watch-fd, as an event of the directory itself, through the same
 * filters.  Then it follows what is there now (inotifywait goes silent
 * there: DIFFERENCES in watch-fd(1)).
 */
static long tree_remount(struct wf *w, const struct inofd_event *ev)
{
	struct inofd_event e = *ev;

	if (!(ev->mask & IN_UNMOUNT))
		return -1;
	e.type = INOFD_EV_INOTIFY;
	e.mask = IN_UNMOUNT | IN_ISDIR;
	e.name = NULL;
	e.flags &= ~INOFD_EVF_SYNTHETIC;
	return handle(w, &e);
}

/*
 * Handle one library event.  Returns -1 if the event does not count (our
 * own close, a filtered event, an error report), else the mask that
 * decides the exit status of a single-event run.
 */
static long handle(struct wf *w, const struct inofd_event *ev)
{
	const struct cfg *c = w->c;
	struct arg *a = ev->data;
	struct line l = { .mask = ev->mask, .f = ev->name,
			  .cookie = ev->cookie };
	char *wd = NULL, *fw = NULL;
	long ret = -1;

	switch (ev->type) {
	case INOFD_EV_RESCAN:
		if (ev->wd != -1 && a && a->tree)
			return tree_remount(w, ev);
		/* events were lost: a marked line, always printed */
		l.mask = IN_Q_OVERFLOW;
		wf_emit(c, &l);
		return IN_Q_OVERFLOW;
	case INOFD_EV_ERROR:
		tree_error(w, ev);
		return -1;
	default:
		break;
	}
	/*
	 * In a directory moved out of the tree, or anywhere in a tree whose
	 * top directory moved where no path leads: no name is right any
	 * more, so nothing is printed (inotifywait prints stale names).
	 */
	if (a && a->tree && !ev->path)
		return -1;
	if (a && a->tree && ev->path &&
	    covered(w, a, ev->path, dir_len(ev->path, ev->name)))
		return -1;
	/*
	 * --use-rdonly: closing the O_RDONLY descriptor after watching it is
	 * an event on the watch, ours, not the watched object's.
	 */
	if (a && a->own_close && ev->type == INOFD_EV_INOTIFY &&
	    ev->wd == a->wd && !ev->name && (ev->mask & IN_CLOSE_NOWRITE)) {
		a->own_close = 0;
		if (!c->verbose)
			return -1;
	}
	wd = watch_disp(a, ev->path, ev->name);
	l.w = wd;
	/*
	 * A subdirectory's end (INOFD_TREE_MEMBER_ENDS): inotifywait prints
	 * the kernel's IN_IGNORED of a deleted or unmounted subdirectory,
	 * in the kernel's order.  The ends the library makes itself (a
	 * directory moved out of the tree, a crawl that did not find it)
	 * are not printed: inotifywait keeps those watches.
	 */
	if ((ev->flags & INOFD_EVF_MEMBER) && (ev->flags & INOFD_EVF_SYNTHETIC))
		goto out;
	/*
	 * -e ignored alone asks the kernel for DELETE_SELF (a watch needs
	 * a bit): a subdirectory's DELETE_SELF is not an event of the run,
	 * its IGNORED (next) is.
	 */
	if (a && a->tree && (c->events & IN_IGNORED) && !ev->name &&
	    ev->type == INOFD_EV_INOTIFY && wd && strcmp(wd, a->disp) &&
	    !(ev->mask & (c->events | IN_UNMOUNT | IN_IGNORED)))
		goto out;
	if (ev->type == INOFD_EV_RENAME) {
		fw = watch_disp(ev->from_data, ev->from_path, ev->from_name);
		l.fw = fw;
		l.ff = ev->from_name;
		if ((excluded_dir(c, wd) && excluded_dir(c, fw)) ||
		    (regex_drops(c, wd, l.f) && regex_drops(c, fw, l.ff)))
			goto out;
	} else if (excluded_dir(c, wd) || regex_drops(c, wd, l.f)) {
		goto out;
	}
	ret = ev->mask;
	if (ev->mask & c->events)
		wf_emit(c, &l);
out:
	free(wd);
	free(fw);
	return ret;
}

/* ---------------------------------------------------------- main */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * -d: inotifywait's daemon: the output file must exist (its absolute
 * path is taken first), then daemon(3) (working directory /, standard
 * streams on /dev/null), events appended to that file.
 */
static int daemonize(const struct cfg *c)
{
	char *log = realpath(c->outfile, NULL);
	int fd;

	if (!log) {
		fprintf(stderr, "%s: %s\n", strerror(errno), c->outfile);
		return 1;
	}
	if (daemon(0, 0)) {
		fprintf(stderr, "Failed to daemonize!\n");
		return 1;
	}
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0)
		return 1;	/* stderr is /dev/null: as inotifywait */
	close(fd);
	free(log);
	return 0;
}

static int outfile(const struct cfg *c)
{
	int fd = open(c->outfile, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		      0600);

	if (fd < 0) {
		fprintf(stderr, "Failed to open output file %s\n", c->outfile);
		return 1;
	}
	if (dup2(fd, STDOUT_FILENO) < 0)
		return 1;
	close(fd);
	return 0;
}

/* What -v prints for the backend the library chose (INOFD_BACKEND). */
static const char *wf_backend_name(int backend)
{
	switch (backend) {
	case INOFD_BACKEND_KERNEL:
		return "kernel (INOTIFY_IOC_WATCH)";
	case INOFD_BACKEND_PROCFD:
		return "procfd (/proc/self/fd)";
	case INOFD_BACKEND_FANOTIFY:
		return "fanotify (inode marks)";
	}
	return "unknown";
}

int main(int argc, char **argv)
{
	struct cfg c = { 0 };
	struct inofd_opts o = { .sz = sizeof(o), .flags = INOFD_RAW_MOVES };
	struct wf w = { .c = &c };
	long long deadline = -1;
	uint32_t kmask;
	size_t i;
	int r;

	if (wf_parse(argc, argv, &c))
		return 1;
	if (!c.events)
		c.events = IN_ALL_EVENTS;
	if (c.pair)
		o.flags &= ~INOFD_RAW_MOVES;
	o.coalesce_ms = c.coalesce_ms;

	if (c.daemon ? daemonize(&c) : c.outfile ? outfile(&c) : 0)
		return 1;
	if (c.syslog)
		wf_syslog_open();

	r = inofd_new(&w.in, &o);
	if (r < 0) {
		fprintf(stderr, "Couldn't initialize inotify: %s\n",
			strerror(-r));
		if (r == -EMFILE)
			fprintf(stderr, "Try increasing the value of "
				"/proc/sys/fs/inotify/max_user_instances\n");
		return 1;
	}
	if (c.verbose)
		fprintf(stderr, "watch-fd: backend: %s\n",
			wf_backend_name(inofd_backend(w.in)));
	if (!c.quiet)
		wf_diag(&c, c.recursive ? "Setting up watches.  Beware: "
			"since -r was given, this may take a while!\n" :
			"Setting up watches.\n");

	/*
	 * The kernel needs an event bit: -e unmount alone still works, as
	 * inotifywait's watch does, by asking for DELETE_SELF (not printed).
	 * (-r -e ignored: the library tells each subdirectory's end,
	 * INOFD_TREE_MEMBER_ENDS, whatever the mask.)
	 */
	kmask = c.events & (IN_ALL_EVENTS | IN_ONESHOT);
	if (!(kmask & IN_ALL_EVENTS))
		kmask |= IN_DELETE_SELF;
	w.args = calloc(c.nfiles, sizeof(*w.args));
	if (!w.args)
		return 1;
	for (i = 0; i < c.nfiles; i++) {
		size_t k;

		/* an explicitly named FILE is watched even if @excluded */
		for (k = 0; k < c.nexcl; k++) {
			size_t el = strlen(c.excl[k]);

			while (el > 1 && c.excl[k][el - 1] == '/')
				el--;
			if (!strncmp(c.files[i], c.excl[k], el) &&
			    (!c.files[i][el] || !strcmp(c.files[i] + el, "/")))
				c.excl[k][0] = '\0';
		}
		if (add_watch(&w, c.files[i], kmask, &w.args[i]))
			return 1;
		w.nargs = i + 1;
	}
	if (w.stdin_lent)
		open("/dev/null", O_RDONLY);	/* fd 0 again */
	if (!c.quiet)
		wf_diag(&c, "Watches established.\n");

	if (c.timeout > 0)
		deadline = now_ms() + c.timeout * 1000LL;
	for (;;) {
		struct pollfd p = { .fd = inofd_fd(w.in), .events = POLLIN };
		const struct inofd_event *ev;
		int t = inofd_timeout(w.in);

		if (deadline >= 0) {
			long long left = deadline - now_ms();

			if (left <= 0)
				return EXIT_TIMEOUT;
			if (t < 0 || left < t)
				t = (int)left;
		}
		r = poll(&p, 1, t);
		if (r < 0 && errno != EINTR) {
			wf_diag(&c, "%s\n", strerror(errno));
			return 1;
		}
		r = inofd_read(w.in);
		if (r < 0) {
			wf_diag(&c, "%s\n", strerror(-r));
			return 1;
		}
		while (inofd_next(w.in, &ev) > 0) {
			long m = handle(&w, ev);

			/* as inotifywait: any event restarts the timeout */
			if (deadline >= 0)
				deadline = now_ms() + c.timeout * 1000LL;
			if (m < 0)
				continue;
			if (!c.monitor) {
				inofd_free(w.in);
				return ((uint32_t)m & c.events) ? 0 : 1;
			}
		}
		if (c.monitor && inofd_watch_count(w.in) == 0) {
			inofd_free(w.in);
			return 0;
		}
	}
}
