#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# mklist.sh FLAG ROOTLOG USERLOG: one pending/FLAG.list line per seed that
# failed in either log (oracle -c N -n OPS -B procfd -FLAG, run as root and
# as uid 65534), with which users failed and the first divergence (BASE
# and the message's tail cut).  See README.
flag=$1 rootlog=$2 userlog=$3
ops=$(sed -n 's/^oracle: [0-9]* seed(s) x \([0-9]*\) ops.*/\1/p' "$rootlog" | head -1)
{
	sed -n 's/^FAIL seed \([0-9]*\) .*/\1 root/p' "$rootlog"
	sed -n 's/^FAIL seed \([0-9]*\) .*/\1 65534/p' "$userlog"
} | sort -n -k1,1 -k2,2 | awk '
	{ u[$1] = u[$1] ? u[$1] "+" $2 : $2; if (!($1 in seen)) { seen[$1] = 1; order[n++] = $1 } }
	END { for (i = 0; i < n; i++) print order[i], u[order[i]] }' |
while read -r seed users; do
	log=$rootlog
	case "$users" in 65534) log=$userlog ;; esac
	line=$(grep "^FAIL seed $seed (" "$log" | head -1)
	mode=$(echo "$line" | sed -n 's/.*\((-L: [^)]*)\)$/ \1/p')
	msg=$(echo "$line" |
		sed -e 's/^FAIL seed [0-9]* ([a-z]*): //' \
		    -e 's#/[^ ]*/inofd-oracle\.[A-Za-z0-9]*/##g' \
		    -e 's/ path names a path that no object had since the last quiescent point:/:/' \
		    -e 's/ event(s) with the tree.s data (want \([01]\)), .*/ tree event(s), want \1/' |
		sed 's/ (-L: [^)]*)$//' | cut -c1-150)
	echo "args: -s $seed -n $ops -$flag   # $users: $msg$mode"
done
