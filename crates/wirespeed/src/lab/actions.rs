//! What the `lab` subcommands do to labs: build one and leave it running, run a command in
//! one of its nodes, build one around a command and always take it down, take labs down.
//! Nothing is printed here: `up` returns the lab's name and `down` what it removed.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, bail};
use wirespeed_lab::lifecycle::{self, Detach, DownReport, Settle};
use wirespeed_lab::{Topology, sys};

/// Builds `topology` (from `file`) and leaves it running, independent of this process, settled
/// as `settle` says; returns the lab's name. A termination signal during the build takes it
/// down again.
pub(crate) fn up(topology: Topology, file: &Path, settle: Settle) -> anyhow::Result<String> {
    sys::require_net_admin()?;
    sys::catch_termination();
    let running = lifecycle::up_with(topology, file, Detach::Independent, settle)?;
    if let Some(signal) = sys::caught_signal() {
        lifecycle::down(&running.name)?;
        bail!(
            "interrupted by signal {signal}; lab {} removed",
            running.name
        );
    }
    Ok(running.name)
}

fn ip_netns_exec(namespace: &str, command: &[String]) -> Command {
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", namespace]).args(command);
    cmd
}

/// Refuses a command that cannot be started, before the lab is touched: `ip netns exec` (and
/// a spawn) would otherwise fail late with a raw message and status 1. A name without a slash
/// is looked for on PATH, as exec does; the namespaces share this host's file system.
pub(crate) fn check_command(command: &[String]) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let Some(program) = command.first() else {
        bail!("no command after --: give one, e.g. -- ping -c 3 198.19.1.2");
    };
    let runnable = |p: &Path| {
        p.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let found = if program.contains('/') {
        runnable(Path::new(program))
    } else {
        std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| runnable(&dir.join(program)))
        })
    };
    if !found {
        bail!(
            "{program}: no such executable{}: give the path of a program, or a command on PATH",
            if program.contains('/') {
                ""
            } else {
                " on PATH"
            }
        );
    }
    Ok(())
}

/// Replaces this process with `command` in `node` of the running lab `name` (returns only
/// when it cannot); the command was checked when the flags were.
pub(crate) fn exec(name: &str, node: &str, command: &[String]) -> anyhow::Result<()> {
    let record = lifecycle::record(name)?;
    let namespace = record.namespace(node)?;
    // Entering a namespace and the lab's cgroup both take CAP_NET_ADMIN (root): say so, not
    // the cgroup's bare "Permission denied".
    sys::require_net_admin()?;
    if let Some(cgroup) = &record.cgroup {
        wirespeed_lab::cleanup::join_cgroup(Path::new(cgroup), std::process::id())
            .with_context(|| format!("putting the command into lab {name}'s cgroup {cgroup}"))?;
    }
    let err = ip_netns_exec(namespace, command)
        .env("WIRESPEED_LAB", name)
        .exec();
    Err(err).with_context(|| format!("running {} in {namespace}", command[0]))
}

/// Builds `topology` (from `file`), dying with this process, runs `command` (in `node`, or
/// outside the lab with WIRESPEED_LAB set) and takes the lab down whatever happened; returns
/// the command's exit status. The command and the node were checked with the flags.
pub(crate) fn run_in_lab(
    topology: Topology,
    file: &Path,
    node: Option<&str>,
    command: &[String],
    settle: Settle,
) -> anyhow::Result<i32> {
    sys::require_net_admin()?;
    sys::catch_termination();
    let running = lifecycle::up_with(topology, file, Detach::DiesWithParent, settle)?;
    let outcome = run_and_wait(&running.name, node, command);
    let down = lifecycle::down(&running.name);
    let code = outcome?;
    down?;
    Ok(code)
}

/// Runs the command until it exits or a termination signal arrives; returns the exit status
/// to pass on (128 + signal when interrupted, as a shell does).
fn run_and_wait(lab: &str, node: Option<&str>, command: &[String]) -> anyhow::Result<i32> {
    if let Some(signal) = sys::caught_signal() {
        return Ok(128 + signal);
    }
    let record = lifecycle::record(lab)?;
    let mut cmd = match node {
        Some(node) => ip_netns_exec(record.namespace(node)?, command),
        None => {
            let mut cmd = Command::new(&command[0]);
            cmd.args(&command[1..]);
            cmd
        }
    };
    cmd.env("WIRESPEED_LAB", lab);
    if let Some(cgroup) = &record.cgroup {
        wirespeed_lab::cleanup::command_in_cgroup(&mut cmd, Path::new(cgroup))
            .with_context(|| format!("opening lab {lab}'s cgroup {cgroup} for the command"))?;
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", command[0]))?;
    loop {
        if let Some(status) = child.try_wait()? {
            use std::os::unix::process::ExitStatusExt;
            return Ok(status
                .code()
                .unwrap_or_else(|| 128 + status.signal().unwrap_or(0)));
        }
        if let Some(signal) = sys::caught_signal() {
            // The command we started, by its pid.
            sys::terminate(child.id());
            let _ = child.wait();
            return Ok(128 + signal);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Takes the lab `name` down, or with `all` every lab this user made (`force`: every user's).
pub(crate) fn down(name: Option<&str>, all: bool, force: bool) -> anyhow::Result<DownReport> {
    Ok(if all {
        lifecycle::down_all(force)?
    } else {
        lifecycle::down(name.expect("clap requires a name without --all"))?
    })
}
