# Exact call counts from a recorded trace (issue 26). ptcollect records /play/callprog
# (tests/kernel/play/callprog.S: f called exactly 1000 times, calls 50, 150, ..., 950 slow by
# a loop of 100 iterations) while the simulated PMU plays that program's stream, derived on
# the host by ptplay (as 70-replay-program.sh does for playprog). Then `ptcollect report
# --json --clock insns --outliers 10` of the bundle against libipt's ptxed on the same
# bundle's stream (the line `ptcollect info` prints): f's calls = the count of f's entries in
# ptxed's list = 1000, f's instructions and the total = ptxed's, and the 10 outliers are the
# 10 slow calls. Durations are instruction counts: the played stream's only timing packet is
# the TSC of its first PSB, so every call lasts 0 ns in perf time and time cannot tell the
# slow calls from the others.
. /lib.sh
PLAY=/play
if [ ! -s $PLAY/callprog.pt ]; then
	skip report_calls "no played stream: $(cat $PLAY/callprog.skip 2>/dev/null)"
	exit 0
fi
have_oracle || { skip report_calls "$(oracle_missing)"; exit 0; }
len=$(wc -c <$PLAY/callprog.pt)

set_param pattern 0
cat $PLAY/callprog.pt >"$D/sim/replay"
set_param pattern 4
rm -rf run rec && mkdir run && cp $PLAY/callprog run/callprog
prog=$PWD/run/callprog
b0=$(stat bytes)
/ptcollect record -q --per-thread -o rec -- "$prog" >record.out 2>&1
rc=$?
set_param pattern 0
if [ $rc != 0 ] || ! grep -q '^callprog: done$' record.out; then
	fail report_calls_record "rc=$rc: $(cat record.out)"
	exit 0
fi
stream=""
for f in rec/*.pt; do
	[ -s "$f" ] && stream="$stream${stream:+ }${f##*/}"
done
if [ "$(stat played)" = "$len" ] && [ $(($(stat bytes) - b0)) = "$len" ] &&
	[ "$(total_pt rec)" = "$len" ] && [ -n "$stream" ] && [ "$stream" = "${stream% *}" ]; then
	pass report_calls_recorded
else
	fail report_calls_recorded "stream $len bytes; played $(stat played), wrote" \
		"$(($(stat bytes) - b0)); bundle $(total_pt rec) bytes in '$stream'"
	exit 0
fi

# ptxed, as `info` prints it for the stream: the program's instruction list
line=$(/ptcollect info --json "$PWD/rec" 2>/dev/null |
	sed -n 's/^ *"ptxed": "\(.*\)",*$/\1/p' | grep -- "--pt $PWD/rec/$stream\$")
echo "ptxed line: $line"
# shellcheck disable=SC2086 # the line is split on spaces, as printed
$line >ptxed.out 2>&1
rc=$?
grep -E '^[0-9a-f]{16} ' ptxed.out | awk '{ print $1 }' >ptxed.insns
errs=$(grep -ci 'error' ptxed.out)
if [ $rc = 0 ] && [ "$errs" = 0 ] && cmp -s ptxed.insns $PLAY/callprog.insns; then
	pass report_calls_ptxed_decodes
else
	fail report_calls_ptxed_decodes "rc=$rc, $errs error lines, $(wc -l <ptxed.insns) of" \
		"$(wc -l <$PLAY/callprog.insns) instructions: $(head -n 20 ptxed.out)"
	exit 0
fi

# From ptxed's list: f's calls (its entry address in the list), its instructions (the
# addresses in [f, f + size)), and each call as "CALL-NUMBER START INSNS", START the number of
# instructions before f's first one (report's start on the instruction clock).
# shellcheck disable=SC2046 # nm -S: address size type name
set -- $(awk '$4 == "f" { print $1, $2 }' $PLAY/callprog.syms)
lo=$(printf '%016x' $((0x$1)))
hi=$(printf '%016x' $((0x$1 + 0x$2)))
# (the addresses compared as strings, "x" in front: busybox awk reads some of them as octal)
awk -v lo="x$lo" -v hi="x$hi" '
	{ n++; a = "x" $1; inf = (a >= lo && a < hi) }
	a == lo { calls++; cur = 0; at = n - 1 }
	inf { insns++; cur++ }
	!inf && was { print "call", calls, at, cur }
	{ was = inf }
	END { if (was) print "call", calls, at, cur; print "total", n, calls + 0, insns + 0 }
