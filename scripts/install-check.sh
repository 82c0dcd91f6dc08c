#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make install-check: install into a DESTDIR staging root, build a user's
# program against the staged tree with pkg-config alone, run it, then
# uninstall and require that nothing is left.  Host only, no root needed.
#
#   install-check.sh WORK     (run from the top of the source tree)
#
# WORK is emptied and used for the stage, the test programs and the logs.
set -euo pipefail

work=$1
prefix=/opt/inofd		# not the default: proves PREFIX is honoured
stage=$work/stage
root=$stage$prefix
CC=${CC:-cc}
PYTHON=${PYTHON:-/usr/bin/python3}

die() { echo "install-check: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$stage" "$work/watched"

make --no-print-directory install DESTDIR="$stage" PREFIX="$prefix" >"$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; die "make install failed"; }

# Exactly these files and links, nothing else.
version=$(make -s --no-print-directory -C libinotify version)
{
	echo "f bin/watch-fd"
	echo "f include/inofd.h"
	echo "f lib/libinofd.a"
	echo "l lib/libinofd.so -> libinofd.so.0"
	echo "l lib/libinofd.so.0 -> libinofd.so.$version"
	echo "f lib/libinofd.so.$version"
	echo "f lib/pkgconfig/libinofd.pc"
	[ ! -f man/man1/watch-fd.1 ] || echo "f share/man/man1/watch-fd.1"
	for m in libinotify/man/man3/*.3; do echo "f share/man/man3/${m##*/}"; done
	# the Python package: PREFIX/lib/python3/dist-packages off /usr, /usr/local
	for p in __init__.py asyncio.py watchdog.py _watch.py watchfiles.py _inofd.pyi py.typed \
		"_inofd$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')"; do
		echo "f lib/python3/dist-packages/inofd/$p"
	done
} | sort >"$work/expected"
(cd "$root" && find . -type l -printf 'l %P -> %l\n' && find . ! -type d ! -type l -printf '%y %P\n') |
	sort >"$work/installed"
(cd "$stage" && find . ! -type d ! -path "./${prefix#/}/*" -printf '%P\n') >"$work/outside"
[ ! -s "$work/outside" ] || die "installed outside PREFIX: $(tr '\n' ' ' <"$work/outside")"
diff -u "$work/expected" "$work/installed" >&2 || die "installed files differ from the list above"

soname=$(readelf -d "$root/lib/libinofd.so.$version" | sed -n 's/.*SONAME.*\[\(.*\)\]/\1/p')
[ "$soname" = libinofd.so.0 ] || die "soname is '$soname', not libinofd.so.0"

# The .pc names PREFIX, never the build tree or the stage.
pc=$root/lib/pkgconfig/libinofd.pc
! grep -n -e "$PWD" -e "$stage" "$pc" >&2 || die "$pc holds a build-machine path"
libdir=$(PKG_CONFIG_LIBDIR=$root/lib/pkgconfig pkg-config --variable=libdir libinofd)
[ "$libdir" = "$prefix/lib" ] || die "pkg-config libdir is $libdir, not $prefix/lib"

# A user's program, built with what pkg-config says about the staged tree.
export PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_LIBDIR=$root/lib/pkgconfig PKG_CONFIG_PATH=
flags=$(pkg-config --cflags --libs libinofd)
[ "$(pkg-config --modversion libinofd)" = "$version" ] || die "pkg-config --modversion is not $version"
$CC -Wall -Wextra -Werror -o "$work/use_inofd" tests/install/use_inofd.c $flags
# (outputs are captured first: grep -q ending a pipe early would fail the
# writer with SIGPIPE under pipefail)
dyn=$(readelf -d "$work/use_inofd")
grep -q 'NEEDED.*\[libinofd\.so\.0\]' <<<"$dyn" ||
	die "use_inofd is not linked against libinofd.so.0"
out=$(LD_LIBRARY_PATH=$root/lib "$work/use_inofd" "$work/watched") || die "use_inofd failed: $out"
grep -qx "library: $root/lib/libinofd.so.0" <<<"$out" ||
	die "use_inofd did not load the staged library: $out"
grep -q '^event: .*IN_CREATE hello$' <<<"$out" || die "use_inofd saw no IN_CREATE: $out"

# The same program against the static library.
rm -f "$work/watched/hello"
$CC -Wall -Wextra -Werror -o "$work/use_inofd_static" tests/install/use_inofd.c \
	$(pkg-config --cflags libinofd) $(pkg-config --libs-only-L libinofd) \
	-Wl,-Bstatic -linofd -Wl,-Bdynamic
dyn=$(readelf -d "$work/use_inofd_static")
! grep -q 'libinofd' <<<"$dyn" || die "use_inofd_static needs libinofd.so"
out=$("$work/use_inofd_static" "$work/watched") || die "use_inofd_static failed: $out"
grep -q '^event: .*IN_CREATE hello$' <<<"$out" ||
	die "use_inofd_static saw no IN_CREATE"

# The installed watch-fd runs on the staged library: it exits 0 on the
# first event, as inotifywait does without -m.
libs=$(LD_LIBRARY_PATH=$root/lib ldd "$root/bin/watch-fd")
grep -q "libinofd.so.0 => $root/lib/" <<<"$libs" ||
	die "the installed watch-fd does not use the staged libinofd.so.0"
LD_LIBRARY_PATH=$root/lib timeout 10 "$root/bin/watch-fd" -q -e create "$work/watched" \
	>"$work/watch-fd.out" 2>&1 &
pid=$!
for i in $(seq 50); do
	kill -0 $pid 2>/dev/null || break
	: >"$work/watched/new.$i"
	sleep 0.1
done
wait $pid || die "watch-fd exited $? (output: $(cat "$work/watch-fd.out"))"
grep -q 'new\.' "$work/watch-fd.out" || die "watch-fd printed no event: $(cat "$work/watch-fd.out")"

# The Python package imports from the stage alone (PYTHONPATH; the
# module has libinofd linked in) and sees an event.
pysite=$root/lib/python3/dist-packages
out=$(cd / && PYTHONPATH=$pysite PYTHONDONTWRITEBYTECODE=1 "$PYTHON" -c '
import os, sys, inofd, inofd.asyncio, inofd.watchdog
assert inofd.__file__.startswith(sys.argv[1]), inofd.__file__
with inofd.Instance() as ino:
    ino.watch_path(sys.argv[2], inofd.IN_CREATE)
    open(os.path.join(sys.argv[2], "py"), "w").close()
    print("python:", [e.fsname for e in ino.read(5)])
' "$pysite" "$work/watched" 2>&1) || die "python3 -c 'import inofd' from the stage failed: $out"
grep -qx "python: \['py'\]" <<<"$out" || die "the staged Python package saw no IN_CREATE: $out"

make --no-print-directory uninstall DESTDIR="$stage" PREFIX="$prefix" >>"$work/install.log" 2>&1 ||
	{ cat "$work/install.log" >&2; die "make uninstall failed"; }
left=$(cd "$stage" && find . ! -type d)
[ -z "$left" ] || die "make uninstall left: $left"

echo "install-check: $(wc -l <"$work/expected") files installed under DESTDIR$prefix, a pkg-config" \
	"build (shared and static) saw its event, watch-fd ran, Python imported inofd from the stage,"\
	"uninstall left nothing"
