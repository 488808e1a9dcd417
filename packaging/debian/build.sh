#!/usr/bin/env bash
# Builds wirespeed_<version>_<arch>.deb: the binary, one manual page per command, completions for
# bash, zsh and fish, and the hardened systemd unit for `wirespeed serve`.
# Usage: packaging/debian/build.sh [OUTPUT_DIR]   (default: target/debian)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/target/debian}
cd "$root"
cargo build --release --locked -p wirespeed
bin=$root/target/release/wirespeed
version=$("$bin" --version | awk '{print $2}')
arch=$(dpkg --print-architecture)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg=$stage/wirespeed_${version}_${arch}

install -D -m 0755 "$bin" "$pkg/usr/bin/wirespeed"
strip --strip-debug "$pkg/usr/bin/wirespeed"
mkdir -p "$pkg/usr/share/man/man1"
"$bin" man --dir "$pkg/usr/share/man/man1"
gzip -9n "$pkg"/usr/share/man/man1/*.1
install -d "$pkg/usr/share/bash-completion/completions" \
    "$pkg/usr/share/zsh/vendor-completions" "$pkg/usr/share/fish/vendor_completions.d"
"$bin" completions bash > "$pkg/usr/share/bash-completion/completions/wirespeed"
"$bin" completions zsh > "$pkg/usr/share/zsh/vendor-completions/_wirespeed"
"$bin" completions fish > "$pkg/usr/share/fish/vendor_completions.d/wirespeed.fish"
install -D -m 0644 packaging/wirespeed.service "$pkg/lib/systemd/system/wirespeed.service"
install -D -m 0644 packaging/debian/default "$pkg/etc/default/wirespeed"
install -D -m 0644 packaging/debian/raw-load.conf "$pkg/usr/share/doc/wirespeed/examples/raw-load.conf"
install -D -m 0644 README.md "$pkg/usr/share/doc/wirespeed/README.md"

install -d "$pkg/DEBIAN"
install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm "$pkg/DEBIAN/"
echo /etc/default/wirespeed > "$pkg/DEBIAN/conffiles"
size=$(du -sk "$pkg" | awk '{print $1}')
cat > "$pkg/DEBIAN/control" <<CONTROL
Package: wirespeed
Version: $version
Architecture: $arch
Maintainer: wirespeed developers <wirespeed@localhost>
Installed-Size: $size
Depends: libc6
Recommends: iproute2
Section: net
Priority: optional
Description: network performance laboratory in one binary
 Measures what a path delivers (TCP/UDP throughput, best-case delay per hop,
 many hosts at once), computes what it should deliver (the envelope ceiling,
 a per-component delay model), explains the difference, and builds emulated
 networks with exact link rates, delays and duplex in namespaces.
CONTROL
mkdir -p "$out"
dpkg-deb --build --root-owner-group "$pkg" "$out/" >/dev/null
echo "$out/wirespeed_${version}_${arch}.deb"
