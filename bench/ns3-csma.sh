#!/usr/bin/env bash
# Builds bench/ns3-csma.cc against Debian's libns3-dev (apt-get install libns3-dev g++
# pkg-config) and runs it on the scenario of `wirespeed sim csma --hosts 24 -l 64 -t 10s`, then
# runs that too, one thread each, and prints both rates in frames per wall second.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mods="ns3-core ns3-network ns3-csma ns3-applications"
# pkg-config --libs also names libgsl, which the csma model does not need: link by name.
g++ -O2 -std=c++17 bench/ns3-csma.cc -o "$out/ns3-csma" $(pkg-config --cflags $mods) \
    -lns3-core -lns3-network -lns3-csma -lns3-applications
"$out/ns3-csma" --hosts=24 --payload=46 --seconds=10
cargo build --release -q -p wirespeed
target/release/wirespeed sim csma --hosts 24 -l 64 -t 10s --threads 1 -J | python3 -c '
import json, sys
d = json.load(sys.stdin); r = d["result"]; p = r["points"][0]
frames = p["packets_per_second"]["mean"] * d["parameters"]["measured_seconds"]
wall = r["wall_seconds"]
print(f"wirespeed sim csma: 24 hosts x 64 bytes, 10 s simulated: {frames:.0f} frames in "
      f"{wall:.2f} s wall = {frames / wall:.0f} frames per wall second")'
