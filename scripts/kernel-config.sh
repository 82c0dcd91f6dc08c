#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Generate KBUILD/.config from tinyconfig plus the fragments given.
#
#   kernel-config.sh KSRC KBUILD FRAGMENT...
#
# The new .config replaces the old one only when it differs, so an
# unchanged configuration never triggers a rebuild.  Every option a
# fragment sets must survive olddefconfig: a dependency that silently
# drops an option is an error here, not a surprise in the guest.
set -euo pipefail

ksrc=$1
kbuild=$2
shift 2

die() { echo "kernel-config: $*" >&2; exit 1; }

tmp="$kbuild/.config-gen"
rm -rf "$tmp"
mkdir -p "$tmp"
make -s -C "$ksrc" O="$tmp" ARCH=x86_64 tinyconfig >/dev/null
KCONFIG_CONFIG="$tmp/.config" "$ksrc/scripts/kconfig/merge_config.sh" -m -O "$tmp" \
	"$tmp/.config" "$@" >/dev/null
make -s -C "$ksrc" O="$tmp" ARCH=x86_64 olddefconfig >/dev/null

missing=0
# a later fragment's setting of an option overrides an earlier one's
# (debug.config unsets what guest.config sets): only the last is checked
later_sets() { # OPTION FRAGMENT...: does a fragment after the first set it?
	local opt=$1
	shift 2
	[ $# -gt 0 ] && grep -qE -- "^($opt=|# $opt is not set)" "$@"
}
while [ $# -gt 0 ]; do
	frag=$1
	while read -r line; do
		opt=${line#\# }
		opt=${opt%%[= ]*}
		case "$opt" in CONFIG_*) ;; *) opt= ;; esac
		if [ -n "$opt" ] && later_sets "$opt" "$@"; then
			continue
		fi
		case "$line" in
		CONFIG_*=*)
			if ! grep -qx -- "$line" "$tmp/.config"; then
				echo "kernel-config: $frag: '$line' did not survive olddefconfig" >&2
				missing=1
			fi
			;;
		'# CONFIG_'*' is not set')
			opt=${line#\# }
			opt=${opt%% *}
			if grep -q "^$opt=" "$tmp/.config"; then
				echo "kernel-config: $frag: '$opt' should be unset" >&2
				missing=1
			fi
			;;
		esac
	done < "$frag"
	shift
done
[ "$missing" = 0 ] || die "fix the fragment (or its dependencies)"

if ! cmp -s "$tmp/.config" "$kbuild/.config"; then
	cp "$tmp/.config" "$kbuild/.config"
	echo "kernel-config: wrote $kbuild/.config"
fi
rm -rf "$tmp"
