//! Lab lifecycle safety (issue 14, findings 1-5; a child of the `lab` tests, whose helpers and
//! lock it uses). Each test builds only its own labs, with unique names, and removes them;
//! `down --all` is only ever run with the state directory moved to a temporary directory
//! (`WIRESPEED_LAB_STATE`), so it cannot see another engineer's or test's lab.

use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, UdpSocket};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use wirespeed_lab::sys;

use super::{LAB_LOCK, TWO_HOSTS, UpLab, assert_nothing_left, can_build_labs, lab_file};
use crate::util::{Run, Scratch, assert_one_line_error, wirespeed};

/// Runs the binary with the lab state directory moved to `state`.
fn wirespeed_in(state: &Path, args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(args)
        .env("WIRESPEED_LAB_STATE", state)
        .output()
        .expect("the wirespeed binary runs");
    Run {
        status: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// A short tag unique to this test process and call, for lab and namespace names.
fn unique(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}{:x}{}",
        std::process::id() % 0xfffff,
        N.fetch_add(1, Ordering::SeqCst)
    )
}

fn namespaces_with(prefix: &str) -> Vec<String> {
    sys::namespaces()
        .into_iter()
        .filter(|n| n.starts_with(prefix))
        .collect()
}

/// Waits (bounded) for `child` to exit; true if it did.
fn exits_within(child: &mut Child, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// True if process `pid` runs (exists and is not a zombie waiting for its parent).
fn runs(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| !rest.trim_start().starts_with('Z'))
        })
        .unwrap_or(false)
}

