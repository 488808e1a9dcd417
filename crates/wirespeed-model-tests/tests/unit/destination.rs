use wirespeed_model::bestcase::{self, AnalysisParams, Observation};
use wirespeed_model::destination::*;
use wirespeed_model::perhop::Separation;
use wirespeed_model::stats::SplitMix64;

const P: AnalysisParams = AnalysisParams {
    bootstrap_replicates: 20,
    confidence: 0.95,
    seed: 5,
    min_step_ms: 0.005,
};

/// One router then the destination, probed as `probe --hops --udp` does (rounds over
/// every series and size, 16 sizes from 80 to 1500 bytes, 32 probes each): link 1 costs
/// `out[0]` a byte going out and `back[0]` coming back, link 2 `out[1]` and `back[1]`;
/// the router quotes at most 576 bytes, the destination echoes ICMP in its kernel and the
/// agent answers 20 us later (its wake-up) with the whole echo or a 60-byte short reply.
/// Every probe queues an exponential delay of mean 30 us above its floor.
/// Returns (ICMP observations, agent observations).
fn two_hops(out: [f64; 2], back: [f64; 2], seed: u64) -> (Vec<Observation>, Vec<Observation>) {
    let fixed = [0.3, 0.2];
    let mut rng = SplitMix64::new(seed);
    let sizes: Vec<usize> = (0..16).map(|i| 80 + (1500 - 80) * i / 15).collect();
    let (mut icmp, mut agent) = (Vec::new(), Vec::new());
    let mut t = 0.0;
    for _ in 0..32 {
        // 0, 1: ICMP to the router and the destination; 2, 3: the agent's echo and short.
        for series in 0..4 {
            let mut order = sizes.clone();
            rng.shuffle(&mut order);
            for size in order {
                let k = series.min(1);
                let returned = match series {
                    0 => size.min(548) + 28,
                    3 => 60,
                    _ => size,
                };
                let u: f64 = out[..=k].iter().sum();
                let v: f64 = back[..=k].iter().sum();
                let f: f64 = fixed[..=k].iter().sum();
                let turnaround = if series >= 2 { 0.020 } else { 0.0 };
                let queue = -0.03 * (1.0 - rng.next_f64()).ln();
                t += 0.002;
                let o = Observation {
                    ttl: (k + 1) as u8,
                    sent_bytes: size,
                    returned_bytes: returned,
                    rtt_ms: Some(
                        2.0 * f + u * size as f64 + v * returned as f64 + turnaround + queue,
                    ),
                    sent_at_seconds: t,
                };
                if series >= 2 {
                    agent.push(o);
                } else {
                    icmp.push(o);
                }
            }
        }
    }
    (icmp, agent)
}

/// Issue 31: behind a first link that returns bytes at half the rate it sends them, the
/// destination's echo alone mixes the two directions and is marked not separable; with the
/// agent's short replies its per byte sent is within 2% of the second link's, its per byte
/// returned (answer) within 5% of the first link's extra cost back, its fixed cost within
/// 30 us of the configured (the agent's turnaround kept out), and the intervals hold them.
#[test]
fn short_replies_separate_a_path_slower_back_than_out() {
    let (out, back) = ([0.0008, 0.0008], [0.0016, 0.0008]);
    for seed in 1..=5 {
        let (icmp, agent) = two_hops(out, back, seed);
        let alone = bestcase::analyze(&icmp, &P, None);
        let echo = alone[1].increment.as_ref().unwrap();
        assert!(echo.per_byte_mixes_directions, "seed {seed}: {echo:?}");
        assert_eq!(echo.per_byte_from, PerByteSeries::Probes);
        let hops = analyze_with_agent(&icmp, &agent, &P, None);
        let dest = hops[1].increment.as_ref().unwrap();
        let fit = hops[1].fit.as_ref().unwrap();
        assert_eq!(fit.separation, Separation::Separated);
        assert!(!dest.per_byte_mixes_directions);
        assert_eq!(dest.per_byte_from, PerByteSeries::AgentShortReplies);
        assert!(
            (dest.cost.per_byte_ms / out[1] - 1.0).abs() < 0.02,
            "seed {seed}: per byte {} against {}",
            dest.cost.per_byte_ms,
            out[1]
        );
        let answer = back[0] - out[0];
        assert!(
            (dest.answer_per_byte_ms / answer - 1.0).abs() < 0.05,
            "seed {seed}: answer {} against {answer}",
            dest.answer_per_byte_ms
        );
        assert!(
            (dest.cost.fixed_ms - 0.2).abs() < 0.030,
            "seed {seed}: fixed {}",
            dest.cost.fixed_ms
        );
        let iv = dest.intervals.expect("8 blocks");
        assert_eq!(iv.blocks, 8);
        assert!(iv.per_byte_ms.width() > 0.0);
        assert!(dest.caveat.is_none(), "{:?}", dest.caveat);
        // The router before it is untouched.
        assert_eq!(hops[0], alone[0]);
    }
}

/// The same path with the same rate each way: the agent's figures agree with the echo's
/// (per byte 0.8 us, nothing returned at another cost).
#[test]
fn short_replies_agree_with_the_echo_on_an_even_path() {
    let (icmp, agent) = two_hops([0.0008, 0.0008], [0.0008, 0.0008], 9);
    let alone = bestcase::analyze(&icmp, &P, None);
    let hops = analyze_with_agent(&icmp, &agent, &P, None);
    let (a, b) = (
        alone[1].increment.as_ref().unwrap(),
        hops[1].increment.as_ref().unwrap(),
    );
    assert!((a.cost.per_byte_ms / 0.0008 - 1.0).abs() < 0.02, "{a:?}");
    assert!((b.cost.per_byte_ms / 0.0008 - 1.0).abs() < 0.02, "{b:?}");
    assert!(b.answer_per_byte_ms.abs() < 0.05 * 0.0008, "{b:?}");
}

/// A hostile or useless agent series changes nothing: none at all, only whole echoes (no
/// short reply answered, so nothing separates), or one size.
#[test]
fn an_agent_series_that_cannot_separate_leaves_the_analysis_alone() {
    let (icmp, agent) = two_hops([0.0008, 0.0008], [0.0016, 0.0008], 3);
    let alone = bestcase::analyze(&icmp, &P, None);
    assert_eq!(analyze_with_agent(&icmp, &[], &P, None), alone);
    let echoes: Vec<Observation> = agent
        .iter()
        .copied()
        .filter(|o| o.returned_bytes == o.sent_bytes)
        .collect();
    assert_eq!(analyze_with_agent(&icmp, &echoes, &P, None), alone);
    let one_size: Vec<Observation> = agent
        .iter()
        .copied()
        .filter(|o| o.sent_bytes == 80)
        .collect();
    assert_eq!(analyze_with_agent(&icmp, &one_size, &P, None), alone);
    let lost: Vec<Observation> = agent
        .iter()
        .map(|o| Observation { rtt_ms: None, ..*o })
        .collect();
    assert_eq!(analyze_with_agent(&icmp, &lost, &P, None), alone);
}
