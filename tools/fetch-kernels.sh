#!/usr/bin/env bash
# Fetches the kernel matrix's kernels (tests/kernels/kernels.txt) from
# Debian with a private apt configuration, unpacks each into
# $KERNELS/RELEASE (boot/vmlinuz-RELEASE, lib/modules/RELEASE with its
# modules.dep) and never installs them. Idempotent: an unpacked kernel is
# kept. Called by install-deps.sh.
set -euo pipefail

KERNELS=${KERNELS:-/var/cache/sparkprof-deps/kernels}
list=$(dirname "$0")/../tests/kernels/kernels.txt
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n1)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

missing=()
while read -r suite package; do
	case "$suite" in ''|'#'*) continue ;; esac
	release=${package#linux-image-}
	[ -s "$KERNELS/$release/lib/modules/$release/modules.dep" ] || missing+=("$suite $package")
done < "$list"
[ ${#missing[@]} -gt 0 ] || exit 0

apt_dir=$(mktemp -d /var/tmp/sparkprof-kernels.XXXXXX)
trap 'rm -rf "$apt_dir"' EXIT
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/debs"
for entry in "${missing[@]}"; do
	suite=${entry%% *}
	case "$suite" in
	*-security) echo "deb [signed-by=$keyring] ${mirror%/debian}/debian-security $suite main" ;;
	*) echo "deb [signed-by=$keyring] $mirror $suite main" ;;
	esac
done | sort -u > "$apt_dir/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
	-o APT::Sandbox::User=root -qq)
echo "fetch-kernels: fetching ${#missing[@]} kernel(s) for the VM tests"
apt-get "${apt_opts[@]}" update
for entry in "${missing[@]}"; do
	package=${entry#* }
	release=${package#linux-image-}
	(cd "$apt_dir/debs" && apt-get "${apt_opts[@]}" download "$package")
	rm -rf "$KERNELS/$release.tmp"
	mkdir -p "$KERNELS/$release.tmp"
	dpkg-deb -x "$apt_dir"/debs/"${package}"_*.deb "$KERNELS/$release.tmp"
	rm -f "$apt_dir"/debs/*.deb
	# The packages ship no modules.dep; 9p and virtio are modules on 5.10 and 6.1.
	depmod -b "$KERNELS/$release.tmp" "$release"
	rm -rf "$KERNELS/$release"
	mv "$KERNELS/$release.tmp" "$KERNELS/$release"
	echo "fetch-kernels: $release"
done
