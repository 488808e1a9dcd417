//! Shell completions and manual pages, generated from the same command definition that parses
//! the flags, so that neither can describe a flag the program does not take.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use clap_complete::Shell;

/// `wirespeed completions SHELL`.
#[derive(Debug, Args)]
pub(crate) struct CompletionsArgs {
    /// The shell to complete for: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    shell: Shell,
}

/// `wirespeed man [--dir DIR]`.
#[derive(Debug, Args)]
#[doc(hidden)]
pub struct ManArgs {
    /// Write one page per command (wirespeed.1, wirespeed-tcp.1, wirespeed-sim-csma.1, ...) into
    /// this directory instead of printing wirespeed.1 on standard output.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// Prints the completion script of `cmd` (the whole command map, which the caller passes so
/// that shared code imports no command): `wirespeed completions bash >
/// /etc/bash_completion.d/wirespeed`.
pub(crate) fn completions(args: CompletionsArgs, mut cmd: clap::Command) -> anyhow::Result<()> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "wirespeed", &mut out);
    std::io::stdout()
        .lock()
        .write_all(&out)
        .context("writing the completion script")
}

/// Prints `cmd`'s top-level page, or writes every command's page into `--dir`.
#[doc(hidden)]
pub fn man(args: ManArgs, cmd: clap::Command) -> anyhow::Result<()> {
    let Some(dir) = args.dir else {
        let mut out = Vec::new();
        clap_mangen::Man::new(cmd).render(&mut out)?;
        return std::io::stdout()
            .lock()
            .write_all(&out)
            .context("writing the manual page");
    };
    crate::common::output::check_output_dir("--dir", &dir)?;
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, page) in pages(cmd)? {
        let path = dir.join(format!("{name}.1"));
        std::fs::write(&path, page).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// Every page, named as `man` finds them: `wirespeed`, then `wirespeed-<sub>[-<subsub>]`.
#[doc(hidden)]
pub fn pages(cmd: clap::Command) -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let mut pages = Vec::new();
    collect(cmd.clone(), "wirespeed".to_string(), &mut pages)?;
    Ok(pages)
}

fn collect(
    mut cmd: clap::Command,
    name: String,
    pages: &mut Vec<(String, Vec<u8>)>,
) -> anyhow::Result<()> {
    // Built so that each subcommand carries its inherited settings (version, help flags).
    cmd.build();
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone().name(name.clone()))
        .render(&mut page)
        .with_context(|| format!("rendering the page of {name}"))?;
    pages.push((name.clone(), page));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() == "help" {
            continue;
        }
        collect(sub.clone(), format!("{name}-{}", sub.get_name()), pages)?;
    }
    Ok(())
}

/// Whether `dir` holds a page for every command (used by tests and the package script).
#[doc(hidden)]
pub fn missing_pages(dir: &std::path::Path, names: &[String]) -> Vec<String> {
    names
        .iter()
        .filter(|n| !dir.join(format!("{n}.1")).is_file())
        .cloned()
        .collect()
}
