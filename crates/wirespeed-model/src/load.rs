//! The pure arithmetic of the coordinated load test of Boggs, Mogul and Kent (seed 000 §3.3).
//!
//! Each generator "waits 5 seconds, and then transmits packets of the specified length for 20
//! seconds. During the middle 10 seconds of a test, the Titan measures the performance of its
//! Ethernet transmitter. Next, it waits 5 seconds for the dust to settle and then sends a packet
//! to the control host reporting the statistics gathered". [`Schedule`] is that timetable with
//! every part adjustable, and answers the only question a generator asks of it: does a packet
//! sent at this moment count? The measured window is centred in the transmission so that
//! start-up and wind-down (hosts not yet, or no longer, competing) fall outside it.
//!
//! The seed's hosts did not share a clock; ours do not either. The controller reads each
//! agent's clock over the control connection ([`ClockSample`]) and, as NTP does (RFC 5905
//! §8), trusts the exchange with the smallest round trip: the agent's reading is taken to be
//! simultaneous with the midpoint of that exchange, which bounds the error by half its round
//! trip. The common start is then announced to each agent in its own clock.
//!
//! Packet lengths are dealt from a [`LengthDeck`]: fixed lengths are a deck of one card, the
//! seed's bimodal "6/2" mix (§3.7, "the packet size chosen randomly while preserving the overall
//! ratio") a deck of six short and two long cards shuffled each time it runs out, and an
//! empirical mix a deck of [`WEIGHTED_DECK_CARDS`] cards in proportion to its weights.
//!
//! What each generator reports ([`LoadCounters`]) is exactly the seed's four numbers (bits and
//! packets sent in the window, the sum of transmission delays and of their squares) plus what
//! a modern host can add: send errors and where its delay timestamps came from.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::framing::{BOGGS_OVERHEAD_BYTES, ETHERNET_HEADER_BYTES};

/// Why a load test cannot be set up as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The measured window is empty.
    #[error("the measured window must be longer than zero (example: --measure 10s)")]
    EmptyWindow,
    /// The measured window does not fit in the transmission.
    #[error(
        "the measured window ({measure_s} s) is longer than the transmission ({transmit_s} s); the seed measured the middle 10 s of 20 (example: --transmit 20s --measure 10s)"
    )]
    WindowTooLong {
        /// Measured seconds asked for.
        measure_s: f64,
        /// Transmitted seconds asked for.
        transmit_s: f64,
    },
    /// A packet length the generator cannot build.
    #[error(
        "{bytes}-byte packets: a load test sends {MIN_FRAME_BYTES} to {MAX_FRAME_BYTES} bytes (header included)"
    )]
    Length {
        /// The length asked for.
        bytes: u64,
    },
    /// A deck with no cards or weights that add up to nothing.
    #[error("a packet length mix needs at least one length with a positive weight")]
    EmptyMix,
    /// An offered load that is not a positive rate.
    #[error("offered load {0} bit/s per host: must be positive (example: --rate 2M)")]
    Rate(f64),
    /// Settle, transmission and cool-down add up past what a 64-bit nanosecond clock holds.
    #[error(
        "the schedule's settle, transmit and cooldown times add up past 2^64 ns (584 years): give durations of hours at most (example: --settle 5s --transmit 20s --cooldown 5s)"
    )]
    Overflow,
    /// The whole test lasts longer than the limit it runs under.
    #[error(
        "a load test of {total_s} s (settle + transmit + cooldown) exceeds the limit of {limit_s} s (--max-duration on the agent)"
    )]
    TooLong {
        /// The schedule's length, seconds.
        total_s: f64,
        /// The limit, seconds.
        limit_s: f64,
    },
}

/// The seed's timetable, every part a parameter. Times are nanoseconds from the common start
/// (when the seed's generators received the control packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Schedule {
    /// Wait before transmitting (the seed: 5 s).
    pub settle_ns: u64,
    /// Transmission (the seed: 20 s).
    pub transmit_ns: u64,
    /// The measured middle of the transmission (the seed: 10 s).
    pub measure_ns: u64,
    /// Wait after transmitting before reporting, "for the dust to settle" (the seed: 5 s).
    pub cooldown_ns: u64,
}

/// Where in the timetable a moment falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedulePhase {
    /// Before transmitting.
    Settle,
    /// Transmitting, before the window.
    Lead,
    /// Transmitting and counting.
    Measure,
    /// Transmitting, after the window.
    Trail,
    /// Transmission over, waiting to report.
    Cooldown,
    /// Time to report.
    Report,
}

const NS: u64 = 1_000_000_000;

