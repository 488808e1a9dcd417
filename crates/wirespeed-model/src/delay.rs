//! Bellovin's best-case delay algebra (seed 001): every component of a path costs a fixed time
//! plus a time per byte, costs add along the path, and a node's own cost is what remains when
//! the path to it and the wire are subtracted from the path through it.
//!
//! * A link costs `8 / rate` per byte to serialize (§2: ".0008 x psize" on 10 Mbit/s Ethernet,
//!   ".14285" ms per byte on a 56 kbit/s DS0) and its cable distance divided by the signal
//!   velocity, by default 0.667 c (§2), as fixed cost.
//! * A multiplexer adds a fixed delay (§3: "about .5 milliseconds").
//! * `transit = through - (to + wire)` (§2, `ciscoping = keeper - (roc + ether)`; §4).
//!
//! Costs are one-way, in milliseconds, as in the seed's tables. A [`ModelFile`] holds a component
//! table (the seed's Table 1) and paths made of components, links, multiplexers and cables; its
//! [`Path::predict`] is the seed's Table 2, and [`compare`] sets a probe's per-hop fits against it
//! and flags the two anomalies of §4 and §5.

use std::collections::BTreeMap;
use std::ops::{Add, Mul, Sub};

use serde::{Deserialize, Serialize};

use crate::units::{BitRate, format_seconds};

/// The speed of light in vacuum, m/s.
pub const SPEED_OF_LIGHT_M_PER_S: f64 = 299_792_458.0;

/// The signal velocity the seed assumes for cable, as a fraction of c (§2).
pub const DEFAULT_VELOCITY_FACTOR: f64 = 0.667;

/// A one-way delay that is a fixed time plus a time per byte, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Cost {
    /// Fixed part, ms.
    pub fixed_ms: f64,
    /// Per-byte part, ms per byte.
    pub per_byte_ms: f64,
}

impl Cost {
    /// A cost of `fixed_ms + per_byte_ms x size`.
    pub const fn new(fixed_ms: f64, per_byte_ms: f64) -> Cost {
        Cost {
            fixed_ms,
            per_byte_ms,
        }
    }

    /// The delay of a packet of `size` bytes, ms.
    pub fn at(&self, size: f64) -> f64 {
        self.fixed_ms + self.per_byte_ms * size
    }

    /// Serialization on a link of this rate: 8 / rate per byte, nothing fixed.
    pub fn serialization(rate: BitRate) -> Cost {
        Cost::new(0.0, rate.seconds_per_byte() * 1e3)
    }

    /// Propagation over `distance_m` of cable at `velocity_factor` x c: fixed, nothing per byte.
    pub fn propagation(distance_m: f64, velocity_factor: f64) -> Cost {
        Cost::new(
            distance_m / (velocity_factor * SPEED_OF_LIGHT_M_PER_S) * 1e3,
            0.0,
        )
    }

    /// A node's own cost: the path through it minus the path to it minus the wire between
    /// (seed §2 and §4).
    pub fn transit(through: Cost, to: Cost, wire: Cost) -> Cost {
        through - (to + wire)
    }

    /// The link rate this per-byte cost would be if it were all serialization (8 / per byte),
    /// bit/s; `None` when the per-byte cost is not positive.
    pub fn implied_bits_per_second(&self) -> Option<f64> {
        (self.per_byte_ms > 0.0).then(|| 8.0 / (self.per_byte_ms / 1e3))
    }
}

impl Add for Cost {
    type Output = Cost;
    fn add(self, o: Cost) -> Cost {
        Cost::new(self.fixed_ms + o.fixed_ms, self.per_byte_ms + o.per_byte_ms)
    }
}

impl Sub for Cost {
    type Output = Cost;
    fn sub(self, o: Cost) -> Cost {
        Cost::new(self.fixed_ms - o.fixed_ms, self.per_byte_ms - o.per_byte_ms)
    }
}

impl Mul<f64> for Cost {
    type Output = Cost;
    fn mul(self, k: f64) -> Cost {
        Cost::new(self.fixed_ms * k, self.per_byte_ms * k)
    }
}

