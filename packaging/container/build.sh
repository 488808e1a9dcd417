#!/usr/bin/env bash
# Builds the wirespeed OCI image from this checkout with buildah and no registry: FROM scratch,
# the binary (stripped), the C libraries `ldd` names at the paths it names them (the dynamic
# loader included), and an /etc/passwd and /etc/group naming nobody; no shell, no CA bundle (the
# agent and the mesh speak to addresses, never to TLS servers). It runs as 65534:65534 with
# `serve` as its default command, like the Containerfile's image, and is tagged with the
# binary's version: localhost/wirespeed:<version>, for `deploy kubernetes --image`.
#
# Usage: bash packaging/container/build.sh [TAG]    (prints the tag it made)
#        WIRESPEED_BIN=path/to/wirespeed bash packaging/container/build.sh [TAG]
# Push it to a registry of yours with
#   buildah push localhost/wirespeed:<version> docker://registry.example/wirespeed:<version>
# or use it in place: podman run, `podman save | ctr -n k8s.io images import -` on a node.
# Needs buildah (scripts/install-deps.sh installs it), root or a user with subuids.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
command -v buildah >/dev/null || { echo "build.sh: no buildah: apt-get install buildah (or scripts/install-deps.sh)" >&2; exit 2; }

# WIRESPEED_BIN packages a binary built already (the container fleet test passes its own).
if [ -n "${WIRESPEED_BIN:-}" ]; then
    bin=$WIRESPEED_BIN
    [ -x "$bin" ] || { echo "build.sh: WIRESPEED_BIN=$bin is not an executable file" >&2; exit 2; }
else
    cargo build --release --locked -p wirespeed >&2
    bin=$root/target/release/wirespeed
fi
version=$("$bin" --version | awk '{print $2}')
tag=${1:-localhost/wirespeed:$version}

stage=$(mktemp -d)
ctr=
cleanup() {
    [ -n "$ctr" ] && buildah rm "$ctr" >/dev/null 2>&1 || true
    rm -rf "$stage"
}
trap cleanup EXIT

install -D -m 0755 "$bin" "$stage/usr/bin/wirespeed"
strip "$stage/usr/bin/wirespeed"
# Each library at the path the loader will look for it (the loader's own path is absolute in
# the binary); cp -L copies what a symbolic link names under the link's name.
libs=$(ldd "$bin" | awk '/=> \// {print $3} /^[ \t]*\// {print $1}')
# The loader the kernel starts the binary with, named in its program header (ldd lists it too;
# without it the container's exec fails with "no such file or directory").
interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')
[ -n "$libs" ] && [ -n "$interp" ] || { echo "build.sh: ldd names no library for $bin: is it a dynamic executable?" >&2; exit 1; }
grep -qxF "$interp" <<<"$libs" || libs="$libs $interp"
for lib in $libs; do
    mkdir -p "$stage$(dirname "$lib")"
    cp -L "$lib" "$stage$lib"
done
mkdir -p "$stage/etc"
echo 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' > "$stage/etc/passwd"
echo 'nogroup:x:65534:' > "$stage/etc/group"

ctr=$(buildah from scratch)
buildah copy --quiet "$ctr" "$stage" / >/dev/null
buildah config \
    --user 65534:65534 \
    --entrypoint '["/usr/bin/wirespeed"]' \
    --cmd serve \
    --port 5210/tcp --port 9210/tcp \
    --label org.opencontainers.image.title=wirespeed \
    --label org.opencontainers.image.version="$version" \
    --label org.opencontainers.image.source=packaging/container/build.sh \
    "$ctr"
buildah commit --quiet --rm "$ctr" "$tag" >/dev/null
ctr=
echo "$tag"
