//! The lab's own cost per link crossing, measured by the lab itself when it comes up, and the
//! warm-up that leaves every link's neighbours resolved before `lab up` returns (issue 31).
//!
//! No topology file states it, yet every frame pays it: between the sending kernel's transmit
//! (where [`crate::ingress_stamp`] stamps the frame) and the receiving kernel's hand-off of the
//! next frame, the emulator's egress thread is woken and releases the frame (its lateness,
//! counted in `lab status`: p50 about 1 us), writes it into the receiving TAP, and the
//! receiving namespace's kernel takes it in and forwards or answers it. Only the first part is
//! visible to the emulator; the write and the kernel paths on both sides are not. A probe sees
//! all of it: `probe --hops` on random chains read each hop's own fixed cost 2-30 us (median 14)
//! above the configured truth, varying from lab to lab by more than its interval's width.
//!
//! So the lab measures the whole crossing from outside, the way a probe sees it: from the
//! namespace at end a of each point-to-point link it sends echo requests to end b's address on
//! that link (`ping`, kernel receive stamps), and the same number to its own address, which the
//! kernel answers through `lo` without crossing anything. The link's best round trip less its
//! configured round trip ([`configured_echo_ms`]: delay and serialization both ways, and the
//! modelled answer cost of a router at either end) less the best round trip to itself leaves two
//! crossings of the link with the pinged kernel's answer, what one hop of a probe pays beyond the
//! configured figures ([`judge`]). The minimum of each series is used because `probe` fits
//! minimums (seed 001's best case).
//!
//! A second series of the same count at a large size ([`LARGE_ECHO_PACKET_BYTES`], or the
//! link's MTU) gives the crossing's cost per byte: the excess at the large size less the excess
//! at the small one, over twice the bytes between them ([`per_byte_ns`]). On random chains the
//! time-block intervals of `probe --hops` missed the configured per byte of slow links by +3 to
//! +15 ns/B, always above (bench/results/harness-random-labs.md, 2026-11-28): what the lab adds
//! per byte, which a truth of one size cannot hold. The sender's echo to itself at the large
//! size takes out the answering kernel's own cost per byte (its copy and checksum of the echo).
//! The two sizes run one after the other, never on one link at once, so neither series queues
//! behind the other.
//!
//! The first echo of each link resolves the neighbour entries both ways (ARP; a few IPv6 echoes
//! resolve neighbour discovery on links that carry IPv6), which is exactly what a measurement
//! started right after `lab up` would otherwise pay on its first probes. Its excess over the
//! best crossing is kept as `first_us`.

use std::net::IpAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::addressing::Plan;
use crate::topology::{NodeKind, Topology};
use crate::truth::link_cost;

/// Echo requests per series: as many as `probe` sends of each size by default, so that the
/// minimum is as much a best case as the probe's, few enough that `lab up` stays quick.
pub const ECHOES: u32 = 32;

/// The echo request's IP packet, bytes: `ping`'s default 56 data bytes, 8 of ICMP header and
/// 20 of IPv4 header (no Ethernet padding: over 46).
pub const ECHO_PACKET_BYTES: u64 = 84;

/// The large echo's IP packet, bytes: 1400 data bytes (`ping -s 1400`), 8 of ICMP header and
/// 20 of IPv4 header, under any Ethernet MTU of 1500; a link with a smaller MTU is echoed at
/// its MTU.
pub const LARGE_ECHO_PACKET_BYTES: u64 = 1428;

/// Below this many bytes between the two sizes a cost per byte is not read: a link whose MTU
/// leaves less would divide the noise of two minimums by too few bytes.
const MIN_SIZE_SPAN_BYTES: u64 = 256;

/// ICMP and IPv4 headers of an echo request: `ping -s` takes the packet less these.
const ECHO_HEADERS_BYTES: u64 = 28;

/// Echo requests follow each other by at least this, by the link's configured round trip and
/// [`GAP`], and by four echoes' serialization (no series queues behind itself). How long the
/// emulator's threads sat idle changes what a crossing costs (about 25 us more after 5 ms idle
/// than after 0.2 ms on a loaded machine), and a link's threads sit idle in a `probe --hops`
/// run while it probes the other hops: echoes one round trip and 1 ms apart read a median of
/// 6.6 us a crossing on ten random labs whose probes carried 16 us a hop, echoes 10 ms apart
/// 12-23 us (bench/results/harness-random-labs.md, issue 31).
const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// `probe`'s default pause after each answer.
const GAP: Duration = Duration::from_millis(1);

/// The most a series may take, whatever the link: `ping -w`, seconds.
const DEADLINE_SECONDS: u64 = 5;

/// The most a series' output is read, bytes (20 replies are about 1.5 KB).
const MAX_OUTPUT: usize = 64 * 1024;

