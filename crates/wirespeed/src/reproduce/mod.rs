//! `wirespeed reproduce NAME`: a seed's experiment end to end, in the lab or the simulator,
//! with the paper's figures beside ours and a verdict per row.
//!
//! Why a command and not a script: a reproduction is only worth something if the ground truth
//! it configured (link rates, costs, station counts) is written beside what was measured, and
//! if every comparison states its tolerance and the reason for its verdict. Each reproduction
//! reuses the library (envelope arithmetic, the CSMA/CD simulator, the lab's lifecycle) where
//! the logic is public (this crate's own library included: `throughput::measure` for a loopback
//! TCP test, `model::compare`), and runs this same executable as a subprocess with `--json`
//! where a run needs its own process or namespace (`serve`, `tcp` and `probe` inside a lab);
//! each row's `method` says which.
//!
//! Modules: one per experiment: `boggs` (seed 000 in the simulator) and `boggs_lab` (on an
//! emulated segment), `bellovin/` (seed 001), `envelope` (seeds 002 and 004), `duplex` (seed
//! 003's duplex mismatch), `vj` (seed 004's socket buffers); beside them `tolerance` (a figure
//! judged against its tolerance), `metrics` (`--metrics-file`) and `html` (the report view);
//! this file holds the flags, the experiment runner and the text view.

pub(crate) mod html;

use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};
use wirespeed_model::units::parse_duration;
use wirespeed_report::{Document, Render, Table};

use crate::common::data::LabFile;
use crate::common::output::{self, OutputArgs};

mod bellovin;
mod boggs;
mod boggs_lab;
mod duplex;
mod envelope;
mod metrics;
mod tolerance;
mod vj;

/// Runs a seed's experiment end to end and prints the paper's table beside ours.
#[derive(Debug, Args)]
#[command(
    after_long_help = "Each row: the ground truth this run configured, the seed's figure, ours, \
the tolerance applied, and a verdict (ok = within it, OUTSIDE = not, imprecise = the run's own \
interval is wider than the tolerance, - = the seed gives no figure or measured another machine), \
then the reason. A lab reproduction needs root and brings up and \
takes down only its own lab. bench/reproduce.sh runs them all."
)]
pub(crate) struct ReproduceArgs {
    /// The reproduction (see --list).
    #[arg(value_enum, required_unless_present = "list", value_name = "NAME")]
    name: Option<Name>,

    /// List the reproductions, their seeds and what they need (lab: root; sim: nothing).
    #[arg(long, conflicts_with = "name")]
    list: bool,

    /// envelope: length of the loopback and of the lab TCP transfer (default 2 s);
    /// boggs: simulated time per point (default 10 s, the seed's window);
    /// duplex-mismatch: the cap on each transfer (default 30 s): a transfer that stalls is
    /// stopped there and reported with the bytes that arrived in that time.
    #[arg(long, short = 't', value_name = "DURATION", value_parser = parse_duration)]
    time: Option<Duration>,

    /// duplex-mismatch: bytes of each TCP transfer (default 2 MB; the seed moved 50 MB);
    /// vj-buffers: bytes per point (default 1 MB; the seed: four of 8 MB).
    #[arg(
        long = "bytes",
        short = 'n',
        visible_alias = "num",
        alias = "size",
        value_name = "BYTES"
    )]
    size: Option<wirespeed_model::ByteSize>,

    /// duplex-mismatch: transfers each way per TCP (default 1), to show the run-to-run spread.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=10))]
    runs: Option<u32>,

    /// envelope: skip the lab part (the lab needs root and takes a few seconds).
    #[arg(long, conflicts_with = "lab")]
    no_lab: bool,

    /// boggs: also run the lab form (root): `wirespeed load --raw` on labs/boggs-24.toml, one
    /// agent per station, each row beside the simulator's for the same segment (about 6 s per
    /// test; with -t the measured window per test, default 2 s).
    #[arg(long)]
    lab: bool,

    /// boggs --lab: host counts of the lab series (default 1,2,4,8,16,24).
    #[arg(long, value_name = "LIST", value_parser = crate::common::flags::parse_hosts, requires = "lab")]
    lab_hosts: Option<crate::common::flags::HostList>,

    /// bellovin: probe this chain instead of labs/seed-001-path.toml (its first two
    /// [[host]]s are the ends; every hop is checked against its configured costs).
    #[arg(long, value_name = "FILE")]
    topology: Option<PathBuf>,

    /// Print one JSON document (schema "wirespeed.reproduce.v1") instead of text.
    #[arg(long, short = 'J')]
    json: bool,

    /// Also write the figures as Prometheus text to FILE (replaced whole, for node_exporter's
    /// textfile collector): ours beside the paper's, in base units, and the rows' verdicts.
    #[arg(long, value_name = "FILE", value_parser = crate::common::metrics::output_file)]
    metrics_file: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum Name {
    /// Seeds 002/004: loopback ceiling, envelope figures, a 10 Mbit/s lab link.
    Envelope,
    /// Seed 000: bit and packet rate vs N on a simulated 10 Mbit/s Ethernet.
    Boggs,
    /// Seed 003: TCP each way across a duplex-mismatched and a matched 10 Mbit/s link.
    DuplexMismatch,
    /// Seed 001: probe a path built from Table 1, then flag a misconfigured board.
    Bellovin,
    /// Seed 004: the socket-buffer sweep over 1..12 packets on an emulated 10 Mbit/s link.
    VjBuffers,
}

