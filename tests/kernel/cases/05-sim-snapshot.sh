# Snapshot mode as on intel_pt: aux_head is an offset inside the buffer, one
# PERF_RECORD_AUX {head, buffer size, OVERWRITE} per stop, nothing while running.
# ptsim_test takes two snapshots (DISABLE, read, ENABLE) and checks every byte.
. /lib.sh
/ptsim_test -t 1.5 -a 16 -S -w snap.pt >snap.txt
rc=$?
cat snap.txt
if [ $rc -ne 0 ]; then
	fail sim_snapshot_wrapped "ptsim_test -S found errors (above)"
elif [ "$(grep -c 'wrapped=yes' snap.txt)" -ne 2 ]; then
	fail sim_snapshot_wrapped "expected both snapshots of a 64 KiB buffer to have wrapped"
else
	pass sim_snapshot_wrapped
fi
# the first window, re-checked by ptsim_check from its buffer index alone (lap search)
dd if=snap.pt of=first.pt bs=65536 count=1 2>/dev/null
head=$(sed -n 's/^snapshot 1: aux_head=\(0x[0-9a-f]*\) .*/\1/p' snap.txt)
/ptsim_check -s 65536 first.pt "${head:-0}" && pass sim_snapshot_window_checkable \
	|| fail sim_snapshot_window_checkable "ptsim_check -s 65536 first.pt $head"

/ptsim_test -t 0.3 -a 512 -S >unw.txt
rc=$?
cat unw.txt
if [ $rc -ne 0 ]; then
	fail sim_snapshot_unwrapped "ptsim_test -S found errors (above)"
elif [ "$(grep -c 'wrapped=no' unw.txt)" -ne 2 ]; then
	fail sim_snapshot_unwrapped "expected a 2 MiB buffer not to wrap in 0.3 s"
else
	pass sim_snapshot_unwrapped
fi
