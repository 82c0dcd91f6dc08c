// SPDX-License-Identifier: GPL-2.0
/*
 * evseq: the exact sequence of bytes an inotify consumer reads, for a fixed
 * writer pattern and a consumer that reads at fixed points, compared line
 * by line with a golden file made on a kernel without the event-path series
 * (patches/event-path/): that series must not change one byte of it.
 *
 *   evseq GOLDEN     compare (exit 0 if identical, 1 at the first difference)
 *   evseq -          print the record only (to make a golden file)
 *
 * The record has one line per read(2) ("read N") and one per event in it:
 * wd, mask, cookie, len and all len name bytes (a run of NULs as \0*N), so
 * the record is the bytes read, losslessly.  Two things are normalised:
 * rename cookies (a global counter) are numbered in order of appearance,
 * and runs of a repeated block of lines are written "@repeat COUNT LINES"
 * followed by the block (the queue-limit flood alternates two events
 * 16,384 times).  Both are deterministic, so equal records mean equal
 * bytes.  On a difference (and with "-") every line of the record is
 * printed, prefixed "rec ", so the guest log holds a new golden file.
 *
 * The writer covers: merges of identical consecutive events only (not of
 * an event identical to an earlier one, not across a read, not of the
 * parent's and the child's copies of one event), names of many lengths
 * and their padding, rename cookies, IN_ISDIR, IN_ONESHOT and IN_IGNORED,
 * partial reads with a small buffer, and the queue limit: IN_Q_OVERFLOW
 * once, nothing after it, a merging event at exactly the limit (overflow,
 * not a merge) and events queued after the overflow event once the reader
 * has made room.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/inotify.h>

#ifndef QLIMIT
#define QLIMIT 16384	/* the golden file was made at this max_queued_events */
#endif

static char **rec;
static size_t nrec, caprec;
static unsigned int cookies[4096];
static unsigned int ncookies;

static void die(const char *what)
{
	printf("FAIL evseq: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void add(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		die("vasprintf");
	va_end(ap);
	if (nrec == caprec) {
		caprec = caprec ? 2 * caprec : 1024;
		rec = realloc(rec, caprec * sizeof(*rec));
		if (!rec)
			die("realloc");
	}
	rec[nrec++] = s;
}

static unsigned int cookie_no(unsigned int c)
{
	unsigned int i;

	if (!c)
		return 0;
	for (i = 0; i < ncookies; i++)
		if (cookies[i] == c)
			return i + 1;
	if (ncookies == sizeof(cookies) / sizeof(cookies[0])) {
		errno = ENOSPC;
		die("too many cookies");
	}
	cookies[ncookies++] = c;
	return ncookies;
}

/* One line per event: every byte of it, losslessly. */
static void add_event(const struct inotify_event *e)
{
	char name[4 * 256 + 64], *p = name;
	uint32_t i, z;

	for (i = 0; i < e->len;) {
		unsigned char c = e->name[i];

		if (!c) {
			for (z = 0; i < e->len && !e->name[i]; i++)
				z++;
			p += sprintf(p, "\\0*%u", z);
			continue;
		}
		if (c > ' ' && c < 127 && c != '\\')
			*p++ = c;
		else
			p += sprintf(p, "\\x%02x", c);
		i++;
		if (p - name > (long)sizeof(name) - 16) {
			errno = E2BIG;
			die("name");
		}
	}
	*p = 0;
	add("wd=%d mask=%08x cookie=c%u len=%u name=%s", e->wd, e->mask,
	    cookie_no(e->cookie), e->len, name);
}

/* Read once with a buffer of @size bytes; record what came. */
static ssize_t read_once(int ifd, size_t size)
{
	static char buf[1 << 20] __attribute__((aligned(8)));
	ssize_t n = read(ifd, buf, size);
	char *q;

	if (n < 0) {
		if (errno == EAGAIN)
			return 0;
		die("read");
	}
	add("read %zd", n);
	for (q = buf; q < buf + n;) {
		struct inotify_event *e = (void *)q;

		add_event(e);
		q += sizeof(*e) + e->len;
	}
	return n;
}

/* The consumer's fixed point: read everything queued, 64 KiB at a time. */
static void drain(int ifd, const char *label)
{
	add("== %s", label);
	while (read_once(ifd, 64 * 1024) > 0)
		;
}

static int xopen(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);

	if (fd < 0)
		die(path);
	return fd;
}

