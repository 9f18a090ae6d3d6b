# -p on a multi-threaded process that starts threads while it is traced; --per-thread; -C.
. /lib.sh
# The spawner lives until its stdin (a fifo the case holds) closes, and starts its threads on
# the case's word, once ptcollect is ready: no fixed lifetime, no sleep standing in for either.
# ptcollect does not inherit the fifo (7>&-): the spawner sees its end when the case closes it.
rm -f /tmp/sp.in /tmp/p1.ready
mkfifo /tmp/sp.in
/spawner 4 150 stdin </tmp/sp.in >/tmp/sp.txt &
pid=$!
exec 7>/tmp/sp.in
_i=0
while ! grep -q "^tid $pid\$" /tmp/sp.txt 2>/dev/null && [ $_i -lt 600 ]; do
	sleep 0.1
	_i=$((_i + 1))
done
b0=$(stat bytes)
/ptcollect record -q -p $pid -o /tmp/p1 --ready /tmp/p1.ready 7>&- &
rec=$!
wait_file_of $rec /tmp/p1.ready || fail pid_ready "no ready file (ptcollect exited, or 2 minutes)"
echo go >&7
_i=0
while ! grep -q '^started$' /tmp/sp.txt && [ $_i -lt 600 ]; do
	sleep 0.1
	_i=$((_i + 1))
done
exec 7>&-
wait $rec
rc=$?
wait $pid
b1=$(stat bytes)
[ $rc = 0 ] && pass pid_exit_zero || fail pid_exit_zero "rc=$rc"
check_bundle pid_bytes_exact /tmp/p1 && pass pid_bytes_exact
got=$(total_pt /tmp/p1)
[ "$got" = $((b1 - b0)) ] && pass pid_captures_new_threads \
	|| fail pid_captures_new_threads "captured $got, the PMU wrote $((b1 - b0))"
grep -q 'every traced thread exited' /tmp/p1/manifest.json && pass pid_stops_when_threads_exit \
	|| fail pid_stops_when_threads_exit "$(grep stop_reason /tmp/p1/manifest.json)"

/spawner 0 1 stdin </tmp/sp.in >/tmp/sp2.txt &
pid=$!
exec 7>/tmp/sp.in
_i=0
while ! grep -q "^tid $pid\$" /tmp/sp2.txt 2>/dev/null && [ $_i -lt 600 ]; do
	sleep 0.1
	_i=$((_i + 1))
done
rm -f /tmp/p2.ready
/ptcollect record -q --per-thread -p $pid -o /tmp/p2 --ready /tmp/p2.ready 7>&- &
rec=$!
wait_file_of $rec /tmp/p2.ready || fail per_thread_ready "no ready file (ptcollect exited, or 2 minutes)"
exec 7>&-
wait $rec
rc=$?
wait $pid
[ $rc = 0 ] && [ -f /tmp/p2/tid$pid.pt ] && pass per_thread_file_per_tid \
	|| fail per_thread_file_per_tid "rc=$rc: $(ls /tmp/p2)"
check_bundle per_thread_bytes_exact /tmp/p2 && pass per_thread_bytes_exact

b0=$(stat bytes)
/ptcollect record -q -C 0 --duration 0.5 -o /tmp/p3
rc=$?
b1=$(stat bytes)
[ $rc = 0 ] && [ -f /tmp/p3/cpu0.pt ] && [ ! -f /tmp/p3/cpu1.pt ] && pass cpu_list_one_stream \
	|| fail cpu_list_one_stream "rc=$rc: $(ls /tmp/p3)"
check_bundle cpu_bytes_exact /tmp/p3 && pass cpu_bytes_exact
[ "$(total_pt /tmp/p3)" = $((b1 - b0)) ] && pass cpu_captures_all_written \
	|| fail cpu_captures_all_written "captured $(total_pt /tmp/p3), wrote $((b1 - b0))"
