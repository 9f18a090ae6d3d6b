# The plan's streams are the recording's: the stream files --dry-run --json names are the
# ones the recording writes, for every target kind; and info reads back every bundle, also
# one whose recording was killed.
. /lib.sh

plan_files() { /ptcollect record --dry-run --json "$@" | sed -n 's/.*"file": "\(.*\)",*$/\1/p' | sort; }
bundle_files() { ls "$1" 2>/dev/null | grep '\.pt$' | sort; }

# same NAME DIR ARGS...: a dry run, then the recording, with the same arguments
same() {
	name=$1 dir=$2
	shift 2
	want=$(plan_files -o "$dir" "$@")
	/ptcollect record -q -o "$dir" "$@"
	rc=$?
	got=$(bundle_files "$dir")
	if [ -n "$want" ] && [ "$want" = "$got" ]; then
		pass "$name"
	else
		fail "$name" "plan: $(echo $want); recorded: $(echo $got); rc=$rc"
	fi
	if /ptcollect info "$dir" >"/tmp/info.$name" 2>&1; then
		pass "${name}_info_reads_it"
	else
		fail "${name}_info_reads_it" "$(cat "/tmp/info.$name")"
	fi
}

same plan_streams_workload /tmp/w -- /bin/sh -c '. /lib.sh; work 3000'

# three threads, running from the case's line until it closes the gate
gate_open
/spawner 3 10 stdin <gate >sp.out 8>&- &
pid=$!
echo go >&8
wait_of $pid grep -q '^started$' sp.out || fail plan_streams_spawner "its threads never started (it exited)"
same plan_streams_pid_with_threads /tmp/pp -p $pid --duration 0.5
same plan_streams_per_thread_pid /tmp/pt --per-thread -p $pid --duration 0.5
[ "$(bundle_files /tmp/pt | wc -l)" = 4 ] && pass plan_streams_per_thread_one_per_thread \
	|| fail plan_streams_per_thread_one_per_thread "$(echo $(bundle_files /tmp/pt))"
tid=$(ls /proc/$pid/task | sort -n | tail -1)
same plan_streams_tid /tmp/tt -t $tid --duration 0.3
gate_close
wait $pid 2>/dev/null

same plan_streams_all_cpus /tmp/pa -a --duration 0.3
same plan_streams_cpu_list /tmp/pc -C 1 --duration 0.3

# --per-thread on a workload: one stream, named after the workload's pid once it runs.
n=$(/ptcollect record --dry-run --json --per-thread -o /tmp/pw -- /bin/true | grep -c '"workload": true')
/ptcollect record -q --per-thread -o /tmp/pw -- /bin/true
[ "$n" = 1 ] && [ "$(bundle_files /tmp/pw | grep -c '^tid[0-9]*\.pt$')" = 1 ] \
	&& pass plan_streams_per_thread_workload || fail plan_streams_per_thread_workload \
	"plan: $n workload stream(s); recorded: $(echo $(bundle_files /tmp/pw))"
/ptcollect info /tmp/pw >/dev/null 2>&1 && pass plan_streams_per_thread_workload_info \
	|| fail plan_streams_per_thread_workload_info "$(/ptcollect info /tmp/pw 2>&1)"

# A recording killed mid-way: the manifest of its last checkpoint reads back, and says so.
# killed once a checkpoint (every 5 s) has written bytes into the manifest: it lives until
# then, and the wait is bounded by the PMU's progress (the bytes a checkpoint counts, which
# stand still once ptcollect has exited or stopped draining)
checkpointed() { [ "$(json_sum /tmp/killed/manifest.json bytes 2>/dev/null)" -gt 0 ]; }
/ptcollect record -q -a -o /tmp/killed &
rec=$!
wait_moving 300 "stat bytes" checkpointed ||
	fail info_killed_checkpoint "no manifest with bytes, and the PMU wrote nothing for 30 s"
kill -9 $rec
wait $rec 2>/dev/null
if /ptcollect info /tmp/killed >/tmp/info.killed 2>&1 && grep -q 'did not finish cleanly' /tmp/info.killed \
	&& grep -q '"complete": false' /tmp/killed/manifest.json; then
	pass info_reads_a_killed_recording
else
	fail info_reads_a_killed_recording "$(cat /tmp/info.killed)"
fi
