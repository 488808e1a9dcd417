//! The command-line map: one subcommand per question wirespeed answers.

use clap::{CommandFactory, Parser, Subcommand};

use crate::autoneg::AutonegArgs;
use crate::diagnose::DiagnoseArgs;
use crate::envelope::EnvelopeArgs;
use crate::load::LoadArgs;
use crate::model::ModelArgs;
use crate::probe::ProbeArgs;
use crate::serve::ServeArgs;
use crate::sim::SimArgs;
use crate::throughput::ThroughputArgs;

/// wirespeed: measure what a network path delivers, compute what it should deliver, and
/// explain the difference.
#[derive(Debug, Parser)]
#[command(name = "wirespeed", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The agent: the far end of `tcp` and `udp` tests (serves many clients at once).
    Serve(ServeArgs),
    /// TCP throughput to an agent; without HOST, this host's own loopback ceiling.
    // One argument struct serves both protocols; each help page shows only its own options
    // (the other protocol's are refused with the command to use).
    #[command(
        after_help = crate::common::exit_status::THROUGHPUT_HELP,
        mut_arg("bitrate", |a| a.hide(true)),
        mut_arg("gso", |a| a.hide(true)),
        mut_arg("no_gso", |a| a.hide(true)),
        mut_arg("len", |a| a.help("Bytes per write and read [default: 128KiB]")),
    )]
    Tcp(ThroughputArgs),
    /// UDP throughput, loss, reordering and jitter to an agent; without HOST, on loopback.
    #[command(
        after_help = crate::common::exit_status::THROUGHPUT_HELP,
        mut_arg("nodelay", |a| a.hide(true)),
        mut_arg("mss", |a| a.hide(true)),
        mut_arg("congestion", |a| a.hide(true)),
        mut_arg("file", |a| a.hide(true)),
        mut_arg("zerocopy", |a| a.hide(true)),
        mut_arg("no_pacing", |a| a.hide(true)),
        mut_arg("len", |a| a.help("Payload bytes per datagram [default: 1472]")),
        mut_arg("bitrate", |a| a.help("Target rate per stream; 0 = as fast as possible [default: 1M]")),
        mut_arg("num", |a| a.help("Amount per stream instead of a duration: a number of -l datagrams, or a byte size such as 16MiB")),
    )]
    Udp(ThroughputArgs),
    /// Latency under load: idle and loaded round trips (UDP echo, TCP connect, request/response),
    /// the increase, RPM and where the delay waits; `--rr` for TCP_RR / TCP_CRR.
    Latency(crate::latency::LatencyArgs),
    /// How does throughput depend on the send and receive socket buffers? Van Jacobson's
    /// experiment: a grid of buffer sizes, repeated runs in a seeded random order.
    Sweep(crate::sweep::SweepArgs),
    /// The most a link can carry after every header, gap and ACK (the back-of-the-envelope
    /// ceiling).
    Envelope(EnvelopeArgs),
    /// Best-case delay of a path and of every hop: fixed + per-byte cost from the minimum
    /// round trip of echo probes of many sizes (Bellovin 1992).
    // `--count` is probes per size here: the schedule's number of runs is `--max-runs`.
    #[command(
        mut_arg("auth_key_file", |a| a.requires("udp")),
        mut_arg("runs", |a| a.long("max-runs")),
    )]
    Probe(ProbeArgs),
    /// Predict a path's best-case delay from a component table, compare it with a probe, and
    /// flag the components that disagree.
    Model(ModelArgs),
    /// N agents transmit at once on a common schedule (Boggs, Mogul and Kent's load test):
    /// aggregate rate, fairness, delay and excess delay for each host count and packet length.
    Load(LoadArgs),
    /// Every pair of a fleet of agents: a TCP and a latency test per ordered pair, scheduled so
    /// that no agent is in two tests at once; the rate and round-trip matrices and the outliers.
    Mesh(crate::mesh::MeshArgs),
    /// Simulations: what would a shared CSMA/CD Ethernet do with N hosts, these sizes, this
    /// cable?
    Sim(SimArgs),
    /// What two link partners settle on (auto-negotiation, parallel detection, forced modes),
    /// and the link code words they send.
    Autoneg(AutonegArgs),
    /// Are these interfaces' link settings and error counters healthy? If not, which fault
    /// (duplex mismatch, bad cable, overruns) fits the evidence?
    #[command(mut_arg("auth_key_file", |a| a.requires("peer")))]
    Diagnose(DiagnoseArgs),
    /// Manifests that run the agents and a mesh on a platform: `deploy kubernetes` prints a
    /// DaemonSet of agents, a headless Service and a mesh Job for `kubectl apply -f -`.
    Deploy(crate::deploy::DeployArgs),
    /// Build a network of namespaces joined by emulated links (exact rate, delay, queue, loss,
    /// router costs), run commands in it, and take it down.
    Lab(crate::lab::LabArgs),
    /// Run a seed's experiment end to end (lab or simulator) and print the paper's table
    /// beside ours with a verdict per row; `--list` names them.
    Reproduce(crate::reproduce::ReproduceArgs),
    /// Turn saved results (--json, --json-stream, --results files; files or directories) into
    /// one self-contained HTML page with tables and plots.
    Report(crate::report::ReportArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(crate::common::install_aids::CompletionsArgs),
    /// Print the manual page, or write one page per command into a directory (`--dir`).
    Man(crate::common::install_aids::ManArgs),
}

