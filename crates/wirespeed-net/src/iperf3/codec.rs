//! iperf3's control protocol as bytes, pure: the 37-byte cookie, the one-byte state codes, the
//! JSON documents behind a 4-byte big-endian length, the parameters and results they carry,
//! and the UDP stream greeting and datagram header. No I/O here, so that the fuzz target and
//! the unit tests reach every decoder.
//!
//! Every decoder bounds what it accepts before it allocates: iperf3's own history (a heap
//! overflow from a JSON length of 0xffffffff, CVE-2016-4303; a malloc of a peer-chosen size,
//! CVE-2023-38403) is the list of what not to repeat. A frame longer than its cap is refused
//! from the prefix alone, and serde_json's recursion limit bounds nesting.

use serde::{Deserialize, Deserializer, Serialize};

/// Bytes of the cookie that opens the control connection and every TCP data stream: 36
/// characters of iperf3's alphabet and a NUL.
pub const COOKIE_BYTES: usize = 37;

/// The characters an iperf3 cookie is drawn from.
#[doc(hidden)]
pub const COOKIE_ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// The largest parameters document accepted (iperf3's own `MAX_PARAMS_JSON_STRING`).
pub const MAX_PARAMS_BYTES: usize = 8 * 1024;

/// The largest results document accepted. iperf3 reads results of any length; this cap holds
/// 256 streams' records many times over, and a server's `--get-server-output` text besides.
pub const MAX_RESULTS_BYTES: usize = 1024 * 1024;

/// The most streams one test may open (iperf3's `MAX_STREAMS`, per direction).
pub const MAX_STREAMS: u32 = 128;

/// The longest `-t` iperf3 accepts, in seconds (`MAX_TIME`).
pub const MAX_TIME_SECONDS: u64 = 86_400;

/// The largest TCP block iperf3 accepts (`MAX_BLOCKSIZE`, 1 MB).
pub const MAX_TCP_BLOCK_BYTES: u64 = 1024 * 1024;

/// The largest UDP datagram payload (`MAX_UDP_BLOCKSIZE`: 65535 less the IPv4 and UDP headers).
pub const MAX_UDP_BLOCK_BYTES: u64 = 65_535 - 8 - 20;

/// The smallest UDP datagram payload that holds the header (`MIN_UDP_BLOCKSIZE`).
pub const MIN_UDP_BLOCK_BYTES: u64 = 16;

/// The four bytes a UDP stream's client sends first so that the server learns its address
/// (iperf3 3.12 writes the integer 0x36373839 in host order: "9876" on little-endian hosts).
pub const UDP_CONNECT_MSG: [u8; 4] = *b"9876";

/// The server's answer to [`UDP_CONNECT_MSG`] ("6789" on little-endian hosts).
pub const UDP_CONNECT_REPLY: [u8; 4] = *b"6789";

/// The answer of iperf3 before 3.11 (987654321 in host order), which 3.12 clients still take.
pub const LEGACY_UDP_CONNECT_REPLY: [u8; 4] = 987_654_321u32.to_le_bytes();

/// The control connection's cookie: the same 37 bytes open every TCP data stream of the test.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Cookie(pub [u8; COOKIE_BYTES]);

impl std::fmt::Debug for Cookie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Cookie({})",
            String::from_utf8_lossy(&self.0[..COOKIE_BYTES - 1])
        )
    }
}

impl Cookie {
    /// A fresh cookie from `random` bytes (one per character, as iperf3 draws them).
    pub fn from_random(random: &[u8; COOKIE_BYTES]) -> Cookie {
        let mut c = [0u8; COOKIE_BYTES];
        for (out, r) in c.iter_mut().zip(random).take(COOKIE_BYTES - 1) {
            *out = COOKIE_ALPHABET[usize::from(*r) % COOKIE_ALPHABET.len()];
        }
        Cookie(c)
    }

    /// The cookie in 37 received bytes, if they are one: printable ASCII ending in a NUL.
    /// iperf3 servers take any bytes; refusing others turns a stray connection (an HTTP
    /// request, a port scan) into a clear refusal instead of a test that never starts.
    pub fn parse(bytes: &[u8; COOKIE_BYTES]) -> Result<Cookie, CodecError> {
        let (last, text) = bytes.split_last().expect("37 bytes");
        if *last != 0 || !text.iter().all(|b| b.is_ascii_graphic()) {
            return Err(CodecError::BadCookie);
        }
        Ok(Cookie(*bytes))
    }
}

