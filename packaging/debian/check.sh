#!/usr/bin/env bash
# Builds the package, installs it with dpkg on this machine, checks what it installed (binary,
# pages, completions, key, unit), runs the installed agent exactly as the unit would on loopback
# with a client holding the key, then purges the package and checks that nothing is left.
# Root only. Refuses to run where wirespeed is already installed as a package (not ours to remove).
# Usage: sudo packaging/debian/check.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "check.sh: run as root (it installs and purges the package)" >&2; exit 2; }
if dpkg -s wirespeed >/dev/null 2>&1; then
    echo "check.sh: a wirespeed package is already installed; remove it first (dpkg --purge wirespeed)" >&2
    exit 2
fi
deb=$("$root/packaging/debian/build.sh" | tail -n 1)
agent=
cleanup() {
    [ -n "$agent" ] && kill "$agent" 2>/dev/null || true
    dpkg --purge wirespeed >/dev/null 2>&1 || true
}
trap cleanup EXIT

step() { printf '%-58s' "$1"; }
ok() { echo "ok${1:+ ($1)}"; }
# Every check either prints ok or stops the script: a step that fails must not pass silently.
fail() { echo "FAILED${1:+: $1}"; exit 1; }

echo "package: $(basename "$deb"), $(du -h "$deb" | cut -f1)"
step "control fields (dpkg-deb --info)"
# Captured first: `dpkg-deb | grep -q` under pipefail fails when grep stops reading early.
info=$(dpkg-deb --info "$deb")
grep -q '^ Package: wirespeed' <<<"$info" && grep -q '^ Architecture: ' <<<"$info" && ok || fail "$info"
step "dpkg -i"
dpkg -i "$deb" >/dev/null && ok || fail
step "installed binary runs"
ok "$(/usr/bin/wirespeed --version)"
step "a manual page per command, found by man"
pages=$(ls /usr/share/man/man1/wirespeed*.1.gz | wc -l)
man -w wirespeed-serve >/dev/null && man -w wirespeed-sim-csma >/dev/null && ok "$pages pages" || fail
step "bash completion loads"
bash --norc -c 'source /usr/share/bash-completion/completions/wirespeed && complete -p wirespeed' >/dev/null && ok || fail
step "key created, root only, 64 hex digits"
[ "$(stat -c %a /etc/wirespeed/auth.key)" = 600 ] && grep -Eq '^[0-9a-f]{64}$' /etc/wirespeed/auth.key && ok || fail
step "unit verifies (systemd-analyze verify)"
if command -v systemd-analyze >/dev/null; then
    # verify also loads other packages' units and warns about them: only ours are shown.
    verify=$(systemd-analyze verify /lib/systemd/system/wirespeed.service 2>&1) || fail "$verify"
    ours=$(grep -i wirespeed <<<"$verify" || true)
    ok "${ours:-no warning about wirespeed.service}"
else
    echo "skipped (no systemd-analyze)"
fi
step "unit exposure (systemd-analyze security --offline)"
if systemd-analyze security --offline=true /lib/systemd/system/wirespeed.service >/tmp/wirespeed-security.$$ 2>&1; then
    ok "$(grep -o 'Overall exposure level[^🙂]*' /tmp/wirespeed-security.$$ | sed 's/ *$//')"
else
    echo "not available here"
fi
rm -f /tmp/wirespeed-security.$$
step "unit running under systemd"
if [ -d /run/systemd/system ]; then
    systemctl start wirespeed.service
    sleep 1
    systemctl is-active --quiet wirespeed.service && ok "$(systemctl show -p MainPID --value wirespeed.service)"
    /usr/bin/wirespeed tcp ::1 -t 1 --auth-key-file /etc/wirespeed/auth.key >/dev/null && echo "  a keyed client completed a test against the unit"
    systemctl stop wirespeed.service
else
    echo "skipped (systemd is not running here)"
fi
step "the unit's command line serves a keyed client (loopback)"
port=$(( 20000 + RANDOM % 20000 ))
mkdir -p /run/wirespeed-check && cp /etc/wirespeed/auth.key /run/wirespeed-check/auth-key
CREDENTIALS_DIRECTORY=/run/wirespeed-check
exec_start=$(sed -n 's/^ExecStart=//p' /lib/systemd/system/wirespeed.service)
exec_start=${exec_start//\$\{CREDENTIALS_DIRECTORY\}/$CREDENTIALS_DIRECTORY}
exec_start=${exec_start//\$WIRESPEED_SERVE_ARGS/-B 127.0.0.1 -p $port --one-off}
$exec_start >/dev/null 2>&1 &
agent=$!
for _ in $(seq 100); do ss -ltn | grep -q ":$port " && break; sleep 0.1; done
refusal=$(/usr/bin/wirespeed tcp 127.0.0.1 -p "$port" -t 1 2>&1 >/dev/null) && { echo "FAILED: a client without the key was served"; exit 1; }
rate=$(/usr/bin/wirespeed tcp 127.0.0.1 -p "$port" -t 1 --auth-key-file /etc/wirespeed/auth.key --json \
    | sed -n 's/.*"bits_per_second": \([0-9.e+]*\).*/\1/p' | head -n 1)
[ -n "$rate" ] && ok "received $rate bit/s" || fail "no rate from the keyed client"
echo "  without the key: $refusal"
wait "$agent" 2>/dev/null || true
agent=
rm -rf /run/wirespeed-check
step "dpkg --purge leaves nothing"
dpkg --purge wirespeed >/dev/null
left=$(ls /usr/bin/wirespeed /etc/wirespeed /lib/systemd/system/wirespeed.service /usr/share/man/man1/wirespeed.1.gz 2>/dev/null || true)
[ -z "$left" ] && ok || { echo "left: $left"; exit 1; }
