//! `deploy kubernetes`'s output against a real Kubernetes API server: every command line
//! docs/deploy.md shows, and one with every flag, applied with `kubectl apply --dry-run=server
//! --validate=strict` (packaging/kubernetes/apiserver-check.sh: kube-apiserver on loopback
//! against etcd, RBAC, a throwaway key and token). Runs where the script's kube-apiserver is
//! built (`bash packaging/kubernetes/apiserver-check.sh --build`, minutes of Go) and etcd and
//! kubectl are installed; otherwise it says it is skipped and why.

use std::process::{Command, Stdio};

#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn every_documented_deploy_is_accepted_by_a_real_api_server() {
    let found = |p: &str, arg: &str| {
        Command::new(p)
            .arg(arg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok()
    };
    for (tool, arg) in [
        ("etcd", "--version"),
        ("kubectl", "version"),
        ("openssl", "version"),
    ] {
        if !found(tool, arg) {
            eprintln!("skipped: no {tool} (apt-get install etcd-server kubectl openssl)");
            return;
        }
    }
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../packaging/kubernetes/apiserver-check.sh"
    );
    // Bounded: the server is given 120 s to become ready, each apply a few seconds.
    let out = Command::new("timeout")
        .args(["300", "bash", script, "--no-build"])
        .env("WIRESPEED_BIN", env!("CARGO_BIN_EXE_wirespeed"))
        .stdin(Stdio::null())
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if out.status.code() == Some(3) {
        eprintln!("skipped: {}", stderr.trim());
        return;
    }
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(stdout.starts_with("server: kube-apiserver v1."), "{stdout}");
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/deploy.md"))
            .unwrap();
    // At least the docs' own example and the apply they show, and the all-flags line.
    let accepted = stdout
        .lines()
        .filter(|l| l.starts_with("accepted: "))
        .count();
    assert!(accepted >= 3, "{stdout}");
    assert!(!stdout.contains("REFUSED"), "{stdout}");
    assert!(
        docs.contains("wirespeed deploy kubernetes --allow-destination 10.0.0.0/8"),
        "the docs' example this test counts on"
    );
    // Each apply created the three objects on the server's dry run.
    assert_eq!(
        stdout.matches("(server dry run)").count(),
        3 * accepted,
        "{stdout}"
    );
}
