//! Seeded random labs: topology files drawn from a seed, to test measurements and verdicts on
//! paths nobody chose.
//!
//! A verdict tuned on the labs its developers wrote can be right on those and wrong elsewhere
//! (issue 31 found `tcp` naming a 10 Mbit/s first link on a 1.544 Mbit/s path). The draws here
//! cover what a lab can configure: chains of 1 to 4 routers with rates spread evenly on a log
//! scale, propagation delays, queues in frames or bytes, CoDel and FQ-CoDel, router costs,
//! Ethernet and serial lines, links without IPv6, and now and then a half-duplex or
//! mismatched link; and fleets of hosts around one router with 0 to 3 faults of different
//! kinds. The same seed always gives the same file (SplitMix64, no platform dependence), so a
//! disagreement is reproduced from its seed alone.

use std::fmt::Write as _;

use wirespeed_model::stats::SplitMix64;

/// The draws' generator: the model's SplitMix64, whose output depends on the seed alone, with
/// the few shapes of draw a lab needs.
#[derive(Debug, Clone)]
pub struct Rng(SplitMix64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(SplitMix64::new(seed))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        self.0.next_f64()
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Evenly spread on a log scale between `lo` and `hi`.
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + self.unit() * (hi.ln() - lo.ln())).exp()
    }

    /// One of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.range(0, items.len() as u64 - 1) as usize]
    }
}

/// What the draws may configure.
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// Slowest link rate, bit/s.
    pub min_rate_bits_per_second: f64,
    /// Fastest link rate, bit/s.
    pub max_rate_bits_per_second: f64,
    /// Longest one-way propagation delay of a link, microseconds.
    pub max_delay_us: u64,
    /// Most routers on a path.
    pub max_routers: u64,
    /// Probability that a link of a path is half duplex (both ends) or mismatched.
    pub duplex_chance: f64,
    /// Whether routers may carry forwarding costs.
    pub router_costs: bool,
}

impl Default for Limits {
    /// The ranges: 56 kbit/s to 10 Gbit/s, 1 to 4 routers.
    fn default() -> Limits {
        Limits {
            min_rate_bits_per_second: 56e3,
            max_rate_bits_per_second: 10e9,
            max_delay_us: 20_000,
            max_routers: 4,
            duplex_chance: 0.1,
            router_costs: true,
        }
    }
}

/// A drawn path lab: `h1 - r1 - ... - rk - h2`, sometimes with a side host `h3` on a router.
#[derive(Debug, Clone, PartialEq)]
pub struct PathDraw {
    /// The seed it came from.
    pub seed: u64,
    /// The lab's name (`rp` and the seed in hex, cut to fit a lab name).
    pub name: String,
    /// The topology file.
    pub toml: String,
    /// Routers on the path.
    pub routers: u64,
}

/// Rates a half-duplex end can run CSMA/CD at in the lab (802.3's half-duplex speeds).
const CSMA_RATES: &[&str] = &["10M", "100M"];

fn rate_words(bps: f64) -> String {
    // Whole kbit/s: every rate the file gives is exact.
    format!("{}k", (bps / 1e3).round().max(1.0) as u64)
}

