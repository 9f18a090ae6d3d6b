#!/bin/sh
# /test.sh of the kernel-test guest: runs /cases/*.sh in name order, one at a time,
# each from a fresh ptsim.ko at its defaults and its own working directory, under a
# time limit.  Cases print PASS/FAIL/SKIP lines; this adds a FAIL line for a case
# that timed out, printed no result, or left a kernel warning or the module busy.
cd /tmp || exit 1
limit=$(cat /case-timeout 2>/dev/null || echo 120)

bad_taint() { [ $(($(cat /proc/sys/kernel/tainted) & 0x4280)) -ne 0 ]; } # D, W, L

# ran: seconds the guest got to run, per CPU, since boot (/proc/stat's time of every CPU:
# idle time is counted in wall time, busy time one tick for each tick the CPU took). A host
# that runs other work beside QEMU stops the vCPUs, and the ticks missed meanwhile are not
# counted: the limit of a case is in this time, so a loaded host slows the case and its
# limit alike, while a case that hangs (busy or waiting) still reaches it.
ran() { awk '$1 == "cpu" { t = 0; for (i = 2; i <= 9; i++) t += $i } /^cpu[0-9]/ { n++ }
	END { printf "%d", t / n / 100 }' /proc/stat; }
# run_case CASE LOG: runs the case, killed once it has run LIMIT seconds of ran(); the exit
# status, 137 when killed
run_case() {
	sh "$1" >"$2" 2>&1 &
	_pid=$!
	_r0=$(ran)
	_w0=$(cut -d. -f1 /proc/uptime)
	while kill -0 $_pid 2>/dev/null; do
		if [ $(($(ran) - _r0)) -ge "$limit" ]; then
			kill -KILL $_pid 2>/dev/null
			break
		fi
		sleep 1
	done
	wait $_pid
	_rc=$?
	echo "case: ran $(($(ran) - _r0)) s, $(($(cut -d. -f1 /proc/uptime) - _w0)) s wall"
	return $_rc
}

for c in /cases/*.sh; do
	name=${c##*/}
	name=${name%.sh}
	echo "== $name"
	rmmod ptsim 2>/dev/null
	if ! /rig-load; then
		echo "FAIL $name: insmod ptsim.ko failed"
		continue
	fi
	warned=0
	bad_taint && warned=1
	mkdir -p "/tmp/$name" && cd "/tmp/$name" || exit 1
	run_case "$c" /tmp/case.log
	rc=$?
	cd /tmp || exit 1
	cat /tmp/case.log
	if [ "$rc" -eq 137 ]; then
		echo "FAIL $name: timed out after $limit s"
	elif ! grep -qE '^(PASS|FAIL|SKIP) ' /tmp/case.log; then
		echo "FAIL $name: printed no PASS/FAIL/SKIP line (exit status $rc)"
	fi
	if [ "$warned" -eq 0 ] && bad_taint; then
		dmesg | tail -n 60
		echo "FAIL $name: kernel warning or oops (tainted=$(cat /proc/sys/kernel/tainted))"
	fi
	# leftover events or processes would keep the module busy for the next case
	rmmod ptsim 2>/dev/null || echo "FAIL $name: ptsim.ko still in use after the case"
done
echo "== done"
exit 0
