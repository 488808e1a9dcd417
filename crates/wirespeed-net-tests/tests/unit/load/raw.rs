use std::sync::atomic::AtomicBool;
use wirespeed_model::load::DelaySource;
use wirespeed_net::load::generator::IN_WINDOW;
use wirespeed_net::load::{LoadTest, monotonic_ns};
#[test]
fn a_refused_generator_waits_longer_until_its_device_takes_a_frame() {
    use wirespeed_net::load::raw::{FULL_WAIT, FULL_WAIT_MAX, next_full_wait};
    let mut w = FULL_WAIT / 2;
    w = next_full_wait(w, 0);
    assert_eq!(w, FULL_WAIT);
    let waits: Vec<_> = (0..6)
        .map(|_| {
            w = next_full_wait(w, 0);
            w
        })
        .collect();
    assert_eq!(waits[0], FULL_WAIT * 2);
    assert_eq!(waits[2], FULL_WAIT * 8);
    assert_eq!(*waits.last().unwrap(), FULL_WAIT_MAX);
    assert_eq!(next_full_wait(w, 3), FULL_WAIT, "a take resets it");
}

use proptest::prelude::*;
use wirespeed_model::load::{LengthDeck, Schedule};
use wirespeed_net::load::raw::*;

#[test]
fn frame_bytes_both_ways() {
    let mut f = [0xAAu8; 64];
    let mac = [2, 0, 0, 0, 0, 7];
    write_frame_headers(&mut f, mac, 0x0102_0304_0506_0708, 3, IN_WINDOW, 0x1122);
    let expected: [u8; 46] = [
        2, 0, 0, 0, 0, 7, 2, 0, 0, 0, 0, 7, 0x88, 0xB5, // to self, from self, 0x88B5
        1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0, 3, 0, 0, 0, 1, // tag, host, flags (in window)
        0, 0, 0, 0, 0, 0, 0x11, 0x22, // sequence
        0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, 0xAA, // the rest untouched
    ];
    assert_eq!(f[..46], expected);
    assert_eq!(MIN_RAW_FRAME_BYTES, 38);
    assert_eq!(frame_sequence(&f, 0x0102_0304_0506_0708), Some(0x1122));
    // Wherever the returned bytes start, the tag finds the header.
    assert_eq!(
        frame_sequence(&f[14..], 0x0102_0304_0506_0708),
        Some(0x1122)
    );
    assert_eq!(
        frame_sequence(&f, 0x0102_0304_0506_0709),
        None,
        "another test"
    );
    assert_eq!(
        frame_sequence(&f[..37], 0x0102_0304_0506_0708),
        None,
        "cut short"
    );
}

proptest! {
    #[test]
    fn any_returned_bytes_parse_without_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..128),
        tag: u64,
    ) {
        let _ = frame_sequence(&bytes, tag);
    }

    #[test]
    fn a_written_frame_reads_back_its_sequence(tag: u64, seq: u64, host: u32, pad in 0usize..40) {
        let mut f = vec![0u8; MIN_RAW_FRAME_BYTES + pad];
        write_frame_headers(&mut f, [2, 0, 0, 0, 0, 1], tag, host, 0, seq);
        // A tag whose bytes also occur earlier in the frame (the addresses, the type) would
        // be found there first; a test's tag is a random 64-bit number.
        let earlier = &f[..ETHERNET_HEADER_BYTES + 7];
        prop_assume!(earlier.windows(8).all(|w| w != tag.to_be_bytes()));
        prop_assert_eq!(frame_sequence(&f, tag), Some(seq));
    }
}

fn root() -> bool {
    rustix::process::geteuid().is_root()
}

#[test]
fn an_absent_interface_and_bad_lengths_are_refused_clearly() {
    let e = RawSender::open("ws-no-such-if").err().unwrap();
    if root() {
        assert!(matches!(e, RawError::NoInterface(_)), "{e}");
        let lo = RawSender::open("lo").unwrap();
        assert!(lo.check(1500, 64).is_ok());
        let long = lo.check(70_000, 64).unwrap_err().to_string();
        assert!(long.contains("exceeds lo's MTU"), "{long}");
        assert!(matches!(lo.check(100, 20), Err(RawError::TooShort(20))));
    } else {
        // Either refusal is one clear line; which comes first depends on the host.
        let text = e.to_string();
        assert!(
            text.contains("root") || text.contains("no interface"),
            "{text}"
        );
        assert!(!text.contains('\n'));
    }
}

#[test]
fn frames_to_self_on_loopback_are_counted_and_stamped() {
    if !root() {
        eprintln!("skipped: raw Ethernet needs root");
        return;
    }
    let sender = RawSender::open("lo").unwrap();
    let test = LoadTest {
        tag: 0x5753_5241_5700_0001,
        host: 1,
        hosts: 2,
        schedule: Schedule {
            settle_ns: 10_000_000,
            transmit_ns: 200_000_000,
            measure_ns: 100_000_000,
            cooldown_ns: 0,
        },
        deck: LengthDeck::from_counts(&[(64, 1), (1514, 1)]).unwrap(),
        rate_bits_per_second: None,
        count_sink: false,
        seed: 3,
        raw: None,
        tos: None,
    };
    let stop = AtomicBool::new(false);
    let r = transmit(&sender, &test, monotonic_ns(), &stop).unwrap();
    let c = r.counters;
    assert!(c.packets > 100, "{c:?}");
    assert!(
        c.packets_total > c.packets,
        "the window is a part of the run"
    );
    assert_eq!(
        r.delay_source,
        DelaySource::KernelTxSoftware,
        "{:?}",
        r.timestamping
    );
    let note = r.timestamping.unwrap();
    assert!(note.starts_with("lo: no hardware"), "{note}");
    assert!(
        c.delay_count * 10 >= c.packets * 9 && c.delay_mean_s() < 0.01,
        "stamps matched by sequence: {c:?}"
    );
}
