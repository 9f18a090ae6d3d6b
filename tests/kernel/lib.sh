# Helpers for the guest's test cases: each case starts with `. /lib.sh`.
# A case prints one line per check (tests/kernel/run-tests counts them):
#   PASS name | FAIL name: why | SKIP name: why
# shellcheck shell=sh
D=/sys/bus/event_source/devices/intel_pt # the simulated PMU
S=$D/sim/stats
P=/sys/module/ptsim/parameters # its parameters (pattern, chunk, period_us at run time)

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }

# stat NAME: a counter from sim/stats (start stop begin_fail ticks bytes truncated snap_head
# played stamps)
stat() { awk -v k="$1" '{ for (i = 1; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$S"; }

# reload [param=value ...]: the module with these parameters
reload() {
	rmmod ptsim 2>/dev/null
	/rig-load "$@" || { echo "FAIL reload: insmod $*"; return 1; }
}

# set_param NAME VALUE: change a run-time parameter of the module
set_param() { echo "$2" >"$P/$1"; }

# check_bundle NAME DIR [PATTERN]: every .pt file byte-exact against the pattern (0)
check_bundle() {
	_ok=1 _n=0
	for _f in "$2"/*.pt; do
		[ -f "$_f" ] || continue
		_n=$((_n + 1))
		/ptsim_check -P "${3:-0}" "$_f" >/tmp/check.out 2>&1 || { _ok=0; cat /tmp/check.out; }
	done
	[ $_n -gt 0 ] || { fail "$1" "no .pt file in $2"; return 1; }
	[ $_ok = 1 ] && return 0
	fail "$1" "bytes differ from what the simulated hardware wrote"
	return 1
}

# total_pt DIR: bytes in every .pt file
total_pt() { cat "$1"/*.pt 2>/dev/null | wc -c; }

# json_num FILE KEY: the first number after "KEY": (numbers or "numbers")
json_num() { grep -m1 "\"$2\":" "$1" | sed 's/[^0-9]*\([0-9][0-9]*\).*/\1/'; }

# json_sum FILE KEY: the sum of every number after "KEY": (one per stream in a manifest)
json_sum() { grep "\"$2\":" "$1" | sed 's/[^0-9]//g' | awk '{s+=$1} END {print s+0}'; }

# file_is FILE VALUE: the file holds exactly VALUE
file_is() { [ "$(cat "$1" 2>/dev/null)" = "$2" ]; }

# have_oracle: libipt's ptxed and ptdump are in the guest (run-tests copies them from the
# host's ../shared/oracle when present); oracle_missing says why not
have_oracle() { command -v ptxed >/dev/null 2>&1 && command -v ptdump >/dev/null 2>&1; }
oracle_missing() {
	echo "no ptxed/ptdump in the guest: the host has no ../shared/oracle (PTCOLLECT_SHARED)"
}

# work N: a busy shell loop, about 1 s per 30000 iterations under TCG
work() { _i=0; while [ "$_i" -lt "$1" ]; do _i=$((_i + 1)); done; }

# ---- Debian's perf through the simulated PMU (the perf-* cases) ----

have_perf() { command -v perf >/dev/null 2>&1; }
# perf_count EVENT FILE: the count in `perf report --stats` output, 0 if absent
perf_count() { awk -v e="$1" '$1 == e && $2 == "events:" { n = $3 } END { print n + 0 }' "$2"; }
# perf_record NAME ARGS...: perf record -o NAME.data ARGS, then NAME.stats; false on error
perf_record() {
	_n=$1
	shift
	if ! perf record -o "$_n.data" "$@" >"$_n.log" 2>&1; then
		cat "$_n.log"
		return 1
	fi
	tail -n 1 "$_n.log"
	perf report -i "$_n.data" --stats >"$_n.stats" 2>&1 || return 1
	grep -E ' (AUX|ITRACE_START|AUXTRACE|AUXTRACE_INFO) events:' "$_n.stats"
	return 0
}
# perf_packets NAME: decode NAME.data's AUX data with perf's PT packet dumper;
# sets psb, psbend, tsc and bad
perf_packets() {
	# shellcheck disable=SC2046 # four numbers
	set -- $(perf report -i "$1.data" -D 2>/dev/null | awk '
		/ PSB$/ { p++ } / PSBEND$/ { e++ } / TSC 0x/ { t++ } /Bad packet/ { b++ }
		END { print p + 0, e + 0, t + 0, b + 0 }')
	psb=$1 psbend=$2 tsc=$3 bad=$4
	echo "packets: PSB $psb PSBEND $psbend TSC $tsc bad $bad"
}

# ---- a bundle checked against itself (the 8x cases: faults and bad inputs) ----

# manifest_streams FILE: one line per stream of a manifest: file sideband bytes
# sideband_bytes truncated lost lost_records partial collision
manifest_streams() {
	awk -F'"' '
		/"streams": \[/ { in_s = 1; next }
		in_s && /^  \]/ { in_s = 0 }
		!in_s { next }
		$2 == "file" { f = $4 } $2 == "sideband" { sb = $4 }
		$2 == "bytes" { b = $4 } $2 == "sideband_bytes" { sbb = $4 }
		$2 == "truncated" { t = $4 } $2 == "lost" && $4 != "" { l = $4 }
		$2 == "lost_records" { lr = $4 } $2 == "partial" { p = $4 }
		$2 == "collision" { c = $4 }
		$2 == "itrace_start" { print f, sb, b, sbb, t, l, lr, p, c }' "$1"
}
# manifest_str FILE KEY: the string after the first "KEY": (null prints nothing)
manifest_str() { sed -n "s/^ *\"$2\": \"\(.*\)\",*$/\1/p" "$1" | head -n 1; }
# size FILE: its bytes (0 when missing)
size() { wc -c <"$1" 2>/dev/null || echo 0; }

# check_agrees NAME DIR: the manifest agrees with the files, and info says what was lost.
# A complete bundle: every file holds exactly what its stream's entry says, the .pevent
# holds as many TRUNCATED AUX and LOST records (and lost records) as counted. An incomplete
# one (killed): the files hold at least that. info exits 0 and names every loss.
check_agrees() {
	_n=$1 _d=$2 _m=$2/manifest.json _why=""
	[ -f "$_m" ] || { fail "$_n" "no manifest in $_d: $(ls "$_d" 2>&1)"; return 1; }
	_complete=0
	grep -q '^  "complete": true' "$_m" && _complete=1
	/ptcollect info "$_d" >/tmp/agree.out 2>/tmp/agree.err \
		|| _why="$_why; info exit $?: $(cat /tmp/agree.err)"
	manifest_streams "$_m" >/tmp/agree.streams
	[ -s /tmp/agree.streams ] || _why="$_why; no stream in the manifest"
	while read -r f sb b sbb t l lr p c; do
		fs=$(size "$_d/$f") sbs=$(size "$_d/$sb")
		if [ $_complete = 1 ]; then
			[ "$fs" = "$b" ] || _why="$_why; $f has $fs bytes, the manifest says $b"
			[ "$sbs" = "$sbb" ] || _why="$_why; $sb has $sbs bytes, the manifest says $sbb"
			/ptcollect dump "$_d/$sb" >/tmp/agree.sb 2>/dev/null
			nt=$(grep -c 'PERF_RECORD_AUX.TRUNCATED' /tmp/agree.sb)
			nl=$(grep -c 'PERF_RECORD_LOST  ' /tmp/agree.sb)
			nlr=$(sed -n 's/.*PERF_RECORD_LOST  [0-9a-f]*, \([0-9a-f]*\).*/\1/p' /tmp/agree.sb |
				while read -r x; do echo $((0x$x)); done | awk '{ s += $1 } END { print s + 0 }')
			[ "$nt" = "$t" ] || _why="$_why; $sb holds $nt TRUNCATED records, the manifest says $t"
			[ "$nl" = "$l" ] || _why="$_why; $sb holds $nl LOST records, the manifest says $l"
			[ "$nlr" = "$lr" ] || _why="$_why; $sb's LOST records drop $nlr, the manifest says $lr"
		else
			[ "$fs" -ge "$b" ] || _why="$_why; $f has $fs bytes, fewer than the manifest's $b"
			[ "$fs" = "$b" ] || grep -q "$f holds $fs bytes, more than the $b" /tmp/agree.err \
				|| _why="$_why; info does not say $f holds $fs bytes, more than $b"
		fi
		[ "$t" = 0 ] || grep -q "$f: $t TRUNCATED record(s)" /tmp/agree.err \
			|| _why="$_why; info does not report $f's $t TRUNCATED"
		[ "$l" = 0 ] || grep -q "$f: $l LOST record(s): $lr sideband records" /tmp/agree.err \
			|| _why="$_why; info does not report $f's $l LOST ($lr records)"
	done </tmp/agree.streams
	[ $_complete = 1 ] || grep -q 'did not finish cleanly' /tmp/agree.err \
		|| _why="$_why; info does not say the recording did not finish cleanly"
	[ -z "$_why" ] && return 0
	fail "$_n" "${_why#; }"
	return 1
}

# check_ptdump NAME DIR: where libipt's ptdump is here, it reads every .pt file of a
# recording of pattern 1 (a PSB, PSBEND and PADs in every 4 KiB) as exactly that, and
# `ptcollect dump` prints the same lines. Prints a SKIP line and returns 1 without it.
check_ptdump() {
	have_oracle || { skip "$1" "$(oracle_missing)"; return 1; }
	_why=""
	for _f in "$2"/*.pt; do
		_s=$(size "$_f")
		[ "$_s" -gt 0 ] || continue
		ptdump --no-pad "$_f" >/tmp/pd.oracle 2>&1 || _why="$_why; ptdump $_f: exit $?"
		/ptcollect dump --no-pad "$_f" >/tmp/pd.ours 2>/dev/null
		cmp -s /tmp/pd.oracle /tmp/pd.ours || _why="$_why; dump $_f differs from ptdump"
		_want=$((_s / 4096 + (_s % 4096 >= 16)))
		_got=$(grep -c '  psb$' /tmp/pd.oracle)
		[ "$_got" = "$_want" ] || _why="$_why; ptdump finds $_got PSBs in $_f, $_want expected"
		! grep -q 'error' /tmp/pd.oracle || _why="$_why; ptdump: $(grep error /tmp/pd.oracle | head -n 1)"
	done
	[ -z "$_why" ] && return 0
	fail "$1" "${_why#; }"
	return 1
}