struct Entry {
    name: Name,
    seeds: &'static str,
    needs: &'static str,
    what: &'static str,
}

const ENTRIES: [Entry; 5] = [
    Entry {
        name: Name::Envelope,
        seeds: "002, 004",
        needs: "loopback; lab (root) for the 10 Mbit/s link",
        what: "loopback TCP ceiling, envelope figures for 10M/100M/1G, TCP across labs/two-host-10m.toml vs 9.415 Mbit/s",
    },
    Entry {
        name: Name::Boggs,
        seeds: "000",
        needs: "simulator; --lab: lab (root)",
        what: "bit rate, packet rate, utilisation and delay vs N and packet length beside the seed's figures; --lab: load --raw on labs/boggs-24.toml beside the simulator",
    },
    Entry {
        name: Name::DuplexMismatch,
        seeds: "003",
        needs: "lab (root)",
        what: "TCP each way across labs/duplex-mismatch.toml (this host's TCP, the 1990s profile, labs/duplex-mismatch-1990s.toml, and the seed's hosts, labs/duplex-mismatch-1990s-hosts.toml) and labs/duplex-matched.toml, rates and counters vs Tables 6 and 7",
    },
    Entry {
        name: Name::Bellovin,
        seeds: "001",
        needs: "lab (root)",
        what: "probe across labs/seed-001-path.toml, fitted costs vs Table 1, then the misconfigured board with model compare",
    },
    Entry {
        name: Name::VjBuffers,
        seeds: "004",
        needs: "lab (root)",
        what: "sweep send = receive buffer 1..12 packets across labs/seed-004-sun3.toml (3/60 host costs) and labs/two-host-10m.toml vs the LANCE column and the 1,104 KB/s ceiling",
    },
];

impl Name {
    fn entry(self) -> &'static Entry {
        ENTRIES
            .iter()
            .find(|e| e.name == self)
            .expect("every name has an entry")
    }
    fn as_str(self) -> &'static str {
        match self {
            Name::Envelope => "envelope",
            Name::Boggs => "boggs",
            Name::DuplexMismatch => "duplex-mismatch",
            Name::Bellovin => "bellovin",
            Name::VjBuffers => "vj-buffers",
        }
    }
}

/// Whether a row's figure is within its tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Verdict {
    /// Within the stated tolerance.
    Within,
    /// Outside it (the `why` says by how much and what we think the reason is).
    Outside,
    /// No tolerance applies (the seed gives no figure, or it is a different machine).
    NotCompared,
    /// The run's own interval is wider than the tolerance: it cannot say within or outside
    /// (`tolerance::judge`).
    Imprecise,
}

impl Verdict {
    pub(crate) fn of(ok: bool) -> Verdict {
        if ok {
            Verdict::Within
        } else {
            Verdict::Outside
        }
    }
    fn label(self) -> &'static str {
        match self {
            Verdict::Within => "ok",
            Verdict::Outside => "OUTSIDE",
            Verdict::NotCompared => "-",
            Verdict::Imprecise => "imprecise",
        }
    }
}