/// The one-byte states of iperf3's control connection (`iperf_api.h`), sent as a signed char.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum State {
    /// 1: the server has all streams; the client starts its timers.
    TestStart,
    /// 2: data flows.
    TestRunning,
    /// 4: the client says the test is over.
    TestEnd,
    /// 9: the server asks for the parameters.
    ParamExchange,
    /// 10: the server asks for the data streams.
    CreateStreams,
    /// 11: the server ends the test early.
    ServerTerminate,
    /// 12: the client ends the test early.
    ClientTerminate,
    /// 13: both ends exchange results (the client's first).
    ExchangeResults,
    /// 14: the server has sent its results.
    DisplayResults,
    /// 16: the client has read the results; the test is over.
    IperfDone,
    /// -1: the server is busy with another test (or refuses this one).
    AccessDenied,
    /// -2: the server failed; two 4-byte big-endian integers follow (iperf3's error number
    /// and errno).
    ServerError,
}

impl State {
    /// The byte on the wire.
    pub fn code(self) -> u8 {
        let signed: i8 = match self {
            State::TestStart => 1,
            State::TestRunning => 2,
            State::TestEnd => 4,
            State::ParamExchange => 9,
            State::CreateStreams => 10,
            State::ServerTerminate => 11,
            State::ClientTerminate => 12,
            State::ExchangeResults => 13,
            State::DisplayResults => 14,
            State::IperfDone => 16,
            State::AccessDenied => -1,
            State::ServerError => -2,
        };
        signed as u8
    }

    /// The state a received byte names; codes iperf3 defines but never sends (3, 5 to 8, 15)
    /// are refused with the rest.
    pub fn from_code(code: u8) -> Result<State, CodecError> {
        Ok(match code as i8 {
            1 => State::TestStart,
            2 => State::TestRunning,
            4 => State::TestEnd,
            9 => State::ParamExchange,
            10 => State::CreateStreams,
            11 => State::ServerTerminate,
            12 => State::ClientTerminate,
            13 => State::ExchangeResults,
            14 => State::DisplayResults,
            16 => State::IperfDone,
            -1 => State::AccessDenied,
            -2 => State::ServerError,
            _ => return Err(CodecError::BadState { code }),
        })
    }
}

/// Why bytes are not iperf3's control protocol.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodecError {
    /// The cookie is not printable ASCII ending in a NUL.
    #[error("the peer's first 37 bytes are not an iperf3 cookie (is it an iperf3 client?)")]
    BadCookie,
    /// A state byte iperf3 does not send.
    #[error("iperf3 state code {} is not one the protocol uses", *code as i8)]
    BadState {
        /// The byte received.
        code: u8,
    },
    /// The length prefix is zero or above the cap.
    #[error("iperf3 JSON of {len} bytes is outside 1..={cap} bytes (a broken or hostile peer)")]
    BadLength {
        /// The announced length.
        len: u64,
        /// The cap for this document.
        cap: usize,
    },
    /// The document does not parse as the JSON expected.
    #[error("iperf3 JSON does not parse: {0}")]
    Json(String),
    /// The parameters parse but ask for what iperf3 itself refuses.
    #[error("iperf3 parameters refused: {0}")]
    Refused(String),
}

/// The length a JSON document's 4-byte prefix announces, if within `1..=cap`.
pub fn json_length(prefix: [u8; 4], cap: usize) -> Result<usize, CodecError> {
    let len = u32::from_be_bytes(prefix);
    match usize::try_from(len) {
        Ok(n) if n >= 1 && n <= cap => Ok(n),
        _ => Err(CodecError::BadLength {
            len: u64::from(len),
            cap,
        }),
    }
}

/// One JSON document with its length prefix.
pub fn encode_json<T: Serialize>(value: &T) -> Vec<u8> {
    let body = serde_json::to_vec(value).expect("iperf3 documents always serialize");
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// A document's body (after its prefix) read as `T`.
pub fn decode_json<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, CodecError> {
    serde_json::from_slice(body).map_err(|e| CodecError::Json(e.to_string()))
}

/// A whole length-prefixed document at the front of `bytes`: `Ok(None)` while incomplete,
/// else the value and the bytes it used.
pub fn decode_frame<T: for<'de> Deserialize<'de>>(
    bytes: &[u8],
    cap: usize,
) -> Result<Option<(T, usize)>, CodecError> {
    let Some((prefix, rest)) = bytes.split_first_chunk::<4>() else {
        return Ok(None);
    };
    let len = json_length(*prefix, cap)?;
    let Some(body) = rest.get(..len) else {
        return Ok(None);
    };
    Ok(Some((decode_json(body)?, 4 + len)))
}

/// A JSON number as iperf3's cJSON writes it (a double: `1e+10` as readily as `10000000000`)
/// read as a count: integral, not negative, exact in a double.
fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    let v = Option::<f64>::deserialize(d)?;
    match v {
        None => Ok(None),
        Some(x) if x.fract() == 0.0 && (0.0..=9_007_199_254_740_992.0).contains(&x) => {
            Ok(Some(x as u64))
        }
        Some(x) => Err(serde::de::Error::custom(format!(
            "{x} is not a count (a whole number from 0 to 2^53)"
        ))),
    }
}

