#!/bin/sh
# Install the Debian packages ptcollect needs to build, test and run its kernel rig,
# but only those that are missing (no apt-get at all when everything is there); then
# libipt 2.2 or newer: the system's when it is new enough, else Debian's 2.2 fetched into
# IPT_DIR (build/libipt) by scripts/libipt.sh; LIBIPT=system keeps the system's, whatever
# its version. Set PTC_DEPS_EXTRA to add packages; PTC_DEPS_DRYRUN=1 only lists what is
# missing.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)

libipt() {
	[ "${LIBIPT:-auto}" = system ] && return 0
	[ "${PTC_DEPS_DRYRUN:-0}" = 1 ] && return 0
	"$top/scripts/libipt.sh" "${IPT_DIR:-$top/build/libipt}"
}

# The kernel rig builds ptsim.ko against the headers of the kernel pinned in the tree
# (tests/kernel/rig setup then checks their version against the image it downloads).
kv=$(sed -n 1p "$(dirname "$0")/../tests/kernel/KERNEL_VERSION" 2>/dev/null || true)

installed() {
	case $(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true) in
	*" installed") ;;
	*) false ;;
	esac
}
offered() { apt-cache policy "$1" 2>/dev/null | grep -q '^ *Candidate: [^(]'; }

# The pinned ABI's headers while apt offers them; else, as the rig does, those of the ABI
# linux-headers-amd64 depends on now (Debian drops old ABIs at each point release).
kernel_headers() {
	[ -n "$kv" ] || return 0
	if installed "linux-headers-$kv" || offered "linux-headers-$kv"; then
		echo "linux-headers-$kv"
		return 0
	fi
	cur=$(apt-cache depends linux-headers-amd64 2>/dev/null |
		sed -n 's/^ *Depends: linux-headers-\([^ ]*\)$/\1/p' | head -n 1)
	if [ -z "$cur" ]; then
		echo "linux-headers-$kv" # no package lists yet: apt-get update decides
		return 0
	fi
	echo "ptcollect: notice: apt does not offer the pinned kernel ABI $kv; the rig falls back to $cur, the ABI linux-headers-amd64 depends on now (tests/kernel/KERNEL_VERSION pins the ABI)" >&2
	echo "linux-headers-$cur"
}

find_missing() {
	pkgs="make gcc g++ clang pkg-config libelf-dev libjansson-dev libcapstone-dev libipt-dev libbpf-dev
libcriterion-dev bpftool linux-perf util-linux binutils elfutils file man-db
qemu-system-x86 busybox-static cpio kmod libc6-dev xz-utils bash-completion zsh
libclang-rt-14-dev llvm-14 yasm $(kernel_headers)
${PTC_DEPS_EXTRA:-}"
	missing=""
	for p in $pkgs; do
		installed "$p" || missing="$missing $p"
	done
}

find_missing
if [ -z "$missing" ]; then
	libipt
	exit 0
fi
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
# After a refresh the kernel headers are chosen again: the pinned ABI may be gone.
if ! $sudo apt-get install -y -q --no-install-recommends $missing; then
	$sudo apt-get update -q
	find_missing
	$sudo apt-get install -y -q --no-install-recommends $missing
fi
libipt
