#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Bench 1d (tests/bench/bench_lib.c) with the batch scaled to this CPU's
# L2: a 64 KiB read's events (about 300 KiB with their paths) leave a
# 256 KiB L2, not this machine's 1 MiB one; a READ-byte read's events, READ
# = 256 KiB or more, leave it.  Host thread-CPU time, lib / raw, of:
#
#   shipped      the defaults (64 KiB read, streamed), raw reads 64 KiB
#   whole-64k    64 KiB, the batch parsed at once, raw reads 64 KiB
#   stream-READ  INOFD__READ_BUF=READ, streamed, raw reads READ bytes
#   whole-READ   INOFD__READ_BUF=READ, parsed at once, raw reads READ bytes
#
# The whole-READ row is the control: if it is not slower than stream-READ,
# this CPU cannot show what streaming saves.  Each variant runs RUNS times
# at depth 0 and 8, the variants alternating (others share the CPU); each
# run is bench_lib's median of ROUNDS alternating raw/lib rounds.  Prints
# every run's ratio, then per variant and depth the median, min and max
# of the runs and the events per read()/batch of the last run.  Thread
# CPU time, whole and outside read(2) (bench_lib built with
# BENCH_LIB_SPLIT): the latter is each reader's user-space work alone,
# where the caches weigh, without the kernel's share of each event.
# WARM=1 (the default) has each reader drain two reads' worth of events
# before its clock starts (BENCH_LIB_WARM): the library's buffers are then
# allocated and touched, as in a long-running reader, and no page fault
# is timed; WARM=0 times a fresh instance, as make bench-lib-host does.
#
#   scripts/bench-lib-l2.sh OUTDIR [READ] [NEV] [RUNS] [ROUNDS]
set -eu

out=$1
rd=${2:-262144}
nev=${3:-64000}
runs=${4:-5}
rounds=${5:-15}
warm=${WARM:-1}
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
. "$top/scripts/lib-variant.sh"

build() {	# NAME CPPFLAGS...
	name=$1
	shift
	d=$out/$name
	lib_variant "$d" "$@"
	# the bench as make builds build/host/bench_lib, and read(2) timed
	cc -static -O2 -g -Wall -Wextra -Werror -D_GNU_SOURCE \
		-DBENCH_LIB_SPLIT -Wl,--wrap=read -I"$top/include-uapi" -I"$top/libinotify/include" \
		"$top/tests/bench/bench_lib.c" -o "$d/bench_lib" \
		"$d/libinotify/libinofd.a" -lpthread
}

whole=-DINOFD__STREAM_RECS=1000000000
k=$((rd / 1024))k
build shipped
build whole-64k $whole
build "stream-$k" -DINOFD__READ_BUF="$rd"
build "whole-$k" -DINOFD__READ_BUF="$rd" $whole
vars="shipped whole-64k stream-$k whole-$k"

w=$(mktemp -d /dev/shm/inofd-bench-l2.XXXXXX)
trap 'rm -rf "$w"' EXIT
echo "# $nev events, $runs runs x $rounds rounds, WARM=$warm, $(uptime | sed 's/.*load/load/')"
for depth in 0 8; do
	i=1
	while [ "$i" -le "$runs" ]; do
		for v in $vars; do
			case $v in
			shipped|whole-64k) r=65536 ;;
			*) r=$rd ;;
			esac
			wn=0
			[ "$warm" = 0 ] || wn=$((r / 16))
			BENCH_LIB_READ=$r BENCH_LIB_WARM=$wn "$out/$v/bench_lib" \
				"$w/lib" "$nev" "$rounds" "$depth" > "$w/log"
			rm -rf "$w/lib"
			# events per raw read() and per lib batch, and
			# the library's page faults per 1000 events, the
			# last round
			per=$(awk -v n="$nev" '/^#   round/ {
				for (f = 1; f <= NF; f++) {
					if ($f == "reads") rr = $(f - 1)
					if ($f == "batches,") rb = $(f - 1)
					if ($f == "faults)") fl = $(f - 1)
				} }
				END { printf "%d %d %.1f", n / rr, n / rb,
				      fl * 1000 / n }' "$w/log")
			# raw / lib events per second: the ratio to 3 places
			# and each reader's ns per event; then the same
			# outside read(2)
			ratio=$(awk '/ratio lib\/raw/ {
				printf "%.3f %.1f %.1f", $(NF - 9) / $(NF - 5),
				       1e9 / $(NF - 9), 1e9 / $(NF - 5) }
				/outside read/ {
				printf " %.3f %s %s", $(NF - 3) / $(NF - 6),
				       $(NF - 6), $(NF - 3) }' "$w/log")
			set -- $ratio $per
			echo "$v $depth $i $1 $7 $8 $2 $3 $4 $5 $6 $9" >> "$w/all"
			echo "run $i depth $depth $v: lib/raw $1 (ns/event raw $2, lib $3; outside read(2) $4: raw $5, lib $6; events per read: raw $7, lib $8; lib faults per 1000 events $9)"
		done
		i=$((i + 1))
	done
done
echo "# variant depth: lib/raw median [min max] of $runs runs; median ns/event raw, lib;"
echo "# the same outside read(2); events per read(), raw / lib (NEV / reads:"
echo "# the last read is partial); the library's page faults per 1000 events"
med() {	# FIELD VARIANT DEPTH: median [min max] of a field over the runs
	awk -v v="$2" -v d="$3" -v f="$1" '$1 == v && $2 == d { print $f }' \
		"$w/all" | sort -n | awk -v p="${4:-3}" '{ a[NR] = $1 }
		END { m = a[int((NR + 1) / 2)]
		      if (NR % 2 == 0) m = (a[NR / 2] + a[NR / 2 + 1]) / 2
		      printf "%.*f [%s %s]", p, m, a[1], a[NR] }'
}
for depth in 0 8; do
	for v in $vars; do
		e=$(awk -v v="$v" -v d="$depth" '$1 == v && $2 == d {
			e = $5 " / " $6 ", " $12 " faults" } END { print e }' "$w/all")
		printf '%-14s depth %d: lib/raw %s  ns/event raw %s lib %s | outside read(2) %s  raw %s lib %s  (%s)\n' \
			"$v" "$depth" "$(med 4 "$v" "$depth")" \
			"$(med 7 "$v" "$depth" 0 | cut -d' ' -f1)" \
			"$(med 8 "$v" "$depth" 0 | cut -d' ' -f1)" \
			"$(med 9 "$v" "$depth" 2)" \
			"$(med 10 "$v" "$depth" 1 | cut -d' ' -f1)" \
			"$(med 11 "$v" "$depth" 1 | cut -d' ' -f1)" "$e"
	done
done
