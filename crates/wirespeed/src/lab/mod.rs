//! `wirespeed lab`: build a network of namespaces and emulated links, use it, take it down.
//!
//! The command's shape: the flags and their checked [`Config`] here (the topology read, the
//! command found, the node known, before a lab is touched); the `lab.up` and `lab.status`
//! schemas in `result.rs`; what the subcommands do to labs in `actions.rs`; `lab status`'s
//! reading of a lab's counters in `measure.rs`, printing nothing; its text view (and `lab
//! down`'s lines) in `text.rs`; its `--metrics-file` figures in `metrics.rs`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use wirespeed_lab::Topology;
use wirespeed_lab::lifecycle::Settle;
use wirespeed_report::Document;

use crate::common::output::{self, OutputArgs};

mod actions;
mod measure;
mod metrics;
mod result;
#[doc(hidden)]
pub mod text;

use result::UpParams;
pub use result::{ListedLab, StatusParams, StatusResult};

#[derive(Debug, Args)]
pub(crate) struct LabArgs {
    #[command(subcommand)]
    command: LabCommand,
}

#[derive(Debug, Subcommand)]
enum LabCommand {
    /// Build the topology in FILE and leave it running; prints the lab's name.
    Up {
        /// Topology file (TOML; see labs/ for examples).
        file: PathBuf,
        /// Print the lab's record (name, emulator pid, nodes, namespaces, addresses) as JSON
        /// (schema "wirespeed.lab.up.v1") instead of its name.
        #[arg(long, short = 'J')]
        json: bool,
        #[command(flatten)]
        settle: SettleArgs,
    },
    /// Run a command inside one node of a running lab.
    ///
    /// The command gets WIRESPEED_LAB set to the lab's name, as `lab run` gives it, so that
    /// `wirespeed diagnose` inside the node reads the emulated MAC's counters of its ports.
    Exec {
        /// The lab's name, as `lab up` printed it.
        name: String,
        /// The host or router to run in.
        node: String,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Build FILE, run a command, and always take the lab down; exits with the command's status.
    /// Without --node the command runs outside the lab with WIRESPEED_LAB set to its name, so a
    /// script can call `wirespeed lab exec "$WIRESPEED_LAB" NODE -- ...`.
    Run {
        /// Topology file.
        file: PathBuf,
        /// Run the command inside this node instead.
        #[arg(long, value_name = "NODE")]
        node: Option<String>,
        #[command(flatten)]
        settle: SettleArgs,
        /// The command and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Frames, bytes, drops, queue depth and timing error of every port of a running lab; with
    /// no name, the running labs.
    Status {
        /// The lab's name.
        name: Option<String>,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// Stop a lab's emulator, end every process in it, and remove the namespaces and devices
    /// its state records.
    Down {
        /// The lab's name, exactly as `lab up` printed it (never a path or a prefix).
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        name: Option<String>,
        /// Remove every lab recorded in the state directory that you made (namespaces and
        /// devices no lab records are left alone).
        #[arg(long)]
        all: bool,
        /// With --all, also remove labs other users made.
        #[arg(long, requires = "all")]
        force: bool,
    },
}

/// How far a lab is settled before `lab up` (or `lab run`'s command) goes on.
#[derive(Debug, Args)]
struct SettleArgs {
    /// Also measure the lab's own cost per crossing of each point-to-point link (32 echoes
    /// across it, at least 10 ms apart: 0.35-1.4 s) and record it for `lab status`; without
    /// it one echo across each link only resolves the neighbours.
    #[arg(long)]
    measure_crossings: bool,
}

impl SettleArgs {
    fn settle(&self) -> Settle {
        if self.measure_crossings {
            Settle::MeasureCrossings
        } else {
            Settle::Neighbours
        }
    }
}

/// What a `lab` subcommand does, its flags checked: the topology read, the command to run
/// found on the file system, the node it runs in known to the topology.
pub(crate) enum Config {
    Up {
        topology: Topology,
        file: PathBuf,
        json: bool,
        settle: Settle,
    },
    Exec {
        name: String,
        node: String,
        command: Vec<String>,
    },
    Run {
        topology: Topology,
        file: PathBuf,
        node: Option<String>,
        command: Vec<String>,
        settle: Settle,
    },
    Status {
        name: Option<String>,
        output: OutputArgs,
    },
    Down {
        name: Option<String>,
        all: bool,
        force: bool,
    },
}

impl LabArgs {
    pub(crate) fn config(self) -> anyhow::Result<Config> {
        Ok(match self.command {
            LabCommand::Up { file, json, settle } => Config::Up {
                topology: load(&file)?,
                file,
                json,
                settle: settle.settle(),
            },
            LabCommand::Exec {
                name,
                node,
                command,
            } => {
                actions::check_command(&command)?;
                Config::Exec {
                    name,
                    node,
                    command,
                }
            }
            LabCommand::Run {
                file,
                node,
                command,
                settle,
            } => {
                actions::check_command(&command)?;
                let topology = load(&file)?;
                if let Some(node) = &node
                    && topology.node_index(node).is_none()
                {
                    bail!("{} has no node '{node}'", file.display());
                }
                Config::Run {
                    topology,
                    file,
                    node,
                    command,
                    settle: settle.settle(),
                }
            }
            LabCommand::Status { name, output } => Config::Status { name, output },
            LabCommand::Down { name, all, force } => Config::Down { name, all, force },
        })
    }
}

/// `wirespeed lab status [NAME]` as the typed document, printing nothing: one lab's record,
/// uptime and ports with their counters (its emulator asked for a fresh copy), or with no
/// name the labs this user has, each marked when its emulator is gone. The other `lab`
/// subcommands act on labs (they build, enter and remove namespaces, as root) rather than
/// measure, and are the command's alone.
pub fn status(
    name: Option<&str>,
) -> anyhow::Result<wirespeed_report::Document<StatusParams, StatusResult>> {
    measure::status(name, wirespeed_model::RateFormat::Adaptive)
}

fn load(file: &Path) -> anyhow::Result<Topology> {
    Ok(Topology::load(file)?)
}

pub(crate) fn run(args: LabArgs) -> anyhow::Result<()> {
    match args.config()? {
        Config::Up {
            topology,
            file,
            json,
            settle,
        } => {
            let notes = topology.notes();
            let name = actions::up(topology, &file, settle)?;
            if json {
                let record = wirespeed_lab::lifecycle::record(&name)?;
                let params = UpParams {
                    file: file.display().to_string(),
                };
                let mut doc = Document::new("lab.up", params, record);
                for note in &notes {
                    doc.warning(note);
                }
                print!("{}", wirespeed_report::to_json(&doc)?);
            } else {
                text::notes(&mut io::stderr().lock(), &notes)?;
                println!("{name}");
            }
            Ok(())
        }
        Config::Exec {
            name,
            node,
            command,
        } => actions::exec(&name, &node, &command),
        Config::Run {
            topology,
            file,
            node,
            command,
            settle,
        } => {
            text::notes(&mut io::stderr().lock(), &topology.notes())?;
            let code = actions::run_in_lab(topology, &file, node.as_deref(), &command, settle)?;
            io::stdout().flush()?;
            std::process::exit(code);
        }
        Config::Status { name, output } => {
            let doc = measure::status(name.as_deref(), output.rate_format)?;
            output::print(&output, &doc).context("writing the result")
        }
        Config::Down { name, all, force } => {
            let report = actions::down(name.as_deref(), all, force)?;
            text::down_report(&mut io::stdout().lock(), &report)?;
            Ok(())
        }
    }
}
