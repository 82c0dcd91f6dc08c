// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch-fd: inotifywait(1) by file descriptor.
 *
 * Each FILE is opened (O_PATH by default), watched through its descriptor
 * with libinofd, and the descriptor is closed at once: the watch pins no
 * fd, so the filesystem stays unmountable.  Options, output and exit codes
 * are those of Debian 12's inotifywait (inotify-tools 3.22); what
 * inotifywait lacks comes as options (--pair-moves, --rdonly, -C, -v) or
 * as clearly marked output (the Q_OVERFLOW rescan line).  See watch-fd(1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "inofd.h"

#define EXIT_TIMEOUT	2

/* One watched FILE argument. */
struct arg {
	char *disp;		/* %w: as given, '/' appended for a directory */
	char *abs;		/* the path libinofd records (tree watches) */
	size_t abslen;
	int tree;		/* watched with inofd_watch_tree_at() */
	int wd;
	int own_close;		/* --rdonly: our close(2) is still to come */
};

/* Output order and names of inotify-tools' event_to_str(). */
static const struct {
	const char *name;
	uint32_t mask;
} outnames[] = {
	{ "ACCESS", IN_ACCESS },	{ "MODIFY", IN_MODIFY },
	{ "ATTRIB", IN_ATTRIB },	{ "CLOSE_WRITE", IN_CLOSE_WRITE },
	{ "CLOSE_NOWRITE", IN_CLOSE_NOWRITE }, { "OPEN", IN_OPEN },
	{ "MOVED_FROM", IN_MOVED_FROM }, { "MOVED_TO", IN_MOVED_TO },
	{ "CREATE", IN_CREATE },	{ "DELETE", IN_DELETE },
	{ "DELETE_SELF", IN_DELETE_SELF }, { "UNMOUNT", IN_UNMOUNT },
	{ "Q_OVERFLOW", IN_Q_OVERFLOW }, { "IGNORED", IN_IGNORED },
	{ "CLOSE", IN_CLOSE },		/* either close bit */
	{ "MOVE_SELF", IN_MOVE_SELF },	{ "ISDIR", IN_ISDIR },
	{ "ONESHOT", IN_ONESHOT },
};

/* Names -e accepts (inotifywait's, case-insensitive), then our extras. */
static const struct {
	const char *name;
	uint32_t mask;
} innames[] = {
	{ "ACCESS", IN_ACCESS },	{ "MODIFY", IN_MODIFY },
	{ "ATTRIB", IN_ATTRIB },	{ "CLOSE_WRITE", IN_CLOSE_WRITE },
	{ "CLOSE_NOWRITE", IN_CLOSE_NOWRITE }, { "OPEN", IN_OPEN },
	{ "MOVED_FROM", IN_MOVED_FROM }, { "MOVED_TO", IN_MOVED_TO },
	{ "CREATE", IN_CREATE },	{ "DELETE", IN_DELETE },
	{ "DELETE_SELF", IN_DELETE_SELF }, { "UNMOUNT", IN_UNMOUNT },
	{ "Q_OVERFLOW", IN_Q_OVERFLOW }, { "IGNORED", IN_IGNORED },
	{ "CLOSE", IN_CLOSE },		{ "MOVE_SELF", IN_MOVE_SELF },
	{ "MOVE", IN_MOVE },		{ "ISDIR", IN_ISDIR },
	{ "ONESHOT", IN_ONESHOT },	{ "ALL_EVENTS", IN_ALL_EVENTS },
	{ "ALL", IN_ALL_EVENTS },	/* watch-fd only */
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* Everything the options set. */
struct cfg {
	int monitor, quiet, recursive, csv, no_newline, verbose;
	int pair, rdonly, nofollow;
	long timeout;			/* <= 0: none */
	uint32_t events;		/* what -e asked for (0: all) */
	char *format;			/* with the '\n' appended */
	const char *timefmt;
	const char *fromfile, *outfile;
	regex_t re;
	int have_re, invert_re;
	unsigned int coalesce_ms;
	char **excl;			/* @FILE: paths not to recurse into */
	size_t nexcl;
	char **files;
	size_t nfiles;
};

static int push(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -1;
	*v = nv;
	nv[*n] = strdup(s);
	if (!nv[*n])
		return -1;
	(*n)++;
	return 0;
}

/* inotify-tools' str_to_event: -1 bad name, 0 if any item is empty. */
static long parse_events(const char *list)
{
	const char *p = list;
	long ret = 0;
	size_t i, len;

	if (!*p)
		return 0;
	for (;;) {
		const char *c = strchr(p, ',');

		len = c ? (size_t)(c - p) : strlen(p);
		if (!len)
			return 0;
		for (i = 0; i < ARRAY_SIZE(innames); i++) {
			const char *t = p;
			size_t tl = len;

			/* watch-fd also takes the IN_ prefix */
			if (tl > 3 && !strncasecmp(t, "IN_", 3)) {
				t += 3;
				tl -= 3;
			}
			if (strlen(innames[i].name) == tl &&
			    !strncasecmp(t, innames[i].name, tl))
				break;
		}
		if (i == ARRAY_SIZE(innames))
			return -1;
		ret |= innames[i].mask;
		if (!c)
			return ret;
		p = c + 1;
		if (!*p)
			return 0;
	}
}

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

	for (i = 0; i < ARRAY_SIZE(outnames); i++) {
		if (!(mask & outnames[i].mask))
			continue;
		if (b->len > start)
			put(b, &sep, 1);
		puts_b(b, outnames[i].name);
	}
	if (b->len == start) {
		snprintf(hex, sizeof(hex), "0x%08x", mask);
		puts_b(b, hex);
	}
}

/* What one output line is about. */
struct line {
	const char *w, *f;		/* %w, %f (NULL: empty) */
	uint32_t mask;
	const char *fw, *ff;		/* --pair-moves: the source */
};

/*
 * Expand --format the way inotify-tools does.  Returns 0, or -1 when
 * inotifywait prints nothing for the event (a trailing lone '%', or a
 * --timefmt that expands to nothing).
 */
static int expand(struct buf *b, const struct cfg *c, const char *fmt,
		  const struct line *l)
{
	size_t i, n = strlen(fmt);

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

static void emit(const struct cfg *c, const struct line *l)
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
	if (b.len)
		fwrite(b.s, 1, b.len, stdout);
	fflush(stdout);
	free(b.s);
	free(ev.s);
}

/*
 * %w of an event: the FILE as given, or for a directory inside a recursive
 * watch, the FILE followed by the directory's path below it.  Returns a
 * malloc'ed string or NULL (unknown watch: Q_OVERFLOW).
 */
static char *watch_disp(const struct arg *a, const char *path,
			const char *name)
{
	size_t pl;
	const char *rel;
	char *s;

	if (!a)
		return NULL;
	if (!a->tree || !a->abs || !path)
		return strdup(a->disp);
	pl = strlen(path);
	if (name) {
		size_t nl = strlen(name);

		if (pl > nl && path[pl - nl - 1] == '/' &&
		    !strcmp(path + pl - nl, name))
			pl -= nl + 1;
	}
	if (pl < a->abslen || strncmp(path, a->abs, a->abslen))
		goto outside;
	rel = path + a->abslen;
	pl -= a->abslen;
	if (a->abslen > 1) {
		if (pl && *rel != '/')
			goto outside;
	}
	while (pl && *rel == '/') {
		rel++;
		pl--;
	}
	if (!pl)
		return strdup(a->disp);
	if (asprintf(&s, "%s%.*s/", a->disp, (int)pl, rel) < 0)
		return NULL;
	return s;
outside:
	if (asprintf(&s, "%.*s/", (int)pl, path) < 0)
		return NULL;
	return s;
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

static void usage(FILE *f)
{
	fprintf(f,
"usage: watch-fd [options] FILE...\n"
"Watch each FILE through a file descriptor that is closed at once, and print\n"
"events as inotifywait(1) does.\n"
"  -m, --monitor         keep going (until -t, or no watch is left)\n"
"  -r, --recursive       watch directories recursively (new ones included)\n"
"  -e, --event EV[,EV]   only these events (inotifywait's names; repeatable)\n"
"  -t, --timeout SEC     exit 2 after SEC seconds without an event\n"
"  -q, --quiet           no \"Setting up watches.\"; -qq: print nothing\n"
"  -c, --csv             comma-separated output\n"
"      --format FMT      %%w %%f %%e %%Xe %%T %%0 %%n (+ %%W %%F with --pair-moves)\n"
"      --no-newline      no newline after --format\n"
"      --timefmt FMT     strftime(3) format for %%T\n"
"      --exclude RE, --excludei RE, --include RE, --includei RE\n"
"                        filter on \"%%w%%f\" (POSIX extended regex)\n"
"      --fromfile FILE   read FILEs (and @excludes) from FILE, '-': stdin\n"
"  -o, --outfile FILE    append events to FILE\n"
"  -P, --no-dereference  do not follow a symbolic link FILE\n"
"watch-fd only:\n"
"      --pair-moves      one line per rename: SRC EVENTS NAME -> DST NAME\n"
"      --rdonly          open FILE O_RDONLY (proves read access) not O_PATH\n"
"  -p, --o-path          open FILE with O_PATH (the default)\n"
"  -C, --coalesce MS     at most one line per watch per MS milliseconds\n"
"  -v, --verbose         say which backend (kernel or procfd) is in use\n"
"  -h, --help\n"
"Exit: 0 event seen (with -m: no watch left), 1 error or an event not asked\n"
"for, 2 timeout.\n");
}

enum {
	OPT_FORMAT = 256, OPT_TIMEFMT, OPT_NONL, OPT_FROMFILE, OPT_EXC,
	OPT_EXCI, OPT_INC, OPT_INCI, OPT_PAIR, OPT_RDONLY,
};

/* inotifywait's checks and messages; returns 0 or 1 (exit status). */
static int parse(int argc, char **argv, struct cfg *c)
{
	static const struct option lopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "event", required_argument, NULL, 'e' },
		{ "monitor", no_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "timeout", required_argument, NULL, 't' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "csv", no_argument, NULL, 'c' },
		{ "daemon", no_argument, NULL, 'd' },
		{ "syslog", no_argument, NULL, 's' },
		{ "no-dereference", no_argument, NULL, 'P' },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "no-newline", no_argument, NULL, OPT_NONL },
		{ "timefmt", required_argument, NULL, OPT_TIMEFMT },
		{ "fromfile", required_argument, NULL, OPT_FROMFILE },
		{ "outfile", required_argument, NULL, 'o' },
		{ "exclude", required_argument, NULL, OPT_EXC },
		{ "excludei", required_argument, NULL, OPT_EXCI },
		{ "include", required_argument, NULL, OPT_INC },
		{ "includei", required_argument, NULL, OPT_INCI },
		{ "pair-moves", no_argument, NULL, OPT_PAIR },
		{ "rdonly", no_argument, NULL, OPT_RDONLY },
		{ "o-path", no_argument, NULL, 'p' },
		{ "coalesce", required_argument, NULL, 'C' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *exc = NULL, *exci = NULL, *inc = NULL, *inci = NULL;
	const char *format = NULL;
	unsigned int nexc = 0, nexci = 0;
	int opt, i;
	long ev;
	char *end;

	while ((opt = getopt_long(argc, argv, "mrhcdsPqt:o:e:pC:v", lopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'h': usage(stdout); exit(0);
		case 'm': c->monitor = 1; break;
		case 'q': c->quiet++; break;
		case 'r': c->recursive = 1; break;
		case 'c': c->csv = 1; break;
		case 'P': c->nofollow = 1; break;
		case 'd': case 's':
			fprintf(stderr, "watch-fd: -%c (--%s) is not supported\n",
				opt, opt == 'd' ? "daemon" : "syslog");
			return 1;
		case OPT_FORMAT: format = optarg; break;
		case OPT_NONL: c->no_newline = 1; break;
		case OPT_TIMEFMT: c->timefmt = optarg; break;
		case OPT_FROMFILE:
			if (c->fromfile) {
				fprintf(stderr, "Multiple --fromfile options given.\n");
				return 1;
			}
			c->fromfile = optarg;
			break;
		case 'o':
			if (c->outfile) {
				fprintf(stderr, "Multiple --outfile options given.\n");
				return 1;
			}
			c->outfile = optarg;
			break;
		case OPT_EXC: exc = optarg; nexc++; break;
		case OPT_EXCI: exci = optarg; nexci++; break;
		case OPT_INC: inc = optarg; break;
		case OPT_INCI: inci = optarg; break;
		case 't':
			errno = 0;
			c->timeout = strtol(optarg, &end, 10);
			if (*end) {
				fprintf(stderr, "'%s' is not a valid timeout value.\n"
					"Please specify a long int value.\n", optarg);
				return 1;
			}
			if (errno) {
				fprintf(stderr, "Something went wrong with the timeout "
					"value you provided.\n%s\n", strerror(errno));
				return 1;
			}
			break;
		case 'e':
			ev = parse_events(optarg);
			if (ev < 0) {
				fprintf(stderr, "'%s' is not a valid event!  Run with the "
					"'--help' option to see a list of events.\n",
					optarg);
				return 1;
			}
			c->events |= (uint32_t)ev;
			break;
		case OPT_PAIR: c->pair = 1; break;
		case OPT_RDONLY: c->rdonly = 1; break;
		case 'p': c->rdonly = 0; break;
		case 'C':
			c->coalesce_ms = (unsigned int)strtoul(optarg, &end, 10);
			if (*end || !*optarg) {
				fprintf(stderr, "watch-fd: bad --coalesce value '%s'\n",
					optarg);
				return 1;
			}
			break;
		case 'v': c->verbose = 1; break;
		default: return 1;	/* getopt said why */
		}
	}
	if (format && asprintf(&c->format, "%s%s", format,
			       c->no_newline ? "" : "\n") < 0)
		return 1;
	if (exc && exci) {
		fprintf(stderr, "--exclude and --excludei cannot both be specified.\n");
		return 1;
	}
	if (inc && inci) {
		fprintf(stderr, "--include and --includei cannot both be specified.\n");
		return 1;
	}
	if ((inc || inci) && (exc || exci)) {
		fprintf(stderr, "include and exclude regexp cannot both be specified.\n");
		return 1;
	}
	if (format && c->csv) {
		fprintf(stderr, "-c and --format cannot both be specified.\n");
		return 1;
	}
	if (!format && c->no_newline) {
		fprintf(stderr, "--no-newline cannot be specified without --format.\n");
		return 1;
	}
	if (!format && c->timefmt) {
		fprintf(stderr, "--timefmt cannot be specified without --format.\n");
		return 1;
	}
	if (format && strstr(c->format, "%T") && !c->timefmt) {
		fprintf(stderr, "%%T is in --format string, but --timefmt was not specified.\n");
		return 1;
	}
	if (nexc > 1)
		fprintf(stderr, "--exclude: only the last option will be taken into consideration.\n");
	if (nexci > 1)
		fprintf(stderr, "--excludei: only the last option will be taken into consideration.\n");

	if (exc || exci || inc || inci) {
		const char *re = exc ? exc : exci ? exci : inc ? inc : inci;
		int fl = REG_EXTENDED | REG_NOSUB | (exci || inci ? REG_ICASE : 0);

		if (regcomp(&c->re, re, fl)) {
			fprintf(stderr, "Error in `%s' regular expression.\n",
				exc || exci ? "exclude" : "include");
			return 1;
		}
		c->have_re = 1;
		c->invert_re = inc || inci;
	}
	if (c->format) {
		/* inotifywait's check: a fake event must print something */
		struct line l = { .mask = IN_ALL_EVENTS };
		struct buf b = { 0 };

		if (expand(&b, c, c->format, &l) == 0 && b.len == 0) {
			fprintf(stderr, "Something is wrong with your format string.\n");
			return 1;
		}
		free(b.s);
	}

	if (c->fromfile) {
		FILE *f = strcmp(c->fromfile, "-") ? fopen(c->fromfile, "r") : stdin;
		char *ln = NULL;
		size_t cap = 0;
		ssize_t n;

		if (!f) {
			/* not fatal in inotifywait either */
			fprintf(stderr, "Couldn't open %s: %s\n", c->fromfile,
				strerror(errno));
		} else {
			while ((n = getline(&ln, &cap, f)) > 0) {
				if (ln[n - 1] == '\n')
					ln[--n] = '\0';
				if (!n)
					continue;
				if ((ln[0] == '@' ?
				     push(&c->excl, &c->nexcl, ln + 1) :
				     push(&c->files, &c->nfiles, ln)) < 0)
					return 1;
			}
			free(ln);
			if (f != stdin)
				fclose(f);
		}
	}
	for (i = optind; i < argc; i++)
		if ((argv[i][0] == '@' ?
		     push(&c->excl, &c->nexcl, argv[i] + 1) :
		     push(&c->files, &c->nfiles, argv[i])) < 0)
			return 1;
	if (!c->nfiles) {
		fprintf(stderr, "No files specified to watch!\n");
		return 1;
	}
	return 0;
}

static void watch_error(const char *file, int err)
{
	if (err == -ENOSPC) {
		fprintf(stderr, "Failed to watch %s; upper limit on inotify "
			"watches reached!\n", file);
		fprintf(stderr, "Please increase the amount of inotify watches "
			"allowed per user via `/proc/sys/fs/inotify/"
			"max_user_watches'.\n");
	} else {
		/* strerror, not inofd_strerror: inotifywait's words */
		fprintf(stderr, "Couldn't watch %s: %s\n", file,
			strerror(-err));
	}
}

/* Open, watch by fd, close.  Returns 0 or 1 (exit status). */
static int add_watch(struct inofd *in, const struct cfg *c, const char *file,
		     uint32_t kmask, struct arg *a)
{
	struct stat st;
	int fd, r, isdir;
	char lnk[64], buf[PATH_MAX];
	ssize_t n;

	a->wd = -1;
	/* -P: a symlink itself; with -r, inotifywait walks a link to a dir */
	if (c->nofollow && !lstat(file, &st) && S_ISLNK(st.st_mode) &&
	    !(c->recursive && !stat(file, &st) && S_ISDIR(st.st_mode))) {
		/* the library opens it O_PATH|O_NOFOLLOW, watches, closes */
		r = inofd_watch_at(in, AT_FDCWD, file, kmask,
				   INOFD_AT_SYMLINK_NOFOLLOW, a);
		if (r < 0) {
			watch_error(file, r);
			return 1;
		}
		a->wd = r;
		isdir = 0;
		goto name;
	}
	fd = open(file, (c->rdonly ? O_RDONLY | O_NONBLOCK : O_PATH) |
		  O_CLOEXEC);
	if (fd < 0) {
		watch_error(file, -errno);
		return 1;
	}
	isdir = !fstat(fd, &st) && S_ISDIR(st.st_mode);
	if (c->recursive && isdir) {
		snprintf(lnk, sizeof(lnk), "/proc/self/fd/%d", fd);
		n = readlink(lnk, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = '\0';
			a->abs = strdup(buf);
		} else {
			a->abs = realpath(file, NULL);
		}
		if (a->abs)
			a->abslen = strlen(a->abs);
		a->tree = 1;
		r = inofd_watch_tree_at(in, fd, "", kmask & ~IN_ONESHOT,
				&(struct inofd_tree_opts){
					.sz = sizeof(struct inofd_tree_opts),
					.flags = INOFD_AT_EMPTY_PATH,
					.data = a });
		if (r == -EBUSY) {
			/* inside a tree watched already: covered */
			close(fd);
			free(a->abs);
			a->abs = NULL;
			a->tree = 0;
			return 0;
		}
	} else {
		r = inofd_watch_fd(in, fd, kmask, a);
	}
	/* the point of the exercise: the watch outlives the descriptor */
	close(fd);
	if (r < 0) {
		watch_error(file, r);
		return 1;
	}
	a->wd = r;
	a->own_close = c->rdonly;
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
	return a->disp ? 0 : 1;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

/*
 * Handle one library event.  Returns -1 if the event does not count (our
 * own close, a filtered event, an error report), else the mask that
 * decides the exit status of a single-event run.
 */
static long handle(const struct cfg *c, const struct inofd_event *ev)
{
	struct arg *a = ev->data;
	struct line l = { .mask = ev->mask, .f = ev->name };
	char *w = NULL, *fw = NULL;
	long ret = -1;

	switch (ev->type) {
	case INOFD_EV_RESCAN:
		/* events were lost: a marked line, always printed */
		l.mask = IN_Q_OVERFLOW;
		emit(c, &l);
		return IN_Q_OVERFLOW;
	case INOFD_EV_ERROR:
		w = watch_disp(a, ev->path, ev->name);
		fprintf(stderr, "Couldn't watch new directory %s%s/: %s\n",
			w ? w : "", ev->name ? ev->name : "",
			inofd_strerror(ev->error));
		free(w);
		return -1;
	default:
		break;
	}
	/*
	 * --rdonly: closing the O_RDONLY descriptor after watching it is an
	 * event on the watch, ours, not the watched object's.
	 */
	if (a && a->own_close && ev->type == INOFD_EV_INOTIFY &&
	    ev->wd == a->wd && !ev->name && (ev->mask & IN_CLOSE_NOWRITE)) {
		a->own_close = 0;
		if (!c->verbose)
			return -1;
	}
	w = watch_disp(a, ev->path, ev->name);
	l.w = w;
	if (ev->type == INOFD_EV_RENAME) {
		fw = watch_disp(ev->from_data, ev->from_path, ev->from_name);
		l.fw = fw;
		l.ff = ev->from_name;
		if ((excluded_dir(c, w) && excluded_dir(c, fw)) ||
		    (regex_drops(c, w, l.f) && regex_drops(c, fw, l.ff)))
			goto out;
	} else if (excluded_dir(c, w) || regex_drops(c, w, l.f)) {
		goto out;
	}
	ret = ev->mask;
	if (ev->mask & c->events)
		emit(c, &l);
out:
	free(w);
	free(fw);
	return ret;
}

int main(int argc, char **argv)
{
	struct cfg c = { 0 };
	struct inofd_opts o = { .sz = sizeof(o), .flags = INOFD_RAW_MOVES };
	long long deadline = -1;
	uint32_t kmask;
	struct arg *args;
	struct inofd *in;
	size_t i;
	int r;

	if (parse(argc, argv, &c))
		return 1;
	if (!c.events)
		c.events = IN_ALL_EVENTS;
	if (c.pair)
		o.flags &= ~INOFD_RAW_MOVES;
	o.coalesce_ms = c.coalesce_ms;

	if (c.outfile) {
		int fd = open(c.outfile, O_WRONLY | O_CREAT | O_APPEND |
			      O_CLOEXEC, 0600);

		if (fd < 0) {
			fprintf(stderr, "Failed to open output file %s\n",
				c.outfile);
			return 1;
		}
		if (dup2(fd, STDOUT_FILENO) < 0)
			return 1;
		close(fd);
	}

	r = inofd_new(&in, &o);
	if (r < 0) {
		fprintf(stderr, "watch-fd: %s\n", inofd_strerror(r));
		return 1;
	}
	if (c.verbose)
		fprintf(stderr, "watch-fd: backend: %s\n",
			inofd_backend(in) == INOFD_BACKEND_KERNEL ?
			"kernel (INOTIFY_WATCH)" : "procfd (/proc/self/fd)");
	if (!c.quiet)
		fprintf(stderr, c.recursive ? "Setting up watches.  Beware: "
			"since -r was given, this may take a while!\n" :
			"Setting up watches.\n");

	/*
	 * The kernel needs an event bit: -e unmount alone still works, as
	 * inotifywait's watch does, by asking for DELETE_SELF (not printed).
	 */
	kmask = c.events & (IN_ALL_EVENTS | IN_ONESHOT);
	if (!(kmask & IN_ALL_EVENTS))
		kmask |= IN_DELETE_SELF;
	args = calloc(c.nfiles, sizeof(*args));
	if (!args)
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
		if (add_watch(in, &c, c.files[i], kmask, &args[i]))
			return 1;
	}
	if (!c.quiet)
		fprintf(stderr, "Watches established.\n");

	if (c.timeout > 0)
		deadline = now_ms() + c.timeout * 1000LL;
	for (;;) {
		struct pollfd p = { .fd = inofd_fd(in), .events = POLLIN };
		const struct inofd_event *ev;
		int t = inofd_timeout(in);

		if (deadline >= 0) {
			long long left = deadline - now_ms();

			if (left <= 0)
				return EXIT_TIMEOUT;
			if (t < 0 || left < t)
				t = (int)left;
		}
		r = poll(&p, 1, t);
		if (r < 0 && errno != EINTR) {
			fprintf(stderr, "%s\n", strerror(errno));
			return 1;
		}
		r = inofd_read(in);
		if (r < 0) {
			fprintf(stderr, "%s\n", inofd_strerror(r));
			return 1;
		}
		while (inofd_next(in, &ev) > 0) {
			long m = handle(&c, ev);

			/* as inotifywait: any event restarts the timeout */
			if (deadline >= 0)
				deadline = now_ms() + c.timeout * 1000LL;
			if (m < 0)
				continue;
			if (!c.monitor) {
				inofd_free(in);
				return ((uint32_t)m & c.events) ? 0 : 1;
			}
		}
		if (c.monitor && inofd_watch_count(in) == 0) {
			inofd_free(in);
			return 0;
		}
	}
}
