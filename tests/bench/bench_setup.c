// SPDX-License-Identifier: GPL-2.0
/*
 * bench_setup: the cost of setting up N watches on directories at depth 8,
 * by path, by INOTIFY_IOC_WATCH and by /proc/self/fd/N, and of as many
 * fanotify inode marks; then the kernel memory per watch or mark and the
 * fds a watcher holds.  Root: raises RLIMIT_NOFILE,
 * fs.inotify.max_user_watches and fs.fanotify.max_user_marks; with
 * BENCH_AS_USER=UID it then runs as UID (no memory figures then:
 * /proc/slabinfo is root's).
 *
 *   bench_setup ROOT N ROUNDS
 *
 * The directories are ROOT/1/2/3/4/5/6/7/dNNNNN (depth 8 below ROOT).
 * Methods (each on a fresh instance, closed after the round):
 *   path          inotify_add_watch(path)
 *   fd            INOTIFY_IOC_WATCH on fds opened beforehand (not timed)
 *   procfd        inotify_add_watch("/proc/self/fd/N"), fds opened beforehand
 *   fd+open       open(path, O_PATH), INOTIFY_IOC_WATCH, close
 *   procfd+open   open(path, O_PATH), inotify_add_watch(/proc/self/fd/N), close
 *   lib           inofd_watch_path() (kernel backend)
 *   fd+rdopen     open(path, O_RDONLY), INOTIFY_IOC_WATCH, close (what fanotify
 *                 must do: it refuses O_PATH fds)
 *   fan-fd        fanotify_mark(g, FAN_MARK_ADD, m, fd, NULL) on fds opened
 *                 beforehand
 *   fan-fd+open   open(path, O_RDONLY), fanotify_mark(fd), close
 *   fan-path      fanotify_mark(g, FAN_MARK_ADD, m, AT_FDCWD, path)
 *   fan-dot+open  open(path, O_PATH), fanotify_mark(g, .., fd, "."), close:
 *                 a directory's O_PATH fd named as dirfd + "." (a lookup
 *                 of "." from it), which fanotify accepts
 * The fanotify group is FAN_CLASS_NOTIF | FAN_REPORT_DFID_NAME (what an
 * unprivileged user may create); m is IN_ALL_EVENTS's bits with
 * FAN_EVENT_ON_CHILD | FAN_ONDIR (bench.h).  fanotify_mark() on an O_PATH
 * fd is tried once and its answer printed: a "refusal" line.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "bench.h"
#include "inofd.h"

#define MASK (IN_ALL_EVENTS)

enum { PATH, FD, PROCFD, FD_OPEN, PROCFD_OPEN, LIB, FD_RDOPEN, FAN_FD,
	FAN_FD_OPEN, FAN_PATH, FAN_DOT_OPEN, NMETH };
static const char *mname[NMETH] = {
	"path", "fd", "procfd", "fd+open", "procfd+open", "lib", "fd+rdopen",
	"fan-fd", "fan-fd+open", "fan-path", "fan-dot+open"
};

static int is_fan(int m)
{
	return m == FAN_FD || m == FAN_FD_OPEN || m == FAN_PATH ||
	       m == FAN_DOT_OPEN;
}

/* the instance or group method m adds to */
static int new_group(int m)
{
	int g;

	if (is_fan(m)) {
		g = fanotify_init(BENCH_FAN_INIT | FAN_CLOEXEC, O_RDONLY);
		if (g < 0)
			die("fanotify_init");
	} else {
		g = sys_init1(IN_CLOEXEC);
		if (g < 0)
			die("inotify_init1");
	}
	return g;
}

static char **paths;
static int *fds;
static long n;

