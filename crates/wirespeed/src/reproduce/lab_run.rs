//! What the lab reproductions share: a lab brought up for one reproduction and taken down
//! with it ([`LabGuard`]), and this executable run inside its namespaces with `--json`, its
//! document decoded into the types that wrote it (`serve`, `tcp`, `load`, `probe`), every
//! child bounded in time and stopped by its pid.

use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::common::data::LabFile;

/// This executable, for the parts whose logic lives only in the binary.
#[doc(hidden)]
pub fn exe() -> anyhow::Result<PathBuf> {
    std::env::current_exe().context("finding this executable to run its subcommands")
}

/// Runs `wirespeed ARGS --json` inside a lab's `namespace` (the one reason to run a command
/// as a process: a namespace is entered by a process) and decodes its document into the types
/// that wrote it; stops it (SIGTERM to its pid) if it runs longer than `limit`.
#[doc(hidden)]
pub fn run_json<T: serde::de::DeserializeOwned>(
    namespace: &str,
    args: &[String],
    limit: Duration,
) -> anyhow::Result<T> {
    run_json_watching(namespace, args, limit, &mut |_| {})
}

/// [`run_json`], calling `watch` with the child's pid every 20 ms while it runs (to sample
/// what /proc says of it).
#[doc(hidden)]
pub fn run_json_watching<T: serde::de::DeserializeOwned>(
    namespace: &str,
    args: &[String],
    limit: Duration,
    watch: &mut dyn FnMut(u32),
) -> anyhow::Result<T> {
    let exe = exe()?;
    // `ip netns exec` execs the command, so the child's pid is wirespeed's own.
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", namespace]).arg(&exe);
    cmd.args(args)
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .with_context(|| format!("running wirespeed {}", args.join(" ")))?;
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stdout.read_to_end(&mut v);
        v
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.read_to_end(&mut v);
        v
    });
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        watch(child.id());
        if std::time::Instant::now() > deadline {
            wirespeed_lab::sys::terminate(child.id());
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    match status {
        None => bail!(
            "wirespeed {} took longer than {} s and was stopped",
            args.join(" "),
            limit.as_secs()
        ),
        Some(s) if !s.success() => bail!(
            "wirespeed {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&err).trim()
        ),
        Some(_) => {
            let text = String::from_utf8_lossy(&out);
            wirespeed_report::decode::from_str(&text)
                .with_context(|| format!("reading the document of wirespeed {}", args.join(" ")))
        }
    }
}

/// A lab built from a topology file for one reproduction, taken down on drop (only this one).
#[doc(hidden)]
pub struct LabGuard {
    pub(crate) name: String,
    pub(crate) record: wirespeed_lab::lifecycle::LabRecord,
}

impl LabGuard {
    pub(crate) fn up(file: &LabFile) -> anyhow::Result<LabGuard> {
        LabGuard::up_topology(file.topology()?, file.path())
    }

    /// A lab of `topology` (read from, or derived from, `file`, which names it).
    pub(crate) fn up_topology(
        topology: wirespeed_lab::Topology,
        file: &Path,
    ) -> anyhow::Result<LabGuard> {
        use wirespeed_lab::lifecycle::{self, Detach};
        wirespeed_lab::sys::require_net_admin()?;
        let running = lifecycle::up(topology, file, Detach::DiesWithParent)?;
        let record = match lifecycle::record(&running.name) {
            Ok(r) => r,
            Err(e) => {
                let _ = lifecycle::down(&running.name);
                return Err(e.into());
            }
        };
        Ok(LabGuard {
            name: running.name,
            record,
        })
    }

    pub(crate) fn namespace(&self, node: &str) -> anyhow::Result<String> {
        Ok(self.record.namespace(node)?.to_string())
    }

    /// The first IPv4 address of `node`.
    pub(crate) fn ipv4(&self, node: &str) -> anyhow::Result<String> {
        self.address(node, false)
    }

    /// The first IPv4 (or, with `ipv6`, IPv6) address of `node`.
    pub(crate) fn address(&self, node: &str, ipv6: bool) -> anyhow::Result<String> {
        let family = if ipv6 { "IPv6" } else { "IPv4" };
        let n = self
            .record
            .nodes
            .iter()
            .find(|n| n.name == node)
            .with_context(|| format!("lab {} has no node {node}", self.name))?;
        n.addresses
            .iter()
            .filter_map(|a| a.split_whitespace().nth(1))
            .find(|a| a.contains(':') == ipv6 && !a.starts_with("fe80"))
            .and_then(|a| a.split('/').next())
            .map(str::to_string)
            .with_context(|| format!("node {node} has no {family} address"))
    }

    /// Counters of every port, freshly written by the emulator.
    pub(crate) fn ports(&self) -> anyhow::Result<Vec<wirespeed_lab::PortStatus>> {
        // The emulator writes its status every 200 ms: wait for one written after now.
        let (_, first) = wirespeed_lab::lifecycle::status(&self.name)?;
        for _ in 0..20 {
            std::thread::sleep(Duration::from_millis(100));
            let (_, now) = wirespeed_lab::lifecycle::status(&self.name)?;
            if now.sequence > first.sequence + 1 {
                return Ok(now.ports);
            }
        }
        Ok(wirespeed_lab::lifecycle::status(&self.name)?.1.ports)
    }

