#!/usr/bin/env bash
# The agent under hostile load (issue 13): RSS and CPU of `wirespeed serve` with 2,000 idle
# connections (at the default --max-pending 256 and with --max-pending 2048, so that every
# idle connection is held), and with 64 concurrent sessions of short TCP tests. Prints the
# figures as a Markdown table for bench/RESULTS.md ("Agent under hostile load (issue 13)").
#
#   bash bench/agent.sh
#   IDLE=2000 HOLD=5 SESSIONS=64 SECS=2 bash bench/agent.sh
#
# Loopback only (127.0.0.1). The agents are started here on port 0 and stopped by PID; the
# idle clients are one bounded Python process (IDLE connections, HOLD seconds); the sessions
# are SESSIONS client processes of SECS seconds each, waited for with a deadline.
set -euo pipefail
cd "$(dirname "$0")/.."

IDLE=${IDLE:-2000}
HOLD=${HOLD:-5}
SESSIONS=${SESSIONS:-64}
SECS=${SECS:-2}
BIN=target/release/wirespeed
TMP=$(mktemp -d /tmp/ws-bench-agent.XXXXXX)
AGENT=""
cleanup() {
    [[ -n "$AGENT" ]] && kill "$AGENT" 2>/dev/null && wait "$AGENT" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT

cargo build --release -q -p wirespeed
ulimit -n 8192
HZ=$(getconf CLK_TCK)

# start_agent ARGS...: sets AGENT (PID) and PORT.
start_agent() {
    "$BIN" serve -B 127.0.0.1 -p 0 "$@" >"$TMP/out" 2>"$TMP/err" &
    AGENT=$!
    for _ in $(seq 100); do
        PORT=$(sed -n 's/.*listening on 127.0.0.1:\([0-9]*\).*/\1/p' "$TMP/out")
        [[ -n "$PORT" ]] && return
        sleep 0.05
    done
    echo "the agent did not start: $(cat "$TMP/err")" >&2
    exit 1
}
stop_agent() {
    kill "$AGENT" && wait "$AGENT" 2>/dev/null || true
    AGENT=""
}
kib() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$AGENT/status"; }
ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$AGENT/stat"; }
threads() { awk '$1 == "Threads:" { print $2 }' "/proc/$AGENT/status"; }

# idle_run LABEL ARGS...: IDLE connections held HOLD s; RSS, threads and CPU during the hold.
idle_run() {
    local label=$1
    shift
    start_agent "$@"
    local rss0 c0 t0 rss threads_held c1 t1
    rss0=$(kib VmRSS)
    python3 - "$PORT" "$IDLE" "$HOLD" >"$TMP/idle" <<'EOF' &
import socket, sys, time
port, n, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
conns, failed = [], 0
deadline = time.monotonic() + 20
for _ in range(n):
    if time.monotonic() > deadline:
        break
    try:
        conns.append(socket.create_connection(("127.0.0.1", port), timeout=2))
    except OSError:
        failed += 1
print(len(conns), failed, flush=True)
time.sleep(hold)
EOF
    local idle_pid=$!
    sleep 1
    c0=$(ticks)
    t0=$(date +%s.%N)
    sleep $((HOLD - 2))
    rss=$(kib VmRSS)
    threads_held=$(threads)
    c1=$(ticks)
    t1=$(date +%s.%N)
    wait "$idle_pid"
    local opened
    opened=$(cut -d' ' -f1 "$TMP/idle")
    # A legitimate test right after.
    local legit=fail
    timeout 30 "$BIN" tcp 127.0.0.1 -p "$PORT" -n 4MiB >/dev/null 2>&1 && legit=pass
    local hwm
    hwm=$(kib VmHWM)
    printf '| %s | %s connected | %s MiB | %s MiB | %s MiB | %s | %.1f%% | %s |\n' \
        "$label" "$opened" "$((rss0 / 1024))" "$((rss / 1024))" "$((hwm / 1024))" "$threads_held" \
        "$(echo "($c1 - $c0) / $HZ / ($t1 - $t0) * 100" | bc -l)" "$legit"
    stop_agent
}

# session_run: SESSIONS clients at once, each a SECS s TCP test.
session_run() {
    start_agent
    local rss0 c0 t0 c1 t1 hwm ok=0
    rss0=$(kib VmRSS)
    c0=$(ticks)
    t0=$(date +%s.%N)
    local pids=()
    for i in $(seq "$SESSIONS"); do
        timeout $((SECS + 30)) "$BIN" tcp 127.0.0.1 -p "$PORT" -t "$SECS" -J >"$TMP/s$i" 2>&1 &
        pids+=($!)
    done
    local peak=0 now
    while kill -0 "${pids[@]}" 2>/dev/null; do
        now=$(kib VmRSS)
        ((now > peak)) && peak=$now
        sleep 0.2
        # Stop when every client has ended (kill -0 is true while any lives).
        local alive=0
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1 && break; done
        ((alive)) || break
    done
    for p in "${pids[@]}"; do wait "$p" && ok=$((ok + 1)) || true; done
    c1=$(ticks)
    t1=$(date +%s.%N)
    hwm=$(kib VmHWM)
    printf '| %s sessions of `tcp -t %s` at once | %s completed | %s MiB | %s MiB | %s MiB | - | %.1f%% | %s |\n' \
        "$SESSIONS" "$SECS" "$ok" "$((rss0 / 1024))" "$((peak / 1024))" "$((hwm / 1024))" \
        "$(echo "($c1 - $c0) / $HZ / ($t1 - $t0) * 100" | bc -l)" \
        "$([[ $ok -eq $SESSIONS ]] && echo pass || echo "$ok/$SESSIONS")"
    stop_agent
}

echo "| load | connections / sessions | RSS before | RSS during | peak RSS (VmHWM) | threads during | agent CPU (% of one core) | legitimate test |"
echo "|---|---|---|---|---|---|---|---|"
idle_run "$IDLE idle connections, default --max-pending 256"
idle_run "$IDLE idle connections, --max-pending 2048" --max-pending 2048
session_run
echo
echo "Produced by \`bash bench/agent.sh\` (IDLE=$IDLE HOLD=$HOLD SESSIONS=$SESSIONS SECS=$SECS), $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, kernel $(uname -r)."
