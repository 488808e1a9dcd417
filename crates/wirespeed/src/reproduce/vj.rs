//! `reproduce vj-buffers` (seed 004, Van Jacobson's LANCE vs Intel table): two hosts on an
//! emulated 10 Mbit/s Ethernet (labs/two-host-10m.toml), the socket buffer swept over 1..12
//! packets (send = receive, the seed's diagonal), task-to-task KB/s and wire Mb/s beside the
//! seed's 3/60-to-3/60 (LANCE) column, and the percentage of the 1,104 KB/s ceiling.
//!
//! Each point is `wirespeed sweep AGENT --snd K --rcv K` run as a subprocess inside the lab's
//! first host against one `wirespeed serve` in the second (the sweep logic lives in the
//! binary); one run per point, shorter than the seed's four 8 MB transfers (stated).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};

use super::{Comparison, LabGuard, Name, Options, Reproduction, Row, Verdict, num, setting};

/// The seed's LANCE column: task-to-task KB/s and wire Mb/s for 1..12 packets.
const LANCE: [(f64, f64); 12] = [
    (384.0, 3.4),
    (606.0, 5.4),
    (690.0, 6.1),
    (784.0, 6.9),
    (866.0, 7.7),
    (904.0, 8.0),
    (946.0, 8.4),
    (954.0, 8.4),
    (974.0, 8.6),
    (983.0, 8.7),
    (995.0, 8.8),
    (1001.0, 8.9),
];

pub(crate) fn run(options: &Options) -> anyhow::Result<Reproduction> {
    let bytes = options.size.unwrap_or(1_000_000);
    let file = super::lab_file("two-host-10m.toml")?;
    let lab = LabGuard::up(&file)?;
    let to_ns = lab.namespace("h2")?;
    let from_ns = lab.namespace("h1")?;
    let addr = lab.ipv4("h2")?;
    let mut agent = Command::new("ip")
        .args(["netns", "exec", &to_ns])
        .arg(super::exe()?)
        .args(["serve", "-p", "0", "-B", &addr])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .context("starting the agent in the lab")?;
    let mut line = String::new();
    BufReader::new(agent.stdout.take().expect("piped"))
        .read_line(&mut line)
        .ok();
    let listening = line
        .split_whitespace()
        .find(|w| w.contains(&addr) && w.contains(':'))
        .map(str::to_string);
    let results =
        std::env::temp_dir().join(format!("ws-reproduce-vj-{}.jsonl", std::process::id()));
    let points = (|| -> anyhow::Result<Vec<(f64, f64, f64)>> {
        let Some(listening) = listening else {
            bail!("the agent in h2 did not say where it listens: {line:?}");
        };
        let mut points = Vec::new();
        for k in 1..=LANCE.len() {
            let _ = std::fs::remove_file(&results);
            let args: Vec<String> = [
                "sweep",
                &listening,
                "--snd",
                &k.to_string(),
                "--rcv",
                &k.to_string(),
                "--reps",
                "1",
                "-n",
                &format!("{bytes}B"),
                "-M",
                "1460",
                "--link-rate",
                "10M",
                "--results",
                &results.display().to_string(),
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            let doc = super::run_json(Some(&from_ns), &args, Duration::from_secs(60))?;
            let d = &doc["result"]["analysis"]["diagonal"][0];
            points.push((
                num(d, &["task_to_task_kib_per_second"])?,
                num(d, &["wire_mbit_per_second"])?,
                num(d, &["percent_of_ceiling"])?,
            ));
        }
        Ok(points)
    })();
    wirespeed_lab::sys::terminate(agent.id());
    let _ = agent.wait();
    let _ = std::fs::remove_file(&results);
    drop(lab);
    let points = points?;

    let mut rows = Vec::new();
    for (i, ((kib, mbit, pct), (paper_kb, paper_mb))) in points.iter().zip(LANCE).enumerate() {
        let r = kib / paper_kb - 1.0;
        rows.push(Row {
            quantity: format!("{} packet{}: task to task", i + 1, if i == 0 { "" } else { "s" }),
            unit: "KiB/s".into(),
            configured: None,
            paper: Some(paper_kb),
            ours: Some(*kib),
            tolerance: "25%".into(),
            verdict: Verdict::of(r.abs() <= 0.25),
            why: format!(
                "{:+.0}%; {mbit:.1} Mb/s on the wire (paper {paper_mb}), {pct:.0}% of the ceiling; {}",
                r * 100.0,
                if r > 0.25 {
                    "the buffer does not hold the rate down as it did on the seed's hosts: Linux grants double the request (the sweep's document has the granted sizes) and a host that answers at once needs little window on a 1.2 ms round trip"
                } else {
                    "link-limited, as the seed's large buffers were"
                }
            ),
        });
    }
    let best = points.iter().map(|p| p.2).fold(0.0, f64::max);
    rows.push(Row {
        quantity: "plateau, % of the ceiling".into(),
        unit: "%".into(),
        configured: Some(100.0),
        paper: Some(91.0),
        ours: Some(best),
        tolerance: "ours >= paper".into(),
        verdict: Verdict::of(best >= 91.0),
        why: "the seed: \"the 3/60s get 91% of the theoretical max\" (1,104 KB/s); ours against the envelope of this link".into(),
    });
    let truth = vec![
        setting(
            "link (labs/two-host-10m.toml)",
            "h1 - h2, 10 Mbit/s full duplex, 100 m, queue 100",
        ),
        setting(
            "buffers",
            "send = receive = 1..12 packets of MSS 1460 (-M 1460)",
        ),
        setting(
            "transfer",
            format!("{bytes} bytes per point, one run (the seed: four of 8 MB)"),
        ),
    ];
    Ok(Reproduction::new(
        Name::VjBuffers,
        truth,
        vec![Comparison {
            title: "Socket buffer vs throughput, 3/60 to 3/60 (LANCE)".into(),
            source: "seed 004 table, left column; ceiling 1,104 KB/s".into(),
            method: format!("library: lifecycle::up(labs/two-host-10m.toml); subprocess: ip netns exec <h2> wirespeed serve -p 0, ip netns exec <h1> wirespeed sweep ADDR:PORT --snd K --rcv K --reps 1 -n {bytes}B -M 1460 --link-rate 10M --json for K = 1..12"),
            rows,
        }],
        vec!["the seed's Intel (3/280) column is a property of the 82586 chip and is not reproduced by an emulated link".into()],
    ))
}
