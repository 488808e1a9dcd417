//! Completions and manual pages, loaded the way a shell and `man` load them.

use std::process::Command;

use super::util::wirespeed;

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wirespeed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What bash offers for the words typed so far (the last one being completed).
fn bash_offers(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; \
         _wirespeed wirespeed '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        line.len(),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_commands_and_their_own_flags() {
    let run = wirespeed(&["completions", "bash"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let dir = scratch("completions");
    let script = dir.join("wirespeed.bash");
    std::fs::write(&script, &run.stdout).unwrap();
    let commands = bash_offers(&script, &["wirespeed", "s"]);
    for want in ["serve", "sweep", "sim"] {
        assert!(
            commands.iter().any(|c| c == want),
            "{want} not in {commands:?}"
        );
    }
    assert!(!commands.iter().any(|c| c == "tcp"), "{commands:?}");
    let flags = bash_offers(&script, &["wirespeed", "tcp", "--con"]);
    assert!(flags.iter().any(|f| f == "--congestion"), "{flags:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_manual_page_renders_without_a_warning() {
    let dir = scratch("man");
    let run = wirespeed(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let mut pages: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    assert!(pages.len() >= 15, "{pages:?}");
    let have_groff = Command::new("groff").arg("--version").output().is_ok();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let name = page.file_stem().unwrap().to_str().unwrap();
        assert!(text.contains(&format!(".TH {name} 1")), "{name}");
        if have_groff {
            let out = Command::new("groff")
                .args(["-man", "-Tutf8", "-ww", "-z"])
                .arg(page)
                .output()
                .unwrap();
            assert!(
                out.status.success() && out.stderr.is_empty(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn man_refuses_a_file_given_as_its_directory() {
    let dir = scratch("man-file");
    let file = dir.join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let run = wirespeed(&["man", "--dir", file.to_str().unwrap()]);
    super::util::assert_one_line_error(&run, "is a file, not a directory");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A value each offered flag of `tcp`/`udp` takes when tried; flags missing here fail the test
/// below, which names them.
fn value_for(flag: &str, dir: &std::path::Path) -> Option<Option<String>> {
    let v = |s: &str| Some(Some(s.to_string()));
    match flag {
        "--time" => v("1"),
        "--num" | "--bytes" => v("1000B"),
        "--len" => v("1000"),
        "--parallel" | "--repeat" => v("1"),
        "--window" => v("64KiB"),
        "--mss" => v("1200"),
        "--congestion" => v("cubic"),
        "--tos" => v("0"),
        "--bitrate" => v("1M"),
        "--file" => v(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")),
        "--bind" => v("127.0.0.1"),
        "--interval" | "--omit" => v("1"),
        "--affinity" => v("0"),
        "--auth-key-file" => {
            let key = dir.join("key");
            std::fs::write(&key, "0123456789abcdef0123456789abcdef\n").unwrap();
            Some(Some(key.display().to_string()))
        }
        "--link-rate" => v("1G"),
        "--json-format" => v("wirespeed"),
        "--connect-timeout" => v("2000"),
        "--cport" => v("40999"),
        "--bind-dev" => v("lo"),
        "--title" => v("x"),
        "--format" => v("m"),
        "--metrics-file" => Some(Some(dir.join("m.prom").display().to_string())),
        "--nodelay" | "--zerocopy" | "--no-pacing" | "--gso" | "--no-gso" | "--mptcp"
        | "--ipv4" | "--reverse" | "--bidir" | "--json" | "--json-stream" | "--brief"
        | "--dont-fragment" | "--timestamps" => Some(None),
        _ => None,
    }
}

#[test]
fn tcp_and_udp_completions_offer_only_flags_the_command_takes() {
    let run = wirespeed(&["completions", "bash"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let dir = scratch("own-flags");
    let script = dir.join("wirespeed.bash");
    std::fs::write(&script, &run.stdout).unwrap();
    // The same for every command (the schedule's, help, version, the agent's address):
    // checked by their own tests, and not refused by either command.
    let shared = [
        "--every",
        "--count",
        "--until",
        "--slip",
        "--results",
        "--resume",
        "--help",
        "--version",
        "--port",
        "--iperf3",
        "--ipv6",
    ];
    for command in ["tcp", "udp"] {
        let offered = bash_offers(&script, &["wirespeed", command, "--"]);
        assert!(offered.len() > 20, "{command}: {offered:?}");
        let mut unknown = Vec::new();
        for flag in offered.iter().filter(|f| !shared.contains(&f.as_str())) {
            let Some(value) = value_for(flag, &dir) else {
                unknown.push(flag.clone());
                continue;
            };
            // Port 1 on loopback refuses at once: a flag the command takes gets as far as
            // connecting; one it refuses stops before, with its own line.
            let mut args = vec![command, "127.0.0.1", "-p", "1", flag.as_str()];
            if let Some(v) = &value {
                args.push(v);
            }
            let run = wirespeed(&args);
            assert!(
                run.stderr
                    .contains("cannot connect to the agent at 127.0.0.1:1"),
                "`wirespeed {}` is offered but refused: {}",
                args.join(" "),
                run.stderr
            );
        }
        assert!(unknown.is_empty(), "give these a value above: {unknown:?}");
    }
    // What each command refuses is not offered: iperf3 users look for these first.
    let udp = bash_offers(&script, &["wirespeed", "udp", "--"]);
    assert!(!udp.iter().any(|f| f == "--congestion"), "{udp:?}");
    let tcp = bash_offers(&script, &["wirespeed", "tcp", "--"]);
    assert!(!tcp.iter().any(|f| f == "--gso"), "{tcp:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
