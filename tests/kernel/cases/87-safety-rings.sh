# Issue 17's load, the most rings the rig allows: --per-thread on a process of a thousand
# threads, a ring each (4 KiB data, 4 KiB AUX). Memory stays flat, every thread has its
# sideband, the manifest agrees with the 2002 files.
. /lib.sh
cd /tmp || exit 1
/threads sleep 1000 25 >/tmp/k.out &
pid=$!
wait_ready /tmp/k.out
nthr=$(grep -c '^tid ' /tmp/k.out)
/ptcollect record -q --per-thread -m 4K,4K -p $pid --duration 8 -o /tmp/k2 2>/tmp/k.err &
rec=$!
samples=$(sample_rss $rec 7)
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
kill $pid 2>/dev/null
wait $pid
rm -rf /tmp/k2
