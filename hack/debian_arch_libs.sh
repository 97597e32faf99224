#!/usr/bin/env bash
# Unpacks the C libraries of another architecture's image (libc6 and libgcc-s1
# from Debian's packages, as the image's bookworm build stage has them) into a
# cached folder, and prints it: the rootfs test checks the aarch64 file list
# against them on an x86_64 machine. Needs Debian's dpkg and apt-get, and root
# to add the architecture to dpkg (it installs nothing of it).
#
#   bash hack/debian_arch_libs.sh arm64
set -euo pipefail
arch=${1:?usage: debian_arch_libs.sh <debian architecture, e.g. arm64>}
cache=${KINGLET_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kinglet}
root="$cache/debian-libs-$arch"
if [ -e "$root/.complete" ]; then
  echo "$root"
  exit 0
fi
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || {
  echo "Debian's apt-get and dpkg-deb are needed to fetch the $arch libraries" >&2
  exit 1
}
if ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
  dpkg --add-architecture "$arch"
  apt-get update -qq >&2
fi
debs=$(mktemp -d)
trap 'rm -rf "$debs"' EXIT
(cd "$debs" && chmod 0777 . && apt-get download -qq "libc6:$arch" "libgcc-s1:$arch" >&2)
rm -rf "$root"
mkdir -p "$root"
for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$root"; done
touch "$root/.complete"
echo "$root"
