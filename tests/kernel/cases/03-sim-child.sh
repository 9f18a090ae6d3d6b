# Trace a forked child: ITRACE_START carries the child's pid.
. /lib.sh
/ptsim_test -t 1 -c && pass sim_trace_child_itrace_start || fail sim_trace_child_itrace_start "ptsim_test -c found errors (above)"
