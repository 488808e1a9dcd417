//! The `wirespeed` binary: flags in, a command run, a document out. The commands live in this
//! crate's library (`src/lib.rs`: one folder per command, `common/` for what they share), the
//! science and the I/O in the library crates; here are only the exit statuses and error lines.

use std::io::{self, Write};
use std::process::ExitCode;

use wirespeed::cli;
use wirespeed::common::{exit_status, interrupt};

fn main() -> ExitCode {
    let cli = match cli::try_parse_from(std::env::args_os()) {
        Ok(cli) => cli,
        Err(err) => return clap_error(&err),
    };
    match cli::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        // Ctrl-C: the partial result is printed; say what was kept and how to go on.
        Err(err) if err.downcast_ref::<interrupt::Interrupted>().is_some() => {
            let stop = err
                .downcast_ref::<interrupt::Interrupted>()
                .expect("checked above");
            eprintln!("wirespeed: {stop}");
            ExitCode::from(stop.status())
        }
        Err(err) => {
            eprintln!("wirespeed: error: {}", error_line(&err));
            ExitCode::from(exit_status::code_of(&err))
        }
    }
}

/// Help and version asked for go to stdout with status 0; a bad flag is one line and status 2.
fn clap_error(err: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match err.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = err.print();
            ExitCode::SUCCESS
        }
        // `wirespeed` or `wirespeed lab` alone: no command given is bad input, so the usage
        // goes to stderr (clap prints this kind there) and the status is 2, stdout empty.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = err.print();
            let _ = io::stderr().flush();
            ExitCode::from(2)
        }
        // A value its parser refused: the flag by both its names (the user may have typed
        // either), the value, and the parser's reason, which names the fix.
        ErrorKind::ValueValidation => {
            let words: Vec<String> = std::env::args_os()
                .map(|w| w.to_string_lossy().into_owned())
                .collect();
            let Some(line) = cli::refused_value(err, &words) else {
                return one_line(err);
            };
            eprintln!("wirespeed: error: {line} (see --help)");
            let _ = io::stderr().flush();
            ExitCode::from(2)
        }
        _ => one_line(err),
    }
}

/// clap's error as one line and status 2, so that a script's log shows the problem without a
/// page of usage around it.
fn one_line(err: &clap::Error) -> ExitCode {
    // clap's message is the lines before the blank line that precedes its usage.
    let rendered = err.render().to_string();
    let message: Vec<&str> = rendered
        .lines()
        .take_while(|l| !l.trim().is_empty() && !l.starts_with("Usage:"))
        .map(str::trim)
        .collect();
    let message = message.join(" ");
    let message = message.strip_prefix("error: ").unwrap_or(&message);
    eprintln!("wirespeed: error: {message} (see --help)");
    let _ = io::stderr().flush();
    ExitCode::from(2)
}

/// The error and its causes on one line, each cause once: a context that already quotes its
/// source ("cannot connect: Connection refused") is not followed by that source again.
fn error_line(err: &anyhow::Error) -> String {
    let mut line = String::new();
    for cause in err.chain().map(|c| c.to_string()) {
        if cause.is_empty() || line.contains(&cause) {
            continue;
        }
        if !line.is_empty() {
            line.push_str(": ");
        }
        line.push_str(&cause);
    }
    line
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
