# ptsim.ko registers "intel_pt" with the sysfs files perf and collectors read.
. /lib.sh
ok=1
for f in nr_addr_filters=2 format/pt=config:0 format/branch=config:13 \
	format/psb_period=config:24-27 caps/num_address_ranges=2 caps/ip_filtering=1; do
	file_is "$D/${f%%=*}" "${f#*=}" || { ok=0; fail sim_sysfs_files "$D/${f%%=*} is '$(cat "$D/${f%%=*}")', expected '${f#*=}'"; }
done
[ $ok = 1 ] && pass sim_sysfs_files
grep -qx '[0-9][0-9]*' "$D/type" && pass sim_sysfs_type || fail sim_sysfs_type "$D/type: '$(cat "$D/type")'"
