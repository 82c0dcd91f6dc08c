#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of make peers' report (scripts/peers.py report) on a made-up
# log in the format peers.py run writes (the parser's input, not
# results): every figure of the table comes from the log, the ratios are
# each tool's mean over the libinofd-procfd row's, per-run values keep
# their order, a run that did not end well is named, a skipped tool is
# listed with its reason, the plot is drawn and is valid XML, and a log
# with no result, or a result without a number, is an error.
set -uo pipefail

. "$(dirname "$0")/tap.sh"	# $top, $t, ok, bad, check
peers=$top/scripts/peers.py

command -v gnuplot >/dev/null || { echo "not ok 1 - gnuplot missing: run 'make deps' (gnuplot-nox)"; exit 1; }

# random figures, so that a table cannot pass by holding fixed text (the
# ready time drawn at the 2 decimals the table prints: drawn at 3, a tie
# such as 0.115 rounded one way in printf(1) and the other in Python)
r() { awk -v s="$RANDOM$1" -v a="$2" -v b="$3" -v f="$4" 'BEGIN { srand(s); printf f, a + rand() * (b - a) }'; }
c1=$(r 1 1 3 %.2f) c2=$(r 2 1 3 %.2f) w1=$(r 3 5 9 %.2f) w2=$(r 4 5 9 %.2f)
m1=$(r 5 1500 2500 %.0f) m2=$(r 6 1500 2500 %.0f) wm1=$(r 7 14000 18000 %.0f) wm2=$(r 8 14000 18000 %.0f)
e1=$(r 9 100000 400000 %.0f) miss=$(r 10 1 60 %.0f) rd=$(r 11 0.05 0.2 %.2f)
cat > "$t/peers.log" <<LOG
peers: date 2026-12-05T09:00:00Z
peers: host cpu='AMD EPYC' cpus=2 kernel=6.1.0 mem_kib=1000 max_queued_events=16384 max_user_watches=8192 max_user_instances=128
peers: loadavg before 1.00 2.00 3.00 1/100 1
peers: tree subtrees='fs net' dirs_v6.1=1090 dirs_v6.12=1348 dirs_only_in_one=316 files_v6.1=1 files_v6.12=2 files_changed=3
peers: config runs=2 switches=6 quiet_s=2.0 work=/x
peers: tool name=libinofd-procfd version=abc123 mode='watch-fd -m -r ROOT'
peers: skip name=python-inofd reason='not importable here'
peers: tool name=watchdog version=2.2.1 mode='python3 w.py ROOT'
peers: tool name=fswatch version=1.14.0 mode='fswatch -r ROOT'
some line of a tool that is not the log's
peers: result name=libinofd-procfd run=1 status=ok ready_s=$rd own_ready_s=0.010 cpu_s=$c1 rss_kib=$m1 events=$e1 probes=1090 missing=0 wrong=0 overflows=0 switch_s=10.0 load1=1.0
peers: result name=watchdog run=1 status=ok ready_s=0.400 cpu_s=$w1 rss_kib=$wm1 events=5 probes=1090 missing=0 wrong=0 overflows=n/a switch_s=10.0 load1=1.0
peers: result name=fswatch run=1 status='exited:rc=1@switch 1' cpu_s=0.50 rss_kib=4000 events=7 probes=1090 missing=$miss wrong=2 overflows=1 switch_s=10.0 load1=1.0
peers: result name=libinofd-procfd run=2 status=ok ready_s=0.100 cpu_s=$c2 rss_kib=$m2 events=11 probes=1090 missing=0 wrong=0 overflows=0 switch_s=10.0 load1=1.0
peers: result name=watchdog run=2 status=ok ready_s=0.500 cpu_s=$w2 rss_kib=$wm2 events=6 probes=1090 missing=3 wrong=0 overflows=n/a switch_s=10.0 load1=1.0
peers: result name=fswatch run=2 status=ok ready_s=1.500 cpu_s=0.70 rss_kib=4100 events=8 probes=1090 missing=0 wrong=0 overflows=0 switch_s=10.0 load1=1.0
peers: loadavg after 4.00 5.00 6.00 1/100 1
LOG

