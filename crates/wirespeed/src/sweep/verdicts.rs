//! What a sweep concludes, typed: one variant per conclusion with the figures it rests on
//! (rates in bytes per second, sizes in bytes), its sentence from `Display` in the report's
//! rate unit, so a script reads `{"kind": "diagonal_knee", "buffer_bytes": ...}` and a person
//! the same sentence as before.

use std::fmt;

use serde::Serialize;
use wirespeed_model::RateFormat;
use wirespeed_model::sweep::{Anomaly, PlateauLimit, RoundTripBasis};
use wirespeed_model::units::significant;

use super::SweepReport;
use super::text::{compact, round_trip};

/// How the report writes a rate: its `-f` format, and for the adaptive format the one unit
/// the whole report uses (chosen from its fastest run).
#[derive(Debug, Clone, Copy, PartialEq)]
#[doc(hidden)]
pub struct RateScale {
    pub(crate) format: RateFormat,
    pub(crate) adaptive: (&'static str, f64),
}

impl RateScale {
    pub(crate) fn rate(&self, bytes_per_second: f64) -> String {
        match self.format {
            RateFormat::Adaptive => {
                let (_, size) = self.adaptive;
                let v = bytes_per_second / size;
                if size == 1024.0 {
                    format!("{v:.0}")
                } else {
                    significant(v, 4)
                }
            }
            f => significant(f.value(bytes_per_second * 8.0), 4),
        }
    }

    pub(crate) fn unit(&self) -> &'static str {
        match self.format {
            RateFormat::Adaptive => self.adaptive.0,
            f => f.unit(1.0),
        }
    }
}

/// One of a sweep's verdicts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[doc(hidden)]
pub enum SweepVerdict {
    /// The best rate the matrix reached (the diagonal's, or the best cell's).
    Plateau {
        plateau_bytes_per_second: f64,
        ceiling_bytes_per_second: Option<f64>,
        #[serde(skip)]
        scale: RateScale,
    },
    /// The smallest buffer per end at which the diagonal reaches 90% of its plateau.
    DiagonalKnee { buffer_bytes: u64 },
    /// No buffer size is on both axes.
    NoDiagonal,
    /// The ceiling window / RTT is capped by, and where it comes from.
    PathCeiling {
        ceiling_bytes_per_second: f64,
        ceiling_source: String,
        #[serde(skip)]
        scale: RateScale,
    },
    /// The window the sender saw per byte of receive buffer asked (median over the cells).
    WindowPerBuffer {
        window_per_buffer_ratio: f64,
        mss_bytes: u64,
    },
    /// The path's bandwidth-delay product, and the knee's size against it.
    BandwidthDelayProduct {
        bandwidth_delay_product_bytes: f64,
        rate_bytes_per_second: f64,
        rate_is_ceiling: bool,
        round_trip_seconds: f64,
        basis: RoundTripBasis,
        lowest_seen_round_trip_seconds: Option<f64>,
        knee_buffer_bytes: Option<u64>,
        #[serde(skip)]
        scale: RateScale,
    },
    /// The plateau is within 10% of the envelope ceiling.
    LinkBound,
    /// An end used 90% or more of a core at the best buffers.
    CpuLimited,
    /// Below 90% of the ceiling with no CPU saturated.
    BelowCeiling,
    /// No ceiling to compare with, and no CPU saturated.
    LinkRateUnknown,
    /// A cell well below what its neighbours suggest.
    Notch(Cell),
    /// A cell that collapsed against its neighbours.
    Collapse(Cell),
}

/// A cell of the matrix that its neighbours contradict.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[doc(hidden)]
pub struct Cell {
    /// Its send buffer as the axis gives it (`16p (23.2KB)`).
    pub(crate) send_buffer: String,
    /// Its receive buffer as the axis gives it.
    pub(crate) receive_buffer: String,
    pub(crate) bytes_per_second: f64,
    pub(crate) expected_bytes_per_second: f64,
    /// Why, in the kernel's words.
    pub(crate) explanation: String,
    #[serde(skip)]
    pub(crate) scale: RateScale,
}

impl Cell {
    fn of(report: &SweepReport, x: &Anomaly) -> Cell {
        let p = &report.plan;
        Cell {
            send_buffer: SweepReport::label(&p.snd, x.snd_index, p.mss_bytes),
            receive_buffer: SweepReport::label(&p.rcv, x.rcv_index, p.mss_bytes),
            bytes_per_second: x.bytes_per_second,
            expected_bytes_per_second: x.expected_bytes_per_second,
            explanation: x.explanation.clone(),
            scale: report.scale(),
        }
    }

