#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host test of scripts/sem-table.py on a made-up guest log in
# tests/guest/sem_table's format: the root and uid 65534 tables are
# merged cell by cell (equal cells once, different cells both), every
# cell comes from the log, and the check fails when DESIGN.md's copy or
# a log's table differs from the file.
set -uo pipefail

. "$(dirname "$0")/tap.sh"	# $top, $t, ok, bad, check
st=$top/scripts/sem-table.py

# random cells, so that the output cannot pass by holding fixed text
c1="CREATE(f$RANDOM)" c2="E$RANDOM" c3="ok; write: MODIFY$RANDOM"
table() { # uid cell-of-row-2-column-2
	cat <<TAB
# sem_table: begin uid=$1
# Kernel 6.1.0, run as someone; FAN_RENAME available.
# 
# | row | scenario | path inotify | INOTIFY_IOC_WATCH (fd closed) | fanotify inode mark (fd closed, DFID_NAME) |
# | --- | --- | --- | --- | --- |
# | create | create a file | $c1 | $c1 | $c1 |
# | opath (k) | O_PATH fd | ok | $2 | EBADF |
# sem_table: end
TAB
}
{ echo "[    1.0] a kernel line"; echo "ok 1 - smoke (root) # 0.1s"
  table 0 "$c3"; echo "ok 2 - sem_table (root) # 1s"
  table 65534 "$c2"; echo "ok 3 - sem_table (user) # 1s"; } > "$t/log"
"$st" extract "$t/log" "$t/doc.md" > /dev/null
check "extract: status 0" [ $? = 0 ]
check "same cell for both users given once: $c1" grep -qF "| create | create a file | $c1 | $c1 | $c1 |" "$t/doc.md"
check "different cells given both: $c3 / $c2" grep -qF "| opath (k) | O_PATH fd | ok | root: $c3 / uid 65534: $c2 | EBADF |" "$t/doc.md"
check "kernel line kept, user part dropped" grep -qF "Kernel 6.1.0; FAN_RENAME available." "$t/doc.md"
{ echo "# Design"; echo "<!-- semantics-table begin -->"; cat "$t/doc.md"
  echo "<!-- semantics-table end -->"; echo "more"; } > "$t/DESIGN.md"
check "check: the copy equals the file" "$st" check "$t/doc.md" "$t/DESIGN.md" "$t/log"
sed -i "s/| EBADF |/| EPERM |/" "$t/DESIGN.md"
"$st" check "$t/doc.md" "$t/DESIGN.md" > /dev/null
check "check: a changed copy fails" [ $? != 0 ]
sed -i "s/| EPERM |/| EBADF |/" "$t/DESIGN.md"
sed "s/| EBADF |/| ENODEV |/" "$t/log" > "$t/log2"
"$st" check "$t/doc.md" "$t/DESIGN.md" "$t/log2" > /dev/null
check "check: a log with another table fails" [ $? != 0 ]
table 0 x > "$t/log3"
"$st" extract "$t/log3" "$t/doc3.md" > /dev/null 2>&1
check "extract: a log without the uid 65534 table is an error" [ $? != 0 ]

echo "# sem-table: $((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
