// SPDX-License-Identifier: GPL-2.0
/*
 * sem_table: the same scenarios against three ways of watching a
 * directory or an object, and a markdown table of what each one reports,
 * generated from what the kernel did in this run:
 *
 *   P  path inotify: inotify_add_watch(path) (for an fd: the path
 *      /proc/self/fd/N, what a stock kernel offers)
 *   W  INOTIFY_IOC_WATCH: the ioctl of the series on an fd closed right after
 *   F  fanotify: an inode mark by fd (fd closed right after) in a
 *      FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME group, what an unprivileged
 *      user may create since 5.13; the inotify mask's bits (the same
 *      values) | FAN_EVENT_ON_CHILD | FAN_ONDIR, and FAN_RENAME (5.17) in
 *      the rename rows
 *   S  fanotify with the project's fanotify series (patches/fanotify/):
 *      F's mark, asking for the end of the mark too: FAN_IGNORED (v2),
 *      or FAN_UNMOUNT on a kernel with v1; "n/a" on a kernel with neither
 *
 * The test carries the expected table (rows[] below) and FAILS when an
 * observed cell differs from it: a kernel change that alters what any of
 * the three reports is caught here, not only printed.  Cells that differ
 * for root and for uid 65534 have a second expectation; the rows whose
 * INOTIFY_IOC_WATCH cell depends on the series' access rule and refusals take
 * it from the KSERIES_* macros (one place to update).
 *
 * Output: check lines, then the table between "sem_table: begin" and
 * "sem_table: end" lines (the harness prefixes "# "); scripts/sem-table.py
 * extracts the root and the uid 65534 tables from a guest log and merges
 * them into docs/semantics-table.md (make sem-table).
 *
 * Cells: events in the order read, FLAGS(name)@dir; "#1" after a move
 * half is its inotify cookie (numbered: equal numbers, equal cookies);
 * "marks:N" is the number of marks the instance or group still has
 * (its fdinfo); "ok" or an errno name for a refused watch or mark; "-"
 * for nothing read.  Scenarios that mount run in a mount namespace of
 * their own; as uid 65534 also in a user namespace (mapped to 0 there).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/fanotify.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#define TEST_NAME "sem_table"
#include "fdtest.h"

/*
 * The INOTIFY_IOC_WATCH cells that follow the series' access rule and its
 * refusals, in one place: MAY_READ on the object for every fd (O_PATH
 * accepted when the object is readable, a read fd of a file chmod 000
 * after the open refused), pipes and sockets accepted, anon inodes and
 * nsfs refused with EINVAL.  The rows that use them are marked "kseries"
 * below (the branch that brought the rule).
 */
#define KSERIES_RDONLY_CHMOD000_USER	"EACCES"
#define KSERIES_OPATH_READABLE		"ok"
#define KSERIES_OPATH_UNREADABLE_USER	"EACCES"
#define KSERIES_WRONLY_UNREADABLE_USER	"EACCES"
#define KSERIES_PIPE			"ok; write: MODIFY"
#define KSERIES_SOCKET			"ok; write: MODIFY"
#define KSERIES_EVENTFD			"EINVAL"
#define KSERIES_NSFS			"EINVAL"

enum { MP, MW, MF, MS, NMECH };
static const char *mech_title[NMECH] = {
	"path inotify", "INOTIFY_IOC_WATCH (fd closed)",
	"fanotify inode mark (fd closed, DFID_NAME)",
	"fanotify with the series (FAN_IGNORED or FAN_UNMOUNT asked)",
};
/* the two fanotify columns */
#define FAN(m)	((m) == MF || (m) == MS)

#ifndef FAN_UNMOUNT
#define FAN_UNMOUNT	0x00002000	/* the fanotify series v1, patch 3 */
#endif
#ifndef FAN_IGNORED
#define FAN_IGNORED	0x00400000	/* the fanotify series v2, patch 3 */
#endif

#define CELL 512
#define NOBODY 65534

static int as_user;	/* this run is uid 65534 */
static int have_rename;	/* FAN_RENAME accepted by this kernel */
/* FAN_IGNORED (v2) or else FAN_UNMOUNT (v1) taken: the S column runs */
static uint64_t fan_end_bit;

/* ------------------------------------------------------------ watchers */

struct obj {
	int wd;			/* inotify */
	char label[16];
	struct {
		struct file_handle h;
		unsigned char b[MAX_HANDLE_SZ];
	} fh;			/* fanotify: the directory's handle */
	int has_fh;
};

struct w {
	int mech, fd, n;
	uint64_t fan_extra;	/* FAN_RENAME in the rename rows */
	struct obj o[4];
};

static int w_init(struct w *w, int mech)
{
	memset(w, 0, sizeof(*w));
	w->mech = mech;
	if (FAN(mech))
		w->fd = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
				      FAN_NONBLOCK | FAN_CLOEXEC, O_RDONLY);
	else
		w->fd = syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
	return w->fd < 0 ? -errno : 0;
}

static void w_close(struct w *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

/*
 * The handle fanotify reports for a directory, learnt from fanotify
 * itself (the guest kernel has no name_to_handle_at(), CONFIG_FHANDLE
 * being off in tinyconfig): a group of its own marks the directory for
 * FAN_ATTRIB | FAN_ONDIR, the directory is chmod'ed to its own mode, and
 * the event's record names it.  Done before the watcher's own mark, so
 * the watcher never sees it.  0 or -1 (not a directory, or not markable).
 */
static int fan_handle_of(int fd, const char *path, struct obj *o)
{
	static char buf[4096] __attribute__((aligned(8)));
	struct fanotify_event_metadata *e = (void *)buf;
	struct fanotify_event_info_fid *fi;
	struct file_handle *h;
	char proc[64];
	struct stat st;
	int g, r = -1;
	ssize_t n;

	if (fd >= 0) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		path = proc;
	}
	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return -1;
	g = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME |
			  FAN_NONBLOCK | FAN_CLOEXEC, O_RDONLY);
	if (g < 0)
		return -1;
	if (fanotify_mark(g, FAN_MARK_ADD, FAN_ATTRIB | FAN_ONDIR, AT_FDCWD,
			  path) || chmod(path, st.st_mode & 07777))
		goto out;
	n = read(g, buf, sizeof(buf));
	if (n < (ssize_t)sizeof(*e) || e->event_len <= e->metadata_len)
		goto out;
	fi = (void *)(buf + e->metadata_len);
	h = (void *)fi->handle;
	if (h->handle_bytes > MAX_HANDLE_SZ)
		goto out;
	memcpy(&o->fh.h, h, sizeof(*h) + h->handle_bytes);
	r = 0;
out:
	close(g);
	return r;
}

/* remember the wd, and for fanotify the handle of @fd's object or of
 * @path (a directory), under @label */
static void w_label(struct w *w, int fd, const char *path, int wd,
		    const char *label)
{
	struct obj *o;

	if (w->n >= 4)
		return;
	o = &w->o[w->n++];
	o->wd = wd;
	snprintf(o->label, sizeof(o->label), "%s", label);
	if (FAN(w->mech) && !fan_handle_of(fd, path, o))
		o->has_fh = 1;
}