impl Schedule {
    /// Boggs, Mogul and Kent's: 5 s wait, 20 s transmit with the middle 10 s measured, 5 s.
    pub const SEED: Schedule = Schedule {
        settle_ns: 5 * NS,
        transmit_ns: 20 * NS,
        measure_ns: 10 * NS,
        cooldown_ns: 5 * NS,
    };

    /// Checks that the window is not empty and fits in the transmission, and that the times
    /// add up without overflow (every other method then computes without wrapping).
    pub fn validate(&self) -> Result<(), LoadError> {
        self.total_ns().ok_or(LoadError::Overflow)?;
        if self.measure_ns == 0 {
            return Err(LoadError::EmptyWindow);
        }
        if self.measure_ns > self.transmit_ns {
            return Err(LoadError::WindowTooLong {
                measure_s: self.measure_ns as f64 / NS as f64,
                transmit_s: self.transmit_ns as f64 / NS as f64,
            });
        }
        Ok(())
    }

    /// [`validate`](Self::validate), and the whole test (settle, transmission, cool-down) no
    /// longer than `limit`: what an agent checks against its `--max-duration`.
    pub fn validate_within(&self, limit: std::time::Duration) -> Result<(), LoadError> {
        self.validate()?;
        let total = self.total_ns().ok_or(LoadError::Overflow)?;
        if u128::from(total) > limit.as_nanos() {
            return Err(LoadError::TooLong {
                total_s: total as f64 / NS as f64,
                limit_s: limit.as_secs_f64(),
            });
        }
        Ok(())
    }

    /// Settle + transmit + cooldown, `None` if the sum overflows.
    pub fn total_ns(&self) -> Option<u64> {
        self.settle_ns
            .checked_add(self.transmit_ns)?
            .checked_add(self.cooldown_ns)
    }

    /// When transmission starts and stops, from the common start (saturating: a schedule that
    /// failed [`validate`](Self::validate) never wraps round).
    pub fn transmit_span_ns(&self) -> (u64, u64) {
        (
            self.settle_ns,
            self.settle_ns.saturating_add(self.transmit_ns),
        )
    }

    /// The measured window `[start, end)`, centred in the transmission.
    pub fn window_ns(&self) -> (u64, u64) {
        let start = self
            .settle_ns
            .saturating_add(self.transmit_ns.saturating_sub(self.measure_ns) / 2);
        (start, start.saturating_add(self.measure_ns))
    }

    /// When the report is due, from the common start (saturating).
    pub fn report_at_ns(&self) -> u64 {
        self.total_ns().unwrap_or(u64::MAX)
    }

    /// The phase at `t_ns` from the common start.
    pub fn phase_at(&self, t_ns: u64) -> SchedulePhase {
        let (tx0, tx1) = self.transmit_span_ns();
        let (w0, w1) = self.window_ns();
        if t_ns < tx0 {
            SchedulePhase::Settle
        } else if t_ns < w0 {
            SchedulePhase::Lead
        } else if t_ns < w1 {
            SchedulePhase::Measure
        } else if t_ns < tx1 {
            SchedulePhase::Trail
        } else if t_ns < self.report_at_ns() {
            SchedulePhase::Cooldown
        } else {
            SchedulePhase::Report
        }
    }

    /// The measured seconds.
    pub fn measure_seconds(&self) -> f64 {
        self.measure_ns as f64 / NS as f64
    }
}

/// The shortest packet a generator builds: the seed's 64-byte minimum.
pub const MIN_FRAME_BYTES: u64 = 64;
/// The longest: the largest UDP datagram over IPv6 plus its headers, within 16 bits.
pub const MAX_FRAME_BYTES: u64 = 65_535;
/// Cards in the deck of an empirical mix.
pub const WEIGHTED_DECK_CARDS: u32 = 1000;

/// Bytes of IP and UDP headers in front of a generator's payload.
pub fn ip_udp_header_bytes(ipv6: bool) -> u64 {
    if ipv6 { 40 + 8 } else { 20 + 8 }
}

/// The UDP payload that makes a packet of `frame_bytes` as the seed counted it (Ethernet
/// header and data, no preamble or CRC): the frame less the Ethernet, IP and UDP headers.
/// Never below [`crate::load::GENERATOR_HEADER_BYTES`], which every datagram carries.
pub fn udp_payload_bytes(frame_bytes: u64, ipv6: bool) -> usize {
    frame_bytes
        .saturating_sub(ETHERNET_HEADER_BYTES + ip_udp_header_bytes(ipv6))
        .max(GENERATOR_HEADER_BYTES as u64) as usize
}

/// Bytes of the header at the front of every generator datagram: test tag (8), host (4),
/// flags (4).
pub const GENERATOR_HEADER_BYTES: usize = 16;

