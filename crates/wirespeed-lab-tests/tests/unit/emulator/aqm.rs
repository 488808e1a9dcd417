use proptest::prelude::*;
use wirespeed_lab::emulator::aqm::*;

const MS: u64 = 1_000_000;

fn params() -> CodelParams {
    CodelParams {
        target_ns: 5 * MS,
        interval_ns: 100 * MS,
        mtu_bytes: 1514,
    }
}

/// Fills a CoDel queue with `n` packets of `len` bytes at `at`.
fn fill(c: &mut Codel<u64>, at: u64, n: u64, len: u64) {
    for i in 0..n {
        c.enqueue(at, len, i);
    }
}

#[test]
fn nothing_is_dropped_while_the_sojourn_time_stays_below_target() {
    let mut c = Codel::new(params());
    let mut dropped = Vec::new();
    // 10 packets queued at a time, each leaving 4 ms after it came, for 2 s: the sojourn
    // time never reaches 5 ms.
    let mut id = 0;
    for round in 0..500u64 {
        let t = round * 4 * MS;
        for _ in 0..10 {
            c.enqueue(t, 1514, id);
            id += 1;
        }
        for _ in 0..10 {
            assert!(c.dequeue(t + 4 * MS, &mut dropped).is_some());
        }
    }
    assert!(dropped.is_empty());
    assert_eq!(c.counters().codel_drops, 0);
    assert!(!c.vars().dropping());
}

#[test]
fn nothing_is_dropped_with_one_mtu_or_less_left_queued() {
    // Two full-size packets stuck for a second: after the head leaves, one MTU is left,
    // so the link would go idle if CoDel dropped; it never does.
    let mut c = Codel::new(params());
    let mut dropped = Vec::new();
    let mut id = 0;
    for step in 0..200u64 {
        while c.len() < 2 {
            c.enqueue(step * 10 * MS, 1514, id);
            id += 1;
        }
        c.dequeue(step * 10 * MS + 1000 * MS, &mut dropped);
    }
    assert!(dropped.is_empty(), "{} drops", dropped.len());
    // With three queued (more than one MTU left after the head) the same delay drops.
    let mut c = Codel::new(params());
    fill(&mut c, 0, 3, 1514);
    c.dequeue(1000 * MS, &mut dropped);
    c.enqueue(1000 * MS, 1514, 9);
    c.dequeue(1101 * MS, &mut dropped);
    assert_eq!(dropped.len(), 1);
}

/// A queue that stays far above target: packets arrive back to back as fast as they leave,
/// each having waited 50 ms. Returns the instants of the drops over `span` of time, with one
/// dequeue every 100 us.
fn drop_times(c: &mut Codel<u64>, start: u64, span: u64) -> Vec<u64> {
    let mut dropped = Vec::new();
    let mut times = Vec::new();
    let mut t = start;
    let mut id = 1_000_000;
    while t < start + span {
        while c.len() < 600 {
            c.enqueue(t.saturating_sub(50 * MS), 1514, id);
            id += 1;
        }
        let before = dropped.len();
        c.dequeue(t, &mut dropped);
        times.extend(std::iter::repeat_n(t, dropped.len() - before));
        t += 100_000;
    }
    times
}

#[test]
fn drops_follow_the_control_law_interval_over_sqrt_count() {
    let mut c = Codel::new(params());
    let times = drop_times(&mut c, 100 * MS, 1_500 * MS);
    // The first drop comes one interval after the delay was first seen above target (the
    // first dequeue, at 100 ms).
    assert_eq!(times[0], 200 * MS);
    // The n-th gap is interval / sqrt(n), to the 100 us dequeue granularity.
    assert!(times.len() > 20);
    for (n, pair) in times.windows(2).enumerate().take(20) {
        let gap = (pair[1] - pair[0]) as f64;
        let law = 100.0 * MS as f64 / ((n + 1) as f64).sqrt();
        assert!((gap - law).abs() <= 100_000.0, "gap {n}: {gap} vs {law}");
    }
    assert!(c.vars().dropping());
    assert_eq!(c.vars().count() as usize, times.len());
}

