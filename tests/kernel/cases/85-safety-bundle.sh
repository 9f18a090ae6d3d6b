# Issue 17 on real bundles: --force never deletes what is not a bundle and keeps the old
# one until the new recording began (items 2, 3); a bundle is private whatever the umask
# (6); info quotes any directory name (1), fails when stdout cannot take its output (9)
# and escapes the manifest's strings (10); --user runs the workload as another user.
. /lib.sh
umask 022
mkdir -p /tmp/fz && cd /tmp/fz || exit 1
rec() { /ptcollect record -q "$@"; } # quiet, and stdin not a terminal

# ---- 2: --force refuses what is not a bundle, and deletes nothing ----
# plant DIR: someone's files, and a manifest.json that is not ptcollect's
plant() {
	mkdir -p "$1/sub" && echo mine >"$1/keep" && echo deep >"$1/sub/deep" &&
		echo '{"format": "something else"}' >"$1/manifest.json"
}
planted() {
	[ "$(cat "$1/keep" "$1/sub/deep" "$1/manifest.json" 2>&1)" = \
		"$(printf 'mine\ndeep\n{"format": "something else"}')" ]
}
# refused NAME WHERE DIR -o VALUE: run there, expect exit 2 and DIR's files untouched
refused() {
	(cd "$2" && rec --force -o "$5" -- /bin/true) 2>/tmp/f.err
	_rc=$?
	if [ $_rc != 2 ]; then
		fail "$1" "-o $5: exit $_rc, expected 2: $(cat /tmp/f.err)"
	elif ! planted "$3"; then
		fail "$1" "-o $5 deleted files: $(ls -R "$3" | tr '\n' ' ')"
	else
		pass "$1"
	fi
}
echo mine >notes.txt
rec --force -o notes.txt -- /bin/true 2>/tmp/f.err
rc=$?
[ $rc = 2 ] && [ "$(cat notes.txt)" = mine ] && pass force_refuses_a_file ||
	fail force_refuses_a_file "exit $rc: $(cat /tmp/f.err)"
plant l1 && ln -s l1 link1
refused force_refuses_a_link /tmp/fz l1 -o link1
plant l2 && ln -s l2 link2
refused force_refuses_a_link_slash /tmp/fz l2 -o link2/
plant foreign
refused force_refuses_a_foreign_manifest /tmp/fz foreign -o foreign
plant cwd
refused force_refuses_dot /tmp/fz/cwd cwd -o .
plant up && mkdir up/inner
refused force_refuses_dotdot /tmp/fz/up/inner up -o ..
ls -a | grep -q replaced && fail force_leaves_nothing_aside "$(ls -a)" || pass force_leaves_nothing_aside

# ---- 2: --force over a real bundle replaces it ----
rec -o b1 -- /bin/sh -c '. /lib.sh; work 3000'
echo old >b1/old-marker
rec --force -o b1 -- /bin/sh -c '. /lib.sh; work 3000'
rc=$?
if [ $rc = 0 ] && [ ! -e b1/old-marker ] && [ -f b1/manifest.json ] && ! ls -a | grep -q replaced; then
	pass force_replaces_a_bundle
else
	fail force_replaces_a_bundle "exit $rc; $(ls -a . b1 | tr '\n' ' ')"
fi

