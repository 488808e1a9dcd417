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
/// A thread above this share of one core is called CPU-bound.
const CPU_BOUND_PERCENT: f64 = 90.0;

fn rate(bps: f64) -> String {
    crate::RateFormat::Adaptive.format(bps)
}

/// True for `fq`, alone or under a multiqueue root (`mq (fq on 4 queues)`): the qdisc that
/// gives BBR the per-flow pacing it expects; `fq_codel` does not pace.
fn paces_flows(qdisc: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The sentences, as a person reads them.
    fn said(f: &FlowFacts) -> Vec<String> {
        verdicts(f).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_known_link_rate_gives_a_percentage_of_the_envelope() {
        let v = said(&FlowFacts {
            goodput_bits_per_second: 8.2e6,
            ceiling: Some((9.415e6, "10 Mbit/s Ethernet".into())),
            ..FlowFacts::default()
        });
        assert_eq!(
            v[0],
            "87.1% of the 9.415 Mbit/s envelope ceiling (10 Mbit/s Ethernet)"
        );
    }

    #[test]
    fn near_the_ceiling_the_link_is_named_as_the_bound() {
        let v = said(&FlowFacts {
            goodput_bits_per_second: 9.406e6,
            ceiling: Some((9.415e6, "10 Mbit/s Ethernet".into())),
            ..FlowFacts::default()
        });
        assert_eq!(
            v[0],
            "the link is the bound: 99.9% of the 9.415 Mbit/s envelope ceiling (10 Mbit/s Ethernet)"
        );
    }

    #[test]
    fn bbr_without_fq_is_no_verdict_at_the_links_ceiling() {
        let at = |goodput: f64| {
            said(&FlowFacts {
                goodput_bits_per_second: goodput,
                ceiling: Some((9.415e6, "10 Mbit/s Ethernet".into())),
                congestion: Some("bbr".into()),
                qdisc: Some("pfifo_fast".into()),
                ..FlowFacts::default()
            })
            .iter()
            .any(|s| s.contains("bbr without the fq qdisc"))
        };
        assert!(!at(9.2e6), "the link is the bound");
        assert!(at(3e6), "something below the link holds the rate");
    }

    #[test]
    fn bbr_without_fq_off_loopback_is_judged_by_what_was_measured() {
        // Issue 31: bbr reached 99.3% of a T1's ceiling and was still warned.
        let warned = |goodput: f64, ceiling: Option<f64>| {
            said(&FlowFacts {
                goodput_bits_per_second: goodput,
                ceiling: ceiling.map(|c| (c, "link r1-r2".into())),
                congestion: Some("bbr".into()),
                qdisc: Some("fq_codel".into()),
                ..FlowFacts::default()
            })
            .into_iter()
            .find(|s| s.contains("bbr without the fq qdisc"))
        };
        assert_eq!(warned(1.447e6, Some(1.457e6)), None);
        assert!(
            warned(0.5e6, Some(1.457e6))
                .is_some_and(|w| w.contains("reached 34.3% of the ceiling")),
            "{:?}",
            warned(0.5e6, Some(1.457e6))
        );
        assert_eq!(warned(0.5e6, None), None, "no ceiling, no evidence");
    }

    #[test]
    fn a_bound_that_is_not_a_link_is_named_as_the_subject() {
        let v = said(&FlowFacts {
            goodput_bits_per_second: 0.95e6,
            ceiling: Some((1e6, "router r1's forwarding (1ms per packet)".into())),
            bound: Some("the route's bottleneck".into()),
            ..FlowFacts::default()
        });
        assert!(
            v[0].starts_with("the route's bottleneck is the bound: 95.0% of the 1 Mbit/s"),
            "{v:?}"
        );
    }

    #[test]
    fn a_low_rate_pacer_is_judged_in_whole_datagrams() {
        // -b 6k -t 2.5 with 1472-byte datagrams: one datagram (4710 bit/s over the test).
        let v = said(&FlowFacts {
            goodput_bits_per_second: 4710.4,
            target_bits_per_second: Some(6000.0),
            quantum_bits_per_second: Some(4710.4),
            loopback: true,
            ..FlowFacts::default()
        });
        assert!(
            v[0].starts_with("paced: 78.5% of the -b target of 6 kbit/s (one datagram is 78.5%"),
            "{v:?}"
        );
        let short = said(&FlowFacts {
            goodput_bits_per_second: 4e6,
            target_bits_per_second: Some(10e6),
            quantum_bits_per_second: Some(1e3),
            loopback: true,
            ..FlowFacts::default()
        });
        assert!(short[0].starts_with("40.0% of the -b target"), "{short:?}");
    }

    #[test]
    fn an_unknown_rate_says_why_and_how_to_give_it() {
        let v = said(&FlowFacts {
            goodput_bits_per_second: 9.4e6,
            unknown_rate_reason: Some("eth0 is a TAP device".into()),
            ..FlowFacts::default()
        });
        assert_eq!(
            v[0],
            "link rate unknown (eth0 is a TAP device): give it with --link-rate (e.g. --link-rate 1G) to compare with the envelope ceiling"
        );
    }

    #[test]
    fn a_rate_of_zero_gets_no_verdict() {
        for loopback in [false, true] {
            let v = said(&FlowFacts {
                goodput_bits_per_second: 0.0,
                loopback,
                ceiling: (!loopback).then(|| (9.415e6, "x".into())),
                sender_thread_cpu_percent: Some(99.0),
                ..FlowFacts::default()
            });
            assert_eq!(v, ["nothing arrived: no rate to judge, so no verdict"]);
        }
    }

    #[test]
    fn a_reached_cap_is_the_bound_not_the_path() {
        let link = Some((94.9e6, "100 Mbit/s Ethernet".to_string()));
        let f = FlowFacts {
            goodput_bits_per_second: 19.9e6,
            cap_bits_per_second: Some(20e6),
            ceiling: link.clone(),
            rwnd_limited_seconds: Some(0.9),
            busy_seconds: Some(1.0),
            ..FlowFacts::default()
        };
        let v = said(&f);
        assert_eq!(v.len(), 1, "the cap explains the rate alone: {v:?}");
        assert!(
            v[0].starts_with("capped at 20 Mbit/s by -b: 99.5% of the cap arrived")
                && v[0].contains("envelope ceiling is 94.9 Mbit/s"),
            "{v:?}"
        );
        // Short of the cap: said, then the path is judged as usual.
        let short = said(&FlowFacts {
            goodput_bits_per_second: 10e6,
            ..f.clone()
        });
        assert!(
            short[0].starts_with("50.0% of the -b cap of 20 Mbit/s arrived"),
            "{short:?}"
        );
        assert!(
            short[1].starts_with("10.5% of the 94.9 Mbit/s envelope"),
            "{short:?}"
        );
        // A cap above the ceiling binds nothing: the link is the bound.
        let above = said(&FlowFacts {
            goodput_bits_per_second: 94e6,
            cap_bits_per_second: Some(200e6),
            ceiling: link,
            ..FlowFacts::default()
        });
        assert!(above[0].starts_with("the link is the bound"), "{above:?}");
        // Without a known link: the cap is still the bound.
        let lo = said(&FlowFacts {
            goodput_bits_per_second: 4.99e6,
            cap_bits_per_second: Some(5e6),
            loopback: true,
            ..FlowFacts::default()
        });
        assert!(
            lo[0].starts_with("capped at 5 Mbit/s by -b: 99.8%"),
            "{lo:?}"
        );
        let two = said(&FlowFacts {
            goodput_bits_per_second: 9.9e6,
            cap_bits_per_second: Some(10e6),
            cap_streams: 2,
            ..FlowFacts::default()
        });
        assert!(
            two[0].starts_with("capped at 10 Mbit/s (2 streams x 5 Mbit/s) by -b: 99.0%"),
            "{two:?}"
        );
    }

    #[test]
    fn a_paced_sender_is_named_as_the_limit() {
        let v = said(&FlowFacts {
            goodput_bits_per_second: 99.9e6,
            target_bits_per_second: Some(100e6),
            loopback: true,
            ..FlowFacts::default()
        });
        assert_eq!(v.len(), 1);
        assert!(
            v[0].starts_with("paced: 99.9% of the -b target of 100 Mbit/s"),
            "{v:?}"
        );
    }

    #[test]
    fn loopback_is_the_hosts_own_ceiling() {
        let v = said(&FlowFacts {
            goodput_bits_per_second: 40e9,
            loopback: true,
            ..FlowFacts::default()
        });
        assert!(
            v[0].starts_with("loopback has no link rate: 40 Gbit/s"),
            "{v:?}"
        );
    }

    #[test]
    fn window_limit_names_the_granted_buffer_and_the_bdp() {
        let v = said(&FlowFacts {
            goodput_bits_per_second: 5e6,
            ceiling: Some((9.4e6, "x".into())),
            rtt_seconds: Some(0.02),
            receive_buffer_bytes: Some(16_384),
            busy_seconds: Some(10.0),
            rwnd_limited_seconds: Some(9.0),
            ..FlowFacts::default()
        });
        assert!(
            v[1].contains("90% of the busy time: granted receive buffer 16384 bytes < bandwidth-delay product 23500 bytes"),
            "{v:?}"
        );
    }

    #[test]
    fn fq_under_a_multiqueue_root_paces_and_fq_codel_does_not() {
        assert!(paces_flows("fq"));
        assert!(paces_flows("mq (fq on 4 queues)"));
        assert!(!paces_flows("fq_codel"));
        assert!(!paces_flows("mq (fq_codel on 2 queues)"));
        assert!(!paces_flows("noqueue"));
        let bbr_on = |qdisc: &str| {
            said(&FlowFacts {
                goodput_bits_per_second: 1e9,
                loopback: true,
                congestion: Some("bbr".into()),
                qdisc: Some(qdisc.into()),
                ..FlowFacts::default()
            })
            .iter()
            .any(|s| s.contains("bbr without the fq qdisc"))
        };
        assert!(!bbr_on("mq (fq on 2 queues)"));
        assert!(bbr_on("noqueue"));
    }

    #[test]
    fn cpu_and_bbr_without_fq_are_named() {
        let v = said(&FlowFacts {
            goodput_bits_per_second: 30e9,
            loopback: true,
            sender_thread_cpu_percent: Some(99.0),
            congestion: Some("bbr".into()),
            qdisc: Some("fq_codel".into()),
            ..FlowFacts::default()
        });
        assert!(
            v.iter().any(|s| s.contains("sender's thread used 99%")),
            "{v:?}"
        );
        assert!(
            v.iter().any(|s| s.contains("bbr without the fq qdisc")),
            "{v:?}"
        );
        let quiet = said(&FlowFacts {
            goodput_bits_per_second: 30e9,
            loopback: true,
            busy_seconds: Some(1.0),
            rwnd_limited_seconds: Some(0.1),
            ..FlowFacts::default()
        });
        assert_eq!(quiet.len(), 1, "{quiet:?}");
    }

    #[test]
    fn each_conclusion_is_a_kind_with_its_figures() {
        let window = verdicts(&FlowFacts {
            goodput_bits_per_second: 5e6,
            ceiling: Some((9.4e6, "x".into())),
            rtt_seconds: Some(0.02),
            receive_buffer_bytes: Some(16_384),
            busy_seconds: Some(10.0),
            rwnd_limited_seconds: Some(9.0),
            ..FlowFacts::default()
        });
        assert!(
            matches!(window[0], Bound::BelowCeiling { .. }),
            "{window:?}"
        );
        match &window[1] {
            Bound::ReceiverWindowLimited {
                share,
                receive_buffer_bytes,
                bandwidth_delay_product_bytes,
            } => {
                assert!((share - 0.9).abs() < 1e-9);
                assert_eq!(*receive_buffer_bytes, Some(16_384));
                assert!((bandwidth_delay_product_bytes.unwrap() - 23_500.0).abs() < 1e-6);
            }
            other => panic!("{other:?}"),
        }
        let json = serde_json::to_value(&window[1]).unwrap();
        assert_eq!(json["kind"], "receiver_window_limited");
        assert_eq!(json["receive_buffer_bytes"], 16_384);

        let bound = verdicts(&FlowFacts {
            goodput_bits_per_second: 9.406e6,
            ceiling: Some((9.415e6, "10 Mbit/s Ethernet".into())),
            ..FlowFacts::default()
        });
        assert_eq!(
            bound,
            [Bound::LinkBound {
                bound: "the link".into(),
                share: 9.406e6 / 9.415e6,
                ceiling_bits_per_second: 9.415e6,
                ceiling_source: "10 Mbit/s Ethernet".into(),
            }]
        );
        let json = serde_json::to_value(&bound[0]).unwrap();
        assert_eq!(json["kind"], "link_bound");
        assert_eq!(json["ceiling_bits_per_second"], 9.415e6);

        let capped = verdicts(&FlowFacts {
            goodput_bits_per_second: 9.9e6,
            cap_bits_per_second: Some(10e6),
            cap_streams: 2,
            ..FlowFacts::default()
        });
        assert!(
            matches!(
                capped[..],
                [Bound::CappedByRate {
                    streams: 2,
                    ceiling_bits_per_second: None,
                    ..
                }]
            ),
            "{capped:?}"
        );
        let kinds = |f: &FlowFacts| {
            verdicts(f)
                .iter()
                .map(|b| serde_json::to_value(b).unwrap()["kind"].clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            kinds(&FlowFacts {
                goodput_bits_per_second: 30e9,
                loopback: true,
                sender_thread_cpu_percent: Some(99.0),
                congestion: Some("bbr".into()),
                qdisc: Some("fq_codel".into()),
                busy_seconds: Some(1.0),
                sndbuf_limited_seconds: Some(0.5),
                ..FlowFacts::default()
            }),
            [
                "loopback_ceiling",
                "send_buffer_limited",
                "cpu_limited",
                "bbr_without_fq"
            ]
        );
        assert_eq!(
            kinds(&FlowFacts {
                goodput_bits_per_second: 4e6,
                target_bits_per_second: Some(10e6),
                ..FlowFacts::default()
            }),
            ["short_of_target", "link_rate_unknown"]
        );
        assert_eq!(
            kinds(&FlowFacts {
                goodput_bits_per_second: 9.99e6,
                target_bits_per_second: Some(10e6),
                ..FlowFacts::default()
            }),
            ["paced_by_target"]
        );
        assert_eq!(
            kinds(&FlowFacts {
                goodput_bits_per_second: 5e6,
                cap_bits_per_second: Some(10e6),
                loopback: true,
                ..FlowFacts::default()
            }),
            ["short_of_cap", "loopback_ceiling"]
        );
        assert_eq!(kinds(&FlowFacts::default()), ["nothing_arrived"]);
    }
}
