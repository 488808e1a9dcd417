//! `wirespeed tcp|udp HOST --iperf3`: the test against an iperf3 3.x server instead of a
//! wirespeed agent. The flags become `wirespeed_net::iperf3::client::Config`, the outcome is
//! the same `TestOutcome` a wirespeed agent yields (the server's EXCHANGE_RESULTS decoded into
//! the agent's side), so the summary, the envelope, the verdicts, `--link-rate`, lab truth and
//! both JSON layouts read it unchanged. What iperf3's protocol cannot carry is refused before
//! the test, one flag at a time; what its server does not report is listed in the result and
//! said as a warning.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::bail;
use wirespeed_net::env::Environment;
use wirespeed_net::iperf3::client::{self, Iperf3Error};
use wirespeed_net::{Amount, Progress, TestOutcome};

use crate::common::exit_status::Exit;
use crate::throughput::analysis::ThroughputWarning;
pub use crate::throughput::result::Iperf3Peer;
use crate::throughput::{Config, ThroughputArgs};

/// iperf3's port, where `-p` names none.
pub(crate) const DEFAULT_PORT: u16 = wirespeed_net::iperf3::server::DEFAULT_PORT;

/// How long the server may stay silent while the test is set up and its results sent
/// (iperf3's own client waits as long for its server's states).
const SERVER_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a detected server is tried again when it dropped or refused the connection
/// before the test started, and the pause before each: 2 s at most in all.
const RETRIES_AFTER_DETECTION: u32 = 8;
const RETRY_PAUSE: Duration = Duration::from_millis(250);

impl ThroughputArgs {
    /// The flags `--iperf3` cannot honour, each refused with the fix.
    pub(in crate::throughput) fn check_iperf3(&self) -> anyhow::Result<()> {
        if !self.iperf3 {
            return Ok(());
        }
        if self.host.is_none() {
            bail!(
                "--iperf3 tests against an iperf3 server: give its HOST (wirespeed tcp HOST --iperf3)"
            );
        }
        let local = wirespeed_net::LocalOptions {
            connect_timeout: self.connect_timeout.map(Duration::from_millis),
            client_port: self.cport,
            bind_device: self.bind_dev.clone(),
            dont_fragment: self.dont_fragment,
        };
        if let Some((flag, fix)) = refusal(
            self.key.auth_key_file.is_some(),
            self.affinity.is_some(),
            self.file.is_some(),
            self.mptcp,
            self.gso,
            &local,
        ) {
            bail!("{flag} with --iperf3: {fix}");
        }
        Ok(())
    }
}

/// The first flag among those given that iperf3's protocol cannot carry, and its fix.
fn refusal(
    key: bool,
    affinity: bool,
    file: bool,
    mptcp: bool,
    gso: bool,
    local: &wirespeed_net::LocalOptions,
) -> Option<(&'static str, &'static str)> {
    [
        (
            key,
            "--auth-key-file",
            "iperf3 servers take no wirespeed key; drop it",
        ),
        (
            affinity,
            "-A",
            "iperf3's parameters carry no CPU placement for this end's threads; drop -A",
        ),
        (
            file,
            "--file",
            "this end sends iperf3's streams from a buffer; drop --file",
        ),
        (
            mptcp,
            "--mptcp",
            "iperf3 3.12 servers do not take Multipath TCP; drop one of them",
        ),
        (
            gso,
            "--gso",
            "this end sends one iperf3 datagram per call; drop --gso",
        ),
        // This end's socket choices are made in wirespeed's own client only, so far.
        (
            local.connect_timeout.is_some(),
            "--connect-timeout",
            "the iperf3 client path waits its own 10 s; drop --connect-timeout",
        ),
        (
            local.client_port.is_some(),
            "--cport",
            "the iperf3 client path takes ephemeral ports; drop --cport",
        ),
        (
            local.bind_device.is_some(),
            "--bind-dev",
            "the iperf3 client path binds by address only; use -B ADDR instead",
        ),
        (
            local.dont_fragment,
            "--dont-fragment",
            "the iperf3 client path does not set it; drop --dont-fragment",
        ),
    ]
    .into_iter()
    .find(|(on, ..)| *on)
    .map(|(_, flag, fix)| (flag, fix))
}

/// Why the test speaks iperf3's protocol when `--iperf3` asked for it.
pub(crate) const ASKED: &str = "--iperf3 was given";

/// The far end at `server` answered wirespeed's hello with iperf3's `state`: the sentence
/// saying why the test goes on in iperf3's protocol, or the one line why it may not. Checked
/// before the second connection, which goes to the same address and port and nowhere else:
/// a keyed run never falls back (iperf3's protocol would carry the test without the key's
/// authentication, silently), nor does a flag iperf3 cannot carry.
pub(crate) fn fallback(config: &Config, server: SocketAddr, state: &str) -> anyhow::Result<String> {
    let heard = format!(
        "{server} answered as an iperf3 server does (iperf3's {state} state where a wirespeed agent's hello comes)"
    );
    if config.auth.is_some() {
        bail!(
            "{heard}; a keyed run does not fall back to iperf3's protocol, which has no wirespeed key and would run the test unauthenticated: check the address and port (-p), or drop --auth-key-file to test it as an iperf3 server"
        );
    }
    if let Some((flag, fix)) = refusal(
        false,
        config.affinity.is_some(),
        config.file.is_some(),
        config.spec.mptcp,
        config.spec.gso,
        &config.local,
    ) {
        bail!("{heard}; {flag} cannot be said in iperf3's protocol: {fix}");
    }
    if let Err(e) = iperf3_spec(config).and_then(|spec| Ok(client::params_for(&spec)?)) {
        bail!("{heard}; {e:#}");
    }
    Ok(format!(
        "{heard}: tested with iperf3's protocol at the same address"
    ))
}

