#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: build the Debian packages (debian/) and run lintian on them.
#
#   mk-deb.sh OUT      (run from the top of the source tree)
#
# The tree, less .git, build/ and what .gitignore lists, is copied to
# OUT/src and built there with dpkg-buildpackage -b -us -uc, so the working
# tree's own build is untouched; the .debs, .buildinfo, .changes and
# lintian.txt land in OUT.  DEB_BUILD_OPTIONS=nocheck skips the unit tests
# in the package build (make check has run them).  Fails on a build failure
# and on any lintian error or warning.
set -euo pipefail

out=$1
die() { echo "mk-deb: $*" >&2; exit 1; }

start=$(date +%s)
rm -rf "$out"
mkdir -p "$out/src"
rsync -a --exclude=/.git --exclude=/build/ --filter=':- .gitignore' ./ "$out/src/"

echo "deb: dpkg-buildpackage -b -us -uc in $out/src (log: $out/build.log)"
(cd "$out/src" && dpkg-buildpackage -b -us -uc) >"$out/build.log" 2>&1 ||
	{ tail -40 "$out/build.log" >&2; die "dpkg-buildpackage failed (see $out/build.log)"; }
changes=$(ls "$out"/*.changes)
built=$(($(date +%s) - start))
ls "$out"/*.deb | sed 's|.*/|deb:   |'

# -I --pedantic shows every tag; only errors and warnings fail.
lintian -I --pedantic --color never "$changes" 2>&1 |
	grep -v '^running with root privileges' >"$out/lintian.txt" || true
sed 's/^/lintian: /' "$out/lintian.txt"
if grep -q '^[EW]: ' "$out/lintian.txt"; then
	die "lintian reports errors or warnings (above; $out/lintian.txt)"
fi
echo "deb: $(ls "$out"/*.deb | wc -l) packages in ${built}s, lintian clean of errors and" \
	"warnings in $(($(date +%s) - start - built))s ($(grep -c . "$out/lintian.txt" || true) info/pedantic tags)"
