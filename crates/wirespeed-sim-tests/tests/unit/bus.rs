//! The unit tests of `wirespeed_sim::bus`.

use wirespeed_sim::bus::*;
use wirespeed_sim::time::SimSpan;

#[test]
fn seed_clusters_sit_1000_ft_apart_and_stay_balanced() {
    let cable = Cable::seed_long_net();
    let x = cable.positions(6);
    let ft: Vec<f64> = x.iter().map(|m| (m / METRES_PER_FOOT).round()).collect();
    assert_eq!(ft, [0.0, 1000.0, 2000.0, 3000.0, 0.0, 1000.0]);
    let x = Cable::seed_two_clusters().positions(4);
    assert_eq!(x[0], 0.0);
    assert!((x[1] / METRES_PER_FOOT - 3000.0).abs() < 1e-6);
}

#[test]
fn seed_000_round_trip_of_3000_ft_is_about_10_us() {
    // §3.6: "The round trip propagation delay for 3000 feet of coaxial cable is about 10
    // microseconds". Thick coax at 0.77c gives 7.9 us of cable alone; the DELNIs and
    // transceiver cables make up the rest.
    let rt = Cable::seed_long_net().end_to_end().seconds() * 2.0;
    assert!((7.5e-6..10.5e-6).contains(&rt), "{rt}");
    let p = Propagation::new(&Cable::seed_long_net(), 4);
    assert_eq!(p.delay(0, 3), p.delay(3, 0));
    assert_eq!(p.max_delay(), p.delay(0, 3));
    assert_eq!(p.delay(2, 2), SimSpan::ZERO);
    // Stations are grouped by equal delay: 4 clusters of 2 give, from station 0, its
    // cluster-mate at delay 0 and three other clusters.
    let p = Propagation::new(&Cable::seed_long_net(), 8);
    let groups: Vec<(SimSpan, usize)> = p.groups_of(0).collect();
    assert_eq!(groups.len(), 4);
    assert_eq!(p.group(0, 0), [4]);
    assert_eq!(p.group(0, 3), [3, 7]);
    assert_eq!(groups[3].0, p.delay(0, 7));
    // A repeater-to-coax delay is crossed only between clusters.
    let tapped = Cable {
        tap_delay_ns: 500.0,
        ..Cable::seed_long_net()
    };
    let q = Propagation::new(&tapped, 8);
    assert_eq!(q.delay(0, 4), SimSpan::ZERO, "same cluster");
    assert_eq!(q.delay(0, 3).ps(), p.delay(0, 3).ps() + 1_000_000);
    assert_eq!(
        tapped.end_to_end().ps(),
        Cable::seed_long_net().end_to_end().ps() + 1_000_000
    );
    // 20 ft: essentially zero.
    assert!(Cable::seed_short_net().end_to_end() < SimSpan::from_ns(30));
}