/// A JSON number read as a signed figure where iperf3 writes -1 for "not known": anything
/// that is not a whole number within 2^53 reads as -1 too (iperf3 3.12 writes some of its -1s
/// cast to unsigned 64 bits, 18446744073709551615).
fn signed<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    let v = Option::<f64>::deserialize(d)?;
    Ok(v.map(|x| {
        if x.fract() == 0.0 && x.abs() <= 9_007_199_254_740_992.0 {
            x as i64
        } else {
            -1
        }
    }))
}

/// A JSON `true` is set; anything else (`false`, a number) is not, as iperf3 reads its flags.
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    let v = serde_json::Value::deserialize(d)?;
    Ok(v.as_bool().filter(|b| *b))
}

/// What an iperf3 client asks for (`send_parameters`): every field optional, as iperf3 sends
/// only what was set; names as on the wire; fields iperf3 added later are ignored.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Params {
    /// TCP test.
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "Option::is_none"
    )]
    pub tcp: Option<bool>,
    /// UDP test.
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "Option::is_none"
    )]
    pub udp: Option<bool>,
    /// SCTP test (refused here).
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "Option::is_none"
    )]
    pub sctp: Option<bool>,
    /// Seconds of warm-up left out of the results (`-O`).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub omit: Option<u64>,
    /// Seconds (`-t`).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub time: Option<u64>,
    /// Bytes in all, every stream together (`-n`); 0: timed.
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub num: Option<u64>,
    /// Blocks in all (`-k`); 0: not by blocks.
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub blockcount: Option<u64>,
    /// TCP maximum segment size (`-M`).
    #[serde(
        rename = "MSS",
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub mss: Option<u64>,
    /// TCP_NODELAY (`-N`).
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "Option::is_none"
    )]
    pub nodelay: Option<bool>,
    /// Streams (`-P`), per direction.
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub parallel: Option<u64>,
    /// The server sends (`-R`).
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "Option::is_none"
    )]
    pub reverse: Option<bool>,
    /// Both ways at once (`--bidir`).
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "Option::is_none"
    )]
    pub bidirectional: Option<bool>,
    /// Socket buffer bytes (`-w`).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub window: Option<u64>,
    /// Bytes per write, or per datagram (`-l`).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub len: Option<u64>,
    /// Target bit/s per stream (`-b`); 0: unlimited.
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub bandwidth: Option<u64>,
    /// Packets per burst (`-b RATE/BURST`).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub burst: Option<u64>,
    /// The IP TOS byte (`-S`).
    #[serde(
        rename = "TOS",
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub tos: Option<u64>,
    /// TCP congestion control (`-C`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion: Option<String>,
    /// The server should return its own output with the results (`--get-server-output`).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub get_server_output: Option<u64>,
    /// UDP datagrams carry 64-bit sequence numbers (`--udp-counters-64bit`).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub udp_counters_64bit: Option<u64>,
    /// The sender uses sendfile (`-Z`).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub zerocopy: Option<u64>,
    /// RSA-encrypted credentials (`--username`); refused here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authtoken: Option<String>,
    /// The client's version string.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_version: Option<String>,
}

/// A parameters document checked: what a server runs.
#[derive(Debug, Clone, PartialEq)]
pub struct TestParams {
    /// UDP rather than TCP.
    pub udp: bool,
    /// Who sends.
    pub direction: crate::spec::Direction,
    /// Streams per direction.
    pub streams: u32,
    /// Seconds, 0 when ended by bytes or blocks.
    pub seconds: u64,
    /// Bytes in all (0: none asked); `-k` blocks times `-l`.
    pub bytes: u64,
    /// Blocks in all (0: none asked).
    pub blocks: u64,
    /// Bytes per write or datagram.
    pub length: u32,
    /// Warm-up seconds.
    pub omit_seconds: u64,
    /// Socket buffer.
    pub window: Option<u64>,
    /// Target bit/s per stream, 0 unlimited.
    pub bits_per_second: u64,
    /// TCP_MAXSEG.
    pub mss: Option<u32>,
    /// TCP_NODELAY.
    pub nodelay: bool,
    /// IP TOS.
    pub tos: Option<u8>,
    /// Congestion control.
    pub congestion: Option<String>,
    /// 64-bit UDP sequence numbers.
    pub udp_counters_64bit: bool,
    /// The client asked for the server's output.
    pub get_server_output: bool,
}

