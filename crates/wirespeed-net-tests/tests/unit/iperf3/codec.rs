use wirespeed_net::iperf3::codec::*;

#[test]
fn cookies_are_36_characters_of_the_alphabet_and_a_nul() {
    let c = Cookie::from_random(&[0xff; COOKIE_BYTES]);
    assert_eq!(c.0[36], 0);
    assert!(c.0[..36].iter().all(|b| COOKIE_ALPHABET.contains(b)));
    assert_eq!(Cookie::parse(&c.0), Ok(c));
    let mut http = [b'x'; COOKIE_BYTES];
    http[..4].copy_from_slice(b"GET ");
    assert_eq!(Cookie::parse(&http), Err(CodecError::BadCookie));
}

#[test]
fn every_state_code_round_trips_and_unused_ones_are_refused() {
    for code in 0..=255u8 {
        match State::from_code(code) {
            Ok(s) => assert_eq!(s.code(), code),
            Err(e) => assert_eq!(e, CodecError::BadState { code }),
        }
    }
    assert_eq!(State::from_code(0xff), Ok(State::AccessDenied));
    assert_eq!(State::from_code(9), Ok(State::ParamExchange));
    assert!(State::from_code(3).is_err());
}

#[test]
fn lengths_outside_the_cap_are_refused_from_the_prefix() {
    assert!(json_length([0; 4], 10).is_err());
    assert!(json_length([0xff; 4], MAX_RESULTS_BYTES).is_err());
    assert_eq!(json_length([0, 0, 0, 10], 10), Ok(10));
    assert!(json_length([0, 0, 0, 11], 10).is_err());
    let huge = [0xff, 0xff, 0xff, 0xff, b'{'];
    assert!(decode_frame::<Params>(&huge, MAX_PARAMS_BYTES).is_err());
}

#[test]
fn iperf3_3_12_parameters_decode() {
    // As `iperf3 -c 127.0.0.1 -u -b 100M -P 4 -R -t 2 --debug` (3.12) sent them.
    let body = br#"{"udp":true,"omit":0,"time":2,"num":0,"blockcount":0,"parallel":4,"reverse":true,"len":32768,"bandwidth":100000000,"pacing_timer":1000,"client_version":"3.12"}"#;
    let p: Params = decode_json(body).unwrap();
    let t = p.check().unwrap();
    assert!(t.udp);
    assert_eq!(t.direction, wirespeed_net::spec::Direction::Receive);
    assert_eq!((t.streams, t.seconds, t.length), (4, 2, 32768));
    assert_eq!(t.bits_per_second, 100_000_000);
    let mut frame = encode_json(&p);
    frame.extend_from_slice(b"trailing");
    let (back, used): (Params, usize) = decode_frame(&frame, MAX_PARAMS_BYTES).unwrap().unwrap();
    assert_eq!(back, p);
    assert_eq!(used, frame.len() - 8);
}

#[test]
fn numbers_written_as_doubles_are_counts_and_fractions_are_refused() {
    let p: Params = decode_json(br#"{"tcp":true,"num":1e+10,"time":0}"#).unwrap();
    assert_eq!(p.num, Some(10_000_000_000));
    assert!(decode_json::<Params>(br#"{"time":1.5}"#).is_err());
    assert!(decode_json::<Params>(br#"{"time":-1}"#).is_err());
    assert!(decode_json::<Params>(br#"{"parallel":1e300}"#).is_err());
    // `"reverse": false` is not reverse, as cJSON's type check reads it.
    let p: Params = decode_json(br#"{"reverse":false}"#).unwrap();
    assert_eq!(p.reverse, None);
}

#[test]
fn parameters_iperf3_refuses_are_refused() {
    let bad = [
        r#"{"tcp":true,"parallel":0}"#,
        r#"{"tcp":true,"parallel":129}"#,
        r#"{"tcp":true,"time":86401}"#,
        r#"{"tcp":true,"len":2000000}"#,
        r#"{"udp":true,"len":8}"#,
        r#"{"tcp":true,"time":0}"#,
        r#"{"sctp":true}"#,
        r#"{"tcp":true,"authtoken":"abc"}"#,
        r#"{"tcp":true,"TOS":256}"#,
    ];
    for b in bad {
        let p: Params = decode_json(b.as_bytes()).unwrap();
        assert!(p.check().is_err(), "{b}");
    }
}

#[test]
fn iperf3_3_12_results_decode() {
    // As an iperf3 3.12 client sent them after `--bidir -P 2 -t 1` (two streams shown).
    let body = br#"{"cpu_util_total":31.362101966576144,"cpu_util_user":0.76495497985978855,"cpu_util_system":30.597051331473157,"sender_has_retransmits":1,"congestion_used":"bbr","streams":[{"id":1,"bytes":408944640,"retransmits":1,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.009565},{"id":4,"bytes":207355904,"retransmits":18446744073709551615,"jitter":0,"errors":0,"packets":0,"start_time":0,"end_time":1.009573}]}"#;
    let r: Results = decode_json::<Results>(body).unwrap().check().unwrap();
    assert_eq!(r.streams[0].bytes, 408_944_640);
    assert_eq!(r.streams[0].retransmits, 1);
    assert_eq!(r.streams[1].retransmits, -1, "unsigned -1 is not known");
    assert_eq!(r.streams[1].end_time, Some(1.009573));
    assert_eq!(r.congestion_used.as_deref(), Some("bbr"));
    // Later versions add the warm-up's figures; a big count may come as a double.
    let later = br#"{"cpu_util_total":1,"cpu_util_user":0,"cpu_util_system":1,"sender_has_retransmits":-1,"streams":[{"id":1,"bytes":1e+15,"retransmits":-1,"jitter":0,"errors":0,"omitted_errors":0,"packets":0,"omitted_packets":0}]}"#;
    let r: Results = decode_json(later).unwrap();
    assert_eq!(r.streams[0].bytes, 1_000_000_000_000_000);
    // A results document without its required figures is refused.
    assert!(decode_json::<Results>(br#"{"streams":[]}"#).is_err());
}

#[test]
fn stream_ids_skip_two_as_iperf3_does() {
    assert_eq!((0..4).map(stream_id).collect::<Vec<_>>(), [1, 3, 4, 5]);
}

#[test]
fn udp_headers_round_trip_in_both_widths() {
    for wide in [false, true] {
        let mut buf = [0u8; 32];
        write_udp_header(&mut buf, 7, 999_999, 41, wide);
        assert_eq!(read_udp_header(&buf, wide), Some((7, 999_999, 41)));
        assert_eq!(
            read_udp_header(&buf[..udp_header_bytes(wide) - 1], wide),
            None
        );
    }
}