static void wr(int fd)
{
	if (write(fd, "x", 1) != 1)
		die("write");
}

static void touch_close(const char *path)
{
	close(xopen(path, O_WRONLY | O_CREAT));
}

static int watch(int ifd, const char *path, uint32_t mask)
{
	int wd = inotify_add_watch(ifd, path, mask);

	if (wd < 0)
		die(path);
	return wd;
}

static void writer_basic(void)
{
	static const int lens[] = { 1, 14, 15, 16, 17, 18, 31, 32, 33, 200, 255 };
	char longname[256];
	int ifd, a, b, f, g, wdf;
	size_t i;

	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");
	watch(ifd, "d", IN_ALL_EVENTS);

	/* one file's life: create, writes merged, close */
	a = xopen("d/a", O_WRONLY | O_CREAT | O_TRUNC);
	wr(a); wr(a); wr(a);
	close(a);
	drain(ifd, "create, 3 writes, close");

	/* only consecutive identical events merge */
	a = xopen("d/a", O_WRONLY | O_APPEND);
	b = xopen("d/b", O_WRONLY | O_CREAT | O_APPEND);
	drain(ifd, "opens");
	wr(a); wr(a); wr(b); wr(a); wr(a); wr(b); wr(b); wr(a);
	drain(ifd, "a a b a a b b a");

	/* never across a read */
	wr(a); wr(a);
	drain(ifd, "a a, read");
	wr(a); wr(a);
	drain(ifd, "a a again");

	/* a partial read leaves the tail: the next identical event merges
	 * into what is still queued, not into what was read */
	wr(a); wr(b);
	add("== a b, read one event");
	read_once(ifd, sizeof(struct inotify_event) + 16);
	wr(b); wr(a); wr(a);
	drain(ifd, "then b a a");

	/* the parent's and the child's copy of one event never merge */
	f = xopen("d/f", O_WRONLY | O_CREAT | O_APPEND);
	wdf = watch(ifd, "d/f", IN_ALL_EVENTS);
	drain(ifd, "f created, watched");
	wr(f); wr(f); wr(f);
	drain(ifd, "3 writes to a file watched with its directory");

	/* attributes: merged when consecutive */
	if (fchmod(a, 0600) || fchmod(a, 0640) || fchmod(f, 0600))
		die("fchmod");
	drain(ifd, "chmod a a f");

	/* renames: cookies pair MOVED_FROM and MOVED_TO */
	if (rename("d/a", "d/c") || rename("d/c", "d/a") ||
	    rename("d/b", "d/c"))
		die("rename");
	drain(ifd, "renames a->c, c->a, b->c");

	/* directories: IN_ISDIR */
	if (mkdir("d/sub", 0755) || rmdir("d/sub"))
		die("mkdir/rmdir");
	drain(ifd, "mkdir, rmdir");

	/* names of every padding: around 16 and 32 bytes, and NAME_MAX */
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		char path[300];

		memset(longname, 'm' + i, lens[i]);
		longname[lens[i]] = 0;
		snprintf(path, sizeof(path), "d/%s", longname);
		touch_close(path);
		if (unlink(path))
			die("unlink");
	}
	drain(ifd, "names of many lengths");

	/* IN_ONESHOT: one event, then IN_IGNORED */
	g = xopen("d/g", O_WRONLY | O_CREAT | O_APPEND);
	watch(ifd, "d/g", IN_MODIFY | IN_ONESHOT);
	drain(ifd, "g created, oneshot watch");
	wr(g); wr(g);
	drain(ifd, "2 writes to g (oneshot)");
	close(g);

	/* inotify_rm_watch: IN_IGNORED; then the file's events go only to
	 * the directory */
	if (inotify_rm_watch(ifd, wdf))
		die("inotify_rm_watch");
	wr(f); wr(f);
	drain(ifd, "rm_watch f, 2 writes");
	close(f);
	close(a);
	close(b);
	if (unlink("d/a") || unlink("d/c") || unlink("d/f") || unlink("d/g"))
		die("unlink");
	drain(ifd, "closes, unlinks");
	close(ifd);
}

