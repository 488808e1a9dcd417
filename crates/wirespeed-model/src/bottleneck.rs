//! Verdicts: what bounded a throughput measurement, in sentences.
//!
//! A rate alone does not say why it is not higher. The kernel keeps time-limited counters per
//! TCP connection (`tcpi_busy_time`, `tcpi_rwnd_limited`, `tcpi_sndbuf_limited`, Linux 4.10+):
//! the share of the busy time spent waiting for the receiver's window or for send-buffer
//! space names the limit directly. With a known link rate the ceiling comes from the envelope
//! (seed 002's back-of-the-envelope habit: compute the best case before trusting a
//! measurement); on loopback there is no link, and the measurement itself is the host's
//! ceiling, as in seed 002's first ttcp run.

use std::fmt;

use serde::Serialize;

/// What is known about one direction of a test.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowFacts {
    /// The measured goodput (receiver's count).
    pub goodput_bits_per_second: f64,
    /// The envelope's ceiling and where it comes from ("10 Gbit/s Ethernet, MTU 1500").
    pub ceiling: Option<(f64, String)>,
    /// What the ceiling is the ceiling of, when it is not a link (a router's forwarding, the
    /// ACKs' way back, a host's processing): the subject of "... is the bound". `None`: the
    /// link.
    pub bound: Option<String>,
    /// The test ran over loopback (no link rate exists).
    pub loopback: bool,
    /// Without a ceiling: why the link rate is unknown ("eth0 is a TAP device, whose speed is
    /// a constant of its driver").
    pub unknown_rate_reason: Option<String>,
    /// The sender's own pacing target (UDP `-b`), if it had one.
    pub target_bits_per_second: Option<f64>,
    /// The senders' rate cap (TCP `-b`, held by the kernel's pacing), summed over the
    /// direction's streams, if they had one.
    pub cap_bits_per_second: Option<f64>,
    /// The streams the cap is summed over (`-P`); 0 or 1 for one.
    pub cap_streams: u32,
    /// The share of their time the capped senders gave up behind the cap (0-1): their host
    /// descheduled them for longer than their sockets' unsent data lasted, and the kernel's
    /// pacing does not make that time up. `None` where the senders did not report it.
    pub cap_given_up_share: Option<f64>,
    /// The rate one datagram makes over the whole test (UDP, timed): a pacer sends whole
    /// datagrams, so at a low `-b` the mean can be one datagram short of the target.
    pub quantum_bits_per_second: Option<f64>,
    /// Smoothed RTT seen by the sender.
    pub rtt_seconds: Option<f64>,
    /// The receiver's granted `SO_RCVBUF`.
    pub receive_buffer_bytes: Option<u64>,
    /// The sender's granted `SO_SNDBUF`.
    pub send_buffer_bytes: Option<u64>,
    /// `tcpi_busy_time`, summed over streams.
    pub busy_seconds: Option<f64>,
    /// `tcpi_rwnd_limited`.
    pub rwnd_limited_seconds: Option<f64>,
    /// `tcpi_sndbuf_limited`.
    pub sndbuf_limited_seconds: Option<f64>,
    /// Busiest sending thread, percent of one core.
    pub sender_thread_cpu_percent: Option<f64>,
    /// Busiest receiving thread, percent of one core.
    pub receiver_thread_cpu_percent: Option<f64>,
    /// Congestion control in use.
    pub congestion: Option<String>,
    /// Queueing discipline (the default qdisc where the interface's own is unknown).
    pub qdisc: Option<String>,
}

/// A share above this is called a limit.
const LIMITED_SHARE: f64 = 0.2;
/// Goodput at or above this share of the envelope ceiling: the link is the bound (what is
/// left is the measurement's own start and end, and the ceiling's rounding of the overheads).
const LINK_BOUND_SHARE: f64 = 0.9;
/// Goodput at or above this share of a `-b` cap: the cap is the bound. The kernel paces the
/// payload to the cap from the first segment, so what is missing is the test's own start (the
/// handshake, the first round trip) and its last partial interval.
pub const CAP_REACHED_SHARE: f64 = 0.95;
/// A share of their time given up behind a `-b` cap above this is named in a short-of-cap
/// verdict (the `pacer_behind` warning's threshold).
pub const CAP_GIVEN_UP_NAMED: f64 = 0.01;
/// A thread above this share of one core is called CPU-bound.
const CPU_BOUND_PERCENT: f64 = 90.0;

