//! A topology file's raw form and its checks: the TOML as written ([`RawTopology`] and its
//! tables), each key's range and combination checked with the file's line, into the
//! [`super::Topology`] the lab builds from. Every mistake is one [`TopologyError::Invalid`].

use std::collections::HashMap;
use std::net::Ipv4Addr;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;
use wirespeed_model::{BitRate, ByteSize, LinkLayer};

use crate::addressing::Ipv4Net;

use super::{
    AQM_INTERVAL_RANGE, AQM_TARGET_RANGE, AqmConfig, AqmKind, Cost, DEFAULT_QUEUE_PACKETS,
    DEFAULT_VELOCITY_FACTOR, DirectionConfig, FLIGHT_BUDGET_BYTES, FQ_FLOWS_RANGE,
    FQ_QUANTUM_RANGE, HostConfig, Link, LinkDuplex, MAX_DELAY, MAX_FIXED_COST, MAX_LAB_NAME,
    MAX_LINKS, MAX_NODES, MAX_PER_BYTE_COST, MAX_STATIONS, Node, NodeKind, QueueLimit,
    RouterConfig, SPEED_OF_LIGHT_M_PER_S, Segment, TCP_KEYS, TCP_PRESETS, TcpSetting, TcpValue,
    Topology, TopologyError, is_lab_base_name,
};

pub(super) struct Ctx<'a> {
    pub(super) text: &'a str,
    pub(super) file: &'a str,
}

