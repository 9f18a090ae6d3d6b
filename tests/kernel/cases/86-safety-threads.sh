# Issue 17, item 4 and the load: -p on processes whose threads come and go during setup,
# whose main thread exited, and with a thousand threads on every CPU.
. /lib.sh
cd /tmp || exit 1

# ---- 4: threads that start and end during setup: 5 runs of 5 ----
ok=0 why=""
for i in 1 2 3 4 5; do
	/threads churn 8 3 >/tmp/c.out &
	pid=$!
	wait_ready /tmp/c.out
	/ptcollect record -q -p $pid --duration 0.5 -o /tmp/c$i 2>/tmp/c.err
	rc=$?
	wait $pid
	if [ $rc = 0 ]; then
		ok=$((ok + 1))
	else
		why="$why; run $i: exit $rc: $(cat /tmp/c.err)"
	fi
done
[ $ok = 5 ] && pass pid_churn_5_of_5 || fail pid_churn_5_of_5 "$ok of 5 recorded${why}"
[ -d /tmp/c5 ] && check_agrees pid_churn_bundle_agrees /tmp/c5 && pass pid_churn_bundle_agrees
[ -d /tmp/c5 ] && check_bundle pid_churn_bytes_exact /tmp/c5 && pass pid_churn_bytes_exact

# ---- 4: the main thread exited, the others run ----
# Its threads wake once a second: a 1.5 s recording sees one wake at least, and they live 6 s.
/threads mainexit 3 6 >/tmp/m.out &
pid=$!
wait_ready /tmp/m.out
# Until the main thread has exited (the process's state is then Z), 60 s at most.
_i=0
while [ "$(sed -n 's/^State:\t\(.\).*/\1/p' /proc/$pid/status)" != Z ] && [ $_i -lt 600 ]; do
	sleep 0.1
	_i=$((_i + 1))
done
st=$(sed -n 's/^State:\t\(.\).*/\1/p' /proc/$pid/status)
b0=$(stat bytes)
/ptcollect record -q -p $pid --duration 1.5 -o /tmp/m1 2>/tmp/m.err
rc=$?
b1=$(stat bytes)
wait $pid
if [ $rc = 0 ] && [ "$(total_pt /tmp/m1)" -gt 0 ]; then
	pass pid_main_thread_exited
else
	fail pid_main_thread_exited "state $st; exit $rc: $(cat /tmp/m.err); $(total_pt /tmp/m1) bytes"
fi
[ -d /tmp/m1 ] && check_bundle pid_main_thread_exited_bytes_exact /tmp/m1 &&
	[ "$(total_pt /tmp/m1)" = $((b1 - b0)) ] && pass pid_main_thread_exited_bytes_exact

# ---- load: 1000 threads with -p, per CPU; memory flat, every thread's sideband ----
t0=$(date +%s)
/threads sleep 1000 25 >/tmp/k.out &
pid=$!
wait_ready /tmp/k.out
nthr=$(grep -c '^tid ' /tmp/k.out)
echo "1000 threads started in $(($(date +%s) - t0)) s ($nthr tids)"
/ptcollect record -q -p $pid --duration 12 -o /tmp/k1 2>/tmp/k.err &
rec=$!
samples=$(sample_rss $rec 11)
wait $rec
rc=$?
echo "ptcollect RssAnon kB, once a second:$samples"
[ $rc = 0 ] && pass load_1000_threads_per_cpu ||
	fail load_1000_threads_per_cpu "exit $rc: $(cat /tmp/k.err)"
check_flat load_memory_flat_per_cpu $samples && pass load_memory_flat_per_cpu
check_agrees load_per_cpu_bundle_agrees /tmp/k1 && pass load_per_cpu_bundle_agrees
check_every_thread load_every_thread_has_sideband_per_cpu /tmp/k.out &&
	pass load_every_thread_has_sideband_per_cpu
/ptcollect dump /tmp/k1/proc.pevent 2>/dev/null | sed -n 's/.*PERF_RECORD_COMM  [0-9a-f]*\/\([0-9a-f]*\),.*/\1/p' |
	sort -u >/tmp/k.comm
miss=$(missing_tids /tmp/k.out /tmp/k.comm)
[ -z "$miss" ] && pass load_every_thread_has_a_comm || fail load_every_thread_has_a_comm "no COMM for$miss"
kill $pid 2>/dev/null
wait $pid
rm -rf /tmp/k1 /tmp/c1 /tmp/c2 /tmp/c3 /tmp/c4 /tmp/c5 /tmp/m1