impl std::iter::Sum for Cost {
    fn sum<I: Iterator<Item = Cost>>(iter: I) -> Cost {
        iter.fold(Cost::default(), Add::add)
    }
}

/// Why a model file or path is unusable. Every message names the path and element.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The TOML does not parse or does not match the layout.
    #[error("{0}")]
    Syntax(String),
    /// A path element names a component the table does not have.
    #[error("path '{path}', element {index}: no component '{tag}' in the table (known: {known})")]
    UnknownComponent {
        /// The path.
        path: String,
        /// 1-based element number.
        index: usize,
        /// The missing tag.
        tag: String,
        /// The table's tags.
        known: String,
    },
    /// An element has none or several of `component`, `link`, `mux`, `cable`, or a bad value.
    #[error("path '{path}', element {index}: {problem}")]
    BadElement {
        /// The path.
        path: String,
        /// 1-based element number.
        index: usize,
        /// What is wrong and what to write instead.
        problem: String,
    },
    /// A component's cost is negative, not a number, or beyond any path's (1 s fixed, 1 ms
    /// per byte: a 56 kbit/s line is 0.14 ms per byte).
    #[error(
        "component '{tag}': {field} = {value} is out of range: costs are 0 to {max} ms, for example {field} = {example}"
    )]
    BadCost {
        /// The component.
        tag: String,
        /// `fixed_ms` or `per_byte_ms`.
        field: &'static str,
        /// What the file says.
        value: f64,
        /// The largest accepted.
        max: f64,
        /// A value that reads right.
        example: &'static str,
    },
    /// The file has no path of that name.
    #[error("no path '{name}' in the model file (paths: {known})")]
    UnknownPath {
        /// The name asked for.
        name: String,
        /// The file's paths.
        known: String,
    },
}

/// One row of a component table (the seed's Table 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Component {
    /// Fixed cost, ms ("-" in the seed's table is 0).
    #[serde(default)]
    pub fixed_ms: f64,
    /// Cost per byte, ms.
    #[serde(default)]
    pub per_byte_ms: f64,
    /// What it is.
    #[serde(default)]
    pub description: String,
}

impl Component {
    /// Its cost.
    pub fn cost(&self) -> Cost {
        Cost::new(self.fixed_ms, self.per_byte_ms)
    }
}

/// A path element as written in TOML: exactly one of `component`, `link`, `mux`, `cable`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawElement {
    component: Option<String>,
    link: Option<String>,
    mux: Option<String>,
    cable: Option<String>,
    rate: Option<String>,
    distance_km: Option<f64>,
    fixed_ms: Option<f64>,
    count: Option<u32>,
    group: Option<String>,
    hop: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPath {
    #[serde(default)]
    description: String,
    velocity_factor: Option<f64>,
    elements: Vec<RawElement>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    description: String,
    components: BTreeMap<String, Component>,
    #[serde(default)]
    paths: BTreeMap<String, RawPath>,
}

/// What one path element is.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ElementKind {
    /// A row of the component table (a host, a router board).
    Component {
        /// Its tag.
        tag: String,
        /// Its cost.
        cost: Cost,
    },
    /// A link: serialization at its rate plus propagation over its cable.
    Link {
        /// Its name.
        name: String,
        /// Its rate, bit/s.
        rate_bits_per_second: u64,
        /// Its cable distance, km (0 when not given).
        distance_km: f64,
    },
    /// A multiplexer with a fixed delay.
    Mux {
        /// Its name.
        name: String,
        /// Its delay, ms.
        fixed_ms: f64,
    },
    /// Cable propagation alone.
    Cable {
        /// Its name.
        name: String,
        /// Its distance, km.
        distance_km: f64,
    },
}

/// One element of a path, `count` times.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Element {
    /// What it is.
    #[serde(flatten)]
    pub kind: ElementKind,
    /// How many in a row.
    pub count: u32,
    /// The row of the prediction table it is summed into (its own name when not given).
    pub group: String,
    /// The probe reaches this hop (TTL) right after this element, if marked.
    pub hop: Option<u32>,
    /// The cost of all `count` of them.
    pub cost: Cost,
}

