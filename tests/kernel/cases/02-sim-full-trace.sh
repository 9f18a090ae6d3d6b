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

# pattern 3: the module replays a stream written to sim/replay (3000 bytes: the
# period does not divide the buffer, so wrap-around is exercised)
head -c 3000 /ptsim_test >stream.bin
cat stream.bin >"$D/sim/replay"
set_param pattern 3
if /ptsim_test -t 1 -R stream.bin -w rep.pt && /ptsim_check -R stream.bin rep.pt; then
	pass sim_full_trace_replay
else
	fail sim_full_trace_replay "ptsim_test or ptsim_check found errors (above)"
fi
if echo x 2>/dev/null >"$D/sim/replay"; then
	fail sim_replay_refused_while_replaying "sim/replay accepted a write with pattern 3 selected"
else
	pass sim_replay_refused_while_replaying
fi
