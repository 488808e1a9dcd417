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
//! So the mismatch is run three times: with this host's TCP, with the `1990s` TCP profile
//! (labs/duplex-mismatch-1990s.toml: no SACK, RACK, TLP, F-RTO or timestamps, Reno), and with
//! the seed's hosts (labs/duplex-mismatch-1990s-hosts.toml: 405 us per frame from Table 8, the
//! 1990s profile with timestamps so that the timer follows every ACK as §5 describes, and
//! Solaris 2.5.1's 8 KB window), each `--runs` times, with every run's rate listed. Each
//! transfer's TCP counters (timeouts, fast retransmits, delayed ACKs) are read in the
//! namespaces, and a rate row outside the seed's 2x prints the measured cause beside it.
//!
//! A stalling link is the subject, so a stall is a measurement, not a failure: each transfer
//! is cut at a time cap (`--time`, default 30 s) and counted by its receiver as it goes
//! (`tcp -R --json-stream`), so neither a byte count that cannot finish nor the results
//! exchange on the control connection (which crosses the same stalled link) can hang the run;
//! a cut transfer's row says what arrived in how long, and the longest time nothing did.

use std::time::Duration;

use super::{Comparison, Name, Options, Reproduction, Row, Verdict, setting};

#[doc(hidden)]
pub mod transfer;

use transfer::{DEFAULT_CAP, Mac, Transfer, matched_transfers, mismatch_runs};

