#!/bin/bash
# The block decoder's output against the instruction decoder's (PTCOLLECT_DECODE_INSN_PATH=1,
# the path every mode took before), byte for byte: stdout, stderr, the exit status and the
# --timeline file, for every mode that prints no instructions and for `ptcollect report`, on
# the real traces of ../shared/traces, on libipt's test suite (pttc; each test also with its
# own ptxed options: Event Trace's --event:iflags, --event:tick, --resync-on-error, filters;
# libipt 2.2 is required, as Event Trace and TRIG need it) and on ptgen and ptwalk traces cut
# into many chunks (-J 1 and -J 4, so every chunk seam is crossed). --insn too: the instruction
# decoder both times, the fast path's blocks (insnblk.h) the second. The modes the fast flow
# path takes (fastflow.h: --stats, --branches, --calls, --insn) are run a third time without it
# (PTCOLLECT_DECODE_NO_FAST=1: libipt's block decoder alone), so that the fast path, the
# block path and the instruction path are each held to the others. Prints each difference;
# exits 1 on any.
#
#	tests/decode-paths.sh PTCOLLECT SHARED PTGEN WORKDIR [PTWALK]
#
# Cases where libipt's block and instruction decoders take different paths through a
# malformed or unusual trace are listed in KNOWN below (docs/testing.md): they must differ
# exactly as listed (a case that starts to agree is reported too, so the list stays true).
set -u
bin=$(realpath "$1") shared=$(realpath "$2") ptgen=$(realpath "$3") work=$(realpath "$4")
ptwalk=${5:+$(realpath "$5")}
# (With libipt 2.2, none: the seven of 2.0.5 agree, Event Trace and TRIG cases included.)
KNOWN=" "
KNOWN=" $(echo $KNOWN) "
modes=("--insn" "--stats" "--branches" "--calls" "--branches --json" "--calls --json"
       "--stats --branches" "--timeline TL" "--calls --timeline TL --stats")
# ptcollect report: the CALL and RETURN records through its own renderer.
rmodes=("" "--clock insns --outliers 2" "--folded --weight insns" "--json --per-thread" "--json"
	"--outliers 5")
fail=0

# same NAME ARGS...: every mode, both paths (CMD: decode, or report with report's modes)
CMD=decode
same() {
	local name=$1 mode m r1 r2 bad=0 ms
	shift
	if [ $CMD = report ]; then ms=("${rmodes[@]}"); else ms=("${modes[@]}"); fi
	for mode in "${ms[@]}"; do
		m=${mode//TL/$work/tl}
		rm -f "$work/tl"
		PTCOLLECT_DECODE_INSN_PATH=1 "$bin" $CMD "$@" $m >"$work/o1" 2>"$work/e1"; r1=$?
		[ -f "$work/tl" ] && mv "$work/tl" "$work/t1" || : >"$work/t1"
		"$bin" $CMD "$@" $m >"$work/o2" 2>"$work/e2"; r2=$?
		[ -f "$work/tl" ] && mv "$work/tl" "$work/t2" || : >"$work/t2"
		r3=$r2
		case $CMD,$m in
		decode,*--timeline*) ;;
		*)	# the fast path's modes (report's too): libipt's block decoder alone too
			PTCOLLECT_DECODE_NO_FAST=1 "$bin" $CMD "$@" $m >"$work/o3" 2>"$work/e3"; r3=$?
			if ! cmp -s "$work/o1" "$work/o3" || ! cmp -s "$work/e1" "$work/e3"; then
				r3=nofast-differs
				diff "$work/o1" "$work/o3" | head -4
			fi;;
		esac
		if [ "$r1" != "$r2" ] || [ "$r1" != "$r3" ] || ! cmp -s "$work/o1" "$work/o2" ||
		   ! cmp -s "$work/e1" "$work/e2" || ! cmp -s "$work/t1" "$work/t2"; then
			bad=1
			case $KNOWN in *" $name "*) continue;; esac
			echo "DIFF $name, $mode (exit $r1, now $r2, no fast path $r3): $CMD $*"
			diff "$work/o1" "$work/o2" | head -8
			diff "$work/e1" "$work/e2" | head -8
			diff "$work/t1" "$work/t2" | head -4
		fi
	done
	case $KNOWN in
	*" $name "*)
		[ $bad = 1 ] && return
		echo "KNOWN $name no longer differs: take it off the list"
		fail=1;;
	*) [ $bad = 0 ] || fail=1;;
	esac
}

