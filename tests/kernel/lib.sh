# Helpers for the guest's test cases (sourced). Each case prints one line per check:
#   PASS name | FAIL name: why | SKIP name: why
S=/sys/bus/event_source/devices/intel_pt/sim/stats
P=/sys/module/ptsim/parameters

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
skip() { echo "SKIP $1: $2"; }

# stat NAME: a counter from sim/stats
stat() { sed "s/.*$1 \([0-9]*\).*/\1/" $S; }

# reload [param=value ...]: the module with these parameters
reload() {
	rmmod ptsim 2>/dev/null
	/rig-load "$@" || { echo "FAIL reload: insmod $*"; return 1; }
}

# check_bundle NAME DIR: every .pt file byte-exact against pattern 0
check_bundle() {
	local ok=1 f n=0
	for f in "$2"/*.pt; do
		[ -f "$f" ] || continue
		n=$((n + 1))
		/ptsim_check "$f" >/tmp/check.out || { ok=0; cat /tmp/check.out; }
	done
	[ $n -gt 0 ] || { fail "$1" "no .pt file in $2"; return 1; }
	[ $ok = 1 ] && return 0
	fail "$1" "bytes differ from what the simulated hardware wrote"
	return 1
}

# total_pt DIR: bytes in every .pt file
total_pt() { cat "$1"/*.pt 2>/dev/null | wc -c; }

# json_num FILE KEY: the first number after "KEY": (numbers or "numbers")
json_num() { grep -m1 "\"$2\":" "$1" | sed 's/[^0-9]*\([0-9][0-9]*\).*/\1/'; }
