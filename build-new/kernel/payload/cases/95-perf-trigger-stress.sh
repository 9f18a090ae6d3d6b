# Triggers never harm the target (issue 21), with Intel PT on: four record sessions at
# once on trigtarget (two with a breakpoint trigger, two with a uprobe on trig_hit), three
# rounds; every workload exits 0 and every session records exactly its calls. Then perf's
# own execute breakpoint under the same stress (perf record -e mem:ADDR:x, four at once,
# three rounds), for comparison only: its deaths are reported, not failed (they are the
# kernel's or the hypervisor's; see README, "Stray debug traps").
. /lib.sh
CALLS=3000
ROUNDS=3
dead=0 wrong=0 n=0
for r in $(seq $ROUNDS); do
	for i in 1 2 3 4; do
		kind=breakpoint
		[ $i -gt 2 ] && kind=uprobe
		( /ptcollect record -q -o "s$r.$i" --trigger "$kind:/trigtarget:trig_hit=mark" \
			-- /trigtarget --no-wait $CALLS >/dev/null 2>"s$r.$i.err"
		  echo $? >"s$r.$i.rc" ) &
	done
	wait
	for i in 1 2 3 4; do
		n=$((n + 1))
		rc=$(cat "s$r.$i.rc")
		f=$(grep -c '"trigger": 0,' "s$r.$i/manifest.json" 2>/dev/null)
		if [ "$rc" != 0 ]; then
			dead=$((dead + 1))
			echo "round $r session $i: exit $rc"; cat "s$r.$i.err"
		elif [ "$f" != $CALLS ]; then
			wrong=$((wrong + 1))
			echo "round $r session $i: $f fires"; cat "s$r.$i.err"
		fi
	done
done
[ $dead = 0 ] && pass trig_stress_no_workload_dies || fail trig_stress_no_workload_dies \
	"$dead of $n workloads died"
[ $wrong = 0 ] && pass trig_stress_fires_exact || fail trig_stress_fires_exact \
	"$wrong of $n sessions did not record $CALLS fires"

have_perf || { skip trig_stress_perf_side "no perf in the guest"; exit 0; }
# A PIE at its fixed base without ASLR: perf only takes a raw address.
echo 0 >/proc/sys/kernel/randomize_va_space
off=$(/ptcollect symbols /trigtarget trig_hit | awk '$NF == "trig_hit" { print $1 }')
addr=$(printf '0x%x' $((0x555555554000 + off)))
pdead=0 pn=0 codes=""
for r in $(seq $ROUNDS); do
	for i in 1 2 3 4; do
		( perf record -q -o "p$r.$i.data" -e "mem:$addr:x" -- /trigtarget --no-wait $CALLS \
			>/dev/null 2>&1; echo $? >"p$r.$i.rc" ) &
	done
	wait
	for i in 1 2 3 4; do
		pn=$((pn + 1))
		rc=$(cat "p$r.$i.rc")
		[ "$rc" -gt 128 ] && { pdead=$((pdead + 1)); codes="$codes $rc"; }
	done
done
echo 2 >/proc/sys/kernel/randomize_va_space
echo "perf mem:$addr:x: $pdead of $pn workloads died of a signal${codes:+ (exit$codes)}"
pass trig_stress_perf_side
