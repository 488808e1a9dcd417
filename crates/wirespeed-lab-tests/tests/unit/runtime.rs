//! The runtime's unit tests: the data path's allocations and memory bound, late-release
//! causes, the thread and CPU settings, and when the lab names itself the bottleneck.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use wirespeed_lab::emulator::clock::SpinPolicy;
use wirespeed_lab::emulator::handoff;
use wirespeed_lab::emulator::link::Direction;

use std::collections::VecDeque;
use wirespeed_lab::device::DeviceCounters;
use wirespeed_lab::emulator::clock::Nanos;
use wirespeed_lab::emulator::gso;
use wirespeed_lab::emulator::link::{DirectionCounters, Verdict};
use wirespeed_lab::emulator::stats::LatenessSummary;
use wirespeed_lab::runtime::egress::Egress;
use wirespeed_lab::runtime::ingress::{
    AqmHeld, BufferPools, Ingress, SUPER_READ_BUFFER, memory_charge, with_super_packet_slack,
};
use wirespeed_lab::runtime::one_thread::OneThread;
use wirespeed_lab::runtime::port::{LateCause, PortShared, Scheduled, late_cause};
use wirespeed_lab::runtime::status::{EmulatorCost, LabBottleneck, PortStatus, lab_bottleneck};
use wirespeed_lab::runtime::*;

/// A TCP/IPv4 super-packet as a stack with TSO hands it to a TAP with the vnet header:
/// `segments` segments of 1448 payload bytes (a 10-byte vnet header, Ethernet, IPv4, TCP
/// with timestamps); with one segment, a plain frame (no GSO).
fn tcp_read(segments: usize) -> Vec<u8> {
    let (l3, l4, th, mss) = (14, 34, 32, 1448);
    let payload = if segments == 1 { 0 } else { segments * mss };
    let mut f = vec![0u8; l4 + th + payload];
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[l3] = 0x45;
    f[l3 + 2..l3 + 4].copy_from_slice(&((20 + th + payload) as u16).to_be_bytes());
    f[l3 + 6] = 0x40;
    f[l3 + 8] = 64;
    f[l3 + 9] = 6;
    f[l3 + 12..l3 + 16].copy_from_slice(&[198, 18, 0, 1]);
    f[l3 + 16..l3 + 20].copy_from_slice(&[198, 18, 0, 2]);
    f[l4..l4 + 2].copy_from_slice(&40000u16.to_be_bytes());
    f[l4 + 2..l4 + 4].copy_from_slice(&5201u16.to_be_bytes());
    f[l4 + 12] = 8 << 4;
    f[l4 + 13] = 0x10;
    f[l4 + 20..l4 + 32].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
    let hdr = gso::VnetHdr {
        flags: gso::F_NEEDS_CSUM,
        gso_type: if segments == 1 {
            gso::GSO_NONE
        } else {
            gso::GSO_TCPV4
        },
        hdr_len: (l4 + th) as u16,
        gso_size: if segments == 1 { 0 } else { mss as u16 },
        csum_start: l4 as u16,
        csum_offset: 16,
    };
    as_read(&hdr, &f)
}

/// The ingress and egress threads' code of one offloaded direction, driven in virtual
/// time on one thread, with datagram socket pairs standing in for the two TAPs (one read
/// or write is one frame or super-packet, as on a TAP with the vnet header).
struct Rig {
    ingress: Ingress,
    egress: Egress,
    sender_host: std::os::unix::net::UnixDatagram,
    receiver_host: std::os::unix::net::UnixDatagram,
    _taps: [std::os::unix::net::UnixDatagram; 2],
    pools: BufferPools,
    scratch: Vec<u8>,
    verdicts: Vec<Verdict>,
    holding: VecDeque<Scheduled>,
    sink: Vec<u8>,
    reads: Vec<Vec<u8>>,
    /// Virtual time between the sending host's writes, and how late (behind their
    /// instant) the egress code releases.
    period_ns: u64,
    lag_ns: u64,
    /// The drop-tail path's spare buffer, and the event path's held frames.
    spare: Option<Vec<u8>>,
    aqm: AqmHeld,
    round: u64,
    /// Frames and super-packets the receiving host got.
    received: u64,
}