/// The lab's measured cost of one crossing of one link, as `lab status` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CrossingCost {
    /// Link index in the topology file.
    pub link: usize,
    /// The node that sent the echoes (end a).
    pub from: String,
    /// The node that answered them (end b).
    pub to: String,
    /// One crossing's cost beyond the configured delay and serialization, from the best round
    /// trip: what each of a probe's crossings of this link adds to its fixed cost, us.
    pub cost_us: f64,
    /// How much a typical crossing costs more than the best: half the round trips' median less
    /// their minimum, us.
    pub spread_us: f64,
    /// How much the link's first crossing cost more than the best one (neighbour resolution
    /// and cold caches: what a run right after `lab up` would have paid), us.
    pub first_us: f64,
    /// Echoes answered across the link (of [`ECHOES`]).
    pub samples: u32,
    /// One crossing's cost per byte beyond the configured serialization, ns per IP byte, from
    /// the best round trips at the small and the large size ([`per_byte_ns`]); none where the
    /// large series got no answer or the link's MTU leaves too few bytes between the sizes (and
    /// in records of labs brought up before it was measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_byte_ns: Option<f64>,
}

/// The large size a link is echoed at: [`LARGE_ECHO_PACKET_BYTES`] or its MTU, None when that
/// leaves fewer than [`MIN_SIZE_SPAN_BYTES`] above [`ECHO_PACKET_BYTES`].
pub fn large_packet_bytes(mtu: u32) -> Option<u64> {
    let large = LARGE_ECHO_PACKET_BYTES.min(u64::from(mtu));
    (large >= ECHO_PACKET_BYTES + MIN_SIZE_SPAN_BYTES).then_some(large)
}

/// One crossing's cost per byte, ns per IP byte: each size's best round trip across the link
/// less its configured round trip and less the sender's best round trip to itself at that size
/// (`[small, large]` of each, ms, packets of `bytes` IP bytes), the difference of the two
/// excesses over the bytes between the sizes, halved for the two crossings of a round trip.
/// None without both sizes' minimums or with sizes not increasing.
pub fn per_byte_ns(
    across: [&EchoSeries; 2],
    itself: [&EchoSeries; 2],
    configured_ms: [f64; 2],
    bytes: [u64; 2],
) -> Option<f64> {
    if bytes[1] <= bytes[0] {
        return None;
    }
    let best = |s: &EchoSeries| {
        s.min_ms
            .or_else(|| s.replies.iter().map(|r| r.1).reduce(f64::min))
    };
    let excess = |i: usize| Some(best(across[i])? - configured_ms[i] - best(itself[i])?);
    let (small, large) = (excess(0)?, excess(1)?);
    Some((large - small) * 1e6 / 2.0 / (bytes[1] - bytes[0]) as f64)
}

/// One echo series: the replies' round trips in the order of their sequence numbers (ms, as
/// each reply line prints them) and the best round trip of the summary line (ms, printed to
/// 1 us whatever its size, where a reply line prints 10 us above 1 ms).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EchoSeries {
    /// (sequence number, round trip ms) of each reply.
    pub replies: Vec<(u32, f64)>,
    /// The summary's minimum, ms.
    pub min_ms: Option<f64>,
}

/// Reads iputils `ping -n` output: `... icmp_seq=N ttl=T time=X ms` lines and the summary's
/// `rtt min/avg/max/mdev = a/b/c/d ms`. Anything else (and any value that is not a finite
/// non-negative number) is ignored; at most [`ECHOES`] x 4 replies are kept.
pub fn parse_ping(text: &str) -> EchoSeries {
    let mut series = EchoSeries::default();
    let number = |s: &str| s.parse::<f64>().ok().filter(|v| v.is_finite() && *v >= 0.0);
    for line in text.lines() {
        if let Some(rest) = line
            .split_once(" = ")
            .filter(|(l, _)| l.starts_with("rtt min/"))
        {
            series.min_ms = rest.1.split('/').next().and_then(number);
            continue;
        }
        let field = |name: &str| {
            line.split_whitespace()
                .find_map(|w| w.strip_prefix(name))
                .map(str::to_string)
        };
        let (Some(seq), Some(time)) = (field("icmp_seq="), field("time=")) else {
            continue;
        };
        if series.replies.len() >= 4 * ECHOES as usize {
            continue;
        }
        if let (Ok(seq), Some(ms)) = (seq.parse::<u32>(), number(&time)) {
            series.replies.push((seq, ms));
        }
    }
    series.replies.sort_by_key(|r| r.0);
    series
}