impl Params {
    /// The test these parameters ask for, refused as iperf3's `get_parameters` refuses
    /// (iperf3's own limits), and where this implementation does not do it (SCTP, RSA
    /// authentication) with a sentence that says so.
    pub fn check(&self) -> Result<TestParams, CodecError> {
        let refuse = |s: String| Err(CodecError::Refused(s));
        if self.sctp == Some(true) {
            return refuse("SCTP is not supported; test TCP or UDP".into());
        }
        if self.authtoken.is_some() {
            return refuse(
                "RSA authentication (--username) is not supported by this server; run the test without it"
                    .into(),
            );
        }
        let udp = self.udp == Some(true);
        let direction = match (self.bidirectional == Some(true), self.reverse == Some(true)) {
            (true, _) => crate::spec::Direction::Both,
            (false, true) => crate::spec::Direction::Receive,
            (false, false) => crate::spec::Direction::Send,
        };
        let streams = self.parallel.unwrap_or(1);
        if !(1..=u64::from(MAX_STREAMS)).contains(&streams) {
            return refuse(format!("-P {streams} is outside 1..={MAX_STREAMS}"));
        }
        let seconds = self.time.unwrap_or(10);
        if seconds > MAX_TIME_SECONDS {
            return refuse(format!("-t {seconds} exceeds {MAX_TIME_SECONDS} s"));
        }
        let mut bytes = self.num.unwrap_or(0);
        let blocks = self.blockcount.unwrap_or(0);
        let length = match (udp, self.len) {
            (false, None) => 128 * 1024,
            (true, None) => 1460,
            (false, Some(l)) if (1..=MAX_TCP_BLOCK_BYTES).contains(&l) => l,
            (true, Some(l)) if (MIN_UDP_BLOCK_BYTES..=MAX_UDP_BLOCK_BYTES).contains(&l) => l,
            (_, Some(l)) => return refuse(format!("-l {l} is outside what iperf3 accepts")),
        } as u32;
        // `-k` blocks are bytes here: every block is one `-l`.
        if bytes == 0 {
            bytes = blocks.saturating_mul(u64::from(length));
        }
        let omit_seconds = self.omit.unwrap_or(0);
        if omit_seconds > 600 {
            return refuse(format!("-O {omit_seconds} exceeds 600 s"));
        }
        if seconds == 0 && bytes == 0 && blocks == 0 {
            return refuse("-t 0 without -n or -k would never end".into());
        }
        let mss = match self.mss {
            None | Some(0) => None,
            Some(m) if m <= 9216 => Some(m as u32),
            Some(m) => return refuse(format!("-M {m} exceeds 9216")),
        };
        let tos = match self.tos {
            None | Some(0) => None,
            Some(t) if t <= 255 => Some(t as u8),
            Some(t) => return refuse(format!("-S {t} is not a byte")),
        };
        if let Some(w) = self.window
            && w > i32::MAX as u64
        {
            return refuse(format!("-w {w} exceeds a socket buffer"));
        }
        if let Some(cc) = &self.congestion
            && (cc.is_empty() || cc.len() > 15 || !cc.bytes().all(|b| b.is_ascii_graphic()))
        {
            return refuse("-C names no congestion control".into());
        }
        Ok(TestParams {
            udp,
            direction,
            streams: streams as u32,
            seconds,
            bytes,
            blocks,
            length,
            omit_seconds,
            window: self.window.filter(|w| *w > 0),
            bits_per_second: self.bandwidth.unwrap_or(if udp { 1_000_000 } else { 0 }),
            mss,
            nodelay: self.nodelay == Some(true),
            tos,
            congestion: self.congestion.clone(),
            udp_counters_64bit: self.udp_counters_64bit.is_some_and(|v| v != 0),
            get_server_output: self.get_server_output.is_some_and(|v| v != 0),
        })
    }
}

/// One end's results (`send_results`): CPU and each stream's count, exchanged after the test.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// CPU used over the test, percent of one core (user + system).
    pub cpu_util_total: f64,
    /// User CPU, percent.
    pub cpu_util_user: f64,
    /// System CPU, percent.
    pub cpu_util_system: f64,
    /// 1 when this end sent TCP and read retransmits from TCP_INFO, 0 when it sent without,
    /// -1 when it only received.
    #[serde(deserialize_with = "signed_required")]
    pub sender_has_retransmits: i64,
    /// The congestion control this end used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion_used: Option<String>,
    /// Each stream, by the id both ends gave it in creation order.
    pub streams: Vec<StreamResults>,
    /// The server's own text output (`--get-server-output` without `-J`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_output_text: Option<String>,
}

