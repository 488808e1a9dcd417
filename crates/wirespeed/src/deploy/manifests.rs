//! The manifests `deploy kubernetes` prints, made from a checked [`Config`]: the agents'
//! DaemonSet, the headless Service over them and the mesh's Job, whose deadline is sized by
//! the mesh's own prediction. Nothing is printed or applied here.

use serde_json::{Value, json};
use wirespeed_model::mesh::{ControllerMemory, sampled_pairs_scale, slots, tournament};
use wirespeed_model::units::parse_duration;

use super::result::Manifests;
use super::{Config, KEY_DIR, KEY_ITEM};

/// The headless Service's name, whose DNS name resolves to every ready agent.
const SERVICE: &str = "wirespeed-agents";

/// How long the Job's mesh waits for the agents' pods to listen (`mesh --wait-for-agents`),
/// inside the 5 minutes the Job's deadline allows beyond the mesh.
const AGENTS_START_WAIT: &str = "4m";

/// What the agents' pods and the mesh's pod share: the key's volume and its mount, and the
/// hardened security context (no root, no privilege, read-only root file system).
struct PodParts {
    key_file: String,
    key_volume: Value,
    key_mount: Value,
    hardened: Value,
}

impl PodParts {
    fn new(config: &Config) -> Self {
        PodParts {
            key_file: format!("{KEY_DIR}/{KEY_ITEM}"),
            key_volume: json!({
                "name": "key",
                "secret": {"secretName": config.secret, "defaultMode": 0o400,
                           "items": [{"key": KEY_ITEM, "path": KEY_ITEM}]}
            }),
            key_mount: json!({"name": "key", "mountPath": KEY_DIR, "readOnly": true}),
            hardened: json!({
                "runAsNonRoot": true, "runAsUser": 65534, "runAsGroup": 65534,
                "allowPrivilegeEscalation": false, "readOnlyRootFilesystem": true,
                "capabilities": {"drop": ["ALL"]}
            }),
        }
    }
}

/// The manifests in apply order: the Service, the agents' DaemonSet, the mesh's Job.
#[doc(hidden)]
pub fn manifests(config: &Config) -> Manifests {
    let parts = PodParts::new(config);
    let (predicted, longest) = predicted(config);
    Manifests {
        manifests: vec![
            service(config),
            daemonset(config, &parts),
            job(config, &parts, job_deadline_seconds(longest)),
        ],
        predicted_mesh_seconds: predicted,
        longest_mesh_seconds: longest,
    }
}

fn agent_labels() -> Value {
    json!({"app.kubernetes.io/name": "wirespeed", "app.kubernetes.io/component": "agent"})
}

/// The headless Service: no cluster address, its name resolving to every ready agent.
fn service(config: &Config) -> Value {
    let labels = agent_labels();
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": SERVICE, "namespace": config.namespace, "labels": labels},
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": false,
            "selector": labels,
            "ports": [{"name": "agent", "port": config.port, "targetPort": config.port, "protocol": "TCP"}]
        }
    })
}

/// The agent's `serve` command line in its container.
fn serve_args(config: &Config, key_file: &str) -> Vec<String> {
    let mut serve: Vec<String> = vec![
        "serve".into(),
        "-p".into(),
        config.port.to_string(),
        "--auth-key-file".into(),
        key_file.into(),
        "--max-memory".into(),
        config.max_memory.bytes().to_string(),
        "--metrics".into(),
        format!("$(POD_IP):{}", config.metrics_port),
    ];
    for c in &config.allow_destination {
        serve.extend(["--allow-destination".into(), c.to_string()]);
    }
    serve
}

/// One agent on every node, on the node's network, ready when its metrics answer.
fn daemonset(config: &Config, parts: &PodParts) -> Value {
    let labels = agent_labels();
    let limit = memory_limit_bytes(config.max_memory.bytes());
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": "wirespeed-agent", "namespace": config.namespace, "labels": labels},
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "hostNetwork": true,
                    // The agents and the mesh never talk to the API server: no token in them.
                    "automountServiceAccountToken": false,
                    "dnsPolicy": "ClusterFirstWithHostNet",
                    "securityContext": {"fsGroup": 65534},
                    "terminationGracePeriodSeconds": 10,
                    "tolerations": [{"operator": "Exists"}],
                    "containers": [{
                        "name": "agent",
                        "image": config.image,
                        "args": serve_args(config, &parts.key_file),
                        "env": [{"name": "POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}],
                        "ports": [
                            {"name": "agent", "containerPort": config.port, "protocol": "TCP"},
                            {"name": "metrics", "containerPort": config.metrics_port, "protocol": "TCP"}
                        ],
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "64Mi"},
                            "limits": {"memory": format!("{}Mi", limit >> 20)}
                        },
                        "readinessProbe": {
                            "httpGet": {"path": "/healthz", "port": "metrics"},
                            "periodSeconds": 10, "timeoutSeconds": 2, "failureThreshold": 3
                        },
                        "livenessProbe": {
                            "httpGet": {"path": "/healthz", "port": "metrics"},
                            "initialDelaySeconds": 10, "periodSeconds": 30, "timeoutSeconds": 5
                        },
                        "securityContext": parts.hardened,
                        "volumeMounts": [parts.key_mount]
                    }],
                    "volumes": [parts.key_volume]
                }
            }
        }
    })
}

