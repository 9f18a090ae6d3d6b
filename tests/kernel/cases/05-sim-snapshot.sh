# Snapshot mode as on intel_pt: aux_head is an offset inside the buffer, one
# PERF_RECORD_AUX {head, buffer size, OVERWRITE} per stop, nothing while running.
# ptsim_test takes two snapshots (DISABLE, read, ENABLE) and checks every byte.
. /lib.sh

snapshots() { # NAME WANT(yes|no) WHY PTSIM_TEST-ARGS...: both snapshots wrapped=WANT
	name=$1 want=$2 why=$3
	shift 3
	/ptsim_test -S "$@" >"$name.txt"
	rc=$?
	cat "$name.txt"
	if [ $rc -ne 0 ]; then
		fail "$name" "ptsim_test -S found errors (above)"
	elif [ "$(grep -c "wrapped=$want" "$name.txt")" -ne 2 ]; then
		fail "$name" "$why"
	else
		pass "$name"
	fi
}

# each round at least 0.75 s and 96 KiB of the hardware's output (-b: on a loaded host
# the first 0.75 s once wrote 9.5 KiB, and the window had not wrapped)
snapshots sim_snapshot_wrapped yes "expected both snapshots of a 64 KiB buffer to have wrapped" \
	-t 1.5 -b 98304 -a 16 -w snap.pt
# the first window, re-checked by ptsim_check from its buffer index alone (lap search)
dd if=snap.pt of=first.pt bs=65536 count=1 2>/dev/null
head=$(sed -n 's/^snapshot 1: aux_head=\(0x[0-9a-f]*\) .*/\1/p' sim_snapshot_wrapped.txt)
/ptsim_check -s 65536 first.pt "${head:-0}" && pass sim_snapshot_window_checkable \
	|| fail sim_snapshot_window_checkable "ptsim_check -s 65536 first.pt $head"

snapshots sim_snapshot_unwrapped no "expected a 2 MiB buffer not to wrap in 0.3 s" -t 0.3 -a 512
