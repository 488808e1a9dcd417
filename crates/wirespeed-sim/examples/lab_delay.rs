//! Issue 21 item 5 experiments: the lab's shared-medium model (`segment`, 24 stations of
//! labs/boggs-24.toml's 914.4 m at 0.77 c, the first H kept full) against the simulator's
//! (`wirespeed_sim::run`, H saturated stations), both in virtual time, seed 000's delay (first
//! attempt to the end of the successful transmission). bench/RESULTS.md has the figures.
//!
//! `cargo run --release -p wirespeed-sim --example lab_delay [SECONDS] [SEEDS]`: per seed,
//! the simulator (even and at the lab's positions) and the segment model side by side.
//! `... lab_delay spread SECONDS SEEDS`: how much a window's mean delay moves between seeds.
//! `... lab_delay bursts SECONDS SEEDS`: the segment model with each station's queue topped up
//! only every 1-20 ms (generators that fall behind), its mean delay and collisions per frame.
use wirespeed_sim::bus::{Cable, Placement};
use wirespeed_sim::mac::{MacDuplex, MacParams};
use wirespeed_sim::segment::{Segment, SegmentOutput, SegmentSetup};
use wirespeed_sim::time::{SimSpan, SimTime};
use wirespeed_sim::{Arrivals, HostModel, LengthMix, Scenario};

const LEN: f64 = 914.4;
const VF: f64 = 0.77;

fn sim(h: usize, bytes: u64, placement: Placement, secs: f64, seed: u64) -> (f64, f64, f64, u64) {
    let s = Scenario {
        mac: MacParams::table_2(10),
        cable: Cable {
            length_m: LEN,
            velocity_factor: VF,
            attach_delay_ns: 0.0,
            tap_delay_ns: 0.0,
            placement,
        },
        hosts: h,
        host: HostModel::ready_at_once(15),
        lengths: LengthMix::Fixed { bytes },
        allow_oversize: false,
        arrivals: Arrivals::Saturated,
        warmup_ns: 200_000_000,
        measure_ns: (secs * 1e9) as u64,
        seed,
    };
    let r = wirespeed_sim::run(&s).unwrap();
    (
        r.delay_mean_seconds * 1e3,
        r.delay_std_dev_seconds * 1e3,
        r.collisions_per_packet,
        r.dropped,
    )
}

/// The lab's model: `total` stations even on the cable, the first `h` kept full.
fn seg(h: usize, total: usize, bytes: u64, secs: f64, seed: u64) -> (f64, f64, f64, u64) {
    seg_refill(h, total, bytes, secs, seed, 0)
}

/// As [`seg`], but each station's queue is topped up only every `refill_us` (each station at
/// its own phase): generators that run in bursts, as the lab's do on a busy machine.
fn seg_refill(
    h: usize,
    total: usize,
    bytes: u64,
    secs: f64,
    seed: u64,
    refill_us: u64,
) -> (f64, f64, f64, u64) {
    let setup = SegmentSetup {
        mac: MacParams::table_2(10),
        duplex: vec![MacDuplex::Half; total],
        cable: Cable {
            length_m: LEN,
            velocity_factor: VF,
            attach_delay_ns: 0.0,
            tap_delay_ns: 0.0,
            placement: Placement::Even,
        },
        queue_frames: 15,
        seed,
    };
    let mut s = Segment::new(&setup);
    let bits = (bytes.max(60) + 4 + 8) * 8;
    let step = SimSpan::from_ns(20_000);
    let warm = SimTime::ZERO + SimSpan::from_ns(200_000_000);
    let end = warm + SimSpan::from_seconds(secs);
    let mut t = SimTime::ZERO;
    let mut tag = 0u64;
    let (mut n, mut sum, mut sq, mut coll0, mut drop0) = (0u64, 0.0, 0.0, 0u64, 0u64);
    let mut sent0 = 0u64;
    let mut started = false;
    while t < end {
        for i in 0..h {
            if refill_us > 0 {
                let phase = (i as u64 * 7919 * 1000) % (refill_us * 1000);
                let k = (t.ps() / 1_000_000 + phase / 1000) / refill_us;
                let k_next = ((t + step).ps() / 1_000_000 + phase / 1000) / refill_us;
                if k == k_next {
                    continue;
                }
            }
            let c = s.counters(i);
            let mut q = c.queue_frames;
            while q < 15 {
                s.offer(t, i, tag, bits);
                tag += 1;
                q += 1;
            }
        }
        t += step;
        s.advance(t);
        if !started && t >= warm {
            started = true;
            coll0 = (0..h).map(|i| s.counters(i).collisions).sum();
            drop0 = (0..h).map(|i| s.counters(i).excessive_collisions).sum();
            sent0 = (0..h).map(|i| s.counters(i).sent).sum();
            s.drain();
            continue;
        }
        for o in s.drain() {
            if let SegmentOutput::Sent {
                at, first_attempt, ..
            } = o
                && started
            {
                let d = at.since(first_attempt).seconds() * 1e3;
                n += 1;
                sum += d;
                sq += d * d;
            }
        }
    }
    let coll: u64 = (0..h).map(|i| s.counters(i).collisions).sum::<u64>() - coll0;
    let drops: u64 = (0..h)
        .map(|i| s.counters(i).excessive_collisions)
        .sum::<u64>()
        - drop0;
    let sent: u64 = (0..h).map(|i| s.counters(i).sent).sum::<u64>() - sent0;
    let mean = sum / n as f64;
    (
        mean,
        (sq / n as f64 - mean * mean).max(0.0).sqrt(),
        coll as f64 / sent as f64,
        drops,
    )
}

