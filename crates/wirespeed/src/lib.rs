//! wirespeed's commands as a library: each command is a module with its flags (`*Args`), and
//! where it has been separated, a validated `Config`, a `measure` that prints nothing and a
//! typed result. The `wirespeed` binary is flags plus [`cli::run`].
//!
//! Modules: one folder per command: `serve`, `throughput` (the tcp and udp commands),
//! `latency`, `sweep`, `envelope`, `probe`, `model`, `load`, `mesh`, `sim`, `autoneg`,
//! `diagnose`, `deploy`, `lab`, `reproduce`, `report`. In each, `mod.rs` holds the flags (and,
//! where separated, their `Config`) and the run, `result.rs` the typed result, `measure.rs` the
//! measuring that prints nothing, `html.rs` the report view, `text.rs` the terminal view,
//! `metrics.rs` its `--metrics-file` figures, `brief.rs` its `--brief` headline and
//! `analysis.rs` or `verdicts.rs` the verdicts, where the command has them. [`cli`] is the
//! command map; `common/` is what the commands share (output, flags, host facts, embedded data,
//! Ctrl-C, exit statuses, progress, the runs file, schedules, `--brief`, `--timestamps`,
//! metrics, install aids) and imports no command (`tests/layers.rs` checks both rules, and that
//! this map names every module and only modules that are there).
//!
//! Each command's `Config` is made from its flags by one conversion (`XArgs::config`, or
//! `Config::try_from(&args)`) that makes every check a flag needs before any work starts; the
//! `Config`s a caller may hold are public ([`throughput::Config`], [`latency::Config`],
//! [`sweep::Config`], [`load::Config`], [`mesh::Config`], [`probe::Config`], [`sim::Config`],
//! [`sim::link::Config`], [`envelope::Config`], [`autoneg::Config`], [`diagnose::Config`],
//! [`model::Config`]).
//!
//! Eleven commands run without flags: a constructor makes the common case (the command's
//! defaults, a few setters where a caller needs them; a constructor or setter refuses what
//! the flags refuse, with the flag's own message, and the flags' conversion goes through
//! it) and the command's `measure` runs it, printing nothing, and returns the typed
//! document. [`throughput::Config::loopback_tcp`] and [`latency::Config::loopback`] are
//! shown below; the others are run by their modules' `a_library_caller_runs_*` unit tests:
//!
//! - measurements on loopback: [`sweep::Config::loopback`] (its runs kept in a results file)
//!   with [`sweep::measure`], [`load::Config::loopback`] (in-process agents) with
//!   [`load::measure`], [`mesh::Config::local`] (in-process agents sharing a key) with
//!   [`mesh::measure`];
//! - a path's best-case delay: [`probe::Config::new`] (ICMP echoes; [`probe::Config::per_hop`]
//!   for every router on the way, [`probe::Config::until_stable`] for rounds until its own costs
//!   settle) with [`probe::measure`];
//! - this host's interfaces: [`diagnose::Config::interfaces`] (or a saved sysfs tree,
//!   [`diagnose::Config::with_sysfs`]; a transfer each way, [`diagnose::Config::with_peer`])
//!   with [`diagnose::measure`];
//! - the science, pure and deterministic: [`sim::Config::seed_long_net`] (seed 000's grid)
//!   with [`sim::measure`], [`sim::link::Config::duplex`] (seed 003's mismatched link) with
//!   [`sim::link::measure`], [`envelope::Config::ethernet`] or [`envelope::Config::link`]
//!   with [`envelope::measure`], [`autoneg::Config::resolve`], [`autoneg::Config::decode`]
//!   or [`autoneg::Config::new`] with [`autoneg::measure`], and [`model::Config::predict`],
//!   [`model::Config::compare`] or [`model::Config::fit`] (the files read, bounded) with
//!   [`model::measure`].
//!
//! [`reproduce::Config::new`] (`without_lab`, `with_time`) with [`reproduce::measure`] runs
//! one of the seeds' experiments and returns its rows with their verdicts. Two more give what
//! a caller of a non-measuring command wants: [`report::render`] (saved results into the HTML
//! page, as a string) and [`lab::status`] (a lab's typed status). The
//! rest are actions or daemons rather than measurements and stay the binary's (`serve`,
//! whose agent is `wirespeed_net::agent`; `lab up`/`exec`/`run`/`down`; `deploy`): see
//! docs/architecture.md, "Which commands a library caller can run".
//!
//! A loopback TCP test, the in-process agent standing in for `wirespeed tcp` without HOST:
//!
//! ```
//! use wirespeed::throughput::{self, Config, LiveLines};
//!
//! let config = Config::loopback_tcp(0.3);
//! // Neither text nor a JSON stream: nothing is printed while it runs.
//! let mut live = LiveLines::new(config.rate_format(), config.spec(), false, false);
//! let measured = throughput::measure(&config, &mut live)?;
//! let received = measured.doc.result.end.sum_received.bits_per_second;
//! assert!(received > 0.0, "loopback carried nothing");
//! assert!(measured.partial_reason.is_none());
//! # Ok::<(), anyhow::Error>(())
//! ```
//!
//! A latency test over loopback, the in-process agent standing in for `wirespeed latency
//! --idle 500ms -t 500ms` without HOST:
//!
//! ```
//! use std::time::Duration;
//! use wirespeed::latency::{self, Config, LiveLines, Measured, ProbeKind};
//!
//! let config = Config::loopback(Duration::from_millis(500), Duration::from_millis(500));
//! let Measured::UnderLoad(run) = latency::measure(&config, &mut LiveLines::silent())? else {
//!     panic!("a latency-under-load config measured something else");
//! };
//! let udp = run.doc.result.kinds.iter().find(|k| k.kind == ProbeKind::UdpEcho).unwrap();
//! // A round trip through this host's own stack: above nothing, below a generous second.
//! assert!(udp.idle.p50_ms > 0.0 && udp.idle.p50_ms < 1000.0, "{} ms", udp.idle.p50_ms);
//! assert!(run.partial_reason.is_none());
//! # Ok::<(), anyhow::Error>(())
//! ```

pub mod autoneg;
pub mod cli;
pub mod common;
pub mod deploy;
pub mod diagnose;
pub mod envelope;
pub mod lab;
pub mod latency;
pub mod load;
pub mod mesh;
pub mod model;
pub mod probe;
pub mod report;
pub mod reproduce;
pub mod serve;
pub mod sim;
pub mod sweep;
pub mod throughput;
