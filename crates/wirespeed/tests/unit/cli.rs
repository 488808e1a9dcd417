use clap::{CommandFactory, Parser};
use wirespeed::cli::*;

#[test]
fn the_cli_definition_is_consistent() {
    Cli::command().debug_assert();
}

/// `tcp --help` and `udp --help` list only their own protocol's options.
#[test]
fn tcp_and_udp_help_list_only_their_own_options() {
    let mut cli = Cli::command();
    let tcp = cli
        .find_subcommand_mut("tcp")
        .unwrap()
        .render_long_help()
        .to_string();
    let mut cli = Cli::command();
    let udp = cli
        .find_subcommand_mut("udp")
        .unwrap()
        .render_long_help()
        .to_string();
    for tcp_only in [
        "--nodelay",
        "--mss",
        "--congestion",
        "--file",
        "--zerocopy",
        "--no-pacing",
    ] {
        assert!(
            tcp.contains(tcp_only) && !udp.contains(tcp_only),
            "{tcp_only}"
        );
    }
    for udp_only in ["--bitrate", "--no-gso"] {
        assert!(
            udp.contains(udp_only) && !tcp.contains(udp_only),
            "{udp_only}"
        );
    }
    assert!(udp.contains("[default: 1M]"), "{udp}");
    assert_ne!(tcp, udp);
}

/// Every command and subcommand, depth first, with its path.
fn all_commands(cmd: &clap::Command, path: String, out: &mut Vec<(String, clap::Command)>) {
    out.push((path.clone(), cmd.clone()));
    for sub in cmd.get_subcommands() {
        all_commands(sub, format!("{path} {}", sub.get_name()), out);
    }
}

/// Issue 15 item 7: a letter means one thing in every command that shows it (`-t` how
/// long, `-n` how much to send, `-l` the length of one unit sent, `-R` the reverse
/// direction), and a command whose count is of something else refuses the letter with the
/// flag to use.
#[test]
fn shared_letters_mean_one_thing_in_every_command() {
    let mut commands = Vec::new();
    all_commands(&Cli::command(), "wirespeed".into(), &mut commands);
    let mut seen = std::collections::BTreeMap::<char, usize>::new();
    for (path, cmd) in &commands {
        for arg in cmd.get_arguments() {
            let Some(short) = arg.get_short() else {
                continue;
            };
            let long = arg.get_long().unwrap_or_default();
            let names: Vec<&str> = std::iter::once(long)
                .chain(arg.get_all_aliases().unwrap_or_default())
                .collect();
            let visible = !arg.is_hide_set();
            let ok = match short {
                't' => names.contains(&"time"),
                'n' => names.contains(&"num") && names.contains(&"bytes"),
                'l' => long == "len" || long == "lengths",
                'R' => long == "reverse",
                _ => continue,
            };
            if visible {
                assert!(ok, "{path}: -{short} is --{long} (aliases {names:?})");
                *seen.entry(short).or_default() += 1;
            }
        }
    }
    // The rule is exercised, not vacuous: each letter is shown by several commands.
    for letter in ['t', 'n', 'l', 'R'] {
        assert!(seen.get(&letter).copied().unwrap_or(0) >= 2, "{seen:?}");
    }
    for (args, instead) in [
        (
            &["wirespeed", "probe", "127.0.0.1", "-n", "4"][..],
            "-c/--count",
        ),
        (&["wirespeed", "sim", "csma", "-n", "1-4"][..], "--hosts"),
        (&["wirespeed", "load", "-n", "2"][..], "--hosts"),
        (
            &["wirespeed", "sim", "csma", "-R", "3"][..],
            "--replications",
        ),
    ] {
        let err = Cli::try_parse_from(args).expect_err("the old letter is refused");
        assert!(err.to_string().contains(instead), "{args:?}: {err}");
    }
}
