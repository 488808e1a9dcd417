//! Issue 33: no error or warning tells the user to use a flag the command does not have. Each
//! command's typical bad inputs are run through the built binary; every flag named in what it
//! prints (`--foo`, `-R 5`) must be a visible option of that command.

use crate::util::wirespeed;

/// The flags a text names: `--long-name` and `-X` (a letter between spaces, brackets or
/// punctuation), in order.
fn flags_named(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let boundary = |c: Option<&char>| c.is_none_or(|c| !(c.is_alphanumeric() || *c == '-'));
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '-' && boundary(i.checked_sub(1).and_then(|j| chars.get(j))) {
            if chars.get(i + 1) == Some(&'-') {
                let start = i + 2;
                let mut end = start;
                while end < chars.len() && (chars[end].is_ascii_alphanumeric() || chars[end] == '-')
                {
                    end += 1;
                }
                if end > start && chars[start].is_ascii_lowercase() {
                    out.push(chars[i..end].iter().collect::<String>());
                }
                i = end;
                continue;
            }
            if chars.get(i + 1).is_some_and(char::is_ascii_alphabetic)
                && boundary(chars.get(i + 2))
                && chars.get(i + 2) != Some(&'-')
            {
                out.push(chars[i..i + 2].iter().collect());
                i += 2;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The visible names (`--time`, `-t`, aliases) of the command `words` selects.
fn visible_flags(words: &[&str]) -> Vec<String> {
    let mut cmd = wirespeed::cli::command();
    for word in words {
        if let Some(sub) = cmd.find_subcommand(word) {
            cmd = sub.clone();
        }
    }
    let mut names = vec!["--help".to_string(), "-h".to_string()];
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        names.extend(arg.get_long().map(|l| format!("--{l}")));
        names.extend(arg.get_short().map(|s| format!("-{s}")));
        for alias in arg.get_visible_aliases().unwrap_or_default() {
            names.push(format!("--{alias}"));
        }
    }
    names
}

#[test]
fn the_extractor_finds_long_and_short_flags_only() {
    assert_eq!(
        flags_named("add -R 5 (or --replications 5); 1-24, -1 s, x-y, e.g. (-t) IPv4-only"),
        ["-R", "--replications", "-t"]
    );
}

#[test]
fn errors_and_warnings_name_only_flags_the_command_has() {
    let dir = std::env::temp_dir().join(format!("ws-flags-named-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad_model = dir.join("bad.toml");
    std::fs::write(&bad_model, "[components.a]\nfixed_ms = \"x\n").unwrap();
    let bad_model = bad_model.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec![
            "sim", "csma", "--hosts", "2", "-t", "10ms", "--warmup", "1ms",
        ],
        vec!["sim", "csma", "--hosts", "2", "-l", "4000"],
        vec!["sim", "csma", "--threads", "0"],
        vec!["sim", "link", "-l", "10"],
        vec!["sim", "link", "--window", "0"],
        vec!["sim", "link", "--ack-every", "0"],
        vec!["sim", "link", "--rto", "0"],
        vec!["sweep", "-M", "1"],
        vec!["tcp", "-M", "1"],
        vec!["tcp", "-t", "-1"],
        vec!["tcp", "-t", "1ns"],
        vec!["probe", "127.0.0.1", "--until-width", "0"],
        vec!["probe", "127.0.0.1", "-c", "0"],
        vec!["load", "--lengths", "6/0"],
        vec!["load", "--hosts", "0"],
        vec!["envelope", "-u", "-l", "0", "-r", "10M"],
        vec!["envelope", "-r", "10M", "--link", "serial", "--vlan", "1"],
        vec!["envelope", "-r", "10M", "--mtu", "10"],
        vec!["model", "predict", bad_model, "ih2"],
    ];
    let mut wrong = Vec::new();
    for args in &cases {
        let run = wirespeed(args);
        let have = visible_flags(args);
        let said: String = run
            .stderr
            .lines()
            .chain(run.stdout.lines().filter(|l| l.starts_with("warning:")))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(
            !said.is_empty(),
            "{args:?}: said nothing (status {})",
            run.status
        );
        for flag in flags_named(&said) {
            if !have.contains(&flag) && !args.contains(&flag.as_str()) {
                wrong.push(format!("{}: names {flag}: {said}", args.join(" ")));
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The issue's cases one by one: each refused in one line, exit 2, nothing on stdout.
#[test]
fn degenerate_values_are_refused_before_any_work() {
    for (args, needle) in [
        (
            &["probe", "127.0.0.1", "--until-width", "0"][..],
            "--until-width 0",
        ),
        (
            &["load", "--lengths", "6/0"][..],
            "both counts must be at least 1",
        ),
        (
            &["sim", "link", "--window", "0"][..],
            "--window, --ack-every and --rto",
        ),
        (&["sim", "link", "-l", "10"][..], "lengths must be 64 to"),
        (&["envelope", "-u", "-l", "0", "-r", "10M"][..], "-l 0"),
        (
            &["envelope", "-r", "10M", "--link", "serial", "--vlan", "1"][..],
            "serial line carries none",
        ),
    ] {
        crate::util::assert_one_line_error(&wirespeed(args), needle);
    }
    // A serial line's smallest frame is the smallest IP packet, not 1 byte.
    let run = wirespeed(&["envelope", "-r", "56k", "--link", "serial"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("at the minimum (20 wire bytes)"),
        "{}",
        run.stdout
    );
}
