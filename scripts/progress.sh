#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Progress for long work, without hiding what matters.
#
#   progress.sh kbuild LABEL BUILDDIR ESTIMATE LOG -- MAKE-COMMAND...
#	Run a kernel build (kbuild without -s, so it prints its quiet
#	"  CC      path.o" lines) and show objects built against the
#	expected count, and the elapsed time.  Every other line (compiler
#	warnings and errors, "Kernel: ... is ready") passes through in full.
#	The expected count is the number of objects the last complete build
#	in BUILDDIR left (BUILDDIR/.inofd-objects), or ESTIMATE before there
#	was one, less the objects already there; a build over an existing
#	vmlinux is incremental and shows the count alone.  LOG ("-" for none)
#	receives every line.  Exits with the build's status.
#
#   progress.sh guest LABEL
#	Filter for a guest run's output (make bench, make soak): every line
#	passes through; "bench: plan N steps" and "=== ID ..." (bench steps),
#	or a TAP plan and results (soak), drive a step counter with the time
#	spent in the current step and in all.
#
# On a terminal the progress is one line, redrawn in place (\r); otherwise
# it is a line every PROGRESS_EVERY seconds (default 10), so logs stay short.
set -uo pipefail

every=${PROGRESS_EVERY:-10}
if [ -n "${PROGRESS_TTY:-}" ]; then
	tty=$PROGRESS_TTY
elif [ -t 1 ]; then
	tty=1
else
	tty=0
fi

start=$EPOCHSECONDS
last_line=0		# when a progress line was last printed (not a terminal)
shown=0			# a progress line is on the terminal now

hms() {
	local s=$1
	if [ "$s" -ge 3600 ]; then
		printf '%dh%02dm%02ds' $((s / 3600)) $((s % 3600 / 60)) $((s % 60))
	else
		printf '%dm%02ds' $((s / 60)) $((s % 60))
	fi
}

# pass LINE: print a line of the wrapped command's output in full
pass() {
	if [ "$shown" = 1 ]; then
		printf '\r\033[K'
		shown=0
	fi
	printf '%s\n' "$1"
}

# status TEXT [force]: the progress line
status() {
	if [ "$tty" = 1 ]; then
		printf '\r\033[K%s' "$1"
		shown=1
	elif [ -n "${2:-}" ] || [ $((EPOCHSECONDS - last_line)) -ge "$every" ]; then
		printf '%s\n' "$1"
		last_line=$EPOCHSECONDS
	fi
}

# finish TEXT: the last word, on a line of its own in both modes
finish() {
	[ "$shown" = 1 ] && printf '\r\033[K'
	shown=0
	printf '%s\n' "$1"
}

# read_line: the next line into $line; 0 = a line, 1 = end of input,
# 2 = a second passed without a complete line (partial input is kept).
partial=
read_line() {
	local r
	IFS= read -r -t 1 line
	r=$?
	if [ $r = 0 ]; then
		line=$partial$line
		partial=
		return 0
	elif [ $r -gt 128 ]; then
		partial=$partial$line
		return 2
	fi
	line=$partial$line
	partial=
	[ -n "$line" ] && return 0	# a last line without newline
	return 1
}

kbuild_filter() {
	local label=$1 expect=$2 log=$3 n=0 text r
	while :; do
		read_line
		r=$?
		[ $r = 1 ] && break
		if [ $r = 0 ]; then
			[ -n "$log" ] && printf '%s\n' "$line" >> "$log"
			case "$line" in
			"  "[A-Z]*)
				# a quiet kbuild line: "  CC      fs/stat.o"
				case "$line" in *.o) n=$((n + 1)) ;; esac
				;;
			"make"*": Entering directory"* | "make"*": Leaving directory"*) ;;
			*) pass "$line" ;;
			esac
		fi
		text="$label: $n"
		if [ -n "$expect" ] && [ "$expect" -gt 0 ]; then
			text="$text/$expect objects ($((n > expect ? 99 : n * 100 / expect))%)"
		else
			text="$text objects rebuilt"
		fi
		status "$text, $(hms $((EPOCHSECONDS - start)))"
	done
	echo "$n" > "$log_count"
}

kbuild() {
	local label=$1 bdir=$2 estimate=$3 log=$4 expect='' have total rc
	shift 4
	[ "${1:-}" = -- ] && shift
	[ "$log" = - ] && log=
	[ -n "$log" ] && : > "$log"
	mkdir -p "$bdir"
	if [ ! -e "$bdir/vmlinux" ]; then
		total=$(cat "$bdir/.inofd-objects" 2>/dev/null || echo "$estimate")
		have=$(find "$bdir" -name '*.o' 2>/dev/null | wc -l)
		expect=$((total > have ? total - have : 0))
	fi
	log_count=$(mktemp)
	"$@" 2>&1 | kbuild_filter "$label" "$expect" "$log"
	rc=${PIPESTATUS[0]}
	n=$(cat "$log_count")
	rm -f "$log_count"
	if [ "$rc" != 0 ]; then
		finish "$label: FAILED (status $rc) after $(hms $((EPOCHSECONDS - start))), $n objects built"
		return "$rc"
	fi
	# the expected count of the next cold build of this variant: only
	# after a complete one (not make -n, not a single-object target)
	if [ -n "$expect" ] && [ "$n" -gt 0 ] && [ -e "$bdir/vmlinux" ]; then
		find "$bdir" -name '*.o' | wc -l > "$bdir/.inofd-objects"
	fi
	finish "$label: $n objects built in $(hms $((EPOCHSECONDS - start)))"
	return 0
}

guest_filter() {
	local label=$1 plan='' step=0 name='' t0=$start unit=step r text
	while :; do
		read_line
		r=$?
		[ $r = 1 ] && break
		if [ $r = 0 ]; then
			pass "$line"
			case "$line" in
			"bench: plan "*" steps"*)
				plan=${line#bench: plan }
				plan=${plan%% *}
				;;
			"=== inofd "*) ;;
			"=== "*)
				step=$((step + 1))
				name=${line#=== }
				name=${name%% *}
				t0=$EPOCHSECONDS
				;;
			1..[0-9]*)
				plan=${line#1..}
				unit='test'
				step=1
				t0=$EPOCHSECONDS
				;;
			"ok "[0-9]* | "not ok "[0-9]*)
				step=$((step + 1))
				t0=$EPOCHSECONDS
				;;
			esac
		fi
		[ "$step" = 0 ] && continue
		if [ -n "$plan" ] && [ "$step" -gt "$plan" ]; then
			continue
		fi
		text="$label: $unit $step${plan:+/$plan}${name:+ $name}"
		status "$text, $(hms $((EPOCHSECONDS - t0))) in it, $(hms $((EPOCHSECONDS - start))) in all"
	done
	[ "$shown" = 1 ] && printf '\r\033[K'
	return 0
}

case "${1:-}" in
kbuild)
	shift
	[ $# -ge 6 ] || { echo "usage: progress.sh kbuild LABEL BUILDDIR ESTIMATE LOG -- CMD..." >&2; exit 2; }
	kbuild "$@"
	;;
guest)
	guest_filter "${2:-guest}"
	;;
*)
	echo "usage: progress.sh kbuild LABEL BUILDDIR ESTIMATE LOG -- CMD... | progress.sh guest LABEL" >&2
	exit 2
	;;
esac
