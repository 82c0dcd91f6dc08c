#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench 1d's two readers (tests/bench/bench_lib.c) on a simulated small
# cache: callgrind's cache simulator with a 32 KiB L1d and a 256 KiB last
# level, the caches of the CPUs on which a whole batch's events left the
# cache.  Host timings depend on the host's caches (this machine's 1 MiB
# L2 hides the effect); misses counted on a fixed model do not.
#
# Two builds of the library from this tree: "shipped" (the defaults) and
# "whole-batch" (a 64 KiB read parsed at once, as before the streamed
# iterator).  For each, depth 0 and 8, the misses and instructions per
# event of the library's reader (bench_lib's lib_drain()) and the raw
# loop's (raw_drain()).
#
#   scripts/bench-lib-cache.sh OUTDIR [NEV]
set -eu

out=$1
nev=${2:-16000}
top=$(cd "$(dirname "$0")/.." && pwd)
command -v valgrind >/dev/null || { echo "bench-lib-cache: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
mkdir -p "$out"
. "$top/scripts/lib-variant.sh"

build() {	# NAME CPPFLAGS...
	name=$1
	shift
	d=$out/$name
	lib_variant "$d" "$@"
	# the bench alone without inlining: lib() and raw() stay functions
	# callgrind can count apart
	cc -static -O2 -g -fno-inline -D_GNU_SOURCE -I"$top/include-uapi" \
		-I"$top/libinotify/include" "$top/tests/bench/bench_lib.c" \
		-o "$d/bench_lib" "$d/libinotify/libinofd.a" -lpthread
}

# one reader's Ir, D1 read misses, LL misses (read + write), per event
count() {	# BIN FN DEPTH
	w=$(mktemp -d /dev/shm/inofd-cg.XXXXXX)
	valgrind --tool=callgrind --cache-sim=yes --I1=32768,8,64 \
		--D1=32768,8,64 --LL=262144,8,64 --toggle-collect="$2" \
		--callgrind-out-file="$w/cg.out" "$1" "$w/t" "$nev" 1 "$3" \
		>/dev/null 2>"$w/err" || { cat "$w/err" >&2; rm -rf "$w"; exit 1; }
	# Collected : Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw
	awk -v n="$nev" '/Collected :/ {
		printf "%6.0f instr %5.2f D1-read-miss %5.2f LL-miss", \
		       $4 / n, $8 / n, ($11 + $12) / n }' "$w/err"
	rm -rf "$w"
}

build shipped
build whole-batch -DINOFD__READ_BUF=65536 -DINOFD__READ_MIN=16384 \
	-DINOFD__STREAM_RECS=1000000000
echo "# per event, $nev events; simulated 32 KiB L1d, 256 KiB LL (callgrind)"
for v in shipped whole-batch; do
	for depth in 0 8; do
		echo "$v depth $depth: lib $(count "$out/$v/bench_lib" lib_drain "$depth") | raw $(count "$out/$v/bench_lib" raw_drain "$depth")"
	done
done
