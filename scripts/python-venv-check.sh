#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make python-check: python/tests in a fresh-made venv of each interpreter,
# the package pip-installed there from python/ (offline:
# --no-build-isolation, the interpreter's own setuptools) and imported
# from the venv, never from the source tree (pytest runs from OUT).
#
#   python-venv-check.sh OUT PYTHON...      (PYTEST_ARGS: more pytest arguments)
#
# pytest and watchdog are Debian's (python3-pytest, python3-watchdog, pure
# Python): a venv of /usr/bin/python3 sees them through
# --system-site-packages, one of another 3.11 through a .pth file naming
# /usr/lib/python3/dist-packages, which comes after the venv's own
# site-packages (so the venv's inofd is the one imported).
set -euo pipefail

out=$1
shift
src=$(cd "$(dirname "$0")/../python" && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# one interpreter: its venv (made once), the package pip-installed there
install_one() {
	local py=$1 ver tag venv site start where
	ver=$("$py" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
	case $(readlink -f "$py") in
	/usr/bin/*) tag=debian-$ver ;;
	*/.pyenv/*) tag=pyenv-$ver ;;
	*) tag=$ver ;;
	esac
	venv=$out/venv-$tag
	if [ ! -x "$venv/bin/python" ]; then
		if [ "$(readlink -f "$py")" = "$(readlink -f /usr/bin/python3)" ]; then
			"$py" -m venv --system-site-packages "$venv"
		else
			"$py" -m venv "$venv"
			site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
			echo /usr/lib/python3/dist-packages >"$site/zz-debian-dist-packages.pth"
		fi
	fi
	start=$(date +%s)
	(cd "$out" && "$venv/bin/python" -m pip install -q --no-build-isolation --no-deps \
		--force-reinstall --disable-pip-version-check "$src") >"$out/pip-$tag.log" 2>&1 ||
		{ tail -30 "$out/pip-$tag.log"; echo "python-check: pip install failed ($tag)"; return 1; }
	where=$(cd "$out" && "$venv/bin/python" -c 'import inofd; print(inofd.__file__)')
	case $where in
	"$venv"/*) ;;
	*) echo "python-check: $tag imports inofd from $where, not the venv"; return 1 ;;
	esac
	echo "python-check: $tag: pip install in $(($(date +%s) - start))s, inofd from $where"
	venvs+=("$venv")
}

# pytest in one venv, from outside the tree
test_one() {
	# shellcheck disable=SC2086
	(cd "$out" && PYTHONDONTWRITEBYTECODE=1 "$1/bin/python" -m pytest -q \
		-p no:cacheprovider "$src/tests" ${PYTEST_ARGS:-})
}

# The installs one after the other (each builds in python/build), then
# the suites side by side (they mostly wait for events).
venvs=()
for py in "$@"; do
	install_one "$py" || exit 1
done
pids=()
logs=()
for venv in "${venvs[@]}"; do
	log=$out/check-${venv##*/venv-}.log
	test_one "$venv" >"$log" 2>&1 &
	pids+=($!)
	logs+=("$log")
done
rc=0
for i in "${!pids[@]}"; do
	wait "${pids[$i]}" || rc=1
	echo "python-check: ${venvs[$i]##*/venv-}: pytest"
	sed 's/^/  /' "${logs[$i]}" | grep -v '^  \.*\s*\[' || true
done
[ $rc = 0 ] && echo "python-check: passed in $# interpreters" || echo "python-check: FAILED"
exit $rc
