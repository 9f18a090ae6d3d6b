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
# churn_overflow NAME: start `threads churn 16` with the gate open, attach ptcollect (-p,
# a one-page data ring, stderr to /tmp/fa/NAME.err), stop it, and let 400 new threads start
# tracing: each writes an ITRACE_START (more than 40 bytes) to the target's ring, which
# nothing drains, so the kernel drops records (25 rounds of 16, which the target counts,
# "round" after each). Leaves ptcollect stopped; sets pid and rec.
rounds() { grep -c '^round$' /tmp/fa/c.out; }
rounds_over() { [ "$(rounds)" -gt "$1" ]; }
churn_overflow() {
	gate_open # the churn goes on until the gate closes
	/threads churn 16 stdin <gate >/tmp/fa/c.out 8>&- &
	pid=$!
	wait_ready /tmp/fa/c.out
	/ptcollect record -p $pid -m 4K -o /tmp/fa/$1 --ready /tmp/fa/$1.ready \
		2>/tmp/fa/$1.err 8>&- &
	rec=$!
	wait_file_of $rec /tmp/fa/$1.ready || fail ${1}_ready "no ready file: $(cat /tmp/fa/$1.err)"
	kill -STOP $rec
	_r0=$(rounds)
	wait_moving 300 rounds rounds_over $((_r0 + 25)) ||
		fail ${1}_churn_threads "$(($(rounds) - _r0)) rounds of 16 threads, then none for 30 s"
}
# sum_col DIR N: column N of manifest_streams summed ("-" counts 0)
sum_col() { manifest_streams /tmp/fa/$1/manifest.json | awk -v n=$2 '{ s += $n } END { print s + 0 }'; }

# The churn ends while ptcollect is still stopped: no record comes to the ring after it
# drains, so the kernel never writes the LOST record it owes (it writes one only at the
# next record that fits). The manifest must still say what was dropped: the kernel's own
# count (PERF_FORMAT_LOST) minus what LOST records said, "unreported".
churn_overflow c1
gate_close
wait $pid
kill -CONT $rec
wait $rec
rc=$?
[ $rc = 0 ] && pass churn_while_attached || fail churn_while_attached "exit $rc: $(cat /tmp/fa/c1.err)"
unrep=$(sum_col c1 10)
echo "churn stopped to the end: $(sum_col c1 6) LOST ($(sum_col c1 7) records), $unrep unreported"
[ "$unrep" -gt 0 ] && pass data_ring_overflow_counts_unreported ||
	fail data_ring_overflow_counts_unreported "400 thread starts stopped with a one-page data ring, then no record: the manifest says $(sum_col c1 6) LOST record(s) and $unrep dropped unreported"
grep -q "sideband record(s) that no LOST record reports" /tmp/fa/c1.err &&
	pass data_ring_overflow_unreported_warned ||
	fail data_ring_overflow_unreported_warned "stderr: $(tail -c 600 /tmp/fa/c1.err)"
check_agrees churn_and_lost_bundle_agrees /tmp/fa/c1 && pass churn_and_lost_bundle_agrees
check_bundle churn_and_lost_bytes_exact /tmp/fa/c1 && pass churn_and_lost_bytes_exact

# The churn goes on after CONT: once ptcollect has drained the ring (its sideband files
# grow), the next threads' records fit, and the kernel writes the LOST record first.
pevent_bytes() { cat /tmp/fa/c2/*.pevent 2>/dev/null | wc -c; }
pevent_over() { [ "$(pevent_bytes)" -gt "$1" ]; }
churn_overflow c2
b0=$(pevent_bytes)
kill -CONT $rec
wait_moving 300 pevent_bytes pevent_over $b0 ||
	fail data_ring_drained "ptcollect wrote no sideband after CONT for 30 s"
r1=$(rounds)
wait_moving 300 rounds rounds_over $((r1 + 2)) ||
	fail churn_threads_after_drain "$(($(rounds) - r1)) rounds of 16 threads, then none for 30 s"
gate_close
wait $rec
rc=$?
wait $pid
lost=$(sum_col c2 6)
echo "churn on after CONT: $lost LOST ($(sum_col c2 7) records), $(sum_col c2 10) unreported"
[ $rc = 0 ] && [ "$lost" -gt 0 ] && pass data_ring_overflow_counts_lost ||
	fail data_ring_overflow_counts_lost "exit $rc, $lost LOST record(s) after 400 thread starts stopped with a one-page data ring, then more after the drain: $(tail -c 300 /tmp/fa/c2.err)"
check_agrees churn_lost_record_bundle_agrees /tmp/fa/c2 && pass churn_lost_record_bundle_agrees

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