/// One compared quantity.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Row {
    /// What is compared.
    pub(crate) quantity: String,
    /// Unit of `configured`, `paper` and `ours`.
    pub(crate) unit: String,
    /// The ground truth this run configured (or the model's figure for it), if any.
    pub(crate) configured: Option<f64>,
    /// The seed's figure, if it states one.
    pub(crate) paper: Option<f64>,
    /// What we measured or simulated.
    pub(crate) ours: Option<f64>,
    /// The tolerance applied, in words.
    pub(crate) tolerance: String,
    pub(crate) verdict: Verdict,
    /// Why the verdict is what it is.
    pub(crate) why: String,
}

/// One of the seed's tables (or figures) beside ours.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Comparison {
    pub(crate) title: String,
    /// Where in the seed the figures come from.
    pub(crate) source: String,
    /// How our column was produced (library call or subprocess, and its command line).
    pub(crate) method: String,
    pub(crate) rows: Vec<Row>,
}

/// A configured setting of the experiment (the ground truth).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Setting {
    pub(crate) name: String,
    pub(crate) value: String,
}

pub(crate) fn setting(name: &str, value: impl Into<String>) -> Setting {
    Setting {
        name: name.to_string(),
        value: value.into(),
    }
}

/// A finished reproduction.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Reproduction {
    pub(crate) name: Name,
    pub(crate) seeds: std::borrow::Cow<'static, str>,
    pub(crate) ground_truth: Vec<Setting>,
    pub(crate) comparisons: Vec<Comparison>,
    pub(crate) notes: Vec<String>,
    pub(crate) rows: usize,
    pub(crate) within: usize,
    pub(crate) outside: usize,
    /// Rows whose interval was wider than their tolerance (issue 31); left out when none, so
    /// that reproductions which judge no interval keep their documents.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub(crate) imprecise: usize,
}

