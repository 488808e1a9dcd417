//! What a test asks for: protocol, direction, streams, amount, buffer length and socket
//! options. The client sends it in its request; both ends derive their streams from it.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// TCP or UDP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// A byte stream per connection.
    #[default]
    Tcp,
    /// Datagrams with sequence numbers and send times.
    Udp,
}

/// Which way data flows, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Client transmits, agent receives (ttcp -t at the client).
    #[default]
    Send,
    /// Agent transmits, client receives (`-R`).
    Receive,
    /// Both at once (`--bidir`): each stream number has one connection each way.
    Both,
}

/// How much each sending stream sends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Amount {
    /// For this long (`-t`).
    Seconds(f64),
    /// Exactly this many bytes per stream (`-n`, ttcp's number of buffers times `-l`).
    Bytes(u64),
}

impl Default for Amount {
    fn default() -> Self {
        Amount::Seconds(10.0)
    }
}

impl Amount {
    /// The duration, for a timed test.
    pub fn duration(self) -> Option<Duration> {
        match self {
            Amount::Seconds(s) => Some(Duration::from_secs_f64(s.max(0.0))),
            Amount::Bytes(_) => None,
        }
    }
}

/// One stream's flow, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Flow {
    /// Client to agent.
    Upload,
    /// Agent to client.
    Download,
}

/// The shortest reporting interval: shorter ones would be mostly the reporting loop's own
/// scheduling noise, and would pile up in the agent's report.
pub const MIN_INTERVAL_SECONDS: f64 = 0.01;

/// The shortest timed test: below it connection set-up and the first round trips are the
/// whole test, and no rate is measured.
pub const MIN_TEST_SECONDS: f64 = 0.1;

/// The smallest `-w`: Linux raises any smaller request to its minimum socket buffer (about
/// 4.5 KiB granted), so the request would not be what ran.
pub const MIN_WINDOW_BYTES: u64 = 2048;

