#!/bin/sh
# make demo: build the bundled program (examples/hello.c), record it, show the bundle.
# Where this machine has no Intel PT, say so, and show what would be recorded.
set -eu
bin=$1
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/demo
mkdir -p "$out"
cc -O1 -g -o "$out/hello" "$top/examples/hello.c"

echo "== ptcollect caps"
if "$bin" caps; then
	echo "== ptcollect record -o $out/hello.data -- $out/hello"
	"$bin" record --force -o "$out/hello.data" -- "$out/hello"
	exit 0
fi
echo
echo "== This machine has no Intel PT (above: why). The plan ptcollect would carry out,"
echo "== resolved against a Skylake-class fixture PMU (tests/fixtures/pmu/skylake):"
PTCOLLECT_SYSFS=$top/tests/fixtures/pmu/skylake "$bin" record --dry-run --force \
	-o "$out/hello.data" -- "$out/hello"