fn rate(bps: f64) -> String {
    crate::RateFormat::Adaptive.format(bps)
}

/// True for `fq`, alone or under a multiqueue root (`mq (fq on 4 queues)`): the qdisc that
/// gives BBR the per-flow pacing it expects; `fq_codel` does not pace.
pub fn paces_flows(qdisc: &str) -> bool {
    qdisc
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|word| word == "fq")
}

/// What bounded one direction of a test, or why nothing can be said: one variant per
/// conclusion, with the figures it rests on (shares are 0-1 ratios). The sentence is its
/// `Display`; the kind and figures are what a script reads (`findings` in the JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Bound {
    /// No bytes arrived: a rate of zero holds no evidence of a ceiling or a limit.
    NothingArrived,
    /// A UDP sender reached its own `-b` target (give or take one whole datagram).
    PacedByTarget {
        /// The measured goodput as a share of the figure it is judged against (0-1).
        share: f64,
        /// The sender's `-b` target.
        target_bits_per_second: f64,
        /// One datagram's rate over the test as a share of the target, when it is large
        /// enough (5% or more) to explain a shortfall.
        datagram_share: Option<f64>,
    },
    /// A UDP sender fell short of its `-b` target.
    ShortOfTarget {
        /// The measured goodput as a share of the figure it is judged against (0-1).
        share: f64,
        /// The sender's `-b` target.
        target_bits_per_second: f64,
    },
    /// The TCP senders reached their `-b` cap, which lies under the path's ceiling.
    CappedByRate {
        /// The measured goodput as a share of the figure it is judged against (0-1).
        share: f64,
        /// The senders' `-b` cap, summed over the streams.
        cap_bits_per_second: f64,
        /// The streams the cap is summed over.
        streams: u32,
        /// The envelope ceiling of the path.
        ceiling_bits_per_second: Option<f64>,
        /// Where the ceiling comes from ("10 Gbit/s Ethernet, MTU 1500").
        ceiling_source: Option<String>,
    },
    /// The TCP senders fell short of a `-b` cap under the path's ceiling.
    ShortOfCap {
        /// The measured goodput as a share of the figure it is judged against (0-1).
        share: f64,
        /// The senders' `-b` cap, summed over the streams.
        cap_bits_per_second: f64,
        /// The share of their time the senders gave up behind the cap, when over
        /// [`CAP_GIVEN_UP_NAMED`]: their own host, not the path, held that much back.
        #[serde(skip_serializing_if = "Option::is_none")]
        given_up_share: Option<f64>,
    },
    /// The goodput reached 90% or more of the envelope ceiling: `bound` (the link, or the
    /// element named) is the limit.
    LinkBound {
        /// What the ceiling is the ceiling of: "the link", or the element named.
        bound: String,
        /// The measured goodput as a share of the figure it is judged against (0-1).
        share: f64,
        /// The envelope ceiling of the path.
        ceiling_bits_per_second: f64,
        /// Where the ceiling comes from ("10 Gbit/s Ethernet, MTU 1500").
        ceiling_source: String,
    },
    /// The goodput's share of a known envelope ceiling, short of it.
    BelowCeiling {
        /// The measured goodput as a share of the figure it is judged against (0-1).
        share: f64,
        /// The envelope ceiling of the path.
        ceiling_bits_per_second: f64,
        /// Where the ceiling comes from ("10 Gbit/s Ethernet, MTU 1500").
        ceiling_source: String,
    },
    /// Over loopback the measurement is the host's own ceiling.
    LoopbackCeiling {
        /// The measured goodput.
        goodput_bits_per_second: f64,
    },
    /// No link rate is known, so no ceiling to compare with.
    LinkRateUnknown {
        /// Why the link rate is unknown, where that is known.
        reason: Option<String>,
    },
    /// The sender waited for the receiver's window for more than a fifth of its busy time.
    ReceiverWindowLimited {
        /// The measured goodput as a share of the figure it is judged against (0-1).
        share: f64,
        /// The receiver's granted `SO_RCVBUF`.
        receive_buffer_bytes: Option<u64>,
        /// The ceiling (or the goodput) times the sender's smoothed RTT.
        bandwidth_delay_product_bytes: Option<f64>,
    },
    /// The sender waited for its send buffer to drain for more than a fifth of its busy time.
    SendBufferLimited {
        /// The measured goodput as a share of the figure it is judged against (0-1).
        share: f64,
        /// The sender's granted `SO_SNDBUF`.
        send_buffer_bytes: Option<u64>,
    },
    /// One end's busiest thread used 90% or more of a core.
    CpuLimited {
        /// "sender" or "receiver".
        end: String,
        /// The busiest thread of that end, percent of one core.
        thread_cpu_percent: f64,
    },
    /// BBR ran without the `fq` qdisc's pacing, below the ceiling or over loopback.
    BbrWithoutFq {
        /// The goodput's share of a known ceiling; `None` over loopback.
        ceiling_share: Option<f64>,
        /// The queueing discipline in use.
        qdisc: Option<String>,
    },
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::NothingArrived => {
                write!(f, "nothing arrived: no rate to judge, so no verdict")
            }
            Bound::PacedByTarget {
                share,
                target_bits_per_second,
                datagram_share,
            } => {
                write!(
                    f,
                    "paced: {:.1}% of the -b target of {}",
                    share * 100.0,
                    rate(*target_bits_per_second)
                )?;
                if let Some(d) = datagram_share {
                    write!(
                        f,
                        " (one datagram is {:.1}% of the target over this test: the sender \
                         counts whole datagrams)",
                        d * 100.0
                    )?;
                }
                write!(
                    f,
                    "; the sender, not the path, set the rate (-b 0 finds the ceiling)"
                )
            }
            Bound::ShortOfTarget {
                share,
                target_bits_per_second,
            } => write!(
                f,
                "{:.1}% of the -b target of {} arrived: something below the target limits the rate",
                share * 100.0,
                rate(*target_bits_per_second)
            ),
            Bound::CappedByRate {
                share,
                cap_bits_per_second,
                streams,
                ceiling_bits_per_second,
                ceiling_source,
            } => {
                write!(f, "capped at {}", rate(*cap_bits_per_second))?;
                if *streams > 1 {
                    write!(
                        f,
                        " ({streams} streams x {})",
                        rate(cap_bits_per_second / f64::from(*streams))
                    )?;
                }
                write!(
                    f,
                    " by -b: {:.1}% of the cap arrived; the sender's cap, not the path, set the \
                     rate (leave -b out to find the ceiling)",
                    share * 100.0
                )?;
                if let Some(c) = ceiling_bits_per_second {
                    write!(
                        f,
                        "; the path's envelope ceiling is {} ({})",
                        rate(*c),
                        ceiling_source.as_deref().unwrap_or_default()
                    )?;
                }
                Ok(())
            }
            Bound::ShortOfCap {
                share,
                cap_bits_per_second,
                given_up_share: Some(g),
            } => write!(
                f,
                "{:.1}% of the -b cap of {} arrived: the senders gave up {:.1}% of their time \
                 behind the cap (their host was too busy to keep the sockets filled), so the \
                 cap less that is what was offered; rerun on a quieter host to judge the path",
                share * 100.0,
                rate(*cap_bits_per_second),
                g * 100.0
            ),
            Bound::ShortOfCap {
                share,
                cap_bits_per_second,
                given_up_share: None,
            } => write!(
                f,
                "{:.1}% of the -b cap of {} arrived: something below the cap limits the rate",
                share * 100.0,
                rate(*cap_bits_per_second)
            ),
            Bound::LinkBound {
                bound,
                share,
                ceiling_bits_per_second,
                ceiling_source,
            } => write!(
                f,
                "{bound} is the bound: {:.1}% of the {} envelope ceiling ({ceiling_source})",
                share * 100.0,
                rate(*ceiling_bits_per_second)
            ),
            Bound::BelowCeiling {
                share,
                ceiling_bits_per_second,
                ceiling_source,
            } => write!(
                f,
                "{:.1}% of the {} envelope ceiling ({ceiling_source})",
                share * 100.0,
                rate(*ceiling_bits_per_second)
            ),
            Bound::LoopbackCeiling {
                goodput_bits_per_second,
            } => write!(
                f,
                "loopback has no link rate: {} is this host's own ceiling for this stack and \
                 these settings (the upper bound any network test from here can reach)",
                rate(*goodput_bits_per_second)
            ),
            Bound::LinkRateUnknown { reason } => write!(
                f,
                "link rate unknown{}: give it with --link-rate (e.g. --link-rate 1G) to compare \
                 with the envelope ceiling",
                reason
                    .as_ref()
                    .map_or(String::new(), |why| format!(" ({why})"))
            ),
            Bound::ReceiverWindowLimited {
                share,
                receive_buffer_bytes,
                bandwidth_delay_product_bytes,
            } => {
                write!(
                    f,
                    "receive-window-limited {:.0}% of the busy time",
                    share * 100.0
                )?;
                match (receive_buffer_bytes, bandwidth_delay_product_bytes) {
                    (Some(r), Some(b)) if (*r as f64) < *b => write!(
                        f,
                        ": granted receive buffer {r} bytes < bandwidth-delay product {} bytes; \
                         raise -w (and net.core.rmem_max)",
                        b.round()
                    ),
                    _ => Ok(()),
                }
            }
            Bound::SendBufferLimited {
                share,
                send_buffer_bytes,
            } => write!(
                f,
                "send-buffer-limited {:.0}% of the busy time{}: the sender waited for the \
                 buffer to drain",
                share * 100.0,
                send_buffer_bytes.map_or(String::new(), |b| format!(
                    " (granted send buffer {b} bytes)"
                ))
            ),
            Bound::CpuLimited {
                end,
                thread_cpu_percent,
            } => write!(
                f,
                "CPU-limited: the {end}'s thread used {thread_cpu_percent:.0}% of one core (a \
                 faster CPU, -P streams on other cores, or larger -l would move the limit)"
            ),
            Bound::BbrWithoutFq {
                ceiling_share: Some(s),
                ..
            } => write!(
                f,
                "congestion control bbr without the fq qdisc: BBR paces itself by timers here, \
                 and this run reached {:.1}% of the ceiling; on these machines timer pacing \
                 holds loopback TCP to about a third of what cubic reaches: compare with -C cubic",
                s * 100.0
            ),
            Bound::BbrWithoutFq {
                ceiling_share: None,
                ..
            } => write!(
                f,
                "congestion control bbr without the fq qdisc: BBR paces itself by timers here, \
                 and on these machines that holds loopback TCP to about a third of what cubic \
                 reaches; compare with -C cubic"
            ),
        }
    }
}

