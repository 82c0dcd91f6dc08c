// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch-fd's command line: Debian 12's inotifywait (inotify-tools 3.22.6)
 * options, checked in its order with its messages, plus watch-fd's own
 * options, named so that every abbreviation inotifywait accepts means the
 * same here (none of them starts with a letter an inotifywait option
 * starts with).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/inotify.h>

#include "watch-fd.h"

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

/* A FILE argument: '' and a lone '@' are skipped, as inotifywait does. */
static int push_arg(struct cfg *c, const char *s)
{
	if (!*s || !strcmp(s, "@"))
		return 0;
	return s[0] == '@' ? push(&c->excl, &c->nexcl, s + 1) :
			     push(&c->files, &c->nfiles, s);
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
		for (i = 0; i < wf_nnames; i++) {
			const char *t = p;
			size_t tl = len;

			/* watch-fd also takes the IN_ prefix */
			if (tl > 3 && !strncasecmp(t, "IN_", 3)) {
				t += 3;
				tl -= 3;
			}
			if (strlen(wf_names[i].name) == tl &&
			    !strncasecmp(t, wf_names[i].name, tl))
				break;
		}
		if (i == wf_nnames)
			return -1;
		ret |= wf_names[i].mask;
		if (!c)
			return ret;
		p = c + 1;
		if (!*p)
			return 0;
	}
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: watch-fd [options] FILE...\n"
"Watch each FILE through a file descriptor that is closed at once, and print\n"
"events as inotifywait(1) does.\n"
"  -m, --monitor         keep going (until -t, or no watch is left)\n"
"  -d, --daemon          -m in the background, events to -o FILE; implies -s\n"
"  -r, --recursive       watch directories recursively (new ones included)\n"
"  -e, --event EV[,EV]   only these events (inotifywait's names; repeatable)\n"
"  -t, --timeout SEC     exit 2 after SEC seconds without an event\n"
"  -q, --quiet           no \"Setting up watches.\"; -qq: print nothing\n"
"  -c, --csv             comma-separated output\n"
"      --format FMT      %%w %%f %%e %%Xe %%c %%T %%0 %%n (+ %%W %%F with --pair-moves)\n"
"      --no-newline      no newline after --format\n"
"      --timefmt FMT     strftime(3) format for %%T\n"
"      --exclude RE, --excludei RE, --include RE, --includei RE\n"
"                        filter on \"%%w%%f\" (POSIX extended regex)\n"
"      --fromfile FILE   read FILEs (and @excludes) from FILE, '-': stdin\n"
"  -o, --outfile FILE    append events to FILE\n"
"  -s, --syslog          diagnostics to syslog instead of standard error\n"
"  -P, --no-dereference  do not follow a symbolic link FILE\n"
"  -I, -F, -S            accepted and ignored, as Debian's inotifywait does\n"
"watch-fd only:\n"
"      --pair-moves      one line per rename: SRC EVENTS NAME -> DST NAME\n"
"      --use-rdonly      open FILE O_RDONLY (proves read access) not O_PATH\n"
"  -p, --use-o-path      open FILE with O_PATH (the default)\n"
"  -C, --window MS       at most one line per watch per MS milliseconds\n"
"  -v, --verbose         say which backend (kernel or procfd) is in use\n"
"  -h, --help\n"
"Exit: 0 event seen (with -m: no watch left), 1 error or an event not asked\n"
"for, 2 timeout.\n");
}

enum {
	OPT_FORMAT = 256, OPT_TIMEFMT, OPT_NONL, OPT_FROMFILE, OPT_EXC,
	OPT_EXCI, OPT_INC, OPT_INCI, OPT_PAIR, OPT_RDONLY, OPT_NOOP,
};

/* inotifywait's checks and messages; returns 0 or 1 (exit status). */
int wf_parse(int argc, char **argv, struct cfg *c)
{
	/*
	 * inotifywait's long options in its order (getopt lists the
	 * candidates of an ambiguous abbreviation in this order), then
	 * ours, whose first letters no inotifywait option has.
	 */
	static const struct option lopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "event", required_argument, NULL, 'e' },
		{ "monitor", no_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "timeout", required_argument, NULL, 't' },
		{ "filename", no_argument, NULL, 'f' },
		{ "recursive", no_argument, NULL, 'r' },
		{ "csv", no_argument, NULL, 'c' },
		{ "daemon", no_argument, NULL, 'd' },
		{ "syslog", no_argument, NULL, 's' },
		{ "inotify", no_argument, NULL, 'I' },
		{ "fanotify", no_argument, NULL, 'F' },
		{ "filesystem", no_argument, NULL, 'S' },
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
		/* watch-fd only */
		{ "pair-moves", no_argument, NULL, OPT_PAIR },
		{ "use-rdonly", no_argument, NULL, OPT_RDONLY },
		{ "use-o-path", no_argument, NULL, 'p' },
		{ "window", required_argument, NULL, 'C' },
		{ "verbose", no_argument, NULL, 'v' },
		{ NULL, 0, NULL, 0 },
	};
	const char *exc = NULL, *exci = NULL, *inc = NULL, *inci = NULL;
	const char *format = NULL;
	unsigned int nexc = 0, nexci = 0;
	int opt, i;
	long ev;
	char *end;

	while ((opt = getopt_long(argc, argv, "mrhcdsPqt:fo:e:IFSpC:v", lopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'h': usage(stdout); exit(0);
		case 'm': c->monitor = 1; break;
		case 'q': c->quiet++; break;
		case 'r': c->recursive = 1; break;
		case 'c': c->csv = 1; break;
		case 'P': c->nofollow = 1; break;
		case 'd': c->daemon = c->monitor = c->syslog = 1; break;
		case 's': c->syslog = 1; break;
		/* Debian's inotifywait takes these and watches as without */
		case 'I': case 'F': case 'S': break;
		case 'f':
			fprintf(stderr, "The '--filename' option no longer exists.  "
				"The option it enabled in earlier\nversions of "
				"inotifywait is now turned on by default.\n");
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
			if (!*optarg) {
				/* an unset $TIMEOUT is not "no timeout" */
				fprintf(stderr, "The provided value is not a valid "
					"timeout value.\nPlease specify a long "
					"int value.\n");
				return 1;
			}
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
				fprintf(stderr, "watch-fd: bad --window value '%s'\n",
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
	if (c->daemon && !c->outfile) {
		fprintf(stderr, "-o must be specified with -d.\n");
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
	if (c->format && !wf_format_prints(c)) {
		fprintf(stderr, "Something is wrong with your format string.\n");
		return 1;
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
				if (push_arg(c, ln) < 0)
					return 1;
			}
			free(ln);
			if (f != stdin)
				fclose(f);
		}
	}
	for (i = optind; i < argc; i++)
		if (push_arg(c, argv[i]) < 0)
			return 1;
	if (!c->nfiles) {
		fprintf(stderr, "No files specified to watch!\n");
		return 1;
	}
	return 0;
}