/// The reason of the row "seed's hosts, test 2, full end: timeouts": the seed's mechanism
/// when the timer repaired more losses than fast retransmit; otherwise the measured cause
/// (issue 21 item 3, bench/RESULTS.md "what each side's TCP did"): each fast retransmit is
/// three duplicate ACKs from the half end reaching the full end, which the half end's MAC
/// queued while the full end sent and delivered once its 8,688-byte window was spent, so the
/// window did not drain to the timer. `f` is test 2, full -> half: its receiver (`to`) is the
/// half end.
#[doc(hidden)]
pub fn timer_reason(f: &Transfer) -> String {
    let (timeouts, fast) = (f.sender.timeouts, f.sender.fast_retrans);
    if timeouts > fast {
        format!(
            "{timeouts} timeouts, {fast} fast retransmits: the half end cannot ACK while the full end sends, so the window drains and the timer repairs the loss"
        )
    } else {
        format!(
            "{timeouts} timeouts, {fast} fast retransmits; measured cause: each fast retransmit is three duplicate ACKs that reached the full end: the half end ({} collisions, {} late, in this transfer) queued its ACKs while the full end sent and delivered them once the full end's window was spent, so the window did not drain to the timer as the seed's §8.4 says its did; {} segments resent of {} sent",
            f.to.collisions, f.to.late, f.sender.retrans_segs, f.sender.out_segs
        )
    }
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
#[doc(hidden)]
pub fn end_rows(rows: &mut Vec<Row>, label: &str, ours: Mac, paper: [Option<f64>; 6], half: bool) {
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
                    } else if i == 4 && ours.runts > 0 {
                        format!(
                            "absent in this run; measured cause: every damaged frame this end received ({}) was cut short (short packets): the other end's collisions came before 64 bytes of its frames, so none arrived long enough to fail its CRC (the seed's test 2: 6 CRC errors against 40 short packets, the same split nearer the edge)",
                            ours.runts
                        )
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

/// The window of the seed's hosts: Solaris 2.5.1's default tcp_xmit_hiwat and tcp_recv_hiwat,
/// 8,192 bytes (not in the seed; its Table 4 names the OS), which Solaris advertises whole.
/// Linux grants double the `tcp -w` request (16 KiB buffers) and advertises 8,688 bytes of it
/// (6 segments of 1,448), the nearest to 8,192; `-w 4096` would advertise only 2 segments.
#[doc(hidden)]
pub const SOLARIS_WINDOW: &str = "8192";

/// The most Linux advertises for `tcp -w 8192`: 6 segments of 1,448 bytes out of the 16 KiB
/// it grants (its receive buffer's payload share), the nearest it comes to Solaris's 8,192.
#[doc(hidden)]
pub const SOLARIS_WINDOW_ADVERTISED: u32 = 6 * 1448;

/// The least window that still stands for Solaris's 8,192 bytes: one 1,448-byte segment short
/// of it. A sender that saw less (a third of it, two segments, was once accepted) ran with
/// another window than the seed's hosts, so its rates would not test what they claim.
const SOLARIS_WINDOW_LEAST: u32 = 8192 - 1448;

/// The "window the sender saw" row of a comparison that asks for Solaris's 8 KB window: the
/// largest `tcpi_snd_wnd` among the transfers that finished (a stalled one prints no
/// document), which must be within a segment of the 8,192 asked and not pass what Linux
/// advertises for `-w 8192`; without the flag the receiver's buffer autotunes and advertises
/// tens of kilobytes.
#[doc(hidden)]
pub fn window_row(label: &str, runs: &[(Transfer, Transfer)]) -> Row {
    let seen: Vec<u32> = runs
        .iter()
        .flat_map(|(a, b)| [a.peer_window, b.peer_window])
        .flatten()
        .collect();
    let largest = seen.iter().copied().max();
    Row {
        quantity: format!("{label}window the sender saw (largest, finished transfers)"),
        unit: "bytes".into(),
        configured: Some(SOLARIS_WINDOW.parse().expect("a number")),
        paper: None,
        ours: largest.map(f64::from),
        tolerance: format!(
            "{SOLARIS_WINDOW_LEAST}-{SOLARIS_WINDOW_ADVERTISED} (within a segment of the 8192 asked, at most the 6 segments Linux advertises)"
        ),
        verdict: match largest {
            None => Verdict::NotCompared,
            Some(w) => Verdict::of((SOLARIS_WINDOW_LEAST..=SOLARIS_WINDOW_ADVERTISED).contains(&w)),
        },
        why: match largest {
            None => "no transfer finished, so no sender reported its TCP_INFO".into(),
            Some(_) => format!(
                "tcpi_snd_wnd at the end of {} of {} transfers; Solaris 2.5.1's default tcp_xmit_hiwat / tcp_recv_hiwat is 8,192 bytes (not in the seed: its Table 4 names the OS)",
                seen.len(),
                2 * runs.len()
            ),
        },
    }
}

/// Seed 003 Table 7's rates: test 1 (PUT half -> full) and test 2 (PUT full -> half), KB/s.
const PAPER_HALF_TO_FULL: f64 = 15.0;
const PAPER_FULL_TO_HALF: f64 = 67.0;

fn spread(v: &[f64]) -> String {
    let list: Vec<String> = v.iter().map(|x| format!("{x:.1}")).collect();
    format!("runs: {}", list.join(", "))
}

/// Seed 003 Table 7, test 1: frames the full end received per late collision of the half
/// end (43,830 / 6,088): what one lost window cost the seed's TCP one timeout for.
const PAPER_TEST1_FRAMES_PER_LATE: f64 = 43830.0 / 6088.0;

/// Why a rate row is outside, from what the transfers' TCPs and MACs counted: which repair
/// (timer or fast retransmit) the sender used, and how much arrived per timeout.
fn rate_cause(these: &[&Transfer], too_fast: bool, half_sends: bool) -> String {
    let sum = |f: fn(&Transfer) -> u64| these.iter().map(|t| f(t)).sum::<u64>();
    // Seconds per collision of the half end, ours and the seed's (Table 7: test 1 3,400 s for
    // 6,088 late collisions, test 2 750 s for 3,742 collisions).
    let seconds: f64 = these.iter().map(|t| t.seconds).sum();
    let collisions = sum(|t| t.from.collisions.max(t.to.collisions));
    let per = if half_sends {
        3400.0 / 6088.0
    } else {
        750.0 / 3742.0
    };
    let per_collision = format!(
        "; {:.3} s per collision of the half end against the seed's {per:.2} s",
        seconds / collisions.max(1) as f64
    );
    let timeouts = sum(|t| t.sender.timeouts);
    let fast = sum(|t| t.sender.fast_retrans);
    let arrived = sum(|t| t.receiver.in_segs);
    let delayed = sum(|t| t.receiver.delayed_acks);
    let acks = sum(|t| t.receiver.out_segs);
    if too_fast {
        if fast > timeouts {
            format!(
                "measured cause: the sender repaired its losses by fast retransmit ({fast}) rather than by its timer ({timeouts} timeouts); the seed's TCP waited for the timer (§8.4: its window shrank to zero, no ACK could reach it){per_collision}"
            )
        } else {
            format!(
                "measured cause: {timeouts} timeouts and {fast} fast retransmits cost less than the seed's: {:.1} segments arrived per timeout{per_collision}",
                arrived as f64 / timeouts.max(1) as f64
            )
        }
    } else if half_sends {
        format!(
            "measured cause: {timeouts} timeouts, {:.1} segments arrived per timeout against the seed's {PAPER_TEST1_FRAMES_PER_LATE:.1} frames per late collision; the receiver delayed {delayed} of its {acks} ACKs (Linux acknowledges every segment after a timeout or out of order, so the ACK of a window's first segment meets the second as a late collision, where the seed's receiver acknowledged every other segment){per_collision}",
            arrived as f64 / timeouts.max(1) as f64
        )
    } else {
        format!(
            "measured cause: {timeouts} timeouts and {fast} fast retransmits, {:.1} segments arrived per timeout{per_collision}",
            arrived as f64 / timeouts.max(1) as f64
        )
    }
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
        let moved: Vec<String> = these
            .iter()
            .map(|t| format!("{}: {}", t.moved(), t.tcp()))
            .collect();
        let within = (0.5..=2.0).contains(&(m / paper));
        let cause = if within {
            String::new()
        } else {
            format!("; {}", rate_cause(&these, m > paper, first))
        };
        rows.push(row(
            format!("{label}{quantity} (median)"),
            "KiB/s",
            Some(paper),
            m,
            "x0.5..x2 of paper",
            Verdict::of(within),
            format!(
                "{:.1}x the seed's with {tcp}{cause}; {} ({}){cut}",
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
    let repairs = |t: &[&Transfer]| {
        let timeouts: u64 = t.iter().map(|x| x.sender.timeouts).sum();
        let fast: u64 = t.iter().map(|x| x.sender.fast_retrans).sum();
        format!("{timeouts} timeouts, {fast} fast retransmits")
    };
    let firsts: Vec<&Transfer> = runs.iter().map(|r| &r.0).collect();
    let seconds: Vec<&Transfer> = runs.iter().map(|r| &r.1).collect();
    let cause = if seed_way == ratios.len() {
        String::new()
    } else {
        format!(
            "; measured cause: the half end's sender repaired its losses with {} and its half end met {} late of {} collisions, the full end's with {}",
            repairs(&firsts),
            firsts.iter().map(|t| t.from.late).sum::<u64>(),
            firsts.iter().map(|t| t.from.collisions).sum::<u64>(),
            repairs(&seconds)
        )
    };
    rows.push(row(
        format!("{label}asymmetry: rate full->half / half->full (median)"),
        "ratio",
        Some(PAPER_FULL_TO_HALF / PAPER_HALF_TO_FULL),
        m,
        "> 1 in every run (the seed's direction)",
        Verdict::of(seed_way == ratios.len()),
        format!(
            "half -> full was the slower direction in {seed_way} of {} runs ({}); the seed: 4.5x{cause}",
            ratios.len(),
            spread(&ratios)
        ),
    ));
}

/// What every transfer of this reproduction is: its size, how many each way, its cap.
#[derive(Clone, Copy)]
struct Transfers {
    bytes: u64,
    runs: u32,
    cap: Duration,
}

pub(crate) fn run(options: &Options) -> anyhow::Result<Reproduction> {
    let plan = Transfers {
        bytes: options.size.unwrap_or(2_000_000),
        runs: options.runs.unwrap_or(1),
        cap: options.time.unwrap_or(DEFAULT_CAP),
    };
    let Transfers { bytes, runs, cap } = plan;
    // The mismatch: host "half" (DUT01, 10-HALF) and host "full" (DUT02, 10-FULL), first with
    // this host's TCP, then with the 1990s profile in both namespaces.
    let linux = mismatch_runs("duplex-mismatch.toml", bytes, runs, cap, &[])?;
    let old = mismatch_runs("duplex-mismatch-1990s.toml", bytes, runs, cap, &[])?;
    let hosts = mismatch_runs(
        "duplex-mismatch-1990s-hosts.toml",
        bytes,
        runs,
        cap,
        &["-w", SOLARIS_WINDOW],
    )?;
    let mut comparisons = vec![
        this_hosts_tcp(plan, &linux),
        a_1990s_tcp(plan, &old),
        the_seeds_hosts(plan, &hosts),
    ];
    let (matched, a, b) = matched_half_duplex(plan)?;
    comparisons.push(matched);
    let notes = vec![format!(
        "the rates are {bytes}-byte transfers, not the seed's 50 MB; counters are per transfer (emulator counters after minus before)"
    )];
    Ok(Reproduction::new(
        Name::DuplexMismatch,
        ground_truth(plan, &a, &b),
        comparisons,
        notes,
    ))
}

/// The mismatch with this host's TCP: rates against Table 7 and each end's counters in both
/// tests (the first run's).
fn this_hosts_tcp(plan: Transfers, linux: &[(Transfer, Transfer)]) -> Comparison {
    let Transfers { bytes, runs, cap } = plan;
    let (put_half, put_full) = &linux[0];
    let mut rows = Vec::new();
    rate_rows(
        &mut rows,
        "",
        linux,
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
    Comparison {
        title: "Duplex mismatch (Table 7, tests 1 and 2), this host's TCP".into(),
        source: "seed 003 §8.4 Table 7: 50 MB FTP, Solaris 2.5.1, Intel 82558B".into(),
        method: format!(
            "library: lifecycle::up(labs/duplex-mismatch.toml), lifecycle::status counters before/after (first run); subprocess: ip netns exec <from> wirespeed serve -1 -p 0, ip netns exec <to> wirespeed tcp ADDR:PORT -R -n {bytes}B -i 100ms --json-stream (the receiver's count), each transfer cut at {} s, {runs} run(s) each way",
            cap.as_secs_f64()
        ),
        rows,
    }
}

/// The same mismatch with the seed's kind of TCP.
fn a_1990s_tcp(plan: Transfers, old: &[(Transfer, Transfer)]) -> Comparison {
    let Transfers { bytes, runs, cap } = plan;
    let mut rows = Vec::new();
    rate_rows(
        &mut rows,
        "1990s TCP, ",
        old,
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
        if h.from.late > 0 {
            "the half end's frames overlapped by the full end's ACKs".into()
        } else {
            format!(
                "measured cause: {} collisions at the half end, none late: these hosts answer at once, so the full end's ACK starts within the first 64 bytes of the half end's next frame (an early collision, retried); the seed's hosts, slower than one gap, met it late (see the comparison with the seed's hosts)",
                h.from.collisions
            )
        },
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
    Comparison {
        title: "Duplex mismatch (Table 7) with a 1990s TCP".into(),
        source: "seed 003 §5 and §8.4: lost segments repaired by the retransmission timer; Table 7 rates".into(),
        method: format!(
            "as above across labs/duplex-mismatch-1990s.toml (tcp_profile = \"1990s\" in both namespaces), {runs} run(s) each way"
        ),
        rows,
    }
}

/// The same mismatch with the seed's hosts: their TCP as the seed describes it (§5: the
/// timer follows the round trip measured on every ACK), their per-frame cost (Table 8) and
/// Solaris 2.5.1's 8 KB windows.
fn the_seeds_hosts(plan: Transfers, hosts: &[(Transfer, Transfer)]) -> Comparison {
    let Transfers { bytes, runs, cap } = plan;
    let mut rows = Vec::new();
    rate_rows(
        &mut rows,
        "seed's hosts, ",
        hosts,
        bytes,
        cap,
        "the seed's hosts (1990s profile with RTT measured on every ACK, 405 us per frame, an 8 KB window)",
    );
    rows.push(window_row("seed's hosts, ", hosts));
    let (h, f) = (&hosts[0].0, &hosts[0].1);
    rows.push(row(
        "seed's hosts, test 1, half end: late collisions / collisions".into(),
        "ratio",
        Some(6088.0 / 6087.0),
        h.from.late as f64 / h.from.collisions.max(1) as f64,
        ">= 0.8 (the seed: every collision late)",
        Verdict::of(h.from.late as f64 >= 0.8 * h.from.collisions.max(1) as f64),
        format!(
            "{} of {} collisions late: the full end's ACK, 810 us after a frame, lands inside the half end's next one",
            h.from.late, h.from.collisions
        ),
    ));
    rows.push(row(
        "seed's hosts, test 2, full end: timeouts".into(),
        "count",
        None,
        f.sender.timeouts as f64,
        "> fast retransmits (§8.4: it waits for the TCP timer)",
        Verdict::of(f.sender.timeouts > f.sender.fast_retrans),
        timer_reason(f),
    ));
    Comparison {
        title: "Duplex mismatch (Table 7) with the seed's hosts".into(),
        source: "seed 003 §5, §8.4 Table 7 (rates, counters), Table 4 (identical IBM 300PLs, Solaris 2.5.1), Table 8 (2,400 KB/s at 100 Mbit/s: the hosts' cost)".into(),
        method: format!(
            "as above across labs/duplex-mismatch-1990s-hosts.toml (1990s profile with tcp_timestamps = 1, 405 us per frame each way), tcp -w {SOLARIS_WINDOW} (16 KiB granted each end, 8,688 bytes advertised), TCP counters from /proc/net/snmp and netstat in each namespace, {runs} run(s) each way"
        ),
        rows,
    }
}

/// The same link with both ends half duplex (Table 6): its lab, one transfer each way; the
/// comparison and the two hosts' names.
fn matched_half_duplex(plan: Transfers) -> anyhow::Result<(Comparison, String, String)> {
    let Transfers { bytes, cap, .. } = plan;
    let (a, b, ab, ba) = matched_transfers(bytes, cap)?;
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
    let comparison = Comparison {
        title: "Matched half duplex (Table 6, test 1)".into(),
        source: "seed 003 §8.3 Table 6: 50 MB FTP at 10-HALF both ends".into(),
        method: format!(
            "library: lifecycle::up(labs/duplex-matched.toml); subprocess: wirespeed serve / tcp -R -n {bytes}B --json-stream in the lab's namespaces, each transfer cut at {} s",
            cap.as_secs_f64()
        ),
        rows,
    };
    Ok((comparison, a, b))
}

/// The links, transfers and TCPs this reproduction configured; `a` and `b` the matched
/// link's hosts.
fn ground_truth(plan: Transfers, a: &str, b: &str) -> Vec<super::Setting> {
    let Transfers { bytes, runs, cap } = plan;
    vec![
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
        setting(
            "seed's hosts (labs/duplex-mismatch-1990s-hosts.toml)",
            format!(
                "1990s profile with tcp_timestamps = 1 (the seed's §5 timer: the round trip measured on every ACK), 405 us per frame each way (Table 8), tcp -w {SOLARIS_WINDOW}: an 8 KB window (Solaris 2.5.1's default 8,192-byte tcp_xmit_hiwat / tcp_recv_hiwat; Linux advertises 8,688 of its 16 KiB buffer)"
            ),
        ),
        setting("runs", format!("{runs} each way per TCP")),
        setting(
            "cap per transfer",
            format!(
                "{} s (--time): a transfer that stalls is cut there and counted by what arrived",
                cap.as_secs_f64()
            ),
        ),
    ]
}