/// The configured round trip of an echo of `packet` IP bytes from one end of `link` to the
/// other, ms: both directions' delay and serialization (`truth::link_cost`), and the modelled
/// answer cost of a router at either end (the emulator charges it on any frame a router sends
/// from its own address: the request leaving a router, the reply leaving one).
pub fn configured_echo_ms(t: &Topology, link: usize, packet: u64) -> f64 {
    let l = &t.links[link];
    let bytes = packet as f64;
    let one_way = |d| {
        let (fixed, per_byte) = link_cost(d, l.layer);
        fixed + per_byte * bytes
    };
    let answer = |node: usize| match &t.nodes[node].kind {
        NodeKind::Router(r) => {
            r.answer.fixed.as_secs_f64() * 1e3 + r.answer.per_byte.as_secs_f64() * 1e3 * bytes
        }
        NodeKind::Host(_) => 0.0,
    };
    one_way(&l.ab) + one_way(&l.ba) + answer(l.a) + answer(l.b)
}

/// The cost of one crossing from a link's echo series, the sender's echoes to itself and the
/// configured round trip (ms): `(cost, spread, first)` in us, or `None` without a reply or a
/// best round trip on either side.
pub fn judge(link: &EchoSeries, itself: &EchoSeries, configured_ms: f64) -> Option<[f64; 3]> {
    let best = link
        .min_ms
        .or_else(|| link.replies.iter().map(|r| r.1).reduce(f64::min))?;
    let own = itself
        .min_ms
        .or_else(|| itself.replies.iter().map(|r| r.1).reduce(f64::min))?;
    let first = link.replies.first()?.1;
    let mut sorted: Vec<f64> = link.replies.iter().map(|r| r.1).collect();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let us = |ms: f64| ms * 1e3 / 2.0;
    Some([
        us(best - configured_ms - own),
        us((median - best).max(0.0)),
        us((first - best).max(0.0)),
    ])
}

/// The links the lab measures: point-to-point, between nodes without a processing model (a
/// host's modelled transmit and receive costs are not the lab's own).
fn measured_links(t: &Topology) -> impl Iterator<Item = usize> + '_ {
    t.links
        .iter()
        .filter(|l| !l.is_shared())
        .filter(|l| {
            [l.a, l.b].iter().all(|&n| match &t.nodes[n].kind {
                NodeKind::Host(h) => !h.has_costs(),
                NodeKind::Router(_) => true,
            })
        })
        .map(|l| l.index)
}

/// `ping` in namespace `ns`, started (not waited for), of `packet` IP bytes over IPv4 (ping's
/// default, 84, over IPv6).
fn spawn_ping(ns: &str, to: IpAddr, count: u32, interval: Duration, packet: u64) -> Option<Child> {
    let family = if to.is_ipv6() { "-6" } else { "-4" };
    let data = if to.is_ipv6() {
        ECHO_PACKET_BYTES - ECHO_HEADERS_BYTES
    } else {
        packet.saturating_sub(ECHO_HEADERS_BYTES)
    };
    Command::new("ip")
        .args(["netns", "exec", ns, "ping", family, "-n", "-s"])
        .arg(data.to_string())
        .arg("-c")
        .arg(count.to_string())
        .arg("-i")
        .arg(format!("{:.3}", interval.as_secs_f64()))
        .args(["-W", "1", "-w"])
        .arg(DEADLINE_SECONDS.to_string())
        .arg(to.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

/// Waits for `child` (bounded: `ping -w` ends it; past twice that it is killed) and parses
/// what it printed.
fn collect(child: Option<Child>) -> EchoSeries {
    let Some(mut child) = child else {
        return EchoSeries::default();
    };
    let until = Instant::now() + Duration::from_secs(2 * DEADLINE_SECONDS);
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return EchoSeries::default();
            }
        }
    }
    let mut text = String::new();
    if let Some(out) = child.stdout.take() {
        use std::io::Read as _;
        let _ = out.take(MAX_OUTPUT as u64).read_to_string(&mut text);
    }
    parse_ping(&text)
}

/// How far apart a link's echoes of `packet` bytes go: at least [`MIN_INTERVAL`], four
/// echoes' serialization on the slower direction, and the configured round trip and [`GAP`].
fn echo_interval(t: &Topology, link: usize, packet: u64) -> Duration {
    let l = &t.links[link];
    let wire = l.layer.frame(packet).wire as f64;
    let slowest = l.ab.rate.bits_per_second().min(l.ba.rate.bits_per_second()) as f64;
    let configured = configured_echo_ms(t, link, packet);
    MIN_INTERVAL
        .max(Duration::from_secs_f64(4.0 * wire * 8.0 / slowest))
        .max(GAP + Duration::from_secs_f64(configured.max(0.0) / 1e3))
}

