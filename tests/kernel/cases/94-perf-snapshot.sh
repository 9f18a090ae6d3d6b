# perf record -S against intel_pt snapshot semantics (in-buffer aux_head, one
# record per stop): two SIGUSR2 snapshots of a 64 KiB buffer; perf finds the
# wrapped window and its decoder sees clean packets.
. /lib.sh
have_perf || { skip perf_snapshot "perf is not in this guest"; exit 0; }
set_param pattern 1
perf record -S -m,64K -e intel_pt//u -o snap.data -- \
	sh -c 'touch started; while [ ! -e stop ]; do :; done' >snap.log 2>&1 &
pid=$!
n=0
while [ ! -e started ] && [ $n -lt 300 ]; do # perf's events are set up once the workload runs
	n=$((n + 1))
	sleep 0.1
done
sleep 0.5
kill -USR2 "$pid"
sleep 0.5
kill -USR2 "$pid"
sleep 0.5
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