/// The parameters of a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestSpec {
    /// TCP or UDP.
    pub protocol: Protocol,
    /// Which way.
    pub direction: Direction,
    /// Parallel streams per direction (`-P`).
    pub streams: u32,
    /// Duration or bytes per stream.
    pub amount: Amount,
    /// Bytes per write/read call, or per datagram (`-l`).
    pub length_bytes: u32,
    /// Requested socket send and receive buffer (`-w`); `None` leaves the kernel's autotuning.
    pub window_bytes: Option<u64>,
    /// SO_SNDBUF of every socket, overriding `window_bytes` for the send side (the sweep's
    /// sender buffer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_buffer_bytes: Option<u64>,
    /// SO_RCVBUF of every socket, and TCP_WINDOW_CLAMP at the same size so that the advertised
    /// window is exactly that (the sweep's receiver buffer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_buffer_bytes: Option<u64>,
    /// TCP_NODELAY (`--nodelay`).
    pub nodelay: bool,
    /// TCP_MAXSEG (`-M`).
    pub mss_bytes: Option<u32>,
    /// TCP congestion control (`-C`), both ends.
    pub congestion: Option<String>,
    /// UDP target rate per stream in bit/s (`-b`); 0 = as fast as possible.
    pub rate_bits_per_second: u64,
    /// CPU the agent's stream threads are pinned to (`-A CLIENT,AGENT`).
    pub agent_cpu: Option<usize>,
    /// Warm-up left out of every stream's bytes, calls, time and CPU (`-O`), timed tests only;
    /// zero for none. Seconds on the wire (`omit_seconds`).
    #[serde(default, rename = "omit_seconds", with = "seconds")]
    pub omit: Duration,
    /// UDP senders must hand the kernel many datagrams per send (`UDP_SEGMENT`, `--gso`): an
    /// error where the kernel cannot. Without it or `no_gso`, senders use it where they can.
    #[serde(default)]
    pub gso: bool,
    /// UDP senders hand the kernel one datagram per message (`sendmmsg`, `--no-gso`), each its
    /// own trip through the stack, as iperf3 does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_gso: bool,
    /// TCP senders use MSG_ZEROCOPY (`--zerocopy`).
    #[serde(default)]
    pub zerocopy: bool,
    /// TCP senders send what the window allows as the ACKs free it, without the kernel's
    /// pacing (`--no-pacing`), as iperf3 does without `--fq-rate`: for comparing like with
    /// like against an unpaced tool. Sent only when set, so agents that predate it still
    /// take every other test.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_pacing: bool,
    /// The client's reporting interval (`-i`), so that the agent keeps its own intervals on
    /// the same ticks (iperf3's `--get-server-output`, always on); `None`: no intervals.
    /// Seconds on the wire (`interval_seconds`).
    #[serde(
        default,
        rename = "interval_seconds",
        with = "optional_seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub interval: Option<Duration>,
    /// The IP TOS byte (IPv4) or traffic class (IPv6) of every data socket at both ends
    /// (`-S`, iperf3's flag): DSCP in the upper six bits. `None` leaves the kernel's 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos: Option<u8>,
    /// TCP data connections are Multipath TCP (`--mptcp`, RFC 8684): the client opens them
    /// with `IPPROTO_MPTCP`; they fall back to TCP where the agent or the path does not speak it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mptcp: bool,
    /// A timed TCP test ends at its time on the receiver too: the receiver stops reading
    /// [`NO_DRAIN_GRACE`] after `-t` instead of draining what the sender's socket buffer and
    /// the path's queues still hold (at 10 Mbit/s an autotuned buffer holds seconds of it),
    /// and closes. The rate is then what arrived while the sender sent; the test lasts its
    /// `-t`, which a schedule of many tests (`mesh`) must be able to count on.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_drain: bool,
    /// TCP: every sending socket's rate cap in bit/s (`tcp -b`), enforced by the kernel's
    /// pacing (`SO_MAX_PACING_RATE`, iperf3's `--fq-rate`) at whichever end sends. Sent only
    /// when set: an agent that predates it refuses the unknown field rather than sending
    /// uncapped, and a client asks only agents that name [`crate::control::MAX_PACING_FEATURE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pacing_rate_bits_per_second: Option<u64>,
}

/// How long after `-t` a [`TestSpec::no_drain`] receiver still reads: what the sender wrote
/// just before its deadline is then on the wire or in flight, not yet counted.
pub const NO_DRAIN_GRACE: std::time::Duration = std::time::Duration::from_millis(50);

/// After its grace a [`TestSpec::no_drain`] receiver reads on, uncounted, until the sender's
/// reset (or FIN) arrives behind the last of its data, or until no data came for this long
/// (the reset lost to a full drop-tail queue): at 1 Mbit/s a full frame arrives every 12 ms.
pub const NO_DRAIN_QUIET: std::time::Duration = std::time::Duration::from_millis(50);

/// The longest a [`TestSpec::no_drain`] receiver reads that tail: a path's queue of more than
/// this many seconds is still draining when the test ends (the report says so).
pub const NO_DRAIN_CAP: std::time::Duration = std::time::Duration::from_secs(2);

impl Default for TestSpec {
    fn default() -> Self {
        TestSpec {
            protocol: Protocol::Tcp,
            direction: Direction::Send,
            streams: 1,
            amount: Amount::default(),
            length_bytes: 128 * 1024,
            window_bytes: None,
            send_buffer_bytes: None,
            receive_buffer_bytes: None,
            nodelay: false,
            mss_bytes: None,
            congestion: None,
            rate_bits_per_second: 0,
            agent_cpu: None,
            omit: Duration::ZERO,
            gso: false,
            no_gso: false,
            zerocopy: false,
            no_pacing: false,
            interval: None,
            tos: None,
            mptcp: false,
            no_drain: false,
            max_pacing_rate_bits_per_second: None,
        }
    }
}

