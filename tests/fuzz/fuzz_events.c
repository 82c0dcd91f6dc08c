// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target for libinofd's event processing: the parsing of what
 * read(2) returns on the instance, rename pairing, coalescing, overflow
 * repair and the tree bookkeeping that rebuilds each event's path.
 *
 * The library is compiled into this program, and the fuzz input goes in
 * through inofd__feed(), the one internal entry point for raw event bytes
 * (inofd_read() feeds what it reads through it): buffers of well-formed
 * struct inotify_event records (the kernel never returns anything else),
 * while every system call is real.  Each input gets a fresh instance with a recursive watch of a small
 * real tree and a plain watch of a file, so watch descriptors 1..7 exist.
 *
 * Input: byte 0 options; then records
 *   [ctl][wd][mask selector + 4 bytes][cookie][name selector ...]
 * where ctl bit 0 ends the current read buffer.
 *
 * Checked besides ASan/UBSan/LSan: every path the library reports lies
 * under the directories it watches and has no empty component, and every
 * event type is a known one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inofd.h"

int inofd__feed(struct inofd *in, const void *buf, size_t len);
int inofd__kwd_of(const struct inofd *in, dev_t dev, ino_t ino);

static char root[64];
static size_t rootlen;
static char filepath[96];

/* the current input, as read buffers */
static const uint8_t *in_p, *in_end;
static char rbuf[64 * 1024];

static unsigned int take(unsigned int def)
{
	return in_p < in_end ? *in_p++ : def;
}

static uint32_t take32(void)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v = (v << 8) | take(0);
	return v;
}

static const uint32_t masks[] = {
	IN_CREATE, IN_CREATE | IN_ISDIR, IN_DELETE, IN_DELETE | IN_ISDIR,
	IN_MOVED_FROM, IN_MOVED_TO, IN_MOVED_FROM | IN_ISDIR,
	IN_MOVED_TO | IN_ISDIR, IN_MODIFY, IN_ATTRIB, IN_OPEN | IN_ISDIR,
	IN_ACCESS | IN_ISDIR, IN_CLOSE_NOWRITE | IN_ISDIR, IN_CLOSE_WRITE,
	IN_DELETE_SELF, IN_MOVE_SELF, IN_IGNORED, IN_UNMOUNT, IN_Q_OVERFLOW,
	IN_OPEN, IN_ACCESS, IN_CLOSE_NOWRITE,
};

static const char *names[] = {
	"a", "b", "c", "d", "e", "f", "x", "new", "file", "..", ".",
};

/* Build one read buffer; returns its length. */
static size_t make_buffer(char *buf, size_t cap)
{
	size_t len = 0;

	while (in_p < in_end) {
		struct inotify_event ev;
		char name[64];
		unsigned int ctl = take(1), sel, nl = 0;
		size_t rec;

		memset(&ev, 0, sizeof(ev));
		ev.wd = (int)(take(0) % 10) - 1;	/* -1..8 */
		sel = take(0);
		if (sel < 0xc0)
			ev.mask = masks[sel % (sizeof(masks) / sizeof(masks[0]))];
		else
			ev.mask = take32();
		ev.cookie = take(0) % 4;
		sel = take(0);
		if (sel < 0x80) {
			const char *s = names[sel % (sizeof(names) /
						     sizeof(names[0]))];

			/* the kernel never reports "." or ".." */
			if (s[0] == '.')
				s = "dot";
			nl = strlen(s);
			memcpy(name, s, nl);
		} else if (sel < 0xe0) {
			/* a made-up name: no '/' and no NUL, as from the kernel */
			unsigned int i, want = 1 + take(0) % 40;

			for (i = 0; i < want && in_p < in_end; i++) {
				char c = (char)take('x');

				if (c == '/' || c == '\0')
					c = '_';
				name[nl++] = c;
			}
			if (nl == 1 && name[0] == '.')
				name[0] = '_';
			if (nl == 2 && name[0] == '.' && name[1] == '.')
				name[1] = '_';
		}
		/*
		 * The kernel names the entry in every create, delete and
		 * move event (those exist only on directory watches).
		 */
		if (!nl && (ev.mask & (IN_CREATE | IN_DELETE | IN_MOVE))) {
			const char *s = names[sel % 9];

			nl = strlen(s);
			memcpy(name, s, nl);
		}
		/* len includes the NUL and padding, as the kernel makes it */
		ev.len = nl ? (uint32_t)((nl + 1 + 15) & ~15u) : 0;
		rec = sizeof(ev) + ev.len;
		if (len + rec > cap)
			break;
		memcpy(buf + len, &ev, sizeof(ev));
		memset(buf + len + sizeof(ev), 0, ev.len);
		memcpy(buf + len + sizeof(ev), name, nl);
		len += rec;
		if (ctl & 1)
			break;
	}
	return len;
}