#[test]
fn the_dropping_state_ends_when_the_sojourn_time_falls_below_target() {
    let mut c = Codel::new(params());
    let times = drop_times(&mut c, 100 * MS, 400 * MS);
    assert!(c.vars().dropping() && times.len() >= 3);
    // The standing queue is gone: what is left is fresh.
    let mut dropped = Vec::new();
    c.forget_queue();
    fill(&mut c, 499 * MS, 5, 1514);
    assert!(c.dequeue(500 * MS, &mut dropped).is_some());
    assert!(dropped.is_empty());
    assert!(!c.vars().dropping(), "1 ms of sojourn ends the episode");
    // And it stays out: one interval above target is needed again before the next drop.
    let again = drop_times(&mut c, 501 * MS, 99 * MS);
    assert!(again.is_empty(), "{again:?}");
}

/// A dropping episode from 100 ms to 700 ms, then one dequeue with 0 ms of sojourn that
/// ends it, and an empty queue. Returns the episode's count.
fn episode_then_calm(c: &mut Codel<u64>) -> u32 {
    let times = drop_times(c, 100 * MS, 600 * MS);
    assert_eq!(c.vars().count() as usize, times.len());
    let mut dropped = Vec::new();
    c.forget_queue();
    fill(c, 700 * MS, 3, 1514);
    c.dequeue(700 * MS, &mut dropped);
    assert!(!c.vars().dropping() && dropped.is_empty());
    c.forget_queue();
    c.vars().count()
}

#[test]
fn an_episode_soon_after_the_last_resumes_its_count() {
    let mut c = Codel::new(params());
    let count = episode_then_calm(&mut c);
    assert!(count >= 3, "{count}");
    // Above target again at once: one interval later a new episode starts with
    // count = count - lastcount (the last episode's drops beyond its first), since it
    // starts within 16 intervals of the last drop.
    let second = drop_times(&mut c, 701 * MS, 100 * MS + 50_000);
    assert_eq!(second, vec![801 * MS]);
    assert_eq!(c.vars().count(), count - 1);
    // More than 16 intervals after, an episode starts again from 1.
    let mut c = Codel::new(params());
    episode_then_calm(&mut c);
    let late = 700 * MS + 1_700 * MS;
    let third = drop_times(&mut c, late, 100 * MS + 50_000);
    assert_eq!(third, vec![late + 100 * MS]);
    assert_eq!(c.vars().count(), 1);
}

fn fq(quantum: u32, limit: u32) -> FqCodel<u64> {
    FqCodel::new(FqCodelParams {
        codel: params(),
        flows: 1024,
        quantum,
        limit,
        drop_batch: DEFAULT_DROP_BATCH,
        perturbation: 7,
    })
}

/// Two hashes that land in different queues.
fn two_flows(f: &FqCodel<u64>) -> (u32, u32) {
    let a = 0x1000_0000;
    let b = (1..)
        .map(|k: u32| a ^ (k << 24))
        .find(|&b| f.queue_of(b) != f.queue_of(a))
        .unwrap();
    (a, b)
}

#[test]
fn a_sparse_flow_goes_ahead_of_a_bulk_flows_queue() {
    // 10 Mbit/s: a 1514-byte frame every 1.2304 ms. The bulk flow keeps 200 frames
    // queued; the sparse flow sends one 100-byte packet every 100 ms.
    let mut f = fq(1514, 10240);
    let (bulk, sparse) = two_flows(&f);
    let mut dropped = Vec::new();
    let mut id = 0;
    let mut t = 0;
    let mut waits = Vec::new();
    let mut next_sparse = 50 * MS;
    while t < 2_000 * MS {
        while f.flow_backlog(bulk).0 < 200 {
            f.enqueue(t, 1514, bulk, id, &mut dropped);
            id += 1;
        }
        if t >= next_sparse {
            f.enqueue(t, 100, sparse, u64::MAX - id, &mut dropped);
            next_sparse += 100 * MS;
        }
        let p = f.dequeue(t, &mut dropped).unwrap();
        if p.hash == sparse {
            waits.push(t - p.enqueued_ns);
        }
        t += 1_230_400;
    }
    assert_eq!(waits.len(), 20);
    // Served at the next dequeue: at most one frame time of waiting.
    assert!(waits.iter().all(|&w| w <= 1_230_400), "{waits:?}");
    // The bulk flow's own packets wait ~200 frame times before CoDel gets to them.
    assert!(f.counters().codel_drops > 0);
}

