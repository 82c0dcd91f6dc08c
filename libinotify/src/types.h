/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libinofd internals: the data types every module shares, and nothing else.
 *
 * Modules, from the bottom up (a module includes only the headers of the
 * modules below it):
 *   arena.c     per-read string arena
 *   pool.c      fixed-size objects in slabs (kernel watches, members)
 *   kernel.c    INOTIFY_IOC_WATCH / INOTIFY_IOC_IGNORE ioctls
 *   fanotify.c  the fanotify backend: marks, handles, records
 *   backend.c   the three backends (kernel, procfd, fanotify) behind one
 *               add/rm/read
 *   table.c     kernel watches by wd, registrations by id, members, paths
 *   queue.c     the bounded queue of ready events
 *   pair.c      emit, coalescing windows, the end of registrations
 *   tree.c      recursive watches: iterative walks, crawl generations
 *   mounts.c    the mount table: mounts and umounts inside trees
 *   rename.c    the rename engine: halves by cookie, pairing, following
 *   dispatch.c  raw event bytes -> table updates and events; inofd__feed()
 *   api.c       the public inofd_* functions
 * Every internal name starts with inofd__ and is hidden: libinofd.a and the
 * shared object export only the inofd_* API (checked by make check).
 */
#ifndef INOFD_TYPES_H
#define INOFD_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "inofd.h"

#define INOFD__HIDDEN	__attribute__((visibility("hidden")))

#define INOFD__PAIR_MS		10	/* default wait for IN_MOVED_TO */
/*
 * One batch is one buffer of records, whose events stay valid until the
 * next read.  A stream step makes 128 events (about 20 KiB with their
 * paths, inside a 32 KiB L1d) just before they are taken (docs/library.md,
 * "From the kernel to the caller"); 64 KiB is the raw loop's read size, and a 32 KiB
 * batch, which fits a 256 KiB L2 whole, cost 2% more by instruction count
 * at depth 8 (bench 1d).
 */
#ifndef INOFD__READ_BUF		/* -D for stress builds (docs/library.md) */
#define INOFD__READ_BUF		(64 * 1024)
#endif
#ifndef INOFD__READ_MIN
#define INOFD__READ_MIN		(16 * 1024)	/* a read() gets at least this */
#endif
#define INOFD__READ_ROUNDS	64	/* read() calls per inofd_read() */
#ifndef INOFD__STREAM_RECS	/* -D for stress builds (docs/library.md) */
#define INOFD__STREAM_RECS	128	/* records parsed per stream step */
#endif
#define INOFD__BACKLOG_MAX	(8u << 20)	/* read after an overflow, at most */
#ifndef INOFD__WALK_BUDGET	/* -D for stress builds (docs/library.md) */
#define INOFD__WALK_BUDGET	1024	/* directory entries listed per inofd_read() */
#endif
#define INOFD__PEND_MAX		4096	/* pending IN_MOVED_FROM halves */
#define INOFD__PLACED_MAX	65536	/* placements judged (table.c) */
#define INOFD__COOKIE_BUCKETS	256
#define INOFD__QBLOCK		256	/* events per queue block */
#define INOFD__NAME_INLINE	32	/* a member's name kept in it (with
					 * its NUL): 192 bytes in all */

/* What a recursive watch needs from the kernel, whatever the caller asked. */
#define INOFD__TREE_BITS	(IN_CREATE | IN_MOVED_FROM | IN_MOVED_TO | \
				 IN_MOVE_SELF | IN_DELETE_SELF)
/* What a root's parent and its ancestors are watched for (to follow the
 * renames of the root and of every directory above it; IN_MOVE_SELF: the
 * identity of what a rename in the chain moved, see rename.c). */
#define INOFD__PARENT_BITS	(IN_MOVED_FROM | IN_MOVED_TO | IN_MOVE_SELF | \
				 IN_ONLYDIR)
/*
 * A private record (never reported, never from the kernel): the fanotify
 * backend puts it on the moved object's wd right after the two halves of
 * a rename it made from FAN_RENAME (whose child FID says what moved), as
 * inotify's IN_MOVE_SELF follows them; fanotify may merge its own
 * FAN_MOVE_SELF into an earlier event.  rename.c tells renames apart by
 * it (exchanges).
 */
#define INOFD__MOVED_ID		0x00100000u
/*
 * A private record of the fanotify backend: where a plain watch's path
 * was taken (cookie: the registration's id).  inotify places that by
 * FIONREAD (inofd__stream_now()); fanotify's FIONREAD counts its own
 * events, not the records made of them, so the backend puts this record
 * where the group's queue ended when the watch call began.
 */