fn spread() {
    let a: Vec<String> = std::env::args().collect();
    let secs: f64 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let seeds: u64 = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(12);
    for bytes in [512u64, 1514] {
        for h in [2usize, 8] {
            let pos: Vec<f64> = (0..h).map(|i| LEN * i as f64 / 23.0).collect();
            let mut sims = Vec::new();
            let mut segs = Vec::new();
            let mut sds = Vec::new();
            for seed in 1..=seeds {
                let r = sim(
                    h,
                    bytes,
                    Placement::Positions {
                        metres: pos.clone(),
                    },
                    secs,
                    seed,
                );
                sims.push(r.0);
                sds.push(r.1);
                segs.push(seg(h, 24, bytes, secs, seed).0);
            }
            sds.sort_by(f64::total_cmp);
            println!(
                "  sim per-run delay sd, ms: min {:.3} median {:.3} max {:.3}",
                sds[0],
                sds[sds.len() / 2],
                sds[sds.len() - 1]
            );
            let st = |v: &[f64]| {
                let m = v.iter().sum::<f64>() / v.len() as f64;
                let sd = (v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() - 1) as f64)
                    .sqrt();
                let mn = v.iter().cloned().fold(f64::INFINITY, f64::min);
                let mx = v.iter().cloned().fold(0.0, f64::max);
                format!(
                    "mean {m:.3} sd {sd:.3} ({:.1}%) min {mn:.3} max {mx:.3}",
                    sd / m * 100.0
                )
            };
            println!(
                "{bytes} B {h} hosts {secs} s x {seeds} seeds: sim {} | segment {}",
                st(&sims),
                st(&segs)
            );
        }
    }
}

fn bursts() {
    let a: Vec<String> = std::env::args().collect();
    let secs: f64 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let seeds: u64 = a.get(3).and_then(|s| s.parse().ok()).unwrap_or(8);
    for bytes in [512u64, 1514] {
        for h in [2usize, 8] {
            for refill in [0u64, 1_000, 5_000, 10_000, 20_000] {
                let mut m = Vec::new();
                let mut sd = Vec::new();
                let mut cpf = Vec::new();
                for seed in 1..=seeds {
                    let r = seg_refill(h, 24, bytes, secs, seed, refill);
                    m.push(r.0);
                    sd.push(r.1);
                    cpf.push(r.2);
                }
                let avg = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
                println!(
                    "{bytes} B {h} hosts, queues topped up every {:>5} us: delay mean {:.3} ms, per-window sd {:.3} ms, collisions/frame {:.3}",
                    refill,
                    avg(&m),
                    avg(&sd),
                    avg(&cpf)
                );
            }
        }
    }
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("bursts") {
        return bursts();
    }
    if std::env::args().nth(1).as_deref() == Some("spread") {
        return spread();
    }
    let a: Vec<String> = std::env::args().collect();
    let secs: f64 = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let seeds: u64 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(3);
    println!(
        "{secs} s per run, seeds 1..={seeds}; delay ms mean / sd, collisions per frame, drops"
    );
    for bytes in [512u64, 1514] {
        for h in [2usize, 8, 24] {
            let pos: Vec<f64> = (0..h).map(|i| LEN * i as f64 / 23.0).collect();
            for seed in 1..=seeds {
                let a = sim(h, bytes, Placement::Even, secs, seed);
                let b = sim(
                    h,
                    bytes,
                    Placement::Positions {
                        metres: pos.clone(),
                    },
                    secs,
                    seed,
                );
                let c = seg(h, h, bytes, secs, seed);
                let d = seg(h, 24, bytes, secs, seed);
                println!(
                    "{bytes} B {h:2} hosts seed {seed}: sim even {:.3}/{:.3} {:.3} {} | sim s1..s{h} of 24 {:.3}/{:.3} {:.3} {} | segment {h} even {:.3}/{:.3} {:.3} {} | segment first {h} of 24 {:.3}/{:.3} {:.3} {}",
                    a.0, a.1, a.2, a.3, b.0, b.1, b.2, b.3, c.0, c.1, c.2, c.3, d.0, d.1, d.2, d.3
                );
            }
        }
    }
}
