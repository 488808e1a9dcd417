//! What each host sends: packet lengths and when packets arrive.
//!
//! Lengths follow seed 000: fixed lengths (§3.5, nine of them from 64 to 4000 bytes), and
//! bimodal mixes of minimal and maximal packets "in varying ratios, with the packet size chosen
//! randomly while preserving the overall ratio" (§3.7): "6/2" is six 64-byte packets for every
//! two 1536-byte ones. The ratio is preserved exactly by dealing each host's lengths from a
//! shuffled deck of 6 + 2 cards, reshuffled when it runs out. An empirical mix draws each
//! length with its weight.
//!
//! A packet length here is the seed's: the bytes the host hands the interface (header and data);
//! on the medium it is preceded by 8 bytes of preamble and followed by the 4-byte CRC, and the
//! gap of 12 byte times follows; that is the 24 byte times the seed charges each packet.
//!
//! Arrivals are either saturating (a packet is always ready, the seed's generators) or an
//! offered load G (seed 000 §2.3: the fraction of the channel the hosts would use with the
//! channel to themselves, summed over hosts), Poisson or in bursts of geometrically distributed
//! size with Poisson burst starts (real traffic is bursty: §2.1, Shoch and Hupp).

use std::fmt;

use rand_core::Rng;
use serde::Serialize;

use crate::SimError;

/// Bytes of preamble and CRC around each packet on the medium.
pub const CARRIER_OVERHEAD_BYTES: u64 = 12;
/// Byte times the seed charges each packet (gap, preamble, CRC).
pub const CHARGED_OVERHEAD_BYTES: u64 = wirespeed_model::framing::BOGGS_OVERHEAD_BYTES;
/// The seed's nine fixed lengths (§3.5), three of them beyond the standard's maximum.
pub const SEED_LENGTHS: [u64; 9] = [64, 128, 256, 512, 1024, 1536, 2048, 3072, 4000];
/// The shortest packet a collision can still be detected in (seed 000 §2.1).
pub const MIN_LENGTH: u64 = 64;
/// The longest the seed tried.
pub const MAX_LENGTH: u64 = 4000;
/// The longest the standard allows (seed 000 §3.7 calls 1536 maximal).
pub const STANDARD_MAX_LENGTH: u64 = 1536;

/// The distribution of packet lengths.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum LengthMix {
    /// Every packet the same length.
    Fixed {
        /// Bytes.
        bytes: u64,
    },
    /// `short_count` packets of `short` bytes for every `long_count` of `long` bytes, the
    /// ratio preserved exactly in every run of `short_count + long_count` packets.
    Ratio {
        /// Short length, bytes.
        short: u64,
        /// Long length, bytes.
        long: u64,
        /// Short packets per deck.
        short_count: u32,
        /// Long packets per deck.
        long_count: u32,
    },
    /// Lengths drawn independently with these weights.
    Weighted {
        /// `(bytes, weight)` pairs.
        lengths: Vec<(u64, f64)>,
    },
}

impl LengthMix {
    /// The seed's bimodal mix `short/long` of 64- and 1536-byte packets ("6/2").
    pub fn seed_ratio(short_count: u32, long_count: u32) -> LengthMix {
        LengthMix::Ratio {
            short: MIN_LENGTH,
            long: STANDARD_MAX_LENGTH,
            short_count,
            long_count,
        }
    }

    /// Checks the lengths and weights.
    pub fn validate(&self, allow_oversize: bool) -> Result<(), SimError> {
        let max = if allow_oversize {
            MAX_LENGTH.max(65_535)
        } else {
            STANDARD_MAX_LENGTH
        };
        let check = |bytes: u64| {
            if bytes < MIN_LENGTH || bytes > max {
                Err(SimError::Length {
                    bytes,
                    min: MIN_LENGTH,
                    max,
                })
            } else {
                Ok(())
            }
        };
        match self {
            LengthMix::Fixed { bytes } => check(*bytes),
            LengthMix::Ratio {
                short,
                long,
                short_count,
                long_count,
            } => {
                check(*short)?;
                check(*long)?;
                if short_count + long_count == 0 {
                    return Err(SimError::Mix("a ratio needs at least one packet".into()));
                }
                Ok(())
            }
            LengthMix::Weighted { lengths } => {
                if lengths.is_empty() {
                    return Err(SimError::Mix("an empirical mix needs a length".into()));
                }
                for &(bytes, weight) in lengths {
                    check(bytes)?;
                    if !(weight.is_finite() && weight >= 0.0) {
                        return Err(SimError::Mix(format!("weight {weight} of {bytes} bytes")));
                    }
                }
                if lengths.iter().map(|l| l.1).sum::<f64>() <= 0.0 {
                    return Err(SimError::Mix("the weights add up to zero".into()));
                }
                Ok(())
            }
        }
    }

