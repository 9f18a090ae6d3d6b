# A real trace through the whole pipeline. The simulated PMU plays the PT stream of
# /play/playprog (derived on the host by tests/kernel/play/ptplay) as its hardware output
# while ptcollect records the program, per CPU and per thread. The .pt file holds exactly
# the stream with the live TSC stamped in, between the sideband's exec and exit records.
# The bundle is archived (the program goes into its sysroot), copied elsewhere, the
# original program is deleted, and the ptxed line `info` prints for the copy decodes it,
# with ptcollect's sideband, to exactly the program's instruction sequence; so does
# `ptcollect decode` of the copy, with a balanced timeline. README.md, "Played streams".
. /lib.sh
PLAY=/play
if [ ! -s $PLAY/playprog.pt ]; then
	skip replay_program "no played stream: $(cat $PLAY/skip 2>/dev/null)"
	exit 0
fi
len=$(wc -c <$PLAY/playprog.pt)

# marker_at FILE: the offset of the stamp marker (TSC 19, payload ff x7) in FILE
marker_at() {
	od -An -v -tx1 "$1" | tr -s ' ' '\n' | grep . | awk '
		{ b[NR - 1] = $1 }
		END { for (i = 0; i + 8 <= NR; i++) { m = b[i] == "19"
			for (k = 1; k < 8; k++) if (b[i + k] != "ff") m = 0
			if (m) { print i; exit } } }'
}
mark=$(marker_at $PLAY/playprog.pt)
if [ -z "$mark" ]; then
	fail replay_program "playprog.pt holds no stamp marker (TSC ffffffffffffff)"
	exit 0
fi

# le56 FILE OFFSET: the 7-byte little-endian value at OFFSET
le56() {
	_v=0 _i=0
	for _b in $(od -An -v -tu1 -j "$2" -N 7 "$1"); do
		_v=$((_v | _b << (8 * _i)))
		_i=$((_i + 1))
	done
	echo $_v
}

# moved_line MOVED: the ptxed line `info` prints for $stream of the bundle at MOVED
moved_line() {
	/ptcollect info --json "$1" 2>/dev/null |
		sed -n 's/^ *"ptxed": "\(.*\)",*$/\1/p' | grep -- "--pt $1/$stream\$"
}

