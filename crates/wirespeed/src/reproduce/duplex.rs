//! `reproduce duplex-mismatch` (seed 003 §8.3 Table 6 and §8.4 Table 7): a 10 Mbit/s link
//! whose ends disagree about duplex, a TCP transfer each way, the rates and each end's MAC
//! counters beside the seed's; then the same link with both ends half duplex.
//!
//! What reproduces and what does not: the counter signature (collisions, late ones among them,
//! only at the half end; FCS errors and runts only at the full end; no late collisions on a
//! matched link) comes from the CSMA/CD MAC and reproduces. The seed's rates (15 and 67 KB/s)
//! came from 1998 stacks that waited out every lost segment with a retransmission timeout;
//! Linux recovers most losses with SACK and fast retransmit, so our mismatched link is far
//! faster, and which direction suffers more varies from run to run (README, lab shared media).
//! So the mismatch is run twice: with this host's TCP, and with the `1990s` TCP profile
//! (labs/duplex-mismatch-1990s.toml: no SACK, RACK, TLP, F-RTO or timestamps, Reno), each
//! `--runs` times, with every run's rate listed. The verdicts say what moved and what did not.
//!
//! A stalling link is the subject, so a stall is a measurement, not a failure: each transfer
//! is cut at a time cap (`--time`, default 30 s) and counted by its receiver as it goes
//! (`tcp -R --json-stream`), so neither a byte count that cannot finish nor the results
//! exchange on the control connection (which crosses the same stalled link) can hang the run;
//! a cut transfer's row says what arrived in how long, and the longest time nothing did.

use std::time::Duration;

use wirespeed_lab::PortStatus;
use wirespeed_lab::emulator::link::DirectionCounters;

use super::{Comparison, LabGuard, Name, Options, Reproduction, Row, Verdict, setting};

/// One end's MAC counters during one transfer (after minus before).
#[derive(Debug, Clone, Copy, Default)]
struct Mac {
    sent: u64,
    received: u64,
    collisions: u64,
    late: u64,
    fcs: u64,
    runts: u64,
}

fn counters(ports: &[PortStatus], node: &str) -> DirectionCounters {
    ports
        .iter()
        .find(|p| p.from == node)
        .map(|p| p.counters)
        .unwrap_or_default()
}

fn delta(before: &[PortStatus], after: &[PortStatus], node: &str) -> Mac {
    let (b, a) = (counters(before, node), counters(after, node));
    Mac {
        sent: a.frames_out - b.frames_out,
        received: a.frames_received - b.frames_received,
        collisions: a.collisions - b.collisions,
        late: a.late_collisions - b.late_collisions,
        fcs: a.fcs_errors - b.fcs_errors,
        runts: a.runts - b.runts,
    }
}

/// A transfer from `from` to `to`, capped in time: what arrived, and both ends' counters.
struct Transfer {
    kib_per_second: f64,
    bytes: u64,
    seconds: f64,
    /// Every byte arrived before the cap.
    complete: bool,
    /// The longest time in which nothing arrived (100 ms resolution).
    longest_gap: f64,
    from: Mac,
    to: Mac,
}

impl Transfer {
    /// "200000 B in 0.6 s", or "61440 B in 4.9 s, cut at the cap, longest with nothing
    /// arriving 3.2 s".
    fn moved(&self) -> String {
        let stall = if !self.complete || self.longest_gap >= 1.0 {
            format!(", longest with nothing arriving {:.1} s", self.longest_gap)
        } else {
            String::new()
        };
        let cut = if self.complete {
            ""
        } else {
            ", cut at the cap"
        };
        format!("{} B in {:.1} s{cut}{stall}", self.bytes, self.seconds)
    }
}

/// Default cap on one transfer: the seed's slowest rate (15 KB/s) moves 450 kB in it.
pub(crate) const DEFAULT_CAP: Duration = Duration::from_secs(30);