/// The verdicts for one direction, most important first.
pub fn verdicts(f: &FlowFacts) -> Vec<Bound> {
    let mut out = Vec::new();
    // No bytes, no evidence: neither a ceiling nor a limit can be read from a rate of zero.
    if f.goodput_bits_per_second.is_nan() || f.goodput_bits_per_second <= 0.0 {
        out.push(Bound::NothingArrived);
        return out;
    }
    if let Some(target) = f.target_bits_per_second.filter(|&t| t > 0.0) {
        let share = f.goodput_bits_per_second / target;
        let quantum = f.quantum_bits_per_second.unwrap_or(0.0).max(0.0);
        if f.goodput_bits_per_second + quantum >= 0.95 * target {
            out.push(Bound::PacedByTarget {
                share,
                target_bits_per_second: target,
                datagram_share: (quantum >= 0.05 * target).then(|| quantum / target),
            });
            return out;
        }
        out.push(Bound::ShortOfTarget {
            share,
            target_bits_per_second: target,
        });
    }
    if let Some(cap) = f.cap_bits_per_second.filter(|&c| c > 0.0) {
        let share = f.goodput_bits_per_second / cap;
        // Below the path's ceiling (or with none known) a cap that was reached is the bound;
        // a cap above the ceiling binds nothing, and the path is judged as without it.
        let under_ceiling = f.ceiling.as_ref().is_none_or(|(c, _)| cap <= *c);
        if share >= CAP_REACHED_SHARE && under_ceiling {
            let room = f.ceiling.as_ref().filter(|(c, _)| *c > 0.0);
            out.push(Bound::CappedByRate {
                share,
                cap_bits_per_second: cap,
                streams: f.cap_streams,
                ceiling_bits_per_second: room.map(|(c, _)| *c),
                ceiling_source: room.map(|(_, source)| source.clone()),
            });
            return out;
        }
        if under_ceiling {
            out.push(Bound::ShortOfCap {
                share,
                cap_bits_per_second: cap,
                given_up_share: f.cap_given_up_share.filter(|&g| g > CAP_GIVEN_UP_NAMED),
            });
        }
    }
    match &f.ceiling {
        Some((ceiling, source))
            if *ceiling > 0.0 && f.goodput_bits_per_second / ceiling >= LINK_BOUND_SHARE =>
        {
            out.push(Bound::LinkBound {
                bound: f.bound.clone().unwrap_or_else(|| "the link".into()),
                share: f.goodput_bits_per_second / ceiling,
                ceiling_bits_per_second: *ceiling,
                ceiling_source: source.clone(),
            });
        }
        Some((ceiling, source)) if *ceiling > 0.0 => out.push(Bound::BelowCeiling {
            share: f.goodput_bits_per_second / ceiling,
            ceiling_bits_per_second: *ceiling,
            ceiling_source: source.clone(),
        }),
        _ if f.loopback => out.push(Bound::LoopbackCeiling {
            goodput_bits_per_second: f.goodput_bits_per_second,
        }),
        _ => out.push(Bound::LinkRateUnknown {
            reason: f.unknown_rate_reason.clone(),
        }),
    }
    let share = |limited: Option<f64>| match (limited, f.busy_seconds) {
        (Some(l), Some(b)) if b > 0.0 => Some(l / b),
        _ => None,
    };
    let bdp = f.rtt_seconds.map(|rtt| {
        let pipe_rate = f
            .ceiling
            .as_ref()
            .map_or(f.goodput_bits_per_second, |c| c.0);
        pipe_rate * rtt / 8.0
    });
    if let Some(s) = share(f.rwnd_limited_seconds).filter(|&s| s > LIMITED_SHARE) {
        out.push(Bound::ReceiverWindowLimited {
            share: s,
            receive_buffer_bytes: f.receive_buffer_bytes,
            bandwidth_delay_product_bytes: bdp,
        });
    }
    if let Some(s) = share(f.sndbuf_limited_seconds).filter(|&s| s > LIMITED_SHARE) {
        out.push(Bound::SendBufferLimited {
            share: s,
            send_buffer_bytes: f.send_buffer_bytes,
        });
    }
    for (who, cpu) in [
        ("sender", f.sender_thread_cpu_percent),
        ("receiver", f.receiver_thread_cpu_percent),
    ] {
        if let Some(c) = cpu.filter(|&c| c >= CPU_BOUND_PERCENT) {
            out.push(Bound::CpuLimited {
                end: who.into(),
                thread_cpu_percent: c,
            });
        }
    }
    // BBR's timer pacing without fq was measured to cost about two thirds of loopback TCP on
    // these machines; elsewhere it is a suspect only where the rate fell short of a known
    // ceiling (at the ceiling it has cost nothing, and without one there is no evidence).
    let ceiling_share = f
        .ceiling
        .as_ref()
        .filter(|(c, _)| *c > 0.0)
        .map(|(c, _)| f.goodput_bits_per_second / c);
    if f.congestion.as_deref() == Some("bbr") && !f.qdisc.as_deref().is_some_and(paces_flows) {
        let without_fq = |ceiling_share| Bound::BbrWithoutFq {
            ceiling_share,
            qdisc: f.qdisc.clone(),
        };
        match ceiling_share {
            Some(s) if s < LINK_BOUND_SHARE => out.push(without_fq(Some(s))),
            None if f.loopback => out.push(without_fq(None)),
            _ => {}
        }
    }
    out
}
