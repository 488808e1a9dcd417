//! `deploy kubernetes`'s objects run by a real one-node cluster
//! (packaging/kubernetes/node-check.sh: kube-apiserver, kube-controller-manager, kube-scheduler
//! and the kubelet built from the Go module proxy, containerd and runc, the CNI bridge on
//! 198.19.210.0/24, the node at 198.19.211.1 on a veth of its own): the DaemonSet's agent pod
//! passes its readiness probe and the mesh Job, given the agents' addresses (no cluster DNS),
//! completes with the mesh's document in its log. Runs as root where the binaries are built
//! (`bash packaging/kubernetes/node-check.sh --build`, minutes of Go) and the runtime is
//! installed (scripts/install-deps.sh); otherwise it says it is skipped and why. The script
//! removes everything it started, also when it fails.

use std::process::{Command, Stdio};

#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn the_agent_pod_is_ready_and_the_mesh_job_completes_on_a_real_node() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../packaging/kubernetes/node-check.sh"
    );
    // Bounded: the node and each wait inside the script have their own timeouts (at most
    // 3 + 3 + 3 + 5 minutes); this is the backstop, and timeout's TERM runs its clean-up.
    let out = Command::new("timeout")
        .args(["-k", "60", "1200", "bash", script, "--no-build"])
        .env("WIRESPEED_BIN", env!("CARGO_BIN_EXE_wirespeed"))
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        eprintln!("skipped: {}", stderr.lines().last().unwrap_or("").trim());
        return;
    }
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("node Ready, agent pod Ready, mesh Job Complete: 2 of 2 tests"),
        "{stdout}{stderr}"
    );
}
