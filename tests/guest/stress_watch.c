// SPDX-License-Identifier: GPL-2.0
/*
 * stress_watch: threads racing INOTIFY_IOC_WATCH, INOTIFY_IOC_IGNORE, close,
 * rename, unlink, rmdir and umount for STRESS_SECONDS (default 8), on a
 * tmpfs and a loop-mounted ext2 the test mounts itself, alternately.
 *
 * Pass = no crash, every return code of the inotify calls in its expected
 * set, and (checked by the harness) a clean kernel log.  Root only: it
 * mounts.  Exit 0 pass, 1 fail, 4 skip (not root).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/loop.h>
#define _LINUX_FCNTL_H
#include <linux/inotify.h>

#define NINST	4		/* inotify instances */
#define NSLOT	16		/* shared fds that a thread closes and reopens */
#define NNAME	8		/* names per directory */

static const char *mnt = "mnt";
static atomic_int stop;
static atomic_int failures;
static atomic_long n_watch_ok, n_watch_err, n_ign_ok, n_ign_err, n_events,
	n_mounts, n_reads;

/* instances: the fd and a generation bumped whenever it is replaced */
static atomic_int inst_fd[NINST];
static atomic_uint inst_gen[NINST];
/* shared fds: close races with INOTIFY_IOC_WATCH */
static atomic_int slot_fd[NSLOT];
static atomic_int max_wd = 1;
static char loopdev[64];
static int have_ext2;

struct rnd { uint64_t s; };

static uint32_t rnd(struct rnd *r)
{
	r->s ^= r->s << 13;
	r->s ^= r->s >> 7;
	r->s ^= r->s << 17;
	return (uint32_t)r->s;
}

static void fail(const char *fmt, int a, int b)
{
	char m[256];

	snprintf(m, sizeof(m), fmt, a, b);
	fprintf(stderr, "stress_watch: FAIL: %s\n", m);
	atomic_fetch_add(&failures, 1);
}