fn transfer(
    lab: &LabGuard,
    from: &str,
    to: &str,
    bytes: u64,
    cap: Duration,
) -> anyhow::Result<Transfer> {
    let before = lab.ports()?;
    // A mismatched link stalls for tens of seconds at times (the half end backs off, TCP's
    // retransmission timer doubles): the transfer is stopped at the cap and what arrived is
    // the measurement.
    let got = lab.tcp_capped(from, to, bytes, cap)?;
    let after = lab.ports()?;
    Ok(Transfer {
        kib_per_second: got.kib_per_second(),
        bytes: got.bytes,
        seconds: got.seconds,
        complete: got.complete,
        longest_gap: got.longest_gap,
        from: delta(&before, &after, from),
        to: delta(&before, &after, to),
    })
}

fn row(
    quantity: String,
    unit: &str,
    paper: Option<f64>,
    ours: f64,
    tolerance: &str,
    verdict: Verdict,
    why: String,
) -> Row {
    Row {
        quantity,
        unit: unit.into(),
        configured: None,
        paper,
        ours: Some(ours),
        tolerance: tolerance.into(),
        verdict,
        why,
    }
}

/// Counter rows of one end of one transfer, beside the seed's (None where it printed "tbd").
fn end_rows(rows: &mut Vec<Row>, label: &str, ours: Mac, paper: [Option<f64>; 6], half: bool) {
    let names = [
        "frames in",
        "frames out",
        "collisions",
        "late collisions",
        "CRC errors",
        "short packets",
    ];
    let values = [
        ours.received,
        ours.sent,
        ours.collisions,
        ours.late,
        ours.fcs,
        ours.runts,
    ];
    for i in 0..6 {
        let v = values[i];
        let (tolerance, verdict, why) = match (i, half) {
            (0 | 1, _) => ("-", Verdict::NotCompared, "counts scale with the file size (ours is smaller)".to_string()),
            (2 | 3, false) => (
                "exactly 0",
                Verdict::of(v == 0),
                "a full-duplex MAC ignores collisions and does not count them (Table 7 footnote)".into(),
            ),
            (4 | 5, true) => (
                "exactly 0",
                Verdict::of(v == 0),
                "the half end discards what it receives while it transmits: no CRC errors (Table 7: 0)".into(),
            ),
            (_, _) => match paper[i] {
                Some(p) if p > 0.0 => (
                    "> 0 (count scales with size)",
                    Verdict::of(v > 0),
                    if v > 0 {
                        "present, as in the seed".into()
                    } else {
                        "absent in this run: the seed's signature did not appear".into()
                    },
                ),
                _ => ("-", Verdict::NotCompared, "the seed counted none here; ours depends on timing".into()),
            },
        };
        rows.push(row(
            format!("{label}: {}", names[i]),
            "frames",
            paper[i],
            v as f64,
            tolerance,
            verdict,
            why,
        ));
    }
}

/// Seed 003 Table 7's rates: test 1 (PUT half -> full) and test 2 (PUT full -> half), KB/s.
const PAPER_HALF_TO_FULL: f64 = 15.0;
const PAPER_FULL_TO_HALF: f64 = 67.0;

/// `runs` rounds of one transfer each way across the mismatch lab in `file`.
fn mismatch_runs(
    file: &str,
    bytes: u64,
    runs: u32,
    cap: Duration,
) -> anyhow::Result<Vec<(Transfer, Transfer)>> {
    let lab = LabGuard::up(&super::lab_file(file)?)?;
    let mut out = Vec::new();
    for _ in 0..runs {
        let put_half = transfer(&lab, "half", "full", bytes, cap)?;
        let put_full = transfer(&lab, "full", "half", bytes, cap)?;
        out.push((put_half, put_full));
    }
    drop(lab);
    Ok(out)
}

fn spread(v: &[f64]) -> String {
    let list: Vec<String> = v.iter().map(|x| format!("{x:.1}")).collect();
    format!("runs: {}", list.join(", "))
}

