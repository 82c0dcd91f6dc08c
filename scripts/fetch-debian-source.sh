#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch a Debian linux-source package into the cache and unpack its
# tarball, leaving the machine's apt configuration and cache alone.
#
#   fetch-debian-source.sh DIR PACKAGE VERSION SHA256 SUITE
#
# DIR/PACKAGE_VERSION_all.deb is kept; when it is missing, apt-get
# downloads it with a sources list of its own (deb.debian.org SUITE main,
# lists and archives under DIR).  The .deb must have the pinned SHA256.
# Its usr/src/PACKAGE.tar.xz is unpacked to DIR/PACKAGE.tar.xz.  The pin
# (version and checksum) lives in the Makefile, in one place.
set -euo pipefail

[ $# = 5 ] || { sed -n '4,13p' "$0" >&2; exit 2; }
dir=$1 pkg=$2 ver=$3 sum=$4 suite=$5
die() { echo "fetch-debian-source: $*" >&2; exit 1; }

deb=$dir/${pkg}_${ver}_all.deb
tarball=$dir/$pkg.tar.xz
mkdir -p "$dir"

if [ ! -f "$deb" ]; then
	echo "fetch-debian-source: downloading $pkg $ver from Debian $suite into $dir"
	apt=$dir/apt
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
		> "$apt/sources.list"
	o=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o Dir::Etc::sourceparts=-
	   -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	   -o Debug::NoLocking=1)
	apt-get "${o[@]}" -q update >/dev/null || die "apt-get update from Debian $suite failed"
	have=$(apt-cache "${o[@]}" show "$pkg" 2>/dev/null | sed -n 's/^Version: //p' | head -1)
	if [ "$have" != "$ver" ]; then
		die "Debian $suite has $pkg ${have:-(none)}, not the pinned $ver: set LINUX72_VERSION" \
			"and LINUX72_SHA256 in the Makefile to the new version and its .deb's sha256" \
			"(apt-cache show $pkg), then run make checkpatch series-check guest-check KERNEL=7.2"
	fi
	(cd "$dir" && apt-get "${o[@]}" -q download "$pkg=$ver") || die "apt-get download $pkg=$ver failed"
fi
got=$(sha256sum "$deb" | cut -d' ' -f1)
[ "$got" = "$sum" ] || die "$deb has sha256 $got, not the pinned $sum: remove it to fetch again," \
	"or, if Debian rebuilt $ver, set LINUX72_SHA256 in the Makefile"

if [ ! -f "$tarball" ] || [ "$tarball" -ot "$deb" ]; then
	echo "fetch-debian-source: unpacking usr/src/$pkg.tar.xz from $deb"
	rm -rf "$dir/x"
	dpkg-deb -x "$deb" "$dir/x"
	[ -f "$dir/x/usr/src/$pkg.tar.xz" ] || die "$deb has no usr/src/$pkg.tar.xz"
	mv "$dir/x/usr/src/$pkg.tar.xz" "$tarball.new"
	rm -rf "$dir/x"
	mv "$tarball.new" "$tarball"
	touch "$tarball"
fi