fn write_link(out: &mut String, rng: &mut Rng, a: &str, b: &str, limits: &Limits) {
    let _ = writeln!(out, "\n[[link]]\na = \"{a}\"\nb = \"{b}\"");
    let duplex = rng.chance(limits.duplex_chance);
    if duplex {
        // CSMA/CD on a short cable; one end in two is the mismatch of seed 003 §4.4.
        let _ = writeln!(out, "rate = \"{}\"", rng.pick(CSMA_RATES));
        let _ = writeln!(out, "length_m = {}", rng.range(2, 100));
        if rng.chance(0.5) {
            let _ = writeln!(out, "duplex = \"half\"");
        } else {
            let _ = writeln!(out, "duplex_a = \"half\"\nduplex_b = \"full\"");
        }
        return;
    }
    let rate = rng.log_uniform(
        limits.min_rate_bits_per_second,
        limits.max_rate_bits_per_second,
    );
    // Serial lines are the slow WAN links of the seeds' era.
    let serial = rate <= 45e6 && rng.chance(0.3);
    let other = rng.chance(0.15).then(|| {
        // An asymmetric line: the other direction 1/8 to 8 times as fast.
        (rate * rng.log_uniform(0.125, 8.0)).clamp(
            limits.min_rate_bits_per_second,
            limits.max_rate_bits_per_second,
        )
    });
    match other {
        Some(other) => {
            let _ = writeln!(
                out,
                "rate_ab = \"{}\"\nrate_ba = \"{}\"",
                rate_words(rate),
                rate_words(other)
            );
        }
        None => {
            let _ = writeln!(out, "rate = \"{}\"", rate_words(rate));
        }
    }
    // The emulator holds what a link has in flight in memory, as minimum frames of about
    // 1.6 KB each, within a budget for the whole lab (`topology::FLIGHT_BUDGET_BYTES`): keep a
    // fast link's delay short enough that five links fit.
    let fastest = if let Some(other) = other {
        rate.max(other)
    } else {
        rate
    };
    let longest = ((1.5e13 / fastest) as u64).min(limits.max_delay_us);
    let _ = writeln!(out, "delay = \"{}us\"", rng.range(0, longest));
    if serial {
        let _ = writeln!(out, "layer = \"serial\"");
    }
    if rng.chance(0.3) {
        let _ = writeln!(out, "queue_bytes = \"{}KiB\"", rng.range(16, 1024));
    } else {
        let _ = writeln!(out, "queue = {}", rng.range(10, 1000));
    }
    match rng.range(0, 5) {
        0 => {
            let _ = writeln!(out, "aqm = \"codel\"");
        }
        1 => {
            let _ = writeln!(out, "aqm = \"fq_codel\"");
        }
        _ => {}
    }
    if rng.chance(0.1) {
        let _ = writeln!(out, "ipv6 = false");
    }
    if rng.chance(0.1) {
        let _ = writeln!(out, "hidden_hops = {}", rng.range(1, 2));
    }
}

fn write_router(out: &mut String, rng: &mut Rng, name: &str, limits: &Limits) {
    let _ = writeln!(out, "\n[[router]]\nname = \"{name}\"");
    if limits.router_costs && rng.chance(0.4) {
        let _ = writeln!(
            out,
            "forward = {{ fixed = \"{}us\", per_byte = \"{}ns\" }}",
            rng.range(0, 600),
            rng.range(0, 100)
        );
    }
    if limits.router_costs && rng.chance(0.3) {
        let _ = writeln!(
            out,
            "answer = {{ fixed = \"{}us\", per_byte = \"{}ns\" }}",
            rng.range(0, 800),
            rng.range(0, 1500)
        );
    }
}

/// A path lab drawn from `seed`: 1 to `max_routers` routers in a chain between `h1` and `h2`,
/// and in one draw of four a third host `h3` hanging off one of the routers.
pub fn path_lab(seed: u64, limits: &Limits) -> PathDraw {
    let mut rng = Rng::new(seed);
    let routers = rng.range(1, limits.max_routers.max(1));
    let name = format!("rp{:x}", seed & 0xff_ffff);
    let mut toml = format!(
        "# drawn by wirespeed_lab::truth::random::path_lab, seed {seed}\nname = \"{name}\"\n"
    );
    for h in ["h1", "h2"] {
        let _ = writeln!(toml, "\n[[host]]\nname = \"{h}\"");
    }
    let side = rng.chance(0.25);
    if side {
        let _ = writeln!(toml, "\n[[host]]\nname = \"h3\"");
    }
    for r in 1..=routers {
        write_router(&mut toml, &mut rng, &format!("r{r}"), limits);
    }
    let mut previous = "h1".to_string();
    for r in 1..=routers {
        let next = format!("r{r}");
        write_link(&mut toml, &mut rng, &previous, &next, limits);
        previous = next;
    }
    write_link(&mut toml, &mut rng, &previous, "h2", limits);
    if side {
        let at = format!("r{}", rng.range(1, routers));
        write_link(&mut toml, &mut rng, &at, "h3", limits);
    }
    PathDraw {
        seed,
        name,
        toml,
        routers,
    }
}