tr=$shared/traces
dyn="--cpu 6/85/4 --mtc-freq 3 --nom-freq 37 --cpuid-0x15.eax 2 --cpuid-0x15.ebx 308
	--pevent:sample-type 0x10086 --pevent:time-shift 31 --pevent:time-mult 581029125
	--pevent:time-zero 18444502336406842448"
for set in dynamorio-hello64-asm-2023 dynamorio-hello32-asm-2022; do
	d=$tr/$set/test_simple.raw
	same "$set" $dyn --pevent:sysroot "$d" --pevent:primary "$d/primary.sideband.pevent" \
		--pevent:secondary "$d/secondary.sideband.pevent" --pt "$d/pt.bin"
done
h=$tr/hase-loopy-skylake
same hase --cpu 6/94/3 --elf "$h/loopy" --pt "$h/aux.aux-idx2-cpu2-tid19233.pt"

mkdir -p "$work/gen"
"$ptgen" -n 100000 -p 16 "$work/gen" >/dev/null || { echo "ptgen failed"; exit 1; }
for j in 1 4; do
	for cs in 4096 10000; do
		same "ptgen-J$j-$cs" -J $j --chunk-size $cs --elf "$work/gen/prog.elf" \
			--pt "$work/gen/trace.pt"
	done
done
# ptwalk: a random walk over 20,000 blocks (the bench's second trace), a few seeds, each
# -J 1 and in chunks; the fast path decodes most of its segments.
if [ -n "$ptwalk" ]; then
	for seed in 1 2 3; do
		mkdir -p "$work/walk$seed"
		"$ptwalk" -b 20000 -s $seed -n 300000 -p $((seed * 24)) "$work/walk$seed" >/dev/null ||
			{ echo "ptwalk failed"; exit 1; }
		for j in "-J 1" "-J 4 --chunk-size 20000"; do
			same "ptwalk-$seed-${j// /}" $j --raw "$work/walk$seed/prog.bin:0x401000" \
				--pt "$work/walk$seed/trace.pt"
		done
	done
fi