/// wirespeed's -O is part of -t; iperf3's comes on top of its -t: the server is asked for
/// what is left after the warm-up, so that `-t 4 -O 1` runs 4 s here as against an agent.
fn iperf3_spec(config: &Config) -> anyhow::Result<wirespeed_net::TestSpec> {
    let mut spec = config.spec.clone();
    if let Amount::Seconds(t) = spec.amount
        && !spec.omit.is_zero()
    {
        let counted = t - spec.omit.as_secs_f64();
        if counted < 1.0 {
            bail!(
                "-t {t} -O {}: with --iperf3 at least 1 s must follow the warm-up; raise -t",
                spec.omit.as_secs_f64()
            );
        }
        spec.amount = Amount::Seconds(counted);
    }
    Ok(spec)
}

/// One test against the iperf3 server at `server`: the outcome in wirespeed's types and what
/// the server said besides; `reason` says why iperf3's protocol is spoken (`ASKED`, or what
/// `fallback` returned, with `detected`).
pub(crate) fn run(
    config: &Config,
    server: SocketAddr,
    (detected, reason): (bool, &str),
    interrupt: Arc<AtomicBool>,
    live: &mut dyn Progress,
) -> anyhow::Result<(TestOutcome, Iperf3Peer)> {
    let spec = iperf3_spec(config)?;
    let cfg = client::Config {
        server,
        bind: config.bind,
        spec,
        timeout: SERVER_TIMEOUT,
        interrupt: Some(interrupt),
    };
    let interval = config.spec.interval;
    // A detected server took wirespeed's first connection for a test, which failed: iperf3
    // re-opens its listener after a failed test and resets what waited on the old one, and
    // may still be clearing the test. Nothing of ours ran, so it is tried again, briefly;
    // while the listener is being re-opened a connect is refused or reset outright.
    let mut tries = if detected { RETRIES_AFTER_DETECTION } else { 0 };
    let result = loop {
        match client::run_with(&cfg, interval, live) {
            Err(Iperf3Error::Dropped { .. } | Iperf3Error::Busy(_)) if tries > 0 => {
                tries -= 1;
                std::thread::sleep(RETRY_PAUSE);
            }
            Err(Iperf3Error::Connect { ref source, .. })
                if tries > 0
                    && matches!(
                        source.kind(),
                        std::io::ErrorKind::ConnectionRefused | std::io::ErrorKind::ConnectionReset
                    ) =>
            {
                tries -= 1;
                std::thread::sleep(RETRY_PAUSE);
            }
            r => break r,
        }
    };
    let outcome = match result {
        Ok(o) => o,
        Err(e) if crate::common::interrupt::requested() => {
            return Err(Exit::cut_short(format!(
                "interrupted: the iperf3 server sends its results only at the test's end, so there are none ({e})"
            ))
            .into());
        }
        Err(e @ Iperf3Error::Unsupported(_)) => return Err(e.into()),
        Err(e) => return Err(anyhow::Error::new(e).context(format!("iperf3 test with {server}"))),
    };
    let mut test = outcome.test;
    // The environment this end left by: the link rate and lab truth come from it.
    test.client.environment = Some(Environment::collect(Some(test.local.ip())));
    Ok((
        test,
        Iperf3Peer {
            detected,
            reason: reason.to_string(),
            server_results: outcome.server_results,
            missing: outcome.missing,
        },
    ))
}

/// One warning per thing the server could not report.
pub(crate) fn warnings(peer: &Iperf3Peer) -> Vec<ThroughputWarning> {
    peer.missing
        .iter()
        .map(|m| ThroughputWarning::NotReportedByIperf3 { missing: m.clone() })
        .collect()
}

/// The server's own figures, as text under the summary.
pub(crate) fn render(
    out: &mut dyn std::io::Write,
    peer: &Iperf3Peer,
    rate_format: wirespeed_model::RateFormat,
) -> std::io::Result<()> {
    let r = &peer.server_results;
    if peer.detected {
        writeln!(out, "protocol: iperf3, detected: {}", peer.reason)?;
    }
    writeln!(
        out,
        "iperf3 server's own report: cpu {:.1}% (user {:.1}%, system {:.1}%){}",
        r.cpu_util_total,
        r.cpu_util_user,
        r.cpu_util_system,
        r.congestion_used
            .as_deref()
            .map_or(String::new(), |c| format!(", congestion control {c}"))
    )?;
    for s in &r.streams {
        let seconds = (s.end_time.unwrap_or(0.0) - s.start_time.unwrap_or(0.0)).max(0.0);
        let rate = if seconds > 0.0 {
            s.bytes as f64 * 8.0 / seconds
        } else {
            0.0
        };
        write!(
            out,
            "  [{:>2}] {} bytes in {seconds:.2} s  {}",
            s.id,
            s.bytes,
            rate_format.format(rate)
        )?;
        if s.retransmits >= 0 {
            write!(out, "  retr {}", s.retransmits)?;
        }
        if s.packets > 0 {
            write!(
                out,
                "  {} datagrams, {} lost, jitter {:.3} ms",
                s.packets,
                s.errors,
                s.jitter * 1e3
            )?;
        }
        writeln!(out)?;
    }
    Ok(())
}