static void mk(const char *rel, int dir)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (dir)
		mkdir(p, 0755);
	else
		close(open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(root, sizeof(root), "/tmp/inofd-fuzz.XXXXXX");
	if (!mkdtemp(root))
		abort();
	rootlen = strlen(root);
	mk("a", 1);
	mk("b", 1);
	mk("a/c", 1);
	mk("a/c/d", 1);
	mk("b/e", 1);
	mk("f", 1);
	mk("file", 0);
	mk("a/file", 0);
	snprintf(filepath, sizeof(filepath), "%s/plain", root);
	close(open(filepath, O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
	return 0;
}

static void check_path(const char *p)
{
	if (!p)
		return;
	/* orphaned subtrees keep absolute paths under root as well */
	if (strncmp(p, root, rootlen) || (p[rootlen] && p[rootlen] != '/'))
		abort();
	if (strstr(p, "//"))
		abort();
}

/* per input: the last seq handed out, the IN_IGNORED of each watch */
static uint64_t lastseq;
static int wds[2], ignored[2];

static void drain(struct inofd *in)
{
	const struct inofd_event *ev;
	int i;

	while (inofd_next(in, &ev) == 1) {
		if (ev->type < INOFD_EV_INOTIFY || ev->type > INOFD_EV_ERROR)
			abort();
		/* 1, 2, 3, ...: no gap, never back */
		if (ev->seq != ++lastseq)
			abort();
		for (i = 0; i < 2; i++)
			if (ev->wd == wds[i] && ev->type == INOFD_EV_INOTIFY &&
			    (ev->mask & IN_IGNORED))
				ignored[i]++;
		check_path(ev->path);
		check_path(ev->from_path);
		if (ev->name && !*ev->name)
			abort();
		if (ev->type == INOFD_EV_RENAME && ev->from_wd < 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inofd_opts o = { .sz = sizeof(o), .flags = INOFD_FORCE_PROCFD };
	struct inofd *in;
	unsigned int opt;
	int i;

	if (size < 1)
		return 0;
	in_p = data;
	in_end = data + size;
	opt = take(0);
	if (opt & 1)
		o.flags |= INOFD_RAW_MOVES;
	if (opt & 2)
		o.coalesce_ms = 1;
	if (opt & 8)
		o.queue_max = 4;	/* full all the time: ends past it */
	o.pair_timeout_ms = 1;
	if (inofd_new(&in, &o) < 0)
		return 0;
	lastseq = 0;
	ignored[0] = ignored[1] = 0;
	wds[0] = inofd_watch_tree_at(in, AT_FDCWD, root, IN_ALL_EVENTS, NULL);
	wds[1] = inofd_watch_path(in, filepath, IN_ALL_EVENTS, NULL);
	if (wds[0] < 0 || wds[1] < 0)
		abort();
	for (i = 0; i < 64 && in_p < in_end; i++) {
		size_t len = make_buffer(rbuf, sizeof(rbuf));

		if (!len || inofd__feed(in, rbuf, len) < 0)
			break;
		drain(in);
	}
	/* let pending rename halves and coalescing windows expire */
	if ((opt & 4) && inofd_timeout(in) > 0) {
		usleep(1100);
		inofd_read(in);
		drain(in);
	}
	/* the tiny queue: filled by the plain file's events, not drained */
	if (opt & 8) {
		struct inotify_event full[8];
		struct stat st;

		memset(full, 0, sizeof(full));
		if (stat(filepath, &st) == 0)
			for (i = 0; i < 8; i++) {
				full[i].wd = inofd__kwd_of(in, st.st_dev,
							   st.st_ino);
				full[i].mask = IN_ATTRIB;
			}
		inofd__feed(in, full, sizeof(full));
	}
	/* every registration ends with exactly one IN_IGNORED, full queue
	 * or not: those still live end now */
	for (i = 0; i < 2; i++)
		if (inofd_unwatch(in, wds[i]) == 0 && ignored[i])
			abort();	/* live after its IN_IGNORED */
	for (i = 0; i < 100; i++) {
		inofd_read(in);
		drain(in);
		if (inofd_timeout(in) != 0)
			break;
	}
	if (ignored[0] != 1 || ignored[1] != 1)
		abort();
	inofd_free(in);
	return 0;
}
