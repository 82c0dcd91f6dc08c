// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel fault injection for one task, as the fail-nth guest tests use
 * it: failslab's knobs set for the run (no exemption for allocations that
 * may sleep, no stack per failure, every cache, no random failures) and
 * put back at exit; arm(n) makes the n-th slab allocation of this task's
 * next calls fail, disarm() says whether it was reached; fail() counts a
 * failed check.  Include after fdtest.h (die(), failed); everything is
 * static.
 */
#ifndef FAILNTH_H
#define FAILNTH_H

#include <sys/mount.h>
#include <sys/stat.h>

#define MAXN		1000
#define FAILSLAB	"/sys/kernel/debug/failslab"

static int nthfd = -1;

/* a failed check: counted, the run goes on */
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stdout, "FAIL ");
	vfprintf(stdout, fmt, ap);
	fprintf(stdout, "\n");
	va_end(ap);
	failed++;
}

struct knob {
	const char *name;
	const char *value;
	char old[32];
};

static struct knob knobs[] = {
	{ "ignore-gfp-wait", "N\n", "" },
	{ "verbose", "0\n", "" },
	{ "cache-filter", "N\n", "" },
	{ "probability", "0\n", "" },
};

#define NKNOBS (sizeof(knobs) / sizeof(knobs[0]))

static int knob_rw(const char *name, char *old, size_t size,
		   const char *value)
{
	char path[128];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", FAILSLAB, name);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (old) {
		len = read(fd, old, size - 1);
		old[len > 0 ? len : 0] = 0;
		lseek(fd, 0, SEEK_SET);
	}
	len = write(fd, value, strlen(value));
	close(fd);
	return len == (ssize_t)strlen(value) ? 0 : -1;
}

static void restore_knobs(void)
{
	unsigned int i;

	for (i = 0; i < NKNOBS; i++)
		if (knobs[i].old[0])
			knob_rw(knobs[i].name, NULL, 0, knobs[i].old);
}

/* arm: the n-th allocation of this task's next calls fails */
static void arm(int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d", n);

	if (pwrite(nthfd, buf, len, 0) != len)
		die("write fail-nth %d", n);
}

/* disarm; returns 1 if the armed allocation was reached (and failed) */
static int disarm(void)
{
	char buf[16] = "";
	int left;

	if (pread(nthfd, buf, sizeof(buf) - 1, 0) <= 0)
		die("read fail-nth");
	left = atoi(buf);
	if (pwrite(nthfd, "0", 1, 0) != 1)
		die("write fail-nth 0");
	return left == 0;
}

/*
 * 0 when injection is set up; 4 (skip) without fault injection in the
 * kernel or without root.  The knobs go back at exit.
 */
static int failnth_setup(void)
{
	struct stat st;
	unsigned int i;

	nthfd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (nthfd < 0) {
		if (errno != ENOENT)
			die("open /proc/thread-self/fail-nth");
		printf("skip " TEST_NAME ": no /proc/thread-self/fail-nth "
		       "(kernel without CONFIG_FAULT_INJECTION)\n");
		return 4;
	}
	if (geteuid() != 0) {
		printf("skip " TEST_NAME ": needs root (failslab settings)\n");
		return 4;
	}
	if (stat(FAILSLAB, &st) &&
	    mount("debugfs", "/sys/kernel/debug", "debugfs", 0, NULL))
		die("mount debugfs");
	if (stat(FAILSLAB, &st))
		die("%s missing: the kernel has fail-nth but not FAILSLAB "
		    "with FAULT_INJECTION_DEBUG_FS", FAILSLAB);
	for (i = 0; i < NKNOBS; i++)
		if (knob_rw(knobs[i].name, knobs[i].old,
			    sizeof(knobs[i].old), knobs[i].value)) {
			restore_knobs();
			die("set %s/%s", FAILSLAB, knobs[i].name);
		}
	atexit(restore_knobs);
	return 0;
}

#endif
