//! Where the stations sit on the cable, and how long a signal takes between each pair.
//!
//! Collision resolution time is a function of round-trip propagation (seed 000 §3.6), so the
//! layout matters: Boggs, Mogul and Kent put their hosts in four equal clusters behind DELNI
//! multiport repeaters 1000 ft apart on 3000 ft of coax (§3.5), in two clusters at the ends of
//! the same cable (§3.7), and all on a 20-ft net (§3.6). Gonsalves and Tobagi (§2.4.7) showed
//! that the layout also decides who is favoured. A signal leaves a station, travels through its
//! attachment (transceiver cable, multiport repeater) to the coax, along the coax at a fraction
//! of the speed of light (0.77 for thick coax, IEEE 802.3 clause 8.4.1.3), and out through the
//! receiver's attachment. The delay from station i to j is therefore
//! `attach_i + |x_i - x_j| / v + attach_j`.

use serde::Serialize;

use crate::time::{PS_PER_SECOND, SimSpan};

/// Metres in a foot.
pub const METRES_PER_FOOT: f64 = 0.3048;
/// The speed of light in vacuum, metres per second.
pub const SPEED_OF_LIGHT: f64 = 299_792_458.0;

/// How the stations are placed along the cable.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Placement {
    /// Spread evenly from one end to the other (one station sits in the middle).
    Even,
    /// `clusters` equal groups at evenly spaced points from end to end (the seed's 4 clusters
    /// at 0, 1000, 2000 and 3000 ft; 2 clusters at the two ends); stations are dealt to the
    /// clusters in turn so that they stay balanced as the count grows.
    Clusters {
        /// Number of clusters (at least 1).
        clusters: usize,
    },
    /// Explicit positions in metres from one end; stations beyond the list reuse it cyclically.
    Positions {
        /// Positions, metres.
        metres: Vec<f64>,
    },
}

/// A cable and the way stations attach to it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cable {
    /// Length of the cable, metres.
    pub length_m: f64,
    /// Signal velocity as a fraction of the speed of light.
    pub velocity_factor: f64,
    /// One-way delay of each station's attachment (transceiver, drop cable, repeater).
    pub attach_delay_ns: f64,
    /// One-way delay between a cluster's multiport repeater and the coax (the repeater's
    /// transceiver cable and its transceiver), crossed only by signals between stations at
    /// different points of the coax: stations behind the same repeater hear each other
    /// through the repeater alone.
    pub tap_delay_ns: f64,
    /// Station layout.
    pub placement: Placement,
}

impl Cable {
    /// The seed's long net: 3000 ft of thick coax with hosts in four clusters (§3.5).
    pub fn seed_long_net() -> Cable {
        Cable {
            length_m: 3000.0 * METRES_PER_FOOT,
            velocity_factor: 0.77,
            attach_delay_ns: 0.0,
            tap_delay_ns: 0.0,
            placement: Placement::Clusters { clusters: 4 },
        }
    }

    /// The seed's long net with half of the hosts at either end (§3.7, figure 3-12).
    pub fn seed_two_clusters() -> Cable {
        Cable {
            placement: Placement::Clusters { clusters: 2 },
            ..Cable::seed_long_net()
        }
    }

    /// The seed's 20-ft net (§3.6).
    pub fn seed_short_net() -> Cable {
        Cable {
            length_m: 20.0 * METRES_PER_FOOT,
            placement: Placement::Even,
            ..Cable::seed_long_net()
        }
    }

    /// Positions of `n` stations, metres from one end.
    pub fn positions(&self, n: usize) -> Vec<f64> {
        match &self.placement {
            Placement::Even => (0..n)
                .map(|i| {
                    if n == 1 {
                        self.length_m / 2.0
                    } else {
                        self.length_m * i as f64 / (n - 1) as f64
                    }
                })
                .collect(),
            Placement::Clusters { clusters } => {
                let c = (*clusters).max(1);
                (0..n)
                    .map(|i| {
                        let k = i % c;
                        if c == 1 {
                            0.0
                        } else {
                            self.length_m * k as f64 / (c - 1) as f64
                        }
                    })
                    .collect()
            }
            Placement::Positions { metres } => (0..n)
                .map(|i| {
                    if metres.is_empty() {
                        0.0
                    } else {
                        metres[i % metres.len()]
                    }
                })
                .collect(),
        }
    }

