mod consent;
mod generator;
mod raw;
mod sink;
mod tstamp;
use wirespeed_net::control::load::LoadMessage;
use wirespeed_net::control::{Message, decode, encode};
use wirespeed_net::load::*;

const MS: u64 = 1_000_000;

/// A restart of the schedule counts only what it skipped inside the window; a lag within
/// the catch-up limit skips nothing (the frames go out late, in a burst).
#[test]
fn a_pacer_counts_the_window_time_it_gave_up() {
    let never = || false;
    let mut p = Pacer::new(50 * MS, (100 * MS, 200 * MS));
    // 100 ms late for the 50 ms slot: 50-150 ms given up, 100-150 ms of it in the window.
    assert_eq!(p.wait(150 * MS, 300 * MS, &never), Some(150 * MS));
    assert_eq!(p.skipped_in_window_ns, 50 * MS);
    p.book(1226, 1e6).unwrap(); // (1226 + 24) x 8 bits: 10 ms a frame at 1 Mbit/s
    // 5 ms late: within the limit, nothing given up.
    assert_eq!(p.wait(165 * MS, 300 * MS, &never), Some(165 * MS));
    assert_eq!(p.skipped_in_window_ns, 50 * MS);
    p.book(1226, 1e6).unwrap();
    // Ended at 260 ms with the 170 ms slot owed: 170-200 ms of the window never offered.
    assert!((p.skipped_in_window_s(260 * MS) - 0.080).abs() < 1e-9);
    // A schedule that kept up gives up nothing.
    let kept = Pacer::new(100 * MS, (100 * MS, 200 * MS));
    assert_eq!(kept.skipped_in_window_s(100 * MS), 0.0);
}

#[test]
fn load_messages_ride_in_the_control_protocol() {
    let m = Message::Load(LoadMessage::Go {
        start_at_ns: 42,
        destination: None,
    });
    let bytes = encode(&m);
    let body = std::str::from_utf8(&bytes[4..]).unwrap();
    assert_eq!(
        body,
        r#"{"type":"load","load":"go","start_at_ns":42,"destination":null}"#
    );
    assert_eq!(decode(&bytes).unwrap().unwrap().0, m);
    let clock = br#"{"type":"load","load":"clock_query"}"#;
    let mut framed = (clock.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(clock);
    assert_eq!(
        decode(&framed).unwrap().unwrap().0,
        Message::Load(LoadMessage::ClockQuery)
    );
    let unknown = br#"{"type":"load","load":"explode"}"#;
    let mut framed = (unknown.len() as u32).to_be_bytes().to_vec();
    framed.extend_from_slice(unknown);
    assert!(decode(&framed).is_err());
}
