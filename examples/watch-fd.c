// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch-fd: open each FILE, watch it by descriptor with libinofd, close the
 * descriptor, print events.  Options follow inotifywait(1) where they can.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "inofd.h"

struct arg {
	const char *name;	/* as given */
	char *abs;		/* what the library calls it, for -r */
	size_t abslen;
	int wd;
	int own_close;		/* our close(2) of FILE is still to come */
};

static const struct {
	const char *name;
	uint32_t mask;
} names[] = {
	{ "ACCESS", IN_ACCESS },		{ "MODIFY", IN_MODIFY },
	{ "ATTRIB", IN_ATTRIB },		{ "CLOSE_WRITE", IN_CLOSE_WRITE },
	{ "CLOSE_NOWRITE", IN_CLOSE_NOWRITE },	{ "OPEN", IN_OPEN },
	{ "MOVED_FROM", IN_MOVED_FROM },	{ "MOVED_TO", IN_MOVED_TO },
	{ "CREATE", IN_CREATE },		{ "DELETE", IN_DELETE },
	{ "DELETE_SELF", IN_DELETE_SELF },	{ "MOVE_SELF", IN_MOVE_SELF },
	{ "UNMOUNT", IN_UNMOUNT },		{ "Q_OVERFLOW", IN_Q_OVERFLOW },
	{ "IGNORED", IN_IGNORED },		{ "ISDIR", IN_ISDIR },
	{ "ONESHOT", IN_ONESHOT },
	/* input only */
	{ "CLOSE", IN_CLOSE },			{ "MOVE", IN_MOVE },
	{ "ALL", IN_ALL_EVENTS },		{ "ALL_EVENTS", IN_ALL_EVENTS },
};
#define NPRINT	17	/* the first NPRINT entries name single bits */

static const char *format;
static int csv, quiet, verbose;

static void usage(FILE *f)
{
	fprintf(f,
"usage: watch-fd [options] FILE...\n"
"Open each FILE, watch it through its file descriptor, close the descriptor\n"
"and print one line per event: WATCH EVENTS [NAME] [cookie=N].\n"
"  -m, --monitor        keep going; exit 0 once no watch is left\n"
"  -r, --recursive      watch directories recursively\n"
"  -e, --event LIST     only these events (create,modify,delete,moved_from,\n"
"                       moved_to,attrib,close_write,close_nowrite,close,open,\n"
"                       access,delete_self,move_self,move,unmount,all)\n"
"  -p, --o-path         open FILE with O_PATH instead of O_RDONLY\n"
"  -P, --paired         report renames as one event (and move-out/move-in)\n"
"  -C, --coalesce MS    at most one CHANGED line per watch per MS\n"
"  -c, --csv            comma-separated output: WATCH,\"EVENTS\",NAME,COOKIE\n"
"      --format FMT     %%w watch, %%f name, %%e events, %%c cookie, %%p path\n"
"  -t, --timeout SEC    exit 2 if nothing happens for SEC seconds\n"
"  -v, --verbose        print the backend in use on stderr, and the\n"
"                       IN_CLOSE_NOWRITE of watch-fd's own close of FILE\n"
"  -q, --quiet          do not print \"Watches established.\"\n"
"  -h, --help\n"
"Exit: 0 event seen (or all watches gone with -m), 1 error, 2 timeout.\n");
}

static int parse_events(const char *list, uint32_t *mask)
{
	char *dup = strdup(list), *tok, *save = NULL;
	size_t i;

	if (!dup)
		return -1;
	*mask = 0;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		const char *t = tok;

		if (!strncasecmp(t, "IN_", 3))
			t += 3;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcasecmp(t, names[i].name))
				break;
		if (i == sizeof(names) / sizeof(names[0])) {
			fprintf(stderr, "watch-fd: unknown event '%s'\n", tok);
			free(dup);
			return -1;
		}
		*mask |= names[i].mask;
	}
	free(dup);
	return 0;
}

static void mask_str(uint32_t mask, char *buf, size_t len)
{
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < NPRINT; i++) {
		if (!(mask & names[i].mask))
			continue;
		off += snprintf(buf + off, len > off ? len - off : 0, "%sIN_%s",
				off ? "," : "", names[i].name);
	}
}