#[test]
fn drr_shares_bytes_fairly_between_backlogged_flows_of_different_packet_sizes() {
    let mut f = fq(1514, 10240);
    let (big, small) = two_flows(&f);
    let mut dropped = Vec::new();
    for i in 0..2000 {
        f.enqueue(0, 1500, big, i, &mut dropped);
        f.enqueue(0, 100, small, 10_000 + i, &mut dropped);
        f.enqueue(0, 100, small, 20_000 + i, &mut dropped);
    }
    let (mut bytes_big, mut bytes_small) = (0i64, 0i64);
    // Dequeue within one interval, so CoDel does not drop.
    for _ in 0..1000 {
        let p = f.dequeue(MS, &mut dropped).unwrap();
        if p.hash == big {
            bytes_big += p.len as i64;
        } else {
            bytes_small += p.len as i64;
        }
        assert!(
            (bytes_big - bytes_small).abs() <= 2 * 1514,
            "{bytes_big} vs {bytes_small}"
        );
    }
    assert!(dropped.is_empty());
    // Over many rounds the shares agree within one quantum.
    assert!((bytes_big - bytes_small).abs() <= 1514 + 1500);
}

#[test]
fn overflow_drops_a_batch_from_the_head_of_the_fattest_queue() {
    let mut f = fq(1514, 10);
    let (fat, thin) = two_flows(&f);
    let mut dropped = Vec::new();
    for i in 0..6 {
        f.enqueue(0, 1000, fat, i, &mut dropped);
    }
    for i in 0..4 {
        f.enqueue(0, 1400, thin, 100 + i, &mut dropped);
    }
    assert!(dropped.is_empty());
    // The eleventh packet exceeds the limit: the fat queue (6000 bytes against 5700)
    // loses its head, whoever sent the eleventh, until half its bytes are gone: packets
    // 0, 1 and 2.
    f.enqueue(0, 100, thin, 104, &mut dropped);
    let payloads: Vec<u64> = dropped.drain(..).map(|p| p.payload).collect();
    assert_eq!(payloads, [0, 1, 2]);
    assert_eq!(f.len(), 8);
    assert_eq!(f.flow_backlog(fat), (3, 3000));
    // Fattest by bytes, not by packets: the thin queue (5 packets, 5700 bytes) pays for
    // the fat one's (6 packets, 3300 bytes), three of its 1400-byte packets for half.
    for i in 0..3 {
        f.enqueue(0, 100, fat, 6 + i, &mut dropped);
    }
    let payloads: Vec<u64> = dropped.drain(..).map(|p| p.payload).collect();
    assert_eq!(payloads, [100, 101, 102]);
    assert_eq!(f.counters().overflow_drops, 6);
    assert_eq!(f.len(), 8);
}

#[test]
fn an_overflow_drops_at_most_drop_batch_packets() {
    let mut f = FqCodel::new(FqCodelParams {
        limit: 100,
        drop_batch: 4,
        ..FqCodelParams::default()
    });
    let mut dropped = Vec::new();
    for i in 0..101 {
        f.enqueue(0, 100, 42, i, &mut dropped);
    }
    // Half of the one queue's 10,100 bytes would be 51 packets: the batch stops at 4.
    let payloads: Vec<u64> = dropped.iter().map(|p| p.payload).collect();
    assert_eq!(payloads, [0, 1, 2, 3]);
    assert_eq!(f.len(), 97);
}

#[test]
fn the_fattest_queue_is_found_among_65536_by_bytes_then_lowest_index() {
    let mut f: FqCodel<u64> = FqCodel::new(FqCodelParams {
        flows: 65_536,
        ..FqCodelParams::default()
    });
    let mut dropped = Vec::new();
    assert_eq!(f.fattest(), None);
    // One hash per queue: hash = queue << 16 maps to that queue.
    let hash = |q: u32| q << 16;
    f.enqueue(0, 1500, hash(60_000), 0, &mut dropped);
    f.enqueue(0, 1000, hash(7), 1, &mut dropped);
    f.enqueue(0, 500, hash(7), 2, &mut dropped);
    assert_eq!(f.queue_of(hash(7)), 7);
    // Equal bytes: the lower index, as a scan in order would pick.
    assert_eq!(f.fattest(), Some((7, 1500)));
    f.enqueue(0, 1, hash(60_000), 3, &mut dropped);
    assert_eq!(f.fattest(), Some((60_000, 1501)));
    // Serving a queue moves it down: DRR serves queue 60000 first (it came first).
    let p = f.dequeue(0, &mut dropped).expect("queued");
    assert_eq!(p.payload, 0);
    assert_eq!(f.fattest(), Some((7, 1500)));
    while f.dequeue(0, &mut dropped).is_some() {}
    assert_eq!(f.fattest(), None);
}

