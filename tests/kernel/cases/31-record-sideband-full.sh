# A stop whose TRUNCATED record the full sideband ring dropped: ptcollect is
# stopped (SIGSTOP) while the simulated PMU writes on, so the one-page data
# ring fills with AUX records before the 8 KiB AUX area does and the kernel
# drops the record that would say the hardware stopped. Once it runs again,
# ptcollect must see the full ring, restart the hardware and say so.
. /lib.sh
reload chunk=64 period_us=20 || exit 0
b0=$(stat bytes)
ncpu=$(grep -c '^processor' /proc/cpuinfo)
# The workload lives until the case closes the gate; the stall lasts until the AUX area
# has filled (the PMU stopped on a full buffer: sim/stats truncated), however slow the guest.
gate_open
/ptcollect record -a -m 1,8K -o sf --ready sf.ready -- cat gate >sf.out 2>&1 8>&- &
pid=$!
wait_file_of $pid sf.ready || fail sideband_full_ready "no ready file: $(cat sf.out)"
# The stall starts from a known state. At 64 bytes per 20 us ptcollect does not keep up:
# each CPU's hardware spends much of its time stopped on a full AUX area until ptcollect
# restarts it, and stopped together with ptcollect it would never fill the area during the
# stall (truncated moved before the stall, or never). So the hardware pauses (chunk 0: on,
# writing nothing) until ptcollect has restarted it on every CPU and drained each AUX area
# to less than a page (sim/stats room: the least free space): at least 64 AUX records of
# 64 bytes must then fill it, more than the one-page data ring can take. Only then is
# ptcollect stopped and the hardware resumed.
set_param chunk 0
paused() { [ "$(stat active)" = "$ncpu" ] && [ "$(stat room)" -ge 4096 ]; }
wait_until 300 paused || fail sideband_full_paused "with the hardware paused, ptcollect did \
not restart it on all $ncpu CPUs and drain the AUX areas: $(cat "$S")"
kill -STOP $pid
t0=$(stat truncated)
set_param chunk 64
wait_stat truncated "$t0" bytes || fail sideband_full_stalled "the PMU never filled the AUX area: $(cat "$S")"
kill -CONT $pid
bc=$(stat bytes)
# the hardware restarted: more than 64 KiB written after the stall (however slowly), then
# the workload ends
wait_stat bytes $((bc + 65536 + 16384))
gate_close
wait $pid
rc=$?
b1=$(stat bytes)
[ $rc = 0 ] && pass sideband_full_exit_zero || { fail sideband_full_exit_zero "rc=$rc"; cat sf.out; }
full=$(json_sum sf/manifest.json sideband_full)
[ "$full" -gt 0 ] && pass sideband_full_counted \
	|| fail sideband_full_counted "the manifest says the sideband ring never filled"
grep -q "the sideband ring filled" sf.out && pass sideband_full_warned \
	|| fail sideband_full_warned "$(cat sf.out)"
# After the stall the hardware writes again (a stop flushes one chunk per CPU, no more).
[ $((b1 - bc)) -gt 65536 ] && pass sideband_full_hardware_restarted \
	|| fail sideband_full_hardware_restarted "the PMU wrote $((b1 - bc)) bytes after the stall"
check_bundle sideband_full_bytes_exact sf && pass sideband_full_bytes_exact
[ "$(total_pt sf)" = $((b1 - b0)) ] && pass sideband_full_keeps_every_written_byte \
	|| fail sideband_full_keeps_every_written_byte "captured $(total_pt sf), wrote $((b1 - b0))"
reload
