//! `reproduce envelope` (seeds 002 and 004): the host's loopback ceiling, the envelope of
//! 10 Mbit/s, 100 Mbit/s and 1 Gbit/s Ethernet beside the seeds' figures, and TCP across an
//! emulated 10 Mbit/s link against its 9.415 Mbit/s ceiling.
//!
//! Seed 002 (Atwood) measures the in-memory ttcp bound first (93.02 MB/s on his PC), then
//! gives a rule of thumb for real transfers (10baseT 1 MB/s, 100baseT 10 MB/s, 1000baseT
//! 30 MB/s, "plus or minus ten percent"). Those are measurements of 2000s hosts, not ceilings:
//! what must hold is that each is at most the envelope. Seed 004 (Van Jacobson) states the
//! 10 Mbit/s ceiling: 1,104 KB/s task to task.

use std::time::Duration;

use wirespeed_model::{BitRate, Duplex, EnvelopeParams, Transport};

use super::{Comparison, Name, Options, Reproduction, Row, Verdict, rel, setting};

pub(crate) fn run(options: &Options) -> anyhow::Result<Reproduction> {
    let time = options.time.unwrap_or(Duration::from_secs(2));
    let secs = format!("{}", time.as_secs_f64());
    let mut notes = Vec::new();
    let loop_bps = loopback_bits_per_second(time)?;
    let (envelopes, ceilings) = envelopes()?;
    let mut comparisons = vec![envelopes, host_bound(loop_bps, &ceilings, &secs)];
    let mut truth = vec![
        setting(
            "loopback transfer",
            format!("{secs} s, one stream, 128 KiB writes"),
        ),
        setting("envelope stack", "Ethernet II, MTU 1500, IPv4, TCP"),
    ];
    if options.lab {
        let (lab, lab_truth) = lab_link(time, ceilings[0].1)?;
        comparisons.push(lab);
        truth.extend(lab_truth);
    } else {
        notes.push("--no-lab: the 10 Mbit/s lab link was not measured".into());
    }
    Ok(Reproduction::new(Name::Envelope, truth, comparisons, notes))
}

/// The host's own bound: TCP through loopback with the in-process agent, called as a
/// library function (what `wirespeed tcp -t SECS -i 0` runs).
fn loopback_bits_per_second(time: Duration) -> anyhow::Result<f64> {
    let loopback_config = crate::throughput::Config::loopback_tcp(time.as_secs_f64());
    let mut silent = crate::throughput::text::LiveLines::new(
        loopback_config.rate_format,
        &loopback_config.spec,
        false,
        false,
    );
    let loopback = crate::throughput::measure(&loopback_config, &mut silent)?;
    if let Some(why) = loopback.partial_reason {
        anyhow::bail!("the loopback TCP test did not run whole: {why}");
    }
    Ok(loopback.doc.result.end.sum_received.bits_per_second)
}

/// The ceiling of each link (library arithmetic) beside the seeds' figures; with it, each
/// rule-of-thumb link's rate and TCP ceiling (bits/s).
fn envelopes() -> anyhow::Result<(Comparison, Vec<(u64, f64)>)> {
    let mb = 1e6;
    let mut envelope_rows = Vec::new();
    let seed_004 = EnvelopeParams {
        duplex: Duplex::Half,
        ack_every: 1,
        transport: Transport::Tcp { timestamps: false },
        ..EnvelopeParams::ethernet_tcp(BitRate::from_bits_per_second(10_000_000))
    }
    .compute()?;
    let kib = seed_004.goodput_bytes_per_second / 1024.0;
    let r = rel(kib, 1104.0);
    envelope_rows.push(Row {
        quantity: "10 Mbit/s TCP ceiling (seed 004)".into(),
        unit: "KiB/s".into(),
        configured: None,
        paper: Some(1104.0),
        ours: Some(kib),
        tolerance: "1%".into(),
        verdict: Verdict::of(r.abs() <= 0.01),
        why: format!(
            "{:+.2}%: half duplex (ACKs share the wire), one ACK per segment, no timestamps, KB = 1024 bytes, as a 1988 Sun sent them",
            r * 100.0
        ),
    });
    let rule_of_thumb = [
        (10_000_000u64, 1.0),
        (100_000_000, 10.0),
        (1_000_000_000, 30.0),
    ];
    let mut ceilings = Vec::new();
    for (bps, paper_mb) in rule_of_thumb {
        let e = EnvelopeParams::ethernet_tcp(BitRate::from_bits_per_second(bps)).compute()?;
        let ceiling = e.goodput_bytes_per_second / mb;
        ceilings.push((bps, e.goodput_bits_per_second));
        let low = paper_mb * 0.9;
        envelope_rows.push(Row {
            quantity: format!("{} real-world rule vs ceiling (seed 002)", BitRate::from_bits_per_second(bps)),
            unit: "MB/s".into(),
            configured: None,
            paper: Some(paper_mb),
            ours: Some(ceiling),
            tolerance: "paper -10% <= ceiling".into(),
            verdict: Verdict::of(low <= ceiling),
            why: format!(
                "the seed's figure is a measured transfer, {:.0}% of the TCP ceiling (full duplex, timestamps, delayed ACKs); {}",
                paper_mb / ceiling * 100.0,
                if paper_mb / ceiling < 0.5 {
                    "the seed blames hosts and disks, not the wire, for the rest"
                } else {
                    "the rest is host and protocol overhead of the seed's machines"
                }
            ),
        });
    }
    let comparison = Comparison {
        title: "Envelope: the ceiling of each link".into(),
        source: "seed 004 table text (1,104 KB/s); seed 002 rule of thumb (1/10/30 MB/s)".into(),
        method: "library: wirespeed_model::EnvelopeParams::compute".into(),
        rows: envelope_rows,
    };
    Ok((comparison, ceilings))
}

