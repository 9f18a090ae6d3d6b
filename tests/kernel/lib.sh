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

# ---- scripted sessions (the 8x cases) ----

# snap_windows MANIFEST: one line per snapshot window, in order:
#   NUMBER CAUSE FILE CPU BYTES AUX_HEAD WRAPPED
snap_windows() {
	awk '/"number":/ { n = $2; gsub(/[^0-9]/, "", n) }
		/"cause":/ { c = $2; gsub(/[",]/, "", c) }
		/"file": "snap-/ { f = $2; gsub(/[",]/, "", f) }
		/"cpu":/ && f { cpu = $2; gsub(/[^0-9-]/, "", cpu) }
		/"bytes":/ && f { b = $2; gsub(/[^0-9]/, "", b) }
		/"aux_head":/ && f { h = $2; gsub(/[^0-9]/, "", h) }
		/"wrapped":/ && f { w = $2; gsub(/,/, "", w); print n, c, f, cpu, b, h, w; f = "" }' "$1"
}

# check_windows NAME DIR BUFSIZE: every window of DIR's snapshots byte-exact against
# pattern 0 where its aux_head says it ends; per stream no byte in two windows, and a
# window that is not "wrapped" starts where the stream's previous window ended (the first
# at 0). Sets win_before (windows that lie before the buffer's first wrap), win_after
# (windows after it) and win_wrapped (windows that say wrapped).
check_windows() {
	_ok=1 _dir=$2 _sz=$3 win_before=0 win_after=0 win_wrapped=0
	rm -f /tmp/win.end.*
	snap_windows "$_dir/manifest.json" >/tmp/win.list
	[ -s /tmp/win.list ] || { fail "$1" "no snapshot window in $_dir/manifest.json"; return 1; }
	while read -r _n _c _f _cpu _b _h _w; do
		[ "$(wc -c <"$_dir/$_f")" = "$_b" ] || { _ok=0; echo "$_f: not $_b bytes"; continue; }
		_end=$(cat "/tmp/win.end.$_cpu" 2>/dev/null || echo 0)
		[ "$_w" = true ] && win_wrapped=$((win_wrapped + 1))
		[ "$_b" -gt 0 ] || continue
		_o=$(/ptsim_check -s "$_sz" "$_dir/$_f" $(((_h - _b) & (_sz - 1)))) || { _ok=0; continue; }
		_r=$(echo "$_o" | sed "s/.*absolute \([0-9a-fx]*\)-\([0-9a-fx]*\)$/\1 \2/")
		_a=${_r% *} _e=${_r#* }
		_a=$((_a)) _e=$((_e))
		if [ "$_a" -lt "$_end" ]; then
			_ok=0; echo "$_f starts at $_a, before the end of the previous window ($_end)"
		elif [ "$_w" = false ] && [ "$_a" != "$_end" ]; then
			_ok=0; echo "$_f says it continues the previous window at $_end, starts at $_a"
		fi
		[ "$_e" -le "$_sz" ] && win_before=$((win_before + 1))
		[ "$_a" -ge "$_sz" ] && win_after=$((win_after + 1))
		echo "$_e" >"/tmp/win.end.$_cpu"
		echo "window $_n ($_c) $_f: [$_a, $_e) wrapped=$_w"
	done </tmp/win.list
	[ $_ok = 1 ] && return 0
	fail "$1" "windows differ from the stream (above)"
	return 1
}

# wait_file FILE [TENTHS]: until FILE exists (default 10 s); false on timeout
wait_file() {
	_n=0
	while [ ! -e "$1" ] && [ $_n -lt "${2:-100}" ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	[ -e "$1" ]
}

# ctl CMD...: send a command on ./ctl and read its one reply line from ./ack (fd 9,
# opened by the case with: exec 9<>ack), within 10 s
ctl() {
	echo "$*" >ctl
	_r=
	read -r -t 10 _r <&9
	echo "$_r"
}
