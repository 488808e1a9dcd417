#!/usr/bin/env bash
# Applies `wirespeed deploy kubernetes`'s output to a real Kubernetes API server, with
# `kubectl apply --dry-run=server --validate=strict`, for every `deploy kubernetes` command line
# docs/deploy.md shows: the server decodes each object with its own types, runs defaulting,
# validation and admission, and says "created (server dry run)" or why not.
#
# The server: kube-apiserver built here from the Go module proxy (k8s.io/kubernetes at a pinned
# version, each k8s.io staging module replaced by its tagged release, the version set by the
# same ldflags as Kubernetes' own build), cached as target/kube/<version>/kube-apiserver; run on
# loopback against Debian's etcd-server, with a throwaway service-account key, a static token
# for one admin and RBAC; everything removed at exit.
#
# Usage: bash packaging/kubernetes/apiserver-check.sh           build if needed, then check
#        bash packaging/kubernetes/apiserver-check.sh --build   only build (minutes: Go)
#        bash packaging/kubernetes/apiserver-check.sh --no-build   check; exit 3 if not built
# WIRESPEED_BIN names the wirespeed binary (default target/release/wirespeed).
# Needs go (1.24 or newer), etcd (apt-get install etcd-server), kubectl and openssl.
set -euo pipefail
K8S_VERSION=v1.34.2
STAGING_VERSION=v0.34.2
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=$root/target/kube/$K8S_VERSION
apiserver=$cache/kube-apiserver
wirespeed=${WIRESPEED_BIN:-$root/target/release/wirespeed}
mode=${1:-check}
case "$mode" in check|--build|--no-build) ;; *) echo "apiserver-check.sh: unknown argument $mode (use --build or --no-build)" >&2; exit 2;; esac