/// The command line's definition as `main` parses it: the derived one, with every option and
/// argument that takes a value also taking a negative number, so that `-t -1` reaches the
/// duration parser and is refused as negative, naming `-t`, instead of clap's "unexpected
/// argument '-1'" (issue 33).
pub fn command() -> clap::Command {
    fn negatives_reach_the_parsers(cmd: clap::Command) -> clap::Command {
        cmd.mut_args(|arg| {
            // Options whose value is required only: a positional (`tcp HOST`) or an optional
            // value (`--iperf3 [PORT]`) would take the flags `-4` and `-6` for numbers.
            if arg.get_action().takes_values()
                && !arg.is_positional()
                && arg.get_num_args().is_none_or(|n| n.min_values() > 0)
            {
                arg.allow_negative_numbers(true)
            } else {
                arg
            }
        })
        .mut_subcommands(negatives_reach_the_parsers)
    }
    let cmd = negatives_reach_the_parsers(Cli::command());
    // `tcp` and `udp` share one set of flags: each hides the other's own, which it refuses
    // with the fix when given (`udp --congestion`: "use them with `wirespeed tcp`").
    let hide = |cmd: clap::Command, ids: &[&str]| {
        cmd.mut_args(|arg| {
            if ids.contains(&arg.get_id().as_str()) {
                arg.hide(true)
            } else {
                arg
            }
        })
    };
    cmd.mut_subcommand("tcp", |c| hide(c, &crate::throughput::UDP_ONLY))
        .mut_subcommand("udp", |c| hide(c, &crate::throughput::TCP_ONLY))
}

/// The command line as completions and manual pages describe it: [`command`] without the
/// flags a command hides because it refuses them, so that no shell offers `udp --congestion`
/// (bash's completions offer hidden flags too, so they are left out, not just hidden).
pub fn described_command() -> clap::Command {
    fn own_flags_only(c: clap::Command) -> clap::Command {
        let hidden: Vec<String> = c
            .get_arguments()
            .filter(|a| a.is_hide_set())
            .map(|a| a.get_id().to_string())
            .collect();
        if hidden.is_empty() {
            return c;
        }
        let kept: Vec<clap::Arg> = c
            .get_arguments()
            .filter(|a| !a.is_hide_set())
            .cloned()
            .collect();
        let mut own = clap::Command::new(c.get_name().to_string()).args(kept);
        if let Some(about) = c.get_about() {
            own = own.about(about.clone());
        }
        if let Some(about) = c.get_long_about() {
            own = own.long_about(about.clone());
        }
        own
    }
    command()
        .mut_subcommand("tcp", own_flags_only)
        .mut_subcommand("udp", own_flags_only)
}

