//! Docs that run: every example in README.md and docs/*.md is executed as written and its
//! output compared with the text in the document (issue 15 item 11).
//!
//! The convention (CONTRIBUTING.md, "Examples in the docs"):
//!
//! * An example is a fenced block whose info string starts with `console`. Each line starting
//!   with `$ ` is a command, run by `sh -c` in a fresh scratch directory that holds links to the
//!   repository's `labs/` and `examples/`, with the built `wirespeed` first on `PATH`. A line
//!   ending in `\` continues on the next one.
//! * The lines after a command, up to the next command or the end of the block, are its expected
//!   output: what it printed on stdout, then what it printed on stderr. Trailing blanks are
//!   ignored. `[..]` matches any text within one line; a line that is exactly `...` matches any
//!   number of lines (none included).
//! * The plain progress lines a slow run prints on stderr every 5 s (`simulating: 3/42 runs,
//!   5 s elapsed, ...`) are left out before the comparison: their count is the machine's speed.
//! * A command must exit 0 unless its expected output ends with a line `[exit N]`.
//! * `$PORT` is the port of a `wirespeed serve` agent on 127.0.0.1, which this test starts on
//!   an ephemeral port and stops at the end.
//! * An example that needs root (a lab, raw sockets) says so with ```` ```console root ````: it
//!   runs when the test runs as root (as CI does) and is skipped, with a note, otherwise.
//! * An example that cannot run here (it needs a lab, root, or minutes) says so in its info
//!   string: ```` ```console not-run: REASON ````. Its commands are still checked to name a real
//!   command (`wirespeed CMD --help` must succeed), and the reason must not be empty.
//!
//! * Examples run side by side: each block in its own scratch directory, on one of a few
//!   lanes. Those that use the agent on `$PORT` or a fixed port number run one after another
//!   on a lane of their own, in document order, and those that build a lab on two lanes of
//!   their own (the test holds `lab::LAB_LOCK` beside other tests' labs). So a block must not
//!   depend on another block; the steps of one block run in order.
//!
//! Blocks of any other kind (`sh`, `toml`, plain) are not run: use them for commands that are
//! not examples with output (set-up, sketches).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::util::{ChildGuard, Scratch};

/// Longest a single documented command may run before it is killed and reported.
const COMMAND_LIMIT: Duration = Duration::from_secs(90);

/// One fenced example block.
#[derive(Debug)]
struct Example {
    file: String,
    /// 1-based line of the opening fence.
    line: usize,
    /// `Some(reason)` for `console not-run: reason`.
    not_run: Option<String>,
    /// `console root`: runs only as root.
    root: bool,
    steps: Vec<Step>,
}

