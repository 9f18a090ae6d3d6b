# Issue 17, items 11 and 12 where only a real system shows them: an offline CPU in -C is
# refused by the plan, and rings larger than the machine are refused before they are mapped
# (the guest has 1 GiB; root has no locked-memory budget).
. /lib.sh
cd /tmp || exit 1
if [ -w /sys/devices/system/cpu/cpu1/online ] && echo 0 >/sys/devices/system/cpu/cpu1/online; then
	/ptcollect record -q -C 1 --duration 0.2 -o /tmp/o1 2>/tmp/o.err
	rc=$?
	echo 1 >/sys/devices/system/cpu/cpu1/online
	[ $rc = 2 ] && grep -q -- '-C: CPU 1 is not online (online: 0)' /tmp/o.err && [ ! -e /tmp/o1 ] &&
		pass offline_cpu_is_refused_by_name ||
		fail offline_cpu_is_refused_by_name "exit $rc: $(cat /tmp/o.err)"
else
	skip offline_cpu_is_refused_by_name "CPU 1 cannot be taken offline here"
fi
avail=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo)
timeout -s KILL 60 /ptcollect record -q -C 0 -m ,1G --duration 0.5 -o /tmp/o2 2>/tmp/o.err
rc=$?
[ $rc = 2 ] && grep -q "KiB of memory, but this machine has" /tmp/o.err && [ ! -e /tmp/o2 ] &&
	pass rings_larger_than_memory_are_refused ||
	fail rings_larger_than_memory_are_refused "exit $rc with $avail kB available: $(cat /tmp/o.err)"
dmesg | grep -q 'Out of memory' && fail no_oom_kill "$(dmesg | grep -A2 'Out of memory' | head -n 5)" ||
	pass no_oom_kill
