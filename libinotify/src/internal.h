/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_INTERNAL_H
#define INOFD_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "inofd.h"

/* Default wait for the IN_MOVED_TO half of a rename. */
#define INOFD_PAIR_TIMEOUT_MS	10

/* What a recursive watch needs from the kernel, whatever the caller asked. */
#define TREE_BITS	(IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO)

/* Events that are reported whatever the watch mask says. */
#define ALWAYS_BITS	(IN_UNMOUNT | IN_Q_OVERFLOW | IN_IGNORED)

/*
 * What INOTIFY_WATCH accepts in a mask (its INOTIFY_WATCH_BITS): events and
 * the flags that describe a watch.  IN_ISDIR, IN_UNMOUNT, IN_Q_OVERFLOW and
 * IN_IGNORED only appear in events; both backends refuse them alike.
 */
#define KNOWN_BITS	(IN_ALL_EVENTS | IN_ONLYDIR | IN_DONT_FOLLOW | \
			 IN_EXCL_UNLINK | IN_MASK_CREATE | IN_MASK_ADD | \
			 IN_ONESHOT)

struct tree;

struct watch {
	int		wd;
	uint32_t	user_mask;	/* what the caller asked for */
	void		*data;
	/* tree member: entry name in parent; otherwise the path or NULL */
	char		*name;
	struct watch	*parent;	/* tree parent, NULL for a root */
	struct watch	*child;		/* first child */
	struct watch	*prev, *next;	/* siblings */
	struct tree	*tree;		/* NULL for a plain watch */
	unsigned int	gen;		/* walk generation, stops loops */
	bool		removing;	/* rm sent, waiting for IN_IGNORED */
	struct qent	*changed;	/* coalescing: open INOFD_EV_CHANGED */
	/*
	 * Events our own directory listing causes (open, getdents, close):
	 * on this directory's watch (self_*) and on its parent's watch with
	 * this name (par_*).  They are dropped, not reported.
	 */
	unsigned int	self_open, self_access, self_close;
	unsigned int	par_open, par_access, par_close;
	struct watch	*hnext;		/* hash chain */
};

struct tree {
	uint32_t	user_mask;
	void		*data;
	int		members;	/* freed when it drops to 0 */
};

enum qstate {
	Q_READY,	/* can be handed out */
	Q_FROM,		/* IN_MOVED_FROM waiting for its IN_MOVED_TO */
	Q_CHANGED,	/* coalescing window still open */
};

struct qent {
	struct inofd_event ev;
	struct qent	*next;
	enum qstate	state;
	bool		deliver;	/* false: internal, dropped on the way out */
	uint64_t	deadline;	/* ns, CLOCK_MONOTONIC, for !Q_READY */
	/* strings owned by this entry */
	char		*s_name, *s_path, *s_from_name, *s_from_path;
};

struct inofd {
	int		ifd;
	int		backend;
	unsigned int	flags;
	unsigned int	pair_ms;
	unsigned int	coalesce_ms;
	unsigned int	gen;

	struct watch	**htab;
	unsigned int	hsize;		/* power of two */
	int		nwatches;

	struct qent	*qhead, *qtail;	/* queued, in order */
	struct qent	*done;		/* handed out, freed by next read */

	char		*buf;		/* read buffer */
	size_t		bufsz;
};

/* inofd.c */
struct watch *watch_lookup(const struct inofd *in, int wd);
struct watch *watch_new(struct inofd *in, int wd);
void watch_free(struct inofd *in, struct watch *w);
int backend_add(struct inofd *in, int fd, uint32_t mask);
int backend_rm(struct inofd *in, int wd);
int check_fd(int fd);
char *watch_path(const struct watch *w);
char *join_path(const char *dir, const char *name);
void tree_link(struct watch *parent, struct watch *w);
void tree_unlink(struct watch *w);
void remove_subtree(struct inofd *in, struct watch *w);
void forget_watch(struct inofd *in, struct watch *w);
void orphan_children(struct watch *w);
uint64_t now_ns(void);

/* event.c */
struct qent *q_push(struct inofd *in, int type, struct watch *w, uint32_t mask,
		    uint32_t cookie, const char *name, unsigned int flags);
void q_free(struct qent *q);
void q_truncate(struct inofd *in, struct qent *mark);
void report_error(struct inofd *in, struct watch *w, const char *name, int err);
void emit_synthetic(struct inofd *in, struct watch *w, uint32_t mask,
		    const char *name);

/* tree.c */
int tree_add_dir(struct inofd *in, struct tree *t, struct watch *parent,
		 const char *name, int pathfd, bool synth, unsigned int gen,
		 struct watch **out);
void tree_event(struct inofd *in, struct watch *w, uint32_t mask,
		const char *name);
void tree_moved(struct inofd *in, int from_wd, const char *from_name,
		struct watch *to, const char *to_name);
void tree_moved_out(struct inofd *in, int from_wd, const char *from_name);
void tree_rescan(struct inofd *in);
struct watch *find_child(struct watch *w, const char *name);
bool own_noise(struct watch *w, uint32_t mask, bool parent);

#endif