    /// One-way propagation from end to end, attachments included.
    pub fn end_to_end(&self) -> SimSpan {
        SimSpan::from_seconds(
            self.length_m / (self.velocity_factor * SPEED_OF_LIGHT)
                + 2.0 * (self.attach_delay_ns + self.tap_delay_ns) * 1e-9,
        )
    }
}

/// The delay between every pair of stations, computed once per run.
///
/// For each source the other stations are also grouped by equal delay (a cluster behind one
/// repeater hears a signal at the same instant), so that a signal edge costs one event per
/// distinct delay rather than one per station.
#[derive(Debug, Clone)]
pub struct Propagation {
    n: usize,
    delay_ps: Vec<u64>,
    /// Per source: `(delay, first, end)` into `members`, in order of delay.
    groups: Vec<Vec<(SimSpan, u32, u32)>>,
    members: Vec<u16>,
}

impl Propagation {
    /// The delays for `n` stations on `cable`.
    pub fn new(cable: &Cable, n: usize) -> Propagation {
        let x = cable.positions(n);
        let v = cable.velocity_factor * SPEED_OF_LIGHT;
        let attach = cable.attach_delay_ns * 1e-9;
        let tap = cable.tap_delay_ns * 1e-9;
        let mut delay_ps = vec![0; n * n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let apart = x[i] != x[j];
                    let seconds = (x[i] - x[j]).abs() / v
                        + 2.0 * attach
                        + if apart { 2.0 * tap } else { 0.0 };
                    delay_ps[i * n + j] = (seconds * PS_PER_SECOND as f64).round() as u64;
                }
            }
        }
        let mut groups = Vec::with_capacity(n);
        let mut members = Vec::with_capacity(n * n.saturating_sub(1));
        for from in 0..n {
            let mut others: Vec<usize> = (0..n).filter(|&to| to != from).collect();
            others.sort_by_key(|&to| (delay_ps[from * n + to], to));
            let mut list: Vec<(SimSpan, u32, u32)> = Vec::new();
            for to in others {
                let d = SimSpan::from_ps(delay_ps[from * n + to]);
                let at = members.len() as u32;
                match list.last_mut() {
                    Some(last) if last.0 == d => last.2 = at + 1,
                    _ => list.push((d, at, at + 1)),
                }
                members.push(to as u16);
            }
            groups.push(list);
        }
        Propagation {
            n,
            delay_ps,
            groups,
            members,
        }
    }

    /// The groups of stations that hear `from` at the same delay: `(delay, index)` pairs
    /// for [`Propagation::group`].
    pub fn groups_of(&self, from: usize) -> impl Iterator<Item = (SimSpan, usize)> + '_ {
        self.groups[from].iter().enumerate().map(|(i, g)| (g.0, i))
    }

    /// The stations of group `index` of `from`.
    pub fn group(&self, from: usize, index: usize) -> &[u16] {
        let (_, a, b) = self.groups[from][index];
        &self.members[a as usize..b as usize]
    }

    /// Number of stations.
    pub fn stations(&self) -> usize {
        self.n
    }

    /// One-way delay from `from` to `to` (zero to itself).
    pub fn delay(&self, from: usize, to: usize) -> SimSpan {
        SimSpan::from_ps(self.delay_ps[from * self.n + to])
    }

    /// The longest one-way delay between any two stations.
    pub fn max_delay(&self) -> SimSpan {
        SimSpan::from_ps(self.delay_ps.iter().copied().max().unwrap_or(0))
    }

    /// The mean one-way delay over distinct pairs.
    pub fn mean_delay(&self) -> SimSpan {
        let pairs = (self.n * self.n).saturating_sub(self.n);
        if pairs == 0 {
            return SimSpan::ZERO;
        }
        SimSpan::from_ps(self.delay_ps.iter().sum::<u64>() / pairs as u64)
    }
}
