# Module parameters given at insmod time take effect.
. /lib.sh
reload pattern=1 chunk=2048 period_us=500 || exit 0
if file_is "$P/chunk" 2048 && file_is "$P/pattern" 1 && /ptsim_test -t 0.5 -P 1 &&
	[ "$(stat bytes)" -gt 0 ]; then
	pass sim_insmod_parameters
else
	fail sim_insmod_parameters "chunk=$(cat "$P/chunk") pattern=$(cat "$P/pattern") stats: $(cat "$S")"
fi
cat "$S"
