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
# played stamps traps), or `active`: the CPUs whose simulated hardware is on now
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

# wait_file_of PID FILE: until FILE exists (a ready file PID writes once set up); false as
# soon as PID has exited without it, or after 2 minutes (the case's own limit is 3): how
# long the set-up takes depends on the load, whether it ends on the process
wait_file_of() {
	_n=0
	while [ ! -e "$2" ] && kill -0 "$1" 2>/dev/null && [ $_n -lt 1200 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	[ -e "$2" ]
}

# wait_of PID CMD...: until CMD succeeds, looked at every 0.1 s; false as soon as PID has
# exited without it (CMD looked at once more). No time bound: PID's progress leads there,
# and a PID that lives on without it is the case's time limit's
wait_of() {
	_wo_p=$1
	shift
	until "$@"; do
		kill -0 "$_wo_p" 2>/dev/null || { "$@"; return; }
		sleep 0.1
	done
}

# wait_until TENTHS CMD...: until CMD succeeds, looked at every 0.1 s, TENTHS times at
# most; false on timeout. The cases wait for what they need, never for a fixed time.
wait_until() {
	_t=$1 _n=0
	shift
	until "$@"; do
		[ $_n -lt "$_t" ] || return 1
		sleep 0.1
		_n=$((_n + 1))
	done
}
# stat_over KEY MIN: the sim/stats counter KEY is above MIN (for wait_until)
stat_over() { [ "$(stat "$1")" -gt "$2" ]; }

# wait_moving TENTHS PROBE CMD...: until CMD succeeds, looked at every 0.1 s; false once
# the output of PROBE (a command, split at spaces: a count of what leads there) has stood
# still for TENTHS looks in a row. A loaded host slows the PMU, ptcollect and the workload
# down, so such a wait is bounded by their progress, not by the time it all takes.
wait_moving() {
	_wm_t=$1 _wm_p=$2 _wm_n=0 _wm_last=
	shift 2
	until "$@"; do
		# shellcheck disable=SC2086 # PROBE is a command and its arguments
		_wm_v=$($_wm_p)
		if [ "$_wm_v" != "$_wm_last" ]; then
			_wm_last=$_wm_v _wm_n=0
		elif [ $_wm_n -ge "$_wm_t" ]; then
			return 1
		fi
		_wm_n=$((_wm_n + 1))
		sleep 0.1
	done
}
# wait_stat KEY MIN [BY [TENTHS]]: until the sim/stats counter KEY is above MIN; false once
# the counter BY (default KEY) has stood still for TENTHS looks (default 300)
wait_stat() { wait_moving "${4:-300}" "stat ${3:-$1}" stat_over "$1" "$2"; }

# gate_open: ./gate, a FIFO the case holds open for writing on fd 8. A workload that reads
# it (`cat gate`, or a stdin `<gate`) lives until gate_close; every command started in the
# background meanwhile must close fd 8 (`8>&-`), or the workload never sees the end.
gate_open() { rm -f gate; mkfifo gate && exec 8<>gate; }
gate_close() { exec 8>&-; }

# ctl CMD...: send a command on ./ctl and read its one reply line from ./ack on fd 9, which
# the case opens for reading only once ptcollect has opened the FIFO (after its ready file:
# exec 9<ack). ptcollect is then the only writer: the read ends with the reply, or at once
# (an empty reply) when ptcollect has exited; no guess of how long a reply takes on a
# loaded host (a hung ptcollect is the case's time limit's)
ctl() {
	echo "$*" >ctl
	_r=
	read -r _r <&9
	echo "$_r"
}

# ---- a bundle checked against itself (the 8x cases: faults and bad inputs) ----

# manifest_streams FILE: one line per stream of a manifest: file sideband bytes
# sideband_bytes truncated lost lost_records partial collision unreported ("-": not
# counted, null or absent)
manifest_streams() {
	awk -F'"' '
		/"streams": \[/ { in_s = 1; next }
		in_s && /^  \]/ { in_s = 0 }
		!in_s { next }
		$2 == "file" { f = $4; u = "-" } $2 == "sideband" { sb = $4 }
		$2 == "bytes" { b = $4 } $2 == "sideband_bytes" { sbb = $4 }
		$2 == "truncated" { t = $4 } $2 == "lost" && $4 != "" { l = $4 }
		$2 == "lost_records" { lr = $4 } $2 == "partial" { p = $4 }
		$2 == "collision" { c = $4 } $2 == "unreported" && $4 != "" { u = $4 }
		$2 == "itrace_start" { print f, sb, b, sbb, t, l, lr, p, c, u }' "$1"
}
# manifest_str FILE KEY: the string after the first "KEY": (null prints nothing)
manifest_str() { sed -n "s/^ *\"$2\": \"\(.*\)\",*$/\1/p" "$1" | head -n 1; }
# size FILE: its bytes (0 when missing)
size() { wc -c <"$1" 2>/dev/null || echo 0; }

# awk's hex(x): the value of hex digits. The guest's awk is busybox's, which reads a string
# "0x..." as a hex number (POSIX awk need not): a tenth of the time of a loop over the digits,
# which took 77 s of 87's thousand streams under host load
AWK_HEX='function hex(x) { return ("0x" x) + 0 }'

# dump_all DIR: every .pevent of DIR through `ptcollect dump` into /tmp/agree.dump, each
# file's lines (without offsets) after a line "== FILE". One dump of the files put end to
# end (a thousand runs of ptcollect take minutes under TCG); each line goes back to its file
# by its offset.
dump_all() {
	ls "$1" | grep '\.pevent$' >/tmp/agree.names
	(cd "$1" && cat $(cat /tmp/agree.names)) >/tmp/agree.cat
	/ptcollect dump --format pevent /tmp/agree.cat >/tmp/agree.lines 2>/dev/null
	ls -ln "$1" >/tmp/agree.sizes
	awk "$AWK_HEX"'
		BEGIN { shown = -1; i = 0; n = 0 }
		FILENAME == "/tmp/agree.sizes" { size[$NF] = $5; next }
		FILENAME == "/tmp/agree.names" { name[n++] = $1; next }
		{
			off = hex($1)
			while (i < n && off >= start + size[name[i]]) { start += size[name[i]]; i++ }
			if (i != shown) { print "== " name[i]; shown = i }
			sub(/^[0-9a-f]*  /, "")
			print
		}' /tmp/agree.sizes /tmp/agree.names /tmp/agree.lines >/tmp/agree.dump
}

# check_agrees NAME DIR: the manifest agrees with the files, and info says what was lost.
# A complete bundle: every file holds exactly what its stream's entry says, the .pevent
# holds as many TRUNCATED AUX and LOST records (and lost records) as counted. An incomplete
# one (killed): the files hold at least that. info exits 0 and names every loss; for a
# killed recording, every file that holds more than the manifest says. Leaves the sideband's
# lines in /tmp/agree.dump (dump_all) for a complete bundle.
check_agrees() {
	_n=$1 _d=$2 _m=$2/manifest.json
	[ -f "$_m" ] || { fail "$_n" "no manifest in $_d: $(ls "$_d" 2>&1 | head -n 5)"; return 1; }
	_complete=0
	grep -q '^  "complete": true' "$_m" && _complete=1
	_why=""
	/ptcollect info "$_d" >/dev/null 2>/tmp/agree.err \
		|| _why="; info exit $?: $(head -c 300 /tmp/agree.err)"
	manifest_streams "$_m" >/tmp/agree.streams
	[ -s /tmp/agree.streams ] || _why="$_why; no stream in the manifest"
	: >/tmp/agree.dump
	[ $_complete = 1 ] && dump_all "$_d"
	ls -ln "$_d" >/tmp/agree.ls
	# One pass: sizes (ls), record counts (the dumps), info's words, the manifest's streams.
	_why="$_why$(awk -v complete=$_complete "$AWK_HEX"'
		FILENAME == "/tmp/agree.ls" { size[$NF] = $5; next }
		FILENAME == "/tmp/agree.dump" {
			if ($1 == "==") { f = $2; next }
			if ($1 == "PERF_RECORD_AUX.TRUNCATED") nt[f]++
			if ($1 == "PERF_RECORD_LOST") { nl[f]++; nlr[f] += hex($3) }
			next
		}
		FILENAME == "/tmp/agree.err" { info = info "\n" $0; next }
		{
			f = $1; sb = $2; fs = size[f] + 0; sbs = size[sb] + 0
			if (complete) {
				if (fs != $3) printf "; %s has %d bytes, the manifest says %s", f, fs, $3
				if (sbs != $4) printf "; %s has %d bytes, the manifest says %s", sb, sbs, $4
				if (nt[sb] + 0 != $5) printf "; %s holds %d TRUNCATED, the manifest says %s", sb, nt[sb], $5
				if (nl[sb] + 0 != $6) printf "; %s holds %d LOST, the manifest says %s", sb, nl[sb], $6
				if (nlr[sb] + 0 != $7) printf "; %s LOST drop %d records, the manifest says %s", sb, nlr[sb], $7
			} else {
				if (fs < $3) printf "; %s has %d bytes, fewer than the manifest says (%s)", f, fs, $3
				if (fs > $3 && index(info, f " holds " fs " bytes, more than the " $3) == 0)
					printf "; info does not say %s holds %d bytes, more than %s", f, fs, $3
			}
			if ($5 != 0 && index(info, f ": " $5 " TRUNCATED record(s)") == 0)
				printf "; info does not report %s: %s TRUNCATED", f, $5
			if ($6 != 0 && index(info, f ": " $6 " LOST record(s): " $7 " sideband records") == 0)
				printf "; info does not report %s: %s LOST (%s records)", f, $6, $7
			if ($10 != "-" && $10 != 0 && index(info, f ": the kernel dropped " $10 " sideband record(s) that no LOST") == 0)
				printf "; info does not report %s: %s records dropped unreported", f, $10
		}' /tmp/agree.ls /tmp/agree.dump /tmp/agree.err /tmp/agree.streams)"
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

# ---- targets with many threads (tests/progs/threads.c) ----

# wait_ready FILE: until the target wrote "ready" there (60 s at most)
wait_ready() {
	_i=0
	while ! grep -q '^ready$' "$1" 2>/dev/null && [ $_i -lt 600 ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}
# rss_anon PID: RssAnon in kB: the heap and stacks, not the rings (mapped, and touched as
# they fill)
rss_anon() { sed -n 's/^RssAnon:[^0-9]*\([0-9]*\).*/\1/p' /proc/$1/status 2>/dev/null; }
# sample_rss PID N: RssAnon once a second, N times, on one line
sample_rss() {
	_s=""
	for _i in $(seq "$2"); do
		sleep 1
		_s="$_s $(rss_anon "$1")"
	done
	echo "$_s"
}
# check_flat NAME SAMPLES...: from the third sample on, RssAnon grows by 1 MiB at most
check_flat() {
	_n=$1
	shift
	_early=$3 _peak=0
	for _v; do [ "${_v:-0}" -gt $_peak ] && _peak=$_v; done
	[ -n "$_early" ] && [ $((_peak - _early)) -le 1024 ] && return 0
	fail "$_n" "RssAnon went from ${_early:-nothing} to $_peak kB:$*"
	return 1
}
# tids_seen: the hex tids of every record sample check_agrees found (/tmp/agree.dump)
tids_seen() { sed -n 's/.*  { [0-9a-f]*\/\([0-9a-f]*\) .*/\1/p' /tmp/agree.dump | sort -u; }
# missing_tids OUTFILE SEEN: the target's tids (decimal, "tid N" lines in OUTFILE) not in
# SEEN (hex, one a line): the first five, and how many in all
missing_tids() {
	sed -n 's/^tid //p' "$1" | awk '{ printf "%x\n", $1 }' |
		awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen) { n++; if (n < 6) printf " %s", $1 }
			END { if (n) printf " (%d in all)", n }' "$2" -
}
# check_every_thread NAME OUTFILE: every tid of the target (OUTFILE) has a record in the
# sideband check_agrees read (/tmp/agree.dump)
check_every_thread() {
	tids_seen >/tmp/tids.seen
	_miss=$(missing_tids "$2" /tmp/tids.seen)
	[ -z "$_miss" ] && return 0
	fail "$1" "no record of thread(s)$_miss"
	return 1
}
