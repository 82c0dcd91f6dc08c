# SPDX-License-Identifier: GPL-2.0
#
# inotify by file descriptor: build the patched kernel, the library, the
# examples and the tests; boot the kernel under QEMU.  `make help` lists
# the targets.

CACHE   ?= $(HOME)/.cache/inotify-fd
DEBUG   ?= 0
# The base kernel: 6.1 (patches/) or 6.12 (patches/6.12/), both from
# Debian's linux-source packages.
KERNEL  ?= 6.1
JOBS    ?= $(shell nproc)
CC      ?= cc
B       := $(CURDIR)/build

ifeq ($(DEBUG),1)
VARIANT   := debug
KOBJ_EST  := 1140
FRAGMENTS := kconfig/guest.config kconfig/debug.config
QEMU_MEM  ?= 1G
QEMU_TIMEOUT ?= 14400
else
VARIANT   := default
KOBJ_EST  := 1100
FRAGMENTS := kconfig/guest.config
QEMU_MEM  ?= 512M
QEMU_TIMEOUT ?= 7200
endif
# QEMU_TIMEOUT caps a whole guest run; what stops a hung guest is the
# silence bound, QEMU_IDLE (scripts/run-guest.sh: no line from the guest
# for 600 s, or for the running test's own bound plus 120 s).  Neither is
# reached by a run that makes progress, however busy the machine.
# Exported only when the user gave them: one variant's defaults must not
# reach a sub-make of the other (make check's debug suite ran in 512M under
# the default kernel's 1200 s bound when they were always exported).  The
# recipes pass them to run-guest.sh themselves ($(GUEST_ENV)).
ifneq ($(origin QEMU_MEM),file)
export QEMU_MEM
endif
ifneq ($(origin QEMU_TIMEOUT),file)
export QEMU_TIMEOUT
endif
GUEST_ENV = QEMU_MEM=$(QEMU_MEM) QEMU_TIMEOUT=$(QEMU_TIMEOUT)

# QEMU's accelerator: auto uses KVM where a bounded probe boot under KVM
# worked on this host (scripts/accel-probe.sh, answer cached in
# $(CACHE)/accel), TCG otherwise; ACCEL=tcg or ACCEL=kvm forces one.
ACCEL       ?= auto
ACCEL_CACHE ?= $(CACHE)/accel
export ACCEL ACCEL_CACHE

# Each base has its own tarball, tree, builds, series and guest directory;
# 6.1 keeps the paths it had before 6.12 came (warm caches stay warm).
# SERIES: the patch series applied in order.  On 6.1 the watch-by-fd
# series (patches/), then the event-path series (patches/event-path/),
# then the fanotify series (patches/fanotify/); SERIES=patches builds the
# watch-by-fd series alone, in a tree and build directories of its own
# (suffix -fdonly), so that the two kernels never rebuild each other; any
# other subset (SERIES="patches patches/event-path" leaves fanotify out)
# gets directories named after it.  On 6.12 the same with patches/6.12/,
# patches/6.12/event-path/ and patches/6.12/fanotify/.
KTAR61  := /usr/src/linux-source-6.1.tar.xz
empty   :=
space   := $(empty) $(empty)
# $(call series_tag,FD,DEFAULT): "" for SERIES = DEFAULT (the default
# series, in order), -fdonly for FD alone, a tag naming the series
# otherwise (any other subset included: it must not reset the default
# tree).
series_joined = $(subst $(space),+,$(strip $(SERIES)))
series_tag = $(if $(filter x$(series_joined),x$(subst $(space),+,$(strip $(2)))),,$(if $(filter x$(series_joined),x$(1)),-fdonly,-$(subst /,_,$(series_joined))))
ifeq ($(KERNEL),6.1)
KTAR    ?= $(KTAR61)
DEFAULT_SERIES := patches patches/event-path patches/fanotify
SERIES  ?= $(DEFAULT_SERIES)
FD_ONLY := patches
SERIES_TAG := $(call series_tag,patches,$(DEFAULT_SERIES))
GB_BASE := $(B)/guest-$(VARIANT)
KSRC    := $(CACHE)/linux$(SERIES_TAG)
KBUILD  := $(CACHE)/build-$(VARIANT)$(SERIES_TAG)
GB      := $(GB_BASE)$(SERIES_TAG)
SERIES_WORK := $(CACHE)/series$(SERIES_TAG)
POST_OUT := $(B)/post
else ifeq ($(KERNEL),6.12)
KTAR    ?= /usr/src/linux-source-6.12.tar.xz
DEFAULT_SERIES := patches/6.12 patches/6.12/event-path patches/6.12/fanotify
SERIES  ?= $(DEFAULT_SERIES)
FD_ONLY := patches/6.12
SERIES_TAG := $(call series_tag,patches/6.12,$(DEFAULT_SERIES))
GB_BASE := $(B)/guest-6.12-$(VARIANT)
KSRC    := $(CACHE)/linux-6.12$(SERIES_TAG)
KBUILD  := $(CACHE)/build-6.12-$(VARIANT)$(SERIES_TAG)
GB      := $(GB_BASE)$(SERIES_TAG)
SERIES_WORK := $(CACHE)/series-6.12$(SERIES_TAG)
POST_OUT := $(B)/post-6.12
KOBJ_EST := 1170
# tinyconfig selects SLUB_TINY there, which rules out SLUB_DEBUG
FRAGMENTS += kconfig/6.12.config
else ifeq ($(KERNEL),7.2)
# Debian's linux-source-7.2 from sid, fetched into the cache
# (scripts/fetch-debian-source.sh): the pin, version and checksum of the
# .deb, is here and nowhere else.  When sid has moved on, the fetch says
# what to change.
LINUX72_VERSION := 7.2.13-1
LINUX72_SHA256  := 30a8c5fc63f9028a62e6d7b3f7f43bee67425dbce2a05fceba83f9b87c92083d
LINUX72_DIR     := $(CACHE)/debian-7.2
KTAR    ?= $(LINUX72_DIR)/linux-source-7.2.tar.xz
DEFAULT_SERIES := patches/7.2 patches/7.2/event-path patches/7.2/fanotify
SERIES  ?= $(DEFAULT_SERIES)
FD_ONLY := patches/7.2
SERIES_TAG := $(call series_tag,patches/7.2,$(DEFAULT_SERIES))
GB_BASE := $(B)/guest-7.2-$(VARIANT)
KSRC    := $(CACHE)/linux-7.2$(SERIES_TAG)
KBUILD  := $(CACHE)/build-7.2-$(VARIANT)$(SERIES_TAG)
GB      := $(GB_BASE)$(SERIES_TAG)
SERIES_WORK := $(CACHE)/series-7.2$(SERIES_TAG)
POST_OUT := $(B)/post-7.2
KOBJ_EST := 1200
FRAGMENTS += kconfig/7.2.config
# every use of the tree checks the kept .deb against the pin (0.5 s)
FETCH_KTAR = scripts/fetch-debian-source.sh $(LINUX72_DIR) linux-source-7.2 \
	$(LINUX72_VERSION) $(LINUX72_SHA256) sid