    fn describe(&self, f: &mut fmt::Formatter<'_>, what: &str) -> fmt::Result {
        write!(
            f,
            "{what} at send {} x receive {}: {} {} where its neighbours suggest {}; {}",
            self.send_buffer,
            self.receive_buffer,
            self.scale.rate(self.bytes_per_second),
            self.scale.unit(),
            self.scale.rate(self.expected_bytes_per_second),
            self.explanation
        )
    }
}

/// What a knee at `ratio` times the bandwidth-delay product says about the path.
fn knee_reason(ratio: f64) -> &'static str {
    if ratio < 0.5 {
        ": below one BDP, so the rate is not window-bound there (the sender or the receiver's CPU, or the link, holds it)"
    } else if ratio <= 2.5 {
        ": a window of about one BDP fills the path, as TCP's window / RTT bound predicts"
    } else {
        ": well above one BDP: the buffer holds less payload than its size (per-packet overhead), or a queue on the path lengthens the RTT under load"
    }
}

/// The plateau's sentence: the rate, and its share of the ceiling where there is one.
fn plateau(
    f: &mut fmt::Formatter<'_>,
    plateau_bytes_per_second: f64,
    ceiling_bytes_per_second: Option<f64>,
    scale: &RateScale,
) -> fmt::Result {
    write!(
        f,
        "plateau {} {}",
        scale.rate(plateau_bytes_per_second),
        scale.unit()
    )?;
    if let Some(c) = ceiling_bytes_per_second {
        write!(
            f,
            " ({:.0}% of the {} {} ceiling)",
            100.0 * plateau_bytes_per_second / c,
            scale.rate(c),
            scale.unit()
        )?;
    }
    Ok(())
}

/// The round trip a bandwidth-delay product was taken at, and where it comes from.
fn round_trip_words(
    basis: &RoundTripBasis,
    round_trip_seconds: f64,
    lowest_seen_round_trip_seconds: Option<f64>,
) -> String {
    let lowest = lowest_seen_round_trip_seconds.map_or(String::new(), round_trip);
    match basis {
        RoundTripBasis::Path => format!(
            "a full segment's round trip {}, computed from the configured path (the lowest the \
             kernel saw, a small packet's: {lowest})",
            round_trip(round_trip_seconds)
        ),
        RoundTripBasis::LowestSeenPlusSegment { segment_seconds } => format!(
            "a full segment's round trip {}: the lowest the kernel saw, {lowest}, plus {} to \
             serialize a full segment at the link rate",
            round_trip(round_trip_seconds),
            round_trip(*segment_seconds)
        ),
        RoundTripBasis::LowestSeen => format!(
            "the lowest round trip the kernel saw, {}, a small packet's: short of a full \
             segment's by its serialization (give --link-rate)",
            round_trip(round_trip_seconds)
        ),
    }
}