build() {
    command -v go >/dev/null || { echo "apiserver-check.sh: no go toolchain (1.24 or newer): https://go.dev/dl" >&2; exit 2; }
    local src=$cache/src
    mkdir -p "$src"
    # k8s.io/kubernetes requires its staging modules at v0.0.0 and replaces them by directories
    # of its own repository; a module that requires it must replace each by its release.
    local staging="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go
        cloud-provider cluster-bootstrap code-generator component-base component-helpers
        controller-manager cri-api cri-client csi-translation-lib dynamic-resource-allocation
        endpointslice externaljwt kms kube-aggregator kube-controller-manager kube-proxy
        kube-scheduler kubectl kubelet metrics mount-utils pod-security-admission
        sample-apiserver sample-cli-plugin sample-controller"
    {
        echo "module wirespeed.local/kube-apiserver"
        echo
        echo "go 1.24.0"
        echo
        echo "require k8s.io/kubernetes $K8S_VERSION"
        echo
        for m in $staging; do echo "replace k8s.io/$m => k8s.io/$m $STAGING_VERSION"; done
    } > "$src/go.mod"
    local v=k8s.io/component-base/version
    local c=k8s.io/client-go/pkg/version
    local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
    local flags=""
    for p in $v $c; do
        flags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
        flags+=" -X $p.gitTreeState=clean -X $p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    done
    echo "building kube-apiserver $K8S_VERSION from the Go module proxy (minutes)" >&2
    local started=$SECONDS
    (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 15 go build -trimpath \
        -ldflags "-s -w$flags" -o "$apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
    mv "$apiserver.tmp" "$apiserver"
    echo "built $apiserver in $((SECONDS - started)) s" >&2
}

if [ ! -x "$apiserver" ]; then
    [ "$mode" = --no-build ] && { echo "apiserver-check.sh: $apiserver not built (run with --build)" >&2; exit 3; }
    build
fi
[ "$mode" = --build ] && exit 0

for tool in etcd kubectl openssl; do
    command -v "$tool" >/dev/null || { echo "apiserver-check.sh: no $tool (apt-get install etcd-server kubectl openssl)" >&2; exit 2; }
done
[ -x "$wirespeed" ] || { echo "apiserver-check.sh: no wirespeed binary at $wirespeed (cargo build --release, or set WIRESPEED_BIN)" >&2; exit 2; }

work=$(mktemp -d)
etcd_pid= apiserver_pid=
cleanup() {
    # The script's own status, not that of the servers it stops (143, SIGTERM).
    local status=$?
    [ -n "$apiserver_pid" ] && kill "$apiserver_pid" 2>/dev/null && { wait "$apiserver_pid" 2>/dev/null || true; }
    [ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null && { wait "$etcd_pid" 2>/dev/null || true; }
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT

# Free loopback ports: bind port 0 and read what the kernel gave (others run servers here too).
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { # URL SECONDS [CURL ARGS]
    local url=$1 n=$2; shift 2
    for _ in $(seq $((n * 5))); do curl -fsk --max-time 2 "$@" "$url" >/dev/null 2>&1 && return 0; sleep 0.2; done
    return 1
}

client=$(free_port) peer=$(free_port) secure=$(free_port)
etcd --name ws-check --data-dir "$work/etcd" \
    --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "ws-check=http://127.0.0.1:$peer" >"$work/etcd.log" 2>&1 &
etcd_pid=$!
wait_for "http://127.0.0.1:$client/health" 30 || { tail -n 20 "$work/etcd.log" >&2; echo "apiserver-check.sh: etcd did not start" >&2; exit 1; }

openssl genrsa -out "$work/sa.key" 2048 2>/dev/null
openssl rsa -in "$work/sa.key" -pubout -out "$work/sa.pub" 2>/dev/null
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token,ws-admin,ws-admin-uid,system:masters" > "$work/tokens.csv"
# The service range is required; it stays inside the project's 198.19.0.0/16 and nothing
# listens on it (no proxy runs).
"$apiserver" --etcd-servers "http://127.0.0.1:$client" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$secure" \
    --cert-dir "$work/certs" --token-auth-file "$work/tokens.csv" --authorization-mode RBAC \
    --service-account-key-file "$work/sa.pub" --service-account-signing-key-file "$work/sa.key" \
    --service-account-issuer https://kubernetes.default.svc \
    --service-cluster-ip-range 198.19.240.0/24 >"$work/apiserver.log" 2>&1 &
apiserver_pid=$!
wait_for "https://127.0.0.1:$secure/readyz" 120 -H "Authorization: Bearer $token" \
    || { tail -n 30 "$work/apiserver.log" >&2; echo "apiserver-check.sh: kube-apiserver did not become ready in 120 s" >&2; exit 1; }

export KUBECONFIG=$work/kubeconfig
kubectl config set-cluster ws --server "https://127.0.0.1:$secure" --insecure-skip-tls-verify=true >/dev/null
kubectl config set-credentials ws-admin --token "$token" >/dev/null
kubectl config set-context ws --cluster ws --user ws-admin >/dev/null
kubectl config use-context ws >/dev/null
echo "server: kube-apiserver $(kubectl version -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | tail -n 1), etcd $(etcd --version | sed -n 's/^etcd Version: //p'), kubectl $(kubectl version --client -o json | sed -n 's/.*"gitVersion": "\(v[^"]*\)".*/\1/p' | head -n 1)"

# Every `deploy kubernetes` command line in docs/deploy.md (continuation lines joined, the
# pipe and what follows it dropped), and one with every flag the command has.
mapfile -t lines < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$root/docs/deploy.md" \
    | grep -E '^(\$ )?wirespeed deploy kubernetes' \
    | sed -E 's/^(\$ )?wirespeed deploy kubernetes//; s/\|.*//; s/ +/ /g; s/^ //; s/ *$//' | sort -u)
[ "${#lines[@]}" -gt 0 ] || { echo "apiserver-check.sh: no deploy kubernetes command in docs/deploy.md" >&2; exit 1; }
lines+=("--namespace ws-other --image registry.example/wirespeed:0.1.0 --secret other-key -p 5299 --metrics-port 9299 --max-memory 256MiB -t 2s --probes 5 --nodes 200 --allow-destination 198.19.0.0/16 --allow-destination 2001:2::/48")
lines+=("--allow-destination 198.19.211.0/24 --agents 198.19.211.1,198.19.211.2:5211 --max-memory 64MiB -t 1s --probes 5")
failed=0
for flags in "${lines[@]}"; do
    # shellcheck disable=SC2086 # the flags are words, as the docs show them
    manifests=$("$wirespeed" deploy kubernetes $flags) \
        || { echo "REFUSED: deploy kubernetes $flags (by wirespeed itself)"; failed=1; continue; }
    namespace=$(sed -n 's/^  namespace: "\(.*\)"$/\1/p' <<<"$manifests" | head -n 1)
    kubectl get namespace "$namespace" >/dev/null 2>&1 || kubectl create namespace "$namespace" >/dev/null
    if out=$(kubectl apply --dry-run=server --validate=strict -f - <<<"$manifests" 2>&1) \
        && [ "$(grep -c '(server dry run)' <<<"$out")" = 3 ]; then
        echo "accepted: deploy kubernetes $flags"
        sed 's/^/  /' <<<"$out"
    else
        echo "REFUSED: deploy kubernetes $flags"
        sed 's/^/  /' <<<"$out"
        failed=1
    fi
done
exit $failed
