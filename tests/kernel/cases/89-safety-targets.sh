# Issue 17's faults of the target and of the writes, each followed by a check of the
# bundle (info says what was lost, the manifest agrees with the files, the bytes are the
# hardware's): the target killed while traced, processes exiting while /proc is read and a
# -p target exiting at once, threads churning while attached with a one-page data ring
# (PERF_RECORD_LOST), write() interrupted (EINTR) and short from an interposed library.
. /lib.sh
cd /tmp || exit 1
mkdir -p /tmp/fa

# ---- the target is killed while traced ----
# the target lives until killed (or the gate closes); killed once tracing is live
gate_open
/threads sleep 2 stdin <gate >/tmp/fa/t.out 8>&- &
pid=$!
wait_ready /tmp/fa/t.out
/ptcollect record -q -p $pid -o /tmp/fa/t1 --ready /tmp/fa/t1.ready 2>/tmp/fa/t.err 8>&- &
rec=$!
wait_file_of $rec /tmp/fa/t1.ready || fail target_killed_ready "no ready file: $(cat /tmp/fa/t.err)"
kill -KILL $pid
gate_close
wait $rec
rc=$?
[ $rc = 0 ] && [ "$(manifest_str /tmp/fa/t1/manifest.json stop_reason)" = "every traced thread exited" ] &&
	pass target_killed_ends_the_recording ||
	fail target_killed_ends_the_recording "exit $rc: $(cat /tmp/fa/t.err)"
check_agrees target_killed_bundle_agrees /tmp/fa/t1 && pass target_killed_bundle_agrees
check_bundle target_killed_bytes_exact /tmp/fa/t1 && pass target_killed_bytes_exact

# ---- processes that exit while /proc is read (-a), and a -p target that exits at once ----
(while :; do /bin/true; done) &
loop=$!
/ptcollect record -q -a --duration 1 -o /tmp/fa/x1 2>/tmp/fa/x.err
rc=$?
kill $loop
[ $rc = 0 ] && [ ! -s /tmp/fa/x.err ] && pass exits_during_proc_synthesis_are_quiet ||
	fail exits_during_proc_synthesis_are_quiet "exit $rc: $(cat /tmp/fa/x.err)"
check_agrees exits_during_proc_synthesis_bundle_agrees /tmp/fa/x1 &&
	pass exits_during_proc_synthesis_bundle_agrees
ok=0 why=""
for life in 0.05 0.1 0.2 0.3 0.5; do
	rm -rf /tmp/fa/x2
	sleep $life &
	pid=$!
	/ptcollect record -q -p $pid --duration 1 -o /tmp/fa/x2 2>/tmp/fa/x.err
	rc=$?
	wait $pid
	if [ $rc = 0 ]; then
		check_agrees "exit_at_once_${life#*.}_bundle_agrees" /tmp/fa/x2 && ok=$((ok + 1))
	elif [ $rc = 2 ] && grep -q 'no such process' /tmp/fa/x.err && [ ! -e /tmp/fa/x2 ]; then
		ok=$((ok + 1))
	elif [ $rc = 1 ] && grep -q 'exited before tracing began' /tmp/fa/x.err && [ ! -e /tmp/fa/x2 ]; then
		ok=$((ok + 1))
	else
		why="$why; after $life s: exit $rc: $(cat /tmp/fa/x.err); $(ls /tmp/fa/x2 2>&1)"
	fi
done
[ $ok = 5 ] && pass target_exiting_at_once_is_handled || fail target_exiting_at_once_is_handled "${why#; }"

# ---- thread churn while attached; the data ring overflows while ptcollect is stopped ----
gate_open # the churn goes on until the gate closes
/threads churn 16 stdin <gate >/tmp/fa/c.out 8>&- &
pid=$!
wait_ready /tmp/fa/c.out
/ptcollect record -q -p $pid -m 4K -o /tmp/fa/c1 --ready /tmp/fa/c1.ready 2>/tmp/fa/c.err 8>&- &
rec=$!
wait_file_of $rec /tmp/fa/c1.ready || fail churn_ready "no ready file: $(cat /tmp/fa/c.err)"
# Stopped, it drains nothing: the one-page data ring overflows (PERF_RECORD_LOST) while
# 400 new threads start tracing (each writes an ITRACE_START, more than 40 bytes, to the
# target's ring): 25 rounds of 16, which the target counts ("round" after each).
rounds() { grep -c '^round$' /tmp/fa/c.out; }
rounds_over() { [ "$(rounds)" -gt "$1" ]; }
kill -STOP $rec
r0=$(rounds)
wait_moving 300 rounds rounds_over $((r0 + 25)) ||
	fail churn_threads "$(($(rounds) - r0)) rounds of 16 threads, then none for 30 s"
kill -CONT $rec
gate_close
wait $rec
rc=$?
wait $pid
lost=$(manifest_streams /tmp/fa/c1/manifest.json | awk '{ s += $6 } END { print s + 0 }')
[ $rc = 0 ] && pass churn_while_attached || fail churn_while_attached "exit $rc: $(cat /tmp/fa/c.err)"
[ "$lost" -gt 0 ] && pass data_ring_overflow_counts_lost ||
	fail data_ring_overflow_counts_lost "no LOST record after 400 thread starts stopped with a one-page data ring"
check_agrees churn_and_lost_bundle_agrees /tmp/fa/c1 && pass churn_and_lost_bundle_agrees
check_bundle churn_and_lost_bytes_exact /tmp/fa/c1 && pass churn_and_lost_bytes_exact

# ---- write() interrupted (EINTR) and short, from an interposed library ----
reload chunk=2048 period_us=2000 pattern=1 || exit 0
rm -f /tmp/fa/fw.log
b0=$(stat bytes)
FAULTWRITE_LOG=/tmp/fa/fw.log LD_PRELOAD=/faultwrite.so /ptcollect record -q -C 0 --duration 2 \
	-o /tmp/fa/f1 2>/tmp/fa/f.err
rc=$?
b1=$(stat bytes)
set -- $(cat /tmp/fa/fw.log 2>/dev/null)
echo "faultwrite: $*"
if [ $rc = 0 ] && [ "${4:-0}" -gt 0 ] && [ "${6:-0}" -gt 0 ] &&
	[ "$(total_pt /tmp/fa/f1)" = $((b1 - b0)) ]; then
	pass write_eintr_and_short_lose_nothing
else
	fail write_eintr_and_short_lose_nothing "exit $rc ($(cat /tmp/fa/f.err)); interposer: $*; captured $(total_pt /tmp/fa/f1) of $((b1 - b0))"
fi
check_agrees write_faults_bundle_agrees /tmp/fa/f1 && pass write_faults_bundle_agrees
check_bundle write_faults_bytes_exact /tmp/fa/f1 1 && pass write_faults_bytes_exact
check_ptdump write_faults_ptdump_reads_it /tmp/fa/f1 && pass write_faults_ptdump_reads_it
rm -rf /tmp/fa