static void open_all(void)
{
	long i;

	for (i = 0; i < n; i++) {
		fds[i] = open(paths[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fds[i] < 0)
			die("open");
	}
}

static void close_all(void)
{
	long i;

	for (i = 0; i < n; i++)
		close(fds[i]);
}

static void check(int r, const char *what)
{
	if (r < 0) {
		fprintf(stderr, "bench_setup: %s: %s\n", what, strerror(errno));
		exit(1);
	}
}

/* Add the n watches by method m to ifd (or *lib); returns the time. */
static double add_all(int m, int ifd, struct inofd **lib)
{
	char p[64];
	double t0, t1;
	long i;

	if (m == FD || m == PROCFD || m == FAN_FD)
		open_all();
	if (m == LIB) {
		struct inofd_opts o = { .sz = sizeof(o), .flags = INOFD_FORCE_KERNEL };

		if (inofd_new(lib, &o) < 0)
			die("inofd_new");
	}
	t0 = now_s();
	for (i = 0; i < n; i++) {
		int fd;

		switch (m) {
		case PATH:
			check(sys_add(ifd, paths[i], MASK), "inotify_add_watch");
			break;
		case FD:
			check(watch_fd(ifd, fds[i], MASK), "INOTIFY_IOC_WATCH");
			break;
		case PROCFD:
			snprintf(p, sizeof(p), "/proc/self/fd/%d", fds[i]);
			check(sys_add(ifd, p, MASK), "add /proc/self/fd");
			break;
		case FD_OPEN:
			fd = open(paths[i], O_PATH | O_CLOEXEC);
			check(fd, "open");
			check(watch_fd(ifd, fd, MASK), "INOTIFY_IOC_WATCH");
			close(fd);
			break;
		case PROCFD_OPEN:
			fd = open(paths[i], O_PATH | O_CLOEXEC);
			check(fd, "open");
			snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
			check(sys_add(ifd, p, MASK), "add /proc/self/fd");
			close(fd);
			break;
		case LIB:
			if (inofd_watch_path(*lib, paths[i], MASK, NULL) < 0) {
				fprintf(stderr, "bench_setup: inofd_watch_path failed\n");
				exit(1);
			}
			break;
		case FD_RDOPEN:
			fd = open(paths[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			check(fd, "open");
			check(watch_fd(ifd, fd, MASK), "INOTIFY_IOC_WATCH");
			close(fd);
			break;
		case FAN_FD:
			check(fanotify_mark(ifd, FAN_MARK_ADD, fan_mask(MASK),
					    fds[i], NULL), "fanotify_mark(fd)");
			break;
		case FAN_FD_OPEN:
			fd = open(paths[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			check(fd, "open");
			check(fanotify_mark(ifd, FAN_MARK_ADD, fan_mask(MASK),
					    fd, NULL), "fanotify_mark(fd)");
			close(fd);
			break;
		case FAN_DOT_OPEN:
			fd = open(paths[i], O_PATH | O_CLOEXEC);
			check(fd, "open");
			check(fanotify_mark(ifd, FAN_MARK_ADD, fan_mask(MASK),
					    fd, "."), "fanotify_mark(fd, \".\")");
			close(fd);
			break;
		case FAN_PATH:
			check(fanotify_mark(ifd, FAN_MARK_ADD, fan_mask(MASK),
					    AT_FDCWD, paths[i]),
			      "fanotify_mark(path)");
			break;
		}
	}
	t1 = now_s();
	if (m == FD || m == PROCFD || m == FAN_FD)
		close_all();
	return t1 - t0;
}

/* Sum of active_objs * objsize over every slab cache, and per cache. */
#define MAXC 512
struct slab { char name[64]; long objs, size; };

static int read_slab(struct slab *s)
{
	char line[512];
	FILE *f = fopen("/proc/slabinfo", "r");
	int k = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f) && k < MAXC) {
		long tot;

		if (line[0] == '#' || !strncmp(line, "slabinfo", 8))
			continue;
		if (sscanf(line, "%63s %ld %ld %ld", s[k].name, &s[k].objs,
			   &tot, &s[k].size) == 4)
			k++;
	}
	fclose(f);
	return k;
}

static long meminfo(const char *key)
{
	char line[256];
	FILE *f = fopen("/proc/meminfo", "r");
	long v = -1;
	size_t kl = strlen(key);

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, kl) && line[kl] == ':')
			v = atol(line + kl + 1);
	fclose(f);
	return v;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int c = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			c++;
	closedir(d);
	return c - 1;	/* the directory stream itself */
}

static void settle(void)
{
	/* marks are freed by a delayed work after an SRCU grace period */
	sync();
	usleep(1500 * 1000);
}

static void memory(int m)
{
	static struct slab a[MAXC], b[MAXC];
	long slab0, slab1, total = 0;
	struct inofd *lib = NULL;
	int na, nb, i, j, ifd;

	settle();
	/* the library makes its own instance */
	ifd = m == LIB ? -1 : new_group(m);
	na = read_slab(a);
	slab0 = meminfo("Slab");
	add_all(m, ifd, &lib);
	/*
	 * Closing a marked directory's O_RDONLY fd queues a close event
	 * (fan-fd+open: FAN_CLOSE_NOWRITE | FAN_ONDIR): read the queue, so
	 * that only the marks are counted.
	 */
	if (ifd >= 0) {
		static char ev[65536];

		fcntl(ifd, F_SETFL, O_NONBLOCK);
		while (read(ifd, ev, sizeof(ev)) > 0)
			;
	}
	settle();	/* let freed files and path walks' RCU frees finish */
	nb = read_slab(b);
	slab1 = meminfo("Slab");
	printf("memory method=%-8s watches=%ld  meminfo Slab %.0f bytes/watch"
	       "  fds held after setup: %d (stdin, stdout, stderr and the "
	       "instance or group)\n", mname[m], n, (slab1 - slab0) * 1024.0 / n,
	       count_fds());
	for (j = 0; j < nb; j++) {
		long before = 0, d;

		for (i = 0; i < na; i++)
			if (!strcmp(a[i].name, b[j].name))
				before = a[i].objs;
		d = (b[j].objs - before) * b[j].size;
		if (d > 0) {
			total += d;
			if (d >= n * 8)
				printf("#   slab %-24s +%ld objs x %ld B = %.1f B/watch\n",
				       b[j].name, b[j].objs - before, b[j].size,
				       (double)d / n);
		}
	}
	printf("memory method=%-8s slabinfo total %.1f bytes/watch (sum of "
	       "active_objs*objsize deltas)\n", mname[m], (double)total / n);
	if (lib)
		inofd_free(lib);
	if (ifd >= 0)
		close(ifd);
}

int main(int argc, char **argv)
{
	double t[NMETH][32], med[NMETH];
	struct rlimit rl;
	char base[4096];
	int rounds, r, m, i, g, fd;
	uid_t uid;

	if (argc != 4) {
		fprintf(stderr, "usage: bench_setup ROOT N ROUNDS\n");
		return 2;
	}
	n = atol(argv[2]);
	rounds = atoi(argv[3]);
	if (rounds < 1 || rounds > 32 || n < 1)
		return 2;
	rl.rlim_cur = rl.rlim_max = n + 256;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit (needs root)");
	write_sysctl("max_user_watches", 1000000);
	write_fs_sysctl("fanotify/max_user_marks", 1000000);

	snprintf(base, sizeof(base), "%s", argv[1]);
	mkdir(base, 0755);
	for (i = 1; i <= 7; i++) {
		size_t l = strlen(base);

		snprintf(base + l, sizeof(base) - l, "/%d", i);
		if (mkdir(base, 0755) && errno != EEXIST)
			die("mkdir");
	}
	paths = calloc(n, sizeof(*paths));
	fds = calloc(n, sizeof(*fds));
	for (i = 0; i < n; i++) {
		if (asprintf(&paths[i], "%s/d%05d", base, i) < 0)
			die("asprintf");
		if (mkdir(paths[i], 0755) && errno != EEXIST)
			die("mkdir");
	}
	uid = bench_drop_privileges();
	printf("# uid %u\n", (unsigned int)uid);

	/* fanotify names its object by a plain fd lookup: O_PATH is EBADF */
	g = new_group(FAN_FD);
	fd = open(paths[0], O_PATH | O_CLOEXEC);
	check(fd, "open O_PATH");
	errno = 0;
	r = fanotify_mark(g, FAN_MARK_ADD, fan_mask(MASK), fd, NULL);
	printf("refusal uid=%u method=fan-fd(O_PATH) fanotify_mark on an O_PATH "
	       "fd: %s\n", (unsigned int)uid, r < 0 ? strerrorname_np(errno) :
	       "accepted");
	close(fd);
	close(g);

	for (r = 0; r < rounds; r++) {
		for (m = 0; m < NMETH; m++) {
			struct inofd *lib = NULL;
			int ifd = m == LIB ? -1 : new_group(m);

			t[m][r] = add_all(m, ifd, &lib);
			printf("#   round %d %-12s %.3f s\n", r + 1, mname[m], t[m][r]);
			fflush(stdout);
			if (lib)
				inofd_free(lib);
			if (ifd >= 0)
				close(ifd);
		}
	}
	for (m = 0; m < NMETH; m++)
		med[m] = median(t[m], rounds);
	for (m = 0; m < NMETH; m++)
		printf("setup n=%ld depth=8 uid=%u method=%-12s median %.1f ms  "
		       "%.1f us/watch  ratio vs path %.2f  vs fd %.2f  "
		       "vs fd+rdopen %.2f\n", n, (unsigned int)uid, mname[m],
		       med[m] * 1e3, med[m] * 1e6 / n, med[m] / med[PATH],
		       med[m] / med[FD], med[m] / med[FD_RDOPEN]);
	fflush(stdout);

	if (access("/proc/slabinfo", R_OK)) {
		printf("# memory: /proc/slabinfo not readable (uid %u): no memory "
		       "figures in this run\n", (unsigned int)uid);
		return 0;
	}
	memory(PATH);
	memory(FD_OPEN);
	memory(LIB);
	memory(FAN_FD_OPEN);
	return 0;
}
