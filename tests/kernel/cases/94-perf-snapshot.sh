# perf record -S against intel_pt snapshot semantics (in-buffer aux_head, one
# record per stop): two SIGUSR2 snapshots of a 64 KiB buffer; perf finds the
# wrapped window and its decoder sees clean packets.
. /lib.sh
have_perf || { skip perf_snapshot "perf is not in this guest"; exit 0; }
set_param pattern 1
perf record -S -m,64K -e intel_pt//u -o snap.data -- \
	sh -c 'touch started; while [ ! -e stop ]; do :; done' >snap.log 2>&1 &
pid=$!
# perf's events are set up once the workload runs
wait_file started 300 || fail perf_snapshot_started "the workload never started: $(cat snap.log)"
# two laps of the 64 KiB buffer (by the PMU's timer ticks, one 512-byte chunk each; in
# snapshot mode sim/stats bytes stays still) before each snapshot, and after the last
lap() { t=$(stat ticks); wait_stat ticks $((t + 2 * 65536 / 512)); }
lap
kill -USR2 "$pid"
lap
kill -USR2 "$pid"
lap
touch stop
if ! wait "$pid"; then
	cat snap.log
	fail perf_snapshot "perf record -S failed"
	exit 0
fi
tail -n 1 snap.log
perf report -i snap.data --stats >snap.stats 2>&1
grep -E ' (AUX|AUXTRACE) events:' snap.stats
perf_packets snap
if [ "$(perf_count AUXTRACE snap.stats)" -lt 2 ]; then
	fail perf_snapshot "expected two snapshots (one AUXTRACE record per CPU buffer with data)"
elif [ "$psb" -eq 0 ] || [ "$bad" -ne 0 ]; then
	fail perf_snapshot "snapshot data is not clean"
else
	pass perf_snapshot
fi
