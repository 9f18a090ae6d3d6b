# JIT code (issue 26): record -- jitprog, which writes a function into anonymous memory and
# names it in /tmp/perf-PID.map as a JIT does; the kernel's sideband shows the anonymous
# executable mapping (the mprotect), and record copies the map into the bundle's perf-maps/
# (mode 0600, the same bytes) and lists it in the manifest. A map planted as a symbolic
# link is not followed: a warning, nothing copied.
. /lib.sh
rm -f /tmp/perf-*.map
/ptcollect record -q -o /tmp/jit1 -- /jitprog map 1000 >/tmp/jit1.out 2>/tmp/jit1.err
rc=$?
[ $rc = 0 ] && pass jit_record_exit_zero || fail jit_record_exit_zero "rc=$rc $(cat /tmp/jit1.err)"
src=$(ls /tmp/perf-*.map 2>/dev/null | head -1)
pid=${src#/tmp/perf-}
pid=${pid%.map}
copy=/tmp/jit1/perf-maps/perf-$pid.map
if [ -n "$src" ] && [ -f "$copy" ] && cmp -s "$src" "$copy"; then
	pass jit_perf_map_copied_byte_for_byte
else
	fail jit_perf_map_copied_byte_for_byte "map '$src', bundle: $(ls /tmp/jit1 /tmp/jit1/perf-maps 2>&1)"
fi
mode=$(ls -l "$copy" 2>/dev/null | cut -c1-10)
dmode=$(ls -ld /tmp/jit1/perf-maps 2>/dev/null | cut -c1-10)
[ "$mode" = -rw------- ] && [ "$dmode" = drwx------ ] && pass jit_perf_map_private \
	|| fail jit_perf_map_private "file $mode, directory $dmode"
if grep -q "\"file\": \"perf-maps/perf-$pid.map\"" /tmp/jit1/manifest.json &&
	grep -q "\"pid\": $pid" /tmp/jit1/manifest.json; then
	pass jit_perf_map_in_manifest
else
	fail jit_perf_map_in_manifest "$(grep -A8 perf_maps /tmp/jit1/manifest.json)"
fi
rm -f /tmp/perf-*.map

/ptcollect record -o /tmp/jit2 -- /jitprog link 10 >/dev/null 2>/tmp/jit2.err
rc=$?
if [ $rc = 0 ] && grep -q "not copied: a symbolic link" /tmp/jit2.err && [ ! -e /tmp/jit2/perf-maps ]; then
	pass jit_planted_link_not_followed
else
	fail jit_planted_link_not_followed "rc=$rc $(cat /tmp/jit2.err) $(ls /tmp/jit2)"
fi
rm -f /tmp/perf-*.map
rm -rf /tmp/jit1 /tmp/jit2 /tmp/jit1.out /tmp/jit1.err /tmp/jit2.err
