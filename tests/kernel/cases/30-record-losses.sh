# A small AUX buffer at a high rate: the losses ptcollect reports equal the kernel's.
. /lib.sh
reload chunk=2048 period_us=100 || exit 0
b0=$(stat bytes); t0=$(stat truncated)
/ptcollect record -q -m ,8K -o /tmp/l1 -- /spawner 0 1 1 >/dev/null
rc=$?
b1=$(stat bytes); t1=$(stat truncated)
[ $rc = 0 ] && pass losses_exit_zero || fail losses_exit_zero "rc=$rc"
trunc=$(json_sum /tmp/l1/manifest.json truncated)
[ $((t1 - t0)) -gt 0 ] && [ "$trunc" = $((t1 - t0)) ] && pass losses_truncated_equal_kernel \
	|| fail losses_truncated_equal_kernel "manifest says $trunc, the PMU flagged $((t1 - t0))"
check_bundle losses_bytes_exact /tmp/l1 && pass losses_bytes_exact
[ "$(total_pt /tmp/l1)" = $((b1 - b0)) ] && pass losses_keeps_every_written_byte \
	|| fail losses_keeps_every_written_byte "captured $(total_pt /tmp/l1), wrote $((b1 - b0))"
reload
