# docs/sessions.md's script example, as written (examples/session.sh): start, wait until ready, a
# trigger, a snapshot, stop, the JSON. Its snapshots must be exact and its result whole.
. /lib.sh
reload chunk=256 period_us=2000 || exit 0
sh /session.sh /ptcollect out trig_hit /trigtarget --no-wait --spaced 200000 3 1 >script.out 2>&1
rc=$?
cat script.out
[ $rc = 0 ] && pass script_runs || fail script_runs "rc=$rc"
grep -qx 'snapshot: ack' script.out && grep -qx 'stop: ack' script.out \
	&& grep -q '^mark .*: ack$' script.out && pass script_commands_acked \
	|| fail script_commands_acked "replies above"
[ "$(grep -c '"pid": ' out/manifest.json)" = 3 ] \
	&& [ "$(grep -c '"cause": "trigger"' out/manifest.json)" = 3 ] \
	&& grep -q '"cause": "control"' out/manifest.json && pass script_snapshots \
	|| fail script_snapshots "$(grep '"cause"' out/manifest.json | tr -d '\n')"
check_windows script_windows_exact out 4194304 && pass script_windows_exact
