use proptest::prelude::*;
use wirespeed_net::icmp::*;

/// An ICMPv4 time exceeded from 198.18.0.1, quoting an echo request id 0x1234 seq 7.
static TIME_EXCEEDED_V4: [u8; 36] = [
    11, 0, 0, 0, 0, 0, 0, 0, // ICMP: time exceeded, unused
    0x45, 0, 0, 64, 0, 0, 0x40, 0, 1, 1, 0, 0, 198, 18, 0, 2, 198, 18, 1, 2, // quoted IPv4
    8, 0, 0, 0, 0x12, 0x34, 0, 7, // quoted echo request
];

#[test]
fn echo_request_bytes() {
    let mut buf = Vec::new();
    emit_echo_request(Family::V4, 0x1234, 7, 12, &mut buf);
    assert_eq!(buf.len(), 12);
    assert_eq!(&buf[..2], &[8, 0]);
    assert_eq!(&buf[4..8], &[0x12, 0x34, 0, 7]);
    // A correct checksum makes the sum over the message come out zero.
    assert_eq!(checksum(&buf), 0);
    emit_echo_request(Family::V6, 1, 2, 8, &mut buf);
    assert_eq!(buf, [128, 0, 0, 0, 0, 1, 0, 2]);
}

#[test]
fn time_exceeded_quotes_the_probe() {
    assert_eq!(
        parse(Family::V4, &TIME_EXCEEDED_V4),
        Ok(Message::TimeExceeded {
            ident: 0x1234,
            seq: 7,
            quoted: 28
        })
    );
    let mut unreachable = TIME_EXCEEDED_V4;
    unreachable[0] = 3;
    unreachable[1] = 13;
    assert!(matches!(
        parse(Family::V4, &unreachable),
        Ok(Message::Unreachable {
            code: 13,
            seq: 7,
            ..
        })
    ));
}

#[test]
fn fragmentation_needed_and_packet_too_big_carry_the_mtu() {
    let mut frag = TIME_EXCEEDED_V4;
    frag[0] = 3;
    frag[1] = 4;
    frag[6..8].copy_from_slice(&1280u16.to_be_bytes());
    assert_eq!(
        parse(Family::V4, &frag),
        Ok(Message::TooBig {
            mtu: 1280,
            ident: 0x1234,
            seq: 7
        })
    );
    let mut big = vec![2, 0, 0, 0, 0, 0, 0x05, 0x00];
    big.extend([0x60, 0, 0, 0, 0, 16, 58, 1]);
    big.extend([0; 32]);
    big.extend([128, 0, 0, 0, 0, 5, 0, 6]);
    assert_eq!(
        parse(Family::V6, &big),
        Ok(Message::TooBig {
            mtu: 1280,
            ident: 5,
            seq: 6
        })
    );
}

#[test]
fn echo_reply_and_short_packets() {
    assert_eq!(
        parse(Family::V6, &[129, 0, 0, 0, 0, 9, 1, 0]),
        Ok(Message::EchoReply { ident: 9, seq: 256 })
    );
    assert_eq!(
        parse(Family::V4, &[0, 0, 0]),
        Err(WireError::Truncated { got: 3, need: 8 })
    );
    // A time exceeded whose quote is cut short is "other", not a panic.
    assert_eq!(
        parse(Family::V4, &TIME_EXCEEDED_V4[..20]),
        Ok(Message::Other { kind: 11 })
    );
    assert_eq!(ipv4_header_len(&[0x60]), Err(WireError::NotIpv4));
}

/// The fuzz target's committed corpus, replayed: known packets decode as expected and
/// none panics.
#[test]
fn corpus_replays() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../wirespeed-net/fuzz/corpus/icmp_parse"
    );
    let mut seen = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let v4 = parse(Family::V4, &bytes);
        let v6 = parse(Family::V6, &bytes);
        let name = path.file_name().unwrap().to_str().unwrap();
        match name {
            "time-exceeded-v4" => {
                assert!(matches!(v4, Ok(Message::TimeExceeded { seq: 7, .. })))
            }
            "time-exceeded-v6" => {
                assert!(matches!(v6, Ok(Message::TimeExceeded { seq: 9, .. })))
            }
            "echo-reply-v4" => {
                assert!(matches!(v4, Ok(Message::EchoReply { ident: 1, seq: 2 })))
            }
            "ipv4-echo-reply-raw" => {
                let ihl = ipv4_header_len(&bytes).unwrap();
                assert!(matches!(
                    parse(Family::V4, &bytes[ihl..]),
                    Ok(Message::EchoReply { .. })
                ));
            }
            _ => {}
        }
        seen += 1;
    }
    assert!(seen >= 6, "corpus at {dir}");
}

proptest! {
    #[test]
    fn parsing_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = parse(Family::V4, &bytes);
        let _ = parse(Family::V6, &bytes);
        let _ = ipv4_header_len(&bytes);
        let _ = parse_errqueue_payload(&bytes);
    }

    #[test]
    fn emitted_requests_parse_back(ident in any::<u16>(), seq in any::<u16>(), len in 8usize..1500) {
        for family in [Family::V4, Family::V6] {
            let mut buf = Vec::new();
            emit_echo_request(family, ident, seq, len, &mut buf);
            prop_assert_eq!(parse(family, &buf), Ok(Message::EchoRequest { ident, seq }));
        }
    }
}
