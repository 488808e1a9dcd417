//! The unit tests of `wirespeed_sim::traffic`.

use rand_chacha::ChaCha8Rng;
use rand_core::SeedableRng;
use wirespeed_sim::traffic::*;

#[test]
fn a_ratio_deck_preserves_the_ratio_exactly() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut src = LengthSource::new(&LengthMix::seed_ratio(6, 2));
    for _ in 0..50 {
        let deck: Vec<u64> = (0..8).map(|_| src.next(&mut rng)).collect();
        assert_eq!(deck.iter().filter(|&&b| b == 1536).count(), 2);
        assert_eq!(deck.iter().filter(|&&b| b == 64).count(), 6);
    }
    assert_eq!(
        LengthMix::seed_ratio(6, 2).mean_bytes(),
        (6.0 * 64.0 + 2.0 * 1536.0) / 8.0
    );
    assert_eq!(LengthMix::seed_ratio(7, 1).to_string(), "7/1");
}

#[test]
fn weighted_lengths_follow_their_weights() {
    let mix = LengthMix::Weighted {
        lengths: vec![(64, 3.0), (1500, 1.0)],
    };
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut src = LengthSource::new(&mix);
    let n = 40_000;
    let long = (0..n).filter(|_| src.next(&mut rng) == 1500).count();
    let share = long as f64 / n as f64;
    assert!((share - 0.25).abs() < 0.01, "{share}");
}

#[test]
fn lengths_out_of_range_are_refused() {
    assert!(LengthMix::Fixed { bytes: 63 }.validate(true).is_err());
    assert!(LengthMix::Fixed { bytes: 4000 }.validate(false).is_err());
    assert!(LengthMix::Fixed { bytes: 4000 }.validate(true).is_ok());
    assert!(LengthMix::seed_ratio(0, 0).validate(false).is_err());
    assert!(Arrivals::Poisson { load: -1.0 }.validate().is_err());
}

#[test]
fn below_is_uniform_and_in_range() {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut counts = [0u32; 8];
    for _ in 0..80_000 {
        counts[below(&mut rng, 8) as usize] += 1;
    }
    for c in counts {
        assert!((9_500..10_500).contains(&c), "{counts:?}");
    }
    assert_eq!(below(&mut rng, 1), 0);
}
