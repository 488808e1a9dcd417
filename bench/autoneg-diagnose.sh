#!/usr/bin/env bash
# `wirespeed autoneg` against the seed's Appendix A, and `wirespeed diagnose` against ethtool.
#
#   bash bench/autoneg-diagnose.sh
#
# 1. Runs the eight configurations of seed 003 Appendix A and prints what each end runs.
# 2. As root, makes two ws- namespaces joined by a veth pair, sends 200 pings across it, and
#    prints ethtool's and wirespeed's speed, duplex and auto-negotiation side by side, with
#    the frame counts of `ip -s link` and of `wirespeed diagnose`; the namespaces are removed
#    on exit.
# 3. Times `wirespeed diagnose lo` (two readings 1 ms apart) to show what a reading costs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p wirespeed
B=$PWD/target/release/wirespeed

echo "== seed 003 Appendix A: configuration -> result (wirespeed autoneg)"
printf '%-10s %-10s | %-22s %-22s | %s\n' NIC switch "NIC runs" "switch runs" outcome
while read -r nic sw; do
    out=$("$B" autoneg "$nic" "$sw")
    runs=$(grep -E '^     (runs|no link)' <<<"$out" | sed -E 's/^ +(runs )?//; s/ \(.*//')
    a=$(sed -n 1p <<<"$runs"); b=$(sed -n 2p <<<"$runs")
    verdict=$(grep '^verdict:' <<<"$out" | sed -E 's/^verdict: //; s/[:.].*//')
    printf '%-10s %-10s | %-22s %-22s | %s\n' "$nic" "$sw" "$a" "$b" "$verdict"
done <<'ROWS'
auto auto
100-full auto
auto 100-full
100-full 100-full
100-half auto
10-half auto
10-half 100-half
auto 10-half
ROWS

if [ "$(id -u)" = 0 ] && command -v ethtool >/dev/null && command -v ping >/dev/null; then
    A=ws-bench-a-$$; Z=ws-bench-b-$$
    trap 'ip netns del $A 2>/dev/null || true; ip netns del $Z 2>/dev/null || true' EXIT INT TERM
    ip netns add "$A"; ip netns add "$Z"
    ip -n "$A" link add ws-a type veth peer name ws-b netns "$Z"
    ip -n "$A" addr add 198.18.0.1/30 dev ws-a; ip -n "$Z" addr add 198.18.0.2/30 dev ws-b
    ip -n "$A" link set ws-a up; ip -n "$Z" link set ws-b up
    ip netns exec "$Z" ping -q -c 200 -i 0.005 -w 10 198.18.0.1 >/dev/null || true
    echo
    echo "== ws-a (veth in a ws- namespace): ethtool vs wirespeed diagnose"
    ip netns exec "$A" ethtool ws-a | grep -E 'Speed|Duplex|Auto-negotiation'
    ip netns exec "$A" "$B" diagnose ws-a -i 10ms | grep -E 'settings|counters'
    echo "ip -s link (RX then TX packets):"
    ip -n "$A" -s link show ws-a | awk '/RX:/{getline; print "  rx " $2} /TX:/{getline; print "  tx " $2}'
else
    echo "(not root, or no ethtool/ping: the veth comparison is skipped)"
fi

echo
echo "== cost of one diagnose run on lo (two readings 1 ms apart), 20 runs"
start=$(date +%s%N)
for _ in $(seq 20); do "$B" diagnose lo -i 1ms >/dev/null; done
end=$(date +%s%N)
echo "mean $(( (end - start) / 20 / 1000 )) us per run (process start included)"
