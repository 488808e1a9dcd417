//! The checks behind the fuzz targets in `fuzz/` that read datagrams, shared by the targets
//! (libFuzzer, `bash fuzz/run.sh`) and the corpus replay in `cargo test` (CI), so that both
//! hold the decoders to the same promises. Each takes any bytes and panics only when a decoder
//! breaks its promise.

use std::net::SocketAddr;

use wirespeed_model::load::{LengthDeck, Schedule};

use crate::control::Cookie;
use crate::control::echo::{ECHO_HEADER_LEN, echo_sequence};
use crate::load::LoadTest;
use crate::load::consent::{NONCE_DATAGRAM_BYTES, nonce_datagram, read_nonce};
use crate::load::generator::read_header;
use crate::load::raw::frame_sequence;
use crate::load::sink::{MAX_HOSTS, SinkBook};

/// The test tag of [`load_datagram`]'s announcement.
pub const LOAD_TAG: u64 = 0x0123_4567_89ab_cdef;

/// The load test's counting sink (issue 13, finding 1). The first two bytes are the announced
/// host count, the third chooses the address family (bit 0) and whether the datagram comes
/// from host 0's consented address (bit 1 clear) or another; the rest is one datagram, taken in
/// after host 0's genuine nonce. The book keeps its announced size and counts the datagram at
/// most once; the header and nonce readers agree with it.
pub fn load_datagram(data: &[u8]) {
    let Some((&[h0, h1, mode], datagram)) = data.split_first_chunk::<3>() else {
        return;
    };
    let hosts = u32::from(u16::from_be_bytes([h0, h1]));
    let test = LoadTest {
        tag: LOAD_TAG,
        host: 0,
        hosts,
        schedule: Schedule::SEED,
        deck: LengthDeck::from_counts(&[(64, 1), (512, 1), (1536, 1)]).expect("a deck"),
        rate_bits_per_second: None,
        count_sink: true,
        seed: 1,
        raw: None,
        tos: None,
    };
    let mut book = SinkBook::new(&test, mode & 1 != 0);
    let sender: SocketAddr = ([127, 0, 0, 1], 4000).into();
    let from: SocketAddr = ([127, 0, 0, 1], 4000 + u16::from((mode >> 1) & 1)).into();
    if hosts > 0 {
        book.accept(&nonce_datagram(LOAD_TAG, 0, &[7; 16]), sender);
    }
    book.accept(datagram, from);
    let c = book.into_counts();
    let announced = hosts.min(MAX_HOSTS);
    assert_eq!(c.received.len(), announced as usize);
    assert!(c.received.iter().sum::<u64>() + c.strays + c.foreign <= 1);
    if let Some(nonce) = read_nonce(datagram) {
        assert_eq!(datagram.len(), NONCE_DATAGRAM_BYTES);
        assert_eq!(&datagram[16..], &nonce);
    }
    match read_header(datagram) {
        Some((tag, host, _)) => {
            assert!(datagram.len() >= 16);
            if tag != LOAD_TAG || host >= announced {
                assert_eq!(c.strays, 1, "another test's or host's datagram is a stray");
            }
        }
        None => assert_eq!(c.strays, 1, "a datagram shorter than the header is a stray"),
    }
}

/// The other datagram readers that face the network: the UDP throughput test's header, the
/// echo service's cookie and sequence (`probe --udp`), and the raw Ethernet frame layout a raw
/// load test reads back from the error queue. Each agrees with its writer's layout.
pub fn datagrams(data: &[u8]) {
    match crate::udp::read_header(data) {
        Some((tag, seq, sent)) => {
            assert_eq!(&data[..8], &tag.to_be_bytes());
            assert_eq!(&data[8..16], &seq.to_be_bytes());
            assert_eq!(&data[16..24], &sent.to_be_bytes());
        }
        None => assert!(data.len() < 24),
    }
    // The cookie is the first 16 bytes, so any datagram long enough carries "its" cookie.
    let cookie = Cookie(
        data.get(..16)
            .and_then(|c| c.try_into().ok())
            .unwrap_or([0; 16]),
    );
    match echo_sequence(data, &cookie) {
        Some(seq) => assert_eq!(&data[16..ECHO_HEADER_LEN], &seq.to_be_bytes()),
        None => assert!(data.len() < ECHO_HEADER_LEN),
    }
    let _ = echo_sequence(data, &Cookie([0xa5; 16]));
    let _ = frame_sequence(data, 0x5753_5241_5700_0001);
    if let Some(t) = data.get(..8) {
        let tag = u64::from_be_bytes(t.try_into().expect("8 bytes"));
        // The tag found at the front: the sequence follows the 16-byte test header.
        match frame_sequence(data, tag) {
            Some(seq) => assert_eq!(&data[16..24], &seq.to_be_bytes()),
            None => assert!(data.len() < 24),
        }
    }
}