impl Reproduction {
    pub(crate) fn new(
        name: Name,
        ground_truth: Vec<Setting>,
        comparisons: Vec<Comparison>,
        notes: Vec<String>,
    ) -> Reproduction {
        let all = comparisons.iter().flat_map(|c| &c.rows);
        let count = |v: Verdict| all.clone().filter(|r| r.verdict == v).count();
        Reproduction {
            name,
            seeds: name.entry().seeds.into(),
            rows: all.clone().count(),
            within: count(Verdict::Within),
            outside: count(Verdict::Outside),
            imprecise: count(Verdict::Imprecise),
            ground_truth,
            comparisons,
            notes,
        }
    }
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Shared options handed to each reproduction.
pub(crate) struct Options {
    pub(crate) time: Option<Duration>,
    pub(crate) size: Option<u64>,
    pub(crate) runs: Option<u32>,
    pub(crate) lab: bool,
    /// boggs --lab: host counts.
    pub(crate) lab_hosts: Vec<usize>,
    pub(crate) topology: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
struct Params {
    name: Option<Name>,
    time_seconds: Option<f64>,
    size_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runs: Option<u32>,
    lab: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    topology: Option<PathBuf>,
}

#[derive(Debug, Serialize)]
struct ListEntry {
    name: &'static str,
    seeds: &'static str,
    needs: &'static str,
    what: &'static str,
}

#[derive(Debug, Serialize)]
struct List {
    reproductions: Vec<ListEntry>,
}

impl Render for List {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        for e in &self.reproductions {
            writeln!(out, "{:<16} seed {:<9} needs {}", e.name, e.seeds, e.needs)?;
            writeln!(out, "{:<16} {}", "", e.what)?;
        }
        Ok(())
    }
}

pub(crate) fn run(args: ReproduceArgs) -> anyhow::Result<()> {
    let output = OutputArgs {
        json: args.json,
        rate_format: wirespeed_model::RateFormat::Adaptive,
        metrics_file: args.metrics_file.clone(),
    };
    let params = Params {
        name: args.name,
        time_seconds: args.time.map(|t| t.as_secs_f64()),
        size_bytes: args.size.map(|s| s.bytes()),
        lab: if args.name == Some(Name::Boggs) {
            args.lab
        } else {
            !args.no_lab
        },
        topology: args.topology.clone(),
        runs: args.runs,
    };
    let Some(name) = args.name else {
        let list = List {
            reproductions: ENTRIES
                .iter()
                .map(|e| ListEntry {
                    name: e.name.as_str(),
                    seeds: e.seeds,
                    needs: e.needs,
                    what: e.what,
                })
                .collect(),
        };
        let doc = Document::new("reproduce", params, list);
        return output::print(&output, &doc).context("writing the result");
    };
    if args.time.is_some() && !matches!(name, Name::Envelope | Name::Boggs | Name::DuplexMismatch) {
        bail!(
            "--time applies to envelope, boggs and duplex-mismatch, not {}; leave it out",
            name.as_str()
        );
    }
    if args.size.is_some() && !matches!(name, Name::DuplexMismatch | Name::VjBuffers) {
        bail!(
            "-n/--bytes applies to duplex-mismatch and vj-buffers, not {}; leave it out",
            name.as_str()
        );
    }
    if args.runs.is_some() && name != Name::DuplexMismatch {
        bail!(
            "--runs applies to duplex-mismatch, not {}; leave it out",
            name.as_str()
        );
    }
    if let Some(size) = args.size
        && !(10_000..=50_000_000).contains(&size.bytes())
    {
        bail!("-n/--bytes must be between 10kB and 50MB (the seed's file)");
    }
    if args.no_lab && name != Name::Envelope {
        bail!(
            "--no-lab applies to envelope (the only one with an optional lab part), not {}; leave it out",
            name.as_str()
        );
    }
    if args.topology.is_some() && name != Name::Bellovin {
        bail!(
            "--topology applies to bellovin, not {}; leave it out",
            name.as_str()
        );
    }
    if args.lab && name != Name::Boggs {
        bail!(
            "--lab applies to boggs (the others run in the lab already or have --no-lab), not {}; leave it out",
            name.as_str()
        );
    }
    if let Some(t) = args.time
        && (t < Duration::from_millis(100) || t > Duration::from_secs(60))
    {
        bail!("--time must be between 100ms and 60s");
    }
    let options = Options {
        time: args.time,
        size: args.size.map(|s| s.bytes()),
        lab: if name == Name::Boggs {
            args.lab
        } else {
            !args.no_lab
        },
        lab_hosts: args
            .lab_hosts
            .map_or_else(|| boggs_lab::HOSTS.to_vec(), |h| h.0),
        topology: args.topology,
        runs: args.runs,
    };
    if !args.json {
        // The progress line names the path that will really be measured.
        let what = match &options.topology {
            Some(file) => name
                .entry()
                .what
                .replace("labs/seed-001-path.toml", &file.display().to_string()),
            None => name.entry().what.to_string(),
        };
        eprintln!(
            "reproducing {} (seed {}): {what}",
            name.as_str(),
            name.entry().seeds,
        );
    }
    let result = match name {
        Name::Envelope => envelope::run(&options)?,
        Name::Boggs => boggs::run(&options)?,
        Name::DuplexMismatch => duplex::run(&options)?,
        Name::Bellovin => bellovin::run(&options)?,
        Name::VjBuffers => vj::run(&options)?,
    };
    let doc = Document::new("reproduce", params, result);
    output::print(&output, &doc).context("writing the result")
}

/// A figure for a text cell: up to 4 significant digits, thousands grouped.
pub(crate) fn figure(v: Option<f64>) -> String {
    match v {
        None => "-".into(),
        Some(0.0) => "0".into(),
        Some(v) => {
            let digits = (4 - 1 - v.abs().log10().floor() as i32).clamp(0, 6) as usize;
            let s = format!("{v:.digits$}");
            let (int, frac) = s.split_once('.').map_or((s.as_str(), ""), |(i, f)| (i, f));
            let grouped = int
                .trim_start_matches('-')
                .parse::<u64>()
                .map_or_else(|_| int.to_string(), wirespeed_model::units::group_digits);
            let sign = if v < 0.0 { "-" } else { "" };
            if frac.is_empty() {
                format!("{sign}{grouped}")
            } else {
                format!("{sign}{grouped}.{frac}")
            }
        }
    }
}

impl Render for Reproduction {
    fn render(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(
            out,
            "reproduce {} (seed {})",
            self.name.as_str(),
            self.seeds
        )?;
        writeln!(out, "ground truth configured:")?;
        for s in &self.ground_truth {
            writeln!(out, "  {:<34} {}", s.name, s.value)?;
        }
        for c in &self.comparisons {
            writeln!(out)?;
            writeln!(out, "{}  [{}]", c.title, c.source)?;
            writeln!(out, "  ours: {}", c.method)?;
            let mut t = Table::new([
                "quantity",
                "unit",
                "configured",
                "paper",
                "ours",
                "tolerance",
                "verdict",
            ]);
            for r in &c.rows {
                t.row([
                    r.quantity.clone(),
                    r.unit.clone(),
                    figure(r.configured),
                    figure(r.paper),
                    figure(r.ours),
                    r.tolerance.clone(),
                    r.verdict.label().to_string(),
                ]);
            }
            write!(out, "{t}")?;
            // Each reason once, after the first row it explains.
            let mut said: Vec<&str> = Vec::new();
            for r in c.rows.iter().filter(|r| !r.why.is_empty()) {
                if !said.contains(&r.why.as_str()) {
                    writeln!(out, "  {}: {}", r.quantity, r.why)?;
                    said.push(&r.why);
                }
            }
        }
        if !self.notes.is_empty() {
            writeln!(out)?;
            for n in &self.notes {
                writeln!(out, "note: {n}")?;
            }
        }
        let imprecise = if self.imprecise > 0 {
            format!(", {} not measured precisely enough", self.imprecise)
        } else {
            String::new()
        };
        writeln!(
            out,
            "\n{} rows: {} within tolerance, {} outside{imprecise}, {} not compared",
            self.rows,
            self.within,
            self.outside,
            self.rows - self.within - self.outside - self.imprecise
        )
    }
}

/// This executable, for the parts whose logic lives only in the binary.
pub(crate) fn exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe().context("finding this executable to run its subcommands")
}