/// What one read of a TAP with the vnet header returns: the header, then the frame.
fn as_read(hdr: &gso::VnetHdr, frame: &[u8]) -> Vec<u8> {
    let mut read = vec![0u8; gso::VNET_HDR_LEN];
    hdr.write(&mut read);
    read.extend_from_slice(frame);
    read
}

/// A UDP/IPv4 super-packet as a stack with USO hands it to a TAP with the vnet header:
/// `segments` datagrams of `payload` bytes each (UDP GSO).
fn udp_read(segments: usize, payload: usize) -> Vec<u8> {
    let (l3, l4) = (14, 34);
    let total = segments * payload;
    let mut f = vec![0u8; l4 + 8 + total];
    f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
    f[l3] = 0x45;
    f[l3 + 2..l3 + 4].copy_from_slice(&((20 + 8 + total) as u16).to_be_bytes());
    f[l3 + 8] = 64;
    f[l3 + 9] = 17;
    f[l3 + 12..l3 + 16].copy_from_slice(&[198, 18, 0, 1]);
    f[l3 + 16..l3 + 20].copy_from_slice(&[198, 18, 0, 2]);
    f[l4..l4 + 2].copy_from_slice(&40000u16.to_be_bytes());
    f[l4 + 2..l4 + 4].copy_from_slice(&5201u16.to_be_bytes());
    f[l4 + 4..l4 + 6].copy_from_slice(&((8 + total) as u16).to_be_bytes());
    let hdr = gso::VnetHdr {
        flags: gso::F_NEEDS_CSUM,
        gso_type: gso::GSO_UDP_L4,
        hdr_len: (l4 + 8) as u16,
        gso_size: payload as u16,
        csum_start: l4 as u16,
        csum_offset: 6,
    };
    as_read(&hdr, &f)
}

impl Rig {
    fn new() -> Rig {
        // 10 Gbit/s, 100 us, a 200-frame queue: offered faster than the wire (below), so
        // that the queue fills and drops, and a dropped segment cuts its super-packet into
        // runs: every branch of the path is taken. No random loss: the offered pattern
        // repeats, so after warm-up the buffers in flight never reach a new peak (a
        // random loss pattern does now and then, and the pools then grow by a buffer:
        // growth to a peak, not an allocation per frame).
        let config = wirespeed_lab::topology::DirectionConfig {
            rate: wirespeed_model::BitRate::from_bits_per_second(10_000_000_000),
            delay: Duration::from_micros(100),
            queue: wirespeed_lab::topology::QueueLimit::Packets(200),
            loss: 0.0,
            seed: 7,
            hidden_hops: 0,
        };
        // A 64 KB super-packet, a small one, and an acknowledgement-sized frame, one
        // every 15 us (the three take 19.3 us of wire per round on average).
        let reads = vec![tcp_read(44), tcp_read(3), tcp_read(1)];
        Rig::with(config, 10_000, reads, 15_000, 0)
    }

    fn with(
        config: wirespeed_lab::topology::DirectionConfig,
        max_in_flight: u64,
        reads: Vec<Vec<u8>>,
        period_ns: u64,
        lag_ns: u64,
    ) -> Rig {
        Rig::of_kind(config, None, true, max_in_flight, reads, period_ns, lag_ns)
    }