    /// The mean length, bytes.
    pub fn mean_bytes(&self) -> f64 {
        match self {
            LengthMix::Fixed { bytes } => *bytes as f64,
            LengthMix::Ratio {
                short,
                long,
                short_count,
                long_count,
            } => {
                let n = f64::from(short_count + long_count);
                (*short as f64 * f64::from(*short_count) + *long as f64 * f64::from(*long_count))
                    / n
            }
            LengthMix::Weighted { lengths } => {
                let w: f64 = lengths.iter().map(|l| l.1).sum();
                lengths.iter().map(|&(b, x)| b as f64 * x).sum::<f64>() / w
            }
        }
    }

    /// A short label for tables: `64`, `6/2`, `mix`.
    pub fn label(&self) -> String {
        self.to_string()
    }
}

impl fmt::Display for LengthMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LengthMix::Fixed { bytes } => write!(f, "{bytes}"),
            LengthMix::Ratio {
                short,
                long,
                short_count,
                long_count,
            } => {
                if (*short, *long) == (MIN_LENGTH, STANDARD_MAX_LENGTH) {
                    write!(f, "{short_count}/{long_count}")
                } else {
                    write!(f, "{short_count}x{short}/{long_count}x{long}")
                }
            }
            LengthMix::Weighted { lengths } => {
                let parts: Vec<String> = lengths.iter().map(|(b, w)| format!("{b}:{w}")).collect();
                write!(f, "{}", parts.join(","))
            }
        }
    }
}

/// One host's stream of lengths, drawn from its [`LengthMix`] (a ratio is dealt as a shuffled
/// deck, so every deck holds the ratio exactly).
#[derive(Debug, Clone)]
pub struct LengthSource {
    mix: LengthMix,
    deck: Vec<u64>,
    next: usize,
    cumulative: Vec<f64>,
}

impl LengthSource {
    /// The stream of `mix`'s lengths.
    pub fn new(mix: &LengthMix) -> LengthSource {
        let deck = match mix {
            LengthMix::Ratio {
                short,
                long,
                short_count,
                long_count,
            } => std::iter::repeat_n(*short, *short_count as usize)
                .chain(std::iter::repeat_n(*long, *long_count as usize))
                .collect(),
            _ => Vec::new(),
        };
        let cumulative = match mix {
            LengthMix::Weighted { lengths } => lengths
                .iter()
                .scan(0.0, |acc, l| {
                    *acc += l.1;
                    Some(*acc)
                })
                .collect(),
            _ => Vec::new(),
        };
        let next = deck.len();
        LengthSource {
            mix: mix.clone(),
            deck,
            next,
            cumulative,
        }
    }

    /// The next length, in bytes.
    pub fn next(&mut self, rng: &mut impl Rng) -> u64 {
        match &self.mix {
            LengthMix::Fixed { bytes } => *bytes,
            LengthMix::Ratio { .. } => {
                if self.next == self.deck.len() {
                    // Fisher-Yates.
                    for i in (1..self.deck.len()).rev() {
                        let j = below(rng, i as u64 + 1) as usize;
                        self.deck.swap(i, j);
                    }
                    self.next = 0;
                }
                self.next += 1;
                self.deck[self.next - 1]
            }
            LengthMix::Weighted { lengths } => {
                let total = *self.cumulative.last().unwrap_or(&1.0);
                let u = unit(rng) * total;
                let i = self.cumulative.partition_point(|&c| c <= u);
                lengths[i.min(lengths.len() - 1)].0
            }
        }
    }
}

/// How packets arrive at a host.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Arrivals {
    /// A packet is always ready (the seed's generators).
    Saturated,
    /// Poisson arrivals giving a total offered load `load` (G, fraction of the channel).
    Poisson {
        /// G, summed over hosts.
        load: f64,
    },
    /// Bursts of geometrically distributed size (mean `mean_burst` packets) starting as a
    /// Poisson process, giving a total offered load `load`.
    Bursty {
        /// G, summed over hosts.
        load: f64,
        /// Mean packets per burst.
        mean_burst: f64,
    },
}

impl Arrivals {
    /// Checks the load and burst size.
    pub fn validate(&self) -> Result<(), SimError> {
        match *self {
            Arrivals::Saturated => Ok(()),
            Arrivals::Poisson { load } | Arrivals::Bursty { load, .. }
                if !(load.is_finite() && load > 0.0) =>
            {
                Err(SimError::Load(load))
            }
            Arrivals::Bursty { mean_burst, .. } if mean_burst.is_nan() || mean_burst < 1.0 => {
                Err(SimError::Burst(mean_burst))
            }
            _ => Ok(()),
        }
    }
}

/// A uniform random integer in `[0, n)` (Lemire's multiply-shift with rejection: unbiased).
pub fn below(rng: &mut impl Rng, n: u64) -> u64 {
    debug_assert!(n > 0);
    loop {
        let x = rng.next_u64();
        let m = u128::from(x) * u128::from(n);
        let low = m as u64;
        if low >= n || low >= n.wrapping_neg() % n {
            return (m >> 64) as u64;
        }
    }
}

/// A uniform random float in `[0, 1)`.
pub(crate) fn unit(rng: &mut impl Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// An exponential variate with mean `mean`.
pub(crate) fn exponential(rng: &mut impl Rng, mean: f64) -> f64 {
    -mean * (1.0 - unit(rng)).ln()
}