# replay NAME RECORD-PREFIX...: record the program while the PMU plays its stream, check
# every byte, the stamp's time and the decode of the moved bundle
replay() {
	name=$1
	shift
	set_param pattern 0
	cat $PLAY/playprog.pt >"$D/sim/replay"
	set_param pattern 4
	rm -rf run "$name" "/tmp/moved-$name"
	mkdir run && cp $PLAY/playprog run/playprog
	prog=$PWD/run/playprog
	b0=$(stat bytes) s0=$(stat stamps)
	"$@" -o "$name" -- "$prog" >"$name.out" 2>&1
	rc=$?
	set_param pattern 0
	if [ $rc != 0 ] || ! grep -q '^playprog: done$' "$name.out"; then
		fail "${name}_exit_zero" "rc=$rc: $(cat "$name.out")"
		return
	fi
	pass "${name}_exit_zero"

	stream=""
	for f in "$name"/*.pt; do
		[ -s "$f" ] && stream="$stream${stream:+ }${f##*/}"
	done
	if [ "$(stat played)" = "$len" ] && [ $(($(stat bytes) - b0)) = "$len" ] &&
		[ $(($(stat stamps) - s0)) = 1 ] && [ "$(total_pt "$name")" = "$len" ] &&
		[ -n "$stream" ] && [ "$stream" = "${stream% *}" ]; then
		pass "${name}_played_once"
	else
		fail "${name}_played_once" "stream $len bytes; played $(stat played), wrote" \
			"$(($(stat bytes) - b0)), $(($(stat stamps) - s0)) stamps; bundle" \
			"$(total_pt "$name") bytes in '$stream'"
		return
	fi
	pt=$name/$stream

	# every byte as the stream has it, but the marker's payload: the live TSC
	bad=$(cmp -l $PLAY/playprog.pt "$pt" | awk -v lo=$((mark + 2)) -v hi=$((mark + 8)) \
		'$1 < lo || $1 > hi { n++ } END { print n + 0 }')
	tsc=$(le56 "$pt" $((mark + 1)))
	if [ "$bad" = 0 ] && [ "$tsc" != $((0xffffffffffffff)) ] && [ "$tsc" -gt 0 ]; then
		pass "${name}_bytes_are_the_stream"
	else
		fail "${name}_bytes_are_the_stream" "$bad bytes differ outside the stamp; TSC $tsc"
	fi

	# the stamp lies between the program's MMAP2 and its EXIT, in the sideband's time
	# shellcheck disable=SC2046 # five fields
	set -- $(/ctlpage "$tsc")
	t=$5
	grep -q "\"time_zero\": \"$2\"" "$name/manifest.json" || t=""
	/ptcollect dump "$name/${stream%.pt}.pevent" >"$name.sb" 2>&1
	# ptdump's compact lines: "... { pid/tid TIME cpu-N id }", TIME in hex
	tm=$(grep "PERF_RECORD_MMAP2 .*, 5, [0-9a-f]*, $prog  {" "$name.sb" |
		sed -n 's/.*{ [0-9a-f/]* \([0-9a-f]*\) cpu-.*/\1/p' | head -n 1)
	te=$(grep "PERF_RECORD_EXIT " "$name.sb" |
		sed -n 's/.*{ [0-9a-f/]* \([0-9a-f]*\) cpu-.*/\1/p' | head -n 1)
	[ -n "$tm" ] && tm=$((0x$tm))
	[ -n "$te" ] && te=$((0x$te))
	if [ -n "$t" ] && [ -n "$tm" ] && [ -n "$te" ] && [ "$tm" -lt "$t" ] && [ "$t" -lt "$te" ]; then
		pass "${name}_tsc_between_exec_and_exit"
	else
		fail "${name}_tsc_between_exec_and_exit" "stamp $tsc = time '$t'; MMAP2 '$tm', EXIT '$te'"
	fi

	have_oracle || { skip "${name}_ptxed_decodes_the_program" "$(oracle_missing)"; return; }
	# archived (record --archive did it, else archive now): the program is in the sysroot
	grep -q '"sysroot": "sysroot"' "$name/manifest.json" ||
		/ptcollect archive "$name" >"$name.archive" 2>&1
	if cmp -s "$prog" "$name/sysroot$prog"; then
		pass "${name}_archive_holds_the_program"
	else
		fail "${name}_archive_holds_the_program" "$(cat "$name.archive" 2>/dev/null)"
	fi
	# moved: the bundle alone; the original program is deleted
	moved=/tmp/moved-$name
	cp -r "$name" "$moved"
	rm -rf run
	line=$(moved_line "$moved")
	echo "ptxed line: $line"
	# shellcheck disable=SC2086 # the line is split on spaces, as printed
	(cd / && $line) >"$name.ptxed" 2>&1
	rc=$?
	grep -E '^[0-9a-f]{16} ' "$name.ptxed" | awk '{ print $1 }' >"$name.insns"
	errs=$(grep -ci 'error' "$name.ptxed")
	if [ $rc = 0 ] && [ "$errs" = 0 ] && cmp -s "$name.insns" $PLAY/playprog.insns; then
		pass "${name}_ptxed_decodes_the_program"
	else
		fail "${name}_ptxed_decodes_the_program" "rc=$rc, $errs error lines," \
			"$(wc -l <"$name.insns") of $(wc -l <$PLAY/playprog.insns) instructions:" \
			"$(head -n 20 "$name.ptxed")"
	fi
	# the sideband applied is ptcollect's own: the exec and the program's mapping
	# shellcheck disable=SC2086
	(cd / && $line --sb:compact --sb:warn) >"$name.ptxed-sb" 2>&1
	first=$(grep -n -m1 -E '^[0-9a-f]{16} ' "$name.ptxed-sb" | cut -d: -f1)
	head -n "${first:-1}" "$name.ptxed-sb" >"$name.before"
	if grep -q 'PERF_RECORD_COMM.EXEC' "$name.before" && grep -q "MMAP2.*$prog" "$name.before" &&
		! grep -qiE 'warn|error' "$name.ptxed-sb"; then
		pass "${name}_ptxed_used_the_bundles_sideband"
	else
		fail "${name}_ptxed_used_the_bundles_sideband" "$(head -n 30 "$name.ptxed-sb")"
	fi
	# a control: without the sysroot the program is nowhere, and the decode must fail
	line=$(moved_line "$moved" | sed 's# --pevent:sysroot [^ ]*##')
	# shellcheck disable=SC2086
	(cd / && $line) >"$name.nosysroot" 2>&1
	grep -E '^[0-9a-f]{16} ' "$name.nosysroot" | awk '{ print $1 }' >"$name.insns2"
	if cmp -s "$name.insns2" $PLAY/playprog.insns; then
		fail "${name}_decode_needs_the_sysroot" "decoded without the program's file"
	else
		pass "${name}_decode_needs_the_sysroot"
	fi
	# ptcollect's own decoder reads the moved bundle alone: the same instructions, and a
	# timeline whose begin and end events balance
	/ptcollect decode "$moved" --insn --timeline "$name.json" >"$name.decode" 2>&1
	rc=$?
	grep -E '^[0-9a-f]{16} ' "$name.decode" | awk '{ print $1 }' >"$name.insns3"
	nb=$(grep -c '"ph":"B"' "$name.json" 2>/dev/null)
	ne=$(grep -c '"ph":"E"' "$name.json" 2>/dev/null)
	if [ $rc = 0 ] && cmp -s "$name.insns3" $PLAY/playprog.insns && [ "$nb" = "$ne" ] &&
		tail -n 1 "$name.json" | grep -q '"displayTimeUnit": "ns"}'; then
		pass "${name}_ptcollect_decodes_the_program"
	else
		fail "${name}_ptcollect_decodes_the_program" "rc=$rc, $(wc -l <"$name.insns3") of" \
			"$(wc -l <$PLAY/playprog.insns) instructions, $nb B and $ne E events:" \
			"$(head -n 20 "$name.decode")"
	fi
}

# Per CPU the program stays on CPU 1: a stream cut by a migration would need a new PSB+.
replay replay_per_cpu taskset -c 1 /ptcollect record -q --archive
replay replay_per_thread /ptcollect record -q --per-thread
