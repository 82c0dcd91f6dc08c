// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The fanotify backend on a fake kernel.  fanotify_init() and
 * fanotify_mark() are wrapped (-Wl,--wrap, Makefile): while fake.on, the
 * group is a pipe and the marks are answered here, as a kernel with the
 * project's fanotify series v2 (FAN_IGNORED, patches/7.2/fanotify/) or a
 * stock one would answer them; the test writes into the pipe the records
 * that kernel would queue.  So the backend's use of FAN_IGNORED is tested
 * on a host whose kernel has no such event.
 */
#include "unit.h"

#include <sys/fanotify.h>
#include <sys/statfs.h>

#ifndef FAN_IGNORED
#define FAN_IGNORED 0x00400000
#endif
#ifndef FAN_UNMOUNT
#define FAN_UNMOUNT 0x00002000
#endif
#ifndef FAN_EVENT_INFO_TYPE_DFID_NAME
#define FAN_EVENT_INFO_TYPE_DFID_NAME 2
#endif

static struct {
	bool on;		/* the fake answers, not the kernel */
	bool ignored;		/* it is a kernel with FAN_IGNORED */
	int wr;			/* the write end of the fake group */
	uint64_t added;		/* the masks of the marks added, or'ed */
} fake;

int __real_fanotify_init(unsigned int flags, unsigned int event_f_flags);
int __real_fanotify_mark(int fd, unsigned int flags, uint64_t mask, int dfd,
			 const char *path);

int __wrap_fanotify_init(unsigned int flags, unsigned int event_f_flags)
{
	int p[2];

	if (!fake.on)
		return __real_fanotify_init(flags, event_f_flags);
	if (pipe2(p, O_NONBLOCK | O_CLOEXEC))
		return -1;
	fake.wr = p[1];
	return p[0];
}

int __wrap_fanotify_mark(int fd, unsigned int flags, uint64_t mask, int dfd,
			 const char *path)
{
	if (!fake.on)
		return __real_fanotify_mark(fd, flags, mask, dfd, path);
	/* neither kernel has the series v1's FAN_UNMOUNT */
	if ((mask & FAN_UNMOUNT) || ((mask & FAN_IGNORED) && !fake.ignored)) {
		errno = EINVAL;
		return -1;
	}
	if (flags & FAN_MARK_REMOVE) {
		errno = ENOENT;	/* the probes remove what is not there */
		return -1;
	}
	fake.added |= mask;
	return 0;
}

/* one event with one fid record of path's object; name: a DFID_NAME one */
static size_t fan_event(char *buf, uint64_t mask, const char *path,
			const char *name)
{
	struct fanotify_event_metadata m = { 0 };
	struct fanotify_event_info_fid fid = { 0 };
	struct {
		struct file_handle fh;
		unsigned char b[128];
	} h;
	size_t hlen, rlen, nlen = name ? strlen(name) + 1 : 0;
	struct statfs sfs;
	int mnt;

	h.fh.handle_bytes = 128;
	assert_int_equal(name_to_handle_at(AT_FDCWD, path, &h.fh, &mnt, 0), 0);
	assert_int_equal(statfs(path, &sfs), 0);
	hlen = sizeof(h.fh) + h.fh.handle_bytes;
	rlen = (sizeof(fid) + hlen + nlen + 3) & ~(size_t)3;
	fid.hdr.info_type = name ? FAN_EVENT_INFO_TYPE_DFID_NAME :
			    FAN_EVENT_INFO_TYPE_FID;
	fid.hdr.len = rlen;
	memcpy(&fid.fsid, &sfs.f_fsid, sizeof(fid.fsid));
	m.event_len = sizeof(m) + rlen;
	m.vers = FANOTIFY_METADATA_VERSION;
	m.metadata_len = sizeof(m);
	m.mask = mask;
	m.fd = FAN_NOFD;
	m.pid = getpid();
	memset(buf, 0, m.event_len);
	memcpy(buf, &m, sizeof(m));
	memcpy(buf + sizeof(m), &fid, sizeof(fid));
	memcpy(buf + sizeof(m) + sizeof(fid), &h, hlen);
	if (name)
		memcpy(buf + sizeof(m) + sizeof(fid) + hlen, name, nlen);
	return m.event_len;
}

static void queue(uint64_t mask, const char *path, const char *name)
{
	char buf[512];
	size_t len = fan_event(buf, mask, path, name);

	assert_int_equal(write(fake.wr, buf, len), (ssize_t)len);
}

