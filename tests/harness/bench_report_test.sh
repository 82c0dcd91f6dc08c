#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of scripts/bench-report.py on made-up logs in run.sh's format
# (the parser's input, not results): every figure in the tables comes
# from the log, the SVGs are drawn and are valid XML, a row no rule knows
# is kept verbatim, a plot without data is not drawn, and a log without
# steps is an error.
set -uo pipefail

. "$(dirname "$0")/tap.sh"	# $top, $t, ok, bad, check
report=$top/scripts/bench-report.py

command -v gnuplot >/dev/null || { echo "not ok 1 - gnuplot missing: run 'make deps' (gnuplot-nox)"; exit 1; }

# random figures, so that a table cannot pass by holding fixed text
# (with the precision the bench programs print them)
r() { awk -v s="$RANDOM" -v a="$1" -v b="$2" -v f="${3:-%.2f}" 'BEGIN { srand(s); printf f, a + rand() * (b - a) }'; }
p1=$(r 1.0 2.0) f1=$(r 1.0 2.0) p2=$(r 1.0 3.0) f2=$(r 1.0 3.0)
u1=$(r 1 20 %.1f) u2=$(r 1 20 %.1f) u3=$(r 1 20 %.1f) d0=$(r 1 3) d8=$(r 1 4)
hp=$(r 100 900 %.0f)
a1=$(r 1.0 3.0) a2=$(r 1.0 3.0) be=$(r 30 90 %.1f) er=$(r 1 9 %.1f)
u4=$(r 1 20 %.1f) wr=$(r 0.5 2.0)
cat > "$t/full.log" <<LOG
[    0.000000] Linux version 6.1.0 (a kernel line before the guest starts)
inofd: guest userspace up at 0.9s
=== inofd bench ===
bench: 2 cpus, 6.1.0, MemTotal: 490000 kB
bench: plan 4 steps
=== 1a.all nonotify, busybox sh echo >> loop, IN_ALL_EVENTS
# writer on CPU 0, consumer on CPU 1: yes
#   round 1 none          8.500 s  0 events
notify writer=sh lines=100000 mask=0xfff consumer=drain mode=none       median 8.000 s  ratio 1.00  min 8.000 s  ratio 1.00  (80.0 us/line, events/run 0)
notify writer=sh lines=100000 mask=0xfff consumer=drain mode=path       median 9.000 s  ratio $p1  min 9.000 s  ratio 1.10  (90.0 us/line, events/run 300001)
notify writer=sh lines=100000 mask=0xfff consumer=drain mode=fd(closed) median 9.000 s  ratio $f1  min 9.000 s  ratio 1.11  (90.0 us/line, events/run 300001)
# (100.0 s)
=== 1a.c-user nonotify, C writer, as uid 65534
notify writer=c lines=100000 mask=0xfff consumer=drain uid=65534 mode=none       median 0.400 s  ratio 1.00  min 0.400 s  ratio 1.00  (4.0 us/line, events/run 0)
notify writer=c lines=100000 mask=0xfff consumer=drain uid=65534 mode=path       median 0.900 s  ratio 2.10  min 0.900 s  ratio 2.20  (9.0 us/line, events/run 300001)  bytes/event 32.0  events/read 1.5
notify writer=c lines=100000 mask=0xfff consumer=drain uid=65534 mode=fd(closed) median 0.900 s  ratio 2.11  min 0.900 s  ratio 2.21  (9.0 us/line, events/run 300001)  bytes/event 32.0  events/read 1.5
notify writer=c lines=100000 mask=0xfff consumer=drain uid=65534 mode=fanotify   median 0.900 s  ratio $a1  min 0.900 s  ratio $a2  (9.0 us/line, events/run 290000)  bytes/event $be  events/read $er
=== 1a.c nonotify, C writer
notify writer=c lines=100000 mask=0xfff consumer=drain mode=none       median 0.400 s  ratio 1.00  min 0.400 s  ratio 1.00  (4.0 us/line, events/run 0)
notify writer=c lines=100000 mask=0xfff consumer=drain mode=path       median 0.900 s  ratio $p2  min 0.900 s  ratio 2.20  (9.0 us/line, events/run 300001)
notify writer=c lines=100000 mask=0xfff consumer=drain mode=fd(closed) median 0.900 s  ratio $f2  min 0.900 s  ratio 2.21  (9.0 us/line, events/run 300001)
=== 1b.scale setup at several sizes
setup n=1000 depth=8 method=path         median 11.0 ms  $u1 us/watch  ratio vs path 1.00
setup n=10000 depth=8 method=path         median 116.0 ms  $u2 us/watch  ratio vs path 1.00
setup n=100000 depth=8 method=path         median 1160.0 ms  $u3 us/watch  ratio vs path 1.00
scale dirs=1000 method=lib  $u1 us/watch  heap 88 bytes/watch
scale method=libinofd-tree n=101001 median 9145.9 ms $u2 us/watch heap $hp B/watch
scale-ratio watches=101001 lib/bare 1.89 (of minimums 1.26) per-watch-vs-first 1.91 (of minimums 1.10) (tree made in 3.6 s)
setup n=10000 depth=8 uid=65534 method=fan-fd+open  median 116.0 ms  $u4 us/watch  ratio vs path 1.00  vs fd 2.50  vs fd+rdopen 0.97
refusal uid=65534 method=fan-fd(O_PATH) fanotify_mark on an O_PATH fd: EBADF
walkers dirs=5097 uid=65534 bare-inotify-walker median 300.0 ms  bare-fanotify-walker median 330.0 ms  fanotify/inotify $wr (of minimums 1.01)
memory method=path     watches=10000  meminfo Slab 114 bytes/watch  fds held after setup: 4 (stdin, stdout, stderr and the instance)
=== 1b.walker a row this generator does not know
[   12.345678] a kernel message in the middle
walker dirs=5097 bare C walker 123.4 ms | lib/walker 1.05
=== 1d events/s
lib events=100000 raw read() 1190000 events/s  libinofd iterator 420000 events/s  ratio lib/raw time $d0
lib events=100000 depth=8 raw read()+path 1000000 events/s  libinofd iterator 300000 events/s  ratio lib/raw time $d8
bench: done, status 0
=== inofd bench exit 0 ===
LOG
out=$("$report" "$t/full.log" "$t/out" 2>&1)
rc=$?
echo "# $out"
md=$t/out/bench.md
check "full log: status 0" [ "$rc" = 0 ]
check "1a.all row: path $p1, fd $f1 from the log" grep -q "^| 1a.all | — | sh | 0xfff | drain | 8.000 s | $p1 | $f1 | — | 1.10 | 1.11 | — | 300001 | — |$" "$md"
check "1a.c row: path $p2, fd $f2 from the log" grep -q "^| 1a.c | — | c | 0xfff | drain | 0.400 s | $p2 | $f2 |" "$md"
check "1a.c-user row: fanotify $a1 / $a2 of minimums, as 65534" grep -q "^| 1a.c-user | 65534 | c | 0xfff | drain | 0.400 s | 2.10 | 2.11 | $a1 | 2.20 | 2.21 | $a2 | 300001 | 290000 |$" "$md"
check "read cost row: fanotify $be bytes/event, $er events/read" grep -q "^| 1a.c-user | 65534 | drain | fanotify | $be | $er | 290000 |$" "$md"
check "setup row: fan-fd+open $u4 us, as 65534" grep -q "^| 1b.scale | 65534 | 10,000 | 8 | fan-fd+open | 116.0 ms | $u4 µs | 1.00 | 2.50 | 0.97 |$" "$md"
check "walkers row: fanotify/inotify $wr" grep -q "^| 1b.scale | 65534 | 5,097 | 300.0 ms | 330.0 ms | $wr | 1.01 |$" "$md"
check "O_PATH refusal kept verbatim" grep -qF 'fanotify_mark on an O_PATH fd: EBADF' "$md"
check "scale rows: $u1 / $u2 / $u3 us per watch" \
	bash -c "grep -q '| 1,000 | 8 | path | 11.0 ms | $u1 µs' '$md' && grep -q '| 100,000 | 8 | path | 1160.0 ms | $u3 µs' '$md'"