#define INOFD__SEEN		0x00200000u
/*
 * A bit of the fanotify backend's on an IN_DELETE_SELF it put later than
 * the event it came merged into (fanotify.c, later_end()): records queued
 * after the object went may have renamed its directories before this one
 * is read, so its trees do not know where it was (the report has no
 * path, never a path it never had).  Alone (no other bit), after the loss
 * a rename back may hide (fanotify.c, convert()): the renamed directory's
 * place is not known until the crawl finds it (oracle seed 91077 -W -N -C).
 */
#define INOFD__LATE		0x00400000u
/* Reported whatever the registration's mask says. */
#define INOFD__ALWAYS_BITS	(IN_UNMOUNT | IN_Q_OVERFLOW | IN_IGNORED)

/* What an O_PATH fd was opened by (inofd_watch_at()), for fanotify. */
struct inofd__fan_at {
	int			dirfd;
	const char		*path;
	bool			nofollow;
};

/* One event as the kernel reports it, less its wd. */
struct inofd__raw {
	uint32_t		mask;
	uint32_t		cookie;
	const char		*name;
};

/* inofd__emit() flag: name does not live in the read buffer, copy it */
#define INOFD__COPY_NAME	0x80000000u

/* A rename record seen ahead (inofd__tree_roots_check()). */
struct inofd__mv {
	int			wd;
	uint32_t		mask, cookie;
	const char		*name;
};

/* A walk step to queue (inofd__work_push()). */
struct inofd__step {
	int			kind;		/* INOFD__W_* */
	const struct inofd__reg	*reg;
	int			wd;
	const char		*name;		/* W_NEWDIR: the entry */
	bool			synth;		/* report entries as IN_CREATE */
	unsigned int		crawl;		/* !0: part of that crawl */
	int			job;		/* initial walk id, or 0 */
	int			root_wd;	/* new subtree's wd, or -1 */
};

/* A bump allocator: strings of the events of one read. */
struct inofd__chunk {
	struct inofd__chunk	*next;
	size_t			cap;
	char			data[];
};

struct inofd__arena {
	struct inofd__chunk	*head;	/* chunk in use; full ones follow */
	struct inofd__chunk	*spare;	/* emptied chunks, reused */
	char			*cur, *end;	/* free part of head */
};

/* Objects of one size (pool.c). */
struct inofd__pool {
	size_t			size;	/* of an object, a multiple of 16 */
	size_t			slab;	/* size of the newest slab */
	size_t			live;	/* objects handed out */
	void			*slabs;	/* newest first, linked */
	void			*free;	/* objects put back, linked */
	char			*cur, *end;	/* unused part of the newest */
};

/* A mount of the table (mounts.c): its id and mount point. */
struct inofd__mnt {
	int			id;
	size_t			off;		/* path in the names buffer */
	size_t			src;		/* "major:minor", then root */
};

/* A mount point inside a tree, held by its parent node (mounts.c): where
 * the mount is when it goes, whatever renames happened since. */
struct inofd__mrec {
	int			mnt;		/* mount id */
	int			reg;		/* the tree */
	int			wd;		/* its parent node's kernel watch */
	char			*name;		/* its name there */
	dev_t			dev;		/* the mount's root, as seen */
	ino_t			ino;
};

/* One kernel watch (one wd).  Several members may share it. */
struct inofd__kw {
	int			wd;
	dev_t			dev;
	ino_t			ino;
	uint32_t		kmask;	/* event bits asked of the kernel */
	struct inofd__mem	*mems;
	unsigned int		nuser;	/* members that are not internal */
	/* events our own listing makes: on this directory, and on its
	 * parent's watch under its name (see inofd__own_noise) */
	unsigned int		self_open, self_access, self_close;
	unsigned int		par_open, par_access, par_close;
	struct inofd__kw	*hnext;
};

enum inofd__mem_kind {
	INOFD__MEM_PLAIN,	/* a plain registration's only member */
	INOFD__MEM_NODE,	/* a directory of a tree */
	INOFD__MEM_PARENT,	/* internal: a tree root's parent directory,
				 * or one of its ancestors (reg->anc) */
};

