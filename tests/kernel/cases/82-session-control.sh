# The control channel while recording every CPU at the simulated PMU's highest rate: the
# ready file appears only once the events have started; ping and status are answered;
# garbage is refused and the recording goes on; disable and enable turn tracing off and
# on; mark is kept; stop ends it cleanly.
. /lib.sh
reload chunk=2048 period_us=100 || exit 0
mkfifo ctl ack
s0=$(stat start)
gate_open # the workload lives until the case closes the gate
/ptcollect record -a -m ,256K -o load --control fifo:ctl,ack --ready ready -- cat gate \
	>/dev/null 2>load.err 8>&- &
pid=$!
# Look as often as the shell can: the events must have started when the file is seen.
# Until ptcollect has written it or exited (a loaded host may take longer than the 200,000
# looks, about 7 s, that bounded this alone), 2,000,000 looks at most.
n=0
while [ ! -e ready ] && kill -0 $pid 2>/dev/null && [ $n -lt 2000000 ]; do n=$((n + 1)); done
s1=$(stat start)
[ -e ready ] && [ "$s1" -gt "$s0" ] && pass control_ready_after_enable \
	|| fail control_ready_after_enable "ready $(cat ready 2>/dev/null), PMU starts $s0 -> $s1"
[ -e ready ] || { kill $pid; exit 0; }
exec 9<ack # ptcollect's replies; read-only, so a read ends when ptcollect exits (lib.sh ctl)
t0=$(cut -d' ' -f1 /proc/uptime)
ok=0
for i in $(seq 50); do
	[ "$(ctl ping)" = ack ] && ok=$((ok + 1))
done
t1=$(cut -d' ' -f1 /proc/uptime)
echo "50 pings answered in $(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }') s under load"
[ $ok = 50 ] && pass control_ping_under_load || fail control_ping_under_load "$ok of 50 acks"
st=$(ctl status)
echo "$st"
echo "$st" | grep -q '"state":"tracing"' && echo "$st" | grep -q '"bytes":"[1-9]' \
	&& pass control_status_json || fail control_status_json "$st"
r1=$(ctl frobnicate now)
printf '\001\002\n' >ctl
read -r r2 <&9 # the reply to the garbage, or at once empty when ptcollect has exited
r3=$(ctl enable please)
echo "$r1 / $r2 / $r3"
case "$r1$r2$r3" in
error*error*error*) pass control_garbage_refused ;;
*) fail control_garbage_refused "replies '$r1' '$r2' '$r3'" ;;
esac
status_bytes() { ctl status | sed 's/.*"bytes":"\([0-9]*\)".*/\1/'; }
b=$(status_bytes)
# the status's bytes grow, however slow the guest: until the PMU stood still for 30 s
grown() { [ "$(status_bytes)" -gt "$b" ]; }
wait_moving 300 "stat bytes" grown
st=$(ctl status)
b2=$(echo "$st" | sed 's/.*"bytes":"\([0-9]*\)".*/\1/')
kill -0 $pid && [ "$b2" -gt "$b" ] && pass control_goes_on_after_garbage \
	|| fail control_goes_on_after_garbage "$st"
[ "$(ctl disable)" = ack ] && ctl status | grep -q '"state":"stopped"' \
	&& [ "$(ctl enable)" = ack ] && ctl status | grep -q '"state":"tracing"' \
	&& pass control_disable_enable || fail control_disable_enable "$(ctl status)"
[ "$(ctl mark slow request 42)" = ack ] || fail control_mark "no ack"
[ "$(ctl stop)" = ack ] || fail control_stop "no ack"
gate_close
wait $pid
rc=$?
[ $rc = 0 ] || [ $rc = 143 ] || { cat load.err; fail control_stop "rc=$rc"; }
grep -q '"text": "slow request 42"' load/manifest.json && pass control_mark \
	|| fail control_mark "no mark in the manifest"
grep -q '"complete": true' load/manifest.json && pass control_stop \
	|| fail control_stop "the manifest is not complete"
check_bundle control_trace_exact load && pass control_trace_exact