impl fmt::Display for SweepVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SweepVerdict::Plateau {
                plateau_bytes_per_second,
                ceiling_bytes_per_second,
                scale,
            } => plateau(
                f,
                *plateau_bytes_per_second,
                *ceiling_bytes_per_second,
                scale,
            ),
            SweepVerdict::DiagonalKnee { buffer_bytes } => write!(
                f,
                "the diagonal reaches 90% of its plateau at {} per end",
                compact(*buffer_bytes)
            ),
            SweepVerdict::NoDiagonal => write!(
                f,
                "no buffer size is on both axes, so there is no diagonal: the plateau is the best cell of the matrix (give --rcv the sizes of --snd for the seed's table)"
            ),
            SweepVerdict::PathCeiling {
                ceiling_bytes_per_second,
                ceiling_source,
                scale,
            } => write!(
                f,
                "the path's ceiling is {} {}: {ceiling_source}; window / RTT is capped by it",
                scale.rate(*ceiling_bytes_per_second),
                scale.unit()
            ),
            SweepVerdict::WindowPerBuffer {
                window_per_buffer_ratio,
                mss_bytes,
            } => write!(
                f,
                "the axis is the buffer asked of SO_SNDBUF and SO_RCVBUF (1 packet = {mss_bytes} \
                 bytes); the window the sender saw was {window_per_buffer_ratio:.2} x the receive \
                 buffer asked (median over the cells), in segments in the table's window column"
            ),
            SweepVerdict::BandwidthDelayProduct {
                bandwidth_delay_product_bytes: bdp,
                rate_bytes_per_second,
                rate_is_ceiling,
                round_trip_seconds,
                basis,
                lowest_seen_round_trip_seconds,
                knee_buffer_bytes,
                scale,
            } => {
                let knee = knee_buffer_bytes.map_or(String::new(), |b| {
                    let ratio = b as f64 / bdp.max(1.0);
                    format!(
                        "; the knee at {} per end is {ratio:.1}x it{}",
                        compact(b),
                        knee_reason(ratio)
                    )
                });
                let rtt_words =
                    round_trip_words(basis, *round_trip_seconds, *lowest_seen_round_trip_seconds);
                write!(
                    f,
                    "the path's bandwidth-delay product is {} ({} {} {} x {rtt_words}): with \
                     less window than that the window, not the path, sets the rate{knee}",
                    compact(bdp.round() as u64),
                    if *rate_is_ceiling {
                        "ceiling"
                    } else {
                        "plateau"
                    },
                    scale.rate(*rate_bytes_per_second),
                    scale.unit(),
                )
            }
            SweepVerdict::LinkBound => write!(
                f,
                "the plateau is limited by the link: it is within 10% of the envelope ceiling"
            ),
            SweepVerdict::CpuLimited => write!(
                f,
                "the plateau is limited by CPU: an end used 90% or more of a core at the best buffers"
            ),
            SweepVerdict::BelowCeiling => write!(
                f,
                "the plateau is below 90% of the ceiling with no CPU saturated: look at the path, the NICs or the peer"
            ),
            SweepVerdict::LinkRateUnknown => write!(
                f,
                "no link rate given (--link-rate) and not in a wirespeed lab, so no ceiling to compare with; no CPU saturated"
            ),
            SweepVerdict::Notch(cell) => cell.describe(f, "notch"),
            SweepVerdict::Collapse(cell) => cell.describe(f, "collapse"),
        }
    }
}

/// The sweep's verdicts, most telling first: the plateau, the knee, the ceiling, the axis, the
/// bandwidth-delay product, what limits the plateau, then each cell its neighbours contradict.
#[doc(hidden)]
pub fn verdicts(report: &SweepReport) -> Vec<SweepVerdict> {
    let a = &report.analysis;
    let p = &report.plan;
    let scale = report.scale();
    let mut out = Vec::new();
    if let Some(plateau) = a.plateau_bytes_per_second {
        out.push(SweepVerdict::Plateau {
            plateau_bytes_per_second: plateau,
            ceiling_bytes_per_second: report.ceiling_bytes_per_second,
            scale,
        });
    }
    if let Some(b) = a.reaches_90_percent_at {
        out.push(SweepVerdict::DiagonalKnee {
            buffer_bytes: b.bytes(p.mss_bytes),
        });
    } else if a.diagonal.is_empty() && a.plateau_bytes_per_second.is_some() {
        out.push(SweepVerdict::NoDiagonal);
    }
    if let Some(source) = &report.ceiling_source
        && let Some(c) = report.ceiling_bytes_per_second
    {
        out.push(SweepVerdict::PathCeiling {
            ceiling_bytes_per_second: c,
            ceiling_source: source.clone(),
            scale,
        });
    }
    if let Some(ratio) = a.window_per_buffer_byte {
        out.push(SweepVerdict::WindowPerBuffer {
            window_per_buffer_ratio: ratio,
            mss_bytes: p.mss_bytes,
        });
    }
    if let Some(bdp) = &a.bdp {
        out.push(SweepVerdict::BandwidthDelayProduct {
            bandwidth_delay_product_bytes: bdp.bytes,
            rate_bytes_per_second: bdp.rate_bytes_per_second,
            rate_is_ceiling: bdp.rate_is_ceiling,
            round_trip_seconds: bdp.rtt_seconds,
            basis: bdp.basis,
            lowest_seen_round_trip_seconds: a.round_trip.and_then(|r| r.lowest_seen_seconds),
            knee_buffer_bytes: a.reaches_90_percent_at.map(|b| b.bytes(p.mss_bytes)),
            scale,
        });
    }
    out.push(match a.limit {
        PlateauLimit::Link => SweepVerdict::LinkBound,
        PlateauLimit::Cpu => SweepVerdict::CpuLimited,
        PlateauLimit::Other => SweepVerdict::BelowCeiling,
        PlateauLimit::Unknown => SweepVerdict::LinkRateUnknown,
    });
    out.extend(
        a.notches
            .iter()
            .map(|x| SweepVerdict::Notch(Cell::of(report, x))),
    );
    out.extend(
        a.pathological
            .iter()
            .map(|x| SweepVerdict::Collapse(Cell::of(report, x))),
    );
    out
}