/* A registration's presence on one kernel watch. */
struct inofd__mem {
	struct inofd__kw	*kw;
	struct inofd__reg	*reg;
	struct inofd__mem	*kwnext;	/* on kw->mems */
	int			kind;
	/* tree nodes */
	struct inofd__mem	*parent, *child, *prev, *next;
	char			*name;		/* entry in parent; NULL: root */
	unsigned int		depth;
	unsigned int		gen;		/* crawl generation reached */
	bool			paired;		/* moved_to(): source taken */
	bool			moving;		/* its IN_MOVED_FROM waits for a
						 * pair: no path until then */
	/* a rename landed on its name (docs/library.md,
	 * "The rename engine"): */
	bool			xpart;		/* exchanged: the next
						 * IN_MOVED_FROM of its name is
						 * its own */
	bool			shadow;		/* replaced, or unknown: never
						 * found by name */
	unsigned int		mgen;		/* reg->mgen while reg->mstale:
						 * a mount changed on it or
						 * below, not acted on yet
						 * (inofd__mounts_peek()) */
	/* cached full path (NULL path: pc_null); an entry's path is the
	 * first pclen bytes of pc, a '/', and the name at pcjoin; pccap
	 * is pclen + 1 rounded up to 16 or more (the fast path copies
	 * 16-byte blocks) */
	char			*pc;
	size_t			pclen, pcjoin, pccap;
	unsigned int		pcepoch;	/* 0: never built */
	bool			pc_null;
	/* coalescing window */
	bool			win_open;
	uint32_t		win_mask;
	uint64_t		win_deadline;
	struct inofd__mem	*win_prev, *win_next;
	char			nbuf[INOFD__NAME_INLINE];	/* name, if
								 * it fits */
};

enum inofd__reg_kind { INOFD__REG_PLAIN, INOFD__REG_TREE };

/* What the caller added: one watch descriptor of the API. */
struct inofd__reg {
	int			id;
	int			kind;
	uint32_t		mask;		/* event bits the caller wants */
	bool			oneshot;
	bool			fired;		/* oneshot: it reported once */
	bool			stale;		/* plain: moved since added */
	bool			file;		/* plain: not a directory (a name
						 * of it can go while it lives) */
	bool			lnk;		/* plain: a symlink itself */
	bool			lost;		/* tree: location unknown; plain:
						 * its end came late in a tree,
						 * no path (inofd__late()) */
	bool			moving;		/* tree: root rename pending */
	bool			unsure;		/* tree: a rename above the root
						 * was lost; events read since
						 * the loss are flagged */
	bool			chain_short;	/* tree: the watches above the
						 * root could not all be made:
						 * every event is flagged */
	bool			mstale;		/* tree: the mount table changed
						 * in it (nodes of mgen, names
						 * of mmark) or above it (its
						 * root), not acted on yet:
						 * those events are flagged */
	unsigned int		mgen;		/* tree: mstale's generation */
	struct inofd__mmark {			/* tree, while mstale: entry
						 * name of dir (a node or not
						 * yet) and below, flagged */
		const struct inofd__mem	*dir;
		char			*name;
	}			*mmark;
	unsigned int		nmmark;
	void			*data;
	char			*path;		/* plain/tree root; may be NULL */
	struct inofd__mem	*root;		/* plain member or tree root */
	struct inofd__mem	*plink;		/* tree: root's parent, or NULL */
	char			*rootname;	/* tree: root's name in parent */
	/* tree: the parent's ancestors, "/" first: anc[i] is the directory
	 * named by the first i components of the root's path, and holds
	 * component i; NULL where its watch went */
	struct inofd__mem	**anc;
	unsigned int		nanc;
	/* the identity of each level 0..nanc of that chain (nanc: the
	 * parent), watched or not: a level whose watch could not be made
	 * is checked by it (chain_short) */
	struct inofd__dirid {
		dev_t		dev;
		ino_t		ino;
	}			*anc_id;
	/* tree options */
	char			**exclude;
	unsigned int		tflags;
	unsigned int		max_depth;
	dev_t			dev;
	unsigned int		gen;		/* crawl generation */
	unsigned int		crawl_left;	/* LIST items of this crawl */
	/* what the caller must still be told (queue.c): the registration
	 * is kept, with no member, until it is (inofd__q_owed()) */
	bool			owe_lost;	/* its INOFD_EVF_LOST error */
	bool			owe_end;	/* ended: its IN_IGNORED */
	unsigned int		owe_flags;	/* that IN_IGNORED's flags */
	/* the offset in the kernel's event stream from which records are
	 * this registration's: those queued before it was made are not
	 * reported to it (dispatch.c, inofd__stream_now()) */
	uint64_t		born;
	/* a plain watch's: the offset at which its path was taken (its own
	 * path is newer than what a tree knew before it); UINT64_MAX until
	 * the fanotify backend's INOFD__SEEN record is parsed */
	uint64_t		seen;
	struct inofd__reg	*hnext;
};

