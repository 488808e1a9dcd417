mod text;

use wirespeed::deploy::manifests::manifests;
use wirespeed::deploy::*;

#[test]
fn the_memory_limit_covers_the_budget_and_the_process() {
    use wirespeed::deploy::manifests::memory_limit_bytes;
    assert_eq!(memory_limit_bytes(1 << 30), 1280 << 20);
    assert_eq!(memory_limit_bytes(16 << 20), 272 << 20);
    assert!(memory_limit_bytes(u64::MAX) >= 1 << 30);
}

#[test]
fn the_jobs_deadline_is_the_meshs_own_prediction_at_its_longest() {
    // 16 nodes, -t 5, 20 probes 10 ms apart: each test 5 + 0.2 + 0.15 + 0.05 (the
    // receiver's grace) s by plan, 2 s more with its tail at the cap; 30 slots.
    // The flags' defaults, as the literal it replaced wrote them out.
    let config = parse(&["--allow-destination", "10.0.0.0/8"])
        .unwrap()
        .config()
        .unwrap();
    let m = manifests(&config);
    assert!(
        (m.predicted_mesh_seconds - 30.0 * 5.4).abs() < 1e-6,
        "{}",
        m.predicted_mesh_seconds
    );
    assert!(
        (m.longest_mesh_seconds - 30.0 * 7.4).abs() < 1e-6,
        "{}",
        m.longest_mesh_seconds
    );
    let job = &m.manifests[2];
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["spec"]["activeDeadlineSeconds"], 2 * 222 + 300);
    // The mesh the Job runs takes its probes' gap from the same constant.
    let job_args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap();
    let at = job_args.iter().position(|a| a == "--probe-gap").unwrap();
    assert_eq!(job_args[at + 1], wirespeed::mesh::DEFAULT_PROBE_GAP);
}

#[test]
fn the_default_image_is_the_tag_the_build_script_makes() {
    // build.sh tags `localhost/wirespeed:<the binary's --version>`.
    assert_eq!(
        DEFAULT_IMAGE,
        format!("localhost/wirespeed:{}", env!("CARGO_PKG_VERSION"))
    );
    let script = include_str!("../../../../../packaging/container/build.sh");
    assert!(
        script.contains("tag=${1:-localhost/wirespeed:$version}"),
        "build.sh's tag changed: change DEFAULT_IMAGE with it"
    );
    let cli = <KubernetesArgs as clap::Args>::augment_args(clap::Command::new("k"));
    let image = cli.get_arguments().find(|a| a.get_id() == "image").unwrap();
    assert_eq!(image.get_default_values(), [DEFAULT_IMAGE]);
}

fn parse(argv: &[&str]) -> Result<KubernetesArgs, clap::Error> {
    use clap::{Args, FromArgMatches};
    let cmd = KubernetesArgs::augment_args(clap::Command::new("k").no_binary_name(true));
    let m = cmd.try_get_matches_from(argv)?;
    KubernetesArgs::from_arg_matches(&m)
}

#[test]
fn agents_given_replace_the_services_name_and_size_the_deadline() {
    let k = parse(&[
        "--allow-destination",
        "198.19.211.0/24",
        "--agents",
        "198.19.211.1,198.19.211.2:5299",
    ])
    .unwrap();
    let m = manifests(&k.config().unwrap());
    let job = &m.manifests[2];
    let args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap();
    let at = args.iter().position(|a| a == "--agents").unwrap();
    assert_eq!(args[at + 1], "198.19.211.1:5210,198.19.211.2:5299");
    // Two agents: 2 slots of one test each.
    assert!(
        (m.predicted_mesh_seconds - 2.0 * 5.4).abs() < 1e-6,
        "{}",
        m.predicted_mesh_seconds
    );
    for pod in [&m.manifests[1], job] {
        assert_eq!(
            pod["spec"]["template"]["spec"]["automountServiceAccountToken"],
            false
        );
    }
    // Without --agents, the Service's name.
    let k = parse(&["--allow-destination", "10.0.0.0/8"]).unwrap();
    let job = &manifests(&k.config().unwrap()).manifests[2];
    let args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap();
    let at = args.iter().position(|a| a == "--agents").unwrap();
    assert_eq!(
        args[at + 1],
        "wirespeed-agents.wirespeed.svc.cluster.local:5210"
    );
    // Bad --agents: outside the blocks, twice, alone, a name; --nodes beside them.
    for (argv, needle) in [
        (
            vec!["--agents", "10.1.0.1,198.19.211.2"],
            "outside every --allow-destination",
        ),
        (
            vec!["--agents", "198.19.211.1,198.19.211.1:5210"],
            "named twice",
        ),
        (vec!["--agents", "198.19.211.1"], "2 to"),
    ] {
        let mut a = vec!["--allow-destination", "198.19.211.0/24"];
        a.extend(argv.iter());
        let e = parse(&a).unwrap().config().unwrap_err().to_string();
        assert!(e.contains(needle), "{argv:?}: {e}");
    }
    let e = parse(&["--allow-destination", "198.19.0.0/16", "--agents", "node1"])
        .unwrap_err()
        .to_string();
    assert!(e.contains("cluster DNS"), "{e}");
    assert!(
        parse(&[
            "--allow-destination",
            "198.19.0.0/16",
            "--agents",
            "198.19.0.1,198.19.0.2",
            "--nodes",
            "5"
        ])
        .is_err()
    );
}

#[test]
fn a_sampled_jobs_deadline_is_the_samples() {
    let k = parse(&[
        "--allow-destination",
        "10.0.0.0/8",
        "--nodes",
        "1000",
        "--pairs",
        "8000",
    ])
    .unwrap();
    let m = manifests(&k.config().unwrap());
    // 8 partners each: 16 slots of 5.4 s, at most 7.4 s each with every tail at its cap.
    assert!((m.predicted_mesh_seconds - 16.0 * 5.4).abs() < 1e-6);
    assert!((m.longest_mesh_seconds - 16.0 * 7.4).abs() < 1e-6);
    let args = m.manifests[2]["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap();
    let at = args.iter().position(|a| a == "--pairs").unwrap();
    assert_eq!(args[at + 1], "8000");
    for bad in ["0", "241"] {
        let e = parse(&["--allow-destination", "10.0.0.0/8", "--pairs", bad])
            .unwrap()
            .config()
            .unwrap_err()
            .to_string();
        assert!(e.contains("1 to 240 ordered pairs"), "{bad}: {e}");
    }
}

#[test]
fn names_are_checked() {
    assert!(check_name("--namespace", "wirespeed").is_ok());
    for bad in ["", "Big", "a_b", "-a", "a-", &"a".repeat(64)] {
        assert!(check_name("--namespace", bad).is_err(), "{bad}");
    }
}