else
$(error KERNEL=$(KERNEL): the bases are 6.1, 6.12 and 7.2)
endif
# the watch-by-fd series of this base (make post, uapi): the first one
FD_SERIES := $(firstword $(SERIES))
BZIMAGE := $(KBUILD)/arch/x86/boot/bzImage
STAMP   := $(KSRC)/.series-stamp
INITRD  := $(GB)/initramfs.cpio

GUEST_CFLAGS := -static -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
		-I$(CURDIR)/include-uapi -I$(CURDIR)/libinotify/include
KSELFTEST_SRC := $(KSRC)/tools/testing/selftests/filesystems/inotify/inotify_fd_test.c
KSELFTEST_FAN_SRC := $(KSRC)/tools/testing/selftests/filesystems/fanotify/fanotify_mark_fd_test.c
KSELFTEST_FAN_END_SRC := $(KSRC)/tools/testing/selftests/filesystems/fanotify/fanotify_mark_end_test.c

DEB_PACKAGES := linux-source-6.1 linux-source-6.12 qemu-system-x86 busybox-static gcc make \
	libcmocka-dev bc flex bison libelf-dev libssl-dev cpio xz-utils \
	inotify-tools e2fsprogs pkg-config perl python3 git rsync \
	libc6-dev-i386 lib32gcc-12-dev python3-ply python3-git clang \
	debhelper dpkg-dev lintian gnuplot-nox debian-archive-keyring \
	python3-dev python3-pytest python3-watchdog dh-python python3-venv python3-mypy

# What make deb needs, no more (debian/control's Build-Depends,
# dpkg-buildpackage, lintian, rsync for scripts/mk-deb.sh): not the kernel
# sources, qemu, clang or the i386 libc.
DEB_BUILD_PACKAGES := gcc make libc6-dev rsync dpkg-dev debhelper dh-python \
	python3-dev libcmocka-dev lintian
# What make need checks (and make deps installs): everything by default.
NEED_PACKAGES ?= $(DEB_PACKAGES)

.PHONY: all help deps need need-deb kernel tree initramfs qemu shell check host-check kernel-lane-6.1 unit bench python python-check \
	guest-check guest-test failnth probe-check stress-writers check-all uapi-check checkpatch series-check kernel-check fuzz lib examples clean \
	kernel-debug kernel-7.2 series-check-7.2 \
	sem-table sem-table-check \
	bench-host bench-lib-host bench-python bench-lib-cache bench-lib-l2 soak oracle-guest oracle-fanotify bench-experiment bench-evpath bench-evpath-stages bench-report harness-check guest-env watch-fd-check oracle oracle-soak \
	install uninstall install-check uapi-copy-check deb deb-check post post-check peers \
	distclean FORCE

all: lib examples python kernel initramfs

help:
	@echo "make deps        install the Debian packages this needs (as root)"
	@echo "make qemu        build what is missing, boot the patched kernel, run the watch-fd demo"
	@echo "make check       host unit tests; checkpatch, make post and the guest suite on 6.1's default and"
	@echo "                 debug kernels; then on 7.2 the same and series-check (every patch builds)"
	@echo "make check-all   make check, then series-check on 6.1 and every kernel check on 6.12"
	@echo "make guest-test T=name[,name]   run some guest tests (names from tests/guest/tests.list)"
	@echo "make bench       benchmarks in one guest boot (tests/bench/run.sh; BENCH=1a.all,1d for some),"
	@echo "                 then tables and SVG plots in build/guest-default/bench-report/"
	@echo "make bench-report LOG=file OUT=dir   tables and plots from a bench log"
	@echo "make harness-check   host tests of the harness (KVM probe fallback, progress filter, bench and peers reports)"
	@echo "make sem-table   run tests/guest/sem_table (root and uid 65534), write docs/semantics-table.md"
	@echo "make sem-table-check   docs/kernel.md's copy of the semantics table equals docs/semantics-table.md"
	@echo "make bench-experiment EXP=experiments/X.patch   benchmark a kernel experiment on top of the series"
	@echo "make bench-evpath   bench 1a.change on the fd series alone and with the event-path series (two boots)"
	@echo "make bench-evpath-stages   the event path's cost per stage, in instructions (ACCEL=icount)"
	@echo "SERIES=patches   the kernel with the fd series alone (default: patches patches/event-path"
	@echo "                 patches/fanotify; on 6.12 the same under patches/6.12/)"
	@echo "make bench-host  the 2004 loop on this machine's own kernel (path watches only), for reference"
	@echo "make bench-lib-host  bench 1d (libinofd iterator vs raw read()+path, depth 0 and 8) on this host,"
	@echo "                 11 rounds of 256,000 events a reader (30-45 s; BENCH_LIB_CPU=N pins it)"
	@echo "make bench-python  Python iteration vs the C iterator per event (bench 1d's stream), ratio"
	@echo "make bench-lib-cache bench 1d's cache misses per event on a simulated 32 KiB L1d / 256 KiB L2 (valgrind)"
	@echo "make bench-lib-l2 BENCH_LIB_READ=262144   bench 1d on this host with the read (batch) scaled to its L2,"
	@echo "                 streamed and parsed at once (scripts/bench-lib-l2.sh)"
	@echo "make soak SOAK=600 DEBUG=1   stress_watch and fuzz_ioctl for SOAK s each (not in CI)"
	@echo "make oracle      the tree oracle on the host (ORACLE_SEEDS=20 ORACLE_OPS=200, ORACLE_SEED=n for one)"
	@echo "make oracle-fanotify   the same on the library's fanotify backend"
	@echo "make stress-writers   writer processes against renames and exchanges, RUNS=20 SECS=15 (BACKEND=procfd: procfd, else fanotify); fails on an unflagged wrong path"
	@echo "make oracle-soak the oracle's host soak: fresh seeds of every generator set, procfd and fanotify,"
	@echo "                 root and uid 65534 (SOAK_FIRST=110001, 1,001 seeds per backend as root, 209 as uid 65534)"
	@echo "make oracle-guest   the oracle in the guest, ORACLE_SOAK_SEEDS=1000 seeds, both backends and users"
	@echo "                 (ORACLE_FIRST=N: seeds N.. instead of 1..)"
	@echo "                 (ORACLE_FEATURES=NXLRMCEWYUPFO: the oracle's -N ... -U -P -F -O, here and in guest-test)"
	@echo "make shell       interactive shell in the guest (Ctrl-A X quits QEMU)"
	@echo "make unit        host unit tests only"
	@echo "make failnth     every allocation of the library failed in turn under ASan (tests/unit/failnth.c)"
	@echo "make python      the Python binding (python/README); PYTHON=/usr/bin/python3"
	@echo "make python-check   its pytest suite (API, errors, watchfiles API, watchdog observer, stress, leaks, oracle)"
	@echo "                 in venvs of PYTHON and of pyenv's 3.11 (PYENV_PYTHON=), pip-installed in each"
	@echo "make install     libinofd (.so, .a, inofd.h, libinofd.pc, man3), watch-fd and the Python package"
	@echo "                 (PREFIX=/usr: /usr/lib/python3/dist-packages); PREFIX=/usr/local DESTDIR="
	@echo "make uninstall   remove what make install put there (same PREFIX and DESTDIR)"
	@echo "make install-check   install into a staging DESTDIR, build and run a pkg-config user, uninstall"
	@echo "make deb         Debian packages libinofd0, libinofd-dev, inofd-tools, python3-inofd into build/deb/, then lintian"
	@echo "make watch-fd-check   watch-fd's options and messages on the host"
	@echo "make peers      libinofd beside inotifywait, watchdog, fswatch, watchman, @parcel/watcher,"
	@echo "                 chokidar on one git tree (PEERS_RUNS=2 PEERS_SWITCHES=6; not in make check)"
	@echo "make fuzz        libFuzzer on the library's event parsing (FUZZ_TIME=60 s)"
	@echo "make kernel      patched bzImage only"
	@echo "make checkpatch  scripts/checkpatch.pl --strict on every patch"
	@echo "make series-check   every patch of the series builds on its own"
	@echo "make post        the series to send, from 7.2 (build/post-7.2*/; KERNEL=6.1: build/post/), from your git identity"
	@echo "                 (POST_PREV_THREAD=lore link of the 2023 inotify_add_watch_at thread)"
	@echo "DEBUG=1          use the debug kernel (KASAN, lockdep, kmemleak, UBSAN)"
	@echo "KERNEL=6.12      Debian's linux-source-6.12 (patches/6.12/); default 6.1"
	@echo "KERNEL=7.2       Debian's linux-source-7.2 from sid, fetched into CACHE (patches/7.2/); make post's default"
	@echo "ACCEL=auto       KVM if it works here (probed once per host), else TCG; ACCEL=tcg|kvm forces"
	@echo "ACCEL=icount     TCG, one vCPU, clock = instruction count (exact bench ratios; slow)"
	@echo "CACHE=$(CACHE)  (kernel tree and builds, outside the repo)"

