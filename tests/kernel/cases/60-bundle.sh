# A decoder-ready bundle, from -- COMMAND and from -p of a process that was already running:
# every .pevent parses by libipt's rules, with MMAP2, COMM, ITRACE_START and AUX records,
# and the time conversion of the control page.
. /lib.sh
/ptcollect record -q -o /tmp/s1 -- /spawner 2 50 0.4 >/tmp/s1.tids
ok=1
for f in /tmp/s1/*.pevent; do
	/ptcollect dump "$f" >"$f.txt" 2>/tmp/dump.err || { ok=0; cat /tmp/dump.err; }
done
[ $ok = 1 ] && pass bundle_command_sideband_parses || fail bundle_command_sideband_parses "dump failed"
cat /tmp/s1/*.pevent.txt >/tmp/s1.all
grep -q 'PERF_RECORD_MMAP2  .*, 5, [0-9a-f]*, /spawner  {' /tmp/s1.all \
	&& pass bundle_command_mmap2_of_the_binary \
	|| fail bundle_command_mmap2_of_the_binary "no r-x MMAP2 of /spawner"
grep -q 'PERF_RECORD_COMM.EXEC  .*, spawner  {' /tmp/s1.all && pass bundle_command_comm_exec \
	|| fail bundle_command_comm_exec "no COMM exec"
forks=$(grep -c 'PERF_RECORD_FORK  ' /tmp/s1.all)
[ "$forks" -ge 2 ] && pass bundle_command_fork_per_thread || fail bundle_command_fork_per_thread "$forks FORK"
grep -q 'PERF_RECORD_ITRACE_START  ' /tmp/s1.all && grep -q 'PERF_RECORD_AUX' /tmp/s1.all \
	&& pass bundle_command_itrace_start_and_aux || fail bundle_command_itrace_start_and_aux "missing"

# The spawner lives until its stdin (a fifo the case holds) closes; "started" says its three
# threads run (no fixed lifetime, no sleep standing in for either).
rm -f /tmp/s2.in
mkfifo /tmp/s2.in
/spawner 3 50 stdin </tmp/s2.in >/tmp/s2.tids &
pid=$!
exec 7>/tmp/s2.in
echo go >&7
_i=0
while ! grep -q '^started$' /tmp/s2.tids && [ $_i -lt 600 ]; do
	sleep 0.1
	_i=$((_i + 1))
done
line=$(grep ' /spawner$' /proc/$pid/maps | grep ' r-xp ' | head -1)
/ptcollect record -q -p $pid --duration 0.5 -o /tmp/s2 7>&-
exec 7>&-
/ptcollect dump /tmp/s2/proc.pevent >/tmp/s2.proc 2>/tmp/dump.err \
	&& pass bundle_pid_proc_sideband_parses || fail bundle_pid_proc_sideband_parses "$(cat /tmp/dump.err)"
missing=""
for t in $(sed -n 's/tid //p' /tmp/s2.tids | sort -u); do
	grep -q "PERF_RECORD_COMM  [0-9a-f]*/$(printf %x "$t"), spawner  {" /tmp/s2.proc \
		|| missing="$missing $t"
done
[ -z "$missing" ] && pass bundle_pid_comm_for_every_thread || fail bundle_pid_comm_for_every_thread "no COMM for$missing"
# ptdump's compact MMAP2: pid/tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags
lo=${line%%-*}; lo=$(printf %x $((0x${lo:-0})))
pgoff=$(echo "$line" | awk '{print $3}'); pgoff=$(printf %x $((0x${pgoff:-0})))
grep -q "PERF_RECORD_MMAP2  [0-9a-f/]*, $lo, [0-9a-f]*, $pgoff, .*, 5, [0-9a-f]*, /spawner  {" \
	/tmp/s2.proc \
	&& pass bundle_pid_mmap2_matches_maps || fail bundle_pid_mmap2_matches_maps "maps: $line; $(grep spawner /tmp/s2.proc)"
for f in /tmp/s2/*.pevent; do /ptcollect dump "$f" >/dev/null 2>&1 || ok=0; done
[ $ok = 1 ] && pass bundle_pid_sideband_parses || fail bundle_pid_sideband_parses "dump failed"
wait $pid

set -- $(/ctlpage)
m=/tmp/s1/manifest.json
if grep -q "\"cap_user_time_zero\": $1" $m && grep -q "\"time_zero\": \"$2\"" $m && \
   grep -q "\"time_mult\": $3," $m && grep -q "\"time_shift\": $4" $m; then
	pass bundle_time_conv_equals_the_control_page
else
	fail bundle_time_conv_equals_the_control_page "control page: $*; manifest: $(grep -A4 time_conv $m | tr -d '\n')"
fi
/ptcollect record -q -e intel_pt//k --kcore -a --duration 0.3 -o /tmp/s3
st=$(sed -n 's/^\([0-9a-f]*\) [Tt] _stext$/\1/p' /tmp/s3/kallsyms)
et=$(sed -n 's/^\([0-9a-f]*\) [A-Za-z] _etext$/\1/p' /tmp/s3/kallsyms)
size=$(wc -c </tmp/s3/kcore.text 2>/dev/null || echo 0)
if [ -n "$st" ] && [ -n "$et" ] && [ "$size" = $((0x$et - 0x$st)) ] && \
   grep -q "\"kcore_base\": \"0x$st\"" /tmp/s3/manifest.json && \
   /ptcollect info /tmp/s3 2>/dev/null | grep -q -- "--raw /tmp/s3/kcore.text:0x$st "; then
	pass bundle_kcore_keeps_the_kernel_text
else
	fail bundle_kcore_keeps_the_kernel_text "_stext $st _etext $et, kcore.text $size bytes, $(grep -c kcore /tmp/s3/manifest.json) manifest lines"
fi
/ptcollect info /tmp/s1 >/tmp/info.txt 2>&1 && grep -q 'ptxed --cpu' /tmp/info.txt \
	&& pass bundle_info_prints_decoder_lines || fail bundle_info_prints_decoder_lines "$(cat /tmp/info.txt)"