/// `words` with a negative quantity that follows an option taking a value joined to that
/// option (`-t -1s` becomes `--time=-1s`), so that the option's parser refuses it as negative.
/// clap's `allow_negative_numbers` takes `-1` as a value but not `-1s`, `-5M` or `-500ms`,
/// which it reads as the short flags `-1`, `-5`: "unexpected argument '-1'", naming neither
/// the flag nor the fix. Only a word that starts with a minus and a digit or a point is
/// joined, and only after an option of the command it belongs to; nothing after `--` (the
/// command of `lab exec`) is touched. `built` is the whole tree after `Command::build`
/// (options a subcommand inherits are read there).
fn negative_values_attached(
    built: &clap::Command,
    words: Vec<std::ffi::OsString>,
) -> Vec<std::ffi::OsString> {
    let mut current = built;
    let mut out = Vec::with_capacity(words.len());
    let mut words = words.into_iter();
    if let Some(program) = words.next() {
        out.push(program);
    }
    let mut words = words.peekable();
    while let Some(word) = words.next() {
        let Some(text) = word.to_str() else {
            out.push(word);
            continue;
        };
        if text == "--" {
            out.push(word);
            out.extend(words);
            break;
        }
        if let Some(sub) = current.find_subcommand(text) {
            current = sub;
            out.push(word);
            continue;
        }
        let option = if let Some(long) = text.strip_prefix("--") {
            current.get_arguments().find(|a| a.get_long() == Some(long))
        } else if let Some(short) = text.strip_prefix('-').filter(|s| s.chars().count() == 1) {
            let short = short.chars().next().expect("one character");
            current
                .get_arguments()
                .find(|a| a.get_short() == Some(short))
        } else {
            None
        };
        let takes_a_value = option.is_some_and(|a| {
            a.get_action().takes_values()
                && !a.is_positional()
                && a.get_num_args().is_none_or(|n| n.min_values() > 0)
        });
        let negative_next = words.peek().and_then(|w| w.to_str()).is_some_and(|next| {
            next.strip_prefix('-')
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
        });
        match option {
            Some(arg) if takes_a_value && negative_next => {
                let value = words.next().expect("peeked");
                let mut joined = match arg.get_long() {
                    Some(long) => std::ffi::OsString::from(format!("--{long}=")),
                    None => std::ffi::OsString::from(format!("{text}=")),
                };
                joined.push(value);
                out.push(joined);
            }
            // The value is the option's, never a subcommand's name.
            Some(_) if takes_a_value => {
                out.push(word);
                out.extend(words.next());
            }
            _ => out.push(word),
        }
    }
    out
}

/// Parses a command line (its first word the program's name) as `main` does.
pub fn try_parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    LineParser::new().parse(args)
}

/// [`try_parse_from`] for many lines (a test walking every flag): clap's tree of subcommands
/// is built once, not per line, which is most of a parse's cost with the binary crate at
/// opt-level 0. A parse leaves the command as it was built.
pub struct LineParser {
    /// What clap parses with; each parse builds what it reaches of it, once.
    cmd: clap::Command,
    /// The same tree built whole, read to find which words are options' values.
    built: clap::Command,
}

impl Default for LineParser {
    fn default() -> Self {
        Self::new()
    }
}

impl LineParser {
    pub fn new() -> LineParser {
        let cmd = command();
        let mut built = cmd.clone();
        built.build();
        LineParser { cmd, built }
    }

    /// One command line, its first word the program's name.
    pub fn parse<I, T>(&mut self, args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let args =
            negative_values_attached(&self.built, args.into_iter().map(Into::into).collect());
        let matches = self.cmd.try_get_matches_from_mut(args)?;
        <Cli as clap::FromArgMatches>::from_arg_matches(&matches)
            .map_err(|e| e.format(&mut self.cmd))
    }
}

