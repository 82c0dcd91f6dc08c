#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The host soak of issue 26's "Done means": fresh seeds of every generator
# set of tests/oracle (the same 11 sets as ORACLE_GENERATORS), on procfd
# and fanotify, as root and as uid 65534 (nobody).  make oracle-soak runs
# it; alone:
#
#   scripts/oracle-soak.sh BIN FIRST ROOT_SEEDS USER_SEEDS OUTDIR
#
# ROOT_SEEDS and USER_SEEDS are per set (91 x 11 = 1,001; 19 x 11 = 209).
# Root seeds start at FIRST (fanotify) and FIRST+1000 (procfd), uid 65534's
# at FIRST+2000 (procfd) and FIRST+3000 (fanotify).  Prints one line a run
# and exits 1 if any seed diverged.
set -u
bin=$1 first=$2 rs=$3 us=$4 out=$5
here=$(cd "$(dirname "$0")/.." && pwd)
G=("-N -C" "-X -C" "-R -C" "-L" "-N -X -R -C" "-M -C" "-E -N -C" "-Y -C"
   "-U -C" "-W -C" "-W -N -C")
mkdir -p "$out" || exit 1
# uid 65534 must read the binary and the script and write its logs
work=$(mktemp -d /tmp/oracle-soak.XXXXXX) || exit 1
trap 'rm -rf "$work"' EXIT
cp "$bin" "$work/oracle" && cp "$here/tests/oracle/gens.sh" "$work/" || exit 1
chmod 755 "$work" "$work/oracle" "$work/gens.sh"
rc=0
run() {	# name first seeds backend user
	local name=$1 f=$2 n=$3 b=$4 u=$5 log="$work/$1" r
	mkdir -p "$log" && chmod 777 "$log"
	if [ "$u" = root ]; then
		(cd "$work" && nice -n 19 ./gens.sh ./oracle "$n" "$f" 200 "$b" 2 \
			"$log" "" "${G[@]}") > "$out/$name.out" 2>&1
	else
		su nobody -s /bin/bash -c "cd $work && nice -n 19 ./gens.sh ./oracle $n $f 200 $b 2 $log '' $(printf '%q ' "${G[@]}")" \
			> "$out/$name.out" 2>&1
	fi
	r=$?
	[ "$r" = 0 ] || rc=1
	echo "oracle-soak: $name ($b, $u, seeds $f-$((f + n - 1)) x ${#G[@]} sets): $(grep 'seed(s)' "$out/$name.out" | awk '{s+=$2; f+=$(NF-2)} END {print s " seeds, " f " failing"}')"
}
run fan-root "$first" "$rs" fanotify root
run proc-root $((first + 1000)) "$rs" procfd root
run proc-user $((first + 2000)) "$us" procfd nobody
run fan-user $((first + 3000)) "$us" fanotify nobody
exit $rc
