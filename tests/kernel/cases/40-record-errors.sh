# The errors a user hits, with cause and remedy. Unprivileged ones run as uid 1000.
. /lib.sh
expect() { # NAME RC WANT_RC STDERR_FILE TEXT...
	local name=$1 rc=$2 want=$3 f=$4 t
	shift 4
	[ "$rc" = "$want" ] || { fail "$name" "exit $rc, expected $want: $(cat $f)"; return; }
	for t in "$@"; do
		grep -q -- "$t" "$f" || { fail "$name" "stderr lacks '$t': $(cat $f)"; return; }
	done
	pass "$name"
}
/ptcollect record -q -o /tmp/e1 -- /no/such/program 2>/tmp/e.err
expect error_workload_not_executable $? 2 /tmp/e.err "cannot execute '/no/such/program'"
/ptcollect record -q -p 999999 -o /tmp/e2 2>/tmp/e.err
expect error_no_such_process $? 2 /tmp/e.err "-p 999999: no such process"

# EBUSY: a CPU-wide recording holds the PMU; a per-task one cannot coexist.
# It holds the PMU from its ready file until the case closes the gate.
gate_open
/ptcollect record -q -a -o /tmp/e3 --ready e3.ready -- cat gate 8>&- &
bg=$!
wait_file_of $bg e3.ready || fail error_busy_holder_ready "the CPU-wide recording never became ready"
/ptcollect record -q -o /tmp/e4 -- /bin/true 2>/tmp/e.err
expect error_busy $? 1 /tmp/e.err "Intel PT is busy" "another tool"
[ -e /tmp/e4 ] && fail error_busy_leaves_nothing "/tmp/e4 was left behind: $(ls /tmp/e4)" \
	|| pass error_busy_leaves_nothing
gate_close
wait $bg

# Permission and mlock as an unprivileged user (root bypasses both).
echo 2 >/proc/sys/kernel/perf_event_paranoid
/runas 1000 /ptcollect record -q -a --duration 0.2 -o /tmp/e5 2>/tmp/e.err
expect error_permission_cpu_wide $? 1 /tmp/e.err "permission denied" "perf_event_paranoid is 2" "CAP_PERFMON"
/runas 1000 /ptcollect record -q -m ,64M -o /tmp/e6 -- /bin/true 2>/tmp/e.err
expect error_mlock_limit $? 2 /tmp/e.err "locked memory" "perf_event_mlock_kb" "-m ,"
echo 3 >/proc/sys/kernel/perf_event_paranoid
/runas 1000 /ptcollect record -q -o /tmp/e7 -- /bin/true 2>/tmp/e.err
expect error_permission_paranoid_3 $? 1 /tmp/e.err "permission denied" "perf_event_paranoid is 3"
[ -e /tmp/e7 ] && fail error_permission_leaves_nothing "/tmp/e7 was left behind" \
	|| pass error_permission_leaves_nothing
