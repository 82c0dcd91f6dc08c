// SPDX-License-Identifier: GPL-2.0
/*
 * fan_mark_end: the end of an inode mark (FAN_IGNORED, patches/7.2/fanotify
 * patch 3) over the whole matrix
 *
 *   group type  x  object  x  end
 *   no fid, FID, DFID_NAME, DFID_NAME|FID
 *               file, dir with FAN_ONDIR, dir without
 *                          delete, umount, lazy umount (last user gone),
 *                          evictable mark evicted (root: ext2 on a loop
 *                          device, drop_caches)
 *
 * Each cell is run in a child of its own (a mount namespace, and a user
 * namespace when not root) and is one of:
 *   delivered  FAN_IGNORED once, the last event, FAN_ONDIR for a
 *              directory, a record naming the object (the handle the
 *              group's fdinfo prints for the mark, which must also be
 *              the one name_to_handle_at() gives, where the kernel has
 *              it), no mark left
 *   refused    fanotify_mark() fails with EINVAL
 *   SILENT     accepted, and no FAN_IGNORED within 3 s: a failure
 *   WRONG      accepted, FAN_IGNORED with a wrong mask or record, twice,
 *              or not last, or a mark left: a failure
 *   -          not run here (a group or an end this user may not have)
 *   not evicted  the evictable mark's inode was still in use after 20
 *              drop_caches: no end came, none was due; inconclusive,
 *              counted apart (the mark is still in fdinfo: told from
 *              SILENT, a mark gone without its event)
 * and the table is printed (the cover letter's table:
 * make guest-test T=fan_mark_end KERNEL=7.2).
 *
 * The lazy umount holds a file of the filesystem open, checks that no
 * FAN_IGNORED comes while it is open, then closes it.
 *
 * Without CONFIG_FHANDLE (the debug guest) name_to_handle_at() is ENOSYS:
 * the records are still compared with the mark's handle in fdinfo, and
 * the one comparison not possible is said before the table.
 *
 * A kernel without FAN_IGNORED refuses it everywhere: a skip (exit 4),
 * or a failure with REQUIRE_FAN_IGNORED=1 (init.sh sets it where the
 * kernel carries the series' selftest).
 *
 * Exit: 0 pass, 1 fail, 4 skip.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "own_ns.h"

#ifndef FAN_IGNORED
#define FAN_IGNORED 0x00400000
#endif
#ifndef AT_HANDLE_FID
#define AT_HANDLE_FID 0x200
#endif

enum { C_DELIVERED, C_REFUSED, C_SILENT, C_WRONG, C_NOTRUN, C_SETUP, C_KEPT };
static const char *const cell_name[] = {
	"delivered", "refused", "SILENT", "WRONG", "-", "SETUP-ERROR",
	"not evicted",
};

static const struct { const char *name; unsigned int flags; } groups[] = {
	{ "no fid", 0 },
	{ "FID", FAN_REPORT_FID },
	{ "DFID_NAME", FAN_REPORT_DFID_NAME },
	{ "DFID_NAME|FID", FAN_REPORT_DFID_NAME | FAN_REPORT_FID },
};
enum { O_FILE, O_DIR_ONDIR, O_DIR, NOBJ };
static const char *const obj_name[] = { "file", "dir+ONDIR", "dir" };
enum { E_DELETE, E_UMOUNT, E_LAZY, E_EVICT, NEND };
static const char *const end_name[] = {
	"delete", "umount", "lazy umount", "evicted",
};

static char base[256];
static char loopdev[64];
static int loopfd = -1;
static int is_root;

struct fh {
	struct file_handle h;
	unsigned char bytes[128];
};

static int same_handle(const struct file_handle *h, const struct fh *want)
{
	return h->handle_type == want->h.handle_type &&
	       h->handle_bytes == want->h.handle_bytes &&
	       !memcmp(h->f_handle, want->h.f_handle, h->handle_bytes);
}

/*
 * The handle of the group's mark on @path, from the group's fdinfo (the
 * mark line carries it, with or without CONFIG_FHANDLE): 0, or -1.
 */