/// Bits the seed charged a packet of `frame_bytes`: the packet plus 24 byte times of gap,
/// preamble and CRC (§3.3).
pub fn charged_bits(frame_bytes: u64) -> u64 {
    (frame_bytes + BOGGS_OVERHEAD_BYTES) * 8
}

/// Packet lengths as a deck of cards, dealt in a fresh random order each time it runs out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LengthDeck {
    /// One length (bytes) per card.
    pub cards: Vec<u32>,
}

impl LengthDeck {
    /// `count` cards of each length: `[(64, 6), (1536, 2)]` is the seed's "6/2".
    pub fn from_counts(counts: &[(u64, u32)]) -> Result<LengthDeck, LoadError> {
        let mut cards = Vec::new();
        for &(bytes, n) in counts {
            check_length(bytes)?;
            cards.extend(std::iter::repeat_n(bytes as u32, n as usize));
        }
        let deck = LengthDeck { cards };
        deck.validate()?;
        Ok(deck)
    }

    /// A deck of [`WEIGHTED_DECK_CARDS`] cards in proportion to the weights (largest
    /// remainders, so the counts add up exactly and each is within one card of its share).
    pub fn from_weights(weights: &[(u64, f64)]) -> Result<LengthDeck, LoadError> {
        let total: f64 = weights.iter().map(|w| w.1).sum();
        if !(total.is_finite() && total > 0.0) || weights.iter().any(|w| w.1.is_nan() || w.1 < 0.0)
        {
            return Err(LoadError::EmptyMix);
        }
        let n = f64::from(WEIGHTED_DECK_CARDS);
        let shares: Vec<f64> = weights.iter().map(|w| w.1 / total * n).collect();
        let mut counts: Vec<u32> = shares.iter().map(|s| s.floor() as u32).collect();
        let mut left = WEIGHTED_DECK_CARDS - counts.iter().sum::<u32>();
        let mut order: Vec<usize> = (0..weights.len()).collect();
        order.sort_by(|&a, &b| {
            let ra = shares[a] - shares[a].floor();
            let rb = shares[b] - shares[b].floor();
            rb.total_cmp(&ra).then(a.cmp(&b))
        });
        for &i in order.iter().cycle() {
            if left == 0 {
                break;
            }
            counts[i] += 1;
            left -= 1;
        }
        let pairs: Vec<(u64, u32)> = weights.iter().map(|w| w.0).zip(counts).collect();
        LengthDeck::from_counts(&pairs)
    }

    /// Checks that the deck has cards and each is a length a generator can build.
    pub fn validate(&self) -> Result<(), LoadError> {
        if self.cards.is_empty() {
            return Err(LoadError::EmptyMix);
        }
        for &c in &self.cards {
            check_length(u64::from(c))?;
        }
        Ok(())
    }

    /// The mean length, bytes.
    pub fn mean_bytes(&self) -> f64 {
        self.cards.iter().map(|&c| f64::from(c)).sum::<f64>() / self.cards.len().max(1) as f64
    }

    /// The longest card.
    pub fn max_bytes(&self) -> u32 {
        self.cards.iter().copied().max().unwrap_or(0)
    }
}

fn check_length(bytes: u64) -> Result<(), LoadError> {
    if (MIN_FRAME_BYTES..=MAX_FRAME_BYTES).contains(&bytes) {
        Ok(())
    } else {
        Err(LoadError::Length { bytes })
    }
}

/// Deals a deck: every run of `cards.len()` packets holds each card once, in random order.
#[derive(Debug, Clone)]
pub struct Dealer {
    cards: Vec<u32>,
    next: usize,
    rng: ChaCha8Rng,
}

