#!/usr/bin/env bash
# Per-hop probing side by side: `wirespeed probe --hops` and pchar (Debian package) over the same
# chain of network namespaces, ws-ba - ws-br1 - ws-br2 - ws-bb (198.18.1.0/24 .. 198.18.3.0/24),
# with the same sizes, repetitions and gap. Prints each tool's wall time and per-hop estimates.
# Root only; everything it creates is removed on exit.
#
#   bash bench/probe-chain.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-32}
command -v pchar >/dev/null || { echo "pchar not found: apt-get install pchar" >&2; exit 2; }
cargo build --release -q -p wirespeed
bin=$PWD/target/release/wirespeed
ns=(ws-ba-$$ ws-br1-$$ ws-br2-$$ ws-bb-$$)
cleanup() { for n in "${ns[@]}"; do ip netns del "$n" 2>/dev/null || true; done; }
trap cleanup EXIT INT TERM
for n in "${ns[@]}"; do ip netns add "$n"; ip -n "$n" link set lo up; done
for i in 0 1 2; do
    l=${ns[$i]} r=${ns[$((i + 1))]} net=$((i + 1))
    ip -n "$l" link add wsl$i type veth peer name wsr$i netns "$r"
    ip -n "$l" addr add 198.18.$net.1/24 dev wsl$i
    ip -n "$r" addr add 198.18.$net.2/24 dev wsr$i
    ip -n "$l" link set wsl$i up
    ip -n "$r" link set wsr$i up
done
ip -n "${ns[0]}" route add 198.18.0.0/16 via 198.18.1.2
ip -n "${ns[1]}" route add 198.18.3.0/24 via 198.18.2.2
ip -n "${ns[2]}" route add 198.18.1.0/24 via 198.18.2.1
ip -n "${ns[3]}" route add 198.18.0.0/16 via 198.18.3.1
for r in "${ns[1]}" "${ns[2]}"; do
    ip netns exec "$r" sysctl -q -w net.ipv4.ip_forward=1 net.ipv4.icmp_ratemask=0
done

echo "### wirespeed probe 198.18.3.2 --hops -c $reps --sizes 28..1500:64 --gap 1ms"
t0=$(date +%s.%N)
ip netns exec "${ns[0]}" "$bin" probe 198.18.3.2 --hops --max-ttl 5 -c "$reps" --sizes 28..1500:64 --gap 1ms \
    | grep -E '^hop|one-way best case|own cost|95% bootstrap'
t1=$(date +%s.%N)
echo "wall time: $(python3 -c "print(round($t1 - $t0, 2))") s"
echo
echo "### pchar -n -p ipv4icmp -R $reps -I 64 -m 1500 -g 0.001 -H 5 -t 1 198.18.3.2"
t0=$(date +%s.%N)
ip netns exec "${ns[0]}" pchar -n -p ipv4icmp -R "$reps" -I 64 -m 1500 -g 0.001 -H 5 -t 1 198.18.3.2 2>&1 \
    | grep -E '^ *[0-9]+:|Partial char|Hop char' || true
t1=$(date +%s.%N)
echo "wall time: $(python3 -c "print(round($t1 - $t0, 2))") s"
