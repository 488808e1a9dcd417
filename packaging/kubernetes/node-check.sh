#!/usr/bin/env bash
# A one-node Kubernetes cluster on this machine, and `wirespeed deploy kubernetes`'s objects
# run on it for real: the DaemonSet's agent pod Ready (the kubelet's readiness probe on
# /healthz) and the mesh Job Complete, its result in the Job's log (issue 36).
#
# The cluster: kube-apiserver, kube-controller-manager, kube-scheduler and the kubelet, all
# built from the Go module proxy at one pinned version (as apiserver-check.sh builds the API
# server; cached under target/kube/<version>/), Debian's etcd, containerd and runc, the CNI
# bridge and host-local plugins for the pods' network (198.19.210.0/24), a pause image built
# here from pause.c, and the wirespeed image of packaging/container/build.sh imported into
# containerd (no registry is reachable). The node's address, 198.19.211.1, is on one end of a
# veth pair of its own (the kubelet refuses loopback as a node IP, and this kernel has no dummy
# device); the DaemonSet's agent, on the node's network, listens on it. A one-node cluster holds one agent, and a mesh needs two:
# the second is a `wirespeed serve` on the same machine at 198.19.211.2:5211, outside the
# cluster, as a fleet's host without Kubernetes would be. There is no cluster DNS (CoreDNS is
# not built), so the Job is given the agents' addresses (`deploy kubernetes --agents`).
#
# Everything runs under a temporary directory and is stopped and removed at exit, whatever
# happens: processes by PID, containers and sandboxes through containerd, mounts under the
# directory, the interfaces, the cgroups under /ws-node-PID. Only 198.18.0.0/15 addresses and
# loopback are used. One run at a time (a lock): the addresses are fixed.
#
# Usage: bash packaging/kubernetes/node-check.sh            build if needed, then run
#        bash packaging/kubernetes/node-check.sh --build    only build (minutes: Go)
#        bash packaging/kubernetes/node-check.sh --no-build run; exit 3 if not built
# Exit 3: a piece this machine lacks (named on stderr); the test then says it is skipped.
# WIRESPEED_BIN names the wirespeed binary (default target/release/wirespeed);
# WIRESPEED_NODE_MESH=FILE keeps the Job's log (the mesh's JSON document).
# Needs root, go, etcd, kubectl, openssl, containerd, runc, the CNI plugins, gcc and buildah.
set -euo pipefail
K8S_VERSION=v1.34.2
root=$(cd "$(dirname "$0")/../.." && pwd)
cache=$root/target/kube/$K8S_VERSION
bin=$cache/bin
wirespeed=${WIRESPEED_BIN:-$root/target/release/wirespeed}
mode=${1:-check}
case "$mode" in check|--build|--no-build) ;; *) echo "node-check.sh: unknown argument $mode (use --build or --no-build)" >&2; exit 2;; esac
skip() { echo "node-check.sh: skipped: $*" >&2; exit 3; }

components="kubelet kube-controller-manager kube-scheduler"
build() {
    command -v go >/dev/null || skip "no go toolchain (1.24 or newer) to build Kubernetes"
    # The API server and the module it is built from (go.mod pinning every staging module).
    bash "$root/packaging/kubernetes/apiserver-check.sh" --build
    local v=k8s.io/component-base/version c=k8s.io/client-go/pkg/version
    local minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
    local flags=""
    for p in $v $c; do
        flags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
        flags+=" -X $p.gitTreeState=clean -X $p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
    done
    mkdir -p "$bin.tmp"
    echo "building $components $K8S_VERSION from the Go module proxy (minutes)" >&2
    local started=$SECONDS pkgs=()
    for c in $components; do pkgs+=("k8s.io/kubernetes/cmd/$c"); done
    (cd "$cache/src" && CGO_ENABLED=0 GOFLAGS=-mod=mod nice -n 10 go build -trimpath \
        -ldflags "-s -w$flags" -o "$bin.tmp/" "${pkgs[@]}")
    mkdir -p "$bin"
    for c in $components; do mv "$bin.tmp/$c" "$bin/$c"; done
    rmdir "$bin.tmp"
    echo "built $components in $((SECONDS - started)) s" >&2
}

built() { [ -x "$cache/kube-apiserver" ] && for c in $components; do [ -x "$bin/$c" ] || return 1; done; }
if ! built; then
    [ "$mode" = --no-build ] && skip "Kubernetes is not built under $cache (run with --build)"
    build
fi
[ "$mode" = --build ] && exit 0

[ "$(id -u)" = 0 ] || skip "needs root (the kubelet, containerd, interfaces)"
for tool in etcd kubectl openssl containerd containerd-shim-runc-v2 ctr runc gcc buildah ip findmnt flock; do
    command -v "$tool" >/dev/null || skip "no $tool (bash scripts/install-deps.sh)"
