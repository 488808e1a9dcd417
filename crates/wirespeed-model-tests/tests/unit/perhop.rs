use proptest::prelude::*;
use wirespeed_model::perhop::*;

/// Round trips of TTL-limited probes answered with a 548-byte quote, and an echo.
fn points(line: RttLine, sizes: &[f64], echo: bool) -> Vec<(f64, f64, f64)> {
    sizes
        .iter()
        .map(|&s| {
            let q = if echo { s } else { s.min(548.0) + 28.0 };
            (s, q, line.at(s, q))
        })
        .collect()
}

const SIZES: [f64; 6] = [100.0, 300.0, 548.0, 800.0, 1150.0, 1500.0];

/// Seed 001 Table 1 on its path: hop 1 is roc -> ciscomci (10 Mbit/s Ethernet, answered
/// with ciscoping's .751 + .00131/byte), hop 2 crosses ciscomci (.525 + .00004/byte) and
/// the DS0 (.142857 ms/byte) to ciscoser, answering alike.
#[test]
fn seed_001_hops_are_separated_from_time_exceeded_alone() {
    let ether = 0.0008;
    let ds0 = 8.0 / 56_000.0 * 1e3;
    let hop1 = RttLine {
        fixed_ms: 0.751,
        per_sent_byte_ms: ether,
        per_returned_byte_ms: ether + 0.00131,
    };
    let hop2 = RttLine {
        fixed_ms: 2.0 * 0.525 + 2.0 * 7.6 + 0.751,
        per_sent_byte_ms: ether + 0.00004 + ds0,
        per_returned_byte_ms: ether + 0.00004 + ds0 + 0.00131,
    };
    let fits: Vec<RttLine> = [hop1, hop2]
        .iter()
        .map(|&l| {
            let (fit, how) = fit_rtt_line(&points(l, &SIZES, false)).unwrap();
            assert_eq!(how, Separation::Separated);
            fit
        })
        .collect();
    let own = own_costs(&fits);
    assert!((own[0].per_byte_ms - ether).abs() < 1e-9, "{own:?}");
    assert!((own[0].answer_per_byte_ms - 0.00131).abs() < 1e-9);
    assert!((own[0].fixed_ms - 0.751 / 2.0).abs() < 1e-9);
    // Hop 2: the DS0 plus ciscomci's forwarding, and the same answer cost, so the
    // difference of fixed costs is the forward cost and the line alone.
    assert!((own[1].per_byte_ms - (ds0 + 0.00004)).abs() < 1e-9);
    assert!((own[1].fixed_ms - (0.525 + 7.6)).abs() < 1e-9);
    assert!((own[1].answer_per_byte_ms - 0.00131).abs() < 1e-9);
}

#[test]
fn one_sided_sizes_cannot_separate_the_answer() {
    let l = RttLine {
        fixed_ms: 1.0,
        per_sent_byte_ms: 0.001,
        per_returned_byte_ms: 0.003,
    };
    let (fit, how) = fit_rtt_line(&points(l, &[100.0, 200.0, 400.0], false)).unwrap();
    assert_eq!(how, Separation::Collinear);
    // The single slope is the average of the two: 0.002 ms per byte crossed.
    assert!((fit.per_sent_byte_ms - 0.002).abs() < 1e-12);
    let (_, how) = fit_rtt_line(&points(l, &[600.0, 900.0, 1500.0], false)).unwrap();
    assert_eq!(how, Separation::Collinear);
    let (fit, how) = fit_rtt_line(&points(l, &[100.0, 1500.0], true)).unwrap();
    assert_eq!(how, Separation::Echo);
    assert!((fit.per_sent_byte_ms - 0.002).abs() < 1e-12);
    assert!(fit_rtt_line(&[(100.0, 128.0, 1.0)]).is_none());
}