/// Runs `wirespeed ARGS --json` inside a lab's `namespace` (the one reason to run a command
/// as a process: a namespace is entered by a process) and decodes its document into the types
/// that wrote it; stops it (SIGTERM to its pid) if it runs longer than `limit`.
pub(crate) fn run_json<T: serde::de::DeserializeOwned>(
    namespace: &str,
    args: &[String],
    limit: Duration,
) -> anyhow::Result<T> {
    run_json_watching(namespace, args, limit, &mut |_| {})
}

/// [`run_json`], calling `watch` with the child's pid every 20 ms while it runs (to sample
/// what /proc says of it).
pub(crate) fn run_json_watching<T: serde::de::DeserializeOwned>(
    namespace: &str,
    args: &[String],
    limit: Duration,
    watch: &mut dyn FnMut(u32),
) -> anyhow::Result<T> {
    let exe = exe()?;
    // `ip netns exec` execs the command, so the child's pid is wirespeed's own.
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", namespace]).arg(&exe);
    cmd.args(args)
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .with_context(|| format!("running wirespeed {}", args.join(" ")))?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        watch(child.id());
        if std::time::Instant::now() > deadline {
            wirespeed_lab::sys::terminate(child.id());
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    match status {
        None => bail!(
            "wirespeed {} took longer than {} s and was stopped",
            args.join(" "),
            limit.as_secs()
        ),
        Some(s) if !s.success() => bail!(
            "wirespeed {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&err).trim()
        ),
        Some(_) => {
            let text = String::from_utf8_lossy(&out);
            wirespeed_report::decode::from_str(&text)
                .with_context(|| format!("reading the document of wirespeed {}", args.join(" ")))
        }
    }
}

/// A lab built from a topology file for one reproduction, taken down on drop (only this one).
pub(crate) struct LabGuard {
    pub(crate) name: String,
    pub(crate) record: wirespeed_lab::lifecycle::LabRecord,
}

impl LabGuard {
    pub(crate) fn up(file: &LabFile) -> anyhow::Result<LabGuard> {
        LabGuard::up_topology(file.topology()?, file.path())
    }

    /// A lab of `topology` (read from, or derived from, `file`, which names it).
    pub(crate) fn up_topology(
        topology: wirespeed_lab::Topology,
        file: &Path,
    ) -> anyhow::Result<LabGuard> {
        use wirespeed_lab::lifecycle::{self, Detach};
        wirespeed_lab::sys::require_net_admin()?;
        let running = lifecycle::up(topology, file, Detach::DiesWithParent)?;
        let record = match lifecycle::record(&running.name) {
            Ok(r) => r,
            Err(e) => {
                let _ = lifecycle::down(&running.name);
                return Err(e.into());
            }
        };
        Ok(LabGuard {
            name: running.name,
            record,
        })
    }

    pub(crate) fn namespace(&self, node: &str) -> anyhow::Result<String> {
        Ok(self.record.namespace(node)?.to_string())
    }

    /// The first IPv4 address of `node`.
    pub(crate) fn ipv4(&self, node: &str) -> anyhow::Result<String> {
        self.address(node, false)
    }

    /// The first IPv4 (or, with `ipv6`, IPv6) address of `node`.
    pub(crate) fn address(&self, node: &str, ipv6: bool) -> anyhow::Result<String> {
        let family = if ipv6 { "IPv6" } else { "IPv4" };
        let n = self
            .record
            .nodes
            .iter()
            .find(|n| n.name == node)
            .with_context(|| format!("lab {} has no node {node}", self.name))?;
        n.addresses
            .iter()
            .filter_map(|a| a.split_whitespace().nth(1))
            .find(|a| a.contains(':') == ipv6 && !a.starts_with("fe80"))
            .and_then(|a| a.split('/').next())
            .map(str::to_string)
            .with_context(|| format!("node {node} has no {family} address"))
    }

    /// Counters of every port, freshly written by the emulator.
    pub(crate) fn ports(&self) -> anyhow::Result<Vec<wirespeed_lab::PortStatus>> {
        // The emulator writes its status every 200 ms: wait for one written after now.
        let (_, first) = wirespeed_lab::lifecycle::status(&self.name)?;
        for _ in 0..20 {
            std::thread::sleep(Duration::from_millis(100));
            let (_, now) = wirespeed_lab::lifecycle::status(&self.name)?;
            if now.sequence > first.sequence + 1 {
                return Ok(now.ports);
            }
        }
        Ok(wirespeed_lab::lifecycle::status(&self.name)?.1.ports)
    }

    /// The text of `/proc/net/<file>` as `node`'s namespace sees it (its own TCP counters).
    pub(crate) fn proc_net(&self, node: &str, file: &str) -> anyhow::Result<String> {
        let ns = self.namespace(node)?;
        let out = Command::new("ip")
            .args(["netns", "exec", &ns, "cat"])
            .arg(format!("/proc/net/{file}"))
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .with_context(|| format!("reading /proc/net/{file} in {node}"))?;
        if !out.status.success() {
            bail!("reading /proc/net/{file} in {node} failed: {}", out.status);
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// An agent (`serve -1`) in `node`'s namespace on its IPv4 address: the child and the
    /// address it listens on.
    fn agent(&self, node: &str) -> anyhow::Result<(std::process::Child, String)> {
        let ns = self.namespace(node)?;
        let addr = self.ipv4(node)?;
        let mut agent = Command::new("ip")
            .args(["netns", "exec", &ns])
            .arg(exe()?)
            .args(["serve", "-1", "-p", "0", "-B", &addr])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting the agent in the lab")?;
        let line = {
            let stdout = agent.stdout.take().expect("piped");
            let mut line = String::new();
            BufReader::new(stdout.take(4096)).read_line(&mut line).ok();
            line
        };
        match line
            .split_whitespace()
            .find(|w| w.contains(&addr) && w.contains(':'))
        {
            Some(listening) => Ok((agent, listening.to_string())),
            None => {
                wirespeed_lab::sys::terminate(agent.id());
                let _ = agent.wait();
                bail!("the agent in {node} did not say where it listens: {line:?}");
            }
        }
    }

    /// A TCP test from a client in `from` to a one-off agent in `to`: its document.
    pub(crate) fn tcp(
        &self,
        from: &str,
        to: &str,
        client_args: &[String],
        limit: Duration,
    ) -> anyhow::Result<TcpDocument> {
        let from_ns = self.namespace(from)?;
        let (agent, listening) = self.agent(to)?;
        let mut args = vec!["tcp".to_string(), listening, "-i".into(), "0".into()];
        args.extend_from_slice(client_args);
        let result = run_json(&from_ns, &args, limit);
        stop_agent(agent);
        result
    }

    /// `bytes` over TCP from `from` to `to`, stopped at `cap` if it has not finished: what the
    /// receiver got, from its own running count. A link that stalls for longer than the cap
    /// (a duplex mismatch does, for tens of seconds) gives a row, not an error.
    ///
    /// The receiver is the client (`tcp -R` in `to`, the agent sending from `from`), so the
    /// count comes from the client's interval lines (`--json-stream`, every 100 ms) as they
    /// are printed; nothing waits on the control connection's results exchange, which crosses
    /// the same stalled link.
    pub(crate) fn tcp_capped(
        &self,
        from: &str,
        to: &str,
        bytes: u64,
        cap: Duration,
        client_flags: &[&str],
    ) -> anyhow::Result<Capped> {
        use std::sync::mpsc::{RecvTimeoutError, channel};
        use std::time::Instant;
        let to_ns = self.namespace(to)?;
        let (agent, listening) = self.agent(from)?;
        let spawned = Command::new("ip")
            .args(["netns", "exec", &to_ns])
            .arg(exe()?)
            .args(["tcp", &listening, "-R", "-n", &format!("{bytes}B")])
            .args(["-i", "100ms", "--json-stream"])
            .args(client_flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut client = match spawned {
            Ok(c) => c,
            Err(e) => {
                stop_agent(agent);
                return Err(e).context("starting the TCP client in the lab");
            }
        };
        let stdout = client.stdout.take().expect("piped");
        let stderr = client.stderr.take().expect("piped");
        let (tx, rx) = channel::<String>();
        let out_reader = std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                // One line is one interval (a few hundred bytes); a longer one is cut and
                // then fails to parse.
                let mut line = String::new();
                match (&mut r).take(1 << 20).read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let err_reader = std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = stderr.take(64 << 10).read_to_end(&mut v);
            v
        });
        let deadline = Instant::now() + cap;
        // Once every byte has arrived, the client has this long to exchange results and exit.
        let grace = Duration::from_secs(2);
        let mut got = Capped {
            bytes: 0,
            seconds: 0.0,
            complete: false,
            longest_gap: 0.0,
            intervals: 0,
            peer_window_bytes: None,
        };
        let mut gap = 0.0f64;
        let mut until = deadline;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    // The stream's last line is the whole document, not an interval: it carries
                    // the sender's TCP_INFO, whose window is the one the receiver advertised.
                    let Ok(IntervalLine { interval: iv }) =
                        wirespeed_report::decode::from_str::<IntervalLine>(&line)
                    else {
                        if let Ok(doc) = wirespeed_report::decode::from_str::<TcpDocument>(&line) {
                            got.peer_window_bytes = sender_window(&doc);
                        }
                        continue;
                    };
                    let (start, end) = (iv.start_seconds, iv.end_seconds);
                    let n = iv.sum_received.as_ref().map_or(0, |s| s.bytes);
                    got.intervals += 1;
                    got.bytes = got.bytes.saturating_add(n);
                    got.seconds = end;
                    if n == 0 {
                        gap += (end - start).max(0.0);
                        got.longest_gap = got.longest_gap.max(gap);
                    } else {
                        gap = 0.0;
                    }
                    if got.bytes >= bytes && !got.complete {
                        got.complete = true;
                        until = (Instant::now() + grace).min(deadline);
                    }
                }
                Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        // A client still running is stuck on the stalled link: stop it (SIGTERM, then KILL).
        let exited = wait_for(&mut client, Duration::ZERO)?;
        if exited.is_none() {
            wirespeed_lab::sys::terminate(client.id());
            if wait_for(&mut client, Duration::from_secs(2))?.is_none() {
                let _ = client.kill();
                let _ = client.wait();
            }
        }
        let _ = out_reader.join();
        let err = err_reader.join().unwrap_or_default();
        stop_agent(agent);
        if got.intervals == 0 {
            // Not one interval: the test never started, which is a failure, not a stall.
            bail!(
                "the TCP test from {from} to {to} never started: {}",
                match String::from_utf8_lossy(&err).trim() {
                    "" => "the client printed nothing".to_string(),
                    e => e.to_string(),
                }
            );
        }
        Ok(got)
    }
}

/// A `tcp --json` document, decoded into the types the command wrote it from.
pub(crate) type TcpDocument =
    wirespeed_report::Document<crate::throughput::Parameters, crate::throughput::ThroughputResult>;

/// One line of `tcp --json-stream`: an interval as it ended.
#[derive(serde::Deserialize)]
struct IntervalLine {
    interval: wirespeed_net::report::Interval,
}

/// The largest window a `tcp` test's senders saw advertised (`tcpi_snd_wnd` at the end of
/// each stream), from the document the client printed when the test finished.
pub(crate) fn sender_window(doc: &TcpDocument) -> Option<u32> {
    doc.result
        .end
        .streams
        .iter()
        .filter_map(|p| p.sender.as_ref()?.tcp_info.as_ref()?.peer_window_bytes)
        .max()
}

/// What a capped transfer moved, as its receiver counted it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Capped {
    /// Bytes that arrived.
    pub(crate) bytes: u64,
    /// Seconds from the start of the test to its last count (the end, if it finished).
    pub(crate) seconds: f64,
    /// Whether every byte arrived before the cap.
    pub(crate) complete: bool,
    /// The longest run of 100 ms intervals in which nothing arrived, in seconds.
    pub(crate) longest_gap: f64,
    intervals: u32,
    /// The window the sender saw advertised at the end (`tcpi_snd_wnd`), if the test finished
    /// and its document arrived (a transfer cut at the cap has none).
    pub(crate) peer_window_bytes: Option<u32>,
}

