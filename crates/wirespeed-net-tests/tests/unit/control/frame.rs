use proptest::prelude::*;
use std::io::{self, Read};
use wirespeed_net::control::frame::*;
use wirespeed_net::control::message::Message;

#[test]
fn read_message_takes_one_frame_and_refuses_an_oversized_prefix_before_reading_its_body() {
    let m = Message::Hello {
        protocol_version: 1,
        software: "t".into(),
        nonce: None,
    };
    let mut stream = encode(&m);
    stream.extend_from_slice(b"next frame");
    let mut input = stream.as_slice();
    let read = read_message(&mut input).unwrap();
    assert_eq!(encode(&read), encode(&m));
    assert_eq!(input, b"next frame", "one frame read, nothing past it");

    let mut oversized = (MAX_FRAME_BYTES as u32 + 1).to_be_bytes().to_vec();
    oversized.extend_from_slice(b"{}");
    let mut input = oversized.as_slice();
    let err = read_message(&mut input).unwrap_err();
    assert!(
        matches!(err, ReadError::Decode(DecodeError::TooLarge { .. })),
        "{err}"
    );
    assert_eq!(input, b"{}", "the body of a refused frame is not read");

    let truncated = &encode(&m)[..6];
    let err = read_message(&mut &truncated[..]).unwrap_err();
    assert!(matches!(err, ReadError::Io(_)), "{err}");
}

#[test]
fn hello_bytes_both_ways() {
    let m = Message::Hello {
        protocol_version: 1,
        software: "t".into(),
        nonce: None,
    };
    let bytes = encode(&m);
    let body = br#"{"type":"hello","protocol_version":1,"software":"t"}"#;
    assert_eq!(&bytes[..4], &(body.len() as u32).to_be_bytes());
    assert_eq!(&bytes[4..], body);
    let (back, used) = decode(&bytes).unwrap().unwrap();
    assert_eq!(back, m);
    assert_eq!(used, bytes.len());
}

#[test]
fn a_greeting_decodes_as_its_message_and_foreign_bytes_are_named() {
    let m = Message::Hello {
        protocol_version: 1,
        software: "t".into(),
        nonce: None,
    };
    let bytes = encode_greeting(&m);
    assert!(bytes.ends_with(b"}\r\n\r\n"));
    assert_eq!(decode(&bytes).unwrap().unwrap(), (m, bytes.len()));
    assert_eq!(foreign_greeting(&bytes), None);
    assert_eq!(
        foreign_greeting(b"HTTP/1.1 400 Bad Request\r\nServer: x\r\n").as_deref(),
        Some("HTTP/1.1 400 Bad Request")
    );
    assert_eq!(
        foreign_greeting(b"SSH-2.0-OpenSSH_9.6\x07\r\n").as_deref(),
        Some("SSH-2.0-OpenSSH_9.6.")
    );
    assert_eq!(foreign_greeting(&[b'x'; 200]).unwrap().len(), 60);
    assert_eq!(foreign_greeting(b""), None);
}

#[test]
fn incomplete_frames_wait_for_more() {
    let bytes = encode(&Message::Start);
    for cut in 0..bytes.len() {
        assert!(decode(&bytes[..cut]).unwrap().is_none(), "cut at {cut}");
    }
}

#[test]
fn oversized_and_malformed_frames_are_errors() {
    let mut big = (MAX_FRAME_BYTES as u32 + 1).to_be_bytes().to_vec();
    big.extend_from_slice(b"{}");
    assert!(matches!(decode(&big), Err(DecodeError::TooLarge { .. })));
    let mut junk = 5u32.to_be_bytes().to_vec();
    junk.extend_from_slice(b"hello");
    assert!(matches!(decode(&junk), Err(DecodeError::Malformed(_))));
    let mut unknown = 16u32.to_be_bytes().to_vec();
    unknown.extend_from_slice(br#"{"type":"nope"} "#);
    assert!(decode(&unknown).is_err());
}

#[test]
fn reader_survives_a_frame_split_across_reads() {
    let mut bytes = encode(&Message::Start);
    bytes.extend(encode(&Message::SendDone));
    let mut reader = FrameReader::default();
    let mut input = io::Cursor::new(bytes);
    struct OneByte<'a>(&'a mut io::Cursor<Vec<u8>>);
    impl Read for OneByte<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.0.read(&mut buf[..1])
        }
    }
    let mut got = Vec::new();
    loop {
        match reader.poll(&mut OneByte(&mut input)).unwrap() {
            Polled::Message(m) => got.push(m),
            Polled::Pending => {}
            Polled::Closed => break,
        }
    }
    assert_eq!(got, vec![Message::Start, Message::SendDone]);
}

#[test]
fn committed_fuzz_corpus_decodes_without_panic() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../wirespeed-net/fuzz/corpus/decode");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("the corpus is committed") {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        let _ = decode(&bytes);
        n += 1;
    }
    assert!(n >= 10, "corpus has {n} files");
}

proptest! {
    #[test]
    fn decoder_never_panics_on_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
        if let Ok(Some((_, used))) = decode(&bytes) {
            prop_assert!(used <= bytes.len());
        }
    }

    #[test]
    fn decoder_never_panics_behind_a_valid_prefix(body in proptest::collection::vec(any::<u8>(), 0..300)) {
        let mut bytes = (body.len() as u32).to_be_bytes().to_vec();
        bytes.extend_from_slice(&body);
        let _ = decode(&bytes);
    }

    #[test]
    fn error_messages_round_trip(text in ".{0,200}") {
        let m = Message::Error { message: text };
        let bytes = encode(&m);
        prop_assert_eq!(decode(&bytes).unwrap().unwrap().0, m);
    }
}