static int mark_fh(int fan, const char *path, struct fh *fh)
{
	char fdinfo[64], line[512], hex[2 * sizeof(fh->bytes) + 2];
	unsigned int bytes, type, i, found = 0;
	unsigned long ino;
	struct stat st;
	const char *p;
	FILE *f;

	snprintf(fdinfo, sizeof(fdinfo), "/proc/self/fdinfo/%d", fan);
	if (stat(path, &st))
		return -1;
	f = fopen(fdinfo, "r");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "fanotify ino:%lx", &ino) != 1 ||
		    ino != st.st_ino)
			continue;
		p = strstr(line, "fhandle-bytes:");
		if (!p || sscanf(p, "fhandle-bytes:%x fhandle-type:%x f_handle:%257s",
				 &bytes, &type, hex) != 3 ||
		    bytes > sizeof(fh->bytes) || strlen(hex) != 2 * bytes)
			break;
		/* f_handle runs on into bytes[] */
		for (i = 0; i < bytes; i++)
			if (sscanf(hex + 2 * i, "%2hhx", &fh->bytes[i]) != 1)
				break;
		found = i == bytes;
		fh->h.handle_bytes = bytes;
		fh->h.handle_type = type;
	}
	fclose(f);
	return found ? 0 : -1;
}

/*
 * 1 if name_to_handle_at() gives @fh for @path, 0 if it gives another,
 * -1 if the kernel has no name_to_handle_at() (ENOSYS: no CONFIG_FHANDLE).
 * Kernels before 6.5 have no AT_HANDLE_FID (EINVAL): the plain handle of
 * the filesystems used here is the same.
 */
static int same_as_name_to_handle(const char *path, const struct fh *fh)
{
	struct fh n = { .h.handle_bytes = sizeof(n.bytes) };
	int mid, r;

	r = name_to_handle_at(AT_FDCWD, path, &n.h, &mid, AT_HANDLE_FID);
	if (r && errno == EINVAL) {
		n.h.handle_bytes = sizeof(n.bytes);
		r = name_to_handle_at(AT_FDCWD, path, &n.h, &mid, 0);
	}
	if (r)
		return errno == ENOSYS ? -1 : 0;
	return same_handle(&n.h, fh);
}

/* 1 if every record of the event is a fid record naming @want */
static int records_name(struct fanotify_event_metadata *m,
			const struct fh *want)
{
	char *p = (char *)m + m->metadata_len, *end = (char *)m + m->event_len;
	int named = 0;

	while (p < end) {
		struct fanotify_event_info_fid *fid = (void *)p;
		struct file_handle *h = (void *)fid->handle;

		switch (fid->hdr.info_type) {
		case FAN_EVENT_INFO_TYPE_DFID_NAME:
			if (strcmp((char *)h->f_handle + h->handle_bytes, "."))
				return 0;
			/* fall through */
		case FAN_EVENT_INFO_TYPE_FID:
		case FAN_EVENT_INFO_TYPE_DFID:
			named |= same_handle(h, want);
			break;
		default:
			return 0;
		}
		if (!fid->hdr.len)
			return 0;
		p += fid->hdr.len;
	}
	return named;
}

/* C_DELIVERED, C_SILENT or C_WRONG from the events of ms milliseconds */
static int read_end(int fan, const struct fh *want, uint64_t mask, int ms)
{
	uint64_t buf[1024];
	struct fanotify_event_metadata *m;
	struct pollfd p = { .fd = fan, .events = POLLIN };
	int ends = 0, after = 0, good = 0;
	ssize_t len;

	while (poll(&p, 1, ms) == 1) {
		len = read(fan, buf, sizeof(buf));
		if (len <= 0)
			break;
		for (m = (void *)buf; FAN_EVENT_OK(m, len);
		     m = FAN_EVENT_NEXT(m, len)) {
			if (m->fd >= 0)
				close(m->fd);
			after += ends > 0;
			if (!(m->mask & FAN_IGNORED))
				continue;
			ends++;
			good = m->mask == mask && records_name(m, want);
		}
		if (ends)
			ms = 100;
	}
	if (!ends)
		return C_SILENT;
	return ends == 1 && !after && good ? C_DELIVERED : C_WRONG;
}