    /// The text of `/proc/net/<file>` as `node`'s namespace sees it (its own TCP counters).
    pub(crate) fn proc_net(&self, node: &str, file: &str) -> anyhow::Result<String> {
        let ns = self.namespace(node)?;
        let out = Command::new("ip")
            .args(["netns", "exec", &ns, "cat"])
            .arg(format!("/proc/net/{file}"))
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .with_context(|| format!("reading /proc/net/{file} in {node}"))?;
        if !out.status.success() {
            bail!("reading /proc/net/{file} in {node} failed: {}", out.status);
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// An agent (`serve -1`) in `node`'s namespace on its IPv4 address: the child and the
    /// address it listens on.
    fn agent(&self, node: &str) -> anyhow::Result<(std::process::Child, String)> {
        let ns = self.namespace(node)?;
        let addr = self.ipv4(node)?;
        let mut agent = Command::new("ip")
            .args(["netns", "exec", &ns])
            .arg(exe()?)
            .args(["serve", "-1", "-p", "0", "-B", &addr])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting the agent in the lab")?;
        let line = {
            let stdout = agent.stdout.take().expect("piped");
            let mut line = String::new();
            BufReader::new(stdout.take(4096)).read_line(&mut line).ok();
            line
        };
        match line
            .split_whitespace()
            .find(|w| w.contains(&addr) && w.contains(':'))
        {
            Some(listening) => Ok((agent, listening.to_string())),
            None => {
                wirespeed_lab::sys::terminate(agent.id());
                let _ = agent.wait();
                bail!("the agent in {node} did not say where it listens: {line:?}");
            }
        }
    }

    /// A TCP test from a client in `from` to a one-off agent in `to`: its document.
    pub(crate) fn tcp(
        &self,
        from: &str,
        to: &str,
        client_args: &[String],
        limit: Duration,
    ) -> anyhow::Result<TcpDocument> {
        let from_ns = self.namespace(from)?;
        let (agent, listening) = self.agent(to)?;
        let mut args = vec!["tcp".to_string(), listening, "-i".into(), "0".into()];
        args.extend_from_slice(client_args);
        let result = run_json(&from_ns, &args, limit);
        stop_agent(agent);
        result
    }

    /// `bytes` over TCP from `from` to `to`, stopped at `cap` if it has not finished: what the
    /// receiver got, from its own running count. A link that stalls for longer than the cap
    /// (a duplex mismatch does, for tens of seconds) gives a row, not an error.
    ///
    /// The receiver is the client (`tcp -R` in `to`, the agent sending from `from`), so the
    /// count comes from the client's interval lines (`--json-stream`, every 100 ms) as they
    /// are printed; nothing waits on the control connection's results exchange, which crosses
    /// the same stalled link.
    pub(crate) fn tcp_capped(
        &self,
        from: &str,
        to: &str,
        bytes: u64,
        cap: Duration,
        client_flags: &[&str],
    ) -> anyhow::Result<Capped> {
        let to_ns = self.namespace(to)?;
        let (agent, listening) = self.agent(from)?;
        let spawned = Command::new("ip")
            .args(["netns", "exec", &to_ns])
            .arg(exe()?)
            .args(["tcp", &listening, "-R", "-n", &format!("{bytes}B")])
            .args(["-i", "100ms", "--json-stream"])
            .args(client_flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        let mut client = match spawned {
            Ok(c) => c,
            Err(e) => {
                stop_agent(agent);
                return Err(e).context("starting the TCP client in the lab");
            }
        };
        let ClientOutput {
            lines,
            stdout: out_reader,
            stderr: err_reader,
        } = read_client(&mut client);
        let got = count_received(&lines, bytes, cap);
        // A client still running is stuck on the stalled link: stop it (SIGTERM, then KILL).
        let exited = wait_for(&mut client, Duration::ZERO)?;
        if exited.is_none() {
            wirespeed_lab::sys::terminate(client.id());
            if wait_for(&mut client, Duration::from_secs(2))?.is_none() {
                let _ = client.kill();
                let _ = client.wait();
            }
        }
        let _ = out_reader.join();
        let err = err_reader.join().unwrap_or_default();
        stop_agent(agent);
        if got.intervals == 0 {
            // Not one interval: the test never started, which is a failure, not a stall.
            bail!(
                "the TCP test from {from} to {to} never started: {}",
                match String::from_utf8_lossy(&err).trim() {
                    "" => "the client printed nothing".to_string(),
                    e => e.to_string(),
                }
            );
        }
        Ok(got)
    }
}

/// A running client's output, read by two threads so that neither pipe fills: its stdout as
/// lines on a channel (each cut at 1 MiB), its stderr (at most 64 KiB).
struct ClientOutput {
    lines: Receiver<String>,
    stdout: std::thread::JoinHandle<()>,
    stderr: std::thread::JoinHandle<Vec<u8>>,
}

fn read_client(client: &mut std::process::Child) -> ClientOutput {
    let stdout = client.stdout.take().expect("piped");
    let stderr = client.stderr.take().expect("piped");
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let out_reader = std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            // One line is one interval (a few hundred bytes); a longer one is cut and
            // then fails to parse.
            let mut line = String::new();
            match (&mut r).take(1 << 20).read_line(&mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let err_reader = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = stderr.take(64 << 10).read_to_end(&mut v);
        v
    });
    ClientOutput {
        lines: rx,
        stdout: out_reader,
        stderr: err_reader,
    }
}

/// What a capped transfer's receiver counted, from its `--json-stream` lines as they come:
/// until every one of `bytes` has arrived (and a grace for the results), or `cap`.
fn count_received(lines: &Receiver<String>, bytes: u64, cap: Duration) -> Capped {
    use std::sync::mpsc::RecvTimeoutError;
    use std::time::Instant;
    let deadline = Instant::now() + cap;
    // Once every byte has arrived, the client has this long to exchange results and exit.
    let grace = Duration::from_secs(2);
    let mut got = Capped {
        bytes: 0,
        seconds: 0.0,
        complete: false,
        longest_gap: 0.0,
        intervals: 0,
        peer_window_bytes: None,
    };
    let mut gap = 0.0f64;
    let mut until = deadline;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match lines.recv_timeout(left) {
            Ok(line) => {
                // The stream's last line is the whole document, not an interval: it carries
                // the sender's TCP_INFO, whose window is the one the receiver advertised.
                let Ok(IntervalLine { interval: iv }) =
                    wirespeed_report::decode::from_str::<IntervalLine>(&line)
                else {
                    if let Ok(doc) = wirespeed_report::decode::from_str::<TcpDocument>(&line) {
                        got.peer_window_bytes = sender_window(&doc);
                    }
                    continue;
                };
                let (start, end) = (iv.start_seconds, iv.end_seconds);
                let n = iv.sum_received.as_ref().map_or(0, |s| s.bytes);
                got.intervals += 1;
                got.bytes = got.bytes.saturating_add(n);
                got.seconds = end;
                if n == 0 {
                    gap += (end - start).max(0.0);
                    got.longest_gap = got.longest_gap.max(gap);
                } else {
                    gap = 0.0;
                }
                if got.bytes >= bytes && !got.complete {
                    got.complete = true;
                    until = (Instant::now() + grace).min(deadline);
                }
            }
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    got
}

/// A `tcp --json` document, decoded into the types the command wrote it from.
#[doc(hidden)]
pub type TcpDocument =
    wirespeed_report::Document<crate::throughput::Parameters, crate::throughput::ThroughputResult>;

/// One line of `tcp --json-stream`: an interval as it ended.
#[derive(serde::Deserialize)]
struct IntervalLine {
    interval: wirespeed_net::report::Interval,
}

/// The largest window a `tcp` test's senders saw advertised (`tcpi_snd_wnd` at the end of
/// each stream), from the document the client printed when the test finished.
#[doc(hidden)]
pub fn sender_window(doc: &TcpDocument) -> Option<u32> {
    doc.result
        .end
        .streams
        .iter()
        .filter_map(|p| p.sender.as_ref()?.tcp_info.as_ref()?.peer_window_bytes)
        .max()
}

/// What a capped transfer moved, as its receiver counted it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Capped {
    /// Bytes that arrived.
    pub(crate) bytes: u64,
    /// Seconds from the start of the test to its last count (the end, if it finished).
    pub(crate) seconds: f64,
    /// Whether every byte arrived before the cap.
    pub(crate) complete: bool,
    /// The longest run of 100 ms intervals in which nothing arrived, in seconds.
    pub(crate) longest_gap: f64,
    intervals: u32,
    /// The window the sender saw advertised at the end (`tcpi_snd_wnd`), if the test finished
    /// and its document arrived (a transfer cut at the cap has none).
    pub(crate) peer_window_bytes: Option<u32>,
}

impl Capped {
    pub(crate) fn kib_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.bytes as f64 / self.seconds / 1024.0
        } else {
            0.0
        }
    }
}

/// Waits up to `limit` for `child` to exit.
fn wait_for(
    child: &mut std::process::Child,
    limit: Duration,
) -> io::Result<Option<std::process::ExitStatus>> {
    let deadline = std::time::Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s));
        }
        if std::time::Instant::now() >= deadline {
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A one-off agent exits after its session; one still running after a second is stopped.
fn stop_agent(mut agent: std::process::Child) {
    if matches!(wait_for(&mut agent, Duration::from_secs(1)), Ok(None)) {
        wirespeed_lab::sys::terminate(agent.id());
        if matches!(wait_for(&mut agent, Duration::from_secs(2)), Ok(None)) {
            let _ = agent.kill();
        }
    }
    let _ = agent.wait();
}

impl Drop for LabGuard {
    fn drop(&mut self) {
        let _ = wirespeed_lab::lifecycle::down(&self.name);
    }
}

/// A built-in topology of the repository's `labs/` (see [`crate::common::data`]).
#[doc(hidden)]
pub fn lab_file(name: &str) -> anyhow::Result<LabFile> {
    LabFile::builtin(name)
}