# ---------------------------------------------------------------- deps
deps:
	@if [ "$$(id -u)" != 0 ]; then \
		echo "make deps: run as root (apt-get install)"; exit 1; fi
	apt-get update -q
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $(NEED_PACKAGES)

# Stop early, naming what is missing; as root, install it.
need:
	@missing=$$(for p in $(NEED_PACKAGES); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" = 0 ]; then \
			echo "missing packages: $$missing; running make deps"; \
			$(MAKE) --no-print-directory deps NEED_PACKAGES="$(NEED_PACKAGES)" || exit 1; \
		else \
			echo "missing Debian packages: $$missing"; \
			echo "run 'sudo make deps' first"; exit 1; \
		fi; \
	fi

# ---------------------------------------------------------------- kernel
# The tree follows patches/series; the stamp changes only when it does.
# make check's two lanes may need one tree or one build directory at once
# (the host lane builds the kernels the kernel lane boots next): flock(1)
# on a lock file beside each makes the second wait for the first, whose
# work then leaves its own step a no-op.
TREE_LOCK  = flock $(KSRC).lock
BUILD_LOCK = flock $(KBUILD).lock

$(STAMP): FORCE | need
	@mkdir -p $(CACHE)
	@$(if $(FETCH_KTAR),flock $(LINUX72_DIR).lock $(FETCH_KTAR))
	@$(TREE_LOCK) scripts/kernel-tree.sh $(KTAR) $(KSRC) $(SERIES)

tree: $(STAMP)

$(KBUILD)/.config: $(STAMP) $(FRAGMENTS) scripts/kernel-config.sh
	@mkdir -p $(KBUILD)
	@$(BUILD_LOCK) scripts/kernel-config.sh $(KSRC) $(KBUILD) $(addprefix $(CURDIR)/,$(FRAGMENTS))
	@touch $@

# kbuild runs without -s: scripts/progress.sh counts its "  CC  x.o" lines
# (objects built against the count the last complete build left, or the
# estimate below on the first) and passes every other line through.
$(BZIMAGE): $(KBUILD)/.config $(STAMP)
	@echo "kernel: building $(VARIANT) bzImage in $(KBUILD)"
	@$(BUILD_LOCK) scripts/progress.sh kbuild "kernel $(VARIANT)" $(KBUILD) $(KOBJ_EST) - -- \
		$(MAKE) -C $(KSRC) O=$(KBUILD) ARCH=x86_64 -j$(JOBS) bzImage
	@touch $@

kernel: $(BZIMAGE)

# ---------------------------------------------------------------- userspace
lib:
	@$(MAKE) -s -C libinotify

examples: lib
	@$(MAKE) -s -C examples STATIC=1

# The Python binding (python/README): the extension module inofd._inofd
# with libinofd linked in, built for Debian's /usr/bin/python3 (never the
# python3 PATH finds first: PYTHON= to override).
PYTHON ?= /usr/bin/python3
python: lib
	@$(MAKE) -s --no-print-directory -C python PYTHON=$(PYTHON)

# Its tests (python/tests, pytest from Debian's python3-pytest): the API
# and its errors, the watchdog observer on both host backends, a stress,
# leak checks over 100,000 events and the oracle's idea through Python,
# inofd.watchfiles and inofd.watch().  Run in a venv of $(PYTHON) and one
# of PYENV_PYTHON (pyenv's 3.11, when there is one), the package
# pip-installed in each from python/ (scripts/python-venv-check.sh).
PYENV_PYTHON ?= $(firstword $(wildcard $(HOME)/.pyenv/versions/3.11*/bin/python3))
python-check: lib
	@[ -n "$(PYENV_PYTHON)" ] || echo "python-check: no pyenv 3.11 (PYENV_PYTHON=): $(PYTHON) only"
	@scripts/python-venv-check.sh $(B)/python $(PYTHON) $(PYENV_PYTHON)

unit: lib
	@$(MAKE) -s -C tests/unit check
	@mkdir -p $(B) && for t in lib_fan_opath lib_fan_unmount; do \
		$(CC) $(filter-out -static,$(GUEST_CFLAGS)) tests/guest/$$t.c \
			-o $(B)/$$t libinotify/libinofd.a -lpthread || exit 1; \
		out=$$($(B)/$$t); r=$$?; echo "$$out" | grep -v '^ok '; \
		[ $$r = 0 ] || [ $$r = 4 ] || exit 1; \
	done

# Every allocation of the library failed in turn, under ASan
# (tests/unit/failnth.c): no crash, no leak, no silent loss.
failnth:
	@$(MAKE) -s --no-print-directory -C tests/unit failnth-check

watch-fd-check: examples
	@out=$$(sh tests/host/watch-fd-cli.sh examples/watch-fd); rc=$$?; \
	echo "$$out" | grep -v '^ok '; exit $$rc

EXAMPLES   := watch-fd epoll-watch
# libFuzzer on the library's event processing: the corpus (every crash
# found so far), then FUZZ_TIME seconds of new inputs.
FUZZ_TIME ?= 60
fuzz: lib
	@$(MAKE) -s -C tests/fuzz regress run FUZZ_TIME=$(FUZZ_TIME)

# The model-based test of inofd_watch_tree() (tests/oracle/README): on
# the host against libinotify/ (or LIBINOFD=another/libinotify, copied and
# built under build/oracle); in the guest as tests/guest/lib_oracle.
ORACLE_SEEDS ?= 20
ORACLE_OPS   ?= 200
ORACLE_SEED  ?=
ORACLE_SOAK_SEEDS ?= 1000
oracle: $(if $(LIBINOFD),,lib)
	@$(MAKE) -s --no-print-directory -C tests/oracle run \
		ORACLE_SEEDS=$(ORACLE_SEEDS) ORACLE_OPS=$(ORACLE_OPS) \
		ORACLE_SEED=$(ORACLE_SEED) LIBINOFD=$(LIBINOFD) \
		$(if $(ORACLE_BACKEND),ORACLE_BACKEND=$(ORACLE_BACKEND)) \
		ORACLE_ARGS="$(ORACLE_ARGS)"

# The same seeds and fresh sets on the fanotify backend (issue 19): the
# host has no INOTIFY_IOC_WATCH, so procfd and fanotify are the two it can run.
oracle-fanotify: $(if $(LIBINOFD),,lib)
	@$(MAKE) --no-print-directory oracle ORACLE_BACKEND=fanotify

# Issue 26's host soak: fresh seeds of every generator set, procfd and
# fanotify, root and uid 65534 (scripts/oracle-soak.sh; per set:
# SOAK_ROOT_SEEDS x 11 sets as root, SOAK_USER_SEEDS x 11 as uid 65534).
SOAK_FIRST ?= 110001
SOAK_ROOT_SEEDS ?= 91
SOAK_USER_SEEDS ?= 19
oracle-soak: lib
	@$(MAKE) -s -C tests/oracle $(B)/oracle/oracle B=$(B)/oracle
	@scripts/oracle-soak.sh $(B)/oracle/oracle $(SOAK_FIRST) \
		$(SOAK_ROOT_SEEDS) $(SOAK_USER_SEEDS) $(B)/oracle-soak

# Issue 26's probe as a host test (procfd: the host has no INOTIFY_IOC_WATCH):
# a directory renamed back and forth in a tree while another process
# writes in it; every file reported once, with a path, no RESCAN
# (tests/probes/split_rename.c).  About 2 s a run here.  As in the guest,
# a rename's halves may wait 1 s for each other (-t 1000: a loaded host
# can deschedule the renamer between them for longer than the default
# 10 ms), and a run whose kernel queue overflowed is inconclusive and run
# again (-r 5); the first line checks that such a run is never a pass (a
# run the reader kept up with, 0 RESCAN and a pass, as a loaded host can
# give even with a 64-event queue, is made again, up to 5 times).  Then
# the writers probe, 4 s a backend, with -S: walks keep up under a storm
# of directory renames across the tree's edge (some write in the tree in
# the run's second half is reported), and no path is wrong unflagged.
PROBE_RUNS ?= 3
probe-check: $(if $(LIBINOFD),,lib)
	@$(MAKE) --no-print-directory -s -C tests/probes B=$(B)/probes
	@for i in 1 2 3 4 5; do \
		$(B)/probes/split_rename -n 5000 -B procfd -q 64 -r 1 > $(B)/probes/overflow.out; r=$$?; \
		[ $$r = 0 ] && grep -q ' 0 RESCAN' $(B)/probes/overflow.out || break; \
	done; \
	[ $$r = 3 ] || { cat $(B)/probes/overflow.out; \
		echo "probe-check: a run that overflowed gave $$r, not 3 (inconclusive)"; exit 1; }
	@for i in $$(seq $(PROBE_RUNS)); do $(B)/probes/split_rename -n 20000 -B procfd -t 1000 -r 5 || exit 1; done
	@for b in procfd fanotify; do $(B)/probes/writers -B $$b -n 1 -s 4 -S > $(B)/probes/writers-$$b.out || \
		{ cat $(B)/probes/writers-$$b.out; exit 1; }; done

# Writer processes against renames and exchanges (tests/probes/writers.c):
# every event whose path was not true when its file was made must be
# flagged INOFD_EVF_STALE_PATH.  The criterion: RUNS=20 SECS=15 on fanotify.
RUNS ?= 20
SECS ?= 15
stress-writers: $(if $(LIBINOFD),,lib)
	@$(MAKE) --no-print-directory -s -C tests/probes B=$(B)/probes
	@$(B)/probes/writers -B $(or $(filter procfd,$(BACKEND)),fanotify) -n $(RUNS) -s $(SECS)

GUEST_C    := $(wildcard tests/guest/*.c)
GUEST_SH   := $(wildcard tests/guest/*.sh)
GUEST_BINS := $(patsubst tests/guest/%.c,$(GB)/root/tests/%,$(GUEST_C))
M32_TESTS  := fd_badinput fd_equiv fd_bind fd_mntns fd_overlay fd_userns fd_failnth
GUEST_BINS += $(patsubst %,$(GB)/root/tests/%_m32,$(M32_TESTS))
GUEST_BINS += $(GB)/root/tests/split_rename
BENCH_C    := $(wildcard tests/bench/*.c)
BENCH_SH   := $(wildcard tests/bench/*.sh)
BENCH_BINS := $(patsubst tests/bench/%.c,$(GB)/root/bench/%,$(BENCH_C))

# Every guest test may use libinofd; static linking takes only what is used.
$(GB)/root/tests/%: tests/guest/%.c $(wildcard tests/guest/*.h) libinotify/libinofd.a
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) $< -o $@ libinotify/libinofd.a -lpthread

# Issue 26's probe, a test in the guest too (the kernel backend there).
$(GB)/root/tests/split_rename: tests/probes/split_rename.c libinotify/libinofd.a
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) $< -o $@ libinotify/libinofd.a

# 32-bit builds of the kernel-interface tests exercise the compat ioctl path.
M32_CFLAGS := -m32 -idirafter /usr/include/x86_64-linux-gnu
$(GB)/root/tests/lib_oracle: tests/oracle/oracle.c

$(GB)/root/tests/%_m32: tests/guest/%.c $(wildcard tests/guest/*.h)
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) $(M32_CFLAGS) $< -o $@ -lpthread

$(GB)/root/bench/%: tests/bench/%.c $(wildcard tests/bench/*.h) libinotify/libinofd.a
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) $< -o $@ libinotify/libinofd.a -lpthread

$(GB)/tools/%: tests/guest/tools/%.c
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) $< -o $@

# A recipe, empty, so that make looks at the archive's time again after
# lib ran: without one it keeps the time it saw first, and a guest binary
# is not relinked against the library just changed until the next make.
libinotify/libinofd.a: lib
	@:

# The kselftests come from the patched tree, built against the repo's
# copy of the uapi header (checked identical by uapi-check), 64- and 32-bit:
# the fd series' inotify_fd_test and the fanotify series'
# fanotify_mark_fd_test.  A kernel built without the series that has the
# test (SERIES=) gets a stand-in that reports SKIP (exit 4) and says why.
KSELFTEST_BINS := $(GB)/root/tests/inotify_fd_test $(GB)/root/tests/inotify_fd_test_m32 \
	$(GB)/root/tests/fanotify_mark_fd_test $(GB)/root/tests/fanotify_mark_fd_test_m32 \
	$(GB)/root/tests/fanotify_mark_end_test
$(GB)/root/tests/%_m32: KSELFTEST_ARCH := $(M32_CFLAGS)
$(GB)/root/tests/inotify_fd_test $(GB)/root/tests/inotify_fd_test_m32: KSELFTEST_C := $(KSELFTEST_SRC)
$(GB)/root/tests/fanotify_mark_fd_test $(GB)/root/tests/fanotify_mark_fd_test_m32: \
	KSELFTEST_C := $(KSELFTEST_FAN_SRC)
$(GB)/root/tests/fanotify_mark_end_test: KSELFTEST_C := $(KSELFTEST_FAN_END_SRC)
$(KSELFTEST_BINS): $(STAMP)
	@mkdir -p $(@D)
	@if [ -f $(KSELFTEST_C) ]; then \
		echo "  CC  kselftest $(@F)"; \
		$(CC) -static -O2 -Wall $(KSELFTEST_ARCH) -I$(CURDIR)/include-uapi \
			-I$(KSRC)/tools/testing/selftests $(KSELFTEST_C) -o $@ -lpthread; \
	else \
		printf '#!/bin/sh\necho "$(notdir $(KSELFTEST_C)): not in this kernel (SERIES=$(SERIES))"\nexit 4\n' > $@; \
		chmod +x $@; \
	fi

initramfs: $(INITRD)

# The directory skeleton of the kernel source: a large real tree for the
# recursive-watch benchmark (tests/bench/run.sh).
$(GB)/kernel-dirs.txt: $(STAMP)
	@mkdir -p $(@D)
	@cd $(KSRC) && find . -type d -not -path './.git*' > $@.new && mv $@.new $@

$(INITRD): $(GUEST_BINS) $(GUEST_SH) $(BENCH_BINS) $(BENCH_SH) \
		$(KSELFTEST_BINS) \
		$(GB)/tools/qemu-exit $(GB)/tools/runas tests/guest/tests.list \
		tests/guest/evseq.golden \
		$(GB)/kernel-dirs.txt scripts/mk-initramfs.sh examples FORCE
	@rm -rf $(GB)/stage && mkdir -p $(GB)/stage/bin $(GB)/stage/tests
	@cp tests/guest/init.sh $(GB)/stage/init
	@cp tests/guest/demo.sh $(GB)/stage/demo.sh
	@cp $(GB)/tools/qemu-exit $(GB)/tools/runas $(GB)/stage/bin/
	@cp $(addprefix examples/,$(EXAMPLES)) $(GB)/stage/bin/
	@cp tests/guest/tests.list tests/guest/evseq.golden $(GB)/stage/tests/
	@cp $(filter-out %/init.sh %/demo.sh,$(GUEST_SH)) $(GB)/stage/tests/ 2>/dev/null || true
	@cp $(GB)/root/tests/* $(GB)/stage/tests/ 2>/dev/null || true
	@mkdir -p $(GB)/stage/bench
	@cp $(BENCH_BINS) $(BENCH_SH) $(GB)/stage/bench/ 2>/dev/null || true
	@[ ! -f tests/bench/run.sh ] || cp tests/bench/run.sh $(GB)/stage/bench/run.sh
	@cp $(GB)/kernel-dirs.txt $(GB)/stage/bench/
	@scripts/mk-initramfs.sh $(GB)/stage $(INITRD).new
	@if cmp -s $(INITRD).new $(INITRD); then rm $(INITRD).new; else mv $(INITRD).new $(INITRD); fi

# ---------------------------------------------------------------- runs
qemu: need kernel initramfs
	@$(GUEST_ENV) scripts/run-guest.sh demo $(BZIMAGE) $(INITRD) $(GB)/demo.log

# Benchmarks: one guest boot, ratios printed by tests/bench/run.sh, then
# the tables and SVG plots made from that log (the run's status is kept).
# BENCH_LINES and BENCH_ROUNDS override run.sh's loop sizes (1a: 100,000
# lines, 5 rounds), for the slow ACCEL=icount runs; BENCH_SCALE sets
# 1b.scale's tree sizes (1000,10000,100000).
BENCH_OUT := $(GB)/bench-report
bench: need kernel initramfs
	@QEMU_MEM=$(QEMU_MEM) QEMU_TIMEOUT=3000 scripts/run-guest.sh bench $(BZIMAGE) $(INITRD) $(GB)/bench.log \
		$(if $(BENCH),inofd.bench=$(BENCH)) \
		$(if $(BENCH_LINES),inofd.bench_lines=$(BENCH_LINES)) \
		$(if $(BENCH_ROUNDS),inofd.bench_rounds=$(BENCH_ROUNDS)) \
		$(if $(BENCH_SCALE),inofd.bench_scale=$(BENCH_SCALE)); rc=$$?; \
	scripts/bench-report.py $(GB)/bench.log $(BENCH_OUT) || rc=1; exit $$rc

# Bench 1a (BENCH_EVPATH: the change-mask rows, merging, and the two storms
# that never merge, new files and renames, by default) on the kernel
# with the fd series alone, then on the default kernel (both series): two
# boots in one session, the ratios within each boot, side by side.
BENCH_EVPATH ?= 1a.change,1a.files,1a.renames
bench-evpath:
	@rc=0; \
	$(MAKE) --no-print-directory bench SERIES=$(FD_ONLY) BENCH=$(BENCH_EVPATH) || rc=1; \
	$(MAKE) --no-print-directory bench BENCH=$(BENCH_EVPATH) || rc=1; \
	for k in -fdonly ""; do \
		log=$(GB_BASE)$$k/bench.log; \
		echo "bench-evpath: $$(grep -m1 '^bench: [0-9]* cpus' $$log) ($$log)"; \
		grep '^notify ' $$log | sed 's/^notify /  /; s/  (.*//'; \
	done; exit $$rc

# The event path stage by stage: the event-path series plus
# experiments/evpath-stages.patch, bench step 1a.stages, instruction counts.
bench-evpath-stages:
	@$(MAKE) --no-print-directory bench-experiment ACCEL=icount \
		EXP=experiments/evpath-stages.patch BENCH=1a.stages

# Tables and plots from an existing bench log (LOG=, OUT=).
bench-report:
	@scripts/bench-report.py $(or $(LOG),$(GB)/bench.log) $(or $(OUT),$(BENCH_OUT))

# The same 2004 loop (run.sh's 1a steps) on the machine's own stock kernel,
# without QEMU: a reference for stock inotify's per-event cost on real
# CPUs.  Only "none" and "path" can run there; nothing is loaded into it.
bench-host: build/host/bench_notify
	@d=$$(mktemp -d /dev/shm/inofd-bench.XXXXXX) && \
	BENCH_ONLY=1a BENCH_BIN=build/host BENCH_WORK=$$d tests/bench/run.sh; \
	rc=$$?; rm -rf $$d; exit $$rc

# Bench 1d (tests/bench/bench_lib.c) on this machine: libinofd's iterator
# against a raw read() loop that builds the same full paths, at depth 0 and
# 8, in /dev/shm.  The figures are host thread-CPU time (user + system) of
# this machine's kernel and CPU, not the guest's (make bench BENCH=1d).
# Both readers watch at once and get the same events: BENCH_LIB_NEV a
# round, queued BENCH_LIB_CHUNK at a time (under the default
# max_queued_events, 16384: the bench raises the limit only when run as
# root), each chunk drained by both, alternately first.  The figure is the
# median of BENCH_LIB_ROUNDS rounds' lib / raw, 0.3-0.6 s of draining a
# reader (the 16,000 events a round before 2026-12-05 took 3 ms).  The
# readers are kept from round to round (BENCH_LIB_KEEP=1), as a
# long-running reader is: a fresh instance's first use (its first read's
# events and paths touch about 300 KiB of new memory) is the first round,
# whose ratio and page faults are printed apart; BENCH_LIB_KEEP=0 makes
# fresh readers every round.  BENCH_LIB_CPU=N pins it (taskset).  The CPU
# model, L2 and load average are printed with the figures.
BENCH_LIB_NEV    ?= 256000
BENCH_LIB_CHUNK  ?= 16000
BENCH_LIB_ROUNDS ?= 11
BENCH_LIB_KEEP   ?= 1
BENCH_LIB_CPU    ?=
bench-lib-host: build/host/bench_lib
	@d=$$(mktemp -d /dev/shm/inofd-bench-lib.XXXXXX) && rc=0 && \
	for depth in 0 8; do \
		BENCH_LIB_CHUNK=$(BENCH_LIB_CHUNK) BENCH_LIB_KEEP=$(BENCH_LIB_KEEP) $(if $(BENCH_LIB_CPU),taskset -c $(BENCH_LIB_CPU)) \
		build/host/bench_lib $$d/lib $(BENCH_LIB_NEV) $(BENCH_LIB_ROUNDS) \
			$$depth | grep -v '^#' || rc=1; \
		rm -rf $$d/lib; \
	done; rm -rf $$d; \
	echo "bench-lib-host: host thread-CPU time, not the guest figure"; exit $$rc

# Bench 1d on a simulated small cache (32 KiB L1d, 256 KiB last level):
# misses per event of the shipped library and of a whole-batch build.
BENCH_LIB_CACHE_NEV ?= 16000
bench-lib-cache:
	@scripts/bench-lib-cache.sh build/host/cache $(BENCH_LIB_CACHE_NEV)

# Bench 1d on this host with the batch scaled to its L2 (a 64 KiB read's
# events leave a 256 KiB L2, a 256 KiB read's a 1 MiB one): the shipped
# library, and INOFD__READ_BUF=BENCH_LIB_READ streamed and parsed at once,
# the raw loop reading as much.  Enough events for several full reads:
# as root (the bench raises max_queued_events to NEV + 1024).  Each
# reader warms up on two reads' worth first (BENCH_LIB_L2_WARM=0: not).
# BENCHMARKS.md, "The batch scaled to this CPU's L2", has the figures.
BENCH_LIB_READ      ?= 262144
BENCH_LIB_L2_NEV    ?= 64000
BENCH_LIB_L2_WARM   ?= 1
BENCH_LIB_L2_RUNS   ?= 7
BENCH_LIB_L2_ROUNDS ?= 15
bench-lib-l2:
	@WARM=$(BENCH_LIB_L2_WARM) scripts/bench-lib-l2.sh build/host/l2 \
		$(BENCH_LIB_READ) $(BENCH_LIB_L2_NEV) $(BENCH_LIB_L2_RUNS) \
		$(BENCH_LIB_L2_ROUNDS)

# The Python binding against the C iterator on bench 1d's stream, one run
# (tests/bench/bench_python.py): thread CPU time per event, the ratio
# (issue 28's target: Python at most 3x the C iterator).  Host only.
BENCH_PY_NEV    ?= 16000
BENCH_PY_ROUNDS ?= 7
bench-python: build/host/bench_lib python
	@d=$$(mktemp -d /dev/shm/inofd-bench-py.XXXXXX) && chmod 755 $$d && rc=0 && \
	for depth in 0 8; do \
		PYTHONPATH=$(CURDIR)/python $(PYTHON) tests/bench/bench_python.py \
			build/host/bench_lib $$d/$$depth $(BENCH_PY_NEV) $(BENCH_PY_ROUNDS) \
			$$depth || rc=1; \
	done; rm -rf $$d; \
	echo "bench-python: host thread-CPU time"; exit $$rc

build/host/bench_lib: tests/bench/bench_lib.c tests/bench/bench.h lib
	@mkdir -p $(@D)
	$(CC) $(GUEST_CFLAGS) $< -o $@ libinotify/libinofd.a -lpthread

build/host/bench_notify: tests/bench/bench_notify.c tests/bench/bench.h
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Iinclude-uapi $< -o $@

# A longer run of the stress and fuzz tests than CI's bounds (SOAK seconds
# for each; DEBUG=1 for KASAN, lockdep, kmemleak and UBSAN), then the
# oracle on the host for ORACLE_SOAK_SEEDS seeds (in the guest lib_oracle
# runs seeds for SOAK seconds: it reads STRESS_SECONDS).
SOAK ?= 600
soak: need kernel initramfs
	@QEMU_MEM=$(QEMU_MEM) QEMU_TIMEOUT=$$(( $(SOAK) * 15 + 1200 )) scripts/run-guest.sh check \
		$(BZIMAGE) $(INITRD) $(GB)/soak.log \
		inofd.tests=stress_watch,fuzz_ioctl,lib_oracle inofd.soak=$(SOAK); \
	rc=$$?; mkdir -p $(B); \
	$(MAKE) --no-print-directory oracle ORACLE_SEEDS=$(ORACLE_SOAK_SEEDS) \
		> $(B)/oracle-soak.log 2>&1 || rc=1; \
	grep '^oracle:' $(B)/oracle-soak.log; \
	echo "oracle soak log: $(B)/oracle-soak.log"; exit $$rc

# The oracle in the guest at soak size: lib_oracle (both backends, root
# with floods and uid 65534) for ORACLE_SOAK_SEEDS seeds x ORACLE_OPS ops
# each, in one boot of the default kernel; ORACLE_FIRST=N starts at seed N
# (fresh seeds), else at 1.
oracle-guest: need kernel initramfs
	@QEMU_MEM=$(QEMU_MEM) QEMU_TIMEOUT=$$(( $(ORACLE_SOAK_SEEDS) * $(ORACLE_OPS) / 5 + 1200 )) \
		scripts/run-guest.sh check $(BZIMAGE) $(INITRD) $(GB)/oracle-guest.log \
		inofd.tests=lib_oracle inofd.oracle=$(ORACLE_SOAK_SEEDS)x$(ORACLE_OPS) \
		$(if $(ORACLE_FIRST),inofd.oracle_first=$(ORACLE_FIRST)) \
		$(if $(ORACLE_FEATURES),oracle_features=$(ORACLE_FEATURES)); \
	rc=$$?; grep -E '^# oracle:|^(not )?ok' $(GB)/oracle-guest.log; exit $$rc

# An experimental kernel patch (experiments/*.patch) on top of the series,
# benchmarked in its own worktree and build directory under $(CACHE)/exp.
EXP ?= experiments/inotify-merge-before-alloc.patch
bench-experiment: need kernel initramfs
	@QEMU_MEM=$(QEMU_MEM) scripts/bench-experiment.sh $(EXP) $(KSRC) $(CACHE)/build-default/.config \
		$(INITRD) $(CACHE)/exp $(or $(BENCH),1a.c)

shell: need kernel initramfs
	@$(GUEST_ENV) scripts/run-guest.sh shell $(BZIMAGE) $(INITRD) /dev/null

guest-check: need kernel initramfs
	@$(GUEST_ENV) scripts/run-guest.sh check $(BZIMAGE) $(INITRD) $(GB)/check.log

guest-test: need kernel initramfs
	@test -n "$(T)" || { echo "usage: make guest-test T=name[,name]"; exit 1; }
	@$(GUEST_ENV) scripts/run-guest.sh check $(BZIMAGE) $(INITRD) $(GB)/test.log inofd.tests=$(T) \
		$(if $(ORACLE_FEATURES),oracle_features=$(ORACLE_FEATURES))

# The repo's uapi header must be what the series installs, and the
# library's vendored copy must be the repo's.
uapi-copy-check:
	@cmp include-uapi/linux/inotify.h libinotify/src/uapi/linux/inotify.h || \
		{ echo "uapi-copy-check: libinotify's copy differs; run:" \
			"cp include-uapi/linux/inotify.h libinotify/src/uapi/linux/inotify.h"; exit 1; }
	@echo "uapi-copy-check: libinotify/src/uapi/linux/inotify.h equals include-uapi's"

# On 6.12 the header the series installs must be include-uapi's with only
# the base's own differences (scripts/uapi-check.sh).
uapi-check: uapi-copy-check $(STAMP)
ifeq ($(KERNEL),6.1)
	@cmp include-uapi/linux/inotify.h $(KSRC)/include/uapi/linux/inotify.h && \
		echo "uapi-check: include-uapi/linux/inotify.h matches the patched tree"
else
	@scripts/uapi-check.sh include-uapi/linux/inotify.h $(KSRC) $(CACHE)/linux $(KTAR61)
endif

checkpatch: $(STAMP)
	@rc=0; n=0; for d in $(SERIES); do for p in $$(grep -v '^#' $$d/series); do \
		n=$$((n + 1)); \
		(cd $(KSRC) && PATH=/usr/bin:/bin:$$PATH scripts/checkpatch.pl --strict -q \
			$(CURDIR)/$$d/$$p) || { echo "checkpatch: $$d/$$p: see above"; rc=1; }; \
	done; done; [ $$rc = 0 ] && echo "checkpatch: $$n patches of $(SERIES) clean" \
		"(--strict, $(KERNEL)'s checkpatch.pl)"; exit $$rc

# The semantics table (tests/guest/sem_table): path inotify, INOTIFY_IOC_WATCH
# and fanotify inode marks on the same scenarios, as root and uid 65534,
# merged by scripts/sem-table.py into docs/semantics-table.md; LOG=file
# extracts from an existing guest log instead of booting.
# sem-table-check: docs/kernel.md's copy equals that file, and so does the
# table of the last guest-check log when it has one.
SEM_DOC := docs/semantics-table.md
SEM_COPY := docs/kernel.md
sem-table: $(if $(LOG),,need kernel initramfs)
	@$(if $(LOG),true,$(GUEST_ENV) scripts/run-guest.sh check $(BZIMAGE) $(INITRD) \
		$(GB)/sem-table.log inofd.tests=sem_table); rc=$$?; \
	scripts/sem-table.py extract $(or $(LOG),$(GB)/sem-table.log) $(SEM_DOC) || rc=1; \
	exit $$rc

sem-table-check:
	@scripts/sem-table.py check $(SEM_DOC) $(SEM_COPY) \
		$(if $(wildcard $(GB)/check.log),$(shell grep -q 'sem_table: begin' \
			$(GB)/check.log 2>/dev/null && echo $(GB)/check.log))

# The series to send, from the poster's git identity (scripts/post.sh):
# author and Signed-off-by replace the committed placeholder; refused
# without an identity or with a placeholder one, until the poster
# certifies the DCO and names the tool assistance, and without the thread
# links the cover letters name.  By default one thread per series of this
# base: the watch-by-fd series without /dev/inotify (its post-series),
# the event-path series and the fanotify series, in $(POST_OUT),
# $(POST_OUT)-event-path and $(POST_OUT)-fanotify.  POST_SERIES names
# others: $(FD_SERIES)/dev-inotify posts /dev/inotify on top of the fd
# series (its cover letter needs POST_FD_THREAD, the fd thread's link).
# make post posts from 7.2, the base next to mainline, unless KERNEL is
# given (make post KERNEL=6.1).  On 7.2 the cover letters' @BASE@ is the
# pin above; POST_BASE_COMMIT=<40 hex digits> adds a base-commit line.
POST_SERIES ?= $(SERIES)
post_out = $(POST_OUT)$(if $(filter-out $(FD_SERIES),$(1)),-$(notdir $(1)))
ifeq ($(KERNEL),7.2)
POST_ENV := POST_BASE="Linux $(firstword $(subst -, ,$(LINUX72_VERSION))), as Debian's linux-source-7.2 $(LINUX72_VERSION) ships it"
endif
ifeq ($(origin KERNEL),file)
post:
	@$(MAKE) --no-print-directory post KERNEL=7.2
else
post: $(STAMP)
	@$(POST_ENV) scripts/post.sh $(KSRC) $(foreach s,$(POST_SERIES),$(s) $(call post_out,$(s)))
endif

# make post on every series of this base, as committed, against the tree,
# and the /dev/inotify thread (a test identity;
# tests/harness/post_series_check.sh).
post-check: $(STAMP)
	@$(POST_ENV) tests/harness/post_series_check.sh $(KSRC) \
		$(B)/post-check$(if $(filter-out 6.1,$(KERNEL)),-$(KERNEL)) $(SERIES) $(FD_SERIES)/dev-inotify

# Host tests of the harness itself: the KVM probe falls back within its
# bound (fake QEMUs), the progress filter, the bench report generator,
# make post's identity checks (tests/harness/post_test.sh).
# The guest run's memory and time bounds as this variant's recipes pass
# them (tests/harness/run_guest_test.sh: a DEBUG=1 sub-make of a default
# make gets the debug kernel's, as make check's debug suite does).
guest-env:
	@echo $(GUEST_ENV)

harness-check:
	@rc=0; for t in tests/harness/*_test.sh; do $$t || rc=1; done; exit $$rc

# The test command, in two lanes (scripts/check-lanes.sh).  The kernel
# lane, in the foreground, boots guests one after the other: on 6.1 (what
# Debian 12 runs) the uapi header, checkpatch, make post of each series
# and the guest suite, again the guest suite on the debug kernel (KASAN,
# lockdep, kmemleak, UBSAN), then on 7.2, the posting base, the same
# checks and its guest suite.  The guests are the critical path: a TCG
# guest keeps one core busy, and they cannot share it.  The host lane, in
# the background and niced, does everything else on the other core: it
# builds the kernels the kernel lane boots next (6.1 debug, then 7.2,
# fetched first), runs the host tests, and builds every 7.2 patch on its
# own (series-check).  A lane that needs a kernel the other is building
# waits for it (BUILD_LOCK).  The library and the examples, which both
# lanes use, are built first.  make check-all adds the per-patch builds
# on 6.1, the debug guest suite on 7.2 and all of 6.12 (make check stays
# within CI's bound; README, "What each target covers").  DEBUG=1 runs
# only the debug guest suite; KERNEL=6.12 or 7.2 the host tests and that
# base's kernel checks only.
HOST_CHECKS := probe-check oracle oracle-fanotify harness-check unit failnth watch-fd-check python-check install-check deb-check fuzz
ifeq ($(DEBUG),1)
KERNEL_LANE := uapi-check checkpatch guest-check sem-table-check
HOST_LANE   := $(HOST_CHECKS)
else ifneq ($(KERNEL),6.1)
KERNEL_LANE := kernel-check
HOST_LANE   := $(HOST_CHECKS)
else
KERNEL_LANE := kernel-lane-6.1
HOST_LANE   := kernel-debug kernel-7.2 $(HOST_CHECKS) series-check-7.2
endif
check: need
	@$(MAKE) --no-print-directory lib examples
	@MAKE='$(MAKE)' scripts/check-lanes.sh $(B)/host-checks "$(HOST_LANE)" $(KERNEL_LANE)

# make check's kernel lane on 6.1 (not a target of its own to use: 7.2's
# series-check is in the host lane)
kernel-lane-6.1: uapi-check checkpatch post-check guest-check
	@$(MAKE) --no-print-directory sem-table-check
	@$(MAKE) --no-print-directory guest-check DEBUG=1
	@$(MAKE) --no-print-directory uapi-check checkpatch post-check guest-check KERNEL=7.2

# make check's host lane on 6.1: the kernels the kernel lane boots next,
# and 7.2's per-patch builds
kernel-debug:
	@$(MAKE) --no-print-directory kernel DEBUG=1
kernel-7.2:
	@$(MAKE) --no-print-directory kernel KERNEL=7.2
series-check-7.2:
	@$(MAKE) --no-print-directory series-check KERNEL=7.2

# The host tests alone, in turn, their output on the terminal.
host-check: need $(HOST_CHECKS)

ifeq ($(KERNEL)$(DEBUG),6.10)
check-all: check
	@$(MAKE) --no-print-directory series-check
	@$(MAKE) --no-print-directory guest-check KERNEL=7.2 DEBUG=1
	@$(MAKE) --no-print-directory kernel-check KERNEL=6.12
else
check-all: check
endif

# One base's kernel checks: the uapi header, checkpatch, make post of
# each series, the guest suite, every patch building on its own.
kernel-check: uapi-check checkpatch post-check guest-check series-check

# Every patch builds on its own (incremental builds in $(SERIES_WORK)).
series-check: $(BZIMAGE)
	@scripts/series-build-check.sh $(KSRC) $(SERIES_WORK) $(KBUILD)/.config $(SERIES)

# ---------------------------------------------------------------- peers
# make peers: libinofd beside the other recursive watchers on one git work
# tree (scripts/peers.py, BENCHMARKS.md "make peers").  A benchmark, not a
# test: not in make check.  Its packages are its own list, installed here
# (as root) when missing, so that make deps and CI stay lean; node and npm
# are used as the machine has them (Debian's nodejs/npm only when there is
# no node at all).  @parcel/watcher and chokidar come from the npm registry
# into $(PEERS_DIR)/npm, once; without the registry they are skipped.
PEERS_PACKAGES := python3-watchdog inotify-tools fswatch watchman git xz-utils \
	gnuplot-nox linux-source-6.1 linux-source-6.12
PEERS_DIR  ?= $(CACHE)/peers
PEERS_DATE := $(shell date -u +%Y-%m-%d)
PEERS_LOG  ?= docs/bench/peers-$(PEERS_DATE).log
PEERS_SVG  ?= docs/bench/peers-$(PEERS_DATE).svg
peers: examples python
	@missing=$$(for p in $(PEERS_PACKAGES) $$(command -v node >/dev/null || echo nodejs npm); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		if [ "$$(id -u)" != 0 ]; then \
			echo "make peers: missing Debian packages: $$missing (run as root, or apt-get install them)"; \
			exit 1; fi; \
		echo "make peers: installing $$missing"; \
		apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends $$missing || exit 1; \
	fi
	@CACHE=$(CACHE) PEERS_DIR=$(PEERS_DIR) /usr/bin/python3 scripts/peers.py run \
		--log $(PEERS_LOG) --svg $(PEERS_SVG)

# ---------------------------------------------------------------- install, packages
# PREFIX (default /usr/local), LIBDIR, INCLUDEDIR, BINDIR, MANDIR and
# DESTDIR reach the sub-makes from the command line or the environment.
# A relative DESTDIR is taken from here.  The installed watch-fd uses the
# shared library (examples/shared/); the guest keeps its static build.
install: lib python
	@$(MAKE) --no-print-directory -C libinotify install DESTDIR=$(abspath $(DESTDIR))
	@$(MAKE) --no-print-directory -C examples install DESTDIR=$(abspath $(DESTDIR))
	@$(MAKE) --no-print-directory -C python install PYTHON=$(PYTHON) DESTDIR=$(abspath $(DESTDIR))

uninstall:
	@$(MAKE) --no-print-directory -C python uninstall PYTHON=$(PYTHON) DESTDIR=$(abspath $(DESTDIR))
	@$(MAKE) --no-print-directory -C examples uninstall DESTDIR=$(abspath $(DESTDIR))
	@$(MAKE) --no-print-directory -C libinotify uninstall DESTDIR=$(abspath $(DESTDIR))

install-check: lib python
	@PYTHON=$(PYTHON) scripts/install-check.sh $(B)/install-check

# dpkg-buildpackage on a copy of the tree (build/deb/src, without what
# .gitignore lists), so the working tree's own build is left alone; the
# packages and the lintian report land in build/deb/.
need-deb:
	@$(MAKE) --no-print-directory need NEED_PACKAGES="$(DEB_BUILD_PACKAGES)"

deb: need-deb
	@scripts/mk-deb.sh $(B)/deb

# In make check the unit tests have just run: the package build skips them.
deb-check: need-deb
	@DEB_BUILD_OPTIONS="nocheck noautodbgsym $(DEB_BUILD_OPTIONS)" DEB_BUILD_PROFILES=nocheck \
		scripts/mk-deb.sh $(B)/deb

clean:
	rm -rf $(B)
	-$(MAKE) -s -C libinotify clean
	-$(MAKE) -s -C examples clean
	-$(MAKE) -s -C tests/unit clean

distclean: clean
	rm -rf $(CACHE)

FORCE:
