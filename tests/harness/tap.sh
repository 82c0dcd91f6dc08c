# SPDX-License-Identifier: GPL-2.0
#
# Sourced by every tests/harness/*_test.sh (bash): the project's top
# directory in $top, a scratch directory in $t (removed on exit), and TAP
# results: ok WHAT, bad WHAT, check WHAT COMMAND... (ok when COMMAND
# succeeds); $n results so far, $fails of them failed.
top=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fails=0
n=0

ok() { n=$((n + 1)); echo "ok $n - $*"; }
bad() { n=$((n + 1)); echo "not ok $n - $*"; fails=$((fails + 1)); }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