impl Capped {
    pub(crate) fn kib_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / self.seconds / 1024.0
        } else {
            0.0
        }
    }
}

/// Waits up to `limit` for `child` to exit.
fn wait_for(
    child: &mut std::process::Child,
    limit: Duration,
) -> io::Result<Option<std::process::ExitStatus>> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s));
        }
        if std::time::Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A one-off agent exits after its session; one still running after a second is stopped.
fn stop_agent(mut agent: std::process::Child) {
    if matches!(wait_for(&mut agent, Duration::from_secs(1)), Ok(None)) {
        wirespeed_lab::sys::terminate(agent.id());
        if matches!(wait_for(&mut agent, Duration::from_secs(2)), Ok(None)) {
            let _ = agent.kill();
        }
    }
    let _ = agent.wait();
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        let _ = wirespeed_lab::lifecycle::down(&self.name);
    }
}

/// A built-in topology of the repository's `labs/` (see [`crate::common::data`]).
pub(crate) fn lab_file(name: &str) -> anyhow::Result<LabFile> {
    LabFile::builtin(name)
}

/// Relative difference a/b - 1.
pub(crate) fn rel(a: f64, b: f64) -> f64 {
    a / b - 1.0
}

#[cfg(test)]
mod decoding_tests {
    //! `reproduce` reads the documents of the commands it runs in lab namespaces through the
    //! types that wrote them: a field renamed or retyped on one side fails here, not in a lab.