static void writer_limit(void)
{
	int ifd, x, y, i;

	ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ifd < 0)
		die("inotify_init1");
	x = xopen("d/x", O_WRONLY | O_CREAT | O_APPEND);
	y = xopen("d/y", O_WRONLY | O_CREAT | O_APPEND);
	watch(ifd, "d", IN_MODIFY);

	/* QLIMIT - 1 alternating events, then x merges at QLIMIT - 1,
	 * then y fills the queue, then y again: the queue is full, so
	 * IN_Q_OVERFLOW although y would merge (a merge there would leave
	 * no overflow event in what follows) */
	for (i = 0; i < QLIMIT - 1; i++)
		wr(i % 2 ? y : x);
	wr(x);
	wr(y);
	wr(y);
	/* read three events: room for two, queued after the overflow, the
	 * second x merging; then the queue is full again */
	add("== the queue limit, read three events");
	read_once(ifd, 3 * (sizeof(struct inotify_event) + 16));
	wr(x);
	wr(x);
	wr(y);
	wr(y);
	wr(x);
	drain(ifd, "then x x y y x");

	/* a full queue again, then a drain, then merging resumes */
	for (i = 0; i < QLIMIT + 4; i++)
		wr(i % 2 ? y : x);
	drain(ifd, "a flood past the limit");
	wr(x); wr(x); wr(y); wr(y);
	drain(ifd, "x x y y after the flood");
	close(x);
	close(y);
	if (unlink("d/x") || unlink("d/y"))
		die("unlink");
	close(ifd);
}

/* "@repeat COUNT LINES" + the block, for a block repeated 3+ times */
static char **encode(size_t *nout)
{
	char **out = malloc((nrec + 1) * sizeof(*out));
	size_t i = 0, n = 0, p, k, j;

	if (!out)
		die("malloc");
	while (i < nrec) {
		size_t best_p = 0, best_k = 1;

		for (p = 1; p <= 4; p++) {
			for (k = 1; i + (k + 1) * p <= nrec; k++) {
				for (j = 0; j < p; j++)
					if (strcmp(rec[i + j], rec[i + k * p + j]))
						break;
				if (j < p)
					break;
			}
			if (k >= 3 && k * p > best_k * best_p) {
				best_p = p;
				best_k = k;
			}
		}
		if (!best_p) {
			out[n++] = strdup(rec[i++]);
			continue;
		}
		out = realloc(out, (nrec + n + 2) * sizeof(*out));
		if (!out || asprintf(&out[n++], "@repeat %zu %zu", best_k,
				     best_p) < 0)
			die("encode");
		for (j = 0; j < best_p; j++)
			out[n++] = strdup(rec[i + j]);
		i += best_k * best_p;
	}
	*nout = n;
	return out;
}

/* The whole record, each line prefixed "rec ": a new golden file. */
static void print_record(char **out, size_t nout)
{
	size_t i;

	for (i = 0; i < nout; i++)
		printf("rec %s\n", out[i]);
}

int main(int argc, char **argv)
{
	char line[2048], **out;
	size_t nout, i;
	long qmax = -1;
	FILE *f;

	if (argc != 2) {
		fprintf(stderr, "usage: evseq GOLDEN|-\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	f = fopen("/proc/sys/fs/inotify/max_queued_events", "r");
	if (!f || fscanf(f, "%ld", &qmax) != 1)
		die("max_queued_events");
	fclose(f);
	if (qmax != QLIMIT) {
		printf("FAIL evseq: max_queued_events is %ld, the golden file "
		       "was made at %d\n", qmax, QLIMIT);
		return 1;
	}
	if (mkdir("d", 0755) && errno != EEXIST)
		die("mkdir d");

	writer_basic();
	writer_limit();
	if (rmdir("d"))
		die("rmdir d");

	out = encode(&nout);
	if (!strcmp(argv[1], "-")) {
		print_record(out, nout);
		return 0;
	}

	f = fopen(argv[1], "r");
	if (!f)
		die(argv[1]);
	for (i = 0; fgets(line, sizeof(line), f); ) {
		line[strcspn(line, "\n")] = 0;
		if (line[0] == '#' || !line[0])
			continue;
		if (i == nout || strcmp(line, out[i])) {
			print_record(out, nout);
			printf("FAIL evseq: record line %zu differs from %s:\n"
			       "  golden: %s\n  read:   %s\n", i + 1, argv[1],
			       line, i < nout ? out[i] : "(end of record)");
			return 1;
		}
		i++;
	}
	fclose(f);
	if (i != nout) {
		print_record(out, nout);
		printf("FAIL evseq: the record has %zu lines, %s %zu\n", nout,
		       argv[1], i);
		return 1;
	}
	printf("evseq: %zu record lines (%zu reads and events) identical to %s\n",
	       nout, nrec, argv[1]);
	return 0;
}