# Timing packets and errata (fastflow.h; decode_chunk.c's fastflow_errata()): a walk with
# TSC, TMA, MTC and CYC (-t), and walks with timing packets libipt fails on or reads otherwise
# (-x: a second TMA, a 10-byte CYC, SKZ84's TMA, SKD007's CYC before 0xf3), each under CPUs
# whose errata libipt works around: none, Skylake (BDM70 SKD007 SKD022 SKD010 SKL014
# SKL168), Skylake-SP (SKZ84), Broadwell (BDM64), Apollo Lake (APL11 APL12).
if [ -n "$ptwalk" ]; then
	for t in "-t" "-t -x 3" "-t -x 7"; do
		w=$work/time${t// /}
		mkdir -p "$w"
		"$ptwalk" -b 5000 -s 2 -n 100000 -p 40 $t "$w" >/dev/null ||
			{ echo "ptwalk $t failed"; exit 1; }
		for cpu in none 6/94/3 6/85/4 6/61/0 6/92/0; do
			c=()
			[ $cpu = none ] || c=(--cpu $cpu)
			for j in "-J 1" "-J 4 --chunk-size 8000"; do
				same "ptwalk${t// /}-$cpu-${j// /}" "${c[@]}" $j \
					--raw "$w/prog.bin:0x401000" --pt "$w/trace.pt"
			done
		done
	done
fi
same ptgen-skylake --cpu 6/94/3 -J 4 --chunk-size 4096 --elf "$work/gen/prog.elf" \
	--pt "$work/gen/trace.pt"

CMD=report
same report-hase --cpu 6/94/3 --elf "$h/loopy" --pt "$h/aux.aux-idx2-cpu2-tid19233.pt"
for j in 1 4; do
	same "report-ptgen-J$j" -J $j --chunk-size 4096 --elf "$work/gen/prog.elf" \
		--pt "$work/gen/trace.pt"
done
# report on the fast path (a PSB+'s TSC is a fast segment's time; other timing packets keep
# it off): the walks, and the walks with timing packets, in one chunk and in many.
if [ -n "$ptwalk" ]; then
	for seed in 1 2; do
		for j in "-J 1" "-J 4 --chunk-size 20000"; do
			same "report-ptwalk-$seed-${j// /}" $j \
				--raw "$work/walk$seed/prog.bin:0x401000" --pt "$work/walk$seed/trace.pt"
		done
	done
	for t in "-t" "-t -x 7"; do
		for j in "-J 1" "-J 4 --chunk-size 8000"; do
			same "report-ptwalk${t// /}-${j// /}" --cpu 6/94/3 $j \
				--raw "$work/time${t// /}/prog.bin:0x401000" \
				--pt "$work/time${t// /}/trace.pt"
		done
	done
fi
CMD=decode

# libipt's suite, as libipt's test.bash runs it: pttc, then each ; cpu line.
if ! command -v yasm >/dev/null; then
	echo "libipt's suite: skipped (pttc needs yasm)"
	exit $fail
fi
# Event Trace, TRIG and --resync-on-error are libipt 2.2's: its cases compare nothing older.
ipt=$("$bin" --version | sed -n 's/^libipt \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
read -r ipt_major ipt_minor <<<"${ipt:-0 0}"
if [ "$ipt_major" -lt 2 ] || { [ "$ipt_major" = 2 ] && [ "$ipt_minor" -lt 2 ]; }; then
	echo "libipt's suite: $bin has libipt ${ipt_major}.${ipt_minor}: 2.2 needed (Event Trace)"
	exit 1
fi

# The .ptt's ptxed options that every mode takes (tests/libipt/decode's list), into popts;
# an option without a counterpart leaves popts empty.
ptxed_opts() {
	local -a in
	local i=0
	read -r -a in <<<"$(sed -n 's/[ \t]*;[ \t]*opt:ptxed[ \t][ \t]*\(.*\)[ \t]*/\1/p' "$1" |
		head -n 1)"
	popts=()
	while [ $i -lt ${#in[@]} ]; do
		case ${in[$i]} in
		--event:tick | --event:ip | --event:time | --event:iflags | --resync-on-error | \
		--insn:keep-tcal-on-ovf)
			popts+=("${in[$i]}") ;;
		--filter:addr[0-3]_cfg | --filter:addr[0-3]_a | --filter:addr[0-3]_b | \
		--mtc-freq | --nom-freq | --cpuid-0x15.eax | --cpuid-0x15.ebx | --pevent:kernel-start)
			popts+=("${in[$i]}" "${in[$((i + 1))]}")
			i=$((i + 1)) ;;
		--insn-decoder | --block-decoder | --block:* | --quiet | --stat | --stat:insn | --sb:*) ;;
		*) popts=(); return ;;
		esac
		i=$((i + 1))
	done
}

mkdir -p "$work/ptt"
cd "$work/ptt" || exit 1
for f in "$shared"/libipt-tests/*.ptt; do
	b=$(basename "$f" .ptt)
	cp "$f" .
	"$shared/oracle/pttc" "$b.ptt" >/dev/null 2>&1 || { echo "pttc failed on $b"; fail=1; continue; }
	org=$(grep -m1 -E '^[[:space:]]*org' "$b.ptt" | awk '{ print $2 }')
	sb=() opts=()
	for s in "$b"-pevent-*.sb; do
		[ -f "$s" ] || continue
		case $s in
		*primary*) sb+=(--pevent:primary "$s");;
		*) sb+=(--pevent:secondary "$s");;
		esac
		read -r -a opts <<<"$(echo "$s" | sed 's/.*-pevent-[a-z]*,//; s/\.sb$//' |
			tr ',' '\n' | sed 's/=/ /; s/^/--pevent:/' | tr '\n' ' ')"
	done
	cpus=$(grep -E '^; cpu ' "$b.ptt" | awk '{ print $3 }')
	for cpu in ${cpus:-none}; do
		c=()
		[ "$cpu" = none ] || c=(--cpu "$cpu")
		same "$b" "${c[@]}" "${opts[@]}" "${sb[@]}" --raw "$b.bin:$org" --pt "$b.pt"
		# Again with the test's own options: Event Trace's, resync, ticks, filters.
		ptxed_opts "$b.ptt"
		[ ${#popts[@]} = 0 ] ||
			same "$b+opts" "${c[@]}" "${opts[@]}" "${sb[@]}" "${popts[@]}" \
				--raw "$b.bin:$org" --pt "$b.pt"
	done
done
exit $fail
