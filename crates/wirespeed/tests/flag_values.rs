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
        let err = match wirespeed::cli::try_parse_from(&line) {
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