' ptxed.insns >ptxed.calls
# shellcheck disable=SC2046
set -- $(grep '^total ' ptxed.calls)
x_insns=$2 x_calls=$3 x_f=$4
# the slow calls: more than a fast call's 4 instructions
grep '^call ' ptxed.calls | awk '$4 > 4 { print $3, $4 }' | sort -n >slow.want
slow_nums=$(grep '^call ' ptxed.calls | awk '$4 > 4 { printf "%s%s", s, $2; s = " " }')

/ptcollect report "$PWD/rec" --json --clock insns --outliers 10 >report.json 2>report.err
rc=$?
# f's object: its counts, then its outliers' "START DURATION" pairs (f calls nothing, so
# no other "function" key comes before the next function's)
awk '
	/"function": "/ { inf = ($0 ~ /"function": "f",/) }
	!inf { next }
	/"calls": "/ && !c { c = 1; gsub(/[^0-9]/, ""); print "calls", $0 }
	/"insns_total": "/ { gsub(/[^0-9]/, ""); print "insns_total", $0 }
	/"insns_self": "/ { gsub(/[^0-9]/, ""); print "insns_self", $0 }
	/"duration": "/ { gsub(/[^0-9]/, ""); d = $0 }
	/"start": "/ { gsub(/[^0-9]/, ""); print "outlier", $0, d }
	/"called": \[\]/ { print "called_none" }
' report.json >f.got
r_calls=$(awk '$1 == "calls" { print $2 }' f.got)
r_total=$(awk '$1 == "insns_total" { print $2 }' f.got)
r_self=$(awk '$1 == "insns_self" { print $2 }' f.got)
r_insns=$(sed -n 's/^ *"instructions": "\([0-9]*\)",*$/\1/p' report.json)
r_clock=$(sed -n 's/^ *"clock": "\(.*\)",*$/\1/p' report.json)
echo "report: clock $r_clock, $r_insns instructions; f: $r_calls calls, $r_total/$r_self" \
	"insns; ptxed: $x_insns instructions, $x_calls entries of f, $x_f in f"

if [ $rc = 0 ] && [ "$r_calls" = 1000 ] && [ "$x_calls" = 1000 ]; then
	pass report_calls_count_is_ptxeds
else
	fail report_calls_count_is_ptxeds "rc=$rc, report $r_calls calls of f, ptxed $x_calls" \
		"entries: $(cat report.err) $(head -c 2000 report.json)"
fi
if [ "$r_total" = "$x_f" ] && [ "$r_self" = "$x_f" ] && [ "$r_insns" = "$x_insns" ] &&
	[ "$x_insns" = "$(wc -l <$PLAY/callprog.insns)" ]; then
	pass report_calls_insns_are_ptxeds
else
	fail report_calls_insns_are_ptxeds "report $r_insns instructions, f $r_total total" \
		"$r_self self; ptxed $x_insns, f $x_f"
fi
# the 10 slow calls (by ptxed's list: the 50th, 150th, ... 950th, 204 instructions each)
# are the 10 outliers, with the same start and instruction count, and call nothing
awk '$1 == "outlier" { print $2, $3 }' f.got | sort -n >slow.got
if [ "$r_clock" = instructions ] && [ "$slow_nums" = "50 150 250 350 450 550 650 750 850 950" ] &&
	[ "$(awk '$2 == 204' slow.want | wc -l)" = 10 ] && cmp -s slow.got slow.want &&
	[ "$(grep -c '^called_none$' f.got)" = 10 ]; then
	pass report_calls_outliers_are_the_slow_calls
else
	fail report_calls_outliers_are_the_slow_calls "clock $r_clock; slow calls $slow_nums;" \
		"want $(cat slow.want); got $(cat slow.got)"
fi