impl Ctx<'_> {
    pub(super) fn line(&self, offset: usize) -> usize {
        let end = offset.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    pub(super) fn error_at_line(&self, line: usize, message: String) -> TopologyError {
        TopologyError::Invalid {
            file: self.file.to_string(),
            line,
            message,
        }
    }

    fn error<T>(&self, at: &Spanned<T>, message: String) -> TopologyError {
        self.error_at_line(self.line(at.span().start), message)
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTopology {
    name: Option<Spanned<String>>,
    #[serde(default)]
    host: Vec<RawHost>,
    #[serde(default)]
    router: Vec<RawRouter>,
    #[serde(default)]
    link: Vec<Spanned<RawLink>>,
    #[serde(default)]
    segment: Vec<Spanned<RawSegment>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSegment {
    name: Spanned<String>,
    stations: Spanned<Vec<Spanned<String>>>,
    rate: Option<Spanned<toml::Value>>,
    length_m: Option<Spanned<toml::Value>>,
    velocity_factor: Option<Spanned<toml::Value>>,
    queue: Option<Spanned<toml::Value>>,
    mtu: Option<Spanned<toml::Value>>,
    seed: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHost {
    name: Spanned<String>,
    transmit: Option<Spanned<RawCost>>,
    receive: Option<Spanned<RawCost>>,
    tcp_profile: Option<Spanned<String>>,
    tcp: Option<Spanned<toml::Table>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRouter {
    name: Spanned<String>,
    forward: Option<Spanned<RawCost>>,
    answer: Option<Spanned<RawCost>>,
    #[serde(default = "yes")]
    icmp_ratelimit: bool,
}

pub(super) fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCost {
    #[serde(default)]
    fixed: Option<Spanned<toml::Value>>,
    #[serde(default)]
    per_byte: Option<Spanned<toml::Value>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    a: Spanned<String>,
    b: Spanned<String>,
    rate: Option<Spanned<toml::Value>>,
    rate_ab: Option<Spanned<toml::Value>>,
    rate_ba: Option<Spanned<toml::Value>>,
    delay: Option<Spanned<toml::Value>>,
    length_m: Option<Spanned<toml::Value>>,
    velocity_factor: Option<Spanned<toml::Value>>,
    queue: Option<Spanned<toml::Value>>,
    queue_bytes: Option<Spanned<toml::Value>>,
    loss: Option<Spanned<toml::Value>>,
    seed: Option<Spanned<toml::Value>>,
    mtu: Option<Spanned<toml::Value>>,
    duplex: Option<Spanned<String>>,
    duplex_a: Option<Spanned<String>>,
    duplex_b: Option<Spanned<String>>,
    layer: Option<Spanned<String>>,
    ipv6: Option<bool>,
    hidden_hops: Option<Spanned<toml::Value>>,
    a_address: Option<Spanned<String>>,
    b_address: Option<Spanned<String>>,
    aqm: Option<Spanned<String>>,
    aqm_target: Option<Spanned<toml::Value>>,
    aqm_interval: Option<Spanned<toml::Value>>,
    fq_flows: Option<Spanned<toml::Value>>,
    fq_quantum: Option<Spanned<toml::Value>>,
    fq_perturbation: Option<Spanned<toml::Value>>,
}

impl RawTopology {
    pub(super) fn check(self, ctx: &Ctx<'_>) -> Result<Topology, TopologyError> {
        if let Some(name) = &self.name {
            check_lab_name(ctx, name)?;
        }
        let mut nodes: Vec<Node> = Vec::new();
        let mut names: HashMap<String, usize> = HashMap::new();
        let mut add = |name: &Spanned<String>, kind: NodeKind| -> Result<(), TopologyError> {
            check_name(ctx, name)?;
            if names.contains_key(name.get_ref()) {
                return Err(ctx.error(
                    name,
                    format!(
                        "duplicate node name '{}': every host and router needs its own name",
                        name.get_ref()
                    ),
                ));
            }
            names.insert(name.get_ref().clone(), nodes.len());
            nodes.push(Node {
                name: name.get_ref().clone(),
                kind,
            });
            Ok(())
        };
        for host in &self.host {
            add(&host.name, NodeKind::Host(host.check(ctx)?))?;
        }
        for router in &self.router {
            let config = RouterConfig {
                forward: bounded_cost(
                    ctx,
                    router.forward.as_ref(),
                    "forward",
                    "router",
                    &router.name,
                )?,
                answer: bounded_cost(
                    ctx,
                    router.answer.as_ref(),
                    "answer",
                    "router",
                    &router.name,
                )?,
                icmp_ratelimit: router.icmp_ratelimit,
            };
            add(&router.name, NodeKind::Router(config))?;
        }
        if nodes.len() < 2 {
            return Err(ctx.error_at_line(
                1,
                "a lab needs at least two nodes: add [[host]] or [[router]] tables with a name"
                    .into(),
            ));
        }
        if nodes.len() > MAX_NODES {
            return Err(ctx.error_at_line(
                1,
                format!(
                    "{} nodes is more than the {MAX_NODES} a lab may have",
                    nodes.len()
                ),
            ));
        }
        if self.link.is_empty() && self.segment.is_empty() {
            return Err(ctx.error_at_line(
                1,
                "a lab needs at least one [[link]] with a = \"NODE\" and b = \"NODE\" (or a [[segment]])".into(),
            ));
        }
        if self.link.len() + self.segment.len() > MAX_LINKS {
            return Err(ctx.error_at_line(
                1,
                format!(
                    "{} links and segments are more than the {MAX_LINKS} that 198.18.0.0/15 numbers",
                    self.link.len() + self.segment.len()
                ),
            ));
        }
        if self.link.len() > MAX_LINKS {
            return Err(ctx.error_at_line(
                1,
                format!(
                    "{} links is more than the {MAX_LINKS} that 198.18.0.0/15 numbers",
                    self.link.len()
                ),
            ));
        }
        let mut links = Vec::new();
        for (index, link) in self.link.iter().enumerate() {
            let line = ctx.line(link.span().start);
            links.push(link.get_ref().check(ctx, index, line, &names)?);
        }
        check_addresses(ctx, &self.link, &links)?;
        let mut segments = Vec::new();
        for (index, segment) in self.segment.iter().enumerate() {
            let line = ctx.line(segment.span().start);
            segments.push(segment.get_ref().check(ctx, index, line, &names, &nodes)?);
        }
        check_memory(ctx, &links, &segments)?;
        Ok(Topology {
            name: self.name.map(Spanned::into_inner),
            nodes,
            links,
            segments,
        })
    }
}

pub(super) fn check_lab_name(ctx: &Ctx<'_>, name: &Spanned<String>) -> Result<(), TopologyError> {
    let n = name.get_ref();
    if is_lab_base_name(n) {
        Ok(())
    } else {
        Err(ctx.error(
            name,
            format!(
                "lab name '{n}' must be 1 to {MAX_LAB_NAME} of a-z, 0-9 and '-', starting with a letter or digit: e.g. name = \"two-host\" (or leave it out to use the file's name)"
            ),
        ))
    }
}

pub(super) fn check_name(ctx: &Ctx<'_>, name: &Spanned<String>) -> Result<(), TopologyError> {
    let n = name.get_ref();
    let ok = !n.is_empty()
        && n.len() <= 24
        && n.starts_with(|c: char| c.is_ascii_lowercase())
        && n.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if ok {
        Ok(())
    } else {
        Err(ctx.error(
            name,
            format!("node name '{n}' must be 1 to 24 of a-z, 0-9 and '-', starting with a letter"),
        ))
    }
}

pub(super) fn cost(ctx: &Ctx<'_>, raw: Option<&Spanned<RawCost>>) -> Result<Cost, TopologyError> {
    let Some(raw) = raw else {
        return Ok(Cost::default());
    };
    let get = |v: &Option<Spanned<toml::Value>>, what: &str| -> Result<Duration, TopologyError> {
        match v {
            None => Ok(Duration::ZERO),
            Some(v) => duration(ctx, v, what),
        }
    };
    Ok(Cost {
        fixed: get(&raw.get_ref().fixed, "fixed cost")?,
        per_byte: get(&raw.get_ref().per_byte, "per-byte cost")?,
    })
}

/// A cost within [`MAX_FIXED_COST`] and [`MAX_PER_BYTE_COST`], or an error at its line.
pub(super) fn bounded_cost(
    ctx: &Ctx<'_>,
    raw: Option<&Spanned<RawCost>>,
    what: &str,
    kind: &str,
    name: &Spanned<String>,
) -> Result<Cost, TopologyError> {
    let c = cost(ctx, raw)?;
    if let Some(raw) = raw
        && (c.fixed > MAX_FIXED_COST || c.per_byte > MAX_PER_BYTE_COST)
    {
        return Err(ctx.error(
            raw,
            format!(
                "{what} cost of {kind} '{}' is above {} ms fixed or {} us per byte: check the unit (\"784ns\", \"1.2ms\")",
                name.get_ref(),
                MAX_FIXED_COST.as_millis(),
                MAX_PER_BYTE_COST.as_micros()
            ),
        ));
    }
    Ok(c)
}

impl RawHost {
    fn check(&self, ctx: &Ctx<'_>) -> Result<HostConfig, TopologyError> {
        let transmit = bounded_cost(ctx, self.transmit.as_ref(), "transmit", "host", &self.name)?;
        let receive = bounded_cost(ctx, self.receive.as_ref(), "receive", "host", &self.name)?;
        let mut tcp: Vec<TcpSetting> = Vec::new();
        let mut set = |key: &str, value: String| {
            tcp.retain(|s| s.key != key);
            tcp.push(TcpSetting {
                key: key.to_string(),
                value,
            });
        };
        let tcp_profile = match &self.tcp_profile {
            None => None,
            Some(p) => {
                let Some((name, preset)) = TCP_PRESETS.iter().find(|(n, _)| *n == p.get_ref())
                else {
                    let known: Vec<&str> = TCP_PRESETS.iter().map(|(n, _)| *n).collect();
                    return Err(ctx.error(
                        p,
                        format!(
                            "unknown tcp_profile '{}': use one of {}, or set sysctls in a tcp table",
                            p.get_ref(),
                            known.join(", ")
                        ),
                    ));
                };
                for (k, v) in preset.iter() {
                    set(k, v.to_string());
                }
                Some(name.to_string())
            }
        };
        if let Some(table) = &self.tcp {
            for (key, value) in table.get_ref() {
                let Some((_, kind)) = TCP_KEYS.iter().find(|(k, _)| k == key) else {
                    let known: Vec<&str> = TCP_KEYS.iter().map(|(k, _)| *k).collect();
                    return Err(ctx.error(
                        table,
                        format!(
                            "unknown TCP setting '{key}' in host '{}': the lab sets only per-namespace net.ipv4 keys ({})",
                            self.name.get_ref(),
                            known.join(", ")
                        ),
                    ));
                };
                let text = match (kind, value) {
                    (TcpValue::Int(lo, hi), toml::Value::Integer(i)) if (lo..=hi).contains(&i) => {
                        i.to_string()
                    }
                    (TcpValue::Int(lo, hi), other) => {
                        return Err(ctx.error(
                            table,
                            format!("{key} = {other} must be a whole number in {lo}..={hi}"),
                        ));
                    }
                    (TcpValue::Name, toml::Value::String(n))
                        if !n.is_empty()
                            && n.len() <= 15
                            && n.chars().all(|c| {
                                c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'
                            }) =>
                    {
                        n.clone()
                    }
                    (TcpValue::Name, other) => {
                        return Err(ctx.error(
                            table,
                            format!(
                                "{key} = {other} must name an algorithm, e.g. \"reno\" or \"cubic\""
                            ),
                        ));
                    }
                };
                set(key, text);
            }
        }
        Ok(HostConfig {
            transmit,
            receive,
            tcp,
            tcp_profile,
        })
    }
}

pub(super) fn text_of(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(super) fn duration(
    ctx: &Ctx<'_>,
    v: &Spanned<toml::Value>,
    what: &str,
) -> Result<Duration, TopologyError> {
    let text = text_of(v.get_ref());
    if text.trim_start().starts_with('-') {
        return Err(ctx.error(
            v,
            format!("negative {what} '{text}': a time cannot be below zero"),
        ));
    }
    if let toml::Value::Integer(_) | toml::Value::Float(_) = v.get_ref() {
        return Err(ctx.error(
            v,
            format!("{what} {text} has no unit: write it as a string with one, e.g. \"50us\" or \"1.2ms\""),
        ));
    }
    wirespeed_model::units::parse_duration(&text).map_err(|e| ctx.error(v, format!("{what}: {e}")))
}

pub(super) fn rate(ctx: &Ctx<'_>, v: &Spanned<toml::Value>) -> Result<BitRate, TopologyError> {
    let text = text_of(v.get_ref());
    if text.trim_start().starts_with('-') {
        return Err(ctx.error(
            v,
            format!("negative rate '{text}': a link rate must be above zero, e.g. \"10M\""),
        ));
    }
    let digits: String = text
        .trim()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    if digits.parse::<f64>().is_ok_and(|x| x == 0.0) {
        return Err(ctx.error(
            v,
            format!("rate '{text}': a link rate must be above zero, e.g. \"10M\""),
        ));
    }
    let rate = BitRate::from_str(&text).map_err(|e| ctx.error(v, format!("rate: {e}")))?;
    if rate.bits_per_second() > 10_000_000_000 {
        return Err(ctx.error(
            v,
            format!("rate {rate} is above the 10 Gbit/s a user-space emulator can pretend to time"),
        ));
    }
    Ok(rate)
}

pub(super) fn number(
    ctx: &Ctx<'_>,
    v: &Spanned<toml::Value>,
    what: &str,
) -> Result<f64, TopologyError> {
    match v.get_ref() {
        toml::Value::Integer(i) => Ok(*i as f64),
        toml::Value::Float(f) => Ok(*f),
        other => Err(ctx.error(v, format!("{what} must be a number, not {other}"))),
    }
}

pub(super) fn integer(
    ctx: &Ctx<'_>,
    v: &Spanned<toml::Value>,
    what: &str,
    min: i64,
    max: i64,
) -> Result<i64, TopologyError> {
    match v.get_ref() {
        toml::Value::Integer(i) if (min..=max).contains(i) => Ok(*i),
        toml::Value::Integer(i) => {
            Err(ctx.error(v, format!("{what} {i} is outside {min}..={max}")))
        }
        other => Err(ctx.error(v, format!("{what} must be a whole number, not {other}"))),
    }
}

impl RawLink {
    fn check(
        &self,
        ctx: &Ctx<'_>,
        index: usize,
        line: usize,
        names: &HashMap<String, usize>,
    ) -> Result<Link, TopologyError> {
        let node = |name: &Spanned<String>| -> Result<usize, TopologyError> {
            names.get(name.get_ref()).copied().ok_or_else(|| {
                let mut known: Vec<&String> = names.keys().collect();
                known.sort();
                let known: Vec<&str> = known.iter().map(|s| s.as_str()).collect();
                ctx.error(
                    name,
                    format!(
                        "unknown node '{}': declare it as [[host]] or [[router]] (known: {})",
                        name.get_ref(),
                        known.join(", ")
                    ),
                )
            })
        };
        let a = node(&self.a)?;
        let b = node(&self.b)?;
        if a == b {
            return Err(ctx.error(
                &self.b,
                format!(
                    "link from '{}' to itself: a and b must differ",
                    self.a.get_ref()
                ),
            ));
        }
        let base = self.rate.as_ref().map(|v| rate(ctx, v)).transpose()?;
        let rate_ab = self
            .rate_ab
            .as_ref()
            .map(|v| rate(ctx, v))
            .transpose()?
            .or(base);
        let rate_ba = self
            .rate_ba
            .as_ref()
            .map(|v| rate(ctx, v))
            .transpose()?
            .or(base);
        if let (Some(both), true) = (&self.rate, self.rate_ab.is_some() || self.rate_ba.is_some()) {
            // Each value was checked at its own line above; together, one of them would be
            // silently ignored for that direction.
            return Err(ctx.error(
                both,
                "give rate (both directions) or rate_ab and rate_ba (one per direction), not both: remove rate or the per-direction rates".into(),
            ));
        }
        let (Some(rate_ab), Some(rate_ba)) = (rate_ab, rate_ba) else {
            return Err(ctx.error_at_line(
                line,
                "link has no rate: add rate = \"10M\" (or rate_ab and rate_ba, one per direction)"
                    .into(),
            ));
        };
        let delay = self.delay(ctx, line)?;
        let queue = match (&self.queue, &self.queue_bytes) {
            (Some(_), Some(q)) => {
                return Err(ctx.error(q, "give queue (packets) or queue_bytes, not both".into()));
            }
            (Some(q), None) => {
                QueueLimit::Packets(integer(ctx, q, "queue (packets)", 1, 1_000_000)? as u32)
            }
            (None, Some(q)) => {
                let text = text_of(q.get_ref());
                let size = ByteSize::from_str(&text)
                    .map_err(|e| ctx.error(q, format!("queue_bytes: {e}")))?;
                if size.bytes() < 64 {
                    return Err(ctx.error(
                        q,
                        format!("queue_bytes {size} cannot hold one minimum frame (64 bytes)"),
                    ));
                }
                QueueLimit::Bytes(size.bytes())
            }
            (None, None) => QueueLimit::Packets(DEFAULT_QUEUE_PACKETS),
        };
        let loss = match &self.loss {
            None => 0.0,
            Some(v) => {
                let loss = number(ctx, v, "loss")?;
                if !(0.0..1.0).contains(&loss) {
                    return Err(ctx.error(
                        v,
                        format!("loss {loss} must be a probability in 0 <= loss < 1 (0.01 is 1%)"),
                    ));
                }
                loss
            }
        };
        let seed = match &self.seed {
            None => index as u64 + 1,
            Some(v) => integer(ctx, v, "seed", 0, i64::MAX)? as u64,
        };
        let mtu = match &self.mtu {
            None => 1500,
            Some(v) => integer(ctx, v, "mtu", 68, 9000)? as u32,
        };
        let parse_duplex = |d: &Spanned<String>| match d.get_ref().as_str() {
            "full" => Ok(LinkDuplex::Full),
            "half" => Ok(LinkDuplex::Half),
            other => Err(ctx.error(d, format!("duplex '{other}' is not \"full\" or \"half\""))),
        };
        let both = self.duplex.as_ref().map(parse_duplex).transpose()?;
        let duplex_a = match &self.duplex_a {
            Some(d) => parse_duplex(d)?,
            None => both.unwrap_or(LinkDuplex::Full),
        };
        let duplex_b = match &self.duplex_b {
            Some(d) => parse_duplex(d)?,
            None => both.unwrap_or(LinkDuplex::Full),
        };
        if duplex_a == LinkDuplex::Half || duplex_b == LinkDuplex::Half {
            let at = self
                .duplex
                .as_ref()
                .or(self.duplex_a.as_ref())
                .or(self.duplex_b.as_ref())
                .expect("a half end was given");
            if rate_ab != rate_ba {
                return Err(ctx.error(
                    at,
                    "a half-duplex link is one medium with one rate: give rate, not rate_ab and rate_ba".into(),
                ));
            }
            let unsupported = [
                (self.loss.is_some(), "loss"),
                (self.hidden_hops.is_some(), "hidden_hops"),
                (self.queue_bytes.is_some(), "queue_bytes"),
                (self.layer.is_some(), "layer"),
                (self.aqm.is_some(), "aqm"),
            ];
            if let Some((_, key)) = unsupported.iter().find(|(given, _)| *given) {
                return Err(ctx.error(
                    at,
                    format!("{key} is not available on a half-duplex (CSMA/CD) link: remove it, or make the link full duplex"),
                ));
            }
        }
        let layer = match &self.layer {
            None => LinkLayer::Ethernet { vlan_tags: 0 },
            Some(l) if l.get_ref() == "ethernet" => LinkLayer::Ethernet { vlan_tags: 0 },
            Some(l) if l.get_ref() == "serial" => LinkLayer::Serial,
            Some(l) => {
                return Err(ctx.error(
                    l,
                    format!("layer '{}' is not \"ethernet\" or \"serial\"", l.get_ref()),
                ));
            }
        };
        let address = |v: &Option<Spanned<String>>| -> Result<Option<Ipv4Net>, TopologyError> {
            v.as_ref()
                .map(|v| Ipv4Net::from_str(v.get_ref()).map_err(|e| ctx.error(v, e)))
                .transpose()
        };
        let hidden_hops = match &self.hidden_hops {
            None => 0,
            Some(v) => integer(ctx, v, "hidden_hops", 0, 16)? as u8,
        };
        let direction = |rate| DirectionConfig {
            rate,
            delay,
            queue,
            loss,
            seed,
            hidden_hops,
        };
        Ok(Link {
            index,
            a,
            b,
            ab: direction(rate_ab),
            ba: DirectionConfig {
                seed: seed.wrapping_add(0x9e37_79b9_7f4a_7c15),
                ..direction(rate_ba)
            },
            mtu,
            duplex_a,
            duplex_b,
            layer,
            ipv6: self.ipv6.unwrap_or(true),
            aqm: self.aqm(ctx)?,
            a_address: address(&self.a_address)?,
            b_address: address(&self.b_address)?,
            line,
        })
    }

    /// The `aqm` key and the keys that tune it; each bad value is one line naming the key, the
    /// value, the range and an example.
    fn aqm(&self, ctx: &Ctx<'_>) -> Result<Option<AqmConfig>, TopologyError> {
        let kind = match &self.aqm {
            None => None,
            Some(a) => match a.get_ref().as_str() {
                "none" => None,
                "codel" => Some(AqmKind::Codel),
                "fq_codel" => Some(AqmKind::FqCodel),
                other => {
                    return Err(ctx.error(
                        a,
                        format!(
                            "aqm \"{other}\" is not one of \"codel\", \"fq_codel\" or \"none\": e.g. aqm = \"fq_codel\""
                        ),
                    ));
                }
            },
        };
        let tuning = [
            (&self.aqm_target, "aqm_target", true),
            (&self.aqm_interval, "aqm_interval", true),
            (&self.fq_flows, "fq_flows", false),
            (&self.fq_quantum, "fq_quantum", false),
            (&self.fq_perturbation, "fq_perturbation", false),
        ];
        for (value, key, codel_too) in tuning {
            let Some(v) = value else { continue };
            let fits = match kind {
                None => false,
                Some(AqmKind::Codel) => codel_too,
                Some(AqmKind::FqCodel) => true,
            };
            if !fits {
                let needs = if codel_too {
                    "aqm = \"codel\" or aqm = \"fq_codel\""
                } else {
                    "aqm = \"fq_codel\""
                };
                return Err(ctx.error(
                    v,
                    format!(
                        "{key} = {} tunes {needs}, which this link does not have: add it or remove {key}",
                        v.get_ref()
                    ),
                ));
            }
        }
        let Some(kind) = kind else {
            return Ok(None);
        };
        let time = |v: &Option<Spanned<toml::Value>>,
                    key: &str,
                    (min, max): (Duration, Duration),
                    default: Duration,
                    example: &str|
         -> Result<Duration, TopologyError> {
            let Some(v) = v else { return Ok(default) };
            let range = format!(
                "{}..={}",
                wirespeed_model::units::format_seconds(min.as_secs_f64()).replace(' ', ""),
                wirespeed_model::units::format_seconds(max.as_secs_f64()).replace(' ', "")
            );
            let bad = || {
                ctx.error(
                    v,
                    format!(
                        "{key} = {} is not a time in {range}: e.g. {key} = \"{example}\"",
                        v.get_ref()
                    ),
                )
            };
            let toml::Value::String(text) = v.get_ref() else {
                return Err(bad());
            };
            let d = wirespeed_model::units::parse_duration(text).map_err(|_| bad())?;
            if d < min || d > max || text.trim_start().starts_with('-') {
                return Err(bad());
            }
            Ok(d)
        };
        let target = time(
            &self.aqm_target,
            "aqm_target",
            AQM_TARGET_RANGE,
            Duration::from_nanos(crate::emulator::aqm::DEFAULT_TARGET_NS),
            "5ms",
        )?;
        let interval = time(
            &self.aqm_interval,
            "aqm_interval",
            AQM_INTERVAL_RANGE,
            Duration::from_nanos(crate::emulator::aqm::DEFAULT_INTERVAL_NS),
            "100ms",
        )?;
        if target >= interval {
            let at = self
                .aqm_target
                .as_ref()
                .or(self.aqm_interval.as_ref())
                .expect("the defaults are in order");
            return Err(ctx.error(
                at,
                format!(
                    "aqm_target {:?} must be below aqm_interval {:?} (RFC 8289 puts it at 5-10% of the interval): e.g. aqm_target = \"5ms\" with aqm_interval = \"100ms\"",
                    target, interval
                ),
            ));
        }
        let whole = |v: &Option<Spanned<toml::Value>>,
                     key: &str,
                     (min, max): (i64, i64),
                     default: u32,
                     example: u32|
         -> Result<u32, TopologyError> {
            let Some(v) = v else { return Ok(default) };
            match v.get_ref() {
                toml::Value::Integer(i) if (min..=max).contains(i) => Ok(*i as u32),
                other => Err(ctx.error(
                    v,
                    format!(
                        "{key} = {other} is not a whole number in {min}..={max}: e.g. {key} = {example}"
                    ),
                )),
            }
        };
        let flows = whole(
            &self.fq_flows,
            "fq_flows",
            FQ_FLOWS_RANGE,
            crate::emulator::aqm::DEFAULT_FLOWS,
            1024,
        )?;
        let quantum = whole(
            &self.fq_quantum,
            "fq_quantum",
            FQ_QUANTUM_RANGE,
            crate::emulator::aqm::DEFAULT_QUANTUM,
            1514,
        )?;
        let perturbation = self
            .fq_perturbation
            .as_ref()
            .map(|v| integer(ctx, v, "fq_perturbation", 0, i64::MAX).map(|p| p as u64))
            .transpose()?;
        Ok(Some(AqmConfig {
            kind,
            target,
            interval,
            flows,
            quantum,
            perturbation,
        }))
    }

    fn delay(&self, ctx: &Ctx<'_>, line: usize) -> Result<Duration, TopologyError> {
        let delay = self.unbounded_delay(ctx)?;
        if delay > MAX_DELAY {
            let at = self
                .delay
                .as_ref()
                .or(self.velocity_factor.as_ref())
                .or(self.length_m.as_ref());
            let message = format!(
                "delay {:.3} s is above the {} s a lab link may have: check the unit (\"50us\", \"270ms\")",
                delay.as_secs_f64(),
                MAX_DELAY.as_secs()
            );
            return Err(match at {
                Some(at) => ctx.error(at, message),
                None => ctx.error_at_line(line, message),
            });
        }
        Ok(delay)
    }

    fn unbounded_delay(&self, ctx: &Ctx<'_>) -> Result<Duration, TopologyError> {
        if let (Some(vf), None) = (&self.velocity_factor, &self.length_m) {
            // Alone it would change nothing: the delay is `delay`, or zero.
            return Err(ctx.error(
                vf,
                "velocity_factor needs length_m (the cable's length): add length_m = 100, or remove velocity_factor".into(),
            ));
        }
        match (&self.delay, &self.length_m) {
            (Some(_), Some(l)) => Err(ctx.error(l, "give delay or length_m, not both".into())),
            (Some(d), None) => duration(ctx, d, "delay"),
            (None, Some(l)) => {
                let length = number(ctx, l, "length_m")?;
                if !(0.0..=4.0e7).contains(&length) {
                    return Err(ctx.error(
                        l,
                        format!("length_m {length} must be between 0 and 40,000 km"),
                    ));
                }
                let vf = match &self.velocity_factor {
                    None => DEFAULT_VELOCITY_FACTOR,
                    Some(v) => number(ctx, v, "velocity_factor")?,
                };
                if !(vf > 0.0 && vf <= 1.0) {
                    let at = self.velocity_factor.as_ref().unwrap_or(l);
                    return Err(
                        ctx.error(at, format!("velocity_factor {vf} must be in 0 < vf <= 1"))
                    );
                }
                // Above the bound, and never a conversion that could overflow.
                let seconds =
                    (length / (vf * SPEED_OF_LIGHT_M_PER_S)).min(MAX_DELAY.as_secs_f64() * 2.0);
                Ok(Duration::from_secs_f64(seconds))
            }
            (None, None) => Ok(Duration::ZERO),
        }
    }
}

impl RawSegment {
    fn check(
        &self,
        ctx: &Ctx<'_>,
        index: usize,
        line: usize,
        names: &HashMap<String, usize>,
        nodes: &[Node],
    ) -> Result<Segment, TopologyError> {
        check_name(ctx, &self.name)?;
        let mut stations = Vec::new();
        for station in self.stations.get_ref() {
            let Some(&node) = names.get(station.get_ref()) else {
                return Err(ctx.error(
                    station,
                    format!(
                        "segment '{}' names unknown station '{}': add a [[host]] with that name",
                        self.name.get_ref(),
                        station.get_ref()
                    ),
                ));
            };
            if matches!(nodes[node].kind, NodeKind::Router(_)) {
                return Err(ctx.error(
                    station,
                    format!(
                        "router '{}' on segment '{}': the lab does not route across segments; attach hosts only",
                        station.get_ref(),
                        self.name.get_ref()
                    ),
                ));
            }
            if stations.contains(&node) {
                return Err(ctx.error(
                    station,
                    format!(
                        "station '{}' is on segment '{}' twice",
                        station.get_ref(),
                        self.name.get_ref()
                    ),
                ));
            }
            stations.push(node);
        }
        if !(2..=MAX_STATIONS).contains(&stations.len()) {
            return Err(ctx.error(
                &self.stations,
                format!(
                    "segment '{}' has {} stations: give 2 to {MAX_STATIONS}",
                    self.name.get_ref(),
                    stations.len()
                ),
            ));
        }
        let Some(rate) = self.rate.as_ref().map(|v| rate(ctx, v)).transpose()? else {
            return Err(ctx.error_at_line(line, "segment has no rate: add rate = \"10M\"".into()));
        };
        let length_m = match &self.length_m {
            None => 100.0,
            Some(v) => {
                let l = number(ctx, v, "length_m")?;
                if !(0.0..=10_000.0).contains(&l) {
                    return Err(ctx.error(
                        v,
                        format!("length_m {l} of a segment must be between 0 and 10 km"),
                    ));
                }
                l
            }
        };
        let velocity_factor = match &self.velocity_factor {
            None => DEFAULT_VELOCITY_FACTOR,
            Some(v) => {
                let vf = number(ctx, v, "velocity_factor")?;
                if !(vf > 0.0 && vf <= 1.0) {
                    return Err(
                        ctx.error(v, format!("velocity_factor {vf} must be in 0 < vf <= 1"))
                    );
                }
                vf
            }
        };
        let queue = match &self.queue {
            None => DEFAULT_QUEUE_PACKETS,
            Some(v) => integer(ctx, v, "queue (packets)", 1, 1_000_000)? as u32,
        };
        let mtu = match &self.mtu {
            None => 1500,
            Some(v) => integer(ctx, v, "mtu", 68, 9000)? as u32,
        };
        let seed = match &self.seed {
            None => index as u64 + 1,
            Some(v) => integer(ctx, v, "seed", 0, i64::MAX)? as u64,
        };
        Ok(Segment {
            index,
            name: self.name.get_ref().clone(),
            stations,
            rate,
            length_m,
            velocity_factor,
            queue,
            mtu,
            seed,
            line,
        })
    }
}

/// Refuses a lab whose links and segments together could hold more than
/// [`FLIGHT_BUDGET_BYTES`] of frames, at the line of the link that goes over.
pub(super) fn check_memory(
    ctx: &Ctx<'_>,
    links: &[Link],
    segments: &[Segment],
) -> Result<(), TopologyError> {
    const MIB: f64 = 1024.0 * 1024.0;
    let budget = FLIGHT_BUDGET_BYTES as f64 / MIB;
    let mut total = 0u64;
    let items = links
        .iter()
        .map(|l| (l.line, l.in_flight_bytes(), Some(l)))
        .chain(segments.iter().map(|s| (s.line, s.in_flight_bytes(), None)));
    for (line, bytes, link) in items {
        total = total.saturating_add(bytes);
        if total <= FLIGHT_BUDGET_BYTES {
            continue;
        }
        let what = match link {
            Some(l) => format!(
                "this link can hold {:.0} MiB of frames in flight (rate {}, delay {:.3} s, queue {})",
                bytes as f64 / MIB,
                l.ab.rate.max(l.ba.rate),
                l.ab.delay.as_secs_f64(),
                match l.ab.queue {
                    QueueLimit::Packets(p) => format!("{p} packets"),
                    QueueLimit::Bytes(b) => format!("{b} bytes"),
                }
            ),
            None => format!(
                "this segment can hold {:.0} MiB of frames",
                bytes as f64 / MIB
            ),
        };
        return Err(ctx.error_at_line(
            line,
            format!(
                "{what}; with the links before it that is {:.0} MiB, above the lab's budget of {budget:.0} MiB: lower the delay, the rate or the queue",
                total as f64 / MIB
            ),
        ));
    }
    Ok(())
}

pub(super) fn check_addresses(
    ctx: &Ctx<'_>,
    raw: &[Spanned<RawLink>],
    links: &[Link],
) -> Result<(), TopologyError> {
    let mut seen: HashMap<Ipv4Addr, ()> = HashMap::new();
    for (raw, link) in raw.iter().zip(links) {
        for (net, at) in [
            (link.a_address, raw.get_ref().a_address.as_ref()),
            (link.b_address, raw.get_ref().b_address.as_ref()),
        ] {
            let (Some(net), Some(at)) = (net, at) else {
                continue;
            };
            if seen.insert(net.addr, ()).is_some() {
                return Err(ctx.error(
                    at,
                    format!(
                        "duplicate address {}: every interface needs its own",
                        net.addr
                    ),
                ));
            }
        }
        if let (Some(x), Some(y), Some(at)) = (
            link.a_address,
            link.b_address,
            raw.get_ref().b_address.as_ref(),
        ) && !(x.contains(y.addr) && y.contains(x.addr))
        {
            return Err(ctx.error(
                at,
                format!("addresses {x} and {y} of one link are not in the same subnet"),
            ));
        }
        if link.a_address.is_some() != link.b_address.is_some() {
            return Err(ctx.error_at_line(
                link.line,
                "give both a_address and b_address, or neither".into(),
            ));
        }
    }
    Ok(())
}
