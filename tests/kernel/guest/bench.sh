#!/bin/sh
# /test.sh of `make bench-kernel`: the same workload recorded by Debian's perf and by
# ptcollect at a few simulated trace rates; one "BENCH" line per run, for run-tests
# --bench to print side by side.  Figures: wall seconds of the whole record command,
# bytes the simulated hardware wrote (sim/stats), bytes captured (for perf the size of
# perf.data, marked "f"), TRUNCATED records.
. /lib.sh
cd /tmp || exit 1
now() { cut -d' ' -f1 /proc/uptime; }
run() { # TOOL RATE: record the workload once
	tool=$1 rate=$2
	rm -rf out out.data
	b0=$(stat bytes) t0=$(stat truncated) s=$(now)
	case $tool in
	perf) perf record -q -e intel_pt//u -o out.data -- sh -c '. /lib.sh; work 30000' >/dev/null 2>&1 ;;
	ptcollect) /ptcollect record -q -o out -- sh -c '. /lib.sh; work 30000' >/dev/null 2>&1 ;;
	esac
	rc=$?
	e=$(now)
	# ptcollect: the AUX bytes of the bundle; perf: the size of perf.data (decoding it
	# with `perf report -D` to count AUX bytes takes minutes under TCG)
	if [ "$tool" = perf ]; then got="$(wc -c <out.data)f"; else got=$(total_pt out); fi
	echo "BENCH rate=$rate tool=$tool rc=$rc wall=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.2f", b - a }')" \
		"written=$(($(stat bytes) - b0)) captured=${got:-?} truncated=$(($(stat truncated) - t0))"
}
for rate in chunk=512,period_us=1000 chunk=4096,period_us=250; do
	# shellcheck disable=SC2046 # two parameters
	reload $(echo "$rate" | tr , ' ') || exit 1
	have_perf && run perf "$rate"
	if /ptcollect help record >/dev/null 2>&1; then
		run ptcollect "$rate"
	else
		echo "BENCH rate=$rate tool=ptcollect skipped: record command not in this build"
	fi
done
exit 0
