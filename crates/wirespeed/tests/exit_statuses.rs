//! The exit-status contract of docs/exit-status.md, walked through the real binary: bad input
//! is status 2 with nothing on stdout, for every command; an agent that is not there is bad
//! input too (nothing measured, nothing printed, nothing written).

use clap::CommandFactory;

use crate::util::wirespeed;

/// Every runnable command's words (`["lab", "up"]`), from the CLI's own definition, so that a
/// command added later is walked too.
fn leaf_commands() -> Vec<Vec<String>> {
    fn walk(cmd: &clap::Command, path: Vec<String>, out: &mut Vec<Vec<String>>) {
        let subs: Vec<_> = cmd
            .get_subcommands()
            .filter(|s| s.get_name() != "help")
            .collect();
        if subs.is_empty() {
            out.push(path);
            return;
        }
        for sub in subs {
            let mut p = path.clone();
            p.push(sub.get_name().to_string());
            walk(sub, p, out);
        }
    }
    let mut out = Vec::new();
    walk(&wirespeed::cli::Cli::command(), Vec::new(), &mut out);
    out
}

/// A port on loopback where nothing listens: bound, then released.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port.to_string()
}

#[test]
fn bare_wirespeed_and_a_bare_command_group_exit_2_with_usage_on_stderr() {
    for args in [&[][..], &["lab"][..]] {
        let run = wirespeed(args);
        assert_eq!(run.status, 2, "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: stdout {}", run.stdout);
        assert!(run.stderr.contains("Usage:"), "{args:?}: {}", run.stderr);
    }
    // Asked for, help is a result: stdout, status 0.
    let run = wirespeed(&["--help"]);
    assert_eq!(run.status, 0);
    assert!(run.stdout.contains("Usage:"));
}

#[test]
fn every_command_refuses_an_unknown_flag_with_status_2_and_one_line() {
    let commands = leaf_commands();
    assert!(
        commands.len() >= 15,
        "the walk found the commands: {commands:?}"
    );
    let mut wrong = Vec::new();
    for words in &commands {
        let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
        args.push("--no-such-flag");
        let run = wirespeed(&args);
        if run.status != 2 || !run.stdout.is_empty() || run.stderr.lines().count() != 1 {
            wrong.push(format!(
                "{}: status {}, stdout {:?}, stderr {:?}",
                words.join(" "),
                run.status,
                run.stdout,
                run.stderr
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// An agent that is not there: the test cannot start, so status 2, one line, nothing on
/// stdout, and no results file left in the working directory.
#[test]
fn an_absent_agent_is_status_2_with_nothing_printed_or_written() {
    let dir = std::env::temp_dir().join(format!("ws-exit-absent-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let port = closed_port();
    let port = port.as_str();
    let cases: [&[&str]; 5] = [
        &["tcp", "127.0.0.1", "-p", port, "-t", "1"],
        &["udp", "127.0.0.1", "-p", port, "-t", "1"],
        // With -M the sweep does not ask the path's MSS first: its first run meets the absence.
        &[
            "sweep",
            "127.0.0.1",
            "-p",
            port,
            "-n",
            "64KiB",
            "-M",
            "1000",
        ],
        &["sweep", "127.0.0.1", "-p", port, "-n", "64KiB"],
        &[
            "latency",
            "127.0.0.1",
            "-p",
            port,
            "--idle",
            "1s",
            "-t",
            "1s",
        ],
    ];
    for args in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stdout.is_empty(),
            "{args:?}: nothing on stdout, got {stdout}"
        );
        assert_eq!(
            stderr
                .lines()
                .filter(|l| l.starts_with("wirespeed:"))
                .count(),
            1,
            "{args:?}: one error line: {stderr}"
        );
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "{args:?}: nothing written, found {left:?}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A command that cannot be started is refused in one line before the lab is looked at
/// (not `ip netns exec`'s raw message and status 1).
#[test]
fn lab_exec_of_a_missing_program_is_one_line_and_status_2() {
    for program in ["/nonexistent/cmd", "ws-no-such-command-on-path"] {
        let run = wirespeed(&["lab", "exec", "nolab", "h1", "--", program, "-x"]);
        crate::util::assert_one_line_error(&run, program);
        assert!(run.stderr.contains("no such executable"), "{}", run.stderr);
    }
}

/// `mesh --results` and `load --results` create their file only once every flag has been
/// checked: a refused run exits 2 and leaves no file behind (issue 32 item 7).
#[test]
fn a_refused_mesh_or_load_leaves_no_results_file() {
    let dir = std::env::temp_dir().join(format!("ws-exit-nofile-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let cases: [&[&str]; 2] = [
        // One agent: a mesh needs two.
        &["mesh", "--agents", "127.0.0.1:9", "--results", "runs.jsonl"],
        // --hosts beyond the agents given.
        &[
            "load",
            "--agent",
            "127.0.0.1:9",
            "--hosts",
            "5",
            "--results",
            "runs.jsonl",
        ],
    ];
    for args in cases {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_wirespeed"))
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert!(
            !dir.join("runs.jsonl").exists(),
            "{args:?} left its results file: {stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