/// A path: elements in order, from the sending host to the far end.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Path {
    /// Its name.
    pub name: String,
    /// What it is.
    pub description: String,
    /// Signal velocity in its cables, fraction of c.
    pub velocity_factor: f64,
    /// Its elements.
    pub elements: Vec<Element>,
}

/// A component table and the paths built from it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelFile {
    /// What the file describes.
    pub description: String,
    /// Tag to component.
    pub components: BTreeMap<String, Component>,
    /// The paths, by name.
    pub paths: Vec<Path>,
}

impl ModelFile {
    /// Reads a model from TOML text: `[components.TAG]` tables with `fixed_ms`, `per_byte_ms`,
    /// `description`, and `[paths.NAME]` tables with `elements = [...]`.
    pub fn from_toml(text: &str) -> Result<ModelFile, ModelError> {
        // toml's rendering is a multi-line excerpt with a caret; squashed into one line it is
        // unreadable, so the line, column and message are given instead.
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let at = e.span().map(|span| {
                let before = &text[..span.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!("line {line}, column {column}: ")
            });
            ModelError::Syntax(format!(
                "{}{}",
                at.unwrap_or_default(),
                e.message().trim().replace('\n', " ")
            ))
        })?;
        for (tag, c) in &raw.components {
            for (field, value, max, example) in [
                ("fixed_ms", c.fixed_ms, 1000.0, "0.525"),
                ("per_byte_ms", c.per_byte_ms, 1.0, "0.00004"),
            ] {
                if !(value.is_finite() && (0.0..=max).contains(&value)) {
                    return Err(ModelError::BadCost {
                        tag: tag.clone(),
                        field,
                        value,
                        max,
                        example,
                    });
                }
            }
        }
        let mut paths = Vec::new();
        for (name, rp) in &raw.paths {
            paths.push(build_path(name, rp, &raw.components)?);
        }
        Ok(ModelFile {
            description: raw.description,
            components: raw.components,
            paths,
        })
    }

    /// The path called `name`.
    pub fn path(&self, name: &str) -> Result<&Path, ModelError> {
        self.paths
            .iter()
            .find(|p| p.name == name)
            .ok_or_else(|| ModelError::UnknownPath {
                name: name.to_string(),
                known: self
                    .paths
                    .iter()
                    .map(|p| p.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }
}

fn build_path(
    name: &str,
    rp: &RawPath,
    table: &BTreeMap<String, Component>,
) -> Result<Path, ModelError> {
    let vf = rp.velocity_factor.unwrap_or(DEFAULT_VELOCITY_FACTOR);
    let bad = |index: usize, problem: String| ModelError::BadElement {
        path: name.to_string(),
        index,
        problem,
    };
    if !(vf > 0.0 && vf <= 1.0) {
        return Err(bad(
            0,
            format!("velocity_factor {vf} must be in (0, 1], e.g. 0.667"),
        ));
    }
    let mut elements = Vec::new();
    for (i, e) in rp.elements.iter().enumerate() {
        let index = i + 1;
        let kinds = [&e.component, &e.link, &e.mux, &e.cable]
            .iter()
            .filter(|k| k.is_some())
            .count();
        if kinds != 1 {
            return Err(bad(
                index,
                "give exactly one of component = \"TAG\", link = \"NAME\" (with rate), mux = \"NAME\" (with fixed_ms), cable = \"NAME\" (with distance_km)".into(),
            ));
        }
        let distance_km = e.distance_km.unwrap_or(0.0);
        if !(distance_km >= 0.0 && distance_km.is_finite()) {
            return Err(bad(
                index,
                format!("distance_km {distance_km} must be >= 0"),
            ));
        }
        let count = e.count.unwrap_or(1);
        let (kind, unit) = if let Some(tag) = &e.component {
            let c = table.get(tag).ok_or_else(|| ModelError::UnknownComponent {
                path: name.to_string(),
                index,
                tag: tag.clone(),
                known: table.keys().cloned().collect::<Vec<_>>().join(", "),
            })?;
            (
                ElementKind::Component {
                    tag: tag.clone(),
                    cost: c.cost(),
                },
                c.cost(),
            )
        } else if let Some(link) = &e.link {
            let rate: BitRate = e
                .rate
                .as_deref()
                .ok_or_else(|| {
                    bad(
                        index,
                        format!("link '{link}' needs rate, e.g. rate = \"56k\""),
                    )
                })?
                .parse()
                .map_err(|err| bad(index, format!("{err}")))?;
            if rate.bits_per_second() == 0 {
                return Err(bad(index, "rate must be above 0".into()));
            }
            (
                ElementKind::Link {
                    name: link.clone(),
                    rate_bits_per_second: rate.bits_per_second(),
                    distance_km,
                },
                Cost::serialization(rate) + Cost::propagation(distance_km * 1e3, vf),
            )
        } else if let Some(mux) = &e.mux {
            let fixed_ms = e.fixed_ms.ok_or_else(|| {
                bad(
                    index,
                    format!("mux '{mux}' needs fixed_ms, e.g. fixed_ms = 0.5"),
                )
            })?;
            (
                ElementKind::Mux {
                    name: mux.clone(),
                    fixed_ms,
                },
                Cost::new(fixed_ms, 0.0),
            )
        } else {
            let cable = e.cable.clone().unwrap_or_default();
            if e.distance_km.is_none() {
                return Err(bad(
                    index,
                    format!("cable '{cable}' needs distance_km, e.g. distance_km = 1400"),
                ));
            }
            (
                ElementKind::Cable {
                    name: cable,
                    distance_km,
                },
                Cost::propagation(distance_km * 1e3, vf),
            )
        };
        let own_name = match &kind {
            ElementKind::Component { tag, .. } => tag.clone(),
            ElementKind::Link { name, .. }
            | ElementKind::Mux { name, .. }
            | ElementKind::Cable { name, .. } => name.clone(),
        };
        elements.push(Element {
            kind,
            count,
            group: e.group.clone().unwrap_or(own_name),
            hop: e.hop,
            cost: unit * f64::from(count),
        });
    }
    Ok(Path {
        name: name.to_string(),
        description: rp.description.clone(),
        velocity_factor: vf,
        elements,
    })
}

/// One row of a prediction (the seed's Table 2 layout).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PredictionRow {
    /// The group's name.
    pub group: String,
    /// Its summed cost.
    #[serde(flatten)]
    pub cost: Cost,
    /// Its delay at each requested size, ms.
    pub at_sizes_ms: Vec<f64>,
}

/// A path's predicted one-way delay, group by group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Prediction {
    /// The sizes, bytes.
    pub sizes: Vec<u64>,
    /// One row per group, in path order.
    pub rows: Vec<PredictionRow>,
    /// The whole path.
    pub total: PredictionRow,
}