# ---- 3: a recording that fails before it begins puts the old bundle back ----
sum0=$(cat b1/manifest.json b1/*.pt | md5sum)
# The busy recording runs from its ready file until the case ends it (SIGINT), not for a
# fixed time that a slow start could use up.
rm -f /tmp/busy.ready
/ptcollect record -q -a --ready /tmp/busy.ready -o busy &
bg=$!
wait_file_of $bg /tmp/busy.ready || fail force_busy_pmu_keeps_the_old_bundle "no ready file"
rec --force -o b1 -- /bin/true 2>/tmp/f.err
rc=$?
kill -INT $bg
wait $bg
sum1=$(cat b1/manifest.json b1/*.pt 2>/dev/null | md5sum)
if [ $rc = 1 ] && grep -q 'busy' /tmp/f.err && [ "$sum0" = "$sum1" ] && ! ls -a | grep -q replaced; then
	pass force_busy_pmu_keeps_the_old_bundle
else
	fail force_busy_pmu_keeps_the_old_bundle "exit $rc ($(cat /tmp/f.err)); bundle $( [ "$sum0" = "$sum1" ] && echo intact || echo changed); $(ls -a | tr '\n' ' ')"
fi
# A refused permission, as an unprivileged user replacing their own bundle.
mkdir -p /tmp/fz/u && chown 1000:1000 /tmp/fz/u
echo 2 >/proc/sys/kernel/perf_event_paranoid
(cd /tmp/fz/u && /runas 1000 /ptcollect record -q -m ,64K -o ub -- /bin/true) 2>/tmp/f.err
rc=$?
sum0=$(cat u/ub/manifest.json 2>/dev/null | md5sum)
echo 3 >/proc/sys/kernel/perf_event_paranoid
(cd /tmp/fz/u && /runas 1000 /ptcollect record -q -m ,64K --force -o ub -- /bin/true) 2>/tmp/f2.err
rc2=$?
echo 2 >/proc/sys/kernel/perf_event_paranoid
sum1=$(cat u/ub/manifest.json 2>/dev/null | md5sum)
if [ $rc != 0 ]; then
	fail force_permission_keeps_the_old_bundle "the first recording as uid 1000 failed: $(cat /tmp/f.err)"
elif [ $rc2 = 1 ] && grep -q 'permission denied' /tmp/f2.err && [ "$sum0" = "$sum1" ] &&
	[ -f u/ub/manifest.json ] && ! ls -a u | grep -q replaced; then
	pass force_permission_keeps_the_old_bundle
else
	fail force_permission_keeps_the_old_bundle "exit $rc2 ($(cat /tmp/f2.err)); $(ls -a u u/ub | tr '\n' ' ')"
fi

# ---- 6: private whatever the umask: kallsyms, kcore.text, sysroot/, proc.pevent ----
rec -e intel_pt//uk --kcore -a --duration 0.3 -o k1
rm -f /tmp/t.in
mkfifo /tmp/t.in
/threads sleep 2 stdin </tmp/t.in >/tmp/t.out &
pid=$!
exec 7>/tmp/t.in
wait_ready /tmp/t.out
rec -p $pid --duration 0.3 -o p1 7>&-
exec 7>&-
wait $pid
for f in kallsyms kcore.text sysroot/vdso-x64.so manifest.json cpu0.pt cpu0.pevent; do
	[ -f k1/$f ] || fail private_bundle_has_every_file "k1/$f is missing"
done
[ -f p1/proc.pevent ] || fail private_bundle_has_every_file "p1/proc.pevent is missing"
open=$(find k1 p1 \( -type f ! -perm 600 \) -o \( -type d ! -perm 700 \))
if [ -z "$open" ]; then
	pass private_bundle_modes_0600_0700
else
	fail private_bundle_modes_0600_0700 "$(ls -ld $open | tr '\n' ';')"
fi
# Issue 22 (12): a umask with owner bits takes none of them (was 0500/0400, 0000); the
# workload still runs with the caller's umask and SIGPIPE disposition (17).
for m in 0200 0777; do
	(umask $m && rec --kcore -e intel_pt//uk -o um$m -- /bin/sh -c \
		'umask >/tmp/um.out; grep SigIgn /proc/self/status >>/tmp/um.out') 2>/tmp/um.err
	open=$(find um$m \( -type f ! -perm 600 \) -o \( -type d ! -perm 700 \) 2>&1)
	if [ ! -f um$m/manifest.json ] || [ -n "$open" ]; then
		fail private_bundle_whatever_the_umask_$m "$(cat /tmp/um.err) $(ls -ld $open | tr '\n' ';')"
	elif [ "$(head -1 /tmp/um.out)" != $m ]; then
		fail private_bundle_whatever_the_umask_$m "the workload's umask: $(cat /tmp/um.out)"
	elif [ $(( 0x$(sed -n 's/SigIgn:[[:space:]]*//p' /tmp/um.out) & 0x1000 )) != 0 ]; then
		fail private_bundle_whatever_the_umask_$m "the workload ignores SIGPIPE: $(cat /tmp/um.out)"
	else
		pass private_bundle_whatever_the_umask_$m
	fi
done
readable=""
for f in $(find k1 p1 -type f); do
	/runas 1000 /bin/cat "$f" >/dev/null 2>&1 && readable="$readable $f"
done
for f in $(find k1 p1 -type d); do
	/runas 1000 /bin/ls "$f" >/dev/null 2>&1 && readable="$readable $f/"
done
[ -z "$readable" ] && pass private_bundle_unreadable_by_others \
	|| fail private_bundle_unreadable_by_others "uid 1000 reads$readable"

# ---- 1: info quotes any directory name, 2000 quotes deep ----
q=$(printf "%0250d" 0 | tr 0 "'")
d=/tmp/fz/$q/$q/$q/$q/$q/$q/$q/$q
mkdir -p "$d"
rec -o "$d/it's \$HOME \`id\` ;" -- /bin/sh -c '. /lib.sh; work 3000'
rc=$?
/ptcollect info "$d/it's \$HOME \`id\` ;" >/tmp/i.out 2>/tmp/i.err
irc=$?
line=$(sed -n 's/^ *ptxed: //p' /tmp/i.out | grep -v '^(none)$' | head -n 1)
eval "set -- $line" 2>/dev/null
for last; do :; done
if [ $rc = 0 ] && [ $irc = 0 ] && [ "$1" = ptxed ] && [ -f "$last" ] &&
	[ "${last%/cpu*.pt}" = "$d/it's \$HOME \`id\` ;" ]; then
	pass info_quotes_2000_quotes_exactly
else
	fail info_quotes_2000_quotes_exactly "record $rc, info $irc ($(head -c 300 /tmp/i.err)); the line read back ends with '$(echo "$last" | tail -c 80)'"
fi

# ---- 9, 10: info of a bundle whose manifest holds control characters (edited in) ----
rec -o i9 -- /bin/sh -c 'exit 0' "$(printf '\033]0;owned\007\033[2J')"
sed -i 's/"stop_reason": "\([^"]*\)"/"stop_reason": "\1 \\u001b]0;owned\\u0007"/' i9/manifest.json
/ptcollect info i9 >/dev/full 2>/tmp/i.err
rc=$?
[ $rc = 1 ] && grep -q 'cannot write the results' /tmp/i.err && pass info_stdout_full_exits_1 \
	|| fail info_stdout_full_exits_1 "exit $rc: $(cat /tmp/i.err)"
/ptcollect info i9 >&- 2>/tmp/i.err
rc=$?
[ $rc = 1 ] && pass info_stdout_closed_exits_1 || fail info_stdout_closed_exits_1 "exit $rc: $(cat /tmp/i.err)"
/ptcollect info i9 >/tmp/i.out 2>&1
if grep -q "$(printf '\033')" /tmp/i.out; then
	fail info_escapes_control_characters "raw ESC in: $(grep "$(printf '\033')" /tmp/i.out | od -c | head -n 4)"
elif grep -q 'owned\\x07' /tmp/i.out && grep -q 'x1b\]0;owned' /tmp/i.out; then
	pass info_escapes_control_characters
else
	fail info_escapes_control_characters "the strings are not shown escaped: $(head -n 30 /tmp/i.out)"
fi

# ---- --user: root runs the workload as uid 1000; the bundle stays root's ----
mkdir -p /tmp/fz/uw && chmod 777 /tmp/fz/uw
rec --user 1000 -o usr -- /bin/sh -c 'echo $(id -u) $(id -g) $(id -G) >/tmp/fz/uw/ids
	cat /tmp/fz/usr/manifest.json >/dev/null 2>&1 && echo the bundle is readable >>/tmp/fz/uw/ids
	. /lib.sh; work 3000' 2>/tmp/f.err
rc=$?
ids=$(cat /tmp/fz/uw/ids 2>/dev/null)
owner=$(ls -lnd usr | awk '{ print $3 ":" $4 " " $1 }')
if [ $rc = 0 ] && [ "$ids" = "1000 1000 1000" ] && [ "$owner" = "0:0 drwx------" ] &&
	[ "$(total_pt usr)" -gt 0 ]; then
	pass user_runs_the_workload_as_another_user
else
	fail user_runs_the_workload_as_another_user "exit $rc ($(cat /tmp/f.err)); the workload said '$ids'; bundle $owner, $(total_pt usr) bytes"
fi
cd /tmp && rm -rf /tmp/fz