check "a scale row in another format: lib, $u1 us per watch" grep -q "^| 1b.scale | — | 1,000 |  | lib | — | $u1 µs | — | — | — |$" "$md"
check "tree scale row: $u2 us and $hp B heap per watch" \
	bash -c "grep -q '^| 1b.scale | — | 101,001 |  | libinofd-tree | 9145.9 ms | $u2 µs | — | — | — |$' '$md' && grep -q '^| 1b.scale | 101,001 | libinofd-tree | $hp B |$' '$md'"
check "scale-ratio line kept verbatim" grep -qF 'scale-ratio watches=101001 lib/bare 1.89' "$md"
check "iterator rows: depth 0 ratio $d0, depth 8 ratio $d8" \
	bash -c "grep -q '^| 1d | 0 | 100000 | .* | $d0 |$' '$md' && grep -q '^| 1d | 8 | 100000 | .* | $d8 |$' '$md'"
check "iterator rows: raw rate in both formats (read() and read()+path)" \
	bash -c "grep -q '^| 1d | 0 | 100000 | 1,190,000 events/s |' '$md' && grep -q '^| 1d | 8 | 100000 | 1,000,000 events/s |' '$md'"
check "unknown row kept verbatim" grep -qF '| 1b.walker | `walker dirs=5097 bare C walker 123.4 ms \| lib/walker 1.05` |' "$md"
check "no kernel line taken for a result" bash -c "! grep -q 'kernel message' '$md'"
for svg in loop-ratios setup-scale iterator-depth; do
	check "$svg.svg drawn, valid SVG" python3 -c "