impl Path {
    /// The sum of every element.
    pub fn total(&self) -> Cost {
        self.elements.iter().map(|e| e.cost).sum()
    }

    /// The predicted one-way delay at `sizes`, grouped as the elements' `group` says.
    pub fn predict(&self, sizes: &[u64]) -> Prediction {
        let row = |group: String, cost: Cost| PredictionRow {
            at_sizes_ms: sizes.iter().map(|&s| cost.at(s as f64)).collect(),
            group,
            cost,
        };
        let mut groups: Vec<(String, Cost)> = Vec::new();
        for e in &self.elements {
            match groups.iter_mut().find(|(g, _)| *g == e.group) {
                Some((_, c)) => *c = *c + e.cost,
                None => groups.push((e.group.clone(), e.cost)),
            }
        }
        Prediction {
            sizes: sizes.to_vec(),
            rows: groups.into_iter().map(|(g, c)| row(g, c)).collect(),
            total: row("one-way total".into(), self.total()),
        }
    }

    /// The predicted one-way cost to each marked hop: (hop, cumulative cost, elements since the
    /// previous mark).
    pub fn hop_marks(&self) -> Vec<(u32, Cost, Vec<&Element>)> {
        let mut out = Vec::new();
        let mut sum = Cost::default();
        let mut since = Vec::new();
        for e in &self.elements {
            sum = sum + e.cost;
            since.push(e);
            if let Some(h) = e.hop {
                out.push((h, sum, std::mem::take(&mut since)));
            }
        }
        out
    }
}