/// The attacker's view before issue 32: the flow-hash seed was the link's index plus one,
/// known to anyone who read the topology. Flows chosen to share a victim's queue under that
/// seed must be spread at random under a drawn perturbation.
#[test]
fn flows_aimed_at_a_victims_queue_with_a_known_seed_miss_under_a_random_perturbation() {
    let key = |src_port: u16| FlowKey {
        ethertype: 0x0800,
        protocol: 17,
        src: [198, 19, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        dst: [198, 19, 1, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
        src_port,
        dst_port: 9,
    };
    let victim = FlowKey {
        protocol: 1,
        src_port: 0,
        dst_port: 0,
        ..key(0)
    };
    let queues = FqCodel::<u64>::new(FqCodelParams::default());
    let queue = |k: &FlowKey, seed: u64| queues.queue_of(k.hash(seed));
    let known_seed = 1;
    let aimed: Vec<FlowKey> = (1..=u16::MAX)
        .map(key)
        .filter(|k| queue(k, known_seed) == queue(&victim, known_seed))
        .collect();
    assert!(aimed.len() >= 40, "{} aimed flows", aimed.len());
    // Under a random perturbation each aimed flow shares the victim's queue with chance
    // 1/1024: about 0.06 of them; 8 or more happens with odds below 1e-9.
    for _ in 0..4 {
        let perturbation = getrandom::u64().expect("random bytes") >> 1;
        let hits = aimed
            .iter()
            .filter(|k| queue(k, perturbation) == queue(&victim, perturbation))
            .count();
        assert!(hits < 8, "{hits} of {} still hit", aimed.len());
    }
}

#[test]
fn a_new_flow_moves_to_old_flows_when_its_quantum_is_spent_or_it_empties() {
    let mut f = fq(1514, 10240);
    let (a, b) = two_flows(&f);
    let mut dropped = Vec::new();
    for i in 0..4 {
        f.enqueue(0, 1000, a, i, &mut dropped);
    }
    assert_eq!((f.new_flows(), f.active_flows()), (1, 1));
    // Two packets spend a's 1514 bytes of credit; at the third dequeue it is moved to the
    // old flows and served from there (nothing else is waiting).
    f.dequeue(0, &mut dropped);
    f.dequeue(0, &mut dropped);
    assert_eq!(f.new_flows(), 1);
    f.dequeue(0, &mut dropped);
    assert_eq!((f.new_flows(), f.active_flows()), (0, 1));
    // b arrives: a new flow, served before a's last packet.
    f.enqueue(0, 100, b, 50, &mut dropped);
    assert_eq!(f.dequeue(0, &mut dropped).unwrap().payload, 50);
    // b emptied while new: it goes to the old flows, not out.
    assert_eq!(f.dequeue(0, &mut dropped).unwrap().payload, 3);
    assert_eq!(f.active_flows(), 2);
    // Both empty: a dequeue finds nothing and the old flows leave the lists.
    assert!(f.dequeue(0, &mut dropped).is_none());
    assert_eq!(f.active_flows(), 0);
}

#[test]
fn flow_keys_come_from_the_five_tuple() {
    let mut frame = vec![0u8; 14 + 20 + 8];
    frame[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    frame[14] = 0x45;
    frame[14 + 9] = 17;
    frame[14 + 12..14 + 16].copy_from_slice(&[198, 18, 0, 1]);
    frame[14 + 16..14 + 20].copy_from_slice(&[198, 18, 0, 2]);
    frame[34..36].copy_from_slice(&5201u16.to_be_bytes());
    frame[36..38].copy_from_slice(&40000u16.to_be_bytes());
    let k = FlowKey::of_frame(&frame);
    assert_eq!(
        (k.protocol, k.src_port, k.dst_port, &k.dst[..4]),
        (17, 5201, 40000, &[198, 18, 0, 2][..])
    );
    let mut other = frame.clone();
    other[36..38].copy_from_slice(&40001u16.to_be_bytes());
    let k2 = FlowKey::of_frame(&other);
    assert_ne!(k.hash(1), k2.hash(1));
    assert_eq!(k.hash(1), FlowKey::of_frame(&frame).hash(1));
    assert_ne!(k.hash(1), k.hash(2), "the seed changes the mapping");
    // A VLAN tag is skipped.
    let mut tagged = frame[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    tagged.extend_from_slice(&frame[12..]);
    assert_eq!(FlowKey::of_frame(&tagged), k);
    assert_eq!(FlowKey::of_frame(&[0u8; 5]), FlowKey::default());
}

/// An operation of the property tests: enqueue (flow, size, time step) or dequeue (time
/// step).
#[derive(Debug, Clone)]
enum Op {
    Enqueue(u32, u64, u64),
    Dequeue(u64),
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    proptest::collection::vec(
        prop_oneof![
            3 => (0u32..6, 60u64..1515, 0u64..3_000_000).prop_map(|(f, l, d)| Op::Enqueue(f, l, d)),
            2 => (0u64..20_000_000).prop_map(Op::Dequeue),
        ],
        1..400,
    )
}

/// Runs `ops` on `aqm`, checking after each step that bytes in = out + dropped + queued,
/// and that a dequeue returns only packets that were queued.
fn check(mut aqm: Aqm<u64>, ops: &[Op]) -> Result<(), TestCaseError> {
    let mut dropped = Vec::new();
    let mut queued = std::collections::HashSet::new();
    let (mut bytes_in, mut bytes_out, mut bytes_dropped) = (0u64, 0u64, 0u64);
    let mut now = 0;
    for (id, op) in ops.iter().enumerate() {
        let id = id as u64;
        match *op {
            Op::Enqueue(flow, len, dt) => {
                now += dt;
                aqm.enqueue(now, len, flow.wrapping_mul(0x9e37_79b9), id, &mut dropped);
                queued.insert(id);
                bytes_in += len;
            }
            Op::Dequeue(dt) => {
                now += dt;
                let empty = aqm.is_empty();
                let p = aqm.dequeue(now, &mut dropped);
                if empty {
                    prop_assert!(p.is_none(), "a packet out of an empty queue");
                }
                if let Some(p) = p {
                    prop_assert!(queued.remove(&p.payload), "{} was not queued", p.payload);
                    bytes_out += p.len;
                }
            }
        }
        for d in dropped.drain(..) {
            prop_assert!(queued.remove(&d.payload), "{} dropped twice", d.payload);
            bytes_dropped += d.len;
        }
        prop_assert_eq!(bytes_in, bytes_out + bytes_dropped + aqm.bytes());
        prop_assert_eq!(queued.len(), aqm.len());
        let c = aqm.counters();
        prop_assert_eq!(
            (c.bytes_in, c.bytes_out, c.bytes_dropped),
            (bytes_in, bytes_out, bytes_dropped)
        );
        prop_assert_eq!(c.ecn_marks, 0);
    }
    // Draining gives back exactly what is queued.
    while let Some(p) = aqm.dequeue(now + 10_000 * MS, &mut dropped) {
        prop_assert!(queued.remove(&p.payload));
    }
    for d in dropped.drain(..) {
        prop_assert!(queued.remove(&d.payload));
    }
    prop_assert!(queued.is_empty() && aqm.is_empty() && aqm.bytes() == 0);
    Ok(())
}

proptest! {
    #[test]
    fn the_fattest_queue_is_the_one_a_scan_finds(
        ops in ops(),
        flows in 1u32..12,
        limit in 1u32..40,
        drop_batch in 1u32..8,
    ) {
        let mut f = FqCodel::new(FqCodelParams { codel: params(), flows, quantum: 300, limit, drop_batch, perturbation: 3 });
        let mut dropped = Vec::new();
        let mut now = 0;
        for (id, op) in ops.iter().enumerate() {
            match *op {
                Op::Enqueue(flow, len, dt) => {
                    now += dt;
                    f.enqueue(now, len, flow.wrapping_mul(0x9e37_79b9), id as u64, &mut dropped);
                }
                Op::Dequeue(dt) => {
                    now += dt;
                    f.dequeue(now, &mut dropped);
                }
            }
            let scan = f
                .backlogs()
                .into_iter()
                .enumerate()
                .filter(|&(_, bytes)| bytes > 0)
                .max_by_key(|&(i, bytes)| (bytes, std::cmp::Reverse(i)));
            prop_assert_eq!(f.fattest(), scan);
        }
    }

    #[test]
    fn codel_conserves_bytes_and_never_invents_packets(ops in ops()) {
        check(Aqm::Codel(Codel::new(params())), &ops)?;
    }

    #[test]
    fn fq_codel_conserves_bytes_and_never_invents_packets(
        ops in ops(),
        flows in 1u32..8,
        quantum in 60u32..3000,
        limit in 1u32..40,
        drop_batch in 1u32..8,
    ) {
        let fq = FqCodel::new(FqCodelParams { codel: params(), flows, quantum, limit, drop_batch, perturbation: 3 });
        check(Aqm::FqCodel(fq), &ops)?;
    }
}