/// One series of [`ECHOES`] echoes of `packet` bytes from the link's `a` end across to `b`,
/// and one to `a`'s own address beside it: their difference is the crossing.
fn spawn_series(
    ns: &str,
    (a, b): (&crate::addressing::Interface, &crate::addressing::Interface),
    interval: Duration,
    packet: u64,
) -> (Option<Child>, Option<Child>) {
    let across = spawn_ping(ns, IpAddr::V4(b.ipv4.addr), ECHOES, interval, packet);
    let itself = spawn_ping(ns, IpAddr::V4(a.ipv4.addr), ECHOES, interval, packet);
    (across, itself)
}

/// Measures every point-to-point link's cost per crossing across the running lab (its
/// emulator started), and leaves every link's neighbours resolved both ways in both address
/// families. Series of different links run side by side, the small size on every link first,
/// then the large one; a link whose echoes got no answer (a link configured to lose
/// everything, `ping` missing) is left out, and one whose large echoes got none has no cost per
/// byte. Takes [`ECHOES`] round trips and gaps of the slowest link at each size, at most twice
/// `ping`'s 5 s deadline each.
pub fn measure(t: &Topology, plan: &Plan, namespaces: &[String]) -> Vec<CrossingCost> {
    let mut running = Vec::new();
    for link in measured_links(t) {
        let l = &t.links[link];
        let (a, b) = (plan.end(link, true), plan.end(link, false));
        let ns = &namespaces[l.a];
        let interval = echo_interval(t, link, ECHO_PACKET_BYTES);
        let (across, itself) = spawn_series(ns, (a, b), interval, ECHO_PACKET_BYTES);
        // IPv6 neighbour discovery is resolved apart from ARP: a few echoes settle it.
        let warm6 = b
            .ipv6
            .and_then(|v6| spawn_ping(ns, IpAddr::V6(v6), 3, interval, ECHO_PACKET_BYTES));
        running.push((link, across, itself, warm6));
    }
    let mut small = Vec::new();
    for (link, across, itself, warm6) in running {
        let (across, itself) = (collect(across), collect(itself));
        let _ = collect(warm6);
        small.push((link, across, itself));
    }
    let mut running = Vec::new();
    for (link, _, _) in &small {
        let l = &t.links[*link];
        let Some(large) = large_packet_bytes(l.mtu) else {
            running.push((*link, 0, None, None));
            continue;
        };
        let (a, b) = (plan.end(*link, true), plan.end(*link, false));
        let ns = &namespaces[l.a];
        let interval = echo_interval(t, *link, large);
        let (across, itself) = spawn_series(ns, (a, b), interval, large);
        running.push((*link, large, across, itself));
    }
    let mut costs = Vec::new();
    for ((link, across, itself), (_, large, across_large, itself_large)) in
        small.into_iter().zip(running)
    {
        let (across_large, itself_large) = (collect(across_large), collect(itself_large));
        let configured = configured_echo_ms(t, link, ECHO_PACKET_BYTES);
        if let Some([cost_us, spread_us, first_us]) = judge(&across, &itself, configured) {
            let l = &t.links[link];
            let per_byte_ns = per_byte_ns(
                [&across, &across_large],
                [&itself, &itself_large],
                [configured, configured_echo_ms(t, link, large)],
                [ECHO_PACKET_BYTES, large],
            );
            costs.push(CrossingCost {
                link,
                from: t.nodes[l.a].name.clone(),
                to: t.nodes[l.b].name.clone(),
                cost_us,
                spread_us,
                first_us,
                samples: u32::try_from(across.replies.len()).unwrap_or(u32::MAX),
                per_byte_ns,
            });
        }
    }
    costs
}

/// Echoes pace IPv6's three at this: neighbour discovery settles within them.
const NEIGHBOUR_ECHO_INTERVAL: Duration = Duration::from_millis(10);

/// One echo from end a of each link [`measure`] measures to end b (three over IPv6 where end b
/// has an address): the request resolves a's entry for b, b learns a's from it, and the reply
/// proves both. All links at once; each `ping` ends by its own deadline (5 s), a link that
/// loses everything included.
pub fn resolve_neighbours(t: &Topology, plan: &Plan, namespaces: &[String]) {
    let mut running = Vec::new();
    for link in measured_links(t) {
        let ns = &namespaces[t.links[link].a];
        let b = plan.end(link, false);
        running.push(spawn_ping(
            ns,
            IpAddr::V4(b.ipv4.addr),
            1,
            NEIGHBOUR_ECHO_INTERVAL,
            ECHO_PACKET_BYTES,
        ));
        if let Some(v6) = b.ipv6 {
            running.push(spawn_ping(
                ns,
                IpAddr::V6(v6),
                3,
                NEIGHBOUR_ECHO_INTERVAL,
                ECHO_PACKET_BYTES,
            ));
        }
    }
    for ping in running {
        let _ = collect(ping);
    }
}