static uint64_t fan_mask(const struct w *w, uint32_t in_mask)
{
	return (in_mask & IN_ALL_EVENTS) | FAN_EVENT_ON_CHILD | FAN_ONDIR |
	       w->fan_extra | (w->mech == MS ? fan_end_bit : 0);
}

/* watch or mark @fd's object; 0 or -errno */
static int w_add_fd(struct w *w, int fd, uint32_t mask, const char *label)
{
	char p[64];
	int r;

	switch (w->mech) {
	case MP:
		snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
		r = syscall(SYS_inotify_add_watch, w->fd, p, mask);
		break;
	case MW:
		r = watch_fd(w->fd, fd, mask);
		break;
	default:
		/* the handle first: its chmod must not reach the mark */
		if (w->n < 4 && !fan_handle_of(fd, NULL, &w->o[w->n]))
			w->o[w->n].has_fh = 1;
		r = fanotify_mark(w->fd, FAN_MARK_ADD, fan_mask(w, mask), fd,
				  NULL);
		if (r < 0)
			return -errno;
		if (w->n < 4) {
			w->o[w->n].wd = -1;
			snprintf(w->o[w->n].label, sizeof(w->o[w->n].label),
				 "%s", label);
			w->n++;
		}
		return 0;
	}
	if (r < 0)
		return -errno;
	w_label(w, fd, NULL, r, label);
	return 0;
}

/* watch or mark the directory at @path: by path (P), by an fd closed after */
static int w_add(struct w *w, const char *path, uint32_t mask,
		 const char *label)
{
	int fd, r;

	if (w->mech == MP) {
		r = syscall(SYS_inotify_add_watch, w->fd, path, mask);
		if (r < 0)
			return -errno;
		w_label(w, -1, NULL, r, label);
		return 0;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = w_add_fd(w, fd, mask, label);
	close(fd);
	return r;
}

static void cat(char *out, size_t sz, const char *fmt, ...)
{
	size_t l = strlen(out);
	va_list ap;

	if (l >= sz - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(out + l, sz - l, fmt, ap);
	va_end(ap);
}

/* a space between tokens, none after a "label: " */
static const char *sep(const char *out)
{
	size_t l = strlen(out);

	return l && out[l - 1] != ' ' ? " " : "";
}

static void flags(char *out, size_t sz, uint64_t m, int fan)
{
	static const struct { uint64_t bit; const char *in, *fan; } t[] = {
		{ 0x1, "ACCESS", "ACCESS" }, { 0x2, "MODIFY", "MODIFY" },
		{ 0x4, "ATTRIB", "ATTRIB" },
		{ 0x8, "CLOSE_WRITE", "CLOSE_WRITE" },
		{ 0x10, "CLOSE_NOWRITE", "CLOSE_NOWRITE" },
		{ 0x20, "OPEN", "OPEN" }, { 0x40, "MOVED_FROM", "MOVED_FROM" },
		{ 0x80, "MOVED_TO", "MOVED_TO" }, { 0x100, "CREATE", "CREATE" },
		{ 0x200, "DELETE", "DELETE" },
		{ 0x400, "DELETE_SELF", "DELETE_SELF" },
		{ 0x800, "MOVE_SELF", "MOVE_SELF" },
		{ 0x1000, NULL, "OPEN_EXEC" }, { 0x2000, "UNMOUNT", "UNMOUNT" },
		{ 0x4000, "Q_OVERFLOW", "Q_OVERFLOW" },
		{ 0x8000, "IGNORED", "FS_ERROR" },
		{ 0x00400000, NULL, "IGNORED" },
		{ 0x10000000, NULL, "RENAME" },
		{ 0x40000000, "ISDIR", "ISDIR" },
	};
	const char *sep = "";
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const char *name = fan ? t[i].fan : t[i].in;

		if (!(m & t[i].bit))
			continue;
		cat(out, sz, "%s%s", sep, name ? name : "?");
		sep = ",";
		m &= ~t[i].bit;
	}
	if (m)
		cat(out, sz, "%s%#llx", sep, (unsigned long long)m);
}

static const char *label_wd(struct w *w, int wd)
{
	int i;

	for (i = 0; i < w->n; i++)
		if (w->o[i].wd == wd)
			return w->o[i].label;
	return "?";
}

static const char *label_fh(struct w *w, const struct file_handle *h)
{
	int i;

	for (i = 0; i < w->n; i++) {
		const struct file_handle *k = &w->o[i].fh.h;

		if (w->o[i].has_fh && k->handle_type == h->handle_type &&
		    k->handle_bytes == h->handle_bytes &&
		    !memcmp(k->f_handle, h->f_handle, h->handle_bytes))
			return w->o[i].label;
	}
	return "?";
}

/*
 * Read every queued event and append them to @out.  Directory labels are
 * shown when the watcher knows more than one directory (or an event's
 * directory is none of them: "@?").  Overflow rows pass @count: events
 * are counted, not listed.
 */
static long w_events(struct w *w, char *out, size_t sz, long *count)
{
	static char buf[65536] __attribute__((aligned(8)));
	uint32_t cookies[16];
	int ncookies = 0;
	long nev = 0;
	ssize_t n;

	while ((n = read(w->fd, buf, sizeof(buf))) > 0) {
		char *q = buf;

		while (q < buf + n) {
			char tok[256] = "";

			nev++;
			if (!FAN(w->mech)) {
				struct inotify_event *e = (void *)q;

				int lab = e->wd >= 0 && (w->n > 1 ||
					  !strcmp(label_wd(w, e->wd), "?"));

				flags(tok, sizeof(tok), e->mask, 0);
				if (e->len && e->name[0])
					cat(tok, sizeof(tok), "(%s%s%s)", e->name,
					    lab ? "@" : "",
					    lab ? label_wd(w, e->wd) : "");
				else if (lab)
					cat(tok, sizeof(tok), "@%s",
					    label_wd(w, e->wd));
				if (e->cookie) {
					int k;

					for (k = 0; k < ncookies; k++)
						if (cookies[k] == e->cookie)
							break;
					if (k == ncookies && ncookies < 16)
						cookies[ncookies++] = e->cookie;
					cat(tok, sizeof(tok), "#%d", k + 1);
				}
				q += sizeof(*e) + e->len;
			} else {
				struct fanotify_event_metadata *e = (void *)q;
				char *r = q + e->metadata_len;
				char names[2][128] = { "", "" };

				flags(tok, sizeof(tok), e->mask, 1);
				while (r < q + e->event_len) {
					struct fanotify_event_info_fid *fi = (void *)r;
					struct file_handle *h = (void *)fi->handle;
					const char *name = (char *)h->f_handle + h->handle_bytes;
					int slot = fi->hdr.info_type ==
						   FAN_EVENT_INFO_TYPE_NEW_DFID_NAME;
					const char *l = label_fh(w, h);

					if (fi->hdr.len == 0)
						break;
					switch (fi->hdr.info_type) {
					case FAN_EVENT_INFO_TYPE_DFID_NAME:
					case FAN_EVENT_INFO_TYPE_OLD_DFID_NAME:
					case FAN_EVENT_INFO_TYPE_NEW_DFID_NAME:
						snprintf(names[slot], sizeof(names[slot]),
							 "%s%s%s", name,
							 w->n > 1 || !strcmp(l, "?") ? "@" : "",
							 w->n > 1 || !strcmp(l, "?") ? l : "");
						break;
					case FAN_EVENT_INFO_TYPE_DFID:
					case FAN_EVENT_INFO_TYPE_FID:
						snprintf(names[slot], sizeof(names[slot]),
							 "%s%s", w->n > 1 || !strcmp(l, "?") ?
							 "@" : "", w->n > 1 ||
							 !strcmp(l, "?") ? l : "");
						break;
					default:
						break;
					}
					r += fi->hdr.len;
				}
				if (names[0][0] && names[1][0])
					cat(tok, sizeof(tok), "(%s->%s)", names[0],
					    names[1]);
				else if (names[0][0] == '@')
					cat(tok, sizeof(tok), "%s", names[0]);
				else if (names[0][0])
					cat(tok, sizeof(tok), "(%s)", names[0]);
				q += e->event_len;
			}
			if (count) {
				/* overflow rows: count the others, keep the overflow */
				if (strstr(tok, "Q_OVERFLOW")) {
					cat(out, sz, "%s%ld events, %s", sep(out),
					    *count, tok);
				} else {
					(*count)++;
				}
				continue;
			}
			cat(out, sz, "%s%s", sep(out), tok);
		}
	}
	if (!nev && !count)
		cat(out, sz, "%s-", sep(out));
	return nev;
}

/* marks the instance or group holds, from its fdinfo */
static int w_marks(struct w *w)
{
	char p[64], line[512];
	FILE *f;
	int c = 0;

	snprintf(p, sizeof(p), "/proc/self/fdinfo/%d", w->fd);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "inotify wd:", 11) ||
		    !strncmp(line, "fanotify ino:", 13))
			c++;
	fclose(f);
	return c;
}

