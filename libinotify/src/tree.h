/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef INOFD_TREE_H
#define INOFD_TREE_H

#include "pair.h"
#include "types.h"

/* What a tree asks of the kernel for each of its directories. */
INOFD__HIDDEN uint32_t inofd__tree_kmask(const struct inofd__reg *r);

/* Queue a walk step; 0 or -ENOMEM. */
INOFD__HIDDEN int inofd__work_push(struct inofd *in,
				   const struct inofd__step *s);
/* List up to budget directory entries (0: all); the rest waits for the
 * next read (directories resume where they stopped). */
INOFD__HIDDEN void inofd__walk_run(struct inofd *in, unsigned int budget);
INOFD__HIDDEN bool inofd__walk_pending(const struct inofd *in);
/* Steps that met a path not updated yet go again, after a read's events. */
INOFD__HIDDEN void inofd__walk_retry(struct inofd *in);
INOFD__HIDDEN void inofd__walk_free(struct inofd *in);
/* Tests: list directories with fn instead of getdents64 (NULL: the real
 * one); fn returns bytes, 0 at the end, or -1 with errno set. */
INOFD__HIDDEN void inofd__walk_hook(struct inofd *in,
				    long (*fn)(int fd, void *buf, size_t len));

/* A directory appeared as name in tree node m. */
INOFD__HIDDEN void inofd__tree_newdir(struct inofd *in, struct inofd__mem *m,
				      const char *name);
/* Would tree r watch a directory (on device dev) as entry name of node m?
 * (exclude patterns, max_depth, INOFD_TREE_XDEV) */
INOFD__HIDDEN bool inofd__tree_wants(const struct inofd__reg *r,
				     const struct inofd__mem *m,
				     const char *name, dev_t dev);
/* After a loss: re-walk every tree, then drop what the walk did not reach. */
INOFD__HIDDEN void inofd__tree_crawl(struct inofd *in);
/* The tree's root moved where the library cannot see: say so, once. */
INOFD__HIDDEN void inofd__tree_lost(struct inofd *in, struct inofd__reg *r);
/* Watch the root's parent to follow the root's renames (best effort). */
INOFD__HIDDEN void inofd__tree_link_parent(struct inofd *in,
					   struct inofd__reg *r, int rootfd);
/* Trees whose chain above the root has holes (chain_short): a root whose
 * path does not lead to it any more is found again by identity. */
INOFD__HIDDEN void inofd__tree_recheck(struct inofd *in);
/* The records read after a loss are all parsed: no tree is unsure. */
INOFD__HIDDEN void inofd__tree_sure(struct inofd *in);
/* Is there a tree whose root has a chain of watches above it? */
INOFD__HIDDEN bool inofd__tree_chains(const struct inofd *in);
/* After a loss: every tree's root is checked, and found again by inode
 * if a rename above it was lost; then the renames above it that v (n
 * records still to be read, in order) holds are undone.  unsure: flag the
 * trees' events until those records are parsed, whatever the check finds. */
INOFD__HIDDEN void inofd__tree_roots_check(struct inofd *in,
					   const struct inofd__mv *v, int n,
					   bool unsure);
/* Ancestor member m holds name (the next component of the root's path):
 * its level in reg->anc, or -1. */
INOFD__HIDDEN int inofd__anc_holds(const struct inofd__mem *m,
				   const char *name);
/* A mount at dir/name, dir (its real path) the chain level a of its tree:
 * is it certainly beside the chain (the chain goes on by the tree's name
 * for the next level, which name is not, or, renamed, by another entry of
 * dir of that level's identity by statx(), not d_ino)? */
INOFD__HIDDEN bool inofd__anc_beside(const struct inofd__mem *a,
				     const char *dir, const char *name);
/* The directory at level lvl + 1 of the root's path is now called name. */
INOFD__HIDDEN void inofd__anc_renamed(struct inofd *in, struct inofd__reg *r,
				      unsigned int lvl, const char *name);
/* An event put node c where it is: a crawl under way counts it reached. */
/* Is entry name of tree node t, now, the directory of watch kw? */
INOFD__HIDDEN bool inofd__tree_entry_is(struct inofd *in,
					struct inofd__mem *t, const char *name,
					const struct inofd__kw *kw);
INOFD__HIDDEN int inofd__tree_reached(struct inofd *in, struct inofd__mem *c);
/* The root (or a directory above it) left its place: if it is there
 * again, or found by inode in its parent, a RESCAN; else it is lost. */
INOFD__HIDDEN void inofd__tree_gone_or_back(struct inofd *in,
					    struct inofd__reg *r);
/* Node c was renamed within its tree (its depth was was): its new name
 * and depth are held to the tree's exclude patterns and max_depth. */
INOFD__HIDDEN void inofd__tree_node_moved(struct inofd *in,
					  struct inofd__mem *c,
					  unsigned int was);
/* The root is now entry name of its parent. */
INOFD__HIDDEN void inofd__root_renamed(struct inofd *in, struct inofd__reg *r,
				       const char *name);
/* Is this open/getdents/close event one our own listing made? */
INOFD__HIDDEN bool inofd__own_noise(struct inofd__kw *kw, uint32_t mask,
				    const char *name);

#endif