/// Rate and asymmetry rows over all runs of one TCP: medians compared, every run listed.
fn rate_rows(
    rows: &mut Vec<Row>,
    label: &str,
    runs: &[(Transfer, Transfer)],
    bytes: u64,
    cap: Duration,
    tcp: &str,
) {
    let half: Vec<f64> = runs.iter().map(|r| r.0.kib_per_second).collect();
    let full: Vec<f64> = runs.iter().map(|r| r.1.kib_per_second).collect();
    for (quantity, v, paper, first) in [
        (
            "test 1, PUT half -> full: rate",
            &half,
            PAPER_HALF_TO_FULL,
            true,
        ),
        (
            "test 2, PUT full -> half: rate",
            &full,
            PAPER_FULL_TO_HALF,
            false,
        ),
    ] {
        let m = wirespeed_model::stats::median(v);
        let these: Vec<&Transfer> = runs
            .iter()
            .map(|r| if first { &r.0 } else { &r.1 })
            .collect();
        let incomplete = these.iter().filter(|t| !t.complete).count();
        let cut = if incomplete > 0 {
            format!(
                "; {incomplete} of {} transfer(s) stalled: cut at the {} s cap before {bytes} bytes (the rate counts what arrived)",
                runs.len(),
                cap.as_secs_f64()
            )
        } else {
            String::new()
        };
        let moved: Vec<String> = these.iter().map(|t| t.moved()).collect();
        rows.push(row(
            format!("{label}{quantity} (median)"),
            "KiB/s",
            Some(paper),
            m,
            "x0.5..x2 of paper",
            Verdict::of((0.5..=2.0).contains(&(m / paper))),
            format!(
                "{:.1}x the seed's with {tcp}; {} ({}){cut}",
                m / paper,
                spread(v),
                moved.join("; ")
            ),
        ));
    }
    let ratios: Vec<f64> = full
        .iter()
        .zip(&half)
        .map(|(f, h)| f / h.max(1e-9))
        .collect();
    let seed_way = ratios.iter().filter(|&&r| r > 1.0).count();
    let m = wirespeed_model::stats::median(&ratios);
    rows.push(row(
        format!("{label}asymmetry: rate full->half / half->full (median)"),
        "ratio",
        Some(PAPER_FULL_TO_HALF / PAPER_HALF_TO_FULL),
        m,
        "> 1 in every run (the seed's direction)",
        Verdict::of(seed_way == ratios.len()),
        format!(
            "half -> full was the slower direction in {seed_way} of {} runs ({}); the seed: 4.5x",
            ratios.len(),
            spread(&ratios)
        ),
    ));
}

