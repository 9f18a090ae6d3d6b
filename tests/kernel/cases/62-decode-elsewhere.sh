# A bundle decodes elsewhere (issue 14): each recording (a workload, --per-thread, -p of a
# process with threads, -a, a filter, the kernel) is archived, copied into a new root that
# holds only the bundle, libipt's ptxed and ptdump and a shell, and decoded there by the
# script `info --script` prints: every decoder exits 0 with no error line, and none of the
# files the sideband maps exists in that root. The simulated PMU writes pattern 2 (PSB, TSC,
# PSBEND, PAD: valid PT without control flow, which ptxed and ptdump read without error);
# 70-replay-program.sh decodes a program's real control flow from an archived bundle.
. /lib.sh
if ! have_oracle; then
	skip decode_elsewhere "$(oracle_missing)"
	exit 0
fi
set_param pattern 2
mkdir -p /tmp/run
cp /spawner /tmp/run/spawner
prog=/tmp/run/spawner
bb=/bin/busybox

# mapped BUNDLE: the paths of the files the bundle's manifest lists as mapped
mapped() { sed -n 's/^ *"path": "\(\/.*\)",*$/\1/p' "$1/manifest.json"; }

# archived NAME BUNDLE: the archive put every mapped file in the sysroot, the program
# byte for byte
archived() {
	_miss=""
	for _p in $(mapped "$2"); do
		[ -f "$2/sysroot$_p" ] || _miss="$_miss $_p"
	done
	grep -q '"sysroot": "sysroot"' "$2/manifest.json" || _miss="$_miss (manifest: no sysroot)"
	if [ -z "$_miss" ] && { ! grep -q "\"$prog\"" "$2/manifest.json" ||
		cmp -s "$prog" "$2/sysroot$prog"; }; then
		pass "${1}_archived"
	else
		fail "${1}_archived" "not in the sysroot:$_miss"
	fi
}

