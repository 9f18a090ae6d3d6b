#!/bin/sh
# make test needs the reference data beside the checkout (../shared) or where PTCOLLECT_SHARED
# says: libipt's tools in oracle/, the real traces in traces/. Without it, stop and say so.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
shared=${PTCOLLECT_SHARED:-$top/../shared}
for need in oracle/ptdump oracle/ptxed oracle/pttc traces libipt-tests; do
	if [ ! -e "$shared/$need" ]; then
		echo "make test: $shared/$need is missing: the tests need the reference data" \
			"(libipt's tools in oracle/, the real traces in traces/, libipt's test suite in libipt-tests/) in ../shared beside" \
			"the checkout, or PTCOLLECT_SHARED set to its directory" >&2
		exit 1
	fi
done
