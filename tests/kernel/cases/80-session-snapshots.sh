# Snapshot mode (-S) on intel_pt's in-buffer head: snapshots on SIGUSR2, on the control's
# "snapshot", on a uprobe trigger and at the end, every CPU's window byte-exact against the
# simulated stream, before and after the buffer's first wrap and after a whole lap, and
# no byte in two snapshots (each window starts where the previous one of its CPU ended,
# unless it says it wrapped).
. /lib.sh
# 128 KB/s per CPU into 64 KiB buffers: half a second per lap.
reload chunk=256 period_us=2000 || exit 0
mkfifo ctl ack
gate_open # the workload lives until the case closes the gate
/ptcollect record -a -S -m ,64K -o snap --control fifo:ctl,ack --ready ready \
	--trigger uprobe:/trigtarget:trig_hit -j -- cat gate >snap.json 2>snap.err 8>&- &
pid=$!
wait_file_of $pid ready || { cat snap.err; fail snap_ready "no ready file"; kill $pid; exit 0; }
pass snap_ready
exec 9<ack # ptcollect's replies; read-only, so a read ends when ptcollect exits (lib.sh ctl)
# snapshots N: the control's status counts N snapshots; false once ptcollect has answered
# 50 status requests without: bounded by ptcollect's own progress, each answer a round of
# its loop (the signal and a trigger's fire are handled in the round they are seen)
snap_count() { ctl status | grep -q "\"snapshots\":$1,"; }
snapshots() { wait_until 50 snap_count "$1"; }
# The PMU's progress is counted in its timer's ticks (sim/stats ticks: one 256-byte chunk
# on one CPU each; in snapshot mode sim/stats bytes stays still), never in time.
# Before the first wrap: a signal once the PMU has written, then the control once the
# signal's snapshot is taken and the PMU wrote again.
t=$(stat ticks)
wait_stat ticks $((t + 4))
kill -USR2 $pid
snapshots 1 || fail snap_signal_taken "no snapshot after SIGUSR2: $(ctl status)"
t=$(stat ticks)
wait_stat ticks $((t + 4))
r=$(ctl snapshot)
[ "$r" = ack ] && pass snap_control_acked || fail snap_control_acked "reply '$r'"
# More than a lap (three laps of both CPUs' 64 KiB), then a trigger; then the control
# again once the trigger's snapshot is taken and the PMU wrote again.
t=$(stat ticks)
wait_stat ticks $((t + 3 * 2 * 65536 / 256)) ||
	fail snap_laps "the PMU wrote less than 3 laps, then stood still for 30 s"
/trigtarget --no-wait 1 8>&-
snapshots 3 || fail snap_trigger_taken "no third snapshot after the trigger: $(ctl status)"
t=$(stat ticks)
wait_stat ticks $((t + 4))
r=$(ctl snapshot)
[ "$r" = ack ] || fail snap_control_after_trigger "reply '$r'"
r=$(ctl stop)
gate_close
wait $pid
rc=$?
[ $rc = 0 ] || [ $rc = 143 ] || { cat snap.err; fail snap_exit "rc=$rc"; }
cat snap.err
grep -c '"cause": "signal"' snap/manifest.json | grep -qx 1 && pass snap_on_sigusr2 \
	|| fail snap_on_sigusr2 "no snapshot caused by the signal"
grep -c '"cause": "trigger"' snap/manifest.json | grep -qx 1 && pass snap_on_trigger \
	|| fail snap_on_trigger "no single snapshot caused by the trigger"
[ "$(grep -c '"cause": "control"' snap/manifest.json)" = 2 ] && pass snap_on_control \
	|| fail snap_on_control "expected two snapshots from the control channel"
grep -q '"cause": "final"' snap/manifest.json && pass snap_final \
	|| fail snap_final "no final snapshot"
grep -q '"snapshot": 3' snap/manifest.json && pass snap_fire_names_its_snapshot \
	|| fail snap_fire_names_its_snapshot "the fire does not name snapshot 3"
if check_windows snap_windows_exact snap 65536; then
	pass snap_windows_exact
	[ $win_before -gt 0 ] && [ $win_after -gt 0 ] && pass snap_before_and_after_wrap \
		|| fail snap_before_and_after_wrap "windows before the wrap $win_before, after $win_after"
	[ $win_wrapped -gt 0 ] && pass snap_lap_says_wrapped \
		|| fail snap_lap_says_wrapped "no window says it wrapped after 1.5 s (3 laps)"
fi
# The JSON result says the same snapshots.
[ "$(grep -c '"cause":' snap.json)" = "$(grep -c '"cause":' snap/manifest.json)" ] \
	&& pass snap_json_result || fail snap_json_result "$(head -c 400 snap.json)"
# info lists the snapshots, a decoder line for every window with bytes, and no problem.
/ptcollect info -j snap >info.json 2>info.err
if [ "$(grep -c '"ptdump": "ptdump' info.json)" = "$(awk '$5 > 0' /tmp/win.list | wc -l)" ] &&
	grep -q 'snap-1/cpu0.pt' info.json && ! grep -q 'snap-.*missing\|snap-.* has [0-9]* bytes' info.json
then
	pass snap_info_lines
else
	cat info.err
	fail snap_info_lines "$(grep -c '"ptdump": "ptdump' info.json) ptdump lines; $(head -c 300 info.err)"
fi
# Per thread: the workload's one stream, snapshots on SIGUSR2 while it runs, exact too.
/ptcollect record -q --per-thread -S -m ,64K -o pt --ready pready -- \
	/bin/sh -c 'i=0; while [ ! -e pt.stop ] && [ $i -lt 900000 ]; do i=$((i + 1)); done' \
	>/dev/null 2>pt.err 8>&- &
pid=$!
wait_file_of $pid pready || fail snap_per_thread "no ready file"
for i in 1 2 3; do # each once the PMU has written a quarter of the buffer more
	t=$(stat ticks)
	wait_stat ticks $((t + 16384 / 256))
	kill -USR2 $pid
done
touch pt.stop
wait $pid
ls pt/snap-1/tid*.pt >/dev/null 2>&1 || { cat pt.err; fail snap_per_thread "no snap-1/tidN.pt"; }
check_windows snap_per_thread pt 65536 && [ "$(snap_windows pt/manifest.json | wc -l)" -ge 4 ] \
	&& pass snap_per_thread

# Issue 21: decode DIR of a snapshot-mode bundle reads every window as a trace of its own
# (it crashed on the streams' "file": null). The simulated bytes are no program's PT, so
# only that it ends by itself and names the windows is checked.
for b in snap pt; do
	/ptcollect decode $b >$b.dec 2>$b.decerr
	rc=$?
	if [ $rc -lt 128 ] && grep -q 'snap-1/' $b.dec $b.decerr; then
		pass snap_decode_reads_the_windows_$b
	else
		fail snap_decode_reads_the_windows_$b "exit $rc: $(head -c 600 $b.decerr)"
	fi
done
