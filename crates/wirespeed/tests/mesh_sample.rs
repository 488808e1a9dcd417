//! `mesh --pairs N --seed S`: a seeded sample of the ordered pairs, end to end through the
//! binary with in-process agents on loopback: the same seed draws the same pairs, every agent
//! sends and receives, no agent is in two tests at once, the seed is in the JSON, and a sample
//! the fleet cannot hold is one line with exit 2.

use std::collections::BTreeSet;

use crate::mesh::assert_no_agent_in_two_tests;
use crate::util::{assert_one_line_error, wirespeed};

fn sampled(seed: &str) -> serde_json::Value {
    let run = wirespeed(&[
        "mesh", "--local", "6", "-t", "0.1", "--probes", "0", "--pairs", "6", "--seed", seed,
        "--json",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("the mesh's JSON")
}

fn pairs(doc: &serde_json::Value) -> BTreeSet<(u64, u64)> {
    doc["result"]["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["source"].as_u64().unwrap(),
                t["destination"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn mesh_pairs_sample_is_seeded_covers_every_agent_and_never_overlaps() {
    let a = sampled("42");
    assert_eq!(a["parameters"]["sample"]["pairs"], 6);
    assert_eq!(a["parameters"]["sample"]["seed"], 42);
    assert_eq!(a["result"]["tests_planned"], 6);
    let tests = a["result"]["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 6);
    assert!(
        tests
            .iter()
            .all(|t| t["result"]["tcp_bits_per_second"].is_number())
    );
    assert_no_agent_in_two_tests(tests);
    let drawn = pairs(&a);
    assert_eq!(drawn.len(), 6);
    for agent in 0..6 {
        assert!(
            drawn.iter().any(|&(s, _)| s == agent),
            "{agent} never sends"
        );
        assert!(
            drawn.iter().any(|&(_, d)| d == agent),
            "{agent} never receives"
        );
    }
    // One round each way: 2 slots, and the pair table holds only the pairs measured.
    assert_eq!(a["result"]["slots"], 2);
    assert_eq!(a["result"]["pairs"].as_array().unwrap().len(), 3);
    // The same seed, the same pairs; the sample is the model's draw for that seed.
    assert_eq!(pairs(&sampled("42")), drawn);
    let model: BTreeSet<(u64, u64)> = wirespeed_model::mesh::sampled_rounds(6, 6, 42)
        .concat()
        .into_iter()
        .map(|(s, d)| (s as u64, d as u64))
        .collect();
    assert_eq!(drawn, model);
}

#[test]
fn mesh_pairs_without_a_seed_prints_the_seed_it_drew() {
    let run = wirespeed(&[
        "mesh", "--local", "3", "-t", "0.1", "--probes", "0", "--pairs", "2",
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let line = run
        .stdout
        .lines()
        .find(|l| l.starts_with("sampled: 2 of 6 ordered pairs, seed "))
        .unwrap_or_else(|| panic!("no sample line in {}", run.stdout));
    let seed: u64 = line
        .split("--seed ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no seed in {line}"));
    assert!(line.contains(&format!("seed {seed} ")), "{line}");
    assert!(
        line.contains("not every agent sends and receives"),
        "{line}"
    );
}

#[test]
fn mesh_pairs_bad_input_is_one_line_with_exit_2() {
    for (argv, needle) in [
        (vec!["--pairs", "0"], "--pairs 0 is out of range"),
        (vec!["--pairs", "7"], "1 to 6 ordered pairs"),
        (vec!["--seed", "3"], "--pairs"),
        (vec!["--pairs", "x"], "--pairs"),
        (
            vec!["--pairs", "2", "--every", "1s", "--count", "2"],
            "needs --seed",
        ),
        (
            vec!["--resume", "/nonexistent/ws-mesh.jsonl", "--pairs", "2"],
            "holds the mesh's sample",
        ),
    ] {
        let mut args = vec!["mesh", "--local", "3", "-t", "0.1", "--probes", "0"];
        args.extend(argv.iter());
        assert_one_line_error(&wirespeed(&args), needle);
    }
}
