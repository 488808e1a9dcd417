use wirespeed_net::control::Message;
use wirespeed_net::control::rr::*;

#[test]
fn messages_round_trip() {
    let m = Message::Rr(RrMessage::Open {
        request_bytes: 1,
        response_bytes: 1,
        seconds: 2.0,
    });
    let text = serde_json::to_string(&m).unwrap();
    assert_eq!(serde_json::from_str::<Message>(&text).unwrap(), m);
    assert!(serde_json::from_str::<Message>(r#"{"type":"rr","rr":"bogus"}"#).is_err());
}

#[test]
fn sizes_and_durations_are_bounded() {
    assert!(open_is_valid(1, 1, 1.0));
    assert!(open_is_valid(MAX_RR_BYTES, MAX_RR_BYTES, 1.0));
    assert!(!open_is_valid(0, 1, 1.0));
    assert!(!open_is_valid(1, MAX_RR_BYTES + 1, 1.0));
    assert!(!open_is_valid(1, 1, f64::NAN));
    assert!(!open_is_valid(1, 1, 0.0));
}
