# Debian's perf records per-CPU through the simulated PMU, and its own PT packet
# decoder checks what it saved: pattern 1 clean, pattern 2 with one TSC per PSB+,
# pattern 0 (noise) must be flagged.  perf treats intel_pt as PT only on a
# GenuineIntel CPU (README, finding 1): AUXTRACE_INFO proves it did.
. /lib.sh
have_perf || { skip perf_per_cpu "perf is not in this guest"; exit 0; }
set_param pattern 1
if perf_record cpu -e intel_pt//u -- sh -c ". /lib.sh; work 20000"; then
	perf_packets cpu
	if [ "$(perf_count AUXTRACE_INFO cpu.stats)" -ne 1 ]; then
		fail perf_per_cpu "no AUXTRACE_INFO: perf did not treat the PMU as intel_pt"
	elif [ "$(perf_count AUX cpu.stats)" -eq 0 ] || [ "$(perf_count AUXTRACE cpu.stats)" -eq 0 ] ||
		[ "$(perf_count ITRACE_START cpu.stats)" -eq 0 ]; then
		fail perf_per_cpu "missing AUX, AUXTRACE or ITRACE_START records"
	elif [ "$psb" -eq 0 ] || [ "$psb" -ne "$psbend" ] || [ "$bad" -ne 0 ]; then
		fail perf_per_cpu "perf's decoder did not see a clean PSB/PSBEND/PAD stream"
	else
		pass perf_per_cpu
	fi
else
	fail perf_per_cpu "perf record failed"
fi

set_param pattern 2
if perf_record tsc -e intel_pt//u -- sh -c ". /lib.sh; work 10000"; then
	perf_packets tsc
	[ "$psb" -gt 0 ] && [ "$tsc" -eq "$psb" ] && [ "$psbend" -eq "$psb" ] && [ "$bad" -eq 0 ] &&
		pass perf_pattern2_tsc_per_psb || fail perf_pattern2_tsc_per_psb "want PSB = TSC = PSBEND > 0, no bad packets"
else
	fail perf_pattern2_tsc_per_psb "perf record failed"
fi

set_param pattern 0
if perf_record hash -e intel_pt//u -- sh -c ". /lib.sh; work 3000"; then
	perf_packets hash
	[ "$bad" -gt 0 ] && pass perf_negative_control_pattern0 \
		|| fail perf_negative_control_pattern0 "the packet check cannot tell a PT stream from noise"
else
	fail perf_negative_control_pattern0 "perf record failed"
fi
