// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch-fd's output: the default line, --csv and --format as inotify-tools
 * prints them, and diagnostics on standard error or, with -s, syslog.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <syslog.h>
#include <time.h>

#include "watch-fd.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

const struct wf_name wf_names[] = {
	{ "ACCESS", IN_ACCESS, 1 },		{ "MODIFY", IN_MODIFY, 1 },
	{ "ATTRIB", IN_ATTRIB, 1 },		{ "CLOSE_WRITE", IN_CLOSE_WRITE, 1 },
	{ "CLOSE_NOWRITE", IN_CLOSE_NOWRITE, 1 }, { "OPEN", IN_OPEN, 1 },
	{ "MOVED_FROM", IN_MOVED_FROM, 1 },	{ "MOVED_TO", IN_MOVED_TO, 1 },
	{ "CREATE", IN_CREATE, 1 },		{ "DELETE", IN_DELETE, 1 },
	{ "DELETE_SELF", IN_DELETE_SELF, 1 },	{ "UNMOUNT", IN_UNMOUNT, 1 },
	{ "Q_OVERFLOW", IN_Q_OVERFLOW, 1 },	{ "IGNORED", IN_IGNORED, 1 },
	{ "CLOSE", IN_CLOSE, 1 },		/* either close bit */
	{ "MOVE_SELF", IN_MOVE_SELF, 1 },	{ "ISDIR", IN_ISDIR, 1 },
	{ "ONESHOT", IN_ONESHOT, 1 },
	/* -e only */
	{ "MOVE", IN_MOVE, 0 },			{ "ALL_EVENTS", IN_ALL_EVENTS, 0 },
	{ "ALL", IN_ALL_EVENTS, 0 },		/* watch-fd only */
};
const size_t wf_nnames = ARRAY_SIZE(wf_names);

/* Growable output buffer (the line may hold NUL bytes from %0). */
struct buf {
	char *s;
	size_t len, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *ns = realloc(b->s, cap);

		if (!ns) {
			fprintf(stderr, "watch-fd: out of memory\n");
			exit(1);
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void puts_b(struct buf *b, const char *s)
{
	if (s)
		put(b, s, strlen(s));
}

static void events_str(struct buf *b, uint32_t mask, char sep)
{
	size_t i, start = b->len;
	char hex[16];

	for (i = 0; i < wf_nnames; i++) {
		if (!wf_names[i].out || !(mask & wf_names[i].mask))
			continue;
		if (b->len > start)
			put(b, &sep, 1);
		puts_b(b, wf_names[i].name);
	}
	if (b->len == start) {
		snprintf(hex, sizeof(hex), "0x%08x", mask);
		puts_b(b, hex);
	}
}

/*
 * Expand --format the way inotify-tools does.  Returns 0, or -1 when
 * inotifywait prints nothing for the event (a trailing lone '%', or a
 * --timefmt that expands to nothing).
 */
static int expand(struct buf *b, const struct cfg *c, const char *fmt,
		  const struct line *l)
{
	size_t i, n = strlen(fmt);
	char hex[16];

	for (i = 0; i < n; i++) {
		char ch;

		if (fmt[i] != '%') {
			put(b, &fmt[i], 1);
			continue;
		}
		if (i == n - 1)
			return -1;
		ch = fmt[i + 1];
		i++;
		switch (ch) {
		case '%': put(b, "%", 1); continue;
		case 'w': puts_b(b, l->w); continue;
		case 'f': puts_b(b, l->f); continue;
		case 'e': events_str(b, l->mask, ','); continue;
		case '0': put(b, "", 1); continue;
		case 'n': put(b, "\n", 1); continue;
		case 'c':
			/* the move cookie, in hex; 0 for other events */
			snprintf(hex, sizeof(hex), "%x", l->cookie);
			puts_b(b, hex);
			continue;
		case 'T': {
			char ts[4096];
			time_t now = time(NULL);
			struct tm tm;

			if (!c->timefmt)
				continue;
			localtime_r(&now, &tm);
			if (strftime(ts, sizeof(ts), c->timefmt, &tm) == 0)
				return -1;
			puts_b(b, ts);
			continue;
		}
		default:
			break;
		}
		if (c->pair && (ch == 'W' || ch == 'F')) {
			puts_b(b, ch == 'W' ? l->fw : l->ff);
			continue;
		}
		if (i + 1 < n && fmt[i + 1] == 'e') {
			events_str(b, l->mask, ch);
			i++;
			continue;
		}
		put(b, "%", 1);
		put(b, &ch, 1);
	}
	return 0;
}

/* inotifywait's check: a fake event must print something */
int wf_format_prints(const struct cfg *c)
{
	struct line l = { .mask = IN_ALL_EVENTS };
	struct buf b = { 0 };
	int ok = expand(&b, c, c->format, &l) < 0 || b.len > 0;

	free(b.s);
	return ok;
}

/* inotify-tools' csv_escape */
static void csv_field(struct buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!n)
		return;
	if (!strpbrk(s, "\",\n") && s[0] != ' ' && s[n - 1] != ' ') {
		put(b, s, n);
		return;
	}
	put(b, "\"", 1);
	for (; *s; s++) {
		if (*s == '"')
			put(b, "\"", 1);
		put(b, s, 1);
	}
	put(b, "\"", 1);
}

void wf_emit(const struct cfg *c, const struct line *l)
{
	struct buf b = { 0 };
	struct buf ev = { 0 };

	if (c->quiet >= 2)
		return;
	if (c->csv) {
		if (l->w && *l->w) {
			csv_field(&b, l->w);
			put(&b, ",", 1);
		}
		events_str(&ev, l->mask, ',');
		csv_field(&b, ev.s);
		put(&b, ",", 1);
		csv_field(&b, l->f);
		if (l->fw || l->ff) {
			put(&b, ",", 1);
			csv_field(&b, l->fw);
			put(&b, ",", 1);
			csv_field(&b, l->ff);
		}
		put(&b, "\n", 1);
	} else if (c->format) {
		if (expand(&b, c, c->format, l) < 0)
			b.len = 0;
	} else if (l->fw || l->ff) {
		/* --pair-moves: SRCWATCH EVENTS SRCNAME -> DSTWATCH DSTNAME */
		puts_b(&b, l->fw);
		put(&b, " ", 1);
		events_str(&b, l->mask, ',');
		put(&b, " ", 1);
		puts_b(&b, l->ff);
		put(&b, " -> ", 4);
		puts_b(&b, l->w);
		put(&b, " ", 1);
		puts_b(&b, l->f);
		put(&b, "\n", 1);
	} else {
		puts_b(&b, l->w);
		put(&b, " ", 1);
		events_str(&b, l->mask, ',');
		put(&b, " ", 1);
		puts_b(&b, l->f);
		put(&b, "\n", 1);
	}
	/* whole, however long (inotifywait cuts at 4 KiB) */
	if (b.len)
		fwrite(b.s, 1, b.len, stdout);
	fflush(stdout);
	free(b.s);
	free(ev.s);
}

void wf_syslog_open(void)
{
	openlog("watch-fd", LOG_CONS | LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

/* inotifywait's output_error(): stderr, or syslog with -s (and -d) */
void wf_diag(const struct cfg *c, const char *fmt, ...)
{
	va_list va;

	va_start(va, fmt);
	if (c->syslog)
		vsyslog(LOG_INFO, fmt, va);
	else
		vfprintf(stderr, fmt, va);
	va_end(va);
}
