#!/bin/sh
# make demo: build the bundled program (examples/hello.c), record it with Intel PT, and
# show the bundle with `ptcollect info`. Where this machine has no Intel PT, say so and run
# the same recording in the kernel rig (Debian's kernel in QEMU with a simulated intel_pt
# PMU, tests/kernel), so that a real bundle still comes out.
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
	echo "== ptcollect info $out/hello.data"
	"$bin" info "$out/hello.data"
	exit 0
fi

echo
echo "== This machine has no Intel PT (above: why). The same recording now runs in the"
echo "== kernel rig: Debian's kernel in QEMU, whose intel_pt PMU is simulated (the trace"
echo "== bytes are a known pattern, not real packets; the perf core, the rings, the"
echo "== sideband and the bundle are real)."
payload=$out/rig
rm -rf "$payload"
mkdir -p "$payload"
cp "$bin" "$payload/ptcollect"
cp "$out/hello" "$payload/hello"
cat >"$payload/test.sh" <<'GUEST'
#!/bin/sh
/rig-load pattern=1 || exit 1
cd /tmp
echo "== ptcollect caps (in the rig)"
/ptcollect caps | head -3
echo "== ptcollect record -o /tmp/hello.data -- /hello"
/ptcollect record -o /tmp/hello.data -- /hello || exit 1
echo "== ptcollect info /tmp/hello.data"
/ptcollect info /tmp/hello.data
for f in /tmp/hello.data/cpu*.pt; do
	[ -s "$f" ] || continue
	s=${f%.pt}.pevent
	# Whole into a file, then its head: a pipe that head leaves makes ptcollect say
	# "Broken pipe" and exit 1 (docs/faults.md), which is no part of the demo.
	echo "== ptcollect dump $s (first records)"
	/ptcollect dump "$s" >/tmp/sb.txt && head -6 /tmp/sb.txt
	echo "== ptcollect dump $f (libipt reads the simulated PSB/PSBEND/PAD stream)"
	/ptcollect dump "$f" >/tmp/pt.txt && head -4 /tmp/pt.txt
	break
done
GUEST
chmod +x "$payload/test.sh"
"$top/tests/kernel/rig" run --timeout 300 "$payload" 2>/dev/null |
	sed -n '/^== ptcollect caps (in the rig)/,/^RIG: test rc/p' | grep -v '^RIG: test rc'