pub(crate) fn run(options: &Options) -> anyhow::Result<Reproduction> {
    let bytes = options.size.unwrap_or(2_000_000);
    let runs = options.runs.unwrap_or(1);
    let cap = options.time.unwrap_or(DEFAULT_CAP);
    let mut comparisons = Vec::new();

    // The mismatch: host "half" (DUT01, 10-HALF) and host "full" (DUT02, 10-FULL), first with
    // this host's TCP, then with the 1990s profile in both namespaces.
    let linux = mismatch_runs("duplex-mismatch.toml", bytes, runs, cap)?;
    let old = mismatch_runs("duplex-mismatch-1990s.toml", bytes, runs, cap)?;
    let (put_half, put_full) = &linux[0];

    let mut rows = Vec::new();
    rate_rows(
        &mut rows,
        "",
        &linux,
        bytes,
        cap,
        "this host's TCP (SACK, RACK, fast retransmit)",
    );
    let mut test1 = Vec::new();
    end_rows(
        &mut test1,
        "test 1, half end (DUT01)",
        put_half.from,
        [
            Some(24987.0),
            Some(49888.0),
            Some(6087.0),
            Some(6088.0),
            Some(0.0),
            Some(0.0),
        ],
        true,
    );
    end_rows(
        &mut test1,
        "test 1, full end (DUT02)",
        put_half.to,
        [
            Some(43830.0),
            Some(31106.0),
            Some(0.0),
            Some(0.0),
            Some(3022.0),
            Some(1.0),
        ],
        false,
    );
    rows.extend(test1);
    let mut test2 = Vec::new();
    end_rows(
        &mut test2,
        "test 2, half end (DUT01)",
        put_full.to,
        [None, None, Some(3742.0), Some(0.0), Some(0.0), Some(0.0)],
        true,
    );
    end_rows(
        &mut test2,
        "test 2, full end (DUT02)",
        put_full.from,
        [None, None, Some(0.0), Some(0.0), Some(6.0), Some(40.0)],
        false,
    );
    rows.extend(test2);
    comparisons.push(Comparison {
        title: "Duplex mismatch (Table 7, tests 1 and 2), this host's TCP".into(),
        source: "seed 003 §8.4 Table 7: 50 MB FTP, Solaris 2.5.1, Intel 82558B".into(),
        method: format!(
            "library: lifecycle::up(labs/duplex-mismatch.toml), lifecycle::status counters before/after (first run); subprocess: ip netns exec <from> wirespeed serve -1 -p 0, ip netns exec <to> wirespeed tcp ADDR:PORT -R -n {bytes}B -i 100ms --json-stream (the receiver's count), each transfer cut at {} s, {runs} run(s) each way",
            cap.as_secs_f64()
        ),
        rows,
    });

    // The same mismatch with the seed's kind of TCP.
    let mut rows = Vec::new();
    rate_rows(
        &mut rows,
        "1990s TCP, ",
        &old,
        bytes,
        cap,
        "the 1990s profile (no SACK, RACK, TLP, F-RTO or timestamps; Reno)",
    );
    let (h, f) = (&old[0].0, &old[0].1);
    rows.push(row(
        "1990s TCP, test 1, half end: late collisions".into(),
        "frames",
        Some(6088.0),
        h.from.late as f64,
        "> 0 (count scales with size)",
        Verdict::of(h.from.late > 0),
        "the half end's frames overlapped by the full end's ACKs".into(),
    ));
    rows.push(row(
        "1990s TCP, test 1, full end: CRC errors + short".into(),
        "frames",
        Some(3023.0),
        (h.to.fcs + h.to.runts) as f64,
        "> 0 (count scales with size)",
        Verdict::of(h.to.fcs + h.to.runts > 0),
        "what the full end received truncated by those collisions".into(),
    ));
    rows.push(row(
        "1990s TCP, test 2, full end: collisions".into(),
        "frames",
        Some(0.0),
        f.from.collisions as f64,
        "exactly 0",
        Verdict::of(f.from.collisions == 0),
        "a full-duplex MAC ignores collisions and does not count them (Table 7 footnote)".into(),
    ));
    comparisons.push(Comparison {
        title: "Duplex mismatch (Table 7) with a 1990s TCP".into(),
        source: "seed 003 §5 and §8.4: lost segments repaired by the retransmission timer; Table 7 rates".into(),
        method: format!(
            "as above across labs/duplex-mismatch-1990s.toml (tcp_profile = \"1990s\" in both namespaces), {runs} run(s) each way"
        ),
        rows,
    });

    // The same link with both ends half duplex.
    let file = super::lab_file("duplex-matched.toml")?;
    let lab = LabGuard::up(&file)?;
    let (a, b) = matched_nodes(&lab)?;
    let ab = transfer(&lab, &a, &b, bytes, cap)?;
    let ba = transfer(&lab, &b, &a, bytes, cap)?;
    drop(lab);
    let mut rows = Vec::new();
    for (t, label) in [(&ab, format!("{a} -> {b}")), (&ba, format!("{b} -> {a}"))] {
        let r = t.kib_per_second / 1000.0;
        rows.push(row(
            format!("PUT {label}: rate"),
            "KiB/s",
            Some(1000.0),
            t.kib_per_second,
            "+-20%",
            Verdict::of((r - 1.0).abs() <= 0.2),
            format!(
                "Table 6 test 1: 1000 KB/s, 10% under full duplex; the half-duplex envelope is 1,099 KiB/s ({})",
                t.moved()
            ),
        ));
        for (end, mac) in [("sender", t.from), ("receiver", t.to)] {
            rows.push(row(
                format!("PUT {label}, {end}: late collisions"),
                "frames",
                Some(0.0),
                mac.late as f64,
                "exactly 0",
                Verdict::of(mac.late == 0),
                "matched half duplex: every collision falls within the slot time".into(),
            ));
            rows.push(row(
                format!("PUT {label}, {end}: CRC errors + short"),
                "frames",
                Some(0.0),
                (mac.fcs + mac.runts) as f64,
                "exactly 0",
                Verdict::of(mac.fcs + mac.runts == 0),
                "both ends jam and back off: nothing arrives damaged".into(),
            ));
        }
        // Both stations of a collision count it (Table 6: 12,967 on each side), so the
        // sender's own count is the number of collisions.
        let per_frame = t.from.collisions as f64 / (t.from.sent.max(1)) as f64;
        rows.push(row(
            format!("PUT {label}: collisions per data frame"),
            "ratio",
            Some(12967.0 / 37744.0),
            per_frame,
            "-",
            Verdict::NotCompared,
            "Table 6 test 1: 12,967 collisions for 37,744 frames out; ours depends on when the ACKs meet the data".into(),
        ));
    }
    comparisons.push(Comparison {
        title: "Matched half duplex (Table 6, test 1)".into(),
        source: "seed 003 §8.3 Table 6: 50 MB FTP at 10-HALF both ends".into(),
        method: format!(
            "library: lifecycle::up(labs/duplex-matched.toml); subprocess: wirespeed serve / tcp -R -n {bytes}B --json-stream in the lab's namespaces, each transfer cut at {} s",
            cap.as_secs_f64()
        ),
        rows,
    });

    let truth = vec![
        setting(
            "mismatch link (labs/duplex-mismatch.toml)",
            "half (10-HALF, CSMA/CD) - full (10-FULL), 10 Mbit/s, 100 m",
        ),
        setting(
            "matched link (labs/duplex-matched.toml)",
            format!("{a} - {b}, both 10-HALF, 10 Mbit/s, 100 m"),
        ),
        setting(
            "transfer size",
            format!("{bytes} bytes each way (the seed: 50 MB)"),
        ),
        setting(
            "TCP",
            "this host's Linux (SACK, RACK, fast retransmit, its default congestion control); then the 1990s profile in the mismatch lab's namespaces (tcp_sack, tcp_dsack, tcp_recovery, tcp_early_retrans, tcp_frto, tcp_timestamps, tcp_window_scaling, tcp_ecn = 0, tcp_no_metrics_save = 1, reno)",
        ),
        setting("runs", format!("{runs} each way per TCP")),
        setting(
            "cap per transfer",
            format!(
                "{} s (--time): a transfer that stalls is cut there and counted by what arrived",
                cap.as_secs_f64()
            ),
        ),
    ];
    let notes = vec![format!(
        "the rates are {bytes}-byte transfers, not the seed's 50 MB; counters are per transfer (emulator counters after minus before)"
    )];
    Ok(Reproduction::new(
        Name::DuplexMismatch,
        truth,
        comparisons,
        notes,
    ))
}

/// The two hosts of the matched link, in file order.
fn matched_nodes(lab: &LabGuard) -> anyhow::Result<(String, String)> {
    let hosts: Vec<&str> = lab
        .record
        .nodes
        .iter()
        .filter(|n| n.kind == "host")
        .map(|n| n.name.as_str())
        .collect();
    match hosts.as_slice() {
        [a, b] => Ok((a.to_string(), b.to_string())),
        _ => anyhow::bail!(
            "labs/duplex-matched.toml should have two hosts, has {}",
            hosts.len()
        ),
    }
}
