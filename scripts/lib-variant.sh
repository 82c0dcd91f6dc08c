# Sourced by the bench scripts: lib_variant DIR CPPFLAGS... builds a copy
# of libinotify/ in DIR/libinotify with its own Makefile and CPPFLAGS (as
# the oracle's LIBINOFD= does: this tree's objects are not touched);
# DIR/libinotify/libinofd.a is the result.  Needs $top (the repository).
lib_variant() {
	d=$1
	shift
	rm -rf "$d" && mkdir -p "$d"
	cp -r "$top/libinotify" "$d/libinotify"
	make -s -C "$d/libinotify" clean >/dev/null
	CPPFLAGS="$*" make -s -C "$d/libinotify" libinofd.a >/dev/null
}