static int count_marks(int fan)
{
	char path[64], line[256];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fan);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += !strncmp(line, "fanotify ino:", 13);
	fclose(f);
	return n;
}

static int mount_fs(const char *mnt, int end)
{
	if (end == E_EVICT)
		return mount(loopdev, mnt, "ext2", 0, NULL);
	return mount("fan_mark_end", mnt, "tmpfs", 0, NULL);
}

/* evict what is unused: the marked inode has no user left */
static void evict(void)
{
	sync();
	write_file("/proc/sys/vm/drop_caches", "3");
}

/* the end itself; for a lazy umount, C_WRONG if the end came too early */
static int do_end(int fan, int end, const char *mnt, const char *path,
		  int obj, const struct fh *fh, uint64_t want)
{
	char keep[320];
	int fd, r;

	switch (end) {
	case E_DELETE:
		return obj == O_FILE ? unlink(path) : rmdir(path);
	case E_UMOUNT:
		return umount(mnt);
	case E_LAZY:
		snprintf(keep, sizeof(keep), "%s/k", mnt);
		fd = open(keep, O_RDONLY);
		if (fd < 0 || umount2(mnt, MNT_DETACH))
			return -1;
		r = read_end(fan, fh, want, 300);
		close(fd);
		return r == C_SILENT ? 0 : -2;
	}
	return 0;
}

/* one cell, in a child: its result as exit status */
static int cell(int g, int obj, int end)
{
	char mnt[300], path[320], keep[320];
	uint64_t mask = FAN_IGNORED | (obj == O_DIR_ONDIR ? FAN_ONDIR : 0);
	uint64_t want = FAN_IGNORED | (obj == O_FILE ? 0 : FAN_ONDIR);
	unsigned int flags = end == E_EVICT ? FAN_MARK_EVICTABLE : 0;
	struct fh fh;
	int fan, fd, r, i;

	fan = fanotify_init(FAN_CLASS_NOTIF | FAN_NONBLOCK | groups[g].flags,
			    O_RDONLY);
	if (fan < 0)
		return errno == EPERM ? C_NOTRUN : C_SETUP;
	snprintf(mnt, sizeof(mnt), "%s/m.%d.%d.%d", base, g, obj, end);
	if (own_namespaces() || mkdir(mnt, 0755) || mount_fs(mnt, end))
		return C_SETUP;
	/* names of the cell's own: ext2 keeps what earlier cells made */
	snprintf(path, sizeof(path), "%s/%s%d", mnt, obj == O_FILE ? "f" : "d",
		 g * NOBJ + obj);
	snprintf(keep, sizeof(keep), "%s/k", mnt);
	fd = obj == O_FILE ? open(path, O_CREAT | O_WRONLY, 0644) : -1;
	if (obj == O_FILE ? fd < 0 : mkdir(path, 0755) != 0)
		return C_SETUP;
	if (fd >= 0)
		close(fd);
	fd = open(keep, O_CREAT | O_WRONLY, 0644);
	if (fd < 0)
		return C_SETUP;
	close(fd);
	if (fanotify_mark(fan, FAN_MARK_ADD | flags, mask, AT_FDCWD, path))
		return errno == EINVAL ? C_REFUSED : C_SETUP;
	if (mark_fh(fan, path, &fh))
		return C_SETUP;
	if (!same_as_name_to_handle(path, &fh))
		return C_WRONG;
	r = do_end(fan, end, mnt, path, obj, &fh, want);
	if (r)
		return r == -2 ? C_WRONG : C_SETUP;
	if (end == E_EVICT) {
		for (i = 0, r = C_SILENT; i < 20 && r == C_SILENT; i++) {
			evict();
			r = read_end(fan, &fh, want, 500);
		}
		/*
		 * Silent with the mark still there: the inode was never
		 * evicted (drop_caches frees only what nothing uses), so
		 * no end came and none was due.  Silent is a mark gone
		 * without its event.
		 */
		if (r == C_SILENT && count_marks(fan) > 0)
			r = C_KEPT;
		umount(mnt);
	} else {
		r = read_end(fan, &fh, want, 3000);
	}
	if (r == C_DELIVERED && count_marks(fan) != 0)
		r = C_WRONG;
	return r;
}

