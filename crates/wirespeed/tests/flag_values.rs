//! Issue 33: a number a flag refuses is refused by that flag's parser, in one line that names
//! the flag and the fix: a negative value reaches the parser (not clap's "unexpected argument
//! '-1'"), and zero or out-of-range values say the range, not "is not a bit rate".

use crate::util::{assert_one_line_error, wirespeed};

/// Value names of options that take text, not a number: `-1` may be a valid file name.
const TEXT_VALUES: &[&str] = &[
    "FILE",
    "FILE.svg",
    "DIR",
    "HOST",
    "HOST[:PORT]",
    "self|HOST",
    "ADDR",
    "ADDR:PORT",
    "CIDR",
    "ALGO",
    "IFACE",
    "IFNAME",
    "STR",
    "DUPLEX",
    "CMD",
    "WORD",
    "UNIT",
    "PATH",
    "PARTNER",
    "NODE",
    "NAME",
    "NAME=KIND:DURATION",
    "LAYOUT",
    "MODES",
    "NAMESPACE",
    "IMAGE",
    "SECRET",
    "A,B,C",
    "TIME",
];

/// Every visible option that takes a number, with the words of its command.
fn numeric_options() -> Vec<(Vec<String>, clap::Arg)> {
    fn walk(cmd: &clap::Command, words: Vec<String>, out: &mut Vec<(Vec<String>, clap::Arg)>) {
        for arg in cmd.get_arguments() {
            let takes_text = arg
                .get_value_names()
                .is_some_and(|names| names.iter().any(|n| TEXT_VALUES.contains(&n.as_str())));
            if arg.is_positional()
                || arg.is_hide_set()
                || !arg.get_action().takes_values()
                || takes_text
                || !arg.get_possible_values().is_empty()
                // An optional value (`--iperf3 [PORT]`) leaves `-1` to be a flag of its own
                // (`serve -1`, one test then exit), as `-6` after it is.
                || arg.get_num_args().is_some_and(|n| n.min_values() == 0)
            {
                continue;
            }
            out.push((words.clone(), arg.clone()));
        }
        for sub in cmd.get_subcommands() {
            let mut w = words.clone();
            w.push(sub.get_name().to_string());
            walk(sub, w, out);
        }
    }
    let mut out = Vec::new();
    walk(
        &wirespeed::cli::command(),
        vec!["wirespeed".into()],
        &mut out,
    );
    out
}