    use serde::de::IgnoredAny;
    use wirespeed_report::Document;

    use super::TcpDocument;

    fn testdata(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/report")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn recorded_documents_of_every_command_reproduce_runs_decode() {
        let tcp: TcpDocument = wirespeed_report::decode::from_str(&testdata("tcp.json")).unwrap();
        assert!(tcp.result.end.sum_received.bits_per_second > 0.0);
        // The window the duplex comparison checks: the largest of the senders' (two streams,
        // 29,696 and 29,140,992 bytes in the recorded document).
        assert_eq!(super::sender_window(&tcp), Some(29_140_992));
        let load: Document<IgnoredAny, crate::load::LoadResult> =
            wirespeed_report::decode::from_str(&testdata("load.json")).unwrap();
        assert!(!load.result.rows.is_empty());
        let sweep: Document<IgnoredAny, crate::sweep::SweepReport> =
            wirespeed_report::decode::from_str(&testdata("sweep.json")).unwrap();
        assert!(!sweep.result.runs.is_empty());
        let probe: Document<IgnoredAny, crate::probe::ProbeReport> =
            wirespeed_report::decode::from_str(&testdata("probe.json")).unwrap();
        assert!(!probe.result.hops.is_empty());
    }

    /// Today's tcp document, written and read back by the same types, figure for figure.
    #[test]
    fn a_loopback_tcp_document_round_trips() {
        let config = crate::throughput::Config::loopback_tcp(0.2);
        let mut silent =
            crate::throughput::text::LiveLines::new(config.rate_format, &config.spec, false, false);
        let m = crate::throughput::measure(&config, &mut silent).unwrap();
        let text = wirespeed_report::to_json(&m.doc).unwrap();
        let back: TcpDocument = wirespeed_report::decode::from_str(&text).unwrap();
        assert_eq!(back.result.end, m.doc.result.end);
        assert_eq!(back.result.intervals, m.doc.result.intervals);
        assert_eq!(back.parameters.test, m.doc.parameters.test);
        // Written again, the decoded document is the same text.
        let mut again = back;
        again.result.rate_format = m.doc.result.rate_format;
        assert_eq!(wirespeed_report::to_json(&again).unwrap(), text);
    }
}
