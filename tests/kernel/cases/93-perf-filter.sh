# perf record --filter: perf computes the filter string, the kernel resolves it.
. /lib.sh
have_perf || { skip perf_filter_resolved "perf is not in this guest"; exit 0; }
set_param pattern 1
if perf_record filter -e intel_pt//u --filter 'filter 0x1100/0x800 @ /bin/busybox' \
	-- /bin/busybox sh -c ". /lib.sh; work 3000"; then
	cat "$D/sim/filters"
	grep -q '^0 filter 0x[0-9a-f]*100 0x800$' "$D/sim/filters" && pass perf_filter_resolved ||
		fail perf_filter_resolved "not resolved to a 0x800-byte range at file offset 0x1100"
else
	fail perf_filter_resolved "perf record failed"
fi
