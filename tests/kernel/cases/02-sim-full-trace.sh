# Full-trace mode: every AUX byte and record checked by ptsim_test, for each pattern.
. /lib.sh
/ptsim_test -t 2 && pass sim_full_trace_pattern0 || fail sim_full_trace_pattern0 "ptsim_test found errors (above)"
set_param pattern 1
/ptsim_test -t 1 -P 1 && pass sim_full_trace_pattern1 || fail sim_full_trace_pattern1 "ptsim_test found errors (above)"
set_param pattern 2
if /ptsim_test -t 1 -P 2 -w p2.pt && /ptsim_check -P 2 p2.pt; then
	pass sim_full_trace_pattern2_psb_tsc
else
	fail sim_full_trace_pattern2_psb_tsc "ptsim_test or ptsim_check found errors (above)"
fi
