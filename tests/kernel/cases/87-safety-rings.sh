# Issue 17's load, the most rings the rig allows: --per-thread on a process of a thousand
# threads, a ring each (4 KiB data, 4 KiB AUX). Memory stays flat, every thread has its
# sideband, the manifest agrees with the 2002 files.
. /lib.sh
cd /tmp || exit 1
# The target lives until its stdin (a fifo) closes. RssAnon is sampled from ptcollect's ready
# file on, once its 2000 rings are set up (under load that takes longer than any fixed wait:
# samples taken during the setup grew with it), and the recording ends on SIGINT after them.
rm -f /tmp/k.in /tmp/k2.ready
mkfifo /tmp/k.in
/threads sleep 1000 stdin </tmp/k.in >/tmp/k.out &
pid=$!
exec 7>/tmp/k.in
wait_ready /tmp/k.out
nthr=$(grep -c '^tid ' /tmp/k.out)
/ptcollect record -q --per-thread -m 4K,4K -p $pid --ready /tmp/k2.ready -o /tmp/k2 \
	2>/tmp/k.err 7>&- &
rec=$!
wait_file_of $rec /tmp/k2.ready || fail load_ready "no ready file (ptcollect exited, or 2 minutes)"
samples=$(sample_rss $rec 6)
kill -INT $rec
wait $rec
rc=$?
echo "per-thread ptcollect RssAnon kB, once a second:$samples"
n=$(ls /tmp/k2/*.pt 2>/dev/null | wc -l)
[ $rc = 0 ] && [ "$n" = "$nthr" ] && pass load_1000_rings_per_thread \
	|| fail load_1000_rings_per_thread "exit $rc ($(head -c 300 /tmp/k.err)); $n rings for $nthr threads"
check_flat load_memory_flat_per_thread $samples && pass load_memory_flat_per_thread
check_agrees load_per_thread_bundle_agrees /tmp/k2 && pass load_per_thread_bundle_agrees
check_every_thread load_every_thread_has_sideband_per_thread /tmp/k.out &&
	pass load_every_thread_has_sideband_per_thread
exec 7>&-
wait $pid
rm -rf /tmp/k2
