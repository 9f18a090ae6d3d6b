# A filter applied by the kernel: the ranges ptsim received, mapped back through
# /proc/PID/maps, are the file offsets the dry run resolved.
. /lib.sh
spec='filter spin @ /spawner'
plan=$(/ptcollect record --dry-run --json --filter "$spec" -o /tmp/f0 -- /spawner 2>&1)
kstr=$(echo "$plan" | sed -n 's/.*"filter": "\(.*\)",*$/\1/p')
case $kstr in
"filter 0x"*"/0x"*"@/spawner") pass filter_dry_run_resolves ;;
*) fail filter_dry_run_resolves "plan says '$kstr': $plan"; exit 0 ;;
esac
off=$(echo "$kstr" | sed 's/filter \(0x[0-9a-f]*\)\/.*/\1/')
size=$(echo "$kstr" | sed 's/.*\/\(0x[0-9a-f]*\)@.*/\1/')
# The workload runs its thread from the case's line until the case closes the gate.
gate_open
/ptcollect record -q --filter "$spec" -o /tmp/f1 -- /spawner 1 10 stdin <gate >f1.out 8>&- &
rec=$!
echo go >&8
wait_until 300 grep -q '^started$' f1.out
pid=$(pidof spawner)
[ -n "$pid" ] || { fail filter_kernel_range_matches_maps "the workload is not running"; gate_close; wait $rec; exit 0; }
got=$(cat /sys/bus/event_source/devices/intel_pt/sim/filters)
want=""
while read -r range perms pgoff dev inode path; do
	[ "$path" = /spawner ] || continue
	lo=0x${range%-*}; hi=0x${range#*-}
	# the mapping that holds the offset: [pgoff, pgoff + (hi - lo))
	if [ $((off)) -ge $((0x$pgoff)) ] && [ $((off)) -lt $((0x$pgoff + hi - lo)) ]; then
		want=$(printf '0 filter 0x%x 0x%x' $((lo + off - 0x$pgoff)) $((size)))
	fi
done < /proc/$pid/maps
gate_close
wait $rec
rc=$?
[ -n "$want" ] && [ "$got" = "$want" ] && pass filter_kernel_range_matches_maps \
	|| fail filter_kernel_range_matches_maps "kernel resolved '$got', maps say '$want'"
[ $rc = 0 ] && check_bundle filter_bytes_exact /tmp/f1 && pass filter_bytes_exact
grep -q "\"filter\": \"$kstr\"" /tmp/f1/manifest.json && pass filter_in_manifest \
	|| fail filter_in_manifest "$(grep '"filter"' /tmp/f1/manifest.json)"
