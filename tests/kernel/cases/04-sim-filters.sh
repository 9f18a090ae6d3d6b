# Address filters through the real core: resolution against /proc/self/maps, the
# VMA-edge behaviour of 6.1 (README, finding 3) and the refused 'start' filter.
. /lib.sh
/ptsim_test -t 0.5 -F -f 'filter 0x1100/0x800@%s' && pass sim_filter_resolves_like_maps \
	|| fail sim_filter_resolves_like_maps "kernel range differs from /proc/self/maps (above)"

/ptsim_test -t 0.5 -f 'filter 0x1000/0x1000@%s' >edge.txt
rc=$?
cat edge.txt
if [ $rc -ne 0 ]; then
	fail sim_filter_vma_edge "ptsim_test failed"
elif grep -q 'filter check: .*MISMATCH' edge.txt; then
	echo "NOTE: the VMA-edge filter resolved to the preceding VMA, size 0 (known 6.1 behaviour)"
	pass sim_filter_vma_edge
else
	echo "NOTE: the VMA-edge filter resolved correctly: this kernel differs from 6.1.x"
	pass sim_filter_vma_edge
fi

if /ptsim_test -t 0.1 -f 'start 0x1100/0x800@%s' >start.txt 2>&1; then
	cat start.txt
	fail sim_filter_start_refused "'start' filter accepted"
elif grep -q 'SET_FILTER.*Operation not supported' start.txt; then
	pass sim_filter_start_refused
else
	cat start.txt
	fail sim_filter_start_refused "refused with another error than EOPNOTSUPP"
fi
