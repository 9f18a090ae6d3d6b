# Issue 17, item 4 and the load: -p on processes whose threads come and go during setup,
# whose main thread exited, and with a thousand threads (per CPU and one ring each).
. /lib.sh
cd /tmp || exit 1
wait_ready() { # FILE: the target printed "ready"
	_i=0
	while ! grep -q '^ready$' "$1" 2>/dev/null && [ $_i -lt 600 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}

# ---- 4: threads that start and end during setup: 5 runs of 5 ----
ok=0 why=""
for i in 1 2 3 4 5; do
	/threads churn 8 3 >/tmp/c.out &
	pid=$!
	wait_ready /tmp/c.out
	/ptcollect record -q -p $pid --duration 0.5 -o /tmp/c$i 2>/tmp/c.err
	rc=$?
	wait $pid
	if [ $rc = 0 ]; then
		ok=$((ok + 1))
	else
		why="$why; run $i: exit $rc: $(cat /tmp/c.err)"
	fi
done
[ $ok = 5 ] && pass pid_churn_5_of_5 || fail pid_churn_5_of_5 "$ok of 5 recorded${why}"
[ -d /tmp/c5 ] && check_agrees pid_churn_bundle_agrees /tmp/c5 && pass pid_churn_bundle_agrees
[ -d /tmp/c5 ] && check_bundle pid_churn_bytes_exact /tmp/c5 && pass pid_churn_bytes_exact

# ---- 4: the main thread exited, the others run ----
/threads mainexit 3 3 >/tmp/m.out &
pid=$!
wait_ready /tmp/m.out
sleep 0.2
st=$(sed -n 's/^State:\t\(.\).*/\1/p' /proc/$pid/status)
b0=$(stat bytes)
/ptcollect record -q -p $pid --duration 0.5 -o /tmp/m1 2>/tmp/m.err
rc=$?
b1=$(stat bytes)
wait $pid
if [ $rc = 0 ] && [ "$(total_pt /tmp/m1)" -gt 0 ]; then
	pass pid_main_thread_exited
else
	fail pid_main_thread_exited "state $st; exit $rc: $(cat /tmp/m.err); $(total_pt /tmp/m1) bytes"
fi
[ -d /tmp/m1 ] && check_bundle pid_main_thread_exited_bytes_exact /tmp/m1 &&
	[ "$(total_pt /tmp/m1)" = $((b1 - b0)) ] && pass pid_main_thread_exited_bytes_exact

# ---- load: 1000 threads with -p, per CPU; memory flat, every thread's sideband ----
# rss PID: RssAnon in kB: the heap and stacks, not the rings (mapped, and touched as they fill)
rss() { sed -n 's/^RssAnon:[^0-9]*\([0-9]*\).*/\1/p' /proc/$1/status 2>/dev/null; }
# tids_seen DIR: the hex tids of every record sample in the .pevent files
tids_seen() {
	for _f in "$1"/*.pevent; do /ptcollect dump --no-offset "$_f" 2>/dev/null; done |
		sed -n 's/.*  { [0-9a-f]*\/\([0-9a-f]*\) .*/\1/p' | sort -u
}
# missing_tids OUTFILE SEEN: the target's tids (decimal, from OUTFILE) not in SEEN (hex)
missing_tids() {
	sed -n 's/^tid //p' "$1" | while read -r t; do printf '%x\n' "$t"; done |
		awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { n++; if (n < 6) printf " %s", $1 }
			END { if (n) printf " (%d in all)", n }' "$2" -
}
t0=$(date +%s)
/threads sleep 1000 40 >/tmp/k.out &
pid=$!
wait_ready /tmp/k.out
nthr=$(grep -c '^tid ' /tmp/k.out)
echo "1000 threads started in $(($(date +%s) - t0)) s ($nthr tids)"
/ptcollect record -q -p $pid --duration 12 -o /tmp/k1 2>/tmp/k.err &
rec=$!
samples=""
for s in 1 2 3 4 5 6 7 8 9 10 11; do
	sleep 1
	samples="$samples $(rss $rec)"
done
wait $rec
rc=$?
echo "ptcollect RssAnon kB, once a second:$samples"
set -- $samples
early=$3
peak=0
for v; do [ "${v:-0}" -gt $peak ] && peak=$v; done
if [ $rc != 0 ]; then
	fail load_1000_threads_per_cpu "exit $rc: $(cat /tmp/k.err)"
else
	pass load_1000_threads_per_cpu
fi
[ -n "$early" ] && [ $((peak - early)) -le 1024 ] && pass load_memory_flat_per_cpu \
	|| fail load_memory_flat_per_cpu "RssAnon went from $early to $peak kB:$samples"
tids_seen /tmp/k1 >/tmp/k.seen
miss=$(missing_tids /tmp/k.out /tmp/k.seen)
[ -z "$miss" ] && pass load_every_thread_has_sideband_per_cpu \
	|| fail load_every_thread_has_sideband_per_cpu "no record of thread(s)$miss"
/ptcollect dump /tmp/k1/proc.pevent 2>/dev/null | sed -n 's/.*PERF_RECORD_COMM  [0-9a-f]*\/\([0-9a-f]*\),.*/\1/p' |
	sort -u >/tmp/k.comm
miss=$(missing_tids /tmp/k.out /tmp/k.comm)
[ -z "$miss" ] && pass load_every_thread_has_a_comm || fail load_every_thread_has_a_comm "no COMM for$miss"
check_agrees load_per_cpu_bundle_agrees /tmp/k1 && pass load_per_cpu_bundle_agrees

# ---- load: one ring per thread, a thousand and one rings ----
/ptcollect record -q --per-thread -m 4K,4K -p $pid --duration 8 -o /tmp/k2 2>/tmp/k.err &
rec=$!
samples=""
for s in 1 2 3 4 5 6 7; do
	sleep 1
	samples="$samples $(rss $rec)"
done
wait $rec
rc=$?
echo "per-thread ptcollect RssAnon kB, once a second:$samples"
n=$(ls /tmp/k2/*.pt 2>/dev/null | wc -l)
[ $rc = 0 ] && [ "$n" = "$nthr" ] && pass load_1000_rings_per_thread \
	|| fail load_1000_rings_per_thread "exit $rc ($(head -c 300 /tmp/k.err)); $n rings for $nthr threads"
set -- $samples
early=$3
peak=0
for v; do [ "${v:-0}" -gt $peak ] && peak=$v; done
[ -n "$early" ] && [ $((peak - early)) -le 1024 ] && pass load_memory_flat_per_thread \
	|| fail load_memory_flat_per_thread "RssAnon went from $early to $peak kB:$samples"
tids_seen /tmp/k2 >/tmp/k.seen
miss=$(missing_tids /tmp/k.out /tmp/k.seen)
[ -z "$miss" ] && pass load_every_thread_has_sideband_per_thread \
	|| fail load_every_thread_has_sideband_per_thread "no record of thread(s)$miss"
check_agrees load_per_thread_bundle_agrees /tmp/k2 && pass load_per_thread_bundle_agrees
kill $pid 2>/dev/null
wait $pid
rm -rf /tmp/k1 /tmp/k2 /tmp/c1 /tmp/c2 /tmp/c3 /tmp/c4 /tmp/c5 /tmp/m1
