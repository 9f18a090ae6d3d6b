# Overflow: a TRUNCATED record, output stops, DISABLE+ENABLE resumes (README, finding 2).
. /lib.sh
set_param chunk 256
/ptsim_test -t 1 -a 16 -o && pass sim_overflow_truncated_then_resume \
	|| fail sim_overflow_truncated_then_resume "ptsim_test -o found errors (above)"