/// The Job's `mesh` command line.
fn mesh_args(config: &Config, key_file: &str) -> Vec<String> {
    let mut mesh_args: Vec<String> = vec![
        "mesh".into(),
        "--agents".into(),
        mesh_agents(config),
        "--auth-key-file".into(),
        key_file.into(),
        "-t".into(),
        format!("{}s", config.time.as_secs_f64()),
        "--probes".into(),
        config.probes.to_string(),
        "--probe-gap".into(),
        crate::mesh::DEFAULT_PROBE_GAP.into(),
        // The Job starts with the DaemonSet: without the wait, every test of an agent
        // whose pod is still starting fails (seen on a one-node cluster, where the mesh
        // ran before the agent listened, and the Job failed with "connection refused").
        "--wait-for-agents".into(),
        AGENTS_START_WAIT.into(),
        "--json".into(),
    ];
    if let Some(p) = config.pairs {
        mesh_args.extend(["--pairs".into(), p.to_string()]);
    }
    mesh_args
}

/// The Job's `mesh --agents`: the Service's DNS name (one agent per ready agent's
/// address), or the addresses given.
fn mesh_agents(config: &Config) -> String {
    if config.agents.is_empty() {
        return format!(
            "{SERVICE}.{}.svc.cluster.local:{}",
            config.namespace, config.port
        );
    }
    config
        .agents
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// The mesh, run once, with `deadline` seconds to finish.
fn job(config: &Config, parts: &PodParts, deadline: u64) -> Value {
    let job_labels =
        json!({"app.kubernetes.io/name": "wirespeed", "app.kubernetes.io/component": "mesh"});
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "wirespeed-mesh", "namespace": config.namespace, "labels": job_labels},
        "spec": {
            "backoffLimit": 0,
            "activeDeadlineSeconds": deadline,
            "ttlSecondsAfterFinished": 86400,
            "template": {
                "metadata": {"labels": job_labels},
                "spec": {
                    "restartPolicy": "Never",
                    "automountServiceAccountToken": false,
                    "securityContext": {"fsGroup": 65534},
                    "containers": [{
                        "name": "mesh",
                        "image": config.image,
                        "args": mesh_args(config, &parts.key_file),
                        "resources": {
                            "requests": {"cpu": "100m", "memory": "64Mi"},
                            "limits": {"memory": "512Mi"}
                        },
                        "securityContext": parts.hardened,
                        "volumeMounts": [parts.key_mount]
                    }],
                    "volumes": [parts.key_volume]
                }
            }
        }
    })
}

/// The Job's mesh over the fleet, by the mesh's own prediction ([`crate::mesh::predict`]):
/// as planned (no test's data arriving after its grace), and at its longest (every test's
/// tail at the destination's cap).
fn predicted(config: &Config) -> (f64, f64) {
    let gap = parse_duration(crate::mesh::DEFAULT_PROBE_GAP)
        .expect("the default probe gap parses")
        .as_secs_f64();
    let timing = crate::mesh::test_timing(config.time.as_secs_f64(), config.probes, gap);
    let cap = wirespeed_net::spec::NO_DRAIN_CAP.as_secs_f64();
    if let Some(p) = config.pairs {
        // The seed is drawn when the Job runs; the sample's rounds do not depend on it,
        // and each agent's chain of tests is at most one per round.
        let free = ControllerMemory {
            base_bytes: 0.0,
            per_test_bytes: 0.0,
        };
        let scale = sampled_pairs_scale(config.fleet_size, p, 1, &timing, &free);
        return (
            scale.seconds,
            scale.slots as f64 * (timing.per_test_seconds() + cap),
        );
    }
    let slots = slots(&tournament(config.fleet_size), 1);
    (
        crate::mesh::predict(&slots, &timing, |_| 0.0),
        crate::mesh::predict(&slots, &timing, |_| cap),
    )
}

/// The container memory limit for an agent budget: the budget plus a quarter, at least
/// 256 MiB more, rounded up to a MiB.
#[doc(hidden)]
pub fn memory_limit_bytes(budget: u64) -> u64 {
    let extra = (budget / 4).max(256 << 20);
    budget
        .saturating_add(extra)
        .div_ceil(1 << 20)
        .saturating_mul(1 << 20)
}

/// The Job's `activeDeadlineSeconds`: twice the longest the mesh can take by its schedule,
/// plus 5 minutes for the pod's start, the wait for the agents' pods ([`AGENTS_START_WAIT`])
/// and busy hosts' set-up.
pub(crate) fn job_deadline_seconds(longest_mesh_seconds: f64) -> u64 {
    // Whole seconds up, from the microsecond (a sum of 0.05 s steps is not exact in binary).
    ((2.0 * longest_mesh_seconds * 1e6).round() / 1e6).ceil() as u64 + 300
}