/// The lowest `tcp -b`: below it one full Ethernet segment (1448 bytes of payload) takes over
/// a second to leave, and a rate is no longer measured in a test of seconds.
pub const MIN_MAX_PACING_RATE_BITS_PER_SECOND: u64 = 10_000;

/// The longest one `-l` write may take at a `tcp -b` cap: the test ends at most that long
/// after its `-t`.
pub const MAX_CAPPED_WRITE_SECONDS: f64 = 1.0;

/// The highest `tcp -b`: 10 Tbit/s, beyond any link; the kernel counts the cap in bytes per
/// second in 64 bits, so every figure below it is taken as given.
pub const MAX_MAX_PACING_RATE_BITS_PER_SECOND: u64 = 10_000_000_000_000;

/// Bytes of header every UDP datagram carries (tag, sequence number, send time).
pub const UDP_HEADER_BYTES: u32 = 24;

impl TestSpec {
    /// Every data stream of the test: its number and its flow. Stream numbers `0..P` go the
    /// primary way; with `--bidir`, `P..2P` go back.
    pub fn flows(&self) -> Vec<(u32, Flow)> {
        let p = self.streams;
        match self.direction {
            Direction::Send => (0..p).map(|i| (i, Flow::Upload)).collect(),
            Direction::Receive => (0..p).map(|i| (i, Flow::Download)).collect(),
            Direction::Both => (0..p)
                .map(|i| (i, Flow::Upload))
                .chain((p..2 * p).map(|i| (i, Flow::Download)))
                .collect(),
        }
    }

