# record -- COMMAND, per-CPU: every byte the simulated hardware wrote, and nothing else.
. /lib.sh
b0=$(stat bytes)
/ptcollect record -q -o /tmp/w1 -- /spawner 2 50 0.5 >/dev/null
rc=$?
b1=$(stat bytes)
[ $rc = 0 ] && pass workload_exit_zero || fail workload_exit_zero "rc=$rc"
check_bundle workload_bytes_exact /tmp/w1 && pass workload_bytes_exact
got=$(total_pt /tmp/w1)
[ "$got" = $((b1 - b0)) ] && pass workload_captures_all_written \
	|| fail workload_captures_all_written "captured $got, the PMU wrote $((b1 - b0))"
[ -f /tmp/w1/cpu0.pt ] && [ -f /tmp/w1/cpu1.pt ] && [ -f /tmp/w1/cpu0.pevent ] \
	&& pass workload_per_cpu_files || fail workload_per_cpu_files "$(ls /tmp/w1)"
grep -q '"complete": true' /tmp/w1/manifest.json && pass workload_manifest_complete \
	|| fail workload_manifest_complete "$(tail -3 /tmp/w1/manifest.json)"

/ptcollect record -q -o /tmp/w2 -- /bin/sh -c 'exit 7'
rc=$?
[ $rc = 7 ] && pass workload_exit_status_passes_through || fail workload_exit_status_passes_through "rc=$rc"
/ptcollect record -q -o /tmp/w3 -- /bin/sh -c 'kill -USR1 $$'
rc=$?
[ $rc = $((128 + 10)) ] && pass workload_signal_is_128_plus_n || fail workload_signal_is_128_plus_n "rc=$rc"
