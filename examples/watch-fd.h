/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * watch-fd: what its three parts share.
 *   watch-fd-opts.c  the command line: inotifywait's options and messages
 *   watch-fd-out.c   the output: default, --csv, --format, syslog
 *   watch-fd.c       the watches and the event loop (every libinofd call)
 */
#ifndef WATCH_FD_H
#define WATCH_FD_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define EXIT_TIMEOUT	2

/* Everything the options set. */
struct cfg {
	int monitor, quiet, recursive, csv, no_newline, verbose;
	int pair, rdonly, nofollow, daemon, syslog;
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

/* What one output line is about. */
struct line {
	const char *w, *f;		/* %w, %f (NULL: empty) */
	uint32_t mask;
	uint32_t cookie;		/* %c */
	const char *fw, *ff;		/* --pair-moves: the source */
};

/* watch-fd-opts.c: 0, or the exit status (1) after saying why */
/*
 * Event names, one table for both directions: the output's in
 * inotify-tools' event_to_str() order (out set), then the names -e also
 * accepts (out clear).  -e matches a name case-insensitively.
 */
struct wf_name {
	const char *name;
	uint32_t mask;
	int out;
};
extern const struct wf_name wf_names[];
extern const size_t wf_nnames;

int wf_parse(int argc, char **argv, struct cfg *c);

/* watch-fd-out.c */
void wf_emit(const struct cfg *c, const struct line *l);
int wf_format_prints(const struct cfg *c);
void wf_syslog_open(void);
void wf_diag(const struct cfg *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* WATCH_FD_H */
