//! `wirespeed deploy kubernetes`: the fields the agent and the mesh rely on, in the generated
//! objects, and the objects through kubectl's own types where kubectl is installed (offline:
//! `kubectl set env --local` and `kubectl label --local` decode without an API server).

use std::process::Command;

use serde_json::Value;

use crate::util::{assert_one_line_error, wirespeed};

fn manifests(extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["deploy", "kubernetes", "--json"];
    args.extend_from_slice(extra);
    let run = wirespeed(&args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["schema"], "wirespeed.deploy.v1");
    doc["result"]["manifests"].as_array().unwrap().clone()
}

fn kind<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    objects.iter().find(|o| o["kind"] == kind).unwrap()
}

fn args_of(container: &Value) -> Vec<String> {
    container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// The value after `flag` in `args`.
fn after<'a>(args: &'a [String], flag: &str) -> Vec<&'a str> {
    args.windows(2)
        .filter(|w| w[0] == flag)
        .map(|w| w[1].as_str())
        .collect()
}

#[test]
fn deploy_kubernetes_wires_key_memory_health_service_and_job_together() {
    let objects = manifests(&[
        "--allow-destination",
        "10.0.0.0/16",
        "192.0.2.0/24",
        "--max-memory",
        "512MiB",
        "--namespace",
        "perf",
        "-p",
        "6000",
    ]);
    assert_eq!(objects.len(), 3);
    let ds = kind(&objects, "DaemonSet");
    let pod = &ds["spec"]["template"]["spec"];
    assert_eq!(pod["hostNetwork"], true);
    let agent = &pod["containers"][0];
    let args = args_of(agent);
    assert_eq!(args[0], "serve");
    assert_eq!(after(&args, "-p"), ["6000"]);
    // The key file is where the Secret's item is mounted.
    let key = after(&args, "--auth-key-file")[0];
    let mount = agent["volumeMounts"][0]["mountPath"].as_str().unwrap();
    let volume = &pod["volumes"][0];
    assert_eq!(volume["name"], agent["volumeMounts"][0]["name"]);
    let item = volume["secret"]["items"][0]["path"].as_str().unwrap();
    assert_eq!(key, format!("{mount}/{item}"));
    assert_eq!(volume["secret"]["items"][0]["key"], "auth.key");
    // The budget passed to the agent, and a limit that holds it and the process.
    let budget: u64 = after(&args, "--max-memory")[0].parse().unwrap();
    assert_eq!(budget, 512 << 20);
    let limit = agent["resources"]["limits"]["memory"].as_str().unwrap();
    let limit_mib: u64 = limit.strip_suffix("Mi").unwrap().parse().unwrap();
    assert!(limit_mib << 20 >= budget + (128 << 20), "{limit}");
    // Readiness asks the agent's own metrics endpoint, on the port --metrics binds.
    let metrics = after(&args, "--metrics")[0];
    let metrics_port = metrics.rsplit_once(':').unwrap().1;
    assert!(metrics.starts_with("$(POD_IP):"), "{metrics}");
    assert_eq!(
        agent["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
        "status.podIP"
    );
    let probe = &agent["readinessProbe"]["httpGet"];
    assert_eq!(probe["path"], "/healthz");
    let named = agent["ports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == probe["port"])
        .unwrap();
    assert_eq!(named["containerPort"].to_string(), metrics_port);
    assert_eq!(
        after(&args, "--allow-destination"),
        ["10.0.0.0/16", "192.0.2.0/24"]
    );
    // The Service selects the DaemonSet's pods and names the agents' port.
    let svc = kind(&objects, "Service");
    assert_eq!(svc["spec"]["clusterIP"], "None");
    assert_eq!(
        svc["spec"]["selector"],
        ds["spec"]["template"]["metadata"]["labels"]
    );
    assert_eq!(
        ds["spec"]["selector"]["matchLabels"],
        ds["spec"]["template"]["metadata"]["labels"]
    );
    assert_eq!(svc["spec"]["ports"][0]["port"], 6000);
    // The Job's mesh goes to the Service's DNS name with the same key.
    let job = kind(&objects, "Job");
    let mesh = &job["spec"]["template"]["spec"]["containers"][0];
    let margs = args_of(mesh);
    assert_eq!(margs[0], "mesh");
    assert_eq!(
        after(&margs, "--agents"),
        [format!(
            "{}.perf.svc.cluster.local:6000",
            svc["metadata"]["name"].as_str().unwrap()
        )]
    );
    assert_eq!(after(&margs, "--auth-key-file"), [key]);
    assert_eq!(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
    assert!(job["spec"]["activeDeadlineSeconds"].as_u64().unwrap() > 300);
    for o in &objects {
        assert_eq!(o["metadata"]["namespace"], "perf");
    }
}

#[test]
fn deploy_kubernetes_yaml_decodes_with_kubectls_types() {
    let run = wirespeed(&["deploy", "kubernetes", "--allow-destination", "10.0.0.0/8"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("kind: \"DaemonSet\""), "{}", run.stdout);
    if Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .is_err()
    {
        eprintln!("deploy: kubectl not installed: the YAML is not decoded");
        return;
    }
    let dir = std::env::temp_dir().join(format!("ws-deploy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let docs: Vec<&str> = run.stdout.split("\n---\n").skip(1).collect();
    assert_eq!(docs.len(), 3);
    for (i, doc) in docs.iter().enumerate() {
        let path = dir.join(format!("{i}.yaml"));
        std::fs::write(&path, doc).unwrap();
        let workload = !doc.contains("kind: \"Service\"");
        let mut c = Command::new("kubectl");
        if workload {
            c.args(["set", "env", "--local", "-f"])
                .arg(&path)
                .args(["WS_CHECK=1", "-o", "json"]);
        } else {
            c.args(["label", "--local", "-f"])
                .arg(&path)
                .args(["ws-check=1", "-o", "json"]);
        }
        let out = c.output().unwrap();
        assert!(
            out.status.success(),
            "{doc}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Typed decoding drops a misspelt field: the ones the agent relies on must survive.
        let back: Value = serde_json::from_slice(&out.stdout).unwrap();
        if workload {
            let pod = &back["spec"]["template"]["spec"];
            let c = &pod["containers"][0];
            assert!(c["args"].as_array().unwrap().len() > 4, "{back}");
            assert!(
                pod["volumes"][0]["secret"]["secretName"].is_string(),
                "{back}"
            );
            assert!(c["volumeMounts"][0]["mountPath"].is_string(), "{back}");
            assert!(c["resources"]["limits"]["memory"].is_string(), "{back}");
            if back["kind"] == "DaemonSet" {
                assert_eq!(pod["hostNetwork"], true, "{back}");
                assert_eq!(c["readinessProbe"]["httpGet"]["path"], "/healthz", "{back}");
                assert!(
                    c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"].is_string(),
                    "{back}"
                );
            } else {
                assert_eq!(back["spec"]["backoffLimit"], 0, "{back}");
            }
        } else {
            assert_eq!(back["spec"]["clusterIP"], "None", "{back}");
            assert!(back["spec"]["selector"].is_object(), "{back}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn deploy_bad_input_is_one_line_with_exit_2() {
    for (args, needle) in [
        (vec!["deploy", "kubernetes"], "--allow-destination"),
        (
            vec!["deploy", "kubernetes", "--allow-destination", "x"],
            "not an address block",
        ),
        (
            vec![
                "deploy",
                "kubernetes",
                "--allow-destination",
                "10.0.0.0/8",
                "--namespace",
                "Big",
            ],
            "not a Kubernetes name",
        ),
        (
            vec![
                "deploy",
                "kubernetes",
                "--allow-destination",
                "10.0.0.0/8",
                "--max-memory",
                "1MiB",
            ],
            "at least 16MiB",
        ),
        (
            vec![
                "deploy",
                "kubernetes",
                "--allow-destination",
                "10.0.0.0/8",
                "--nodes",
                "1",
            ],
            "--nodes 1",
        ),
        (
            vec![
                "deploy",
                "kubernetes",
                "--allow-destination",
                "10.0.0.0/8",
                "--metrics-port",
                "5210",
            ],
            "two different ports",
        ),
    ] {
        assert_one_line_error(&wirespeed(&args), needle);
    }
}
