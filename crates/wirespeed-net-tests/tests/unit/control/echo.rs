use wirespeed_net::control::Cookie;
use wirespeed_net::control::Message;
use wirespeed_net::control::echo::*;

#[test]
fn only_datagrams_with_the_cookie_are_echoed() {
    let c = Cookie([9; 16]);
    let mut d = vec![9u8; 24];
    assert!(carries_cookie(&d, &c));
    d[3] = 0;
    assert!(!carries_cookie(&d, &c));
    assert!(
        !carries_cookie(&[9u8; 23], &c),
        "too short to carry a sequence"
    );
}

#[test]
fn a_residence_is_written_only_where_asked_and_checked_against_the_round_trip() {
    let c = Cookie([9; 16]);
    let mut d = c.0.to_vec();
    d.extend_from_slice(&7u64.to_be_bytes());
    // Too short to carry one: untouched.
    let mut short = d.clone();
    assert!(!stamp_residence(&mut short, 5));
    assert_eq!(short, d);
    assert_eq!(echo_residence(&short), None);
    // Long enough but not asked (zero padding, as `probe --udp` sends): untouched.
    let mut padded = d.clone();
    padded.resize(64, 0);
    let before = padded.clone();
    assert!(!stamp_residence(&mut padded, 5));
    assert_eq!(padded, before);
    assert_eq!(echo_residence(&padded), Some(0));
    // Asked: stamped in place, same length, cookie and sequence intact.
    let mut asked = d.clone();
    asked.extend_from_slice(&RESIDENCE_ASKED.to_be_bytes());
    asked.resize(40, 1);
    assert_eq!(echo_residence(&asked), None, "asked but not stamped");
    assert!(stamp_residence(&mut asked, 12_345));
    assert_eq!(asked.len(), 40);
    assert_eq!(echo_sequence(&asked, &c), Some(7));
    assert_eq!(echo_residence(&asked), Some(12_345));
    // A hostile reply.
    assert_eq!(check_residence(Some(-1), 1_000), Residence::Rejected);
    assert_eq!(check_residence(Some(1_001), 1_000), Residence::Rejected);
    assert_eq!(
        check_residence(Some(i64::MAX), u64::MAX),
        Residence::Accepted(i64::MAX as u64)
    );
    assert_eq!(
        check_residence(Some(1_000), 1_000),
        Residence::Accepted(1_000)
    );
    assert_eq!(check_residence(Some(0), 1_000), Residence::Accepted(0));
    assert_eq!(check_residence(None, 1_000), Residence::Absent);
}

#[test]
fn a_follow_up_is_written_only_where_asked_and_carries_the_residence_to_the_transmit() {
    let mut stamped = vec![0u8; ECHO_STAMPED_LEN];
    assert!(!stamp_follow_up(&mut stamped, 1, 5), "too short");
    assert_eq!(echo_follow_up(&stamped), None);
    let mut asked = vec![0u8; ECHO_STAMPED_LEN];
    asked.extend_from_slice(&0u64.to_be_bytes());
    asked.extend_from_slice(&FOLLOW_UP_ASKED.to_be_bytes());
    assert_eq!(echo_follow_up(&asked), None, "asked, none written");
    assert!(!stamp_follow_up(&mut asked, 7, FOLLOW_UP_ASKED));
    assert!(stamp_follow_up(&mut asked, 7, 13_000));
    assert_eq!(asked.len(), ECHO_FOLLOW_UP_LEN);
    assert_eq!(echo_follow_up(&asked), Some((7, 13_000)));
    assert!(!stamp_follow_up(&mut asked, 8, 1), "written once");
    // Carried on only from an accepted residence, and only within the round trip.
    let r = Residence::Accepted(40_000);
    assert_eq!(follow_up(r, 13_000, 100_000), Residence::ToTransmit(53_000));
    assert_eq!(follow_up(r, 60_001, 100_000), r);
    assert_eq!(follow_up(r, -1, 100_000), r);
    assert_eq!(follow_up(r, i64::MAX, 100_000), r);
    let huge = Residence::Accepted(u64::MAX);
    assert_eq!(follow_up(huge, i64::MAX, u64::MAX), huge, "no overflow");
    assert_eq!(follow_up(Residence::Rejected, 1, 100), Residence::Rejected);
    assert_eq!(follow_up(Residence::Absent, 1, 100), Residence::Absent);
}

#[test]
fn the_committed_corpus_frames_decode_to_echo_messages() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../wirespeed-net/fuzz/corpus/decode"
    );
    for i in 0..4 {
        let bytes = std::fs::read(format!("{dir}/echo-{i}")).unwrap();
        let (m, _) = wirespeed_net::control::decode(&bytes).unwrap().unwrap();
        assert_eq!(m.kind(), "echo");
    }
}

#[test]
fn echo_messages_round_trip_in_json() {
    let m = Message::Echo(EchoMessage::Open {
        client_port: 4000,
        seconds: 5.0,
    });
    let text = serde_json::to_string(&m).unwrap();
    assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), m);
    assert!(text.contains("\"echo\":\"open\""), "{text}");
}