#[derive(Debug)]
struct Step {
    command: String,
    expected: Vec<String>,
    status: i32,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every docs/*.md, in a stable order.
fn doc_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ exists")
        .map(|e| e.expect("docs/ is readable").path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files.insert(0, root.join("README.md"));
    files
}

/// The `console` blocks of one Markdown text.
fn parse_examples(file: &str, text: &str) -> Result<Vec<Example>, String> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((i, line)) = lines.next() {
        let trimmed = line.trim_start();
        let Some(info) = trimmed.strip_prefix("```") else {
            continue;
        };
        let fence_indent = line.len() - trimmed.len();
        let mut body = Vec::new();
        let mut closed = false;
        for (_, l) in lines.by_ref() {
            if l.trim() == "```" {
                closed = true;
                break;
            }
            body.push(l.get(fence_indent..).unwrap_or(l.trim_start()).to_string());
        }
        if !closed {
            return Err(format!("{file}:{}: fence never closed", i + 1));
        }
        let info = info.trim();
        let Some(rest) = info.strip_prefix("console") else {
            continue;
        };
        let rest = rest.trim();
        let root = rest == "root";
        let not_run = if rest.is_empty() || root {
            None
        } else if let Some(reason) = rest.strip_prefix("not-run:") {
            let reason = reason.trim();
            if reason.is_empty() {
                return Err(format!(
                    "{file}:{}: `console not-run:` needs a reason after the colon",
                    i + 1
                ));
            }
            Some(reason.to_string())
        } else {
            return Err(format!(
                "{file}:{}: unknown info string {info:?}: use `console`, `console root` or `console not-run: REASON`",
                i + 1
            ));
        };
        let steps = parse_steps(&body).map_err(|e| format!("{file}:{}: {e}", i + 1))?;
        if steps.is_empty() {
            return Err(format!(
                "{file}:{}: a console block with no `$ ` command",
                i + 1
            ));
        }
        out.push(Example {
            file: file.to_string(),
            line: i + 1,
            not_run,
            root,
            steps,
        });
    }
    Ok(out)
}

fn parse_steps(body: &[String]) -> Result<Vec<Step>, String> {
    let mut steps: Vec<Step> = Vec::new();
    let mut lines = body.iter();
    while let Some(line) = lines.next() {
        if let Some(cmd) = line.strip_prefix("$ ") {
            let mut command = cmd.to_string();
            while command.ends_with('\\') {
                command.pop();
                match lines.next() {
                    Some(next) => command.push_str(next.trim_start()),
                    None => return Err("a command ends in `\\` with no next line".into()),
                }
            }
            steps.push(Step {
                command,
                expected: Vec::new(),
                status: 0,
            });
        } else {
            match steps.last_mut() {
                Some(step) => step.expected.push(line.trim_end().to_string()),
                None => return Err(format!("output before any `$ ` command: {line:?}")),
            }
        }
    }
    for step in &mut steps {
        while step.expected.last().is_some_and(|l| l.is_empty()) {
            step.expected.pop();
        }
        if let Some(last) = step.expected.last()
            && let Some(n) = last
                .strip_prefix("[exit ")
                .and_then(|r| r.strip_suffix(']'))
        {
            step.status = n
                .parse()
                .map_err(|_| format!("bad exit status line {last:?}: use `[exit 2]`"))?;
            step.expected.pop();
        }
    }
    Ok(steps)
}

/// Does `line` match the pattern `pat`, in which `[..]` stands for any text?
fn line_matches(pat: &str, line: &str) -> bool {
    let parts: Vec<&str> = pat.split("[..]").collect();
    if parts.len() == 1 {
        return pat == line;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !line.starts_with(first) || line.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &line[first.len()..];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

/// Do the actual lines match the expected ones, where a line `...` stands for any number of
/// lines? Backtracks only at `...`, so the work is bounded by expected x actual.
fn lines_match(expected: &[String], actual: &[&str]) -> bool {
    // match_from[i][j]: expected[i..] matches actual[j..]; filled from the end.
    let (n, m) = (expected.len(), actual.len());
    let mut table = vec![vec![false; m + 1]; n + 1];
    table[n][m] = true;
    for i in (0..n).rev() {
        for j in (0..=m).rev() {
            table[i][j] = if expected[i] == "..." {
                table[i + 1][j] || (j < m && table[i][j + 1])
            } else {
                j < m && line_matches(&expected[i], actual[j]) && table[i + 1][j + 1]
            };
        }
    }
    table[0][0]
}

/// A `wirespeed serve` on 127.0.0.1 and an ephemeral port, killed when dropped.
struct Agent {
    _child: ChildGuard,
    port: u16,
}

impl Agent {
    fn start() -> Agent {
        let mut child = ChildGuard::new(
            Command::new(env!("CARGO_BIN_EXE_wirespeed"))
                .args(["serve", "-B", "127.0.0.1", "-p", "0", "--json"])
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .expect("the agent starts"),
        );
        let mut first = String::new();
        let mut reader = BufReader::new(child.stdout.take().expect("piped"));
        reader
            .read_line(&mut first)
            .expect("the agent prints where it listens");
        // The agent logs a JSON line per session: drain them so that it never blocks on a
        // full pipe. The thread ends when the agent is killed and the pipe closes.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let port = serde_json::from_str::<serde_json::Value>(&first)
            .ok()
            .and_then(|v| {
                v["listening"]
                    .as_str()?
                    .rsplit_once(':')?
                    .1
                    .parse::<u16>()
                    .ok()
            });
        let Some(port) = port else {
            drop(child);
            panic!("no port in the agent's first line {first:?}");
        };
        Agent {
            _child: child,
            port,
        }
    }
}

/// A scratch directory with links to the repository's data files; removed when dropped.
fn scratch_with_data(tag: usize) -> Scratch {
    let scratch = Scratch::new(&format!("docs-{tag}"));
    let root = repo_root().canonicalize().expect("repository root");
    for name in ["labs", "examples"] {
        std::os::unix::fs::symlink(root.join(name), scratch.path(name)).expect("link");
    }
    scratch
}

struct Ran {
    status: i32,
    output: String,
}

/// Runs one documented command line under `sh -c`, bounded by [`COMMAND_LIMIT`].
fn run_command(command: &str, dir: &Path, port: u16) -> Ran {
    let bin = Path::new(env!("CARGO_BIN_EXE_wirespeed"))
        .parent()
        .expect("the binary has a directory");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("PATH", path)
        .env("PORT", port.to_string())
        .env_remove("WIRESPEED_SYSFS_NET")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("sh runs");
    // Drain both pipes on threads so that a chatty command cannot block on a full pipe.
    let mut out = child.stdout.take().expect("piped");
    let mut err = child.stderr.take().expect("piped");
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status.code().unwrap_or(-1);
        }
        if started.elapsed() > COMMAND_LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            break -1;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut output = String::from_utf8_lossy(&out_t.join().unwrap_or_default()).into_owned();
    let err = String::from_utf8_lossy(&err_t.join().unwrap_or_default()).into_owned();
    for line in err.lines().filter(|l| !is_progress_line(l)) {
        output.push_str(line);
        output.push('\n');
    }
    if started.elapsed() > COMMAND_LIMIT {
        output.push_str(&format!(
            "[killed after {} s: keep documented examples short]\n",
            COMMAND_LIMIT.as_secs()
        ));
    }
    Ran { status, output }
}

fn all_examples() -> Vec<Example> {
    let mut all = Vec::new();
    for path in doc_files() {
        let text = std::fs::read_to_string(&path).expect("doc file readable");
        let name = path
            .strip_prefix(repo_root())
            .unwrap_or(&path)
            .display()
            .to_string();
        all.extend(parse_examples(&name, &text).unwrap_or_else(|e| panic!("{e}")));
    }
    all
}

/// The subcommand words of a `wirespeed ...` command line (`lab exec` of
/// `wirespeed lab exec NAME ...`), or `None` when the line does not run wirespeed first.
fn subcommand(command: &str) -> Option<Vec<String>> {
    let words: Vec<&str> = command.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "wirespeed")?;
    if words[..at].iter().any(|w| !w.contains('=')) {
        return None; // something other than VAR=value runs first
    }
    Some(
        words[at + 1..]
            .iter()
            .take_while(|w| {
                w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.starts_with('-')
            })
            .take(2)
            .map(|w| w.to_string())
            .collect(),
    )
}

/// Lanes that run the examples which share nothing, beside the one lane that runs those
/// sharing a port in order. Most examples wait (timed tests, schedules, agents starting), so
/// more lanes than cores still shorten the run; the sum of the examples' times is about 90 s
/// on an idle 2-core machine, one after another. Five lanes against three, the docs test alone,
/// interleaved at load 10-19: 18.2-21.5 s against 25.9-28.3 s.
const PARALLEL_LANES: usize = 5;

/// Lanes that run the examples which build a lab (or need root), each taking the next one not
/// yet taken. One lane was the docs test's longest: its seven examples one after another took
/// 22 of the test's 25 s (two latency runs of 5-6 s, a tcp run, crossings measured); on two
/// lanes two labs run at once, as the other tests' labs already run beside these. Each of
/// these emulators keeps a 10 Mbit/s link's time: a few percent of a core.
const LAB_LANES: usize = 2;

/// How an example may run beside the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// Its own scratch directory, port 0 or a port drawn from its shell's PID: any lane.
    Any,
    /// It talks to the shared agent on `$PORT` or names a fixed port that another example (or a
    /// second copy of itself) could hold: one lane, in document order.
    SharedPort,
    /// It builds a lab (root). Each lab's addresses live in its own namespaces, so two labs
    /// from one topology file never meet; their emulated links keep time on the machine's CPU,
    /// so these run on lanes of their own, [`LAB_LANES`] of them (the lab examples judge
    /// wording and mask their figures), beside the other lanes.
    Lab,
}

fn lane(example: &Example) -> Lane {
    if example.root {
        Lane::Lab
    } else if example
        .steps
        .iter()
        .any(|step| step.command.contains("$PORT") || names_a_fixed_port(&step.command))
    {
        Lane::SharedPort
    } else {
        Lane::Any
    }
}

/// `--cport 30410`, `--metrics :9210`, `-p 5301`, `--port 5301`: a port given as a number other
/// than 0 (the kernel's choice).
fn names_a_fixed_port(command: &str) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    let is_port = |w: &str| w.parse::<u16>().is_ok_and(|p| p != 0);
    words.iter().enumerate().any(|(i, w)| {
        let next_is_port = words.get(i + 1).is_some_and(|n| is_port(n));
        let flag = matches!(*w, "-p" | "--port" | "--cport") && next_is_port;
        let joined = ["--port=", "--cport="]
            .iter()
            .any(|f| w.strip_prefix(f).is_some_and(is_port));
        let colon = w.rsplit_once(':').is_some_and(|(_, p)| is_port(p));
        flag || joined || colon
    })
}

/// Runs one example's steps in its own scratch directory; the failure text of its first step
/// that did not print what the docs show, if any. Later steps of a block depend on earlier
/// ones, so a block stops at its first failure.
fn run_example(n: usize, example: &Example, port: u16, ran: &AtomicUsize) -> Option<String> {
    let scratch = scratch_with_data(n);
    for step in &example.steps {
        ran.fetch_add(1, Ordering::Relaxed);
        let got = run_command(&step.command, scratch.dir(), port);
        let actual: Vec<&str> = got.output.lines().map(str::trim_end).collect();
        let ok = got.status == step.status && lines_match(&step.expected, &actual);
        if !ok {
            return Some(format!(
                "{}:{}: $ {}\n  exit {} (expected {})\n--- expected\n{}\n--- actual\n{}",
                example.file,
                example.line,
                step.command,
                got.status,
                step.status,
                step.expected.join("\n"),
                got.output.trim_end()
            ));
        }
    }
    None
}

#[test]
fn every_documented_example_runs_and_prints_what_the_docs_show() {
    let examples = all_examples();
    assert!(
        examples.len() >= 15,
        "only {} examples found in README.md and docs/",
        examples.len()
    );
    // Its lanes load both cores and build labs: never beside a test that needs them quiet.
    let _lane = crate::lab::LAB_LOCK.beside_others();
    let agent = Agent::start();
    // SAFETY: geteuid has no preconditions and cannot fail.
    let is_root = unsafe { libc::geteuid() } == 0;
    let mut shared_port = Vec::new();
    let mut independent = Vec::new();
    let mut labs = Vec::new();
    for (n, example) in examples.iter().enumerate() {
        if example.not_run.is_some() {
            continue;
        }
        if example.root && !is_root {
            eprintln!(
                "{}:{}: skipped: the example needs root",
                example.file, example.line
            );
            continue;
        }
        match lane(example) {
            Lane::Any => independent.push((n, example)),
            Lane::SharedPort => shared_port.push((n, example)),
            Lane::Lab => labs.push((n, example)),
        }
    }
    let ran = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let next_lab = AtomicUsize::new(0);
    let started = Instant::now();
    // Each example's time, and each lane's, printed at the end: where the test's time went.
    let took = Mutex::new(Vec::new());
    let lanes_took = Mutex::new(Vec::new());
    let run = |n: usize, example: &Example| {
        let began = Instant::now();
        if let Some(failure) = run_example(n, example, agent.port, &ran) {
            failures.lock().unwrap().push((n, failure));
        }
        let at = format!("{}:{}", example.file, example.line);
        took.lock().unwrap().push((began.elapsed(), at));
    };
    // Runs the examples of one queue, each lane taking the next one not yet taken, so a long
    // one does not hold up the examples queued behind it.
    let lane_of = |kind: &'static str, queue: &[(usize, &Example)], next: &AtomicUsize| {
        let began = Instant::now();
        while let Some(&(n, example)) = queue.get(next.fetch_add(1, Ordering::Relaxed)) {
            run(n, example);
        }
        lanes_took.lock().unwrap().push((kind, began.elapsed()));
    };
    std::thread::scope(|scope| {
        // The lab examples on lanes of their own, beside the other lanes and the other tests'
        // labs: each builds its own lab and reads only its own.
        for _ in 0..LAB_LANES {
            scope.spawn(|| lane_of("lab", &labs, &next_lab));
        }
        // Those sharing a port, one lane in document order.
        scope.spawn(|| lane_of("port", &shared_port, &AtomicUsize::new(0)));
        for _ in 0..PARALLEL_LANES {
            scope.spawn(|| lane_of("any", &independent, &next));
        }
    });
    let mut failures = failures.into_inner().unwrap();
    let mut took = took.into_inner().unwrap();
    took.sort();
    let longest: Vec<String> = took
        .iter()
        .rev()
        .take(6)
        .map(|(t, at)| format!("{at} {:.1} s", t.as_secs_f64()))
        .collect();
    let lanes: Vec<String> = lanes_took
        .into_inner()
        .unwrap()
        .iter()
        .map(|(kind, t)| format!("{kind} {:.1} s", t.as_secs_f64()))
        .collect();
    eprintln!(
        "{} examples: {} on {PARALLEL_LANES} lanes beside {} sharing a port and {} with labs \
         on {LAB_LANES} lanes, {:.1} s in all; lanes: {}; longest: {}",
        independent.len() + shared_port.len() + labs.len(),
        independent.len(),
        shared_port.len(),
        labs.len(),
        started.elapsed().as_secs_f64(),
        lanes.join(", "),
        longest.join(", ")
    );
    let ran = ran.into_inner();
    // In document order, whichever lane finished first.
    failures.sort();
    let failures: Vec<String> = failures.into_iter().map(|(_, f)| f).collect();
    assert!(ran > 0);
    assert!(
        failures.is_empty(),
        "{} of the documented examples did not print what the docs show (fix the doc or \
         the command; mask unstable figures with [..] and ...):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

#[test]
fn examples_that_share_a_lab_or_a_port_run_in_order() {
    assert!(names_a_fixed_port(
        "wirespeed tcp -n 1MiB --cport 30410 --bind-dev lo"
    ));
    assert!(names_a_fixed_port("wirespeed serve -p 0 --metrics :9210"));
    assert!(names_a_fixed_port("wirespeed serve -p 5301 &"));
    assert!(names_a_fixed_port("wirespeed tcp 127.0.0.1 --port=5201"));
    assert!(!names_a_fixed_port(
        "wirespeed serve -B 127.0.0.1 -p 0 --iperf3 0"
    ));
    assert!(!names_a_fixed_port(
        "p=$((20000 + $$ % 20000)); iperf3 -s -p $p & wirespeed tcp 127.0.0.1 -p $p -t 1"
    ));
    assert!(!names_a_fixed_port("wirespeed tcp -t 1 -i 0.5"));
    let parsed = parse_examples(
        "t.md",
        "```console\n$ wirespeed tcp -t 1\n```\n\
         ```console\n$ wirespeed udp 127.0.0.1 -p $PORT -t 1\n```\n\
         ```console root\n$ wirespeed lab run labs/two-host-10m.toml -- true\n```\n",
    )
    .unwrap();
    let lanes: Vec<Lane> = parsed.iter().map(lane).collect();
    assert_eq!(lanes, [Lane::Any, Lane::SharedPort, Lane::Lab]);
}

#[test]
fn examples_not_run_name_a_reason_and_real_commands_and_stay_few() {
    let examples = all_examples();
    let not_run: Vec<&Example> = examples.iter().filter(|e| e.not_run.is_some()).collect();
    let run = examples.len() - not_run.len();
    assert!(
        not_run.len() * 3 <= run,
        "{} examples are marked not-run against {run} that run: keep the not-run ones few",
        not_run.len()
    );
    for example in not_run {
        for step in &example.steps {
            let Some(words) = subcommand(&step.command) else {
                continue;
            };
            let mut args: Vec<&str> = words.iter().map(String::as_str).collect();
            args.push("--help");
            let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
                .args(&args)
                .output()
                .expect("wirespeed runs");
            assert!(
                out.status.success(),
                "{}:{}: `wirespeed {}` is not a command: {}",
                example.file,
                example.line,
                args.join(" "),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// The plain progress line a long run prints on stderr every 5 s when stderr is not a terminal
/// (`simulating: 3/42 runs, 5 s elapsed, about 20 s left`): how many a run prints depends on
/// the machine's speed, so the comparison leaves them out.
fn is_progress_line(line: &str) -> bool {
    let Some((what, rest)) = line.split_once(": ") else {
        return false;
    };
    let count = rest.split(' ').next().unwrap_or_default();
    !what.contains(' ')
        && rest.contains(" elapsed, ")
        && count.split_once('/').is_some_and(|(done, total)| {
            [done, total]
                .iter()
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        })
}

/// The subcommands `wirespeed --help` (or `wirespeed CMD --help`) lists, without `help`.
fn listed_subcommands(args: &[&str]) -> Vec<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .arg("--help")
        .output()
        .expect("wirespeed runs");
    assert!(out.status.success(), "{args:?} --help failed");
    let text = String::from_utf8(out.stdout).expect("help is UTF-8");
    text.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_command_has_help_a_docs_page_and_a_readme_example() {
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let commands = listed_subcommands(&[]);
    assert!(commands.len() >= 10, "{commands:?}");
    for command in &commands {
        let subs = listed_subcommands(&[command]);
        for sub in &subs {
            // Every second-level command answers --help too.
            listed_subcommands(&[command, sub]);
        }
        let page = root.join("docs").join(format!("{command}.md"));
        assert!(
            page.is_file(),
            "`wirespeed {command}` has no page docs/{command}.md (CONTRIBUTING.md, the recipe)"
        );
        let shown = if subs.is_empty() {
            vec![format!("wirespeed {command}")]
        } else {
            subs.iter()
                .map(|s| format!("wirespeed {command} {s}"))
                .collect()
        };
        assert!(
            shown.iter().any(|s| readme.contains(s.as_str())),
            "README.md names none of {shown:?}: add the command to the table and the tour"
        );
    }
    let lines = readme.lines().count();
    assert!(
        lines < 400,
        "README.md has {lines} lines: move detail to docs/"
    );
}

/// Pages other branches add (issue 15/16 work in parallel); links to them resolve once merged.
/// Remove a name from this list when its file is in the repository.
const PENDING_PAGES: [&str; 0] = [];

/// The targets of the relative Markdown links `[text](target)` in a text, without anchors.
fn relative_links(text: &str) -> Vec<&str> {
    let mut links = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split('#').next().unwrap_or_default();
        if !target.is_empty() && !target.contains("://") && !target.contains(' ') {
            links.push(target);
        }
        rest = &rest[end..];
    }
    links
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let root = repo_root().canonicalize().expect("repository root");
    let mut files = doc_files();
    files.push(root.join("CONTRIBUTING.md"));
    let mut broken = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("doc file readable");
        let dir = file.parent().expect("a file has a directory");
        for link in relative_links(&text) {
            let target = dir.join(link);
            if target.exists() {
                continue;
            }
            let pending = target
                .canonicalize()
                .ok()
                .or_else(|| {
                    let parent = target.parent()?.canonicalize().ok()?;
                    Some(parent.join(target.file_name()?))
                })
                .and_then(|t| t.strip_prefix(&root).ok().map(Path::to_path_buf))
                .is_some_and(|t| PENDING_PAGES.iter().any(|p| Path::new(p) == t));
            if !pending {
                broken.push(format!("{}: {link}", file.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_matcher_masks_within_a_line_and_across_lines() {
    let pat = |s: &str| s.lines().map(str::to_string).collect::<Vec<_>>();
    assert!(line_matches("rate [..] Mbit/s", "rate 9.41 Mbit/s"));
    assert!(line_matches("rate [..] Mbit/s", "rate  Mbit/s"));
    assert!(!line_matches("rate [..] Mbit/s", "rate 9.41 Gbit/s"));
    assert!(line_matches("[..]", ""));
    assert!(line_matches("a[..]b[..]c", "a1b2c"));
    assert!(!line_matches("a[..]b[..]c", "a1c2b"));
    assert!(
        !line_matches("ab[..]ba", "aba"),
        "the two ends must not overlap"
    );
    assert!(!line_matches("exact", "exact but longer"));
    assert!(lines_match(&pat("a\n...\nz"), &["a", "b", "c", "z"]));
    assert!(lines_match(&pat("a\n...\nz"), &["a", "z"]));
    assert!(!lines_match(&pat("a\n...\nz"), &["a", "b"]));
    assert!(lines_match(&pat("...\nx [..]\n..."), &["1", "x 2", "3"]));
    assert!(
        !lines_match(&pat("a\nb"), &["a", "b", "c"]),
        "no silent extra lines"
    );
    assert!(!lines_match(&pat("a\nb\nc"), &["a", "b"]));
    assert!(lines_match(&[], &[]));
    assert!(!lines_match(&[], &["unexpected output"]));
}

#[test]
fn the_parser_reads_commands_output_exit_status_and_not_run_reasons() {
    let text = "intro\n```console\n$ wirespeed envelope \\\n  -r 10M\nline 1\n...\n\n$ wirespeed bad\nerror\n[exit 2]\n```\n```sh\n$ not an example\n```\n```console not-run: needs root\n$ wirespeed lab up x\n```\n```console root\n$ wirespeed probe ::1\n```\n";
    let ex = parse_examples("t.md", text).unwrap();
    assert_eq!(ex.len(), 3);
    assert!(ex[2].root && ex[2].not_run.is_none() && !ex[0].root);
    assert_eq!(ex[0].line, 2);
    assert_eq!(ex[0].steps[0].command, "wirespeed envelope -r 10M");
    assert_eq!(ex[0].steps[0].expected, ["line 1", "..."]);
    assert_eq!(ex[0].steps[0].status, 0);
    assert_eq!(ex[0].steps[1].status, 2);
    assert_eq!(ex[0].steps[1].expected, ["error"]);
    assert_eq!(ex[1].not_run.as_deref(), Some("needs root"));
    assert!(parse_examples("t.md", "```console not-run:\n$ x\n```\n").is_err());
    assert!(parse_examples("t.md", "```console maybe\n$ x\n```\n").is_err());
    assert!(parse_examples("t.md", "```console\noutput first\n```\n").is_err());
    assert!(parse_examples("t.md", "```console\n$ x\n").is_err());
    assert_eq!(
        subcommand("wirespeed lab exec NAME h1 -- ping"),
        Some(vec!["lab".to_string(), "exec".to_string()])
    );
    assert_eq!(
        subcommand("WIRESPEED_SYSFS_NET=x wirespeed diagnose"),
        Some(vec!["diagnose".to_string()])
    );
    assert_eq!(subcommand("mkdir -p results"), None);
    assert_eq!(
        relative_links("see [a](docs/a.md#x), [b](https://x.invalid/b) and [c](../c.md)"),
        ["docs/a.md", "../c.md"]
    );
}

/// The `wirespeed ...` invocations of a shell text (one logical line, continuations joined):
/// split at `|`, `;`, `&&`, `&`, each command's words up to a redirection or a comment, with
/// quotes removed. Only commands whose first word (after `VAR=value`s) is `wirespeed`, or
/// that run it through `lab exec ... --`, are kept.
fn wirespeed_invocations(line: &str) -> Vec<Vec<String>> {
    let mut words: Vec<String> = Vec::new();
    let mut commands: Vec<Vec<String>> = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    let flush = |word: &mut String, words: &mut Vec<String>, in_word: &mut bool| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                in_word = true;
            }
            (None, '#') if !in_word => break,
            (None, '|' | ';' | '&') => {
                flush(&mut word, &mut words, &mut in_word);
                if chars.peek() == Some(&c) {
                    chars.next();
                }
                commands.push(std::mem::take(&mut words));
            }
            (None, c) if c.is_whitespace() => flush(&mut word, &mut words, &mut in_word),
            (None, c) => {
                word.push(c);
                in_word = true;
            }
        }
    }
    flush(&mut word, &mut words, &mut in_word);
    commands.push(words);
    commands
        .into_iter()
        .filter_map(|mut words| {
            // A redirection ends the program's own arguments.
            if let Some(at) = words
                .iter()
                .position(|w| w.starts_with('>') || w.starts_with("2>") || w.starts_with('<'))
            {
                words.truncate(at);
            }
            let first = words.iter().position(|w| !w.contains('='))?;
            let words = words.split_off(first);
            let name = Path::new(words.first()?).file_name()?.to_str()?;
            if name != "wirespeed" {
                return None;
            }
            // `wirespeed lab exec NAME NODE -- wirespeed ...`: the inner command too.
            Some(words)
        })
        .flat_map(|words| {
            let inner = words
                .iter()
                .position(|w| w == "--")
                .filter(|&at| words.get(at + 1).is_some_and(|w| w.ends_with("wirespeed")))
                .map(|at| words[at + 1..].to_vec());
            std::iter::once(words).chain(inner)
        })
        .collect()
}

/// Issue 33: the command lines the docs show but CI cannot run (a fleet, days, root, a
/// remote host) are parsed by the real CLI, so that a renamed or refused flag cannot stay in
/// them: `sh` blocks, `console not-run` blocks, and inline `wirespeed ...` spans without
/// placeholders (`--until 7d` in schedules.md, `--until 30d` in mesh.md).
#[test]
fn every_command_line_the_docs_do_not_run_is_parsed_by_the_cli() {
    // HOST, A, N, [PORT], <FILE>, ...: the reader fills these in.
    let placeholder = |w: &str| {
        w.chars().next().is_some_and(|c| c.is_ascii_uppercase())
            && w.chars()
                .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            || w.contains("...")
            || w.contains('<')
            || w.contains('[')
    };
    // `wirespeed 0.1.0 +queue` (a version line) names no command.
    let names_a_command = |span: &str| {
        span.split_whitespace()
            .nth(1)
            .is_some_and(|w| w.starts_with(|c: char| c.is_ascii_lowercase()))
    };
    let mut checked = Vec::new();
    let mut wrong = Vec::new();
    for path in doc_files() {
        let text = std::fs::read_to_string(&path).expect("doc file readable");
        let file = path
            .strip_prefix(repo_root())
            .unwrap_or(&path)
            .display()
            .to_string();
        // (line number, command line, an inline span: a fragment that may leave out required
        // arguments)
        let mut lines: Vec<(usize, String, bool)> = Vec::new();
        let mut block: Option<String> = None;
        let mut pending = String::new();
        for (n, line) in text.lines().enumerate() {
            let trimmed = line.trim_start();
            if let Some(info) = trimmed.strip_prefix("```") {
                block = match block {
                    Some(_) => None,
                    None => Some(info.trim().to_string()),
                };
                continue;
            }
            match block.as_deref() {
                Some(info) if info == "sh" || info.starts_with("console not-run") => {
                    let line = line.trim();
                    let line = if info == "sh" {
                        line.strip_prefix("$ ").unwrap_or(line)
                    } else if let Some(cmd) = line.strip_prefix("$ ") {
                        cmd
                    } else if !pending.is_empty() {
                        line
                    } else {
                        continue; // expected output
                    };
                    pending.push_str(line.trim_end_matches('\\'));
                    pending.push(' ');
                    if !line.ends_with('\\') {
                        lines.push((n + 1, std::mem::take(&mut pending), false));
                    }
                }
                Some(_) => {}
                None => {
                    for span in line.split('`').skip(1).step_by(2) {
                        // A span with no option is a command's name, not an example.
                        if span.starts_with("wirespeed ")
                            && names_a_command(span)
                            && span.split_whitespace().any(|w| w.starts_with('-'))
                            && !span.split_whitespace().any(placeholder)
                        {
                            lines.push((n + 1, span.to_string(), true));
                        }
                    }
                }
            }
        }
        for (n, line, inline) in lines {
            for words in wirespeed_invocations(&line) {
                // Shell variables stand for a value the reader supplies.
                let words: Vec<String> = words
                    .into_iter()
                    .map(|w| {
                        if w.starts_with('$') {
                            "1".to_string()
                        } else {
                            w
                        }
                    })
                    .collect();
                // A bare command group (`wirespeed lab`) is a reference, not an example.
                if words.len() < 2 {
                    continue;
                }
                match wirespeed::cli::try_parse_from(&words) {
                    Ok(_) => checked.push(format!("{file}:{n}")),
                    Err(err)
                        if inline
                            && err.kind() == clap::error::ErrorKind::MissingRequiredArgument =>
                    {
                        checked.push(format!("{file}:{n}"))
                    }
                    Err(err)
                        if matches!(
                            err.kind(),
                            clap::error::ErrorKind::DisplayHelp
                                | clap::error::ErrorKind::DisplayVersion
                                | clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                        ) =>
                    {
                        checked.push(format!("{file}:{n}"))
                    }
                    Err(err) => wrong.push(format!(
                        "{file}:{n}: {}: {}",
                        words.join(" "),
                        err.render().to_string().lines().next().unwrap_or_default()
                    )),
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    for needle in ["docs/schedules.md:8", "docs/mesh.md:57"] {
        assert!(
            checked.iter().any(|c| c == needle),
            "{needle} not checked: {checked:?}"
        );
    }
}

#[test]
fn shell_lines_split_into_wirespeed_invocations() {
    assert_eq!(
        wirespeed_invocations("wirespeed serve -p 5301 &  # an agent"),
        [["wirespeed", "serve", "-p", "5301"]]
    );
    assert_eq!(
        wirespeed_invocations("X=1 wirespeed tcp 'a b' -t 1 > out.json 2>&1 | tail -3 && ls"),
        [["wirespeed", "tcp", "a b", "-t", "1"]]
    );
    assert_eq!(
        wirespeed_invocations("wirespeed lab exec l h -- wirespeed probe ::1"),
        [
            &[
                "wirespeed",
                "lab",
                "exec",
                "l",
                "h",
                "--",
                "wirespeed",
                "probe",
                "::1"
            ][..],
            &["wirespeed", "probe", "::1"][..]
        ]
    );
    assert!(wirespeed_invocations("kubectl apply -f -").is_empty());
}

#[test]
fn only_the_plain_progress_line_is_left_out() {
    assert!(is_progress_line(
        "simulating: 3/42 runs, 5 s elapsed, about 20 s left"
    ));
    assert!(is_progress_line(
        "sweep: 12/48 runs, 30 s elapsed, about 1m 30s left (16K x 32K)"
    ));
    assert!(!is_progress_line("wirespeed: error: 3/4 runs failed"));
    assert!(!is_progress_line(
        "verdict: 2 hosts x 64 bytes: 13,520 packets/s"
    ));
    assert!(!is_progress_line(
        "sweep: x/48 runs, 30 s elapsed, about 1 s left"
    ));
}
