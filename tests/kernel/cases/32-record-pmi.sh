# The simulated PMU publishing as intel_pt does (pmi=1): aux_head moves a ToPA region at
# a time (the core allocates a 64 KiB AUX area in 16 KiB chunks, ptcollect's watermark),
# and stops fall on region boundaries. ptcollect keeps every byte, counts every stop as
# the PMU does, and restarts the hardware after each.
. /lib.sh
reload pmi=1 chunk=2048 period_us=100 || exit 0
b0=$(stat bytes)
# The workload lives until the PMU has written 16 regions (more than 8 AUX records).
gate_open
/ptcollect record -q -a -m ,64K -o p1 -- cat gate >/dev/null 8>&- &
pid=$!
wait_stat bytes $((b0 + 16 * 16384)) ||
	fail pmi_wrote "the PMU wrote $(($(stat bytes) - b0)) bytes, then nothing for 30 s"
gate_close
wait $pid
rc=$?
b1=$(stat bytes)
[ $rc = 0 ] && pass pmi_exit_zero || fail pmi_exit_zero "rc=$rc"
check_bundle pmi_bytes_exact p1 && pass pmi_bytes_exact
[ "$(total_pt p1)" = $((b1 - b0)) ] && pass pmi_keeps_every_written_byte \
	|| fail pmi_keeps_every_written_byte "captured $(total_pt p1), wrote $((b1 - b0))"
# Every AUX record ends on a region boundary, but each CPU's last: the final stop.
bad=0 n=0
for f in p1/cpu*.pevent; do
	/ptcollect dump "$f" | awk '$2 ~ /^PERF_RECORD_AUX/ { sub(/,/, "", $3); sub(/,/, "", $4);
		print "0x" $3, "0x" $4 }' >p1.aux
	n=$((n + $(wc -l <p1.aux)))
	bad=$((bad + $(head -n -1 p1.aux | while read -r off size; do
		[ $(((off + size) % 16384)) = 0 ] || echo x; done | wc -l)))
done
[ $n -gt 8 ] && [ $bad = 0 ] && pass pmi_publishes_whole_regions \
	|| fail pmi_publishes_whole_regions "$bad of $n AUX records end inside a 16 KiB region"

# A small buffer at a high rate: every stop is counted and answered.
reload pmi=1 chunk=2048 period_us=100 || exit 0
b0=$(stat bytes); t0=$(stat truncated)
# One spinning thread, until the buffer has filled (and been answered) a few times.
gate_open
/ptcollect record -q -m ,8K -o p2 -- /spawner 1 1 stdin <gate >/dev/null 8>&- &
pid=$!
echo go >&8
wait_stat truncated $((t0 + 2)) bytes ||
	fail pmi_losses_stops "$(($(stat truncated) - t0)) stops, then no byte written for 30 s"
gate_close
wait $pid
rc=$?
b1=$(stat bytes); t1=$(stat truncated)
[ $rc = 0 ] && pass pmi_losses_exit_zero || fail pmi_losses_exit_zero "rc=$rc"
trunc=$(json_sum p2/manifest.json truncated)
[ $((t1 - t0)) -gt 0 ] && [ "$trunc" = $((t1 - t0)) ] && pass pmi_losses_truncated_equal_kernel \
	|| fail pmi_losses_truncated_equal_kernel "manifest says $trunc, the PMU flagged $((t1 - t0))"
check_bundle pmi_losses_bytes_exact p2 && pass pmi_losses_bytes_exact
[ "$(total_pt p2)" = $((b1 - b0)) ] && pass pmi_losses_keeps_every_written_byte \
	|| fail pmi_losses_keeps_every_written_byte "captured $(total_pt p2), wrote $((b1 - b0))"
reload