    /// A rig of any kind of direction: `vnet` (super-packets: the offloaded path) or not
    /// (one frame per read: the drop-tail path, or with `aqm` the event path).
    fn of_kind(
        config: wirespeed_lab::topology::DirectionConfig,
        aqm: Option<&wirespeed_lab::topology::AqmConfig>,
        vnet: bool,
        max_in_flight: u64,
        reads: Vec<Vec<u8>>,
        period_ns: u64,
        lag_ns: u64,
    ) -> Rig {
        use std::os::fd::AsRawFd;
        use std::os::unix::net::UnixDatagram;
        let (sender_host, sender_tap) = UnixDatagram::pair().unwrap();
        let (receiver_tap, receiver_host) = UnixDatagram::pair().unwrap();
        for s in [&sender_host, &sender_tap, &receiver_tap, &receiver_host] {
            s.set_nonblocking(true).unwrap();
        }
        let shared = Arc::new(PortShared::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = handoff::channel();
        let (recycle_tx, recycle_rx) = handoff::channel();
        let frame_buffer = wirespeed_lab::topology::frame_buffer(1500);
        let ingress = Ingress {
            stamps: None,
            fd: sender_tap.as_raw_fd(),
            vnet,
            frame_buffer,
            max_in_flight,
            direction: {
                let d = Direction::new(
                    config,
                    wirespeed_model::LinkLayer::Ethernet { vlan_tags: 0 },
                    1500,
                );
                match aqm {
                    Some(a) => d.with_aqm(a, 7),
                    None => d,
                }
            },
            router: None,
            host: None,
            to_egress: tx,
            recycled: recycle_rx,
            shared: Arc::clone(&shared),
            stop: Arc::clone(&stop),
        };
        let egress = Egress {
            spin: SpinPolicy::Fixed(0),
            fd: receiver_tap.as_raw_fd(),
            host: None,
            from_ingress: rx,
            recycle: recycle_tx,
            shared,
            stop,
        };
        let mut pools = BufferPools::new(frame_buffer + gso::VNET_HDR_LEN, SUPER_READ_BUFFER);
        let scratch = pools.take(SUPER_READ_BUFFER);
        Rig {
            ingress,
            egress,
            sender_host,
            receiver_host,
            _taps: [sender_tap, receiver_tap],
            pools,
            scratch,
            verdicts: Vec::new(),
            holding: VecDeque::new(),
            sink: vec![0; SUPER_READ_BUFFER],
            reads,
            period_ns,
            lag_ns,
            spare: None,
            aqm: AqmHeld::default(),
            round: 0,
            received: 0,
        }
    }

    /// `n` rounds of `period_ns`: the sending host writes one read, the ingress code reads
    /// and offers it, the egress code takes what was handed over and writes everything
    /// due (`lag_ns` ago), the receiving host reads what was written.
    fn run(&mut self, n: u64) {
        for _ in 0..n {
            let now = Nanos(1_000_000 + self.round * self.period_ns);
            let read = &self.reads[(self.round % self.reads.len() as u64) as usize];
            self.sender_host.send(read).unwrap();
            self.round += 1;
            let step = if self.ingress.vnet {
                self.ingress.read_and_offer(
                    Some(now),
                    &mut self.scratch,
                    &mut self.pools,
                    &mut self.verdicts,
                )
            } else if self.ingress.direction.has_aqm() {
                assert!(self.ingress.aqm_advance(now, &mut self.aqm));
                self.ingress.aqm_read_one(Some(now), &mut self.aqm)
            } else {
                self.ingress.drop_tail_read_one(Some(now), &mut self.spare)
            };
            assert_eq!(step, Some(true));
            while let Ok(s) = self.egress.from_ingress.try_recv() {
                self.holding.push_back(s);
            }
            while self
                .holding
                .front()
                .is_some_and(|s| s.at.0 + self.lag_ns <= now.0)
            {
                let s = self.holding.pop_front().unwrap();
                let at = s.at;
                self.egress.release(s, at, now);
                while self.receiver_host.recv(&mut self.sink).is_ok() {
                    self.received += 1;
                }
            }
        }
    }
}

#[test]
fn the_data_path_allocates_nothing_per_frame_once_warm() {
    let mut rig = Rig::new();
    rig.run(3_000);
    let before = rig.ingress.direction.counters();
    let (received_before, cut_before) = (
        rig.received,
        rig.ingress.shared.segmented.load(Ordering::Relaxed),
    );
    let ((), allocations) = crate::counting_alloc::count_on_this_thread(|| rig.run(15_000));
    let after = rig.ingress.direction.counters();
    // The run took every branch: whole super-packets, cut ones, queue drops.
    assert!(after.frames_out - before.frames_out > 150_000, "{after:?}");
    assert!(after.drops_queue > before.drops_queue, "{after:?}");
    assert!(rig.ingress.shared.segmented.load(Ordering::Relaxed) > cut_before);
    assert!(rig.received - received_before > 10_000);
    assert_eq!(rig.ingress.shared.write_errors.load(Ordering::Relaxed), 0);
    assert_eq!(
        allocations, 0,
        "the data path allocated {allocations} times over 15,000 reads once warm"
    );
}

#[test]
fn the_one_thread_path_allocates_nothing_per_frame_once_warm() {
    use wirespeed_lab::emulator::clock::VirtualClock;
    // The same direction and offered pattern as the two-thread test above, through the
    // one thread's own steps (`OneThread::read_batch`, `OneThread::release_due`) on a
    // virtual clock with no spin.
    let Rig {
        ingress,
        egress,
        sender_host,
        receiver_host,
        _taps,
        reads,
        period_ns,
        mut sink,
        ..
    } = Rig::new();
    let mut one = OneThread::new(ingress, egress);
    let clock = VirtualClock::new(Nanos(0));
    let no_spin = |_: Nanos, _: Nanos| 0u64;
    let mut round = 0u64;
    let mut received = 0u64;
    let mut run = |n: u64| {
        for _ in 0..n {
            let now = Nanos(1_000_000 + round * period_ns);
            clock.advance_to(now);
            sender_host
                .send(&reads[(round % reads.len() as u64) as usize])
                .unwrap();
            round += 1;
            // As the thread does: releases due, reads until the TAP is empty (a read
            // batch stops early when a release comes due).
            loop {
                one.release_due(&clock, &no_spin);
                let more = one.read_batch(&clock, &no_spin, Some(now));
                assert!(more.is_some(), "the egress side is there");
                if more == Some(false) {
                    break;
                }
            }
            one.release_due(&clock, &no_spin);
            while receiver_host.recv(&mut sink).is_ok() {
                received += 1;
            }
        }
    };
    run(3_000);
    let ((), allocations) = crate::counting_alloc::count_on_this_thread(|| run(15_000));
    let c = one.ingress.direction.counters();
    assert!(c.frames_out > 150_000, "{c:?}");
    assert!(c.drops_queue > 0, "{c:?}");
    assert!(one.ingress.shared.segmented.load(Ordering::Relaxed) > 0);
    assert!(received > 10_000);
    assert_eq!(one.ingress.shared.write_errors.load(Ordering::Relaxed), 0);
    assert_eq!(
        allocations, 0,
        "the one-thread path allocated {allocations} times over 15,000 reads once warm"
    );
}

#[test]
fn a_configured_queue_of_minimum_size_frames_fits_the_memory_bound_while_releases_run_late() {
    // 100 Mbit/s, 1 ms, a 1000-frame queue (bench/lab-rates.sh's 64-byte rows), the bound
    // the runtime gives it; UDP GSO super-packets of 64 datagrams of 18 bytes (64-byte
    // frames) offered at 110% of line rate, so the queue fills and drops; the egress code
    // releases 1.5 ms behind each instant (a late thread, measured up to 2.5 ms on the
    // idle host). Every frame beyond the queue must be the queue's drop, none the memory
    // bound's: counting each 64-byte frame of a run as a whole buffer refused 1,000s.
    let topology = wirespeed_lab::topology::Topology::parse(
        "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"100M\"\ndelay = \"1ms\"\nqueue = 1000\n",
        "t",
    )
    .unwrap();
    let link = &topology.links[0];
    let bound = with_super_packet_slack(link.in_flight_frames(&link.ab), 100_000_000, true);
    assert_eq!(bound, 1151 + 144);
    // 64 frames of 84 wire bytes at 100 Mbit/s take 430.08 us; 110%: one every 391 us.
    let mut rig = Rig::with(link.ab, bound, vec![udp_read(64, 18)], 391_000, 1_500_000);
    rig.run(3_000);
    let c = rig.ingress.direction.counters();
    assert!(c.drops_queue > 10_000, "{c:?}");
    assert!(c.frames_out > 150_000, "{c:?}");
    assert_eq!(c.drops_memory, 0, "{c:?}");
    // Memory stays bounded: the buffers in flight never exceed the bound.
    assert!(rig.ingress.shared.in_flight.load(Ordering::Relaxed) <= bound);
}

#[test]
fn a_write_counts_its_buffers_against_the_memory_bound_never_more_than_its_frames() {
    let slot = wirespeed_lab::topology::frame_buffer(1500) + gso::VNET_HDR_LEN;
    // A frame in its own buffer: one.
    assert_eq!(memory_charge(1, slot, slot), 1);
    // Ten 64-byte segments in one small buffer: one, not ten.
    assert_eq!(memory_charge(10, slot, slot), 1);
    // A 64 KB super-packet of 44 full segments: the buffers it fills (43), not more.
    assert_eq!(memory_charge(44, SUPER_READ_BUFFER, slot), 43);
    // Three full segments in a buffer of four slots: its three frames.
    assert_eq!(memory_charge(3, 4 * slot, slot), 3);
}

/// One frame as a stack without offloads hands it to a plain TAP: TCP/IPv4 with
/// timestamps, `len` bytes in all (an acknowledgement at 66).
fn plain_frame(len: usize) -> Vec<u8> {
    let mut f = tcp_read(1)[gso::VNET_HDR_LEN..].to_vec();
    f.resize(len.max(f.len()), 0);
    let ip = (f.len() - 14) as u16;
    f[16..18].copy_from_slice(&ip.to_be_bytes());
    f
}

/// The frame-per-read paths (drop-tail, and the event path of CoDel and FQ-CoDel), driven
/// in virtual time like the offloaded one: three full frames and an acknowledgement every
/// 32 us into 1 Gbit/s (37.5 us of wire: the queue fills and drops), 3,000 rounds of
/// warm-up, then 15,000 counted. Returns the allocations and the rig.
fn frame_path_allocations(aqm: Option<&str>) -> (u64, Rig) {
    let text = format!(
        "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"1G\"\ndelay = \"100us\"\nqueue = 200\n{}",
        aqm.map_or(String::new(), |a| format!("aqm = \"{a}\"\n"))
    );
    let topology = wirespeed_lab::topology::Topology::parse(&text, "t").unwrap();
    let link = &topology.links[0];
    let bound = link.in_flight_frames(&link.ab);
    let reads = vec![
        plain_frame(1514),
        plain_frame(1514),
        plain_frame(1514),
        plain_frame(66),
    ];
    let mut rig = Rig::of_kind(link.ab, link.aqm.as_ref(), false, bound, reads, 8_000, 0);
    rig.run(3_000);
    let ((), allocations) = crate::counting_alloc::count_on_this_thread(|| rig.run(15_000));
    (allocations, rig)
}

#[test]
fn the_drop_tail_path_without_super_packets_allocates_nothing_per_frame_once_warm() {
    let (allocations, rig) = frame_path_allocations(None);
    let c = rig.ingress.direction.counters();
    assert!(c.frames_out > 10_000 && c.drops_queue > 100, "{c:?}");
    assert!(rig.received > 10_000);
    assert_eq!(
        allocations, 0,
        "the drop-tail path allocated {allocations} times over 15,000 frames once warm"
    );
}

#[test]
fn the_aqm_path_allocates_nothing_per_frame_once_warm() {
    for aqm in ["codel", "fq_codel"] {
        let (allocations, rig) = frame_path_allocations(Some(aqm));
        let c = rig.ingress.direction.counters();
        assert!(c.frames_out > 10_000, "{aqm}: {c:?}");
        assert!(rig.received > 10_000, "{aqm}");
        assert_eq!(
            allocations, 0,
            "the {aqm} path allocated {allocations} times over 15,000 frames once warm"
        );
    }
}

fn port() -> PortStatus {
    PortStatus {
        link: 0,
        medium: "full".into(),
        from: "h1".into(),
        to: "h2".into(),
        interface: "eth0".into(),
        rate_bits_per_second: 1_000_000_000,
        delay_ns: 0,
        counters: DirectionCounters::default(),
        utilization: 0.0,
        lateness: LatenessSummary::default(),
        host: None,
        aqm: None,
        fq_perturbation: None,
        device: DeviceCounters::default(),
        cost: EmulatorCost::default(),
        ingress_stamps: None,
    }
}

#[test]
fn a_late_release_is_blamed_on_the_previous_write_the_wait_or_being_behind() {
    let due = Nanos(1_000_000);
    let later = |us: u64| Nanos(due.0 + us * 1_000);
    // 50 us late is not late; the previous write is blamed only if it ended after `due`.
    assert_eq!(late_cause(due, due, Nanos(0), false, later(50)), None);
    assert_eq!(
        late_cause(due, later(40), later(40), false, later(60)),
        Some(LateCause::PreviousWrite)
    );
    assert_eq!(
        late_cause(due, later(40), Nanos(900_000), false, later(60)),
        Some(LateCause::Behind)
    );
    // Past due after a sleep for the hand-off that returned past the instant.
    assert_eq!(
        late_cause(due, later(40), Nanos(900_000), true, later(60)),
        Some(LateCause::Wait)
    );
    assert_eq!(
        late_cause(due, Nanos(990_000), later(60), false, later(60)),
        Some(LateCause::Wait)
    );
}

#[test]
fn the_thread_and_cpu_settings_parse_or_name_the_fix() {
    assert_eq!(Threads::parse("1"), Ok(Threads::One));
    assert_eq!(Threads::parse(" 2 "), Ok(Threads::Two));
    // Unset: two threads at every rate (one thread carried less at 10 Gbit/s on the idle
    // host).
    assert_eq!(Threads::default(), Threads::Two);
    for bad in ["", "0", "3", "two"] {
        let e = Threads::parse(bad).unwrap_err();
        assert!(e.contains("set it to 1") && !e.contains('\n'), "{e}");
    }
    assert_eq!(parse_cpus("0,1", 2), Ok(vec![0, 1]));
    assert_eq!(parse_cpus(" 1 ", 2), Ok(vec![1]));
    for bad in ["", "2", "0,,1", "-1", "a"] {
        let e = parse_cpus(bad, 2).unwrap_err();
        assert!(e.contains("below 2") && !e.contains('\n'), "{e}");
    }
    assert!(parse_cpus(&vec!["0"; 65].join(","), 2).is_err());
}

#[test]
fn super_packets_get_slack_for_their_held_back_runs_within_an_eighth() {
    // 100 Mbit/s, 1000-frame queue, 1 ms: 1151 frames; 64 us + 1 ms of 84-byte frames is
    // 159, capped at 1151 / 8 + 1 = 144.
    assert_eq!(with_super_packet_slack(1151, 100_000_000, true), 1151 + 144);
    assert_eq!(with_super_packet_slack(1151, 100_000_000, false), 1151);
    // 10 Mbit/s: 15 frames + 1.
    assert_eq!(with_super_packet_slack(1151, 10_000_000, true), 1151 + 16);
}

#[test]
fn the_lab_is_named_the_bottleneck_only_on_evidence() {
    assert_eq!(lab_bottleneck(&port()), None);
    let mut p = port();
    p.device.sender_tx_dropped = 3;
    p.device.sender_tx_queue_len = 500;
    let w = lab_bottleneck(&p).unwrap();
    assert_eq!(
        w,
        LabBottleneck::TapQueueDrops {
            port: "eth0 h1 -> h2".into(),
            frames_dropped: 3,
            tx_queue_frames: 500,
        }
    );
    let w = w.to_string();
    assert!(
        w.contains("3 frames") && w.contains("txqueuelen 500"),
        "{w}"
    );
    let mut p = port();
    p.cost.cpu_share_recent = 0.95;
    let w = lab_bottleneck(&p).unwrap();
    assert_eq!(
        serde_json::to_value(&w).unwrap()["kind"],
        "emulator_near_full_core"
    );
    assert!(w.to_string().contains("95% of a core"));
    // A late first frame is no evidence; 1% of a thousand is.
    let mut p = port();
    p.lateness = LatenessSummary {
        frames: 3,
        p50_us: 2_000.0,
        p99_us: 2_000.0,
        max_us: 2_000.0,
        mean_us: 2_000.0,
    };
    assert_eq!(lab_bottleneck(&p), None);
    p.lateness.frames = 5_000;
    let w = lab_bottleneck(&p).unwrap();
    assert!(w.to_string().contains("2000 us late"), "{w}");
    let json = serde_json::to_value(&w).unwrap();
    assert_eq!(json["kind"], "late_releases");
    assert_eq!(json["p99_late_seconds"], 0.002);
}

#[test]
fn the_lab_is_named_the_bottleneck_when_a_stage_cannot_keep_up_with_the_wire() {
    // 100,000 full frames at 10 Gbit/s: the wire holds each 1.23 us.
    let mut p = port();
    p.rate_bits_per_second = 10_000_000_000;
    p.counters.frames_in = 100_000;
    p.counters.frames_out = 100_000;
    p.counters.busy_ns = 123_040_000;
    p.cost.offloads = true;
    p.cost.super_packets = 2_500;
    p.cost.super_packet_frames = 100_000;
    // The egress thread spent 0.2 s, of which 0.1 s spinning: 1 us of work per frame.
    p.cost.egress_cpu_seconds = 0.2;
    p.cost.spin_cpu_seconds = 0.1;
    p.cost.ingress_cpu_seconds = 0.05;
    assert_eq!(lab_bottleneck(&p), None);
    // Without the spin taken aside, the same thread would be named: spin is not work.
    p.cost.spin_cpu_seconds = 0.0;
    let w = lab_bottleneck(&p).unwrap();
    let LabBottleneck::EmulatorSlowerThanLineRate {
        cpu_seconds_per_frame,
        super_packets,
        ..
    } = w
    else {
        panic!("{w:?}")
    };
    assert!((cpu_seconds_per_frame - 2e-6).abs() < 1e-12, "{w:?}");
    assert_eq!(super_packets, 2_500);
    let w = w.to_string();
    assert!(
        w.contains("2.00 us of CPU per frame")
            && w.contains("1.23 us")
            && w.contains("40.0 frames each")
            && w.contains("100% of the frames"),
        "{w}"
    );
    // The ingress thread can be the stage too; one frame per read is said so.
    let mut q = port();
    q.counters.frames_in = 20_000;
    q.counters.frames_out = 20_000;
    q.counters.busy_ns = 20_000 * 12_304;
    q.cost.ingress_cpu_seconds = 20_000.0 * 12e-6;
    let w = lab_bottleneck(&q).unwrap().to_string();
    assert!(
        w.contains("12.00 us") && w.contains("one frame per read"),
        "{w}"
    );
    // Too few frames are no evidence; a shared medium's thread is judged by its share.
    q.counters.frames_out = 9_999;
    assert_eq!(lab_bottleneck(&q), None);
    q.counters.frames_out = 20_000;
    q.cost.shared_thread = true;
    assert_eq!(lab_bottleneck(&q), None);
}
