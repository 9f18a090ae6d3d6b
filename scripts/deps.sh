#!/bin/sh
# Install the Debian packages ptcollect needs to build, test and run its kernel rig,
# but only those that are missing (no apt-get at all when everything is there).
# Set PTC_DEPS_EXTRA to add packages; PTC_DEPS_DRYRUN=1 only lists what is missing.
set -eu

# The kernel rig builds ptsim.ko against the headers of the kernel pinned in the tree
# (tests/kernel/rig setup then checks their version against the image it downloads).
kv=$(sed -n 1p "$(dirname "$0")/../tests/kernel/KERNEL_VERSION" 2>/dev/null || true)

pkgs="make gcc g++ clang pkg-config libelf-dev libcapstone-dev libipt-dev libbpf-dev
libcriterion-dev bpftool linux-perf util-linux binutils elfutils file man-db
qemu-system-x86 busybox-static cpio kmod libc6-dev xz-utils bash-completion zsh
libclang-rt-14-dev llvm-14 ${kv:+linux-headers-$kv}
${PTC_DEPS_EXTRA:-}"

missing=""
for p in $pkgs; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done

[ -z "$missing" ] && exit 0
echo "ptcollect: installing missing packages:$missing" >&2
[ "${PTC_DEPS_DRYRUN:-0}" = 1 ] && exit 0

if [ "$(id -u)" -eq 0 ]; then
	sudo=""
elif command -v sudo >/dev/null 2>&1; then
	sudo="sudo"
else
	echo "ptcollect: deps: not root and no sudo; install as root:" >&2
	echo "  apt-get install$missing" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# Try without refreshing the lists first: on a machine with fresh lists it is faster.
if ! $sudo apt-get install -y -q --no-install-recommends $missing; then
	$sudo apt-get update -q
	$sudo apt-get install -y -q --no-install-recommends $missing
fi
