#!/bin/sh
# SPDX-License-Identifier: MIT
# Issue 21's stress, both sides, run by hand: ROUNDS rounds of four sessions at once on
# trigtarget-nopie (trig_hit called CALLS times), then the same with perf's own execute
# breakpoint. Prints how many workloads died of a signal on each side.
#
#   bench/trigger-stress.sh [ROUNDS] [CALLS]
#
#   ptcollect: two record --no-trace --trigger breakpoint:PROG:trig_hit=mark sessions and
#              two uprobe: ones per round ($PTCOLLECT_BIN, default build/ptcollect)
#   perf:      four perf record -e mem:ADDR:x sessions per round (ADDR: trig_hit, non-PIE);
#              perf record exits with its workload's signal (it re-raises it: 133 is SIGTRAP)
#
# Where the kernel or the hypervisor misdelivers debug traps (tests/kernel/README.md,
# "Stray debug traps"), perf's workloads and an unguarded ptcollect's die of SIGTRAP.
set -u
ROUNDS=${1:-6}
CALLS=${2:-3000}
top=$(cd "$(dirname "$0")/.." && pwd)
BIN=${PTCOLLECT_BIN:-$top/build/ptcollect}
PROG=${PROG:-$top/build/tests/progs/trigtarget-nopie}
PERF=${PERF:-perf}
[ -x "$BIN" ] && [ -x "$PROG" ] || { echo "build first: make build/tests/progs/trigtarget-nopie" >&2; exit 2; }
addr=$("$BIN" symbols "$PROG" trig_hit | awk '$NF == "trig_hit" { print $1 }')
[ -n "$addr" ] || { echo "no trig_hit in $PROG" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run SIDE ROUND I CMD...: one session in the background, its status in $tmp/SIDE.ROUND.I
run() {
	side=$1 r=$2 i=$3
	shift 3
	( "$@" >"$tmp/$side.$r.$i.out" 2>&1; echo $? >"$tmp/$side.$r.$i.rc" ) &
}

# tally SIDE LABEL: deaths and the exit statuses seen
tally() {
	n=0 dead=0 codes=""
	for f in "$tmp/$1".*.rc; do
		[ -e "$f" ] || continue
		n=$((n + 1))
		rc=$(cat "$f")
		[ "$rc" -gt 128 ] && { dead=$((dead + 1)); codes="$codes $rc"; }
	done
	echo "$2: $dead of $n workloads died of a signal${codes:+ (exit$codes)}"
}

for r in $(seq "$ROUNDS"); do
	for i in 1 2 3 4; do
		kind=breakpoint
		[ $i -gt 2 ] && kind=uprobe
		run "ptc-$kind" "$r" "$i" "$BIN" record --no-trace -q -o "$tmp/ptc.$r.$i" \
			--trigger "$kind:$PROG:trig_hit=mark" -- "$PROG" --no-wait "$CALLS"
	done
	wait
done
for r in $(seq "$ROUNDS"); do
	for i in 1 2 3 4; do
		run perf "$r" "$i" "$PERF" record -q -o "$tmp/perf.$r.$i.data" -e "mem:$addr:x" \
			-- "$PROG" --no-wait "$CALLS"
	done
	wait
done
echo "$(uname -r), $(nproc) CPUs, $ROUNDS rounds of 4 sessions, $CALLS calls each; $BIN"
tally ptc-breakpoint "ptcollect breakpoint"
tally ptc-uprobe "ptcollect uprobe    "
tally perf "perf mem:$addr:x"