/// Seed 002's point, measure the host first: the loopback bound against the in-memory figure
/// and against each link's ceiling.
fn host_bound(loop_bps: f64, ceilings: &[(u64, f64)], secs: &str) -> Comparison {
    let mb = 1e6;
    let mut host_rows = vec![Row {
        quantity: "loopback TCP (in-memory bound)".into(),
        unit: "MB/s".into(),
        configured: None,
        paper: Some(93.02),
        ours: Some(loop_bps / 8.0 / mb),
        tolerance: "none (another machine)".into(),
        verdict: Verdict::NotCompared,
        why: "the seed's 2007 PC through ttcp; this host's kernel through `wirespeed tcp`".into(),
    }];
    for (bps, ceiling_bps) in ceilings {
        host_rows.push(Row {
            quantity: format!(
                "host bound >= {} ceiling",
                BitRate::from_bits_per_second(*bps)
            ),
            unit: "Mbit/s".into(),
            configured: Some(ceiling_bps / mb),
            paper: None,
            ours: Some(loop_bps / mb),
            tolerance: "ours >= configured".into(),
            verdict: Verdict::of(loop_bps >= *ceiling_bps),
            why: if loop_bps >= *ceiling_bps {
                "this host can fill the link: a shortfall on it is the network's".into()
            } else {
                "this host cannot fill the link (seed 002's point: measure the host first)".into()
            },
        });
    }
    Comparison {
        title: "The host's own bound (seed 002: measure in memory first)".into(),
        source: "seed 002: 16777216 bytes in 0.17 s = 93.02 MB/s".into(),
        method: format!(
            "in process: the tcp command's measurement (wirespeed tcp -t {secs} -i 0), agent in this process on loopback"
        ),
        rows: host_rows,
    }
}

/// TCP across an emulated 10 Mbit/s full-duplex link (labs/two-host-10m.toml) against its
/// `ceiling` (bits/s); the comparison and the lab's ground truth.
fn lab_link(time: Duration, ceiling: f64) -> anyhow::Result<(Comparison, [super::Setting; 2])> {
    let secs = format!("{}", time.as_secs_f64());
    let file = super::lab_file("two-host-10m.toml")?;
    let lab = super::LabGuard::up(&file)?;
    let client: Vec<String> = ["-t", &secs, "--link-rate", "10M"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let doc = lab.tcp("h1", "h2", &client, time + Duration::from_secs(30))?;
    let ports = lab.ports()?;
    drop(lab);
    let got = doc.result.end.sum_received.bits_per_second;
    let r = rel(got, ceiling);
    let forward = ports.iter().find(|p| p.from == "h1");
    let truth = [
        setting(
            "lab link (labs/two-host-10m.toml)",
            "h1 - h2, 10 Mbit/s full duplex, 100 m (505 ns), queue 100",
        ),
        setting("lab transfer", format!("{secs} s h1 -> h2")),
    ];
    let mut rows = vec![Row {
        quantity: "TCP goodput across the link".into(),
        unit: "Mbit/s".into(),
        configured: Some(ceiling / 1e6),
        paper: None,
        ours: Some(got / 1e6),
        tolerance: "-3% .. +0.5% of ceiling".into(),
        verdict: Verdict::of((-0.03..=0.005).contains(&r)),
        why: format!(
            "{:+.2}% of 1448/1538 x 10 Mbit/s; the receiver's rate includes slow start in a {secs} s run",
            r * 100.0
        ),
    }];
    if let Some(p) = forward {
        rows.push(Row {
            quantity: "emulated wire busy h1 -> h2".into(),
            unit: "%".into(),
            configured: None,
            paper: None,
            ours: Some(p.utilization * 100.0),
            tolerance: "none (share of the lab's life, set-up included)".into(),
            verdict: Verdict::NotCompared,
            why: format!(
                "{} frames delivered, {} dropped at the queue",
                p.counters.frames_out, p.counters.drops_queue
            ),
        });
    }
    let comparison = Comparison {
        title: "Lab: TCP across an emulated 10 Mbit/s Ethernet".into(),
        source: "envelope -r 10M (9.415 Mbit/s); seed 004's 91% for real 1988 hosts".into(),
        method: format!(
            "library: lifecycle::up(labs/two-host-10m.toml); subprocess: ip netns exec <h2> wirespeed serve -1 -p 0, ip netns exec <h1> wirespeed tcp ADDR:PORT {} --json",
            client.join(" ")
        ),
        rows,
    };
    Ok((comparison, truth))
}
