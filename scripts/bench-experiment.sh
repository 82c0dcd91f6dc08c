#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Benchmark an experimental kernel patch on top of the series, without
# touching the series or the cached trees the other targets use.
#
#   bench-experiment.sh PATCH KSRC KCONFIG INITRD WORKDIR [BENCH-IDS]
#
# WORKDIR/src is a git worktree of KSRC's "work" branch (the series) with
# PATCH applied by git am; WORKDIR/build is its build directory, with
# KCONFIG (the default guest .config) as its .config.  Then the guest boots
# in bench mode with inofd.bench=BENCH-IDS (default 1a.c: the change-mask
# and C-writer rows).  Rebuilds are incremental.
set -euo pipefail

patch=$(realpath "$1")
ksrc=$2
kconfig=$3
initrd=$4
work=$5
ids=${6:-1a.c}

die() { echo "bench-experiment: $*" >&2; exit 1; }
[ -f "$patch" ] || die "$patch: no such patch"
[ -d "$ksrc/.git" ] || die "$ksrc: no kernel tree (run make kernel first)"
[ -f "$kconfig" ] || die "$kconfig: no .config (run make kernel first)"

mkdir -p "$work"
src=$work/src
if [ ! -d "$src" ]; then
	git -C "$ksrc" worktree prune
	git -C "$ksrc" worktree add -q --detach "$src" work
fi
# always the series as it is now, plus the experiment
git -C "$src" checkout -q --detach work
git -C "$src" am -q "$patch" || { git -C "$src" am --abort; die "$patch does not apply"; }
mkdir -p "$work/build"
cmp -s "$kconfig" "$work/build/.config" || cp "$kconfig" "$work/build/.config"
make -s -C "$src" O="$work/build" -j"$(nproc)" olddefconfig bzImage
QEMU_TIMEOUT=3000 "$(dirname "$0")/run-guest.sh" bench \
	"$work/build/arch/x86/boot/bzImage" "$initrd" "$work/bench.log" \
	"inofd.bench=$ids"