static void errcell(char *cell, int err)
{
	const char *n = strerrorname_np(err);

	snprintf(cell, CELL, "%s", n ? n : "E?");
}

/* ------------------------------------------------------------ fixtures */

static char rbase[400];		/* this row and mechanism's directory */

static const char *rp(const char *rel)
{
	static char buf[4][600];
	static int i;

	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", rbase, rel);
	return buf[i];
}

static void mk(const char *path, mode_t mode)
{
	if (mkdir(path, mode) && errno != EEXIST)
		die("mkdir %s", path);
	chmod(path, mode);
}

static void touch(const char *path, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, mode);

	if (fd < 0)
		die("create %s", path);
	close(fd);
	chmod(path, mode);
}

static void append(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

	if (fd < 0 || write(fd, "x\n", 2) != 2)
		die("append %s", path);
	close(fd);
}

/* a fresh directory for a row and mechanism */
static void row_dir(const char *id, int mech)
{
	snprintf(rbase, sizeof(rbase), "%s/%s-%d", base, id, mech);
	mk(rbase, 0755);
}

/* ------------------------------------------------------------ scenarios */

/*
 * A directory d is watched with @mask, @prep makes what the action needs
 * (not seen: it runs before the watch), @act does it; the cell is what
 * was read.
 */
typedef void (*act_fn)(void);

static void dir_events(int mech, char *cell, uint32_t mask, act_fn prep,
		       act_fn act)
{
	struct w w;
	int r;

	if (w_init(&w, mech)) {
		errcell(cell, errno);
		return;
	}
	mk(rp("d"), 0755);
	if (prep)
		prep();
	r = w_add(&w, rp("d"), mask, "d");
	if (r) {
		errcell(cell, -r);
		w_close(&w);
		return;
	}
	act();
	w_events(&w, cell, CELL, NULL);
	w_close(&w);
}

static void prep_f(void) { touch(rp("d/f"), 0644); }
static void act_create(void) { touch(rp("d/f"), 0644); }
static void act_mkdir(void) { mk(rp("d/s"), 0755); }
static void act_modify(void) { append(rp("d/f")); }
static void act_chmod(void) { if (chmod(rp("d/f"), 0600)) die("chmod"); }
static void act_unlink(void) { if (unlink(rp("d/f"))) die("unlink"); }

static void act_close(void)
{
	int fd = open(rp("d/f"), O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		die("open");
	close(fd);
	fd = open(rp("d/f"), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open");
	close(fd);
}

static void s_create(int m, char *c) { dir_events(m, c, IN_CREATE, NULL, act_create); }
static void s_mkdir(int m, char *c) { dir_events(m, c, IN_CREATE, NULL, act_mkdir); }
static void s_modify(int m, char *c) { dir_events(m, c, IN_MODIFY, prep_f, act_modify); }
static void s_attrib(int m, char *c) { dir_events(m, c, IN_ATTRIB, prep_f, act_chmod); }
static void s_close(int m, char *c) { dir_events(m, c, IN_CLOSE, prep_f, act_close); }
static void s_delete(int m, char *c) { dir_events(m, c, IN_DELETE, prep_f, act_unlink); }
/* the busybox loop's line: open, write, close */
static void s_loopline(int m, char *c)
{
	dir_events(m, c, IN_OPEN | IN_MODIFY | IN_CLOSE_WRITE, prep_f,
		   act_modify);
}

/* renames: @dirs watched dirs (d1, d2), the third (u) is not watched */
static void renames(int mech, char *cell, const char *from, const char *to,
		    int watch_d2, int name_u)
{
	struct w w;
	int r;

	if (w_init(&w, mech)) {
		errcell(cell, errno);
		return;
	}
	if (FAN(mech) && have_rename)
		w.fan_extra = FAN_RENAME;
	mk(rp("d1"), 0755);
	mk(rp("d2"), 0755);
	mk(rp("u"), 0755);
	touch(rp(from), 0644);
	r = w_add(&w, rp("d1"), IN_MOVE, "d1");
	if (!r && watch_d2)
		r = w_add(&w, rp("d2"), IN_MOVE, "d2");
	if (r) {
		errcell(cell, -r);
		w_close(&w);
		return;
	}
	if (name_u)	/* a name for the unwatched directory's handle */
		w_label(&w, -1, rp("u"), -2, "u");
	if (rename(rp(from), rp(to)))
		die("rename");
	w_events(&w, cell, CELL, NULL);
	w_close(&w);
}

static void s_ren_within(int m, char *c) { renames(m, c, "d1/a", "d1/b", 0, 0); }
static void s_ren_across(int m, char *c) { renames(m, c, "d1/a", "d2/b", 1, 0); }
static void s_ren_out(int m, char *c) { renames(m, c, "d1/a", "u/b", 0, 1); }

static void s_delete_self(int mech, char *cell)
{
	struct w w;
	int r;

	if (w_init(&w, mech)) {
		errcell(cell, errno);
		return;
	}
	mk(rp("d"), 0755);
	r = w_add(&w, rp("d"), IN_DELETE_SELF, "d");
	if (r) {
		errcell(cell, -r);
		w_close(&w);
		return;
	}
	if (rmdir(rp("d")))
		die("rmdir");
	w_events(&w, cell, CELL, NULL);
	cat(cell, CELL, "; marks:%d", w_marks(&w));
	w_close(&w);
}

/* overflow: more creates than the queue holds; events counted */
static void s_overflow(int mech, char *cell)
{
	char p[64], path[700];
	long count = 0, lim, i, n;
	FILE *f;
	struct w w;
	int r;

	f = fopen(FAN(mech) ? "/proc/sys/fs/fanotify/max_queued_events" :
		  "/proc/sys/fs/inotify/max_queued_events", "r");
	if (!f || fscanf(f, "%ld", &lim) != 1)
		die("max_queued_events");
	fclose(f);
	n = lim + 16;
	if (w_init(&w, mech)) {
		errcell(cell, errno);
		return;
	}
	mk(rp("d"), 0755);
	r = w_add(&w, rp("d"), IN_CREATE, "d");
	if (r) {
		errcell(cell, -r);
		w_close(&w);
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "d/f%06ld", i);
		touch(rp(p), 0644);
	}
	w_events(&w, cell, CELL, &count);
	if (!*cell)
		cat(cell, CELL, "%ld events, no overflow", count);
	w_close(&w);
	for (i = 0; i < n; i++) {
		snprintf(p, sizeof(p), "d/f%06ld", i);
		snprintf(path, sizeof(path), "%s", rp(p));
		unlink(path);
	}
	/* the count as a function of the limit, not a number of this boot */
	snprintf(p, sizeof(p), "%ld events", lim);
	if (!strncmp(cell, p, strlen(p))) {
		char rest[CELL - 32];

		snprintf(rest, sizeof(rest), "%.*s", (int)sizeof(rest) - 1,
			 cell + strlen(p));
		snprintf(cell, CELL, "max_queued_events events%s", rest);
	}
}

/*
 * Watch an object by fd (P: its /proc/self/fd path).  "ok" when
 * accepted, then after @act what was read (when @act is given); the
 * errno name when refused.
 */
static void fd_cell(int mech, char *cell, int fd, uint32_t mask,
		    void (*act)(int fd))
{
	struct w w;
	int r;

	if (w_init(&w, mech)) {
		errcell(cell, errno);
		return;
	}
	r = w_add_fd(&w, fd, mask, "o");
	if (r) {
		errcell(cell, -r);
	} else {
		cat(cell, CELL, "ok");
		if (act) {
			act(fd);
			cat(cell, CELL, "; write: ");
			w_events(&w, cell, CELL, NULL);
		}
	}
	w_close(&w);
}

static void s_opath_readable(int mech, char *cell)
{
	int fd;

	mk(rp("d"), 0755);
	fd = open(rp("d"), O_PATH | O_CLOEXEC);
	if (fd < 0)
		die("open O_PATH");
	fd_cell(mech, cell, fd, IN_CREATE, NULL);
	close(fd);
}

static void s_opath_unreadable(int mech, char *cell)
{
	int fd;

	mk(rp("d"), 0311);	/* search, no read */
	fd = open(rp("d"), O_PATH | O_CLOEXEC);
	if (fd < 0)
		die("open O_PATH");
	fd_cell(mech, cell, fd, IN_CREATE, NULL);
	close(fd);
}

/* fanotify names a directory by dirfd + "." too: the dirfd may be O_PATH */
static void s_opath_dot(int mech, char *cell)
{
	struct w w;
	int fd;

	if (!FAN(mech)) {
		snprintf(cell, CELL, "n/a");
		return;
	}
	mk(rp("d"), 0755);
	fd = open(rp("d"), O_PATH | O_CLOEXEC);
	if (fd < 0)
		die("open O_PATH");
	if (w_init(&w, mech)) {
		errcell(cell, errno);
		close(fd);
		return;
	}
	w_label(&w, -1, rp("d"), -1, "d");	/* before the mark: a chmod */
	if (fanotify_mark(w.fd, FAN_MARK_ADD, fan_mask(&w, IN_CREATE), fd, ".")) {
		errcell(cell, errno);
	} else {
		close(fd);
		fd = -1;
		touch(rp("d/x"), 0644);
		cat(cell, CELL, "ok; create: ");
		w_events(&w, cell, CELL, NULL);
	}
	if (fd >= 0)
		close(fd);
	w_close(&w);
}

static void wr(int fd)
{
	if (write(fd, "x", 1) != 1)
		die("write");
}

static void wr8(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, 8) != 8)
		die("write eventfd");
}

/* read-only fd, then the file is chmod 000: the fd still reads */
static void s_rdonly_chmod000(int mech, char *cell)
{
	int fd;

	touch(rp("f"), 0644);
	fd = open(rp("f"), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("open");
	chmod(rp("f"), 0);
	fd_cell(mech, cell, fd, IN_ATTRIB, NULL);
	close(fd);
}

static void s_wronly(int mech, char *cell, mode_t mode)
{
	int fd;

	touch(rp("f"), 0600);
	fd = open(rp("f"), O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		die("open");
	chmod(rp("f"), mode);
	fd_cell(mech, cell, fd, IN_MODIFY, wr);
	close(fd);
}

static void s_wronly_unreadable(int m, char *c) { s_wronly(m, c, 0200); }
static void s_wronly_readable(int m, char *c) { s_wronly(m, c, 0600); }

static void s_pipe(int mech, char *cell)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC))
		die("pipe");
	/* the read end: a reader watches what it reads */
	fd_cell(mech, cell, p[0], IN_MODIFY, NULL);
	if (!strcmp(cell, "ok")) {
		cell[0] = 0;
		close(p[0]);
		close(p[1]);
		if (pipe2(p, O_CLOEXEC))
			die("pipe");
		fd_cell(mech, cell, p[1], IN_MODIFY, wr);
	}
	close(p[0]);
	close(p[1]);
}

static void s_socket(int mech, char *cell)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		die("socketpair");
	fd_cell(mech, cell, sv[0], IN_MODIFY, wr);
	close(sv[0]);
	close(sv[1]);
}

static void s_eventfd(int mech, char *cell)
{
	int fd = eventfd(0, EFD_CLOEXEC);

	if (fd < 0)
		die("eventfd");
	fd_cell(mech, cell, fd, IN_MODIFY, wr8);
	close(fd);
}

static void s_nsfs(int mech, char *cell)
{
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		die("open /proc/self/ns/net");
	fd_cell(mech, cell, fd, IN_MODIFY, NULL);
	close(fd);
}

/* fanotify's other mark types; inotify has inode watches only */
static void s_fsmark(int mech, char *cell)
{
	struct w w;

	if (!FAN(mech)) {
		snprintf(cell, CELL, "n/a");
		return;
	}
	if (w_init(&w, mech)) {
		errcell(cell, errno);
		return;
	}
	mk(rp("d"), 0755);
	if (fanotify_mark(w.fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
			  FAN_CREATE, AT_FDCWD, rp("d")))
		errcell(cell, errno);
	else
		snprintf(cell, CELL, "ok");
	w_close(&w);
}

static long sysctl_get(const char *p)
{
	long v = -1;
	FILE *f = fopen(p, "r");

	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

static int sysctl_set(const char *p, long v)
{
	FILE *f = fopen(p, "w");

	if (!f)
		return -1;
	fprintf(f, "%ld\n", v);
	return fclose(f);
}

/* instances (inotify) or groups (fanotify) per user: open until refused */
static void s_instances(int mech, char *cell)
{
	const char *sys = FAN(mech) ? "/proc/sys/fs/fanotify/max_user_groups" :
		"/proc/sys/fs/inotify/max_user_instances";
	static int fds[4096];
	long lim = sysctl_get(sys);
	int n = 0, err = 0, i;

	if (mech == MW) {
		snprintf(cell, CELL, "as path inotify");
		return;
	}
	while (n < 4096) {
		struct w w;

		if (w_init(&w, mech)) {
			err = errno;
			break;
		}
		fds[n++] = w.fd;
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	snprintf(cell, CELL, "%s at %s%s", err ? strerrorname_np(err) : "none",
		 FAN(mech) ? "max_user_groups" : "max_user_instances",
		 n == lim ? "" : " (+/- other instances)");
}

/*
 * Watches or marks per user: root lowers the limit to 4 for the test and
 * restores it (uid 65534 cannot, and 8192+ marks would take long here).
 */
static void s_marks_limit(int mech, char *cell)
{
	const char *sys = FAN(mech) ? "/proc/sys/fs/fanotify/max_user_marks" :
		"/proc/sys/fs/inotify/max_user_watches";
	long old = sysctl_get(sys);
	int i, r = 0;
	struct w w;

	if (geteuid() != 0) {
		snprintf(cell, CELL, "%s (not measured: root lowers it)",
			 FAN(mech) ? "max_user_marks" : "max_user_watches");
		return;
	}
	if (w_init(&w, mech)) {
		errcell(cell, errno);
		return;
	}
	if (sysctl_set(sys, 4))
		die("set %s", sys);
	for (i = 0; i < 8; i++) {
		char p[32];

		snprintf(p, sizeof(p), "d%d", i);
		mk(rp(p), 0755);
		r = w_add(&w, rp(p), IN_CREATE, p);
		if (r)
			break;
	}
	w_close(&w);
	sysctl_set(sys, old);
	if (r)
		snprintf(cell, CELL, "%s at %s (%d of 4)", strerrorname_np(-r),
			 FAN(mech) ? "max_user_marks" : "max_user_watches", i);
	else
		snprintf(cell, CELL, "no limit hit (8 of 4)");
}

/* ------------------------------------------------------------ namespaces */

/*
 * Mount scenarios run in a child in a mount namespace of its own; as
 * uid 65534 also in a user namespace (uid and gid mapped to 0 there).
 * @unpriv: the child becomes uid 65534 first even when the run is root's.
 */
static int enter_ns(int unpriv, int want_mntns)
{
	char map[64];
	int fd;
	uid_t uid = geteuid();
	gid_t gid = getegid();

	if (unpriv && uid == 0) {
		if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
		    setresuid(NOBODY, NOBODY, NOBODY))
			return -errno;
		prctl(PR_SET_DUMPABLE, 1);
		uid = gid = NOBODY;
	}
	if (uid != 0) {
		if (unshare(CLONE_NEWUSER | (want_mntns ? CLONE_NEWNS : 0)))
			return -errno;
		fd = open("/proc/self/setgroups", O_WRONLY);
		if (fd >= 0) {
			if (write(fd, "deny", 4) != 4)
				return -errno;
			close(fd);
		}
		snprintf(map, sizeof(map), "0 %u 1", uid);
		fd = open("/proc/self/uid_map", O_WRONLY);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return -errno;
		close(fd);
		snprintf(map, sizeof(map), "0 %u 1", gid);
		fd = open("/proc/self/gid_map", O_WRONLY);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return -errno;
		close(fd);
	} else if (want_mntns && unshare(CLONE_NEWNS)) {
		return -errno;
	}
	if (want_mntns && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	return 0;
}

static void s_unmount(int mech, char *cell)
{
	struct w w;
	int r;

	mk(rp("m"), 0755);
	if (mount("sem", rp("m"), "tmpfs", 0, "mode=755")) {
		errcell(cell, errno);
		return;
	}
	if (w_init(&w, mech)) {
		errcell(cell, errno);
		return;
	}
	r = w_add(&w, rp("m"), IN_CREATE, "m");
	if (r) {
		umount(rp("m"));
		errcell(cell, -r);
		w_close(&w);
		return;
	}
	if (umount(rp("m")))
		die("umount");
	w_events(&w, cell, CELL, NULL);
	cat(cell, CELL, "; marks:%d", w_marks(&w));
	w_close(&w);
}

static void s_bind(int mech, char *cell)
{
	struct w w;
	int r;

	mk(rp("m"), 0755);
	mk(rp("b"), 0755);
	if (mount("sem", rp("m"), "tmpfs", 0, "mode=755")) {
		errcell(cell, errno);
		return;
	}
	mk(rp("m/d"), 0755);
	if (mount(rp("m/d"), rp("b"), NULL, MS_BIND, NULL)) {
		errcell(cell, errno);
		umount(rp("m"));
		return;
	}
	if (w_init(&w, mech)) {
		errcell(cell, errno);
		return;
	}
	r = w_add(&w, rp("b"), IN_CREATE, "d");
	if (r) {
		umount(rp("b"));
		umount(rp("m"));
		errcell(cell, -r);
		w_close(&w);
		return;
	}
	if (umount(rp("b")))
		die("umount bind");
	cat(cell, CELL, "bind unmounted: ");
	w_events(&w, cell, CELL, NULL);
	cat(cell, CELL, ", marks:%d; fs unmounted: ", w_marks(&w));
	if (umount(rp("m")))
		die("umount");
	w_events(&w, cell, CELL, NULL);
	cat(cell, CELL, ", marks:%d", w_marks(&w));
	w_close(&w);
}

static void s_overlay(int mech, char *cell)
{
	struct w w;
	char opts[1500];
	int r;

	mk(rp("t"), 0755);
	if (mount("sem", rp("t"), "tmpfs", 0, "mode=755")) {
		errcell(cell, errno);
		return;
	}
	mk(rp("t/lower"), 0755);
	mk(rp("t/upper"), 0755);
	mk(rp("t/work"), 0755);
	mk(rp("o"), 0755);
	touch(rp("t/lower/f"), 0644);
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s",
		 rp("t/lower"), rp("t/upper"), rp("t/work"));
	if (mount("overlay", rp("o"), "overlay", 0, opts)) {
		cat(cell, CELL, "mount: ");
		errcell(cell + strlen(cell), errno);
		umount(rp("t"));
		return;
	}
	if (w_init(&w, mech)) {
		errcell(cell, errno);
		return;
	}
	r = w_add(&w, rp("o"), IN_CREATE | IN_MODIFY, "o");
	if (r) {
		errcell(cell, -r);
	} else {
		touch(rp("o/new"), 0644);
		cat(cell, CELL, "in the overlay: ");
		w_events(&w, cell, CELL, NULL);
		append(rp("t/lower/f"));
		cat(cell, CELL, "; in the lower layer: ");
		w_events(&w, cell, CELL, NULL);
	}
	w_close(&w);
	umount(rp("o"));
	umount(rp("t"));
}

/* an unprivileged user, root of a user namespace of its own */
static void s_userns(int mech, char *cell)
{
	dir_events(mech, cell, IN_CREATE, NULL, act_create);
}

/* ------------------------------------------------------------ the table */

enum { NS_NONE, NS_MOUNT, NS_USER };

struct row {
	const char *id, *title;
	void (*run)(int mech, char *cell);
	int ns;			/* run in a child: mount ns, or unprivileged userns */
	int kseries;		/* the W cell follows the series' access rule */
	const char *exp[NMECH];
	const char *exp_user[NMECH];	/* NULL: as exp */
};

static const struct row rows[] = {
	{ "create", "create a file in the watched directory", s_create, 0, 0,
	  { "CREATE(f)", "CREATE(f)", "CREATE(f)" },
	  { NULL, NULL, NULL } },
	{ "mkdir", "create a subdirectory", s_mkdir, 0, 0,
	  { "CREATE,ISDIR(s)", "CREATE,ISDIR(s)", "CREATE,ISDIR(s)" },
	  { NULL, NULL, NULL } },
	{ "modify", "write to a file in it", s_modify, 0, 0,
	  { "MODIFY(f)", "MODIFY(f)", "MODIFY(f)" },
	  { NULL, NULL, NULL } },
	{ "attrib", "chmod a file in it", s_attrib, 0, 0,
	  { "ATTRIB(f)", "ATTRIB(f)", "ATTRIB(f)" },
	  { NULL, NULL, NULL } },
	{ "close", "open for writing, close; open for reading, close", s_close, 0, 0,
	  { "CLOSE_WRITE(f) CLOSE_NOWRITE(f)",
	    "CLOSE_NOWRITE,ISDIR CLOSE_WRITE(f) CLOSE_NOWRITE(f)",
	    "CLOSE_NOWRITE,ISDIR(.) CLOSE_WRITE,CLOSE_NOWRITE(f)" },
	  { NULL, NULL, NULL } },
	{ "line", "open, write, close (the bench loop's line; OPEN, MODIFY, CLOSE_WRITE watched)",
	  s_loopline, 0, 0,
	  { "OPEN(f) MODIFY(f) CLOSE_WRITE(f)", "OPEN(f) MODIFY(f) CLOSE_WRITE(f)",
	    "MODIFY,CLOSE_WRITE,OPEN(f)" },
	  { NULL, NULL, NULL } },
	{ "delete", "delete a file in it", s_delete, 0, 0,
	  { "DELETE(f)", "DELETE(f)", "DELETE(f)" },
	  { NULL, NULL, NULL } },
	{ "ren-within", "rename within the watched directory (IN_MOVE; fanotify also FAN_RENAME)",
	  s_ren_within, 0, 0,
	  { "MOVED_FROM(a)#1 MOVED_TO(b)#1", "MOVED_FROM(a)#1 MOVED_TO(b)#1",
	    "RENAME(a->b) MOVED_FROM(a) MOVED_TO(b)" },
	  { NULL, NULL, NULL } },
	{ "ren-across", "rename from one watched directory to another", s_ren_across, 0, 0,
	  { "MOVED_FROM(a@d1)#1 MOVED_TO(b@d2)#1", "MOVED_FROM(a@d1)#1 MOVED_TO(b@d2)#1",
	    "RENAME(a@d1->b@d2) MOVED_FROM(a@d1) MOVED_TO(b@d2)" },
	  { NULL, NULL, NULL } },
	{ "ren-out", "rename out to an unwatched directory", s_ren_out, 0, 0,
	  { "MOVED_FROM(a@d1)#1", "MOVED_FROM(a@d1)#1",
	    "RENAME(a@d1) MOVED_FROM(a@d1)" },
	  { NULL, NULL, NULL } },
	{ "delete-self", "delete the watched directory (IN_DELETE_SELF / FAN_DELETE_SELF)",
	  s_delete_self, 0, 0,
	  { "DELETE_SELF IGNORED; marks:0", "DELETE_SELF IGNORED; marks:0",
	    "DELETE_SELF,ISDIR(.); marks:0" },
	  { NULL, NULL, NULL } },
	{ "unmount", "unmount the watched directory's filesystem (IN_UNMOUNT)", s_unmount,
	  NS_MOUNT, 0,
	  { "UNMOUNT,ISDIR IGNORED; marks:0", "UNMOUNT,ISDIR IGNORED; marks:0",
	    "-; marks:0" },
	  { NULL, NULL, NULL } },
	{ "bind", "a bind mount of the watched directory unmounted, then its filesystem",
	  s_bind, NS_MOUNT, 0,
	  { "bind unmounted: -, marks:1; fs unmounted: UNMOUNT,ISDIR IGNORED, marks:0",
	    "bind unmounted: -, marks:1; fs unmounted: UNMOUNT,ISDIR IGNORED, marks:0",
	    "bind unmounted: -, marks:1; fs unmounted: -, marks:0" },
	  { NULL, NULL, NULL } },
	{ "overflow", "more creates than the queue holds (no reader)", s_overflow, 0, 0,
	  { "max_queued_events events, Q_OVERFLOW", "max_queued_events events, Q_OVERFLOW",
	    "max_queued_events events, Q_OVERFLOW" },
	  { NULL, NULL, NULL } },
	{ "opath", "O_PATH fd of a readable directory (P: /proc/self/fd/N)",
	  s_opath_readable, 0, 1,
	  { "ok", KSERIES_OPATH_READABLE, "EBADF" },
	  { NULL, NULL, NULL } },
	{ "opath-dot", "O_PATH fd of a directory named as dirfd + \".\" (fanotify_mark(g, .., fd, \".\"))",
	  s_opath_dot, 0, 0,
	  { "n/a", "n/a", "ok; create: CREATE(x)" },
	  { NULL, NULL, NULL } },
	{ "opath-noread", "O_PATH fd of a directory of mode 0311", s_opath_unreadable, 0, 1,
	  { "ok", "ok", "EBADF" },
	  { "EACCES", KSERIES_OPATH_UNREADABLE_USER, "EBADF" } },
	{ "rdonly-000", "read-only fd of a file chmod 000 after the open",
	  s_rdonly_chmod000, 0, 1,
	  { "ok", "ok", "ok" },
	  { "EACCES", KSERIES_RDONLY_CHMOD000_USER, "EACCES" } },
	{ "wronly-0200", "write-only fd of a file of mode 0200", s_wronly_unreadable, 0, 1,
	  { "ok; write: MODIFY", "ok; write: MODIFY", "ok; write: MODIFY(f@?)" },
	  { "EACCES", KSERIES_WRONLY_UNREADABLE_USER, "EACCES" } },
	{ "wronly-0600", "write-only fd of a file of mode 0600", s_wronly_readable, 0, 1,
	  { "ok; write: MODIFY", "ok; write: MODIFY", "ok; write: MODIFY(f@?)" },
	  { NULL, NULL, NULL } },
	{ "pipe", "a pipe (read end; if accepted, the write end written)", s_pipe, 0, 1,
	  { "ok; write: MODIFY", KSERIES_PIPE, "ENODEV" },
	  { NULL, NULL, NULL } },
	{ "socket", "an AF_UNIX socket, written", s_socket, 0, 1,
	  { "ok; write: MODIFY", KSERIES_SOCKET, "ENODEV" },
	  { NULL, NULL, NULL } },
	{ "eventfd", "an eventfd (anon inode, shared by all), written", s_eventfd, 0, 1,
	  { "ok; write: MODIFY", KSERIES_EVENTFD, "ENODEV" },
	  { "EACCES", KSERIES_EVENTFD, "EACCES" } },
	{ "nsfs", "a namespace file (/proc/self/ns/net)", s_nsfs, 0, 1,
	  { "ok", KSERIES_NSFS, "ENODEV" },
	  { NULL, NULL, NULL } },
	{ "overlay", "overlayfs: the merged directory watched; a create through it, a write to the lower layer",
	  s_overlay, NS_MOUNT, 0,
	  { "in the overlay: CREATE(new); in the lower layer: -",
	    "in the overlay: CREATE(new); in the lower layer: -", "EOPNOTSUPP" },
	  { NULL, NULL, NULL } },
	{ "userns", "uid 65534 as root of a user namespace of its own: create a file",
	  s_userns, NS_USER, 0,
	  { "CREATE(f)", "CREATE(f)", "CREATE(f)" },
	  { NULL, NULL, NULL } },
	{ "fs-mark", "a filesystem mark (fanotify only)", s_fsmark, 0, 0,
	  { "n/a", "n/a", "ok" },
	  { "n/a", "n/a", "EPERM" } },
	{ "instances", "instances or groups per user", s_instances, 0, 0,
	  { "EMFILE at max_user_instances", "as path inotify", "EMFILE at max_user_groups" },
	  { NULL, NULL, NULL } },
	{ "marks", "watches or marks per user (root lowers the limit to 4)",
	  s_marks_limit, 0, 0,
	  { "ENOSPC at max_user_watches (4 of 4)", "ENOSPC at max_user_watches (4 of 4)",
	    "ENOSPC at max_user_marks (4 of 4)" },
	  { "max_user_watches (not measured: root lowers it)",
	    "max_user_watches (not measured: root lowers it)",
	    "max_user_marks (not measured: root lowers it)" } },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* cells[row][mech], shared with the namespace children */
static char (*cells)[NMECH][CELL];

static void run_row(size_t i)
{
	int m;

	for (m = 0; m < NMECH; m++) {
		row_dir(rows[i].id, m);
		cells[i][m][0] = 0;
		if (m == MS && !fan_end_bit)
			snprintf(cells[i][m], CELL, "n/a");
		else
			rows[i].run(m, cells[i][m]);
	}
}

static void run_row_ns(size_t i)
{
	pid_t pid;
	int st, r, m;

	/* the unprivileged child must own its directories */
	for (m = 0; m < NMECH; m++) {
		row_dir(rows[i].id, m);
		if (rows[i].ns == NS_USER && geteuid() == 0 &&
		    chown(rbase, NOBODY, NOBODY))
			die("chown");
	}
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		r = enter_ns(rows[i].ns == NS_USER, rows[i].ns == NS_MOUNT);
		if (r) {
			for (m = 0; m < NMECH; m++) {
				snprintf(cells[i][m], CELL, "namespace: ");
				errcell(cells[i][m] + strlen(cells[i][m]), -r);
			}
			_exit(0);
		}
		run_row(i);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		die("row %s: child failed (status %#x)", rows[i].id, st);
}

/*
 * fanotify cells that differ on kernels from 6.8 on, where an inode mark
 * accepts a filesystem with a zero ("weak") fsid: pipes, sockets, anon
 * inodes and nsfs can be marked (a write to a pipe or socket then gives
 * the mark no event), and so can overlayfs.  Measured on Debian's
 * 6.12.118 (the second base); the INOTIFY_IOC_WATCH and path cells are the
 * same there as on 6.1.  A row's uid 65534 cell, where it has one, wins.
 */
static const struct {
	const char *row, *cell;
} fan_weak_fsid[] = {
	{ "pipe", "ok; write: -" },
	{ "socket", "ok; write: -" },
	{ "eventfd", "ok; write: -" },
	{ "nsfs", "ok" },
	{ "overlay", "in the overlay: CREATE(new); in the lower layer: -" },
};
static int kver_major, kver_minor;

/*
 * Path cells that differ from 6.14 on, where alloc_file_pseudo() opens
 * its files with FMODE_NONOTIFY ("fsnotify: disable notification by
 * default for all pseudo files"): a write to an anon inode file makes no
 * event; pipes and sockets keep inotify's events.  Seen on Debian's
 * 7.2.13 (the posting base); 6.12.118 does not have the change.
 */
static const struct {
	const char *row, *cell;
} path_pseudo_nonotify[] = {
	{ "eventfd", "ok; write: -" },
};

/*
 * With the project's fanotify series (patches/fanotify/) a mark takes an
 * O_PATH fd as its object, with the MAY_READ check a path gets: a stock
 * kernel's EBADF becomes the INOTIFY_IOC_WATCH cell (root, uid 65534).  The
 * rows are marked (f) in the table; fan_opath says which kernel this is.
 */
struct fan_series_cell {
	const char *row, *root, *user;
};
static const struct fan_series_cell fan_series[] = {
	{ "opath", "ok", "ok" },
	{ "opath-noread", "ok", "EACCES" },
};
static int fan_opath;

/*
 * The S column: F's cells, but where a mark that asks for the end of the
 * mark (patch 3) is told of it.  Rows marked (u).  v1's FAN_UNMOUNT at
 * unmount only; v2's FAN_IGNORED as the last event of every end, and
 * refused (EINVAL) on a non-directory in this DFID_NAME group, which has
 * no record for its end.  6.1 checks MAY_READ in fanotify_find_path(),
 * before the events (EACCES first, for the user); 6.12 and 7.2 check it
 * after fanotify_events_supported() (EINVAL first): fan_end_cell().
 * The same rows in the same order in both tables; NULL: F's cell.
 */
struct fan_end_cell {
	const char *row, *cell, *user;	/* user: NULL if as root */
};
static const struct fan_end_cell fan_unmount[] = {
	{ "delete-self", NULL, NULL },
	{ "unmount", "UNMOUNT,ISDIR(.); marks:0", NULL },
	{ "bind", "bind unmounted: -, marks:1; fs unmounted: UNMOUNT,ISDIR(.), marks:0", NULL },
	{ "rdonly-000", NULL, NULL }, { "wronly-0200", NULL, NULL },
	{ "wronly-0600", NULL, NULL }, { "pipe", NULL, NULL },
	{ "socket", NULL, NULL }, { "eventfd", NULL, NULL },
	{ "nsfs", NULL, NULL },
};
static const struct fan_end_cell fan_ignored[] = {
	{ "delete-self", "DELETE_SELF,ISDIR(.) IGNORED,ISDIR(.); marks:0", NULL },
	{ "unmount", "IGNORED,ISDIR(.); marks:0", NULL },
	{ "bind", "bind unmounted: -, marks:1; fs unmounted: IGNORED,ISDIR(.), marks:0", NULL },
	{ "rdonly-000", "EINVAL", "EACCES" }, { "wronly-0200", "EINVAL", "EACCES" },
	{ "wronly-0600", "EINVAL", NULL }, { "pipe", "EINVAL", NULL },
	{ "socket", "EINVAL", NULL }, { "eventfd", "EINVAL", "EACCES" },
	{ "nsfs", "EINVAL", NULL },
};

/* is row i one that the end event can change (marked (u)) */
static int fan_end_row(size_t i)
{
	size_t k;

	for (k = 0; k < sizeof(fan_ignored) / sizeof(fan_ignored[0]); k++)
		if (!strcmp(rows[i].id, fan_ignored[k].row))
			return 1;
	return 0;
}

/* MAY_READ checked after the events (the bases from 6.12 on) */
static int fan_perm_late(void)
{
	return kver_major > 6 || (kver_major == 6 && kver_minor >= 12);
}

/* row i's S cell where it differs from F's on this kernel, or NULL */
static const char *fan_end_cell(size_t i)
{
	const struct fan_end_cell *t = fan_end_bit == FAN_IGNORED ?
				       fan_ignored : fan_unmount;
	size_t k;

	for (k = 0; k < sizeof(fan_ignored) / sizeof(fan_ignored[0]); k++)
		if (!strcmp(rows[i].id, t[k].row))
			return as_user && t[k].user && !fan_perm_late() ?
			       t[k].user : t[k].cell;
	return NULL;
}

/* row i's entry in fan_series[], or NULL */
static const struct fan_series_cell *fan_series_row(size_t i)
{
	size_t k;

	for (k = 0; k < sizeof(fan_series) / sizeof(fan_series[0]); k++)
		if (!strcmp(rows[i].id, fan_series[k].row))
			return &fan_series[k];
	return NULL;
}

static const char *expected(size_t i, int m)
{
	const struct fan_series_cell *fs = fan_series_row(i);
	size_t k;

	if (m == MS) {
		if (!fan_end_bit)
			return "n/a";
		if (fan_end_cell(i))
			return fan_end_cell(i);
		m = MF;
	}
	if (m == MF && fan_opath && fs)
		return as_user ? fs->user : fs->root;
	if (as_user && rows[i].exp_user[m])
		return rows[i].exp_user[m];
	if (m == MP && (kver_major > 6 || (kver_major == 6 && kver_minor >= 14)))
		for (k = 0; k < sizeof(path_pseudo_nonotify) / sizeof(path_pseudo_nonotify[0]); k++)
			if (!strcmp(rows[i].id, path_pseudo_nonotify[k].row))
				return path_pseudo_nonotify[k].cell;
	if (m == MF && (kver_major > 6 || (kver_major == 6 && kver_minor >= 8)))
		for (k = 0; k < sizeof(fan_weak_fsid) / sizeof(fan_weak_fsid[0]); k++)
			if (!strcmp(rows[i].id, fan_weak_fsid[k].row))
				return fan_weak_fsid[k].cell;
	return rows[i].exp[m];
}

int main(void)
{
	struct utsname u;
	size_t i;
	int m, r, g;

	uname(&u);
	if (sscanf(u.release, "%d.%d", &kver_major, &kver_minor) != 2)
		kver_major = kver_minor = 0;
	/* SEM_TABLE_ANY_KERNEL=1: run on a kernel without the series too
	 * (its INOTIFY_IOC_WATCH cells then read ENOTTY and the test fails) */
	r = fdtest_probe();
	if (r && !getenv("SEM_TABLE_ANY_KERNEL"))
		return r;
	fdtest_mkbase();
	chmod(base, 0755);
	as_user = geteuid() != 0;
	cells = mmap(NULL, sizeof(*cells) * NROWS, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cells == MAP_FAILED)
		die("mmap");
	/* FAN_RENAME: 5.17 on; without it the rename rows say so */
	g = fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME, O_RDONLY);
	if (g < 0)
		die("fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME)");
	have_rename = !fanotify_mark(g, FAN_MARK_ADD, FAN_RENAME, AT_FDCWD, base);
	/* the fanotify series: an O_PATH fd is taken (ENOENT: no such mark) */
	r = open(base, O_PATH | O_DIRECTORY);
	fan_opath = !(fanotify_mark(g, FAN_MARK_REMOVE, FAN_CREATE, r, NULL) &&
		      errno == EBADF);
	close(r);
	/* and FAN_IGNORED, else FAN_UNMOUNT (0, the FAN_RENAME mark above,
	 * or ENOENT; EINVAL: an unknown bit) */
	r = open(base, O_RDONLY | O_DIRECTORY);
	if (!(fanotify_mark(g, FAN_MARK_REMOVE, FAN_IGNORED | FAN_ONDIR, r,
			    NULL) && errno == EINVAL))
		fan_end_bit = FAN_IGNORED;
	else if (!(fanotify_mark(g, FAN_MARK_REMOVE, FAN_UNMOUNT | FAN_ONDIR,
				 r, NULL) && errno == EINVAL))
		fan_end_bit = FAN_UNMOUNT;
	close(r);
	close(g);

	for (i = 0; i < NROWS; i++) {
		if (rows[i].ns)
			run_row_ns(i);
		else
			run_row(i);
		for (m = 0; m < NMECH; m++) {
			char what[160];

			snprintf(what, sizeof(what), "%s, %s: %s", rows[i].id,
				 mech_title[m], cells[i][m]);
			check(what, !strcmp(cells[i][m], expected(i, m)));
			if (strcmp(cells[i][m], expected(i, m)))
				printf("     expected: %s\n", expected(i, m));
		}
	}

	printf("sem_table: begin uid=%u\n", (unsigned int)geteuid());
	printf("Kernel %s, run as %s; FAN_RENAME %s; O_PATH marks %s; the end of a mark: %s.\n\n",
	       u.release, as_user ? "uid 65534" : "root",
	       have_rename ? "available" : "not available",
	       fan_opath ? "taken (the fanotify series: rows marked (f))" :
			   "refused (a stock kernel)",
	       fan_end_bit == FAN_IGNORED ?
	       "FAN_IGNORED taken (the series v2: rows marked (u) differ from F)" :
	       fan_end_bit ?
	       "FAN_UNMOUNT taken (the series v1: rows marked (u) differ from F)" :
	       "neither FAN_IGNORED nor FAN_UNMOUNT taken (a stock kernel: the last column is n/a)");
	printf("| row | scenario | %s | %s | %s | %s |\n", mech_title[MP],
	       mech_title[MW], mech_title[MF], mech_title[MS]);
	printf("| --- | --- | --- | --- | --- | --- |\n");
	for (i = 0; i < NROWS; i++) {
		printf("| %s%s%s%s | %s |", rows[i].id,
		       rows[i].kseries ? " (k)" : "",
		       fan_series_row(i) ? " (f)" : "",
		       fan_end_row(i) ? " (u)" : "", rows[i].title);
		for (m = 0; m < NMECH; m++)
			printf(" %s%s |", cells[i][m],
			       strcmp(cells[i][m], expected(i, m)) ?
			       " **(unexpected)**" : "");
		printf("\n");
	}
	printf("sem_table: end\n");
	printf("%s sem_table: %d cells as expected, %d differ\n",
	       failed ? "FAIL" : "ok", passed, failed);
	return failed ? 1 : 0;
}
