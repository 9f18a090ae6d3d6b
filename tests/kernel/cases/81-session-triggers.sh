# Triggers with Intel PT on: trigtarget calls trig_hit exactly N times per thread; a
# uprobe (BPF) and a breakpoint trigger each record exactly that many fires, from the
# workload's threads, while every trace byte is recorded; --trigger-count K ends the
# recording after K fires; =start traces only from the first fire on.
. /lib.sh
fires() { # MANIFEST TRIGGER: fires of that trigger listed in the manifest
	grep -c "\"trigger\": $2," "$1"
}

for kind in uprobe breakpoint; do
	b0=$(stat bytes)
	/ptcollect record -q -o "$kind" --trigger "$kind:/trigtarget:trig_hit" \
		--trigger "$kind:/trigtarget:trig_other" -- /trigtarget --no-wait 300 2 >/dev/null \
		2>"$kind.err"
	rc=$?
	b1=$(stat bytes)
	[ $rc = 0 ] || { cat "$kind.err"; fail "trig_${kind}_exit" "rc=$rc"; continue; }
	n=$(fires "$kind/manifest.json" 0)
	o=$(fires "$kind/manifest.json" 1)
	[ "$n" = 600 ] && [ "$o" = 2 ] && pass "trig_${kind}_fires_exactly_n" \
		|| fail "trig_${kind}_fires_exactly_n" "trig_hit $n fires (want 600), trig_other $o (want 2)"
	grep -q '"dropped": "0"' "$kind/manifest.json" || fail "trig_${kind}_none_dropped" "dropped"
	# the BPF program counts each fire it drops; a breakpoint, the kernel (Linux 6.0)
	[ "$(grep -c '"dropped_counted": true' "$kind/manifest.json")" = 2 ] &&
		pass "trig_${kind}_dropped_counted" ||
		fail "trig_${kind}_dropped_counted" "$(grep dropped "$kind/manifest.json")"
	check_bundle "trig_${kind}_trace_exact" "$kind" && [ "$(total_pt "$kind")" = $((b1 - b0)) ] \
		&& pass "trig_${kind}_trace_exact" \
		|| fail "trig_${kind}_trace_exact" "captured $(total_pt "$kind"), written $((b1 - b0))"
done

# A kernel before 6.0 (nolostcount.so refuses PERF_FORMAT_LOST as it does): every event is
# opened again without the count; the recording is the same, and the manifest says what was
# not counted (each stream's lost.unreported null, the trigger's dropped_counted false) and
# record warns of it, rather than a 0 that nobody counted.
b0=$(stat bytes)
NOLOSTCOUNT_LOG=$PWD/old.log LD_PRELOAD=/nolostcount.so /ptcollect record -o old \
	--trigger breakpoint:/trigtarget:trig_hit -- /trigtarget --no-wait 300 2 >/dev/null 2>old.err
rc=$?
b1=$(stat bytes)
set -- $(cat old.log 2>/dev/null)
echo "nolostcount: $*"
[ $rc = 0 ] && [ "${2:-0}" -gt 0 ] && [ "$(fires old/manifest.json 0)" = 600 ] &&
	pass trig_old_kernel_falls_back ||
	fail trig_old_kernel_falls_back "exit $rc, interposer: $*, $(fires old/manifest.json 0) fires: $(cat old.err)"
grep -q '"dropped_counted": false' old/manifest.json &&
	grep -q 'does not count the fires a full ring drops' old.err &&
	pass trig_old_kernel_dropped_not_counted ||
	fail trig_old_kernel_dropped_not_counted "$(grep dropped old/manifest.json); $(cat old.err)"
manifest_streams old/manifest.json | awk '$10 != "-" { bad = 1 } END { exit bad || NR == 0 }' &&
	pass old_kernel_unreported_null ||
	fail old_kernel_unreported_null "$(manifest_streams old/manifest.json)"
check_bundle old_kernel_trace_exact old && [ "$(total_pt old)" = $((b1 - b0)) ] &&
	pass old_kernel_trace_exact ||
	fail old_kernel_trace_exact "captured $(total_pt old), written $((b1 - b0))"

for kind in uprobe breakpoint; do
	/ptcollect record -q -o "count-$kind" --trigger "$kind:/trigtarget:trig_hit" \
		--trigger-count 7 -- /trigtarget --no-wait --spaced 2000 5000 1 >/dev/null \
		2>"count-$kind.err"
	n=$(fires "count-$kind/manifest.json" 0)
	[ "$n" = 7 ] && grep -q '"stop_reason": "--trigger-count reached"' "count-$kind/manifest.json" \
		&& pass "trig_${kind}_count_stops_after_k" \
		|| { cat "count-$kind.err"; fail "trig_${kind}_count_stops_after_k" "$n fires"; }
done

# =start: the events stay off until the first fire (trig_other, after every trig_hit):
# no AUX record is older than the fire (the sideband's times against the fire's perf_time),
# and the same run traced from its exec writes far more. What =start writes is what the
# workload's exit path takes after the fire: a chunk per tick and one per sched-out of the
# traced threads, so it grows with the guest's scheduling (a loaded host once made it
# 4096 bytes, 8 chunks, against a fixed bound of fewer than 4096): it is compared with
# the whole run's bytes, not with a constant. The whole run makes 1000000 calls: with
# 300000 its bytes fell to 14848 once, under the 16384 the comparison needs.
b0=$(stat bytes)
/ptcollect record -q -o whole -- /trigtarget --no-wait 1000000 1 >/dev/null 2>&1
whole=$(($(stat bytes) - b0))
b0=$(stat bytes)
/ptcollect record -q -o start --trigger uprobe:/trigtarget:trig_other=start -- \
	/trigtarget --no-wait 1000000 1 >/dev/null 2>start.err
b1=$(stat bytes)
ft=$(tr -d ' \n' <start/manifest.json | sed 's/.*"fires":\[//' | grep -o '"perf_time":"[0-9]*"' |
	head -1 | grep -o '[0-9][0-9]*')
early=0 aux=0
for f in start/*.pevent; do
	/ptcollect dump "$f" | awk '$2 ~ /^PERF_RECORD_AUX/ {
		for (i = 1; i <= NF; i++) if ($i == "{") { print $(i + 2); break } }'
done >aux.times
while read -r t; do
	aux=$((aux + 1))
	[ -n "$ft" ] && [ $((0x$t)) -lt "$ft" ] && early=$((early + 1))
done <aux.times
echo "=start: fire at perf time ${ft:-?}, $aux AUX record(s), $early before it; $((b1 - b0)) bytes (from its exec: $whole)"
grep -q '"action": "start"' start/manifest.json && [ "$(fires start/manifest.json 0)" = 1 ] &&
	[ -n "$ft" ] && [ $early = 0 ] && [ $((4 * (b1 - b0))) -lt $whole ] && [ $whole -gt 16384 ] &&
	pass trig_start_traces_from_the_fire \
	|| { cat start.err; fail trig_start_traces_from_the_fire \
		"fires $(fires start/manifest.json 0), $early of $aux AUX records before the fire, $((b1 - b0)) bytes (from its exec: $whole)"; }
