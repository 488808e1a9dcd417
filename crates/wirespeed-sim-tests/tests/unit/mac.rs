//! The unit tests of `wirespeed_sim::mac`.

use wirespeed_sim::mac::*;
use wirespeed_sim::time::SimTime;

/// A hand-driven MAC: records what it asked for.
#[derive(Default)]
struct Probe {
    now: SimTime,
    timer: Option<(SimTime, u32)>,
    signals: Vec<(SimTime, &'static str)>,
    random: u64,
}

impl MacIo for Probe {
    fn now(&self) -> SimTime {
        self.now
    }
    fn set_timer(&mut self, at: SimTime, generation: u32) {
        self.timer = Some((at, generation));
    }
    fn start_signal(&mut self) {
        self.signals.push((self.now, "start"));
    }
    fn end_signal(&mut self, how: SignalEnd) {
        let what = match how {
            SignalEnd::Complete => "end",
            SignalEnd::Jammed => "jam end",
        };
        self.signals.push((self.now, what));
    }
    fn random_below(&mut self, n: u64) -> u64 {
        self.random.min(n - 1)
    }
}

fn bits(b: u64) -> SimTime {
    SimTime::ZERO + MacParams::table_2(10).bits(b)
}

fn fire(mac: &mut Mac, io: &mut Probe) -> Option<TxReport> {
    let (at, generation) = io.timer.take().expect("no timer armed");
    io.now = at;
    mac.timer(io, generation)
}

#[test]
fn an_idle_medium_is_used_after_the_gap() {
    let mut mac = Mac::new(MacParams::table_2(10), MacDuplex::Half);
    // The medium has been idle only 10 bit times.
    let mut io = Probe {
        now: bits(10),
        ..Probe::default()
    };
    mac.send(&mut io, 608).unwrap();
    assert_eq!(io.timer.unwrap().0, bits(96));
    assert!(fire(&mut mac, &mut io).is_none());
    assert_eq!(io.signals, [(bits(96), "start")]);
    let report = fire(&mut mac, &mut io).unwrap();
    assert_eq!(report.outcome, TxOutcome::Sent);
    assert_eq!(report.finished, bits(96 + 608));
    assert_eq!((report.attempts, report.collisions), (1, 0));
    assert!(mac.send(&mut io, 608).is_ok());
    assert_eq!(mac.send(&mut io, 608), Err(MacBusy));
}

#[test]
fn carrier_defers_and_the_gap_follows_it() {
    let mut mac = Mac::new(MacParams::table_2(10), MacDuplex::Half);
    let mut io = Probe {
        now: bits(1000),
        ..Probe::default()
    };
    mac.carrier_on(&mut io);
    mac.send(&mut io, 608).unwrap();
    assert!(io.timer.is_none(), "must defer while carrier is sensed");
    io.now = bits(2000);
    mac.carrier_off(&mut io);
    assert_eq!(io.timer.unwrap().0, bits(2096));
    // Carrier back within the first 64 bits of the gap: defer again.
    io.now = bits(2050);
    mac.carrier_on(&mut io);
    let (at, generation) = io.timer.unwrap();
    io.now = at;
    assert!(mac.timer(&mut io, generation).is_none());
    assert!(
        io.signals.is_empty(),
        "a cancelled gap timer must not transmit"
    );
    io.now = bits(3000);
    mac.carrier_off(&mut io);
    // Carrier back in the second part of the gap: committed, transmits and collides.
    io.now = bits(3070);
    mac.carrier_on(&mut io);
    fire(&mut mac, &mut io);
    assert_eq!(io.signals, [(bits(3096), "start")]);
    assert_eq!(
        io.timer.unwrap().0,
        bits(3096 + 64 + 32),
        "preamble, then the jam"
    );
}

#[test]
fn collision_jams_backs_off_and_retries() {
    let mut mac = Mac::new(MacParams::table_2(10), MacDuplex::Half);
    let mut io = Probe {
        now: bits(500),
        random: 1,
        ..Probe::default()
    };
    mac.send(&mut io, 608).unwrap();
    assert_eq!(io.signals.len(), 1);
    io.now = bits(510);
    mac.carrier_on(&mut io);
    // Seen 10 bits into the preamble: the preamble (64 bits) goes out whole, then the jam.
    assert_eq!(io.timer.unwrap().0, bits(500 + 64 + 32));
    assert!(fire(&mut mac, &mut io).is_none());
    assert_eq!(io.signals[1], (bits(596), "jam end"));
    // r = 1: one slot of backoff.
    assert_eq!(io.timer.unwrap().0, bits(596 + 512));
    io.now = bits(600);
    mac.carrier_off(&mut io);
    fire(&mut mac, &mut io); // backoff over, idle long enough: transmit at once
    assert_eq!(io.signals[2], (bits(1108), "start"));
    let report = fire(&mut mac, &mut io).unwrap();
    assert_eq!((report.attempts, report.collisions), (2, 1));
    assert_eq!(report.late_collisions, 0);
    assert_eq!(report.first_attempt, bits(500));
}

#[test]
fn a_collision_in_the_preamble_is_enforced_after_it_and_one_later_at_once() {
    // 802.3 4.2.3.2.4 / 4.2.8: the preamble and SFD always go out whole, so the shortest
    // fragment is 64 + 32 = 96 bits however soon the other signal arrives.
    let jam_end = |params: MacParams, seen_after: u64| {
        let mut mac = Mac::new(params, MacDuplex::Half);
        let mut io = Probe {
            now: bits(1000),
            ..Probe::default()
        };
        mac.send(&mut io, 608).unwrap();
        io.now = bits(1000 + seen_after);
        mac.carrier_on(&mut io);
        fire(&mut mac, &mut io);
        let (at, what) = *io.signals.last().unwrap();
        assert_eq!(what, "jam end");
        at.since(bits(1000)).ps() / params.bit_time.ps()
    };
    let standard = MacParams::table_2(10);
    assert!(standard.jam_after_preamble);
    assert_eq!(jam_end(standard, 0), 96);
    assert_eq!(jam_end(standard, 40), 96);
    assert_eq!(jam_end(standard, 64), 96);
    assert_eq!(
        jam_end(standard, 100),
        132,
        "after the preamble: jam at once"
    );
    let at_once = MacParams {
        jam_after_preamble: false,
        ..standard
    };
    assert_eq!(jam_end(at_once, 0), 32);
    assert_eq!(jam_end(at_once, 40), 72);
    assert_eq!(jam_end(at_once, 100), 132);
}

proptest::proptest! {
    #[test]
    fn no_collision_fragment_is_shorter_than_96_bits(seen_after in 0u64..2000, frame in 512u64..12_000) {
        // Whenever the other signal arrives (within the frame), the station's signal lasts
        // at least the preamble and the jam, and ends 32 bits after the later of
        // detection and the preamble's end.
        let mut mac = Mac::new(MacParams::table_2(10), MacDuplex::Half);
        let mut io = Probe { now: bits(1000), ..Probe::default() };
        mac.send(&mut io, frame + 64).unwrap();
        io.now = bits(1000 + seen_after.min(frame + 63));
        mac.carrier_on(&mut io);
        fire(&mut mac, &mut io);
        let (end, what) = *io.signals.last().unwrap();
        proptest::prop_assert_eq!(what, "jam end");
        let length = end.since(bits(1000)).ps() / MacParams::table_2(10).bit_time.ps();
        proptest::prop_assert_eq!(length, seen_after.min(frame + 63).max(64) + 32);
    }
}

#[test]
fn sixteen_collisions_drop_the_frame() {
    let mut mac = Mac::new(MacParams::table_2(10), MacDuplex::Half);
    let mut io = Probe {
        now: bits(1000),
        ..Probe::default()
    };
    mac.send(&mut io, 608).unwrap();
    let mut report = None;
    for attempt in 1..=16 {
        assert_eq!(io.signals.len(), 2 * (attempt - 1) + 1, "attempt {attempt}");
        io.now += MacParams::table_2(10).bits(1);
        mac.carrier_on(&mut io);
        report = fire(&mut mac, &mut io); // jam ends
        io.now += MacParams::table_2(10).bits(1);
        mac.carrier_off(&mut io);
        if report.is_none() {
            fire(&mut mac, &mut io); // backoff (r = 0) ends: defer, gap
            fire(&mut mac, &mut io); // gap ends: transmit
        }
    }
    let report = report.expect("dropped after 16 attempts");
    assert_eq!(report.outcome, TxOutcome::Dropped);
    assert_eq!((report.attempts, report.collisions), (16, 16));
    assert!(mac.is_idle());
}

#[test]
fn a_collision_after_the_slot_is_late() {
    let mut mac = Mac::new(MacParams::table_2(100), MacDuplex::Half);
    let mut io = Probe {
        now: SimTime::ZERO + MacParams::table_2(100).bits(1000),
        ..Probe::default()
    };
    mac.send(&mut io, 12_000).unwrap();
    io.now += MacParams::table_2(100).bits(64 + 600);
    mac.carrier_on(&mut io);
    let report = fire(&mut mac, &mut io).expect("abandoned at the end of the jam");
    assert_eq!(report.outcome, TxOutcome::LateCollision);
    assert_eq!((report.collisions, report.late_collisions), (1, 1));
    // With retries allowed, it is retried like any collided frame.
    let params = MacParams {
        abort_on_late_collision: false,
        ..MacParams::table_2(100)
    };
    let mut mac = Mac::new(params, MacDuplex::Half);
    let mut io = Probe {
        now: SimTime::ZERO + MacParams::table_2(100).bits(1000),
        ..Probe::default()
    };
    mac.send(&mut io, 12_000).unwrap();
    io.now += MacParams::table_2(100).bits(64 + 600);
    mac.carrier_on(&mut io);
    fire(&mut mac, &mut io);
    io.now += MacParams::table_2(100).bits(1);
    mac.carrier_off(&mut io);
    fire(&mut mac, &mut io);
    fire(&mut mac, &mut io);
    let report = fire(&mut mac, &mut io).unwrap();
    assert_eq!((report.collisions, report.late_collisions), (1, 1));
}

#[test]
fn full_duplex_ignores_carrier() {
    let mut mac = Mac::new(MacParams::table_2(10), MacDuplex::Full);
    let mut io = Probe {
        now: bits(1000),
        ..Probe::default()
    };
    mac.carrier_on(&mut io);
    mac.send(&mut io, 608).unwrap();
    assert_eq!(io.signals, [(bits(1000), "start")]);
    mac.carrier_on(&mut io);
    let report = fire(&mut mac, &mut io).unwrap();
    assert_eq!((report.outcome, report.collisions), (TxOutcome::Sent, 0));
    mac.send(&mut io, 608).unwrap();
    assert_eq!(io.timer.unwrap().0, bits(1000 + 608 + 96));
}