/// A probe's one-way fit to one hop.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MeasuredHop {
    /// TTL of the hop (the destination is the last).
    pub hop: u32,
    /// One-way best-case cost to it.
    pub cost: Cost,
}

/// How far a measured segment may stray from its prediction before it is flagged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerance {
    /// Allowed relative error of the per-byte cost (0.25 = 25%).
    pub per_byte_relative: f64,
    /// Allowed absolute error of the per-byte cost, ms/byte (for components near zero).
    pub per_byte_ms: f64,
    /// Allowed absolute error of the fixed cost, ms.
    pub fixed_ms: f64,
}

impl Default for Tolerance {
    fn default() -> Tolerance {
        // The seed: "different trials can yield values differing by .1 milliseconds" (§6).
        Tolerance {
            per_byte_relative: 0.25,
            per_byte_ms: 0.0001,
            fixed_ms: 0.2,
        }
    }
}

/// One segment (the elements between two marked hops), measured against its prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SegmentComparison {
    /// The hop the segment ends at.
    pub hop: u32,
    /// The groups of the elements in it, each once, in path order.
    pub elements: Vec<String>,
    /// Predicted cost of the segment.
    pub expected: Cost,
    /// Measured: the fit to this hop minus the fit to the previous one.
    pub measured: Cost,
    /// Whether either coefficient left the tolerance.
    pub anomalous: bool,
    /// Possible explanations, most specific first (the seed's §4 and §5).
    pub hypotheses: Vec<String>,
}

/// Compares per-hop probe fits with a path's marked hops, segment by segment.
///
/// A segment whose per-byte cost exceeds its prediction by about one link's serialization is
/// offered the seed's §5 hypothesis (an active wiretapper re-transmits each packet, adding a
/// second serialization delay); one whose per-byte cost is an order of magnitude above its
/// component's is offered §4's (a copy across boards on a misconfigured router), with the
/// table's closest component named.
pub fn compare(
    path: &Path,
    table: &BTreeMap<String, Component>,
    measured: &[MeasuredHop],
    tol: Tolerance,
) -> Vec<SegmentComparison> {
    let mut out = Vec::new();
    let mut prev_measured = Some(Cost::default());
    let mut prev_expected = Cost::default();
    for (hop, expected_cum, elements) in path.hop_marks() {
        let expected = expected_cum - prev_expected;
        prev_expected = expected_cum;
        let here = measured.iter().find(|m| m.hop == hop).map(|m| m.cost);
        let (Some(now), Some(before)) = (here, prev_measured) else {
            prev_measured = here;
            continue;
        };
        prev_measured = Some(now);
        let got = now - before;
        let d_pb = got.per_byte_ms - expected.per_byte_ms;
        let pb_allowed = tol
            .per_byte_ms
            .max(tol.per_byte_relative * expected.per_byte_ms.abs());
        let pb_bad = d_pb.abs() > pb_allowed;
        let fixed_bad = (got.fixed_ms - expected.fixed_ms).abs() > tol.fixed_ms;
        let mut hypotheses = Vec::new();
        if pb_bad && d_pb > 0.0 {
            for e in &elements {
                if let ElementKind::Link {
                    name,
                    rate_bits_per_second,
                    ..
                } = &e.kind
                {
                    let ser =
                        Cost::serialization(BitRate::from_bits_per_second(*rate_bits_per_second));
                    if (d_pb - ser.per_byte_ms).abs() <= pb_allowed.max(0.1 * ser.per_byte_ms) {
                        hypotheses.push(format!(
                            "the extra {:.6} ms/byte is one more serialization on link '{name}' ({}): something receives and re-transmits every packet, such as an active wiretapper (seed 001 §5)",
                            d_pb,
                            BitRate::from_bits_per_second(*rate_bits_per_second)
                        ));
                    }
                }
            }
            let components: Vec<&Cost> = elements
                .iter()
                .filter_map(|e| match &e.kind {
                    ElementKind::Component { cost, .. } => Some(cost),
                    _ => None,
                })
                .collect();
            let class = components.iter().map(|c| c.per_byte_ms).sum::<f64>();
            if !components.is_empty() && d_pb >= 9.0 * class.max(1e-9) {
                let link_pb: f64 = elements
                    .iter()
                    .filter(|e| !matches!(e.kind, ElementKind::Component { .. }))
                    .map(|e| e.cost.per_byte_ms)
                    .sum();
                let node = got - Cost::new(0.0, link_pb);
                let closest = table
                    .iter()
                    .min_by(|a, b| {
                        let da = (a.1.per_byte_ms - node.per_byte_ms).abs();
                        let db = (b.1.per_byte_ms - node.per_byte_ms).abs();
                        da.total_cmp(&db)
                    })
                    .map(|(tag, c)| {
                        format!(
                            "; closest in the table: '{tag}' ({:.3} + {:.6} x size, {})",
                            c.fixed_ms, c.per_byte_ms, c.description
                        )
                    })
                    .unwrap_or_default();
                hypotheses.push(format!(
                    "per-byte cost {:.6} ms/byte is an order of magnitude above its class ({:.6}): a data copy, as on a router whose ports sit on different boards (seed 001 §4){closest}",
                    node.per_byte_ms, class
                ));
            }
        }
        if (pb_bad || fixed_bad) && hypotheses.is_empty() {
            hypotheses.extend(unexplained(expected, got, pb_bad, fixed_bad));
        }
        out.push(SegmentComparison {
            hop,
            elements: segment_groups(&elements),
            expected,
            measured: got,
            anomalous: pb_bad || fixed_bad,
            hypotheses,
        });
    }
    out
}