impl Dealer {
    /// A dealer seeded so that a host's sequence of lengths is reproducible.
    pub fn new(deck: &LengthDeck, seed: u64) -> Dealer {
        Dealer {
            cards: deck.cards.clone(),
            next: deck.cards.len(),
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The next packet length, bytes.
    pub fn deal(&mut self) -> u32 {
        if self.next >= self.cards.len() {
            if self.cards.len() > 1 {
                self.cards.shuffle(&mut self.rng);
            }
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

/// The gap between packet starts that makes a host offer `bits_per_second` with packets of
/// `frame_bytes`, each charged as the seed charged it. Nanoseconds.
pub fn pacing_interval_ns(frame_bytes: u64, bits_per_second: f64) -> Result<f64, LoadError> {
    if !(bits_per_second.is_finite() && bits_per_second > 0.0) {
        return Err(LoadError::Rate(bits_per_second));
    }
    Ok(charged_bits(frame_bytes) as f64 / bits_per_second * 1e9)
}

/// One exchange of the clock handshake: the controller's clock when it asked and when the
/// answer came, and the agent's clock reading in between. Nanoseconds, each in its own clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockSample {
    /// Controller clock when the question left.
    pub sent_ns: u64,
    /// The agent's clock when it answered.
    pub agent_ns: u64,
    /// Controller clock when the answer arrived.
    pub received_ns: u64,
}

/// What the controller knows about an agent's clock.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClockEstimate {
    /// Agent clock minus controller clock, nanoseconds.
    pub offset_ns: i64,
    /// Round trip of the exchange the estimate rests on, nanoseconds.
    pub rtt_ns: u64,
    /// Largest error of the offset: half that round trip.
    pub error_bound_ns: u64,
}

impl ClockEstimate {
    /// From the exchange with the smallest round trip (NTP's minimum-delay filter); `None`
    /// without samples.
    pub fn from_samples(samples: &[ClockSample]) -> Option<ClockEstimate> {
        let best = samples
            .iter()
            .filter(|s| s.received_ns >= s.sent_ns)
            .min_by_key(|s| s.received_ns - s.sent_ns)?;
        let rtt = best.received_ns - best.sent_ns;
        let midpoint = best.sent_ns as i128 + i128::from(rtt / 2);
        Some(ClockEstimate {
            offset_ns: (i128::from(best.agent_ns) - midpoint) as i64,
            rtt_ns: rtt,
            error_bound_ns: rtt.div_ceil(2),
        })
    }

    /// A controller time in the agent's clock.
    pub fn to_agent(&self, controller_ns: u64) -> u64 {
        (controller_ns as i128 + i128::from(self.offset_ns)).max(0) as u64
    }
}

/// Where a generator's transmission delays came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DelaySource {
    /// From just before the send call to the kernel's software transmit timestamp
    /// (`SO_TIMESTAMPING`, `SOF_TIMESTAMPING_TX_SOFTWARE`), `CLOCK_REALTIME`.
    KernelTxSoftware,
    /// From just before the send call to the NIC's hardware transmit timestamp
    /// (`SOF_TIMESTAMPING_TX_HARDWARE`, raw hardware clock), the NIC's clock read against
    /// `CLOCK_REALTIME` once at the start.
    NicTxHardware,
    /// From just before the send call to its return, `CLOCK_MONOTONIC`: includes the system
    /// call and, when the socket buffer is full, the wait for room.
    AroundSendCall,
}

impl DelaySource {
    /// For tables.
    pub fn describe(self) -> &'static str {
        match self {
            DelaySource::KernelTxSoftware => {
                "send call to kernel TX software timestamp (SO_TIMESTAMPING), CLOCK_REALTIME"
            }
            DelaySource::NicTxHardware => {
                "send call to NIC hardware transmit timestamp (SO_TIMESTAMPING raw hardware), NIC clock against CLOCK_REALTIME"
            }
            DelaySource::AroundSendCall => "around the send call, CLOCK_MONOTONIC",
        }
    }
}

/// What one generator counted in the measured window: the seed's four numbers and more.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct LoadCounters {
    /// Packets sent in the window.
    pub packets: u64,
    /// Their bits as the seed charged them: `(length + 24) * 8` each.
    pub charged_bits: u64,
    /// Their lengths in bytes, summed (header and data, as the seed counted).
    pub frame_bytes: u64,
    /// Packets whose transmission delay was measured.
    pub delay_count: u64,
    /// Sum of the delays, seconds.
    pub delay_sum_s: f64,
    /// Sum of their squares, seconds squared.
    pub delay_sum_sq_s2: f64,
    /// Send calls that failed (buffer full with a non-blocking send, refused, ...).
    pub send_errors: u64,
    /// Packets sent over the whole transmission, window or not.
    pub packets_total: u64,
}

impl LoadCounters {
    /// Counts one packet sent in the window.
    pub fn add_packet(&mut self, frame_bytes: u64) {
        self.packets += 1;
        self.frame_bytes += frame_bytes;
        self.charged_bits += charged_bits(frame_bytes);
    }

    /// Counts one measured delay.
    pub fn add_delay(&mut self, seconds: f64) {
        self.delay_count += 1;
        self.delay_sum_s += seconds;
        self.delay_sum_sq_s2 += seconds * seconds;
    }

    /// Mean delay, seconds (NaN without samples).
    pub fn delay_mean_s(&self) -> f64 {
        if self.delay_count == 0 {
            f64::NAN
        } else {
            self.delay_sum_s / self.delay_count as f64
        }
    }
}

/// The fraction of packets a sink did not receive: `None` when nothing was sent.
pub fn loss_fraction(sent: u64, received: u64) -> Option<f64> {
    (sent > 0).then(|| sent.saturating_sub(received) as f64 / sent as f64)
}
