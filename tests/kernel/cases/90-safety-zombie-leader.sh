# Issue 21, item 2: -p on a process whose main thread called pthread_exit() while the
# others run (its leader is a zombie): its live threads are traced, per CPU and per thread,
# the zombie left out with a note; a target killed with SIGKILL ends the session at once.
. /lib.sh
cd /tmp || exit 1
# now_ms: milliseconds since boot
now_ms() { awk '{ printf "%d", $1 * 1000 }' /proc/uptime; }

# start_target N: /zombielead with N spinning threads; they end when fd 7 (its stdin) closes
start_target() {
	rm -f /tmp/z.in /tmp/z.out
	mkfifo /tmp/z.in
	/zombielead "$1" </tmp/z.in >/tmp/z.out &
	pid=$!
	exec 7>/tmp/z.in
	wait_ready /tmp/z.out
}

# wait_gone PID TENTHS: until PID has ended, at most TENTHS tenths of a second
wait_gone() {
	_n=0
	while kill -0 "$1" 2>/dev/null && [ $_n -lt "$2" ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
}

start_target 2
st=$(sed -n 's/^State:\t\(.\).*/\1/p' /proc/$pid/status)
[ "$st" = Z ] || echo "note: the leader's state is '$st', not Z"

# ---- per CPU: the live threads' bytes, exactly ----
b0=$(stat bytes)
/ptcollect record -p $pid --duration 0.5 -o /tmp/z1 2>/tmp/z1.err
rc=$?
b1=$(stat bytes)
if [ $rc = 0 ] && [ "$(total_pt /tmp/z1)" -gt 0 ] &&
	grep -q "thread $pid (the main thread) has exited" /tmp/z1.err; then
	pass zombie_leader_per_cpu
else
	fail zombie_leader_per_cpu "state $st; exit $rc: $(cat /tmp/z1.err); $(total_pt /tmp/z1) bytes"
fi
[ -d /tmp/z1 ] && check_bundle zombie_leader_per_cpu_bytes_exact /tmp/z1 &&
	[ "$(total_pt /tmp/z1)" = $((b1 - b0)) ] && pass zombie_leader_per_cpu_bytes_exact

# ---- per thread: one stream per live thread, none for the zombie ----
b0=$(stat bytes)
/ptcollect record --per-thread -p $pid --duration 0.5 -o /tmp/z2 2>/tmp/z2.err
rc=$?
b1=$(stat bytes)
live=$(grep -c '^tid ' /tmp/z.out)
live=$((live - 1))
files=$(ls /tmp/z2/tid*.pt 2>/dev/null | wc -l)
if [ $rc = 0 ] && [ ! -e /tmp/z2/tid$pid.pt ] && [ "$files" = "$live" ] &&
	grep -q "thread $pid (the main thread) has exited" /tmp/z2.err; then
	pass zombie_leader_per_thread
else
	fail zombie_leader_per_thread "exit $rc, $files streams for $live live threads: $(ls /tmp/z2); $(cat /tmp/z2.err)"
fi
[ -d /tmp/z2 ] && check_bundle zombie_leader_per_thread_bytes_exact /tmp/z2 &&
	[ "$(total_pt /tmp/z2)" = $((b1 - b0)) ] && pass zombie_leader_per_thread_bytes_exact

# ---- the target killed with SIGKILL: the session ends, and says why ----
for mode in per-cpu per-thread; do
	opt=
	[ $mode = per-thread ] && opt=--per-thread
	rm -f /tmp/z.ready
	/ptcollect record -q $opt -p $pid -o /tmp/z3$mode --ready /tmp/z.ready 2>/tmp/z3.err &
	rec=$!
	wait_file_of $rec /tmp/z.ready
	t0=$(now_ms)
	kill -KILL $pid
	# It ends by itself, for that reason: its stop reason says so. The time it takes is
	# shown, not checked (it was held to 1 s of wall time, which a loaded host can exceed); a
	# recording that never ends is still one after 30 s.
	wait_gone $rec 300
	took=$(($(now_ms) - t0))
	if kill -0 $rec 2>/dev/null; then
		fail zombie_leader_sigkill_ends_$mode "still recording 30 s after the target's SIGKILL"
		kill -INT $rec
	fi
	wait $rec
	rc=$?
	why=$(manifest_str /tmp/z3$mode/manifest.json stop_reason)
	echo "$mode: the recording ended $took ms after the target's SIGKILL"
	if [ $rc = 0 ] && [ "$why" = "every traced thread exited" ]; then
		pass zombie_leader_sigkill_ends_$mode
	else
		fail zombie_leader_sigkill_ends_$mode "exit $rc after $took ms, stopped by '$why': $(cat /tmp/z3.err)"
	fi
	exec 7>&-
	wait $pid 2>/dev/null
	[ $mode = per-cpu ] && start_target 2
done
exec 7>&-
rm -rf /tmp/z1 /tmp/z2 /tmp/z3per-cpu /tmp/z3per-thread
