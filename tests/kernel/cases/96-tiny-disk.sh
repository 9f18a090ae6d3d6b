# Issue 21 item 3: a disk with little room left at the start. record keeps room for its last
# manifest, sized from what it can grow to, or refuses before tracing naming the room free;
# either no bundle at all, or a manifest whose bytes equal the files, with the stop reason.
. /lib.sh
cd /tmp || exit 1
mkdir -p /tmp/tiny /tmp/ta && mount -t tmpfs -o size=384k tmpfs /tmp/tiny
reload chunk=2048 period_us=200 pattern=1 || exit 0
timeout -s KILL 60 /ptcollect record -a --duration 20 -o /tmp/tiny/d 2>/tmp/ta/d.err
rc=$?
m=/tmp/tiny/d/manifest.json
if [ ! -e /tmp/tiny/d ]; then
	[ $rc = 1 ] && grep -q 'the last manifest needs [0-9]* bytes kept free, and the disk has [0-9]* bytes free' /tmp/ta/d.err &&
		pass tiny_disk_refused_before_tracing_or_manifest_equals_files ||
		fail tiny_disk_refused_before_tracing_or_manifest_equals_files "exit $rc, no bundle: $(cat /tmp/ta/d.err)"
else
	sum=$(manifest_streams $m | awk '{ s += $3 } END { print s + 0 }')
	[ "$(manifest_str $m stop_reason)" = "the disk is full" ] && [ "$sum" = "$(total_pt /tmp/tiny/d)" ] &&
		pass tiny_disk_refused_before_tracing_or_manifest_equals_files ||
		fail tiny_disk_refused_before_tracing_or_manifest_equals_files "exit $rc: manifest $sum bytes, files $(total_pt /tmp/tiny/d), $(grep -E 'stop_reason|complete' $m | tr -d '\n'); $(cat /tmp/ta/d.err)"
fi
umount /tmp/tiny
reload
