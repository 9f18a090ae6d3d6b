# The ptcollect binary (its shared libraries copied by rig) runs in the guest and
# sees the simulated intel_pt PMU.
. /lib.sh
v=$(/ptcollect --version 2>&1)
rc=$?
[ $rc = 0 ] && echo "$v" | grep -q '^ptcollect [0-9]' && pass ptcollect_runs_in_guest \
	|| fail ptcollect_runs_in_guest "--version: exit $rc, output '$v'"

if ! /ptcollect help caps >/dev/null 2>&1; then
	skip ptcollect_caps_sees_pmu "caps command not in this build"
else
	/ptcollect caps >caps.txt 2>&1
	rc=$?
	cat caps.txt
	if [ $rc != 0 ]; then
		fail ptcollect_caps_sees_pmu "ptcollect caps exited with status $rc"
	elif ! grep -q 'intel_pt' caps.txt; then
		fail ptcollect_caps_sees_pmu "the output does not name the intel_pt PMU"
	elif ! grep -qE "(^|[^0-9])$(cat "$D/type")([^0-9]|$)" caps.txt; then
		fail ptcollect_caps_sees_pmu "the output lacks the PMU type $(cat "$D/type")"
	else
		pass ptcollect_caps_sees_pmu
	fi
fi