static int fake_new(struct fx *f, bool ignored)
{
	struct inofd_opts o = { .sz = sizeof(o),
				.flags = INOFD_FORCE_FANOTIFY };
	int r;

	memset(&fake, 0, sizeof(fake));
	fake.on = true;
	fake.ignored = ignored;
	r = inofd_new(&f->in, &o);
	assert_int_equal(r, 0);
	return 0;
}

static int watch(struct fx *f, const char *rel, int oflag)
{
	int fd = open(P(f, rel), oflag), wd;

	assert_true(fd >= 0);
	wd = inofd_watch_fd(f->in, fd, IN_ATTRIB | IN_DELETE_SELF, f);
	close(fd);
	assert_true(wd > 0);
	return wd;
}

/* the records of one wd, in order, as their masks */
static int masks_of(const struct fx *f, int wd, uint32_t *m, int max)
{
	int i, n = 0;

	for (i = 0; i < f->n && n < max; i++)
		if (f->r[i].type == INOFD_EV_INOTIFY && f->r[i].wd == wd)
			m[n++] = f->r[i].mask;
	return n;
}

static void fake_done(struct fx *f)
{
	inofd_free(f->in);
	f->in = NULL;
	close(fake.wr);
	fake.on = false;
}

/*
 * A kernel with FAN_IGNORED: every mark asks for it (and not for v1's
 * FAN_UNMOUNT); its FAN_IGNORED ends a watch with IN_UNMOUNT + IN_IGNORED
 * (a directory's with IN_ISDIR), and after FAN_DELETE_SELF adds nothing.
 */
static void fan_fake_ignored(void **state)
{
	struct fx *f = *state;
	int wd_d, wd_f, wd_g, n;
	uint32_t m[8];

	mkdirp(P(f, "d"));
	mkfile(P(f, "d/f"));
	mkfile(P(f, "g"));
	fake_new(f, true);
	wd_d = watch(f, "d", O_RDONLY | O_DIRECTORY);
	wd_f = watch(f, "d/f", O_RDONLY);
	wd_g = watch(f, "g", O_PATH);
	assert_true(fake.added & FAN_IGNORED);
	assert_false(fake.added & FAN_UNMOUNT);
	queue(FAN_IGNORED, P(f, "d/f"), NULL);
	queue(FAN_IGNORED | FAN_ONDIR, P(f, "d"), ".");
	queue(FAN_DELETE_SELF, P(f, "g"), NULL);
	queue(FAN_IGNORED, P(f, "g"), NULL);
	drain(f, 50);
	n = masks_of(f, wd_f, m, 8);
	assert_int_equal(n, 2);
	assert_int_equal(m[0], IN_UNMOUNT);
	assert_int_equal(m[1], IN_IGNORED);
	n = masks_of(f, wd_d, m, 8);
	assert_int_equal(n, 2);
	assert_int_equal(m[0], IN_UNMOUNT | IN_ISDIR);
	assert_int_equal(m[1], IN_IGNORED);
	n = masks_of(f, wd_g, m, 8);
	assert_int_equal(n, 2);
	assert_int_equal(m[0], IN_DELETE_SELF);
	assert_int_equal(m[1], IN_IGNORED);
	assert_int_equal(inofd_watch_count(f->in), 0);
	assert_int_equal(inofd_unwatch(f->in, wd_f), -EINVAL);
	fake_done(f);
}

/* a kernel without it: no mark asks for it, FAN_DELETE_SELF still ends */
static void fan_fake_stock(void **state)
{
	struct fx *f = *state;
	uint32_t m[8];
	int wd;

	mkfile(P(f, "g"));
	fake_new(f, false);
	wd = watch(f, "g", O_RDONLY);
	assert_false(fake.added & (FAN_IGNORED | FAN_UNMOUNT));
	assert_true(fake.added & FAN_DELETE_SELF);
	queue(FAN_DELETE_SELF, P(f, "g"), NULL);
	drain(f, 50);
	assert_int_equal(masks_of(f, wd, m, 8), 2);
	assert_int_equal(m[0], IN_DELETE_SELF);
	assert_int_equal(m[1], IN_IGNORED);
	fake_done(f);
}

DEFINE_TESTS(fan_fake,
	TN(fan_fake_ignored),
	TN(fan_fake_stock),
)