/* A pending IN_MOVED_FROM, indexed by cookie, timed out in order. */
struct inofd__pend {
	uint32_t		cookie;
	int			wd;
	uint32_t		mask;
	uint64_t		deadline;
	uint64_t		pos;		/* its record's stream offset */
	struct inofd__pend	*hnext;		/* cookie bucket */
	struct inofd__pend	*tprev, *tnext;	/* by deadline */
	char			name[256];
	/* the source's path for each member, taken at IN_MOVED_FROM time:
	 * a later rename must not change where the object was */
	unsigned int		nsrc;
	struct {
		int		reg;
		size_t		off;		/* in paths; -1: unknown */
		bool		unsure;		/* taken from an unsure tree */
		int		node;		/* wd of the tree node the record
						 * named, then; -1: none */
	}			src[8];
	/* wd of the directory that moves (a tree node, a root or one of
	 * its watched ancestors), -1: none or not watched; its
	 * IN_MOVE_SELF with no IN_MOVED_TO before it says the partner
	 * will not come (fsnotify_move() queues FROM, TO, MOVE_SELF) */
	int			self;
	bool			by_id;		/* its partner is a TO of
						 * another cookie that put
						 * self where it names
						 * (dispatch.c) */
	char			*paths;
	size_t			pcap, plen;
};

enum inofd__work_kind {
	INOFD__W_LIST,		/* list member (reg, wd), watch subdirectories */
	INOFD__W_NEWDIR,	/* watch entry name of member (reg, wd), then list */
};

/* One step of a walk.  Members are found again by (reg, wd) when it runs. */
struct inofd__work {
	struct inofd__work	*next;
	int			kind;
	int			reg;
	int			wd;
	bool			synth;		/* report entries as IN_CREATE */
	unsigned int		crawl;		/* !0: part of crawl generation */
	int			job;		/* initial walk id, or 0 */
	int			root_wd;	/* wd of the new subtree, or -1 */
	int			tries;
	/* W_LIST resumed where a bounded read stopped (tree.c) */
	off_t			pos;		/* getdents64 d_off; 0: start */
	int64_t			mtime_ns;	/* the directory's then; -1: unsure */
	unsigned int		restarts;	/* listings begun again */
	char			name[];
};

struct inofd {
	int			ifd;
	int			backend;
	struct inofd__fan	*fan;		/* fanotify.c: the backend's
						 * objects, or NULL */
	unsigned int		flags;
	unsigned int		pair_ms;
	unsigned int		coalesce_ms;

	/* table.c */
	struct inofd__pool	kwpool, mempool;
	struct inofd__kw	**kwtab;
	unsigned int		kwsize, nkw;
	struct inofd__kw	*kwhot;		/* the last one found */
	struct inofd__reg	**regtab;
	unsigned int		regsize, nreg;
	int			next_id;
	unsigned int		nuser;		/* inofd_watch_count() */
	unsigned int		epoch;		/* bumped when a path changes */

	/* queue.c: ready events in blocks, handed out in order.  qw..qwend
	 * is the free part of the tail's block; qr..qrend the events ready
	 * in the head's block as the last look found them, qrbase where that
	 * look started, at index qbase (the head is qbase + qr - qrbase).
	 * NULL cursors: look again. */
	struct inofd_event	**qblk;
	size_t			nqblk;
	size_t			qbase, qtail, qmax;
	struct inofd_event	*qw, *qwend, *qr, *qrend, *qrbase;
	uint64_t		qseq;		/* seq of the event at index 0,
						 * less 1 */
	bool			qpast;		/* the next push is an end the
						 * bound must not drop */
	unsigned int		nowed;		/* registrations owing an end */
	bool			rescan_due;	/* something was lost */
	struct inofd__arena	arena;

	/* rename.c (and the windows: pair.c) */
	struct inofd__pend	*cookies[INOFD__COOKIE_BUCKETS];
	struct inofd__pend	*pfirst, *plast;	/* by deadline */
	struct inofd__pend	*pfree;
	unsigned int		npend;
	unsigned int		npend_dir;	/* of them, halves of directories */
	struct inofd__mem	*wfirst, *wlast;	/* open windows */

	/* tree.c */
	struct inofd__work	*whead, *wtail;		/* walk steps */
	struct inofd__work	*dhead, *dtail;		/* deferred steps */
	char			*dents;		/* one listing buffer per level */
	unsigned int		dents_levels;	/* levels dents has room for */
	long			(*getdents)(int fd, void *buf, size_t len);
	/* table.c: a watched directory's path as the tree has it now, or
	 * NULL (for the fanotify backend, below the table in the layers) */
	const char		*(*wd_dir_path)(struct inofd *in, int wd);
	unsigned int		walk_left;	/* entries left this run */
	bool			walk_bounded;
	bool			walk_fd_short;	/* EMFILE met: no descending */
	bool			chain_short;	/* some tree's chain has holes */
	int			walk_job;		/* current initial walk */
	int			walk_err;		/* its fatal error */
	bool			crawl_due;

