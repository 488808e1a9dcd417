//! The load test's messages and records (seed 000's coordinated generators), as they cross the
//! control connection inside [`Message::Load`](super::Message::Load). What the controller and
//! the agents do with them is `crate::load`.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};
use wirespeed_model::load::{DelaySource, LengthDeck, LoadCounters, Schedule};

/// One test as announced to one agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadTest {
    /// Tags every datagram of this test, so that a sink counts nothing else.
    pub tag: u64,
    /// This agent's place in the test, from 0.
    pub host: u32,
    /// How many hosts the test has (at most `load::sink::MAX_HOSTS`): sizes a counting sink.
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
    /// Raw Ethernet frames to the sender's own address instead of UDP (`load::raw`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawEthernet>,
    /// The IP TOS byte (IPv6: traffic class) of every datagram (`load -S`); an agent that
    /// predates it ignores the field and its report carries no `tos`, which the controller sees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos: Option<u8>,
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
    /// The measurement window's time, seconds, whose frames a paced generator never offered:
    /// it was descheduled for longer than it may catch up (10 ms), so the machine, not the
    /// network, held the offered load back. 0 from agents that predate the field.
    #[serde(default)]
    pub skipped_in_window_s: f64,
    /// What this agent's sink counted, when asked to count.
    pub sink: Option<SinkCounts>,
    /// How the transmit stamps were chosen (hardware or software, and why), raw tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamping: Option<String>,
    /// The interface a raw test sent on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interface: Option<String>,
    /// The TOS byte the sending socket carried, read back from the kernel when one was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tos: Option<u8>,
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
        /// A sink's agent with a key: its proof that it saw the nonce, HMAC-SHA256 under the
        /// key of [`crate::load::consent::LOAD_CONSENT_CONTEXT`], the test's tag, the host and
        /// the nonce (hex). Only an agent holding the key can make it, so an observer who
        /// copied the nonce off the wire cannot.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proof: Option<String>,
    },
    /// Controller -> generator: the nonce the sink's agent reported, relayed.
    Nonce {
        /// 32 hex digits.
        nonce: String,
        /// The sink agent's proof, relayed ([`LoadMessage::NonceSeen`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        proof: Option<String>,
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