static int new_instance(struct rnd *r)
{
	if (rnd(r) & 1)
		return open("/dev/inotify", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	return syscall(SYS_inotify_init1, IN_NONBLOCK | IN_CLOEXEC);
}

/*
 * A random path: the mount point itself (only when self is set), or files
 * and dirs below it at two levels.  The churner never gets the mount point:
 * while the mounter has it unmounted it is an empty directory, and an
 * rmdir() there would take it away for good (mount then fails, ENOENT).
 */
static void rpath_at(struct rnd *r, char *p, size_t n, int self)
{
	switch (rnd(r) % 4 + !self) {
	case 0:
		snprintf(p, n, "%s", mnt);
		break;
	case 1:
		snprintf(p, n, "%s/%c%u", mnt, "fd"[rnd(r) & 1], rnd(r) % NNAME);
		break;
	default:
		snprintf(p, n, "%s/d%u/%c%u", mnt, rnd(r) % NNAME,
			 "fd"[rnd(r) & 1], rnd(r) % NNAME);
		break;
	}
}

/* what the watchers use: the mount point too */
static void rpath(struct rnd *r, char *p, size_t n)
{
	rpath_at(r, p, n, 1);
}

/* what the churner changes: only below the mount point */
static void rpath_below(struct rnd *r, char *p, size_t n)
{
	rpath_at(r, p, n, 0);
}

static uint32_t rmask(struct rnd *r)
{
	static const uint32_t extra[] = {
		0, 0, 0, IN_ONLYDIR, IN_MASK_ADD, IN_MASK_CREATE, IN_ONESHOT,
		IN_EXCL_UNLINK, IN_UNMOUNT,
	};
	uint32_t m = (rnd(r) & IN_ALL_EVENTS) | IN_CREATE;

	return m | extra[rnd(r) % (sizeof(extra) / sizeof(extra[0]))];
}

static int do_watch(int ifd, int fd, uint32_t mask)
{
	struct inotify_watch_args a;

	memset(&a, 0, sizeof(a));
	a.fd = fd;
	a.mask = mask;
	return ioctl(ifd, INOTIFY_IOC_WATCH, &a);
}

/* INOTIFY_IOC_WATCH on our own fd (strict errnos) or on a shared slot */
static void *watcher(void *arg)
{
	struct rnd r = { (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1 };
	char p[128];

	while (!stop) {
		int i = rnd(&r) % NINST;
		unsigned int gen = inst_gen[i];
		int ifd = inst_fd[i], fd, ret, e, own = rnd(&r) % 3 != 0;
		uint32_t mask = rmask(&r);

		if (own) {
			rpath(&r, p, sizeof(p));
			fd = open(p, ((rnd(&r) & 1) ? O_PATH : O_RDONLY) |
				  O_CLOEXEC | O_NONBLOCK);
			if (fd < 0)
				continue;
		} else {
			fd = slot_fd[rnd(&r) % NSLOT];
		}
		ret = do_watch(ifd, fd, mask);
		e = errno;
		if (own)
			close(fd);
		if (ret > 0) {
			int m = max_wd;

			atomic_fetch_add(&n_watch_ok, 1);
			while (ret > m && !atomic_compare_exchange_weak(&max_wd, &m, ret))
				;
			continue;
		}
		atomic_fetch_add(&n_watch_err, 1);
		if (ret == 0) {
			fail("INOTIFY_IOC_WATCH returned wd 0", 0, 0);
			continue;
		}
		switch (e) {
		case ENOTDIR:	/* IN_ONLYDIR on a file */
		case EEXIST:	/* IN_MASK_CREATE on a watched inode */
		case ENOSPC:	/* max_user_watches */
			continue;
		case EBADF:	/* a shared slot closed under us */
		case EINVAL:	/* ... and reused by an instance (anon inode) */
			if (!own)
				continue;
			break;
		case ENOTTY:	/* the instance replaced, its number reused */
			break;
		}
		if (inst_gen[i] != gen &&
		    (e == EBADF || e == ENOTTY || e == EINVAL))
			continue;
		fail("INOTIFY_IOC_WATCH: unexpected errno %d (own fd %d)", e, own);
	}
	return NULL;
}

static void *ignorer(void *arg)
{
	struct rnd r = { (uintptr_t)arg * 0x2545f4914f6cdd1dull + 7 };

	while (!stop) {
		int i = rnd(&r) % NINST;
		unsigned int gen = inst_gen[i];
		int wd = 1 + rnd(&r) % (max_wd + 1);
		int ret = ioctl(inst_fd[i], INOTIFY_IOC_IGNORE, &wd), e = errno;

		if (ret == 0) {
			atomic_fetch_add(&n_ign_ok, 1);
			continue;
		}
		atomic_fetch_add(&n_ign_err, 1);
		if (ret < 0 && e == EINVAL)	/* no such wd (any more) */
			continue;
		if (inst_gen[i] != gen && (e == EBADF || e == ENOTTY))
			continue;
		fail("INOTIFY_IOC_IGNORE: returned %d errno %d", ret, e);
	}
	return NULL;
}

/* reads events, checks their shape, and now and then replaces an instance */
static void *reader(void *arg)
{
	struct rnd r = { (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 3 };
	static char buf[64 * 1024];

	while (!stop) {
		int i = rnd(&r) % NINST;
		ssize_t n = read(inst_fd[i], buf, sizeof(buf));
		char *q;

		atomic_fetch_add(&n_reads, 1);
		if (n < 0 && errno != EAGAIN && errno != EBADF)
			fail("read on an instance: errno %d", errno, 0);
		for (q = buf; n > 0 && q < buf + n;) {
			struct inotify_event *e = (void *)q;

			if (e->len % 4 || q + sizeof(*e) + e->len > buf + n ||
			    (e->len && e->name[e->len - 1]))
				fail("malformed event (len %u)", (int)e->len, 0);
			if (e->wd < -1 || (e->wd == -1 && !(e->mask & IN_Q_OVERFLOW)))
				fail("event with wd %d mask %#x", e->wd, (int)e->mask);
			atomic_fetch_add(&n_events, 1);
			q += sizeof(*e) + e->len;
		}
		if (rnd(&r) % 64 == 0) {
			int nfd = new_instance(&r), old;

			if (nfd < 0) {
				fail("new instance: errno %d", errno, 0);
				continue;
			}
			old = atomic_exchange(&inst_fd[i], nfd);
			atomic_fetch_add(&inst_gen[i], 1);
			close(old);
		}
		usleep(rnd(&r) % 2000);
	}
	return NULL;
}

/* close and reopen the shared slots */
static void *closer(void *arg)
{
	struct rnd r = { (uintptr_t)arg * 0x2545f4914f6cdd1dull + 11 };
	char p[128];

	while (!stop) {
		int s = rnd(&r) % NSLOT, fd;

		rpath(&r, p, sizeof(p));
		fd = open(p, ((rnd(&r) & 1) ? O_PATH : O_RDONLY) | O_CLOEXEC |
			  O_NONBLOCK);
		close(atomic_exchange(&slot_fd[s], fd));
	}
	return NULL;
}

/* create, write, rename, unlink, rmdir */
static void *churner(void *arg)
{
	struct rnd r = { (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 5 };
	char a[128], b[128];

	while (!stop) {
		int fd;

		switch (rnd(&r) % 7) {
		case 0:
			snprintf(a, sizeof(a), "%s/d%u", mnt, rnd(&r) % NNAME);
			mkdir(a, 0755);
			break;
		case 1:
			snprintf(a, sizeof(a), "%s/d%u/d%u", mnt, rnd(&r) % NNAME,
				 rnd(&r) % NNAME);
			mkdir(a, 0755);
			break;
		case 2:
			rpath_below(&r, a, sizeof(a));
			fd = open(a, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (fd >= 0) {
				/* the fs may be full or gone: no matter */
				ssize_t w = write(fd, "x", 1);

				(void)w;
				close(fd);
			}
			break;
		case 3:
			rpath_below(&r, a, sizeof(a));
			rpath_below(&r, b, sizeof(b));
			rename(a, b);
			break;
		case 4:
			rpath_below(&r, a, sizeof(a));
			unlink(a);
			break;
		case 5:
			rpath_below(&r, a, sizeof(a));
			rmdir(a);
			break;
		case 6:
			rpath_below(&r, a, sizeof(a));
			chmod(a, 0600 + (rnd(&r) & 0177));
			break;
		}
	}
	return NULL;
}

static int mount_one(int ext2)
{
	if (ext2)
		return mount(loopdev, mnt, "ext2", 0, NULL);
	return mount("stress", mnt, "tmpfs", 0, "size=4m");
}

/* unmount and mount again, alternating tmpfs and ext2 */
static void *mounter(void *arg)
{
	struct rnd r = { (uintptr_t)arg + 13 };
	int ext2 = 0;

	while (!stop) {
		usleep(50000 + rnd(&r) % 100000);
		/* busy while a thread has a file open there: detach then */
		if (umount2(mnt, 0) && umount2(mnt, MNT_DETACH)) {
			fail("umount: errno %d", errno, 0);
			continue;
		}
		ext2 = have_ext2 && !ext2;
		/*
		 * A detached ext2 may still be busy: the loop device can be
		 * mounted a second time only once it is free again; fall back
		 * to tmpfs meanwhile.
		 */
		if (mount_one(ext2) && (!ext2 || mount_one(0))) {
			fail("mount: errno %d", errno, 0);
			stop = 1;
		}
		atomic_fetch_add(&n_mounts, 1);
	}
	return NULL;
}

static int setup_loop(void)
{
	struct loop_info64 li;
	int ctl, n, lfd, ifd;

	static const unsigned char nomax[2] = { 0xff, 0xff };
	int fd;

	if (system("dd if=/dev/zero of=img bs=1024 count=2048 2>/dev/null && "
		   "mke2fs -F -I 256 img >/dev/null 2>&1"))
		return -1;
	/*
	 * s_max_mnt_count = -1: no "maximal mount count reached" warning on
	 * each of the many mounts.
	 */
	fd = open("img", O_RDWR | O_CLOEXEC);
	if (fd < 0 || pwrite(fd, nomax, 2, 1024 + 0x36) != 2)
		return -1;
	close(fd);
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -1;
	n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (n < 0)
		return -1;
	snprintf(loopdev, sizeof(loopdev), "/dev/loop%d", n);
	lfd = open(loopdev, O_RDWR | O_CLOEXEC);
	ifd = open("img", O_RDWR | O_CLOEXEC);
	if (lfd < 0 || ifd < 0 || ioctl(lfd, LOOP_SET_FD, ifd))
		return -1;
	memset(&li, 0, sizeof(li));
	li.lo_flags = LO_FLAGS_AUTOCLEAR;
	ioctl(lfd, LOOP_SET_STATUS64, &li);
	close(ifd);
	/* lfd stays open until exit: autoclear frees the device after */
	return 0;
}

int main(void)
{
	const char *env = getenv("STRESS_SECONDS");
	int secs = env ? atoi(env) : 8, i, nt = 0;
	pthread_t t[16];
	struct rnd r = { (uint64_t)time(NULL) | 1 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (geteuid() != 0) {
		printf("stress_watch: needs root (mounts); skip\n");
		return 4;
	}
	if (secs < 1)
		secs = 1;
	if (mkdir(mnt, 0755) && errno != EEXIST)
		return 1;
	have_ext2 = setup_loop() == 0;
	if (!have_ext2)
		printf("stress_watch: no loop ext2 (%s); tmpfs only\n",
		       strerror(errno));
	if (mount_one(0)) {
		perror("stress_watch: mount tmpfs");
		return 1;
	}
	for (i = 0; i < NINST; i++) {
		inst_fd[i] = new_instance(&r);
		if (inst_fd[i] < 0) {
			perror("stress_watch: instance");
			return 1;
		}
	}
	for (i = 0; i < NSLOT; i++)
		slot_fd[i] = -1;

	printf("stress_watch: %d s, %s\n", secs,
	       have_ext2 ? "tmpfs and ext2 on loop" : "tmpfs");
	pthread_create(&t[nt++], NULL, watcher, (void *)1);
	pthread_create(&t[nt++], NULL, watcher, (void *)2);
	pthread_create(&t[nt++], NULL, ignorer, (void *)3);
	pthread_create(&t[nt++], NULL, reader, (void *)4);
	pthread_create(&t[nt++], NULL, closer, (void *)5);
	pthread_create(&t[nt++], NULL, churner, (void *)6);
	pthread_create(&t[nt++], NULL, churner, (void *)7);
	pthread_create(&t[nt++], NULL, mounter, (void *)8);
	sleep(secs);
	stop = 1;
	for (i = 0; i < nt; i++)
		pthread_join(t[i], NULL);

	for (i = 0; i < NINST; i++)
		close(inst_fd[i]);
	for (i = 0; i < NSLOT; i++)
		if (slot_fd[i] >= 0)
			close(slot_fd[i]);
	while (umount2(mnt, 0) == 0)
		;
	umount2(mnt, MNT_DETACH);
	printf("stress_watch: watch ok %ld err %ld, ignore ok %ld err %ld, "
	       "events %ld in %ld reads, %ld remounts\n",
	       (long)n_watch_ok, (long)n_watch_err, (long)n_ign_ok,
	       (long)n_ign_err, (long)n_events, (long)n_reads, (long)n_mounts);
	if (failures) {
		printf("stress_watch: %d failures\n", (int)failures);
		return 1;
	}
	if (!n_watch_ok || !n_mounts) {
		printf("stress_watch: nothing was exercised\n");
		return 1;
	}
	printf("stress_watch: pass\n");
	return 0;
}