/// Every numeric option of every command, given `-1`: the parser refuses it (no command runs:
/// this is the real CLI's parse, in process), and the line names the flag and says the value
/// is negative or out of its range.
#[test]
fn every_numeric_flag_refuses_a_negative_value_by_name() {
    let options = numeric_options();
    let mut cli = wirespeed::cli::LineParser::new();
    assert!(
        options.len() >= 40,
        "the walk found the options: {}",
        options.len()
    );
    let mut wrong = Vec::new();
    for (words, arg) in &options {
        let long = format!(
            "--{}",
            arg.get_long().expect("visible options have a long name")
        );
        let mut line: Vec<String> = words.clone();
        line.extend([long.clone(), "-1".to_string()]);
        let err = match cli.parse(&line) {
            Ok(_) => {
                wrong.push(format!("{}: accepted", line.join(" ")));
                continue;
            }
            Err(err) => err,
        };
        let Some(text) = wirespeed::cli::refused_value(&err, &line) else {
            wrong.push(format!("{}: not the value's parser: {err}", line.join(" ")));
            continue;
        };
        let says_why = ["negative", "range", "not in", "at least", "0 or more"]
            .iter()
            .any(|w| text.contains(w));
        if !text.contains(&long) || !says_why {
            wrong.push(format!("{}: {text}", line.join(" ")));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A negative quantity with its unit (`-1s`, `-5M`, `-500ms`) is not a number to clap, which
/// read it as the short flags `-1`, `-5`; every numeric option, by its long and its short name,
/// must hand it to its parser, which names the option.
#[test]
fn every_numeric_flag_hands_a_negative_quantity_with_a_unit_to_its_parser() {
    let mut wrong = Vec::new();
    let mut tried = 0;
    // One parser for every line (building clap's tree is most of a parse); every 25th line is
    // also parsed as `main` parses it, with a tree of its own, and must be refused alike.
    let mut cli = wirespeed::cli::LineParser::new();
    for (words, arg) in &numeric_options() {
        let long = format!("--{}", arg.get_long().expect("visible options have a long"));
        let mut names = vec![long.clone()];
        names.extend(arg.get_short().map(|c| format!("-{c}")));
        for name in names {
            for value in ["-1s", "-5M", "-.5k"] {
                tried += 1;
                let mut line: Vec<String> = words.clone();
                line.extend([name.clone(), value.to_string()]);
                let said = |parsed: Result<wirespeed::cli::Cli, clap::Error>| match parsed {
                    Ok(_) => "accepted".to_string(),
                    Err(err) => wirespeed::cli::refused_value(&err, &line)
                        .unwrap_or_else(|| format!("not the value's parser: {err}")),
                };
                let text = said(cli.parse(&line));
                if tried % 25 == 0 {
                    assert_eq!(text, said(wirespeed::cli::try_parse_from(&line)));
                }
                if !text.contains(&long) || !text.contains(value) {
                    wrong.push(format!("{}: {text}", line.join(" ")));
                }
            }
        }
    }
    assert!(tried >= 120, "the walk tried the options: {tried}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The word after `--` is the command of `lab exec`, never an option's value: it is passed on
/// as typed even when it looks like a negative quantity after a numeric option's name.
#[test]
fn a_negative_quantity_after_the_double_dash_is_left_alone() {
    let line: Vec<String> = [
        "wirespeed",
        "lab",
        "exec",
        "x",
        "h1",
        "--",
        "ping",
        "-c",
        "-1s",
    ]
    .map(String::from)
    .to_vec();
    let parsed = wirespeed::cli::try_parse_from(&line).expect("a valid lab exec line");
    let shown = format!("{parsed:?}");
    assert!(shown.contains(r#""-c", "-1s""#), "{shown}");
}

/// The issue's own cases, through the built binary: one line, exit 2, the letter as typed.
#[test]
fn negative_and_zero_values_name_the_flag_and_the_range() {
    for (args, needles) in [
        (&["tcp", "-t", "-1"][..], &["-t/--time", "negative"][..]),
        (&["tcp", "-w", "-1"][..], &["-w/--window", "negative"][..]),
        (
            &["sim", "csma", "--load", "-1"][..],
            &["--load", "negative"][..],
        ),
        (&["sweep", "-M", "1"][..], &["-M/--mss", "88 to 32767"][..]),
        (&["tcp", "-M", "1"][..], &["-M/--mss", "88 to 32767"][..]),
        (
            &["envelope", "-r", "0"][..],
            &["-r/--rate", "at least 1 bit/s"][..],
        ),
        (
            &["sim", "csma", "--hosts", "-1"][..],
            &["--hosts", "negative"][..],
        ),
        (
            &["load", "--settle", "-2"][..],
            &["--settle", "negative"][..],
        ),
        (
            &["probe", "127.0.0.1", "-c", "-3"][..],
            &["-c/--count", "negative"][..],
        ),
        // With a unit, clap alone reads these as the short flags `-1`, `-5`.
        (
            &["tcp", "-t", "-1s"][..],
            &["-t/--time", "'-1s' is negative"][..],
        ),
        (
            &["udp", "-i", "-500ms"][..],
            &["-i/--interval", "'-500ms' is negative"][..],
        ),
        (
            &["udp", "-b", "-5M"][..],
            &["-b/--bitrate", "'-5M' is negative"][..],
        ),
        (
            &["tcp", "-w", "-1K"][..],
            &["-w/--window", "'-1K' is negative"][..],
        ),
        (
            &["load", "--settle", "-2s"][..],
            &["--settle", "'-2s' is negative"][..],
        ),
    ] {
        let run = wirespeed(args);
        for needle in needles {
            assert_one_line_error(&run, needle);
        }
        assert!(
            !run.stderr.contains("unexpected argument"),
            "{args:?}: {}",
            run.stderr
        );
    }
}
