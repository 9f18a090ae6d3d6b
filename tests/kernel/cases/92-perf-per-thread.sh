# perf record --per-thread -e intel_pt/branch=1/u
. /lib.sh
have_perf || { skip perf_per_thread "perf is not in this guest"; exit 0; }
set_param pattern 1
if perf_record thread --per-thread -e intel_pt/branch=1/u -- sh -c ". /lib.sh; work 10000"; then
	perf_packets thread
	[ "$(perf_count AUX thread.stats)" -gt 0 ] && [ "$psb" -gt 0 ] && [ "$bad" -eq 0 ] &&
		pass perf_per_thread || fail perf_per_thread "no AUX records or unclean packets"
else
	fail perf_per_thread "perf record failed"
fi
