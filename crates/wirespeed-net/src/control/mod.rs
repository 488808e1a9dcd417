//! The control protocol between a client and the agent.
//!
//! One TCP connection per session carries length-prefixed JSON messages ([`frame`]): a 4-byte
//! big-endian length, then that many bytes of one JSON object tagged by `"type"`
//! ([`Message`]). Frames are capped at [`MAX_FRAME_BYTES`] so that a peer cannot make the agent
//! allocate without bound. The order of messages is an explicit state machine ([`Phase`]), in
//! the shape of iperf3's `PARAM_EXCHANGE -> CREATE_STREAMS -> TEST_START -> TEST_RUNNING ->
//! TEST_END -> EXCHANGE_RESULTS`; anything out of order is an error and closes the session.
//!
//! Data connections open on the same port and start with [`DATA_MAGIC`], the session cookie and
//! the stream number, so that the agent attaches them to the right session or drops them.

pub mod echo;
// Test seams: `#[doc(hidden)] pub` only so that crates/wirespeed-net-tests (where this
// crate's unit tests live) reaches what they test; not part of the library's interface.
#[doc(hidden)]
pub mod frame;
pub mod handshake;
pub mod load;
pub mod mesh;
#[doc(hidden)]
pub mod message;
#[doc(hidden)]
pub mod phase;
pub mod rr;

pub use frame::{
    DecodeError, FrameReader, MAX_FRAME_BYTES, Polled, PolledBody, ReadError, decode, encode,
    encode_greeting, encode_sealed, foreign_greeting, frame_body, open_sealed, read_message,
    write_message,
};
pub(crate) use frame::{decode_body, is_timeout};
pub use message::{
    Cookie, FOLLOW_UP_FEATURE, MAX_PACING_FEATURE, Message, PROTOCOL_VERSION, QUEUE_FEATURE,
    RESIDENCE_FEATURE, SHORT_REPLY_FEATURE, names_feature,
};
pub use phase::{Phase, ProtocolError};

/// The control and data port of an agent when none is given.
pub const DEFAULT_PORT: u16 = 5210;

/// The first four bytes of a data connection (a control connection starts with a frame length,
/// whose first byte is always zero because frames are smaller than 16 MiB).
pub const DATA_MAGIC: [u8; 4] = *b"WSD1";

/// The greeting a data connection sends: magic, cookie, stream number (big-endian).
pub fn data_greeting(cookie: &Cookie, stream: u32) -> [u8; 24] {
    let mut g = [0u8; 24];
    g[..4].copy_from_slice(&DATA_MAGIC);
    g[4..20].copy_from_slice(&cookie.0);
    g[20..24].copy_from_slice(&stream.to_be_bytes());
    g
}

/// Reads a greeting's cookie and stream number from the 20 bytes that follow the magic.
pub fn parse_greeting_rest(rest: &[u8; 20]) -> (Cookie, u32) {
    let mut c = [0u8; 16];
    c.copy_from_slice(&rest[..16]);
    let stream = u32::from_be_bytes([rest[16], rest[17], rest[18], rest[19]]);
    (Cookie(c), stream)
}