import sys, xml.etree.ElementTree as E
root = E.parse('$t/out/$svg.svg').getroot()
sys.exit(0 if root.tag.endswith('svg') else 1)"
	check "$svg.svg linked from bench.md" grep -q "($svg.svg)" "$md"
done
check "loop plot data from the log" \
	awk -v p="$p2" -v f="$f2" '$1 == "1a.c" && $2 == p + 0 && $3 == f + 0 { hit = 1 } END { exit !hit }' "$t/out/loop-ratios.dat"
check "loop plot: fanotify bar $a1 from the log" \
	awk -v a="$a1" '$1 == "1a.c-user" && $4 == a + 0 { hit = 1 } END { exit !hit }' "$t/out/loop-ratios.dat"
# only 1a rows: the other plots are not drawn, and bench.md says so
sed -n '1,/^=== 1b.scale/p' "$t/full.log" | grep -v '^=== 1b.scale' > "$t/loop.log"
"$report" "$t/loop.log" "$t/out2" > /dev/null 2>&1
check "1a only: loop plot drawn" [ -s "$t/out2/loop-ratios.svg" ]
check "1a only: no scale or depth plot" [ ! -e "$t/out2/setup-scale.svg" ] && [ ! -e "$t/out2/iterator-depth.svg" ]
check "1a only: bench.md says so" grep -q 'setup time per watch against the number of watches: no data in this log' "$t/out2/bench.md"
# stale plots of an earlier report in the same directory go
"$report" "$t/loop.log" "$t/out" > /dev/null 2>&1
check "rerun: stale plots removed" [ ! -e "$t/out/setup-scale.svg" ]
# a log with no steps (the guest never got to run.sh) is an error
printf 'Kernel panic - not syncing\n' > "$t/empty.log"
"$report" "$t/empty.log" "$t/out3" > /dev/null 2>&1
check "no steps: an error" [ $? != 0 ]

echo "# bench-report: $((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