out=$(/usr/bin/python3 "$peers" report "$t/peers.log" --svg "$t/p.svg" 2>"$t/err"); rc=$?
check "report exits 0" test $rc = 0
row() { echo "$out" | grep "^| $1 |"; }
ratio=$(awk -v a="$w1" -v b="$w2" -v c="$c1" -v d="$c2" 'BEGIN { printf "%.1fx", (a + b) / (c + d) }')
rratio=$(awk -v a="$wm1" -v b="$wm2" -v c="$m1" -v d="$m2" 'BEGIN { printf "%.1fx", (a + b) / (c + d) }')
mib=$(awk -v a="$wm1" 'BEGIN { printf "%.1f", a / 1024 }')
check "header row" grep -q '^| tool | version | ready (s) | CPU (s) | CPU / libinofd' <<<"$out"
check "the reference row is 1.0x" grep -q "^| libinofd-procfd | abc123 | $(printf %.2f "$rd") / 0.10 | $c1 / $c2 | 1.0x |" <<<"$out"
check "watchdog's CPU per run and its ratio ($ratio)" grep -qF "| $w1 / $w2 | $ratio |" <<<"$(row watchdog)"
check "watchdog's RSS in MiB and its ratio ($rratio)" grep -qF "| $mib / " <<<"$(row watchdog)"
check "watchdog's RSS ratio" grep -qF "| $rratio |" <<<"$(row watchdog)"
check "events per run" grep -qF "| $e1 / 11 |" <<<"$(row libinofd-procfd)"
check "missing probes per run, in run order" grep -qF "| $miss / 0 |" <<<"$(row fswatch)"
check "overflows a tool cannot report stay n/a" grep -qF "| n/a / n/a |" <<<"$(row watchdog)"
check "a run that ended badly is named" grep -qF "run 1: exited:rc=1@switch 1" <<<"$(row fswatch)"
check "a run without ready_s shows -" grep -qF "| - / 1.50 |" <<<"$(row fswatch)"
check "a skipped tool is listed with its reason" grep -qF "| python-inofd | - | skipped: not importable here |" <<<"$out"
check "the line of no one's is ignored" test "$(echo "$out" | grep -c '^| ')" = 5
check "the plot is drawn" test -s "$t/p.svg"
check "the plot is valid XML naming every tool" /usr/bin/python3 -c '
import sys, xml.dom.minidom as m
s = open(sys.argv[1]).read(); m.parseString(s)
sys.exit(0 if all(n in s for n in ("libinofd-procfd", "watchdog", "fswatch")) else 1)' "$t/p.svg"

grep -v '^peers: result' "$t/peers.log" > "$t/none.log"
/usr/bin/python3 "$peers" report "$t/none.log" >/dev/null 2>"$t/err"; rc=$?
check "a log without results is an error" test $rc = 1
check "... that says so" grep -q "no result line" "$t/err"
sed 's/cpu_s=[0-9.]* //' "$t/peers.log" > "$t/nocpu.log"
/usr/bin/python3 "$peers" report "$t/nocpu.log" >/dev/null 2>"$t/err"; rc=$?
check "a result without cpu_s is an error" test $rc = 1
sed '0,/cpu_s=[0-9.]*/s//cpu_s=lots/' "$t/peers.log" > "$t/nan.log"
/usr/bin/python3 "$peers" report "$t/nan.log" >/dev/null 2>"$t/err"; rc=$?
check "a cpu_s that is not a number is an error" test $rc = 1
/usr/bin/python3 "$peers" report "$t/missing.log" >/dev/null 2>&1; rc=$?
check "a log that does not exist is an error" test $rc = 1

echo "peers_report_test: $n checks, $fails failed"
[ $fails = 0 ]