#[test]
fn calibration_removes_what_the_twin_adds() {
    let machinery = RttLine {
        fixed_ms: 0.1,
        per_sent_byte_ms: 1e-6,
        per_returned_byte_ms: 2e-6,
    };
    let truth = RttLine {
        fixed_ms: 3.0,
        per_sent_byte_ms: 0.0008,
        per_returned_byte_ms: 0.002,
    };
    let twin = RttLine {
        fixed_ms: 1.0,
        ..RttLine::default()
    };
    let got = calibrated(truth + machinery, twin + machinery, twin);
    assert!((got - truth).fixed_ms.abs() < 1e-12);
    assert!((got - truth).per_returned_byte_ms.abs() < 1e-15);
}

#[test]
fn negative_differences_are_kept() {
    let own = own_costs(&[
        RttLine {
            fixed_ms: 2.0,
            per_sent_byte_ms: 0.002,
            per_returned_byte_ms: 0.002,
        },
        RttLine {
            fixed_ms: 1.5,
            per_sent_byte_ms: 0.001,
            per_returned_byte_ms: 0.001,
        },
    ]);
    assert_eq!(own[1].fixed_ms, -0.25);
    assert_eq!(own[1].per_byte_ms, -0.001);
}

#[test]
fn the_floor_is_read_from_the_minimums_under_the_fitted_slopes() {
    let l = RttLine {
        fixed_ms: 2.0,
        per_sent_byte_ms: 0.001,
        per_returned_byte_ms: 0.003,
    };
    // The lower half sits 0.05 ms above the floor at every size: the slopes are right, the
    // fixed cost is not; through the minimums it is.
    let low: Vec<(f64, f64, f64)> = points(l, &SIZES, false)
        .into_iter()
        .map(|(s, q, y)| (s, q, y + 0.05))
        .collect();
    let (fit, _) = fit_rtt_line(&low).unwrap();
    assert!((fit.fixed_ms - 2.05).abs() < 1e-9);
    let floor = through_floor(fit, &points(l, &SIZES, false));
    assert!((floor.fixed_ms - 2.0).abs() < 1e-9, "{floor:?}");
    assert_eq!(floor.per_returned_byte_ms, fit.per_returned_byte_ms);
    assert_eq!(through_floor(fit, &[]), fit);
    assert_eq!(through_floor(fit, &[(100.0, 128.0, f64::NAN)]), fit);
}

proptest! {
    /// The plane fit is exact on exact data, whatever the costs, for any sizes that straddle
    /// the quote limit.
    #[test]
    fn plane_fit_inverts_the_model(
        c in 0.0f64..50.0,
        u in 0.0f64..0.2,
        alpha in 0.0f64..0.01,
        low in 46.0f64..500.0,
        high in 600.0f64..9000.0,
    ) {
        let l = RttLine { fixed_ms: c, per_sent_byte_ms: u, per_returned_byte_ms: u + alpha };
        let sizes = [low, (low + 548.0) / 2.0, 548.0, high];
        let (fit, how) = fit_rtt_line(&points(l, &sizes, false)).unwrap();
        prop_assert_eq!(how, Separation::Separated);
        prop_assert!((fit.fixed_ms - c).abs() < 1e-6 * (1.0 + c));
        prop_assert!((fit.per_sent_byte_ms - u).abs() < 1e-9);
        prop_assert!((fit.per_returned_byte_ms - (u + alpha)).abs() < 1e-9);
    }

    /// Differencing the cumulative lines gives back each hop's increments.
    #[test]
    fn own_costs_invert_accumulation(
        incs in proptest::collection::vec((0.0f64..5.0, 0.0f64..0.2, 0.0f64..0.01), 1..6)
    ) {
        let mut acc = RttLine::default();
        let mut lines = Vec::new();
        for &(f, b, _) in &incs {
            acc = acc + RttLine { fixed_ms: 2.0 * f, per_sent_byte_ms: b, per_returned_byte_ms: b };
            lines.push(acc);
        }
        for (own, &(f, b, _)) in own_costs(&lines).iter().zip(&incs) {
            prop_assert!((own.fixed_ms - f).abs() < 1e-9);
            prop_assert!((own.per_byte_ms - b).abs() < 1e-12);
        }
    }
}
