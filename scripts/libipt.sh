#!/bin/sh
# libipt 2.2 or newer for the build (Event Trace, TRIG, the errata of current CPUs).
#
#   scripts/libipt.sh DIR
#
# When the system's libipt-dev is 2.2 or newer, nothing is done. Otherwise Debian's own 2.2
# packages (libipt2, libipt-dev; the soname is libipt.so.2, as in Debian 12) are fetched from
# the unstable suite of the same Debian archive the system uses, with a private apt
# configuration under DIR (the system's sources and package database are never changed),
# and unpacked into DIR/root. Either way DIR/libipt.mk tells the Makefile which to use: it
# compiles against DIR/root/usr/include and links with an rpath to DIR/root's library.
set -eu
dir=$1
want_minor=2

version_of() { # HEADER -> "MAJOR MINOR", empty when there is none
	[ -r "$1" ] || return 0
	awk '/#define LIBIPT_VERSION_MAJOR/ { ma = $3 } /#define LIBIPT_VERSION_MINOR/ { mi = $3 }
	     END { if (ma != "") print ma, mi }' "$1"
}

new_enough() { # "MAJOR MINOR"
	set -- $1
	[ $# -eq 2 ] && { [ "$1" -gt 2 ] || { [ "$1" -eq 2 ] && [ "$2" -ge $want_minor ]; }; }
}

# DIR/libipt.mk: the system's libipt (no argument) or the one under DIR/root.
write_mk() {
	mkdir -p "$dir"
	if [ $# -eq 0 ]; then
		printf '# scripts/libipt.sh: the system libipt is new enough\nIPT_LIBS := -lipt\n' \
			>"$dir/libipt.mk.tmp"
	else
		root=$(cd "$dir/root" && pwd)
		lib=$root/usr/lib/$(${CC:-cc} -print-multiarch)
		{
			echo "# scripts/libipt.sh: Debian's libipt $1 under $root"
			echo "IPT_LIBDIR := $lib"
			echo "IPT_CFLAGS := -I$root/usr/include"
			echo "IPT_LIBS := -L$lib -Wl,-rpath,'\$\$ORIGIN/../lib/ptcollect' -Wl,-rpath,$lib -lipt"
			echo "IPT_LIBS_INSTALL := -L$lib -Wl,-rpath,'\$\$ORIGIN/../lib/ptcollect' -lipt"
		} >"$dir/libipt.mk.tmp"
	fi
	mv "$dir/libipt.mk.tmp" "$dir/libipt.mk"
}

if new_enough "$(version_of /usr/include/intel-pt.h)"; then
	write_mk
	exit 0
fi
if new_enough "$(version_of "$dir/root/usr/include/intel-pt.h")"; then
	write_mk "$(version_of "$dir/root/usr/include/intel-pt.h" | tr ' ' .)"
	exit 0
fi

# The archive the system's own sources name (deb822 or one-line format).
uri=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
	grep -v security | head -n 1 || true)
[ -n "$uri" ] || uri=$(sed -n 's/^deb  *\(\[[^]]*\] *\)\{0,1\}\([^ ]*\).*/\2/p' \
	/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | grep -v security |
	head -n 1 || true)
if [ -z "$uri" ]; then
	echo "ptcollect: libipt: no Debian archive in /etc/apt/sources.list*; install libipt-dev 2.2 or newer, or build with LIBIPT=system (libipt $(version_of /usr/include/intel-pt.h | tr ' ' .) decodes no Event Trace)" >&2
	exit 1
fi
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

echo "ptcollect: libipt: the system's is older than 2.$want_minor; fetching Debian's libipt 2.$want_minor packages (unstable) into $dir" >&2
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp/apt/sources" "$dir.tmp/apt/state/lists/partial" \
	"$dir.tmp/apt/cache/archives/partial" "$dir.tmp/debs" "$dir.tmp/root"
printf 'Types: deb\nURIs: %s\nSuites: unstable\nComponents: main\nSigned-By: %s\n' \
	"$uri" "$keyring" >"$dir.tmp/apt/sources/unstable.sources"
a=$(cd "$dir.tmp/apt" && pwd)
set -- -q -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$a/sources" \
	-o Dir::State="$a/state" -o Dir::State::Status=/var/lib/dpkg/status \
	-o Dir::Cache="$a/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root
apt-get "$@" update >"$dir.tmp/apt/update.log" 2>&1 || {
	cat "$dir.tmp/apt/update.log" >&2
	echo "ptcollect: libipt: apt-get update of the private configuration failed (above)" >&2
	exit 1
}
(cd "$dir.tmp/debs" && apt-get "$@" download libipt2 libipt-dev) >&2
for d in "$dir.tmp"/debs/*.deb; do
	dpkg-deb -x "$d" "$dir.tmp/root"
done
got=$(version_of "$dir.tmp/root/usr/include/intel-pt.h")
if ! new_enough "$got"; then
	echo "ptcollect: libipt: Debian's unstable suite offers libipt $(echo "$got" | tr ' ' .), not 2.$want_minor or newer" >&2
	exit 1
fi
rm -rf "$dir"
mv "$dir.tmp" "$dir"
write_mk "$(echo "$got" | tr ' ' .)"
echo "ptcollect: libipt: $(echo "$got" | tr ' ' .) in $dir/root" >&2
