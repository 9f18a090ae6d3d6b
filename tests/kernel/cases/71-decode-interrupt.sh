# An interrupt in a recorded trace (issue 24). ptcollect records a busy program with
# `-e intel_pt/event/u` (Event Trace requested; the simulated PMU has the format term and
# caps/event_trace) while the PMU plays, as that program's hardware output, a stream pttc
# made from tests/kernel/play/intr.ptt: an interrupt before the code's second instruction,
# a handler that calls a function and returns with iretq, then an interrupt out of traced
# code. `decode` of the recorded stream, with the code at its address (--raw), shows the
# interrupt where it happened in --insn (as libipt's ptxed does), as perf's `hw int` branch in
# --branches, as a frame in --calls and as a slice of its own on the timeline.
. /lib.sh
PLAY=/play
if [ ! -s $PLAY/intr.pt ]; then
	skip decode_interrupt "$(cat $PLAY/intr.skip 2>/dev/null)"
	exit 0
fi
len=$(wc -c <$PLAY/intr.pt)
set_param pattern 0
cat $PLAY/intr.pt >"$D/sim/replay"
set_param pattern 4
b0=$(stat bytes)
/ptcollect record -q --per-thread -e intel_pt/event/u -o rec -- \
	/bin/sh -c '. /lib.sh; work 3000' >record.out 2>&1
rc=$?
set_param pattern 0
if [ $rc != 0 ]; then
	fail decode_interrupt_record "rc=$rc: $(cat record.out)"
	exit 0
fi
pt=""
for f in rec/*.pt; do
	[ -s "$f" ] && pt="$pt${pt:+ }$f"
done
if [ "$(($(stat bytes) - b0))" = "$len" ] && [ -n "$pt" ] && [ "$pt" = "${pt% *}" ] &&
	cmp -s "$pt" $PLAY/intr.pt; then
	pass decode_interrupt_recorded
else
	fail decode_interrupt_recorded "stream $len bytes, wrote $(($(stat bytes) - b0)); '$pt'"
	exit 0
fi
dec() { /ptcollect decode --pt "$pt" --raw $PLAY/intr.bin:0x100000 "$@"; }

# --insn: addresses and events in ptxed's order.
dec --insn 2>insn.err | sed 's/^\([0-9a-f]\{16\}\) .*/\1/' >insn.out
printf '%s\n' 0000000000100000 '[interrupt]' 0000000000100005 000000000010000d \
	000000000010000a 0000000000100001 0000000000100002 '[disabled]' >insn.want
if cmp -s insn.out insn.want; then
	pass decode_interrupt_insn
else
	fail decode_interrupt_insn "$(cat insn.out insn.err)"
fi
if have_oracle; then
	ptxed --raw $PLAY/intr.bin:0x100000 --pt "$pt" 2>&1 |
		sed 's/^\([0-9a-f]\{16\}\) .*/\1/' >ptxed.out
	cmp -s ptxed.out insn.want && pass decode_interrupt_insn_is_ptxeds ||
		fail decode_interrupt_insn_is_ptxeds "$(cat ptxed.out)"
fi

# --branches: the interrupt is perf's `hw int`, its return `iret`.
dec --branches --json >branches.out 2>&1
if grep -qx '{"from":"0x100001","to":"0x100005","type":"hw int"}' branches.out &&
	grep -qx '{"from":"0x10000a","to":"0x100001","type":"iret"}' branches.out; then
	pass decode_interrupt_branches
else
	fail decode_interrupt_branches "$(cat branches.out)"
fi

# --calls: the handler is a frame; its call nests in it, not in the interrupted code.
dec --calls >calls.out 2>&1
# The raw code has no symbols: each end is a miss, "[unknown] (file+offset)".
printf '%s\n' '[interrupt]' \
	'interrupt [unknown] (intr.bin+0x5) (0x100005) from [unknown] (intr.bin+0x1)' \
	'  call [unknown] (intr.bin+0xd) (0x10000d) from [unknown] (intr.bin+0x5)' \
	'  ret  to [unknown] (intr.bin+0xa) (0x10000a) from [unknown] (intr.bin+0xd)' \
	'iret to [unknown] (intr.bin+0x1) (0x100001) from [unknown] (intr.bin+0xa)' \
	'[disabled]' >calls.want
cmp -s calls.out calls.want && pass decode_interrupt_calls ||
	fail decode_interrupt_calls "$(cat calls.out)"

# The timeline: the interrupt a slice of its own, the handler's call inside it.
dec --timeline t.json >tl.out 2>&1
if grep -q '"name":"interrupt: \[unknown\] (intr.bin+0x5)","cat":"interrupt"' t.json &&
	grep -q '"name":"\[unknown\] (intr.bin+0xd)"' t.json; then
	pass decode_interrupt_timeline
else
	fail decode_interrupt_timeline "$(cat tl.out t.json)"
fi
