use wirespeed_lab::ingress_stamp::*;

#[test]
fn the_cut_off_moves_only_when_asked() {
    assert!(stamped(MAX_STAMPED_RATE_BITS, None));
    assert!(!stamped(MAX_STAMPED_RATE_BITS + 1, None));
    assert!(!stamped(10_000_000, Some("0")));
    assert!(stamped(10_000_000_000, Some("all")));
}

#[test]
fn the_clocks_offset_comes_from_the_narrowest_bracket() {
    // Realtime runs 1 s ahead of monotonic. The first bracket was interrupted for 60 us
    // after the realtime reading (the monotonic reading after it is late), the second
    // was not: a single pair of readings would put the offset 60 us low and release the
    // frames charged by it 60 us late.
    let readings = [
        (1_000_000u64, 1_001_000_100i128, 1_060_200u64),
        (2_000_000, 1_002_000_050, 2_000_100),
        (3_000_000, 1_003_020_000, 3_040_000),
    ];
    let mut i = 0;
    let offset = measure_offset(
        || {
            i += 1;
            readings[i - 1]
        },
        3,
    );
    assert_eq!(offset, 1_000_000_000);
    // One try is one bracket, its middle.
    let mut once = readings.iter().copied();
    assert_eq!(
        measure_offset(|| once.next().unwrap(), 1),
        1_001_000_100 - 1_030_100
    );
}

#[test]
fn frames_pair_head_to_head_and_resynchronise_past_lost_ones() {
    let f = |i: u8| vec![i; 120];
    let key = |i: u8| frame_key(&f(i));
    let mut p = Pairer::default();
    for i in 0..4 {
        p.push(key(i), i128::from(i) * 10);
    }
    assert_eq!(p.take(key(0)), Some(0));
    // Frame 1 never reached the TAP reader (its ring dropped it): frame 2 finds its copy
    // one further down, and frame 1's copy is discarded.
    assert_eq!(p.take(key(2)), Some(20));
    assert_eq!(p.counters.resynced, 1);
    // A frame whose copy was lost: charged from its read, nothing taken.
    assert_eq!(p.take(key(9)), None);
    assert_eq!(p.take(key(3)), Some(30));
    assert_eq!(
        p.counters,
        StampCounters {
            paired: 3,
            unpaired: 1,
            resynced: 1,
            gave_up: false
        }
    );
    // Only the first 96 bytes count (the copy holds no more): a frame and its cut copy
    // share the key.
    let mut long = f(5);
    long[100] = 1;
    assert_eq!(frame_key(&long), key(5));
    assert_eq!(frame_key(&f(5)[..96]), key(5));
    assert_ne!(frame_key(&f(5)[..95]), key(5));
    // The pending copies are bounded.
    for i in 0..1000u32 {
        p.push(u64::from(i), 0);
    }
    assert!(p.pending() <= MAX_PENDING);
}