fn signed_required<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    signed(d)?.ok_or_else(|| serde::de::Error::custom("a number is required"))
}

fn count_required<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    count(d)?.ok_or_else(|| serde::de::Error::custom("a number is required"))
}

/// One stream's results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StreamResults {
    /// The stream's id: 1, then 3, 4, 5... in creation order (iperf3 skips 2).
    #[serde(deserialize_with = "count_required")]
    pub id: u64,
    /// Bytes sent (less the warm-up) or received.
    #[serde(deserialize_with = "count_required")]
    pub bytes: u64,
    /// TCP retransmits of a sender, -1 when not known (iperf3 3.12 writes that -1 as an
    /// unsigned 64-bit 18446744073709551615, read here as -1 too).
    #[serde(deserialize_with = "signed_required")]
    pub retransmits: i64,
    /// UDP jitter, seconds (RFC 3550's smoothed transit difference).
    pub jitter: f64,
    /// UDP datagrams lost (gaps in the sequence, less late arrivals).
    #[serde(deserialize_with = "signed_required")]
    pub errors: i64,
    /// Datagrams lost during the warm-up.
    #[serde(
        default,
        deserialize_with = "signed",
        skip_serializing_if = "Option::is_none"
    )]
    pub omitted_errors: Option<i64>,
    /// UDP datagrams sent, or the highest sequence number received.
    #[serde(deserialize_with = "signed_required")]
    pub packets: i64,
    /// Datagrams of the warm-up.
    #[serde(
        default,
        deserialize_with = "signed",
        skip_serializing_if = "Option::is_none"
    )]
    pub omitted_packets: Option<i64>,
    /// Seconds from the stream's start: 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<f64>,
    /// Seconds from the stream's start to its end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<f64>,
}

impl Results {
    /// The results checked: at most two directions of [`MAX_STREAMS`], finite figures.
    pub fn check(self) -> Result<Results, CodecError> {
        if self.streams.len() > 2 * MAX_STREAMS as usize {
            return Err(CodecError::Refused(format!(
                "{} streams in the results exceed {}",
                self.streams.len(),
                2 * MAX_STREAMS
            )));
        }
        let finite = [
            self.cpu_util_total,
            self.cpu_util_user,
            self.cpu_util_system,
        ]
        .into_iter()
        .chain(self.streams.iter().flat_map(|s| {
            [
                s.jitter,
                s.start_time.unwrap_or(0.0),
                s.end_time.unwrap_or(0.0),
            ]
        }))
        .all(f64::is_finite);
        if !finite {
            return Err(CodecError::Refused(
                "a figure in the results is not finite".into(),
            ));
        }
        Ok(self)
    }
}

/// The id iperf3 gives the stream created `index`-th (from 0): 1, 3, 4, 5...
pub fn stream_id(index: u32) -> u64 {
    if index == 0 { 1 } else { u64::from(index) + 2 }
}

/// Bytes of a UDP datagram's header: seconds, microseconds, and a 32- or 64-bit sequence number.
pub fn udp_header_bytes(counters_64bit: bool) -> usize {
    if counters_64bit { 16 } else { 12 }
}

/// Writes a UDP datagram's header: the send time and the sequence number (from 1).
pub fn write_udp_header(buf: &mut [u8], secs: u32, usecs: u32, seq: u64, counters_64bit: bool) {
    buf[0..4].copy_from_slice(&secs.to_be_bytes());
    buf[4..8].copy_from_slice(&usecs.to_be_bytes());
    if counters_64bit {
        buf[8..16].copy_from_slice(&seq.to_be_bytes());
    } else {
        buf[8..12].copy_from_slice(&(seq as u32).to_be_bytes());
    }
}

/// A UDP datagram's header: (seconds, microseconds, sequence), if the datagram holds one.
pub fn read_udp_header(d: &[u8], counters_64bit: bool) -> Option<(u32, u32, u64)> {
    let secs = u32::from_be_bytes(d.get(0..4)?.try_into().ok()?);
    let usecs = u32::from_be_bytes(d.get(4..8)?.try_into().ok()?);
    let seq = if counters_64bit {
        u64::from_be_bytes(d.get(8..16)?.try_into().ok()?)
    } else {
        u64::from(u32::from_be_bytes(d.get(8..12)?.try_into().ok()?))
    };
    Some((secs, usecs, seq))
}