/// A fault a fleet draw puts on one host's link.
#[derive(Debug, Clone, PartialEq)]
pub enum FleetFault {
    /// The host's link runs at a tenth of the others' rate (a port that negotiated down).
    SlowLink {
        /// The host.
        host: String,
    },
    /// The host's end is half duplex, the router's full (seed 003 §4.4).
    DuplexMismatch {
        /// The host.
        host: String,
    },
    /// The host's link loses frames at random both ways (a bad cable).
    Loss {
        /// The host.
        host: String,
        /// The probability per frame.
        loss: f64,
    },
}

impl FleetFault {
    /// The faulty host.
    pub fn host(&self) -> &str {
        match self {
            FleetFault::SlowLink { host }
            | FleetFault::DuplexMismatch { host }
            | FleetFault::Loss { host, .. } => host,
        }
    }
}

/// A fleet drawn from a seed: hosts `h1..hN` each on its own link to one router `sw`.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetDraw {
    /// The seed it came from.
    pub seed: u64,
    /// The lab's name.
    pub name: String,
    /// The topology file.
    pub toml: String,
    /// The hosts, in order.
    pub hosts: Vec<String>,
    /// The healthy hosts' link rate, bit/s.
    pub rate_bits_per_second: u64,
    /// The faults, each on a different host.
    pub faults: Vec<FleetFault>,
}

/// A fleet of 4 to `max_hosts` hosts around one router with `faults` faults (at most
/// hosts - 2, so that healthy pairs remain), each on a different host, kinds drawn.
pub fn fleet_lab(seed: u64, faults: usize, max_hosts: u64) -> FleetDraw {
    let mut rng = Rng::new(seed);
    let hosts_n = rng.range(4, max_hosts.max(4)).max(faults as u64 + 2);
    let rate: u64 = *rng.pick(&[10_000_000u64, 100_000_000]);
    let name = format!("rf{:x}", seed & 0xff_ffff);
    let hosts: Vec<String> = (1..=hosts_n).map(|i| format!("h{i}")).collect();
    // Faulty hosts: a random choice without repeats.
    let mut order: Vec<usize> = (0..hosts.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.range(0, i as u64) as usize);
    }
    let mut drawn = Vec::new();
    for &h in order.iter().take(faults) {
        let host = hosts[h].clone();
        drawn.push(match rng.range(0, 2) {
            0 => FleetFault::SlowLink { host },
            1 => FleetFault::DuplexMismatch { host },
            _ => FleetFault::Loss {
                host,
                loss: *rng.pick(&[0.1, 0.2]),
            },
        });
    }
    let mut toml = format!(
        "# drawn by wirespeed_lab::truth::random::fleet_lab, seed {seed}, {faults} fault(s)\nname = \"{name}\"\n"
    );
    for h in &hosts {
        let _ = writeln!(toml, "\n[[host]]\nname = \"{h}\"");
    }
    let _ = writeln!(toml, "\n[[router]]\nname = \"sw\"");
    for h in &hosts {
        let fault = drawn.iter().find(|f| f.host() == h);
        let _ = writeln!(toml, "\n[[link]]\na = \"{h}\"\nb = \"sw\"");
        // A CSMA/CD link is a short cable; the others get 0.5 ms each way, so that a lossy
        // link's round trips are long enough for TCP to feel its losses (at the lab's tens of
        // microseconds a 10% loss costs TCP almost nothing).
        if matches!(fault, Some(FleetFault::DuplexMismatch { .. })) {
            let _ = writeln!(toml, "length_m = 20");
        } else {
            let _ = writeln!(toml, "delay = \"500us\"");
        }
        match fault {
            Some(FleetFault::SlowLink { .. }) => {
                let _ = writeln!(toml, "rate = \"{}k\"", rate / 10_000);
            }
            Some(FleetFault::DuplexMismatch { .. }) => {
                let _ = writeln!(
                    toml,
                    "rate = \"{}k\"\nduplex_a = \"half\"\nduplex_b = \"full\"",
                    rate / 1000
                );
            }
            Some(FleetFault::Loss { loss, .. }) => {
                let _ = writeln!(
                    toml,
                    "rate = \"{}k\"\nloss = {loss}\nseed = {}",
                    rate / 1000,
                    rng.range(1, 1 << 20)
                );
            }
            None => {
                let _ = writeln!(toml, "rate = \"{}k\"", rate / 1000);
            }
        }
    }
    FleetDraw {
        seed,
        name,
        toml,
        hosts,
        rate_bits_per_second: rate,
        faults: drawn,
    }
}