/// The groups a segment's elements belong to, each named once in path order: a group sums
/// several elements into one row of the prediction (Table 2's "Endpoints" is two hosts), so
/// the segment names the row, not "Endpoints + Endpoints".
fn segment_groups(elements: &[&Element]) -> Vec<String> {
    let mut groups: Vec<String> = Vec::new();
    for e in elements {
        if !groups.contains(&e.group) {
            groups.push(e.group.clone());
        }
    }
    groups
}

/// What can honestly be said of a segment outside tolerance that no specific cause fits: which
/// coefficient disagrees, by how much, and the causes that move it that way. A verdict that
/// points at hypotheses must have some to point at.
fn unexplained(expected: Cost, got: Cost, pb_bad: bool, fixed_bad: bool) -> Vec<String> {
    let mut out = Vec::new();
    if pb_bad {
        let direction = if got.per_byte_ms > expected.per_byte_ms {
            "above: a slower link, an extra copy or a store-and-forward step the model lacks"
        } else {
            "below: a faster link than modelled, or a hop the model has and the path does not"
        };
        out.push(format!(
            "no modelled cause fits: per byte {} measured against {} expected, {direction}; or the probe is of another path",
            per_byte_text(got.per_byte_ms),
            per_byte_text(expected.per_byte_ms),
        ));
    }
    if fixed_bad {
        let delta_s = (got.fixed_ms - expected.fixed_ms) / 1000.0;
        let direction = if delta_s > 0.0 {
            "a longer cable, queueing or per-packet processing the model lacks"
        } else {
            "a shorter path or faster nodes than modelled"
        };
        out.push(format!(
            "no modelled cause fits: fixed cost {}{} from the model ({} measured, {} expected): {direction}; or the probe is of another path",
            if delta_s < 0.0 { "-" } else { "+" },
            format_seconds(delta_s.abs()),
            format_seconds(got.fixed_ms / 1000.0),
            format_seconds(expected.fixed_ms / 1000.0),
        ));
    }
    out
}

/// A per-byte cost in ns/byte: the unit in which link and copy costs are read at a glance.
fn per_byte_text(ms_per_byte: f64) -> String {
    format!(
        "{} ns/byte",
        crate::units::significant(ms_per_byte * 1e6, 4)
    )
}