/// The metrics listener's request head reader (issue 32 item 2): whatever it accepts lies
/// within [`crate::metrics::http::HEAD_MAX`] and its bounds, reads the same from its own head
/// alone, and a head that is incomplete stays so for any shorter prefix.
pub fn http_head(data: &[u8]) {
    use crate::metrics::http::{HEAD_MAX, HeadError, QUERY_MAX, parse_head};
    match parse_head(data) {
        Ok(Some((request, used))) => {
            assert!(used <= data.len() && used <= HEAD_MAX);
            assert!(request.path.starts_with('/'));
            assert!(request.query.len() <= QUERY_MAX);
            assert!(request.path.len() + request.query.len() <= used);
            assert!(
                request
                    .scrape_timeout_seconds
                    .is_none_or(|s| s.is_finite() && s > 0.0)
            );
            let again = parse_head(&data[..used]).expect("its own head reads again");
            assert_eq!(again, Some((request, used)));
        }
        Ok(None) => {
            assert!(data.len() < HEAD_MAX);
            assert_eq!(parse_head(&data[..data.len() / 2]), Ok(None));
        }
        Err(HeadError::TooLarge) => assert!(data.len() >= HEAD_MAX),
        Err(_) => {}
    }
}

/// iperf3's control decoders (issue 35): the first byte chooses what the rest is read as, as a
/// server or client reads it. A cookie parses only if printable and NUL-ended; a state byte
/// round-trips; a JSON frame is refused from its prefix when over the cap, never claims more
/// bytes than given, and what decodes re-encodes to the same value; checked parameters and
/// results stay within iperf3's limits; a UDP header reads back what was written.
pub fn iperf3_control(data: &[u8]) {
    use crate::iperf3::codec::{
        COOKIE_BYTES, Cookie, MAX_PARAMS_BYTES, MAX_RESULTS_BYTES, MAX_STREAMS, Params, Results,
        State, decode_frame, encode_json, read_udp_header, write_udp_header,
    };
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 4 {
        0 => {
            if let Some(c) = rest.first_chunk::<COOKIE_BYTES>()
                && let Ok(cookie) = Cookie::parse(c)
            {
                assert_eq!(cookie.0[COOKIE_BYTES - 1], 0);
            }
            for &b in rest.iter().take(64) {
                if let Ok(s) = State::from_code(b) {
                    assert_eq!(s.code(), b);
                }
            }
        }
        1 => match decode_frame::<Params>(rest, MAX_PARAMS_BYTES) {
            Ok(Some((p, used))) => {
                assert!((5..=4 + MAX_PARAMS_BYTES).contains(&used) && used <= rest.len());
                let again = encode_json(&p);
                if again.len() <= 4 + MAX_PARAMS_BYTES {
                    let (back, _) = decode_frame::<Params>(&again, MAX_PARAMS_BYTES)
                        .expect("re-encoded parameters decode")
                        .expect("complete");
                    assert_eq!(back, p);
                }
                if let Ok(t) = p.check() {
                    assert!((1..=MAX_STREAMS).contains(&t.streams));
                    assert!(t.length >= 1 && t.seconds <= 86_400);
                }
            }
            Ok(None) => assert!(rest.len() < 4 + MAX_PARAMS_BYTES),
            Err(_) => {}
        },
        2 => {
            if let Ok(Some((r, used))) = decode_frame::<Results>(rest, MAX_RESULTS_BYTES) {
                assert!(used <= rest.len());
                if let Ok(r) = r.check() {
                    assert!(r.streams.len() <= 2 * MAX_STREAMS as usize);
                    let (back, _) = decode_frame::<Results>(&encode_json(&r), usize::MAX)
                        .expect("re-encoded results decode")
                        .expect("complete");
                    assert_eq!(back.streams.len(), r.streams.len());
                }
            }
        }
        _ => {
            let wide = rest.first().is_some_and(|b| b & 1 == 1);
            if let Some((s, u, q)) = read_udp_header(rest, wide) {
                let mut buf = [0u8; 16];
                write_udp_header(&mut buf, s, u, q, wide);
                assert_eq!(
                    &buf[..if wide { 16 } else { 12 }],
                    &rest[..if wide { 16 } else { 12 }]
                );
            }
        }
    }
}

