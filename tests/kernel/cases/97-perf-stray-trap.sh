# Stray debug traps, made on purpose (issue 21). ptsim's sim/trap sends a thread one
# SIGTRAP with si_code TRAP_HWBKPT and si_addr its instruction pointer, as the kernel's
# exc_debug_user() sends it for a DR6 breakpoint bit no perf event claimed (README, "Stray
# debug traps"). A breakpoint-triggered workload under ptcollect gets TRAPS of them while it
# waits for its go (blocked in read()) and more while its thread makes the calls: it lives,
# exits 0, every call is a fire and ptcollect's warning counts each trap kept from it. The same
# traps kill a plain trigtarget and perf record -e mem:ADDR:x's workload (exit 133, SIGTRAP).
# The same with record -p on a running trigtarget: its threads are ptcollect's tracees.
. /lib.sh
trap '' PIPE	# the go byte to a program the trap killed fails, and does not kill the case
TRAPS=5
CALLS=2000
T=$D/sim/trap

# inject TID N: N traps into thread TID, each sent (the traps counter moves) before the next
# one is asked for, so that two never merge into one pending SIGTRAP; $sent counts them. The
# thread sends it to itself on its way to user mode: waited for while the thread lives.
inject() {
	sent=0
	while [ $sent -lt "$2" ]; do
		_b=$(stat traps)
		echo "$1" 2>/dev/null >"$T" || return 1
		while [ "$(stat traps)" = "$_b" ]; do
			[ -e "/proc/$1/stat" ] || return 1
			sleep 0.01
		done
		sent=$((sent + 1))
	done
}

# start NAME CMD...: CMD in the background ($spid), its stdin the FIFO NAME.go (the go byte),
# its stdout NAME.out, its exit status into NAME.rc; waits for trigtarget's "ready PID" while
# CMD lives, and sets $pid.
start() {
	_n=$1
	shift
	mkfifo "$_n.go"
	( "$@" <"$_n.go" >"$_n.out" 2>"$_n.err"; echo $? >"$_n.rc" ) &
	spid=$!
	exec 8>"$_n.go"
	pid=
	ready_pid() { pid=$(awk '$1 == "ready" { print $2 }' "$_n.out" 2>/dev/null); [ -n "$pid" ]; }
	wait_of $spid ready_pid
}

# release: the go byte
release() {
	echo g 2>/dev/null >&8
	exec 8>&-
}

# finish: wait for CMD's end (its exit status is in NAME.rc then)
finish() { wait $spid; }

# worker NAME: the thread trigtarget starts for its calls, once it runs ($worker; none if
# the program ended first)
worker() {
	worker=
	until [ -n "$worker" ] || [ -s "$1.rc" ]; do
		worker=$(ls /proc/"$pid"/task 2>/dev/null | grep -vx "$pid" | head -1)
		[ -n "$worker" ] || sleep 0.01
	done
}

# ptcollect, a breakpoint trigger: the guard keeps every trap from the workload
start g /ptcollect record -o g --trigger breakpoint:/trigtarget:trig_hit=mark \
	-- /trigtarget --spaced 500 $CALLS
if [ -z "$pid" ]; then
	fail stray_trap_guard_survives "trigtarget under ptcollect never said ready"; cat g.err
	exit 0
fi
inject "$pid" $TRAPS
before=$sent
release
# and into the thread making the calls, while it makes them (as many as it lives for)
worker g
during=0
if [ -n "$worker" ]; then
	inject "$worker" $TRAPS
	during=$sent
fi
finish g
rc=$(cat g.rc)
fires=$(grep -c '"trigger": 0,' g/manifest.json 2>/dev/null)
kept=$(grep -o 'the kernel sent the workload [0-9]* debug trap' g.err | awk '{ print $6 }')
echo "ptcollect: $before traps while waiting, $during while calling; exit $rc, $fires fires, kept ${kept:-0}"
if [ "$rc" = 0 ] && [ "$before" = $TRAPS ] && [ "$fires" = $CALLS ]; then
	pass stray_trap_guard_survives
else
	fail stray_trap_guard_survives "exit $rc, $before of $TRAPS traps sent, $fires of $CALLS fires"
	cat g.err
fi
if [ "$kept" = $((before + during)) ]; then
	pass stray_trap_guard_counts
else
	fail stray_trap_guard_counts "ptcollect says ${kept:-no} trap(s) kept, $((before + during)) sent"
	cat g.err
fi

# -p: a running trigtarget, every thread seized by ptcollect before the breakpoint is armed
start pt /trigtarget --spaced 500 $CALLS
/ptcollect record -o pg --ready pg.ready -p "$pid" --trigger breakpoint:/trigtarget:trig_hit=mark \
	>/dev/null 2>pg.err &
rec=$!
wait_file_of $rec pg.ready
inject "$pid" $TRAPS
before=$sent
release
# and into the thread it starts for the calls, a tracee from its clone (PTRACE_O_TRACECLONE)
worker pt
during=0
if [ -n "$worker" ]; then
	inject "$worker" $TRAPS
	during=$sent
fi
finish pt
wait $rec
prc=$?
rc=$(cat pt.rc)
fires=$(grep -c '"trigger": 0,' pg/manifest.json 2>/dev/null)
kept=$(grep -o "the kernel sent process $pid [0-9]* debug trap" pg.err | awk '{ print $6 }')
echo "ptcollect -p: $before traps while waiting, $during while calling; target exit $rc, record exit $prc, $fires fires, kept ${kept:-0}"
if [ "$rc" = 0 ] && [ "$prc" = 0 ] && [ "$before" = $TRAPS ] && [ "$fires" = $CALLS ] &&
	[ "$kept" = $((before + during)) ]; then
	pass pid_stray_trap_guard_survives
else
	fail pid_stray_trap_guard_survives "target exit $rc, record exit $prc, $((before + during)) traps sent, $fires of $CALLS fires, ${kept:-no} kept"
	cat pg.err
fi

# a plain program, no tracer: the first trap kills it
start plain /trigtarget $CALLS
inject "$pid" 1
release
finish plain
rc=$(cat plain.rc)
echo "plain trigtarget: $sent trap(s), exit $rc"
[ "$rc" = 133 ] && pass stray_trap_kills_a_plain_program || fail stray_trap_kills_a_plain_program \
	"exit $rc after $sent trap(s) (133: SIGTRAP)"

have_perf || { skip stray_trap_perf_dies "no perf in the guest"; exit 0; }
echo 0 >/proc/sys/kernel/randomize_va_space
off=$(/ptcollect symbols /trigtarget trig_hit | awk '$NF == "trig_hit" { print $1 }')
addr=$(printf '0x%x' $((0x555555554000 + off)))
start p perf record -q -o p.data -e "mem:$addr:x" -- /trigtarget $CALLS
inject "$pid" 1
release
finish p
echo 2 >/proc/sys/kernel/randomize_va_space
rc=$(cat p.rc)
echo "perf record -e mem:$addr:x: $sent trap(s), exit $rc"
[ "$rc" = 133 ] && pass stray_trap_perf_dies || fail stray_trap_perf_dies \
	"perf's workload: exit $rc after $sent trap(s) (133: SIGTRAP)"