fn gone_within(pid: i32, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if !runs(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// The pids in a network namespace (by the inode of /proc/PID/ns/net).
fn pids_in_namespace(ns: &str) -> Vec<i32> {
    let ids = wirespeed_lab::cleanup::namespace_ids(&[ns.to_string()]);
    if ids.is_empty() {
        return Vec::new();
    }
    wirespeed_lab::cleanup::processes_in(&ids)
}

fn kill_and_reap(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn lab_down_takes_no_path_and_no_prefix() {
    // Finding 1: paths were deleted recursively. They are refused before anything is looked at.
    let victim = Scratch::new("safety-victim");
    std::fs::write(victim.dir().join("precious"), "keep").unwrap();
    let as_path = victim.dir().display().to_string();
    let relative = format!("../../..{as_path}");
    for name in [
        as_path.as_str(),
        relative.as_str(),
        "/",
        "",
        "..",
        "a/b",
        "x-",
        "X",
    ] {
        let run = wirespeed(&["lab", "down", name]);
        assert_one_line_error(&run, "is not a lab name");
        assert!(
            victim.dir().join("precious").exists(),
            "`lab down {name}` removed {as_path}"
        );
    }
    assert_one_line_error(&wirespeed(&["lab", "status", "../x"]), "is not a lab name");
    assert_one_line_error(
        &wirespeed(&["lab", "exec", "/tmp", "h1", "--", "true"]),
        "is not a lab name",
    );
    // A prefix of a running lab's name is no lab: its namespaces stay.
    if !can_build_labs("lab_down_prefix") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let base = unique("pf");
    let file = super::temp_topology(&base, &format!("name = \"{base}\"\n{TWO_HOSTS}"));
    let run = wirespeed(&["lab", "up", &file.display().to_string(), "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let name = doc["result"]["name"].as_str().unwrap().to_string();
    assert!(name.starts_with(&format!("{base}-")), "{name}");
    assert_eq!(doc["result"]["schema"], "wirespeed.lab.state.v1");
    let before = namespaces_with(&format!("ws-{name}-"));
    assert_eq!(before.len(), 2, "{before:?}");
    for prefix in [base.as_str(), &name[..name.len() - 1]] {
        assert_one_line_error(
            &wirespeed(&["lab", "down", prefix]),
            &format!("no lab named '{prefix}'"),
        );
        assert_eq!(namespaces_with(&format!("ws-{name}-")), before, "{prefix}");
    }
    assert_eq!(wirespeed(&["lab", "down", &name]).status, 0);
    assert_nothing_left(&name);
    std::fs::remove_file(file).unwrap();
}

/// Writes a lab state as another user's `lab up` would have, recording namespace `ns`.
fn fake_state(state: &Path, name: &str, ns: &str, uid: u32, schema: &str) {
    let dir = state.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    // As `lab up` records it: the namespace's device and inode, taken when it was made.
    let id = wirespeed_lab::cleanup::namespace_ids(&[ns.to_string()])
        .first()
        .copied();
    let record = serde_json::json!({
        "schema": schema,
        "name": name,
        "uid": uid,
        "pid": 0,
        "start_time": 0,
        "file": "fake.toml",
        "nodes": [{"name": "h1", "kind": "host", "namespace": ns, "addresses": [], "namespace_id": id}],
        "devices": [],
        "cgroup": null,
    });
    std::fs::write(dir.join("lab.json"), record.to_string()).unwrap();
}

/// A namespace made by the test with a process in it (`ip netns exec NS sleep 30`).
fn namespace_with_process(ns: &str) -> Child {
    let ok = Command::new("ip")
        .args(["netns", "add", ns])
        .status()
        .unwrap();
    assert!(ok.success(), "ip netns add {ns}");
    let child = Command::new("ip")
        .args(["netns", "exec", ns, "sleep", "30"])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids_in_namespace(ns).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!pids_in_namespace(ns).is_empty(), "sleep runs in {ns}");
    child
}

#[test]
fn down_all_takes_only_the_callers_labs_unless_forced_and_never_a_foreign_state() {
    if !can_build_labs("down_all") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let state = Scratch::new("safety-state");
    // Another user's lab (uid 4242) with a live namespace and a process in it.
    let other = unique("other");
    let other_ns = format!("ws-{other}-h1");
    let mut other_child = namespace_with_process(&other_ns);
    fake_state(
        state.dir(),
        &other,
        &other_ns,
        4242,
        "wirespeed.lab.state.v1",
    );
    // A state this program did not write, naming a namespace that is not its own.
    let forged = unique("forged");
    let victim_ns = format!("ws-{}-h1", unique("victim"));
    let victim_child = namespace_with_process(&victim_ns);
    fake_state(
        state.dir(),
        &forged,
        &victim_ns,
        0,
        "wirespeed.lab.state.v1",
    );
    let legacy = unique("legacy");
    fake_state(state.dir(), &legacy, &victim_ns, 0, "");
    // My own lab, recorded in the same state directory.
    let run = wirespeed_in(state.dir(), &["lab", "up", &lab_file("two-host-10m.toml")]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let mine = run.stdout.trim().to_string();
    assert!(state.dir().join(&mine).join("lab.json").exists());

    // Neither the forged nor the legacy state is acted on by name.
    for name in [&forged, &legacy] {
        assert_one_line_error(
            &wirespeed_in(state.dir(), &["lab", "down", name]),
            "was not written by wirespeed",
        );
    }
    assert_eq!(
        namespaces_with(&victim_ns),
        std::slice::from_ref(&victim_ns)
    );

    let run = wirespeed_in(state.dir(), &["lab", "down", "--all"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(&format!("removed lab {mine}")),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains(&format!("left alone: {other}: made by uid 4242")),
        "{}",
        run.stdout
    );
    assert_nothing_left(&mine);
    assert_eq!(
        namespaces_with(&other_ns),
        std::slice::from_ref(&other_ns),
        "other's lab kept"
    );
    assert!(
        !pids_in_namespace(&other_ns).is_empty(),
        "other's process kept"
    );
    assert!(state.dir().join(&other).join("lab.json").exists());

    // --force takes the other user's lab too, process and all; never the forged ones.
    let run = wirespeed_in(state.dir(), &["lab", "down", "--all", "--force"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains(&format!("removed lab {other}")),
        "{}",
        run.stdout
    );
    assert!(namespaces_with(&other_ns).is_empty(), "{}", run.stdout);
    assert!(exits_within(&mut other_child, Duration::from_secs(5)));
    assert!(!state.dir().join(&other).exists());
    assert_eq!(
        namespaces_with(&victim_ns),
        std::slice::from_ref(&victim_ns)
    );
    assert!(
        !pids_in_namespace(&victim_ns).is_empty(),
        "victim's process kept"
    );
    assert!(state.dir().join(&forged).join("lab.json").exists());
    assert!(
        run.stdout.contains(&format!("left alone: {forged}")),
        "{}",
        run.stdout
    );

    kill_and_reap(victim_child);
    let _ = Command::new("ip")
        .args(["netns", "del", &victim_ns])
        .status();
    assert!(namespaces_with(&victim_ns).is_empty());
    // A relative state directory is refused.
    assert_one_line_error(
        &wirespeed_in(Path::new("relative/dir"), &["lab", "down", "--all"]),
        "is not an absolute path",
    );
}

/// Field 22 of /proc/PID/stat, as `lab up` records it.
fn start_time_of(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(19).unwrap().parse().unwrap()
}

/// Issue 32, item 7: `lab down` trusted a `lab.json` in a test's own state directory. A copy
/// of a running lab's record, and a record forged around an unrelated process with its start
/// time, executable and cgroup copied in, are refused before anything is signalled or
/// deleted; the running lab and the process are untouched.
#[test]
fn a_copied_or_forged_lab_record_is_refused_before_anything_is_signalled() {
    if !can_build_labs("forged record") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let real_state = Scratch::new("safety-real");
    let forged_state = Scratch::new("safety-forged");
    let run = wirespeed_in(
        real_state.dir(),
        &["lab", "up", &lab_file("two-host-10m.toml")],
    );
    assert_eq!(run.status, 0, "{}", run.stderr);
    let name = run.stdout.trim().to_string();
    let real: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(real_state.dir().join(&name).join("lab.json")).unwrap(),
    )
    .unwrap();
    let emulator = real["pid"].as_i64().unwrap() as i32;
    let namespaces = namespaces_with(&format!("ws-{name}-"));
    assert_eq!(namespaces.len(), 2, "{namespaces:?}");

    // The running lab's record copied whole (pid, start time, executable, cgroup, namespace
    // inodes), and copied with the emulator's pid cleared.
    let copy_dir = forged_state.dir().join(&name);
    std::fs::create_dir_all(&copy_dir).unwrap();
    let mut dead = real.clone();
    dead["pid"] = 0.into();
    dead["start_time"] = 0.into();
    for (record, needle) in [
        (&real, "it serves the lab state at"),
        (&dead, "this record is not that lab's"),
    ] {
        std::fs::write(copy_dir.join("lab.json"), record.to_string()).unwrap();
        assert_one_line_error(
            &wirespeed_in(forged_state.dir(), &["lab", "down", &name]),
            needle,
        );
        assert!(runs(emulator), "the real emulator was signalled");
        assert_eq!(namespaces_with(&format!("ws-{name}-")), namespaces);
    }
    std::fs::remove_dir_all(&copy_dir).unwrap();

    // A record forged around an unrelated process: its start time, executable and cgroup
    // copied in.
    let victim = Command::new("sleep").arg("30").spawn().unwrap();
    let forged = unique("forged");
    let forged_dir = forged_state.dir().join(&forged);
    std::fs::create_dir_all(&forged_dir).unwrap();
    let record = serde_json::json!({
        "schema": "wirespeed.lab.state.v1",
        "name": forged,
        "uid": 0,
        "pid": victim.id(),
        "start_time": start_time_of(victim.id()),
        "file": "forged.toml",
        "nodes": [{"name": "h1", "kind": "host", "namespace": format!("ws-{forged}-h1"), "addresses": []}],
        "devices": [],
        "cgroup": null,
        "emulator": {
            "exe": std::fs::read_link(format!("/proc/{}/exe", victim.id())).unwrap(),
            "cgroup": std::fs::read_to_string(format!("/proc/{}/cgroup", victim.id())).unwrap().trim(),
        },
    });
    std::fs::write(forged_dir.join("lab.json"), record.to_string()).unwrap();
    assert_one_line_error(
        &wirespeed_in(forged_state.dir(), &["lab", "down", &forged]),
        "is not the emulator of the lab recorded here",
    );
    assert!(
        runs(victim.id() as i32),
        "the unrelated process was signalled"
    );
    kill_and_reap(victim);

    // The real lab still goes down through its own record.
    let run = wirespeed_in(real_state.dir(), &["lab", "down", &name]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert_nothing_left(&name);
}

/// The row of lab `name` in `lab status --json`'s list.
fn listed(name: &str) -> serde_json::Value {
    let run = wirespeed(&["lab", "status", "--json"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    doc["result"]["labs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap_or_else(|| panic!("{name} not listed: {}", run.stdout))
        .clone()
}

#[test]
fn lab_status_marks_a_lab_whose_emulator_is_gone() {
    if !can_build_labs("emulator_gone") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let lab = UpLab::up(&lab_file("two-host-10m.toml"));
    assert_eq!(listed(&lab.name)["emulator_running"], true);
    let text = wirespeed(&["lab", "status"]);
    let row = text.stdout.lines().find(|l| l.starts_with(&lab.name));
    assert!(
        row.is_some_and(|r| r.contains(" running ")),
        "{}",
        text.stdout
    );
    let pid = lab.pid();
    // SAFETY: SIGKILL to the emulator of the lab this test built.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(gone_within(pid, Duration::from_secs(5)));
    assert_eq!(listed(&lab.name)["emulator_running"], false);
    let text = wirespeed(&["lab", "status"]);
    assert_eq!(text.status, 0, "{}", text.stderr);
    let row = text.stdout.lines().find(|l| l.starts_with(&lab.name));
    assert!(row.is_some_and(|r| r.contains(" gone ")), "{}", text.stdout);
    assert!(text.stdout.contains("emulator gone:"), "{}", text.stdout);
    // Its own status names what is left to do rather than showing stale counters.
    let one = wirespeed(&["lab", "status", &lab.name]);
    assert_ne!(one.status, 0);
    assert!(one.stderr.contains("is not running"), "{}", one.stderr);
    let run = wirespeed(&["lab", "down", &lab.name]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
}

#[test]
fn processes_started_in_a_lab_end_with_it_whatever_started_them() {
    if !can_build_labs("processes_end") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let lab = UpLab::up(&lab_file("two-host-10m.toml"));
    let (h1, h2) = (lab.namespace("h1"), lab.namespace("h2"));
    // One through `lab exec` (in the lab's cgroup), one through `ip netns exec` (only its
    // namespace says it belongs to the lab).
    let mut exec = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["lab", "exec", &lab.name, "h1", "--", "sleep", "30"])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut netns = Command::new("ip")
        .args(["netns", "exec", &h2, "sleep", "30"])
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while (pids_in_namespace(&h1).is_empty() || pids_in_namespace(&h2).is_empty())
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!pids_in_namespace(&h1).is_empty() && !pids_in_namespace(&h2).is_empty());
    // The emulator is killed outright, so it cannot clean up: `down` must.
    let pid = lab.pid();
    // SAFETY: SIGKILL to the emulator of the lab this test built.
    unsafe { libc::kill(pid, libc::SIGKILL) };
    assert!(gone_within(pid, Duration::from_secs(5)));
    let run = wirespeed(&["lab", "down", &lab.name]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        run.stdout.contains("ended processes of the lab"),
        "{}",
        run.stdout
    );
    assert!(
        exits_within(&mut exec, Duration::from_secs(5)),
        "lab exec child ended"
    );
    assert!(
        exits_within(&mut netns, Duration::from_secs(5)),
        "netns child ended"
    );
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
    assert!(
        !Path::new("/sys/fs/cgroup/unified/wirespeed-lab")
            .join(format!("ws-{name}"))
            .exists()
            && !Path::new("/sys/fs/cgroup/wirespeed-lab")
                .join(format!("ws-{name}"))
                .exists(),
        "cgroup left"
    );
}

#[test]
fn the_command_of_a_sigkilled_lab_run_ends_with_its_lab() {
    if !can_build_labs("sigkill_run") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let mut child = Command::new(env!("CARGO_BIN_EXE_wirespeed"))
        .args(["lab", "run", &lab_file("two-host-10m.toml"), "--"])
        .args(["sh", "-c", "echo $WIRESPEED_LAB $$; exec sleep 30"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let mut words = line.split_whitespace();
    let name = words.next().unwrap().to_string();
    let command: i32 = words.next().unwrap().parse().unwrap();
    assert!(runs(command));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        gone_within(command, Duration::from_secs(10)),
        "the command of the killed lab run (pid {command}) still runs"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new("/run/wirespeed-lab").join(&name).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_nothing_left(&name);
}

/// Sends one datagram from `ns` to h2 and waits until the h1 -> h2 port has delivered
/// (scheduled) a frame: the ARP request it sets off.
fn frame_in_flight(lab: &UpLab) {
    let h1 = lab.namespace("h1");
    sys::in_namespace(&h1, || {
        let s = UdpSocket::bind("0.0.0.0:0").unwrap();
        let _ = s.send_to(b"x", (Ipv4Addr::new(198, 18, 0, 2), 9));
    })
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut sent = 0;
    while sent == 0 && Instant::now() < deadline {
        sent = port_counter(&super::lab_status(&lab.name), "h1", "frames_out");
    }
    assert!(sent > 0, "a frame is in flight");
}

fn port_counter(status: &serde_json::Value, from: &str, key: &str) -> u64 {
    status["result"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["from"] == from)
        .map(|p| p["counters"][key].as_u64().unwrap_or(0))
        .sum()
}

#[test]
fn a_long_delay_neither_delays_teardown_nor_fools_down() {
    if !can_build_labs("long_delay") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    let file = super::temp_topology(
        "long-delay",
        &TWO_HOSTS.replace(
            "rate = \"10M\"",
            "rate = \"1M\"\ndelay = \"10s\"\nipv6 = false",
        ),
    );
    // The emulator's own teardown drops the frame in flight instead of waiting 10 s for it:
    // it exits and removes everything long before the frame would have arrived.
    let lab = UpLab::up(&file.display().to_string());
    let pid = lab.pid();
    frame_in_flight(&lab);
    sys::terminate(pid as u32);
    assert!(
        gone_within(pid, Duration::from_secs(8)),
        "the emulator waited for the frame in flight"
    );
    let name = lab.name.clone();
    let deadline = Instant::now() + Duration::from_secs(2);
    while Path::new("/run/wirespeed-lab").join(&name).exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_nothing_left(&name);
    drop(lab);
    // `down` reports success only once the emulator is gone.
    let lab = UpLab::up(&file.display().to_string());
    let pid = lab.pid();
    frame_in_flight(&lab);
    let run = wirespeed(&["lab", "down", &lab.name]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(
        !runs(pid),
        "down reported success while the emulator (pid {pid}) lives on: {:?}",
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
    );
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
    std::fs::remove_file(file).unwrap();
}

#[test]
fn frames_held_for_a_slow_host_are_bounded_and_the_excess_counted() {
    if !can_build_labs("memory_bound") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    // h2 takes 10 ms per frame it receives (100 frames/s) behind a 10 Mbit/s link with no
    // delay: the link's bound is its queue (100) + 2 frames; a burst of 400 small datagrams
    // piles up for h2's CPU beyond that, and the excess is dropped and counted.
    let file = super::temp_topology(
        "memory-bound",
        &TWO_HOSTS
            .replace(
                "name = \"h2\"\n",
                "name = \"h2\"\nreceive = { fixed = \"10ms\" }\n",
            )
            .replace("rate = \"10M\"", "rate = \"10M\"\nipv6 = false"),
    );
    let lab = UpLab::up(&file.display().to_string());
    frame_in_flight(&lab);
    let h1 = lab.namespace("h1");
    sys::in_namespace(&h1, || {
        let s = UdpSocket::bind("0.0.0.0:0").unwrap();
        // The first datagram waits for ARP (two 10 ms receive costs); then the burst, paced
        // below the link rate so that the queue never overflows.
        let _ = s.send_to(b"x", (Ipv4Addr::new(198, 18, 0, 2), 9));
        std::thread::sleep(Duration::from_millis(200));
        for _ in 0..400 {
            let _ = s.send_to(&[0u8; 64], (Ipv4Addr::new(198, 18, 0, 2), 9));
            std::thread::sleep(Duration::from_micros(200));
        }
    })
    .unwrap();
    let status = super::lab_status(&lab.name);
    let memory = port_counter(&status, "h1", "drops_memory");
    let queue = port_counter(&status, "h1", "drops_queue");
    assert!(
        memory > 100,
        "drops_memory {memory} (queue drops {queue}): {status}"
    );
    let name = lab.name.clone();
    drop(lab);
    assert_nothing_left(&name);
    std::fs::remove_file(file).unwrap();
}

/// Malformed topologies: (what to do to the two-host file, line of the mistake, what the
/// error says). `+` appends lines to the link table, `^` puts a line before the first table,
/// `=` replaces the whole file.
const MALFORMED: &[(&str, usize, &str)] = &[
    ("^colour = \"red\"", 1, "unknown field `colour`"),
    ("+dealy = \"1ms\"", 9, "dealy"),
    ("+rate_ab = \"fast\"", 9, "rate"),
    ("+rate_ba = \"-1M\"", 9, "negative rate"),
    ("+rate_ab = \"0\"", 9, "above zero"),
    ("+rate_ab = \"100T\"", 9, "10 Gbit/s"),
    ("+delay = 100", 9, "has no unit"),
    ("+delay = \"-5ms\"", 9, "negative delay"),
    ("+delay = \"100000000s\"", 9, "above the 10 s"),
    ("+delay = \"60s\"", 9, "above the 10 s"),
    ("+delay = true", 9, "delay"),
    ("+loss = 1.5", 9, "probability"),
    ("+loss = \"x\"", 9, "loss must be a number"),
    ("+loss = -0.1", 9, "probability"),
    ("+queue = 0", 9, "queue (packets) 0"),
    ("+queue = -5", 9, "queue (packets) -5"),
    ("+queue = 1000000000000", 9, "outside 1..=1000000"),
    ("+queue = 1000000", 5, "above the lab's budget"),
    ("+queue_bytes = \"10\"", 9, "cannot hold one minimum frame"),
    ("+mtu = 20", 9, "mtu 20"),
    ("+mtu = \"big\"", 9, "mtu must be a whole number"),
    ("+seed = -1", 9, "seed -1"),
    ("+hidden_hops = 40", 9, "hidden_hops 40"),
    ("+duplex = \"hlaf\"", 9, "'hlaf'"),
    ("+layer = \"token-ring\"", 9, "token-ring"),
    (
        "+length_m = 100\nvelocity_factor = 0",
        10,
        "velocity_factor",
    ),
    ("+a_address = \"1.2.3\"", 9, "1.2.3"),
    (
        "=[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"1G\"\ndelay = \"5s\"\n",
        5,
        "above the lab's budget",
    ),
    // Issue 32: a per-direction rate beside `rate`, and a velocity factor without a length,
    // were silently ignored.
    ("+rate_ab = \"1M\"", 8, "not both"),
    (
        "+velocity_factor = 0.66",
        9,
        "velocity_factor needs length_m",
    ),
    ("^name = \"\"", 1, "lab name ''"),
    ("^name = \"../../tmp/x\"", 1, "lab name '../../tmp/x'"),
    ("^name = 5", 1, "invalid type"),
    (
        "=[[host]]\nname = \"h1\"\n[[host]]\nname = \"h1\"\n[[link]]\na = \"h1\"\nb = \"h1\"\nrate = \"1M\"\n",
        4,
        "duplicate node name 'h1'",
    ),
    (
        "=[[host]]\nname = \"\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"\"\nb = \"h2\"\nrate = \"1M\"\n",
        2,
        "node name ''",
    ),
    (
        "=[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h3\"\nrate = \"1M\"\n",
        7,
        "unknown node 'h3'",
    ),
    (
        "=[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h1\"\nrate = \"1M\"\n",
        7,
        "itself",
    ),
    (
        "=[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\n",
        5,
        "no rate",
    ),
    (
        "=[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\nb = \"h2\"\nrate = \"1M\"\n",
        5,
        "missing field `a`",
    ),
    (
        "=[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n",
        1,
        "at least one [[link]]",
    ),
    ("=[[host]]\nname = \"h1\"\n", 1, "at least two nodes"),
    ("=[[host]\nname = \"h1\"\n", 1, "unclosed array table"),
    (
        "=[[host]]\nname = \"h1\"\nname = \"h2\"\n",
        3,
        "duplicate key",
    ),
    (
        "=[[host]]\nname = \"h1\"\n[[router]]\nname = \"r1\"\nforward = { fixed = \"10s\" }\n[[link]]\na = \"h1\"\nb = \"r1\"\nrate = \"1M\"\n",
        5,
        "forward cost of router 'r1'",
    ),
    (
        "=[[host]]\nname = \"h1\"\nreceive = { per_byte = \"2ms\" }\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"1M\"\n",
        3,
        "receive cost of host 'h1'",
    ),
    (
        "=[[host]]\nname = \"h1\"\ntcp_profile = \"1980s\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"1M\"\n",
        3,
        "unknown tcp_profile",
    ),
    (
        "=[[host]]\nname = \"a\"\n[[host]]\nname = \"b\"\n[[segment]]\nname = \"hub\"\nstations = [\"a\", \"z\"]\nrate = \"10M\"\n",
        7,
        "unknown station 'z'",
    ),
];

#[test]
fn malformed_topologies_are_one_line_errors_and_leave_nothing_behind() {
    assert!(MALFORMED.len() >= 30, "{} cases", MALFORMED.len());
    let state = Scratch::new("safety-malformed");
    let stem = unique("bad");
    for (i, (edit, line, needle)) in MALFORMED.iter().enumerate() {
        let text = match edit.split_at(1) {
            ("+", extra) => format!("{TWO_HOSTS}{extra}\n"),
            ("^", extra) => format!("{extra}\n{TWO_HOSTS}"),
            ("=", whole) => whole.to_string(),
            _ => panic!("case {i}: {edit}"),
        };
        let path = state.dir().join(format!("{stem}{i}.toml"));
        std::fs::write(&path, &text).unwrap();
        let file = path.display().to_string();
        for args in [
            vec!["lab", "up", file.as_str()],
            vec!["lab", "run", file.as_str(), "--", "true"],
        ] {
            let run = wirespeed_in(state.dir(), &args);
            assert_one_line_error(&run, &format!("{file}:{line}: "));
            assert!(
                run.stderr.contains(needle),
                "case {i} ({edit}): {needle:?} not in {}",
                run.stderr
            );
        }
    }
    // Nothing left: no namespace of these labs, no state, no process still reading the files.
    assert!(namespaces_with(&format!("ws-{stem}")).is_empty());
    let states: Vec<_> = std::fs::read_dir(state.dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .collect();
    assert!(states.is_empty(), "state left: {states:?}");
    let stray = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(&stem))
        })
        .count();
    assert_eq!(stray, 0, "processes left");
}