/// The keyed handshake and the sealed frames after it (issue 32 item 1): what an attacker
/// without the key sends. The first byte chooses what the rest is read as:
/// - 0: a sealed frame's body from the wire; it opens only if it is the genuine next frame, and
///   a frame that does not open leaves the seal's count alone, so the genuine frame still opens;
/// - 1: a genuine frame carrying the rest as an error text, one bit of it flipped (the second
///   and third bytes say where); the changed frame never opens, the genuine one decodes to its
///   message, and it cannot be opened twice (a replay) nor by the end that sent it;
/// - 2: a proof: it verifies only if it is the genuine one for its role, and the agent's proof
///   never passes as the client's (a reflection);
/// - 3: hex text: what `unhex` accepts, `hex` writes back in lower case.
pub fn handshake(data: &[u8]) {
    use crate::auth::{AuthKey, Role, hex, unhex};
    use crate::control::{Message, encode_sealed, frame_body, open_sealed};
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let key = AuthKey::from_bytes(b"0123456789abcdef0123456789abcdef");
    let h = key.handshake(1, "fuzz", &[1; 16], &[2; 16]);
    match mode % 4 {
        0 => {
            let mut agent = h.seal(Role::Agent);
            let mut client = h.seal(Role::Client);
            let genuine = encode_sealed(
                &Message::Error {
                    message: "genuine".into(),
                },
                &mut client,
            );
            let body = &genuine[4..];
            if rest == body {
                return;
            }
            assert!(
                open_sealed(rest, &mut agent).is_none(),
                "a forged frame opened"
            );
            assert!(matches!(open_sealed(body, &mut agent), Some(Ok(_))));
        }
        1 => {
            let Some((&[at_hi, at_lo], text)) = rest.split_first_chunk::<2>() else {
                return;
            };
            let message = Message::Error {
                message: String::from_utf8_lossy(text).into_owned(),
            };
            let mut client = h.seal(Role::Client);
            let frame = encode_sealed(&message, &mut client);
            let body = frame_body(&frame)
                .expect("a frame under the cap")
                .expect("complete");
            let mut changed = body.to_vec();
            let at = usize::from(u16::from_be_bytes([at_hi, at_lo])) % (changed.len() * 8);
            changed[at / 8] ^= 1 << (at % 8);
            let mut agent = h.seal(Role::Agent);
            assert!(
                open_sealed(&changed, &mut agent).is_none(),
                "a changed frame opened"
            );
            match open_sealed(body, &mut agent) {
                Some(Ok(m)) => assert_eq!(m, message),
                other => panic!("the genuine frame did not open: {other:?}"),
            }
            assert!(
                open_sealed(body, &mut agent).is_none(),
                "a replayed frame opened"
            );
            let mut sender = h.seal(Role::Client);
            assert!(
                open_sealed(body, &mut sender).is_none(),
                "a reflected frame opened"
            );
        }
        2 => {
            for role in [Role::Client, Role::Agent] {
                assert_eq!(h.verify(role, rest), rest == h.proof(role));
            }
            assert!(!h.verify(Role::Client, &h.proof(Role::Agent)));
        }
        _ => {
            if let Some(bytes) = std::str::from_utf8(rest).ok().and_then(unhex) {
                let text = std::str::from_utf8(rest).expect("checked");
                assert_eq!(hex(&bytes), text.to_ascii_lowercase());
            }
        }
    }
}