/* The watch as the user named it: the FILE argument, or a path below it. */
static char *watch_name(const struct inofd_event *ev, const char *path,
			const char *name, const struct arg *a)
{
	size_t pl, nl;
	char *s;

	if (!path)
		return strdup(a ? a->name : "?");
	pl = strlen(path);
	nl = name ? strlen(name) : 0;
	if (name && pl > nl && path[pl - nl - 1] == '/')
		pl -= nl + 1;
	(void)ev;
	if (a && a->abs && pl >= a->abslen &&
	    !strncmp(path, a->abs, a->abslen) &&
	    (pl == a->abslen || path[a->abslen] == '/')) {
		if (asprintf(&s, "%s%.*s", a->name, (int)(pl - a->abslen),
			     path + a->abslen) < 0)
			return NULL;
		return s;
	}
	if (a && !a->abs)
		return strdup(a->name);
	return strndup(path, pl);
}

static void csv_field(const char *s)
{
	if (!strpbrk(s, ",\"\n")) {
		fputs(s, stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		if (*s == '"')
			putchar('"');
		putchar(*s);
	}
	putchar('"');
}

static void print_one(const char *w, uint32_t mask, const char *name,
		      uint32_t cookie, const char *path, const char *extra)
{
	char ev[256];
	const char *f;

	mask_str(mask, ev, sizeof(ev));
	if (format) {
		for (f = format; *f; f++) {
			if (*f != '%' || !f[1]) {
				putchar(*f);
				continue;
			}
			switch (*++f) {
			case 'w': fputs(w, stdout); break;
			case 'f': fputs(name ? name : "", stdout); break;
			case 'e': fputs(ev, stdout); break;
			case 'c': printf("%u", cookie); break;
			case 'p': fputs(path ? path : w, stdout); break;
			case '%': putchar('%'); break;
			default: putchar('%'); putchar(*f); break;
			}
		}
		putchar('\n');
		return;
	}
	if (csv) {
		csv_field(w);
		printf(",\"%s\",", ev);
		csv_field(name ? name : "");
		printf(",%u\n", cookie);
		return;
	}
	printf("%s %s", w, ev);
	if (name)
		printf(" %s", name);
	if (cookie)
		printf(" cookie=%u", cookie);
	if (extra)
		printf(" %s", extra);
	putchar('\n');
}

/* Returns 1 if a line was printed. */
static int print_event(const struct inofd_event *ev, uint32_t show)
{
	struct arg *a = ev->data;
	const struct arg *fa = ev->from_data;
	char *w, *fw, *extra = NULL;
	uint32_t m = ev->mask;

	if (!(m & (show | IN_UNMOUNT | IN_IGNORED | IN_Q_OVERFLOW)) &&
	    ev->type != INOFD_EV_ERROR && ev->type != INOFD_EV_CHANGED)
		return 0;
	if (ev->type == INOFD_EV_RESCAN) {
		print_one("-", IN_Q_OVERFLOW, NULL, 0, NULL, "(rescan)");
		return 1;
	}
	/*
	 * Closing the O_RDONLY descriptor after watching it is an event on
	 * the watch: ours, not the watched object's.  Shown only with -v.
	 */
	if (a && a->own_close && ev->type == INOFD_EV_INOTIFY &&
	    ev->wd == a->wd && !ev->name && (m & IN_CLOSE_NOWRITE)) {
		a->own_close = 0;
		if (!verbose)
			return 0;
	}
	w = watch_name(ev, ev->path, ev->name, a);
	if (!w)
		return 0;
	switch (ev->type) {
	case INOFD_EV_RENAME:
		fw = watch_name(ev, ev->from_path, ev->from_name, fa);
		if (fw && asprintf(&extra, "from=%s/%s", fw,
				   ev->from_name ? ev->from_name : "") < 0)
			extra = NULL;
		free(fw);
		break;
	case INOFD_EV_MOVE_OUT:
		extra = strdup("(move-out)");
		break;
	case INOFD_EV_MOVE_IN:
		extra = strdup("(move-in)");
		break;
	case INOFD_EV_CHANGED:
		extra = strdup("(changed)");
		break;
	case INOFD_EV_ERROR:
		if (asprintf(&extra, "(error: %s)",
			     inofd_strerror(ev->error)) < 0)
			extra = NULL;
		break;
	default:
		if (ev->flags & INOFD_EVF_SYNTHETIC)
			extra = strdup("(synthetic)");
		break;
	}
	print_one(w, m, ev->name, ev->cookie, ev->path, extra);
	free(extra);
	free(w);
	return 1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "monitor", no_argument, NULL, 'm' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "event", required_argument, NULL, 'e' },
		{ "o-path", no_argument, NULL, 'p' },
		{ "paired", no_argument, NULL, 'P' },
		{ "coalesce", required_argument, NULL, 'C' },
		{ "csv", no_argument, NULL, 'c' },
		{ "format", required_argument, NULL, 'F' },
		{ "timeout", required_argument, NULL, 't' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct inofd_opts o = { .sz = sizeof(o), .flags = INOFD_RAW_MOVES };
	int monitor = 0, recursive = 0, opath = 0, c, i, r;
	uint32_t show = IN_ALL_EVENTS, kmask;
	long long deadline = -1, timeout_ms = -1;
	struct arg *args;
	struct inofd *in;

	while ((c = getopt_long(argc, argv, "mre:pPC:cF:t:vqh", lopts,
				NULL)) != -1) {
		switch (c) {
		case 'm': monitor = 1; break;
		case 'r': recursive = 1; break;
		case 'e':
			if (parse_events(optarg, &show))
				return 1;
			break;
		case 'p': opath = 1; break;
		case 'P': o.flags &= ~INOFD_RAW_MOVES; break;
		case 'C': o.coalesce_ms = (unsigned int)atoi(optarg); break;
		case 'c': csv = 1; break;
		case 'F': format = optarg; break;
		case 't': timeout_ms = atoll(optarg) * 1000; break;
		case 'v': verbose = 1; break;
		case 'q': quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 1;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);

	r = inofd_new(&in, &o);
	if (r < 0) {
		fprintf(stderr, "watch-fd: %s\n", inofd_strerror(r));
		return 1;
	}
	if (verbose)
		fprintf(stderr, "watch-fd: backend: %s\n",
			inofd_backend(in) == INOFD_BACKEND_KERNEL ?
			"kernel (INOTIFY_WATCH)" : "procfd (/proc/self/fd)");

	/* the kernel needs at least one event bit; -e unmount still works */
	kmask = show & IN_ALL_EVENTS;
	if (!kmask)
		kmask = IN_DELETE_SELF;
	args = calloc((size_t)(argc - optind), sizeof(*args));
	if (!args)
		return 1;
	for (i = optind; i < argc; i++) {
		struct arg *a = &args[i - optind];
		int fd = open(argv[i], (opath ? O_PATH : O_RDONLY) | O_CLOEXEC |
			      (recursive ? O_DIRECTORY : 0));

		a->name = argv[i];
		if (fd < 0) {
			fprintf(stderr, "watch-fd: %s: %s\n", argv[i],
				strerror(errno));
			return 1;
		}
		if (recursive)
			r = inofd_watch_tree(in, fd, "", kmask,
					     INOFD_AT_EMPTY_PATH, a);
		else
			r = inofd_watch_fd(in, fd, kmask, a);
		/* the point of the exercise: the watch outlives the fd */
		close(fd);
		if (r < 0) {
			fprintf(stderr, "watch-fd: %s: %s\n", argv[i],
				inofd_strerror(r));
			return 1;
		}
		a->wd = r;
		a->own_close = !opath && (kmask & IN_CLOSE_NOWRITE);
		if (recursive) {
			/* the library names the tree by the fd's path */
			a->abs = realpath(argv[i], NULL);
			if (a->abs)
				a->abslen = strlen(a->abs);
		}
	}
	if (!quiet)
		fprintf(stderr, "Watches established.\n");

	if (timeout_ms >= 0)
		deadline = now_ms() + timeout_ms;
	for (;;) {
		struct pollfd p = { .fd = inofd_fd(in), .events = POLLIN };
		const struct inofd_event *ev;
		int t = inofd_timeout(in);

		if (deadline >= 0) {
			long long left = deadline - now_ms();

			if (left <= 0)
				return 2;
			if (t < 0 || left < t)
				t = (int)left;
		}
		r = poll(&p, 1, t);
		if (r < 0 && errno != EINTR) {
			perror("watch-fd: poll");
			return 1;
		}
		r = inofd_read(in);
		if (r < 0) {
			fprintf(stderr, "watch-fd: read: %s\n",
				inofd_strerror(r));
			return 1;
		}
		while (inofd_next(in, &ev) > 0) {
			if (!print_event(ev, show))
				continue;
			if (!monitor) {
				inofd_free(in);
				return 0;
			}
			if (deadline >= 0)
				deadline = now_ms() + timeout_ms;
		}
		if (monitor && inofd_watch_count(in) == 0) {
			inofd_free(in);
			return 0;
		}
	}
}
