#!/usr/bin/env bash
# Installs what wirespeed's tests and benchmarks need beyond Cargo's own dependencies:
# the Rust components for formatting and lints, and the Debian packages used as comparison
# peers and lab plumbing. Safe to run again; skips what is already there.
set -euo pipefail

if command -v rustup >/dev/null 2>&1; then
    rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt
    rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy
fi

# Debian packages: iproute2 (namespaces, veth, tc), iperf3 (comparison peer),
# iputils-ping (comparison peer), ethtool (comparison for diagnose), pchar (per-hop peer of
# `wirespeed probe --hops`, bench/probe-chain.sh), prometheus (its `promtool` checks the
# `--metrics-file` output), sockperf (request/response peer of `wirespeed latency --rr`,
# bench/latency-rr.sh), irtt (the UDP round-trip peer of `wirespeed latency`,
# bench/latency-lab.sh); python3-seccomp, strace and systemd (systemd-analyze) for the test of
# the unit's seccomp filter (tests/unit_filter.rs); podman, buildah and runc for the image
# (packaging/container/build.sh) and the container fleet test (runc: crun refuses hybrid
# cgroups); etcd-server and openssl for the API-server check
# (packaging/kubernetes/apiserver-check.sh, which builds kube-apiserver with Go); containerd,
# containernetworking-plugins (bridge, host-local, loopback) and gcc for the
# one-node cluster (packaging/kubernetes/node-check.sh: its container runtime, the pods'
# network and the pause program); chromium (headless: the report's browser check,
# tests/report_browser.rs, and scripts/report-screenshots.sh) with fonts-dejavu-core, so that
# its text is measured in a real font; pngquant keeps those screenshots small.
wanted=(iproute2 iperf3 iputils-ping ethtool pchar prometheus sockperf irtt
    python3-seccomp strace systemd podman buildah runc etcd-server openssl
    containerd containernetworking-plugins gcc chromium fonts-dejavu-core pngquant)
missing=()
for pkg in "${wanted[@]}"; do
    dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
done
if ((${#missing[@]})) && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
