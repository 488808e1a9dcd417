//! The coordinated load test of Boggs, Mogul and Kent (seed 000 §3.3) over the agent's control
//! protocol.
//!
//! The seed's control machine broadcast a packet announcing a test; each generator waited,
//! transmitted, measured the middle of its transmission, waited again and reported four
//! numbers. Here the controller ([`controller`]) opens one control session per agent and, inside
//! the ordinary hello/welcome handshake, speaks the load messages of [`LoadMessage`] (carried
//! by one [`Message::Load`](crate::control::Message::Load) variant):
//!
//! ```text
//! controller                         agent
//!   clock_query          ->                       (several: the fastest exchange sets the offset)
//!                        <-  clock_reply{agent_ns}
//!   announce{test}       ->                       (binds its sink, validates, refuses or:)
//!                        <-  ready{sink_port}
//! when the generators send to one agent's counting sink (consent, [`consent`]):
//!   target{destination}  ->  each generator       (the traffic rule, or a refusal; then it
//!                        <-  nonce_sent            sends its secret nonce to the destination)
//!   nonce_query{host}    ->  the sink's agent     (what its sink received from that host)
//!                        <-  nonce_seen{nonce}
//!   nonce{nonce}         ->  the generator        (relayed; a mismatch is refused)
//!                        <-  consented
//! then:
//!   go{start_at_ns, destination}  ->              (start_at in the agent's own clock)
//!                                  ... settle, transmit (window counted), cool down ...
//!                        <-  report{report}
//! ```
//!
//! A generator sends UDP datagrams ([`generator`]), or as root raw Ethernet frames to its own
//! address ([`raw`]), to a sink: its own socket that it never
//! reads (the seed's hosts "addressed [their] packets to [themselves], and disabled [their]
//! receiver"), or one agent's counting sink, which reports how many of each host's in-window
//! packets arrived (loss at the sink). A generator sends nowhere else but to an address the
//! traffic rule allows and whose agent proved, with the generator's own secret nonce relayed
//! through its control connection, that it is the sink of the same test ([`consent`]; the
//! design's rule against reflection). The sink believes nothing a datagram says before it is
//! checked against the announcement ([`sink`]). The agent side is [`serve`].

mod agent;
pub mod consent;
pub mod controller;
pub mod generator;
pub mod raw;
pub mod sink;
pub mod tstamp;

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};
use wirespeed_model::load::{DelaySource, LengthDeck, LoadCounters, Schedule};

pub(crate) use agent::serve;

/// One test as announced to one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadTest {
    /// Tags every datagram of this test, so that a sink counts nothing else.
    pub tag: u64,
    /// This agent's place in the test, from 0.
    pub host: u32,
    /// How many hosts the test has (at most [`sink::MAX_HOSTS`]): sizes a counting sink.
    pub hosts: u32,
    /// The timetable.
    pub schedule: Schedule,
    /// The packet lengths (Ethernet header and data, as the seed counted them).
    pub deck: LengthDeck,
    /// Offered load of this host, charged bits per second; `None` saturates.
    pub rate_bits_per_second: Option<f64>,
    /// Count what arrives at this agent's sink, per sending host.
    pub count_sink: bool,
    /// Seed of this host's deal of lengths.
    pub seed: u64,
    /// Raw Ethernet frames to the sender's own address instead of UDP ([`raw`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawEthernet>,
}

/// A raw Ethernet test: which interface each agent sends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RawEthernet {
    /// The interface by name; `None`: the one holding the agent's control address.
    pub interface: Option<String>,
}

/// What a sink counted: in-window datagrams received from each sending host.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SinkCounts {
    /// `received[h]`: in-window datagrams of host `h` that arrived.
    pub received: Vec<u64>,
    /// Datagrams that were not of this test (wrong tag, unknown host, flags or length, or
    /// too short).
    pub strays: u64,
    /// Datagrams in this test's format from an address that is not the host's (the one its
    /// consent nonce came from): dropped, not counted.
    #[serde(default)]
    pub foreign: u64,
}