	/* rename.c */
	/*
	 * A rename above a tree's root (or of the root) that names the
	 * directory of the chain, with that directory's MOVE_SELF not in
	 * hand yet: did it move it, or the other half of an exchange?  Told
	 * by the next records, within the pairing timeout.
	 */
	struct inofd__xwait {
		int		reg;		/* the tree's id; 0: none */
		int		lvl;		/* the chain's level; -1: root */
		int		dir_wd;		/* the directory's watch */
		int		from_wd;	/* its parent's */
		char		*to;		/* its new name, if it moved */
		uint64_t	deadline;
	}			xw;

	/* dispatch.c */
	char			*buf;
	size_t			bufsz;
	bool			more;		/* the last read stopped early */
	const char		*rest, *rest_end;	/* records after the one
							 * process() has */
	char			*buf2;		/* read after an overflow, or
						 * after a held record */
	bool			backlog_due;
	const char		*rec;		/* the record process() has */
	bool			nohold;		/* no record is held: fed
						 * bytes, or stream_finish() */
	int			id_moved;	/* wd of the directory that a
						 * pair by identity moves (-1:
						 * none; rename.c) */
	bool			held;		/* the parse stopped at scur: a
						 * record waits for a half's
						 * partner (dispatch.c) */
	uint64_t		walk_blocked;	/* since when walks wait for
						 * halves and held records (0:
						 * they do not; dispatch.c) */
	bool			walk_starved;	/* waited too long: halves are
						 * decided with what is in hand
						 * (rename.c) */
	/* the stream: records read, not parsed yet; scur's stream offset */
	const char		*scur, *send;
	uint64_t		spos;
	bool			sact;		/* a batch is streaming */
	int			serr;		/* its error, for inofd_read() */
	bool			unsure;		/* some reg is unsure */
	/* the stream offset a walk placed a watched directory at: trees
	 * unsure until the records before it are parsed (table.c) */
	uint64_t		sure_pos;
	bool			unsure_moved;	/* a rename applied meanwhile */
	/*
	 * Directories a walk put where they are now while the kernel held
	 * records not read yet (table.c, inofd__placed_add()): if one of
	 * those records renames such a directory, or out of or into its
	 * name, the records before it are from before the walk's present,
	 * and its tree is unsure until they are parsed.  Kept until the
	 * records up to their at are looked at (inofd__placed_scan()).
	 */
	struct inofd__placed {
		int		reg;	/* the tree */
		int		wd;	/* the directory's kernel watch */
		int		pwd;	/* its parent's, where it was put */
		uint64_t	at;	/* the stream's end after the step;
					 * UINT64_MAX: the step runs */
	}			*placed;
	unsigned int		nplaced, placed_cap;
	unsigned int		placed_open;	/* the running step's */
	bool			placed_over;	/* too many: the step's tree is
						 * unsure (placed_tree) */
	int			placed_tree;
	uint64_t		placed_max;	/* the latest at, 0: none */
	uint64_t		placed_scan;	/* the stream looked at to
						 * here */
	/* the kernel's event stream: bytes read (or fed) so far; the
	 * offset of the record being applied, while at_rec (else "now");
	 * the latest registration's born */
	uint64_t		kpos, cur_pos, born_max;
	bool			at_rec;

	/* mounts.c */
	int			epfd;		/* inofd_fd(): ifd and mwake */
	int			mwake;		/* mountinfo in epfd, or -1 */
	int			mfd;		/* mountinfo polled and read
						 * here only, or -1 */
	int			merr;		/* mounts not seen: why, or 0 */
	bool			ifd_out;	/* ifd could not be put back in
						 * epfd: inofd__mounts_back() */
	bool			mtrees;		/* a tree was made: look */
	bool			mknown;		/* mtab: the table last read */
	bool			mretry;		/* a mount the tree could not
						 * place: read the table again */
	unsigned int		mtries;		/* retries since a change */
	bool			mchanged;	/* the table changed: seen (and
						 * consumed) by a peek, not yet
						 * acted on */
	ino_t			mns;		/* the mount namespace's inode */
	struct inofd__mnt	*mtab;		/* by id */
	size_t			nmtab;
	char			*mnames;	/* mtab's paths */
	struct inofd__mrec	*mrec;		/* mount points inside trees */
	size_t			nmrec, mreccap;
};

#endif
