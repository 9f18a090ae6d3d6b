#!/bin/sh
# /test.sh of the kernel-test guest: runs /cases/*.sh in name order, one at a time,
# each from a fresh ptsim.ko at its defaults and its own working directory, under a
# time limit.  Cases print PASS/FAIL/SKIP lines; this adds a FAIL line for a case
# that timed out, printed no result, or left a kernel warning or the module busy.
cd /tmp || exit 1
limit=$(cat /case-timeout 2>/dev/null || echo 120)

bad_taint() { [ $(($(cat /proc/sys/kernel/tainted) & 0x4280)) -ne 0 ]; } # D, W, L

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
	timeout -s KILL "$limit" sh "$c" >/tmp/case.log 2>&1
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