static int run_cell(int g, int obj, int end)
{
	int status;
	pid_t pid;

	if (end == E_EVICT && (!is_root || !loopdev[0]))
		return C_NOTRUN;
	pid = fork();
	if (pid < 0)
		return C_SETUP;
	if (pid == 0)
		_exit(cell(g, obj, end));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return C_SETUP;
	return WEXITSTATUS(status);
}

/* an ext2 image on a loop device for the eviction column (root only) */
static void loop_prepare(void)
{
	char img[300], cmd[700];
	int ctl, nr, fd, lfd;

	snprintf(img, sizeof(img), "%s/ext2.img", base);
	fd = open(img, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, 4 << 20))
		return;
	close(fd);
	snprintf(cmd, sizeof(cmd), "mke2fs -q -F %s 4096 >/dev/null 2>&1", img);
	if (system(cmd))
		return;
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	nr = ctl < 0 ? -1 : ioctl(ctl, LOOP_CTL_GET_FREE);
	if (ctl >= 0)
		close(ctl);
	if (nr < 0)
		return;
	snprintf(loopdev, sizeof(loopdev), "/dev/loop%d", nr);
	lfd = open(loopdev, O_RDWR | O_CLOEXEC);
	fd = open(img, O_RDWR | O_CLOEXEC);
	if (lfd < 0 || fd < 0 || ioctl(lfd, LOOP_SET_FD, fd))
		loopdev[0] = 0;
	if (fd >= 0)
		close(fd);
	/* lfd stays open: the device stays bound until main() clears it */
	loopfd = lfd;
}

int main(void)
{
	int g, o, e, r, bad = 0, delivered = 0, refused = 0, notrun = 0, kept = 0;
	const char *req = getenv("REQUIRE_FAN_IGNORED");

	setvbuf(stdout, NULL, _IOLBF, 0);
	is_root = geteuid() == 0;
	snprintf(base, sizeof(base), "%s/fan_mark_end.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(base)) {
		perror("mkdtemp");
		return 1;
	}
	if (is_root)
		loop_prepare();
	if (is_root && !loopdev[0])
		printf("fan_mark_end: no ext2 on a loop device: eviction not run\n");
	if (same_as_name_to_handle(base, &(struct fh){ 0 }) < 0)
		printf("fan_mark_end: no name_to_handle_at() (ENOSYS): records compared with the mark's handle in fdinfo, not with name_to_handle_at()\n");
	printf("%-14s %-10s", "group", "object");
	for (e = 0; e < NEND; e++)
		printf(" %-12s", end_name[e]);
	printf("\n");
	for (g = 0; g < 4; g++) {
		for (o = 0; o < NOBJ; o++) {
			printf("%-14s %-10s", groups[g].name, obj_name[o]);
			for (e = 0; e < NEND; e++) {
				r = run_cell(g, o, e);
				printf(" %-12s", cell_name[r]);
				delivered += r == C_DELIVERED;
				refused += r == C_REFUSED;
				notrun += r == C_NOTRUN;
				kept += r == C_KEPT;
				bad += r == C_SILENT || r == C_WRONG ||
				       r == C_SETUP;
			}
			printf("\n");
		}
	}
	printf("fan_mark_end: %d delivered, %d refused, %d not run, %d not evicted (inconclusive), %d bad\n",
	       delivered, refused, notrun, kept, bad);
	if (!delivered && !bad) {
		printf("fan_mark_end: no FAN_IGNORED in this kernel\n");
		if (loopfd >= 0 && loopdev[0])
			ioctl(loopfd, LOOP_CLR_FD, 0);
		return req && !strcmp(req, "1") ? 1 : 4;
	}
	if (loopfd >= 0 && loopdev[0])
		ioctl(loopfd, LOOP_CLR_FD, 0);
	if (is_root && !loopdev[0])
		bad++;
	return bad ? 1 : 0;
}