/// A value its parser refused, as one line: the flag by both its names (the user may have
/// typed either), the value, and the parser's reason, which names the fix. `words` is the
/// command line. `None` if the error is not a refused value.
pub fn refused_value(err: &clap::Error, words: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    if err.kind() != clap::error::ErrorKind::ValueValidation {
        return None;
    }
    let (Some(ContextValue::String(named)), Some(ContextValue::String(value))) = (
        err.get(ContextKind::InvalidArg),
        err.get(ContextKind::InvalidValue),
    ) else {
        return None;
    };
    let names = option_names(words, named);
    let mut reason = std::error::Error::source(err)
        .map(|e| e.to_string())
        .unwrap_or_default();
    // clap's own integer parsers read "-1" as a bad digit; the fix is a number of 0 or more.
    let negative = value
        .strip_prefix('-')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()));
    if negative && reason.contains("invalid digit") {
        reason = format!("'{value}' is negative: give a whole number, 0 or more");
    } else if negative && !reason.contains("negative") && !reason.contains("range") {
        // A parser of a richer syntax (a TOS name, a length mix) calls "-1" a syntax error;
        // the user meant a number, so say what is wrong with it first, then the forms.
        let forms = reason.split_once(": ").map_or(reason.as_str(), |(_, f)| f);
        reason = format!("'{value}' is negative: {forms}");
    }
    Some(if reason.contains(value.as_str()) {
        format!("{names}: {reason}")
    } else {
        format!("{names} {value}: {reason}")
    })
}

/// The short and long names of the option clap names as `long` (`--time <DURATION>`) in the
/// command that `words` (the command line) selects: `-t/--time`, so that an error names the
/// letter the user may have typed.
pub fn option_names(words: &[String], named: &str) -> String {
    let long = named
        .split_whitespace()
        .next()
        .unwrap_or(named)
        .trim_start_matches('-');
    let mut cmd = command();
    for word in words.iter().skip(1) {
        if let Some(sub) = cmd.find_subcommand(word) {
            cmd = sub.clone();
        }
    }
    let arg = cmd
        .get_arguments()
        .find(|a| a.get_long() == Some(long) || a.get_id().as_str() == long);
    match arg {
        Some(arg) => match (arg.get_short(), arg.get_long()) {
            (Some(short), Some(long)) => format!("-{short}/--{long}"),
            (None, Some(long)) => format!("--{long}"),
            (Some(short), None) => format!("-{short}"),
            (None, None) => named.to_string(),
        },
        None => named.to_string(),
    }
}

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Sweep(args) => crate::sweep::command(args),
        Command::Latency(args) => crate::latency::run(args),
        Command::Envelope(args) => crate::envelope::run(args),
        Command::Autoneg(args) => crate::autoneg::run(args),
        Command::Diagnose(args) => crate::diagnose::run(args),
        Command::Sim(args) => crate::sim::run(args),
        Command::Lab(args) => crate::lab::run(args),
        Command::Probe(args) => crate::probe::run(args),
        Command::Model(args) => crate::model::run(args),
        Command::Serve(args) => crate::serve::run(args),
        Command::Tcp(args) => crate::throughput::run(args, wirespeed_net::Protocol::Tcp),
        Command::Udp(args) => crate::throughput::run(args, wirespeed_net::Protocol::Udp),
        Command::Load(args) => crate::load::run(args),
        Command::Mesh(args) => crate::mesh::run(args),
        Command::Deploy(args) => crate::deploy::run(args),
        Command::Reproduce(args) => crate::reproduce::run(args),
        Command::Report(args) => crate::report::run(args),
        Command::Completions(args) => {
            crate::common::install_aids::completions(args, described_command())
        }
        Command::Man(args) => crate::common::install_aids::man(args, described_command()),
    }
}