/// One agent's report at the end of a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// The seed's four numbers and more.
    pub counters: LoadCounters,
    /// Where the delays came from.
    pub delay_source: DelaySource,
    /// The clock the schedule ran on.
    pub clock: String,
    /// How late the first packet left after the scheduled start of transmission, seconds.
    pub start_lateness_s: f64,
    /// What this agent's sink counted, when asked to count.
    pub sink: Option<SinkCounts>,
    /// How the transmit stamps were chosen (hardware or software, and why), raw tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamping: Option<String>,
    /// The interface a raw test sent on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
}

/// The load test's control messages, inside [`Message::Load`](crate::control::Message::Load).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "load", rename_all = "snake_case", deny_unknown_fields)]
#[allow(clippy::large_enum_variant)]
pub enum LoadMessage {
    /// Controller -> agent: read your clock.
    ClockQuery,
    /// Agent -> controller: its `CLOCK_MONOTONIC`, nanoseconds.
    ClockReply {
        /// The reading.
        agent_ns: u64,
    },
    /// Controller -> agent: the test.
    Announce {
        /// Its parameters.
        test: LoadTest,
    },
    /// Agent -> controller: accepted; the sink listens on this UDP port.
    Ready {
        /// The port.
        sink_port: u16,
    },
    /// Controller -> generator: this test sends to `destination`; check the traffic rule and
    /// send your nonce there.
    Target {
        /// The counting sink's address.
        destination: SocketAddr,
    },
    /// Generator -> controller: the rule allows it and the nonce is on its way.
    NonceSent,
    /// Controller -> the sink's agent: which nonce did host `host` send you?
    NonceQuery {
        /// The host, from 0.
        host: u32,
    },
    /// Sink's agent -> controller: the nonce (hex), if it came.
    NonceSeen {
        /// 32 hex digits, or `None`.
        nonce: Option<String>,
    },
    /// Controller -> generator: the nonce the sink's agent reported, relayed.
    Nonce {
        /// 32 hex digits.
        nonce: String,
    },
    /// Generator -> controller: the destination proved its consent.
    Consented,
    /// Controller -> agent: start at this moment of your clock, sending there (`None`: your own
    /// sink; otherwise the destination that consented).
    Go {
        /// Common start in the agent's `CLOCK_MONOTONIC`, nanoseconds.
        start_at_ns: u64,
        /// Where to send.
        destination: Option<SocketAddr>,
    },
    /// Agent -> controller: the test is over.
    Report {
        /// What it measured.
        report: LoadReport,
    },
}

/// `CLOCK_MONOTONIC` in nanoseconds: the clock every schedule runs on.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

pub(crate) fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: one valid timespec to fill.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sleeps until `deadline_ns` of `CLOCK_MONOTONIC` (in slices, so `stop` is seen).
/// The send schedule of a paced generator: one frame every `length x 8 / rate`, and no burst to
/// catch up after the thread was descheduled (more than 10 ms behind: the schedule restarts
/// from now), so an offered load is never exceeded.
pub(crate) struct Pacer {
    next_ns: f64,
}

impl Pacer {
    /// The first frame is due at `first_ns` (`CLOCK_MONOTONIC`).
    pub(crate) fn new(first_ns: u64) -> Pacer {
        Pacer {
            next_ns: first_ns as f64,
        }
    }

    /// Waits for the next frame's slot; the time then, or `None` if `end_ns` came first.
    pub(crate) fn wait(&mut self, now: u64, end_ns: u64, stop: &dyn Fn() -> bool) -> Option<u64> {
        if (now as f64) < self.next_ns {
            sleep_until(self.next_ns as u64, stop);
            let now = monotonic_ns();
            return (now < end_ns).then_some(now);
        }
        if (now as f64) - self.next_ns > 10e6 {
            self.next_ns = now as f64;
        }
        Some(now)
    }

    /// Books a frame of `length` bytes at `rate` bit/s into the schedule.
    pub(crate) fn book(&mut self, length: u32, rate: f64) -> std::io::Result<()> {
        self.next_ns += wirespeed_model::load::pacing_interval_ns(u64::from(length), rate)
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(())
    }
}

pub(crate) fn sleep_until(deadline_ns: u64, stop: &dyn Fn() -> bool) {
    loop {
        let now = monotonic_ns();
        if now >= deadline_ns || stop() {
            return;
        }
        let left = deadline_ns - now;
        std::thread::sleep(std::time::Duration::from_nanos(left.min(50_000_000)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::{Message, decode, encode};

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
}