    /// Checks what the spec itself must satisfy, whatever the agent's limits: one line naming
    /// the value and the fix.
    pub fn validate(&self) -> Result<(), String> {
        if self.mptcp && self.protocol != Protocol::Tcp {
            return Err("--mptcp is for TCP tests: drop it from udp".into());
        }
        if self.streams == 0 || self.streams > 128 {
            return Err(format!(
                "-P {} is out of range: use 1 to 128 parallel streams",
                self.streams
            ));
        }
        if self.length_bytes == 0 || self.length_bytes > 64 * 1024 * 1024 {
            return Err(format!(
                "-l {} is out of range: use 1 byte to 64 MiB",
                self.length_bytes
            ));
        }
        if self.protocol == Protocol::Udp
            && !(UDP_HEADER_BYTES..=65_507).contains(&self.length_bytes)
        {
            return Err(format!(
                "-l {} is out of range for UDP: use {UDP_HEADER_BYTES} to 65507 bytes (the \
                 datagram carries a {UDP_HEADER_BYTES}-byte sequence header)",
                self.length_bytes
            ));
        }
        match self.amount {
            Amount::Seconds(s)
                if !(s.is_finite() && (MIN_TEST_SECONDS..=86_400.0).contains(&s)) =>
            {
                return Err(format!(
                    "-t {s} s is out of range: use {MIN_TEST_SECONDS} s to 1 day (a shorter test ends before a rate can be measured), e.g. -t 10s"
                ));
            }
            Amount::Bytes(0) => return Err("-n 0 sends nothing: use at least 1 byte".into()),
            _ => {}
        }
        if let Some(w) = self.window_bytes
            && w < MIN_WINDOW_BYTES
        {
            return Err(format!(
                "-w {w} is too small: the kernel would quietly raise it to its own minimum; use at least {MIN_WINDOW_BYTES} bytes, e.g. -w 128KiB"
            ));
        }
        if let Some(i) = self.interval.map(|i| i.as_secs_f64())
            && !(MIN_INTERVAL_SECONDS..=86_400.0).contains(&i)
        {
            return Err(format!(
                "-i {i} s is out of range: use 10 ms to 1 day, or 0 for no intervals"
            ));
        }
        if !self.omit.is_zero() {
            let omit = self.omit.as_secs_f64();
            match self.amount {
                Amount::Bytes(_) => {
                    return Err(
                        "-O leaves out a warm-up from a timed test: use it with -t, not -n".into(),
                    );
                }
                Amount::Seconds(t) if omit >= t => {
                    return Err(format!(
                        "-O {omit} leaves nothing of -t {t}: make the warm-up shorter than the test"
                    ));
                }
                Amount::Seconds(_) => {}
            }
        }
        if self.gso && self.no_gso {
            return Err("--gso and --no-gso contradict each other: give one of them".into());
        }
        // A pacer that cannot pay for one whole datagram before -t ends sends nothing: its
        // first datagram is due when the rate has paid for it.
        if self.protocol == Protocol::Udp
            && self.rate_bits_per_second > 0
            && let Amount::Seconds(t) = self.amount
        {
            let datagram_bits = f64::from(self.length_bytes) * 8.0;
            let bits_in_t = self.rate_bits_per_second as f64 * t;
            if bits_in_t <= datagram_bits {
                let least = (datagram_bits / t).floor() as u64 + 1;
                return Err(format!(
                    "-b {} bit/s is too low to send one {}-byte datagram in -t {t} s: use more \
                     than {} bit/s for this -l and -t (e.g. -b {}), a longer -t, or a smaller -l",
                    self.rate_bits_per_second,
                    self.length_bytes,
                    least - 1,
                    format_args!("{}k", least.div_ceil(1000))
                ));
            }
        }
        if let Some(cap) = self.max_pacing_rate_bits_per_second {
            if self.protocol != Protocol::Tcp {
                return Err("the TCP rate cap is for TCP tests: udp's -b is its send rate".into());
            }
            if self.no_pacing {
                return Err(
                    "-b and --no-pacing contradict each other: -b caps the rate through the \
                     kernel's pacing; drop one of them"
                        .into(),
                );
            }
            if !(MIN_MAX_PACING_RATE_BITS_PER_SECOND..=MAX_MAX_PACING_RATE_BITS_PER_SECOND)
                .contains(&cap)
            {
                return Err(format!(
                    "-b {cap} bit/s is out of range for a TCP rate cap: use 10k to 10T (e.g. -b 5M), \
                     or leave -b out for no cap"
                ));
            }
            // A write blocks until the cap has taken it: one that takes longer than this
            // would end the test that much after its -t.
            let write_seconds = f64::from(self.length_bytes) * 8.0 / cap as f64;
            if write_seconds > MAX_CAPPED_WRITE_SECONDS {
                let most = (cap as f64 * MAX_CAPPED_WRITE_SECONDS / 8.0) as u64;
                return Err(format!(
                    "-b {cap} bit/s takes {write_seconds:.1} s to send one -l {}-byte write: use \
                     -l {most} or less with this cap (e.g. -l {}KiB), or a higher -b",
                    self.length_bytes,
                    (most / 1024).max(1)
                ));
            }
        }
        if let Some(cc) = &self.congestion
            && (cc.is_empty()
                || cc.len() > 15
                || !cc.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        {
            return Err(format!(
                "-C '{cc}' is not a congestion control name (e.g. cubic, bbr, reno)"
            ));
        }
        Ok(())
    }
}

/// A [`Duration`] written as seconds, a JSON number, as the wire and the documents have always
/// carried `-O`; one from a peer that is negative or past what a `Duration` holds is refused
/// while decoding, before anything reads it.
pub mod seconds {
    use super::*;

    /// Writes `d` as seconds.
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    /// Reads seconds into a `Duration`, refusing what is not one.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        Duration::try_from_secs_f64(secs).map_err(|_| {
            serde::de::Error::custom(format!(
                "{secs} s is not a duration: give 0 or more seconds"
            ))
        })
    }
}

/// [`seconds`] for an optional duration (`-i`: `None` when there are no intervals).
pub mod optional_seconds {
    use super::*;

    /// Writes `d` as seconds (the field is left out when `None`).
    pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => s.serialize_some(&d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }

    /// Reads optional seconds, refusing what is not a duration.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        #[derive(Deserialize)]
        struct Secs(#[serde(with = "super::seconds")] Duration);
        Ok(Option::<Secs>::deserialize(d)?.map(|s| s.0))
    }
}
