# Sourced by the benches that drive labs/boggs-24.toml with an agent in every station:
# `boggs24_up DIR` brings the lab up and starts `wirespeed serve` in each station's namespace
# (output in DIR/agentN), setting `lab`, `emu` (the emulator's PID), `pids` and `agents`
# (`--agent ADDR` pairs for `load --raw`); `boggs24_down` stops those agents by PID and takes
# only that lab down. `ticks` is the emulator's CPU time (clock ticks), `dropped` the frames the
# stations' TAPs refused (tx_dropped: the generators' ENOBUFS). Needs `bin` set and root.
boggs24_up() {
    local dir=$1 i
    lab=$("$bin" lab up labs/boggs-24.toml)
    emu=$("$bin" lab status "$lab" | head -1 | grep -o "emulator pid [0-9]*" | grep -o "[0-9]*$")
    pids=()
    for i in $(seq 24); do
        ip netns exec "ws-$lab-s$i" "$bin" serve -p 0 -B "198.18.0.$i" >"$dir/agent$i" 2>&1 &
        pids+=($!)
    done
    sleep 1
    agents=()
    for i in $(seq 24); do
        agents+=(--agent "$(grep -o "198.18.0.$i:[0-9]*" "$dir/agent$i" | head -1)")
    done
}
boggs24_down() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [[ -n "${lab:-}" ]] && "$bin" lab down "$lab" >/dev/null || true
}
ticks() { awk '{print $14+$15}' "/proc/$emu/stat"; }
dropped() { for i in $(seq 24); do ip netns exec "ws-$lab-s$i" cat /sys/class/net/eth0/statistics/tx_dropped; done | paste -sd+ | bc; }