done
for p in bridge host-local loopback; do
    [ -x "/usr/lib/cni/$p" ] || skip "no CNI plugin /usr/lib/cni/$p (apt-get install containernetworking-plugins)"
done
[ -x "$wirespeed" ] || skip "no wirespeed binary at $wirespeed (cargo build --release, or set WIRESPEED_BIN)"
[ -d /sys/fs/cgroup/memory ] || skip "the kubelet's cgroupfs driver needs cgroup v1's memory hierarchy here"

# One run at a time: the node's and the pods' addresses are fixed.
exec 9>/run/lock/ws-node-check.lock
flock -w 900 9 || { echo "node-check.sh: another run held the lock for 15 min" >&2; exit 1; }

node_ip=198.19.211.1 host_agent_ip=198.19.211.2 host_agent_port=5211 pod_cidr=198.19.210.0/24
node=ws-node link=ws-node0 bridge=ws-cni0 cgroup=ws-node-$$
version=$("$wirespeed" --version | awk '{print $2}')
image=localhost/wirespeed:$version

work=$(mktemp -d /tmp/ws-node.XXXXXX)
sock=$work/containerd.sock
pids=()     # every process started, stopped in reverse order
built_images=()
started() { pids+=("$1"); }
ctr_() { ctr --address "$sock" -n k8s.io "$@"; }
cleanup() {
    local status=$?
    set +e
    # The pods first, through the cluster, while the kubelet still runs.
    if [ -n "${KUBECONFIG:-}" ] && [ -f "$KUBECONFIG" ]; then
        kubectl delete namespace wirespeed --wait --timeout=60s >/dev/null 2>&1
    fi
    # Then the control plane and the kubelet, newest first; containerd's containers after.
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        local pid=${pids[i]}
        if [ "$pid" = containerd ]; then
            if [ -S "$sock" ]; then
                for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks kill -s SIGKILL "$t" >/dev/null 2>&1; done
                sleep 1
                for t in $(ctr_ tasks ls -q 2>/dev/null); do ctr_ tasks delete -f "$t" >/dev/null 2>&1; done
                for c in $(ctr_ containers ls -q 2>/dev/null); do ctr_ containers rm "$c" >/dev/null 2>&1; done
            fi
            continue
        fi
        kill "$pid" 2>/dev/null && { timeout 20 tail --pid="$pid" -f /dev/null 2>/dev/null || kill -9 "$pid" 2>/dev/null; }
    done
    # The shims of this containerd (its socket's path is in their arguments) outlive it.
    for pid in $(pgrep -f -- "-address $sock" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
    # Mounts under the work directory (secrets' tmpfs, rootfs overlays, network namespaces).
    findmnt -rn -o TARGET | grep "^$work/" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
    ip link del "$bridge" 2>/dev/null
    ip link del "$link" 2>/dev/null
    for h in /sys/fs/cgroup/*/; do
        [ -d "$h$cgroup" ] && find "$h$cgroup" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
    for i in "${built_images[@]}"; do buildah rmi "$i" >/dev/null 2>&1; done
    rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_for() { # URL SECONDS [CURL ARGS]
    local url=$1 n=$2; shift 2
    for _ in $(seq $((n * 5))); do curl -fsk --max-time 2 "$@" "$url" >/dev/null 2>&1 && return 0; sleep 0.2; done
    return 1
}
fail() { # MESSAGE LOG...
    local msg=$1; shift
    for log in "$@"; do echo "--- $(basename "$log") (last lines)" >&2; tail -n 25 "$log" >&2; done
    echo "node-check.sh: $msg" >&2
    exit 1
}
step() { echo "node-check.sh: $*" >&2; }

# The node's address, and the second agent's, on an interface of their own.
# (A veth pair, both ends here: this kernel has no dummy device.)
ip link add "$link" type veth peer name "${link}p"
ip addr add "$node_ip/24" dev "$link"
ip addr add "$host_agent_ip/24" dev "$link"
ip link set "${link}p" up
ip link set "$link" up

# The images: the pause program and wirespeed, each as an archive naming the reference the
# cluster asks for, built under names of this run's own and removed at exit.
step "building the pause and wirespeed images"
gcc -static -O2 -o "$work/pause" "$root/packaging/kubernetes/pause.c"
mkdir -p "$work/pause-root" && cp "$work/pause" "$work/pause-root/pause"
c=$(buildah from scratch)
buildah copy --quiet "$c" "$work/pause-root" / >/dev/null
buildah config --entrypoint '["/pause"]' --user 65535:65535 "$c"
buildah commit --quiet --rm "$c" "localhost/ws-node-pause-$$" >/dev/null
built_images+=("localhost/ws-node-pause-$$")
buildah push --quiet "localhost/ws-node-pause-$$" "docker-archive:$work/pause.tar:registry.k8s.io/pause:3.10"
WIRESPEED_BIN=$wirespeed bash "$root/packaging/container/build.sh" "localhost/ws-node-wirespeed-$$:$version" >/dev/null
built_images+=("localhost/ws-node-wirespeed-$$:$version")
buildah push --quiet "localhost/ws-node-wirespeed-$$:$version" "docker-archive:$work/wirespeed.tar:$image"

# containerd: every path under the work directory; runc's state too; the sandbox image the
# local pause; no lower oom_score_adj than its own (this machine refuses it, and runc's init
# then dies with "can't get final child's PID from pipe").
mkdir -p "$work/cni/conf" "$work/cni/state"
cat > "$work/containerd.toml" <<EOF
version = 2
root = "$work/containerd/root"
state = "$work/containerd/state"
[grpc]
  address = "$sock"
[ttrpc]
  address = "$work/containerd-ttrpc.sock"
[plugins."io.containerd.internal.v1.opt"]
  path = "$work/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  restrict_oom_score_adj = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$work/cni/conf"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "$(command -v runc)"
        Root = "$work/runc"
        SystemdCgroup = false
EOF
cat > "$work/cni/conf/10-wirespeed.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "ws-node", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "dataDir": "$work/cni/state",
            "ranges": [[{"subnet": "$pod_cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}},
  {"type": "loopback"}]}
EOF
containerd --config "$work/containerd.toml" >"$work/containerd.log" 2>&1 &
started $!
started containerd   # the marker: its containers are removed before the daemon stops
for _ in $(seq 100); do ctr --address "$sock" version >/dev/null 2>&1 && break; sleep 0.2; done
ctr --address "$sock" version >/dev/null 2>&1 || fail "containerd did not start" "$work/containerd.log"
ctr_ images import "$work/pause.tar" >/dev/null
ctr_ images import "$work/wirespeed.tar" >/dev/null

# etcd and the API server on loopback, as apiserver-check.sh runs them.
step "starting etcd and kube-apiserver"
client=$(free_port) peer=$(free_port) secure=$(free_port)
etcd --name ws-node --data-dir "$work/etcd" \
    --listen-client-urls "http://127.0.0.1:$client" --advertise-client-urls "http://127.0.0.1:$client" \
    --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
    --initial-cluster "ws-node=http://127.0.0.1:$peer" >"$work/etcd.log" 2>&1 &
started $!
wait_for "http://127.0.0.1:$client/health" 30 || fail "etcd did not start" "$work/etcd.log"
openssl genrsa -out "$work/sa.key" 2048 2>/dev/null
openssl rsa -in "$work/sa.key" -pubout -out "$work/sa.pub" 2>/dev/null
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$token,ws-admin,ws-admin-uid,system:masters" > "$work/tokens.csv"
"$cache/kube-apiserver" --etcd-servers "http://127.0.0.1:$client" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$secure" \
    --cert-dir "$work/certs" --token-auth-file "$work/tokens.csv" --authorization-mode RBAC \
    --service-account-key-file "$work/sa.pub" --service-account-signing-key-file "$work/sa.key" \
    --service-account-issuer https://kubernetes.default.svc \
    --service-cluster-ip-range 198.19.240.0/24 \
    --kubelet-preferred-address-types InternalIP >"$work/apiserver.log" 2>&1 &
started $!
wait_for "https://127.0.0.1:$secure/readyz" 180 -H "Authorization: Bearer $token" \
    || fail "kube-apiserver did not become ready in 180 s" "$work/apiserver.log"
export KUBECONFIG=$work/kubeconfig
kubectl config set-cluster ws --server "https://127.0.0.1:$secure" --insecure-skip-tls-verify=true >/dev/null
kubectl config set-credentials ws-admin --token "$token" >/dev/null
kubectl config set-context ws --cluster ws --user ws-admin >/dev/null
kubectl config use-context ws >/dev/null
server_version=$(kubectl version -o json | python3 -c 'import json,sys; print(json.load(sys.stdin)["serverVersion"]["gitVersion"])')

step "starting kube-controller-manager, kube-scheduler and the kubelet"
"$bin/kube-controller-manager" --kubeconfig "$KUBECONFIG" --bind-address 127.0.0.1 \
    --secure-port "$(free_port)" --leader-elect=false \
    --service-account-private-key-file "$work/sa.key" >"$work/controller-manager.log" 2>&1 &
started $!
"$bin/kube-scheduler" --kubeconfig "$KUBECONFIG" --bind-address 127.0.0.1 \
    --secure-port "$(free_port)" --leader-elect=false >"$work/scheduler.log" 2>&1 &
started $!

# The kubelet's cgroups under a root of this run's own, in each cgroup v1 hierarchy.
for h in /sys/fs/cgroup/*/; do
    [ "$h" = /sys/fs/cgroup/unified/ ] || mkdir -p "$h$cgroup"
done
cat > "$work/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: "$node_ip"
port: $(free_port)
readOnlyPort: 0
healthzBindAddress: "127.0.0.1"
healthzPort: $(free_port)
authentication:
  anonymous:
    enabled: true
  webhook:
    enabled: false
authorization:
  mode: AlwaysAllow
cgroupDriver: cgroupfs
cgroupRoot: "/$cgroup"
containerRuntimeEndpoint: "unix://$sock"
failSwapOn: false
makeIPTablesUtilChains: false
podLogsDir: "$work/pod-logs"
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%"
  imagefs.available: "1%"
  nodefs.inodesFree: "1%"
EOF
"$bin/kubelet" --config "$work/kubelet.yaml" --kubeconfig "$KUBECONFIG" \
    --root-dir "$work/kubelet" --cert-dir "$work/kubelet-pki" \
    --hostname-override "$node" --node-ip "$node_ip" >"$work/kubelet.log" 2>&1 &
started $!
for _ in $(seq 120); do kubectl get node "$node" >/dev/null 2>&1 && break; sleep 1; done
kubectl wait --for=condition=Ready "node/$node" --timeout=180s >/dev/null \
    || fail "the node did not become Ready" "$work/kubelet.log" "$work/containerd.log"
step "node $node Ready (server $server_version)"

# The second agent, outside the cluster, and the fleet's key.
head -c 32 /dev/urandom | base64 > "$work/fleet.key"
chmod 0400 "$work/fleet.key"
"$wirespeed" serve -B "$host_agent_ip" -p "$host_agent_port" --auth-key-file "$work/fleet.key" \
    --max-memory 64MiB --allow-destination 198.19.211.0/24 >"$work/host-agent.log" 2>&1 &
started $!

kubectl create namespace wirespeed >/dev/null
kubectl -n wirespeed create secret generic wirespeed-key --from-file=auth.key="$work/fleet.key" >/dev/null
for _ in $(seq 60); do kubectl -n wirespeed get serviceaccount default >/dev/null 2>&1 && break; sleep 1; done
"$wirespeed" deploy kubernetes --allow-destination 198.19.211.0/24 \
    --agents "$node_ip,$host_agent_ip:$host_agent_port" --max-memory 64MiB -t 1s --probes 5 \
    > "$work/objects.yaml"
kubectl apply -f "$work/objects.yaml" >&2

step "waiting for the agent pod's readiness probe"
for _ in $(seq 60); do
    [ -n "$(kubectl -n wirespeed get pods -l app.kubernetes.io/component=agent -o name 2>/dev/null)" ] && break
    sleep 1
done
if ! kubectl -n wirespeed wait --for=condition=Ready pod -l app.kubernetes.io/component=agent --timeout=180s >&2; then
    kubectl -n wirespeed describe pods >&2
    fail "the agent pod did not become Ready" "$work/kubelet.log" "$work/containerd.log"
fi
step "agent pod Ready; waiting for the mesh Job"
if ! kubectl -n wirespeed wait --for=condition=complete job/wirespeed-mesh --timeout=300s >&2; then
    kubectl -n wirespeed describe job/wirespeed-mesh >&2
    kubectl -n wirespeed logs job/wirespeed-mesh >&2
    fail "the mesh Job did not complete" "$work/kubelet.log"
fi
kubectl -n wirespeed logs job/wirespeed-mesh > "$work/mesh.json"
[ -n "${WIRESPEED_NODE_MESH:-}" ] && cp "$work/mesh.json" "$WIRESPEED_NODE_MESH"
python3 - "$work/mesh.json" "$server_version" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["result"]
tests = r["tests"]
rates = [t["result"]["tcp_bits_per_second"] for t in tests if t.get("result") and t["result"].get("tcp_bits_per_second")]
assert doc["schema"] == "wirespeed.mesh.v1", doc["schema"]
assert len(tests) == 2 and len(rates) == 2, tests
names = [a["address"] for a in r["agents"]]
print(f"node-check: server {sys.argv[2]}, node Ready, agent pod Ready, mesh Job Complete: "
      f"{len(rates)} of {r['tests_planned']} tests between {', '.join(names)}, "
      f"{rates[0] / 1e9:.2f} and {rates[1] / 1e9:.2f} Gbit/s, {r['elapsed_seconds']:.1f} s "
      f"(planned {r['planned_seconds']:.1f} s)")
EOF
