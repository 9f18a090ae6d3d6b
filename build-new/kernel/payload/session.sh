#!/bin/sh
# A scripted profiling session: ptcollect records every CPU in snapshot mode; a uprobe on
# FUNCTION takes a snapshot each time PROGRAM calls it; the script waits until tracing is
# live, runs PROGRAM, takes one more snapshot of its own, stops, and reads the result.
# usage: session.sh PTCOLLECT OUTPUT FUNCTION PROGRAM [ARGS...]
set -eu
ptc=$1 out=$2 fn=$3
shift 3
dir=$(mktemp -d)
mkfifo "$dir/ctl" "$dir/ack"
exec 9<>"$dir/ack"	# ptcollect opens both FIFOs read-write too: nobody waits for the other
"$ptc" record -q -a -S -o "$out" --control "fifo:$dir/ctl,$dir/ack" --ready "$dir/ready" \
	--trigger "uprobe:$1:$fn" --json -- sleep 600 >"$dir/result.json" &
pid=$!

# 1. Wait until tracing is live.
while [ ! -e "$dir/ready" ]; do
	kill -0 "$pid" 2>/dev/null || { echo "ptcollect ended before tracing began" >&2; exit 1; }
	sleep 0.1
done

# 2. Run the program: each call of FUNCTION is a snapshot.
"$@" || echo "$1 exited with status $?"

# 3. One command per line on CTL, one reply per command on ACK.
say() {
	echo "$*" >"$dir/ctl"
	read -r reply <&9
	echo "$*: $reply"
}
say snapshot
say mark "$1 is done"
say stop
wait "$pid" || true	# the workload (sleep) ends with SIGTERM: ptcollect says 143

# 4. The result: one JSON object (u64 counts are decimal strings).
grep -E '"(cause|bytes|stop_reason)"' "$dir/result.json"
echo "snapshots: $(grep -c '"cause":' "$dir/result.json")"
rm -rf "$dir"