# elsewhere NAME BUNDLE: a new root with the bundle (under a name with spaces and quotes)
# and only what decoding needs; info's script runs there, from another directory
elsewhere() {
	_r=/tmp/else-$1
	_b="bundle 'of' $1"
	rm -rf "$_r"
	mkdir -p "$_r/x" "$_r/out"
	cp "$bb" "$_r/x/busybox"
	for _a in sh grep cat; do ln -s busybox "$_r/x/$_a"; done
	# libipt's tools need libc: it goes to /x, run through its loader there, so that no
	# path the bundle maps exists in the new root
	for _t in ptxed ptdump; do
		cp "$(command -v $_t)" "$_r/x/$_t.bin"
		printf '#!/x/sh\nexec /x/ld.so --library-path /x /x/%s.bin "$@"\n' $_t >"$_r/x/$_t"
		chmod 755 "$_r/x/$_t"
	done
	cp /lib/x86_64-linux-gnu/libc.so.6 "$_r/x/libc.so.6"
	cp /lib64/ld-linux-x86-64.so.2 "$_r/x/ld.so"
	cp -r "$2" "$_r/$_b"
	/ptcollect info --script "$2" >"$_r/$_b/decode.sh" 2>/dev/null
	_there=""
	for _p in $(mapped "$2"); do
		[ -e "$_r$_p" ] && _there="$_there $_p"
	done
	if [ -z "$_there" ] && [ -n "$(mapped "$2")" ]; then
		pass "${1}_elsewhere_has_none_of_the_files"
	else
		fail "${1}_elsewhere_has_none_of_the_files" "there:$_there; mapped: $(mapped "$2")"
	fi
	PATH=/x PTXED=ptxed PTDUMP=ptdump chroot "$_r" /x/sh -c \
		"cd /out && sh \"/$_b/decode.sh\"" >"$1.decode" 2>&1
	_rc=$?
	_n=0
	for _f in "$2"/*.pt; do [ -s "$_f" ] && _n=$((_n + 2)); done
	_ok=$(grep -c ' exited 0, 0 error lines: ' "$1.decode")
	if [ $_rc = 0 ] && [ "$_n" -gt 0 ] && [ "$_ok" = "$_n" ]; then
		pass "${1}_decodes_elsewhere"
	else
		fail "${1}_decodes_elsewhere" "rc=$_rc, $_ok of $_n decoders clean: $(head -c 2000 "$1.decode")" \
			"$(head -c 1000 "$_r"/out/*.ptxed 2>/dev/null)" "$(ls -l "$2")"
	fi
	rm -rf "$_r"
}

# case NAME ARCHIVE RECORD-ARGS...: record (and archive, with ARCHIVE=archive), then decode
# the bundle NAME elsewhere
case_() {
	_name=$1 _how=$2
	shift 2
	rm -rf "$_name"
	/ptcollect record -q -o "$_name" "$@" >"$_name.out" 2>&1
	_rc=$?
	if [ $_rc != 0 ]; then
		fail "${_name}_recorded" "rc=$_rc: $(cat "$_name.out")"
		return
	fi
	if [ "$_how" = archive ]; then
		/ptcollect archive "$_name" >"$_name.archive" 2>&1
		_rc=$?
		[ $_rc = 0 ] || { fail "${_name}_archive_exit_zero" "rc=$_rc: $(cat "$_name.archive")"; return; }
	fi
	archived "$_name" "$_name"
	elsewhere "$_name" "$_name"
}

case_ workload record --archive -- $prog 2 50 0.4
case_ per_thread archive --per-thread -- $prog 2 50 0.4
# its three threads running from the case's line until it closes the gate
gate_open
$prog 3 50 stdin <gate >pid.out 8>&- &
pid=$!
echo go >&8
wait_until 300 grep -q '^started$' pid.out || fail pid_target_started "its threads never started"
case_ pid archive -p $pid --duration 0.5
gate_close
wait $pid
case_ all_cpus archive -a --duration 0.3
case_ filter archive --filter "filter spin @ $prog" -- $prog 1 10 0.4
case_ kernel archive -e intel_pt//k -a --duration 0.3
# recorded without --kcore: archive took the running kernel's text, and ptxed gets it
if grep -q '"kcore": "kcore.text"' kernel/manifest.json && grep -q 'kernel text taken: yes' kernel.archive; then
	pass kernel_archive_takes_the_kernel_text
else
	fail kernel_archive_takes_the_kernel_text "$(cat kernel.archive)"
fi
/ptcollect info kernel 2>/dev/null | grep -q -- '--raw kernel/kcore.text:0x' &&
	pass kernel_ptxed_reads_the_kernel_text ||
	fail kernel_ptxed_reads_the_kernel_text "$(/ptcollect info kernel 2>&1 | grep ptxed)"

# A file that changed after it was recorded is refused by name; the rest is archived.
cp /spawner /tmp/run/other
/ptcollect record -q -o changed -- /tmp/run/other 1 10 0.2 >/dev/null 2>&1
cp /ptsim_check /tmp/run/other.new && mv /tmp/run/other.new /tmp/run/other
/ptcollect archive changed >changed.out 2>&1
rc=$?
libc=$(mapped changed | grep -m 1 'libc')
if [ $rc = 1 ] && grep -q "/tmp/run/other: not archived: .*build-id" changed.out &&
	[ ! -e changed/sysroot/tmp/run/other ] && [ -n "$libc" ] && [ -f "changed/sysroot$libc" ]; then
	pass archive_refuses_a_changed_file_and_copies_the_rest
else
	fail archive_refuses_a_changed_file_and_copies_the_rest "rc=$rc, libc '$libc': $(cat changed.out)"
fi

# A file replaced while it is traced: the records carry both build-ids, so record warns, info
# names it, and archive keeps the file there now (the first one again) and names the other.
cp /spawner /tmp/run/b
/ptcollect record -o replaced -- /bin/sh -c '/tmp/run/b 1 10 0.1
	cp /ptsim_check /tmp/run/b.new && mv /tmp/run/b.new /tmp/run/b && /tmp/run/b -h
	cp /spawner /tmp/run/b.new && mv /tmp/run/b.new /tmp/run/b' >replaced.out 2>&1
/ptcollect info replaced >replaced.info 2>&1
/ptcollect archive replaced >replaced.archive 2>&1
rc=$?
if [ "$(grep -c '"path": "/tmp/run/b"' replaced/manifest.json)" = 2 ] &&
	grep -q 'warning: record: /tmp/run/b was replaced while it was traced' replaced.out &&
	grep -q '/tmp/run/b was replaced while it was traced' replaced.info && [ $rc = 1 ] &&
	grep -q '/tmp/run/b was mapped as 2 different files' replaced.archive &&
	cmp -s /spawner replaced/sysroot/tmp/run/b; then
	pass replaced_while_traced_is_named
else
	fail replaced_while_traced_is_named "rc=$rc: $(cat replaced.out replaced.info replaced.archive)"
fi
# replaced after it was mapped, before the recording ended: record says so at the end
cp /spawner /tmp/run/c
/ptcollect record -o after -- /bin/sh -c '/tmp/run/c 1 10 0.1
	cp /ptsim_check /tmp/run/c.new && mv /tmp/run/c.new /tmp/run/c' >after.out 2>&1
grep -q 'warning: record: /tmp/run/c changed since it was mapped: its build-id is' after.out &&
	pass changed_before_the_end_is_named ||
	fail changed_before_the_end_is_named "$(cat after.out)"
set_param pattern 0
rm -rf /tmp/run
