//! The test itself: `measure(&Config, &mut LiveLines)` reaches the agent (or starts one in
//! this process), runs the test `--repeat` times in wirespeed's protocol or iperf3's, and
//! returns the typed document with its verdicts and warnings. It prints nothing: the intervals
//! go to the `LiveLines` it is handed, which a library caller makes silent.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;
use wirespeed_model::{BitRate, resample};
use wirespeed_net::auth::AuthKey;
use wirespeed_net::summary::{self, End};
use wirespeed_net::{
    Agent, AgentConfig, ClientConfig, ClientError, Protocol, SessionError, TestOutcome, client,
};
use wirespeed_report::Document;

use super::iperf3::peer as iperf3_peer;
use super::result::{Iperf3Peer, Parameters, Start, ThroughputResult};
use super::{Config, LiveLines, analysis, text};

/// What a throughput test produced: the document `tcp`/`udp` print, and why it is partial.
pub struct Measurement {
    pub doc: Document<Parameters, ThroughputResult>,
    pub partial_reason: Option<String>,
}

/// Runs the test (`config.repeat` times) and returns its typed document; `live` shows the
/// intervals as they end (silent when built with neither text nor a JSON stream).
pub fn measure(config: &Config, live: &mut LiveLines) -> anyhow::Result<Measurement> {
    // Without HOST: an agent in this process, on loopback.
    let (agent_addr, local_agent) = match config.remote {
        Some(a) => (a, None),
        None => {
            let (addr, agent) =
                start_local_agent_with(config.ipv6, config.auth.clone(), config.spec.mptcp)?;
            (addr, Some(agent))
        }
    };
    let session = Session::new(config, agent_addr);
    live.announce(session.header.clone());
    let runs = session.repeat(live);
    stop(local_agent);
    let (outcome, runs) = runs?;
    live.finish_header();
    let partial_reason = partial_reason(&outcome);
    let result = throughput_result(config, agent_addr, &outcome, runs, partial_reason.clone());
    let command = match config.protocol {
        Protocol::Tcp => "tcp",
        Protocol::Udp => "udp",
    };
    let mut doc = Document::new(command, parameters(config, agent_addr), result);
    judge(&mut doc, &outcome, agent_addr);
    Ok(Measurement {
        doc,
        partial_reason,
    })
}

/// One `--repeat` against one agent: what every run of it shares.
struct Session<'a> {
    config: &'a Config,
    agent_addr: SocketAddr,
    /// The first line of the text, naming the agent.
    header: String,
    interrupt: Arc<AtomicBool>,
    client_config: ClientConfig,
}

/// The runs of a `--repeat` beside the last one's outcome: its summary, and what all runs add
/// up to.
struct Runs {
    end: End,
    /// The received rate (bit/s) of every run.
    rates: Vec<f64>,
    queued_seconds: f64,
    peer: Option<Iperf3Peer>,
}

impl<'a> Session<'a> {
    fn new(config: &'a Config, agent_addr: SocketAddr) -> Session<'a> {
        let mut header = text::header(&config.spec, agent_addr, config.remote.is_none());
        if config.iperf3 {
            header = header.replacen(
                &agent_addr.to_string(),
                &format!("{agent_addr} (iperf3 server)"),
                1,
            );
        }
        let interrupt = crate::common::interrupt::watch();
        let client_config = ClientConfig {
            agent: agent_addr,
            bind: config.bind,
            spec: config.spec.clone(),
            auth: config.auth.clone(),
            cpu: config.affinity.map(|a| a.client),
            idle_timeout: Duration::from_secs(10),
            interrupt: Some(interrupt.clone()),
            source: config.file.clone(),
        };
        Session {
            config,
            agent_addr,
            header,
            interrupt,
            client_config,
        }
    }

    /// `--repeat`: the same test N times, until one fails.
    fn repeat(&self, live: &mut LiveLines) -> anyhow::Result<(TestOutcome, Runs)> {
        let runs = self.config.repeat.max(1);
        let mut rates = Vec::new();
        let mut queued_seconds = 0.0;
        let mut last = None;
        let mut peer = None;
        // Why iperf3's protocol is spoken, once it is: asked for, or detected on the first run
        // (a --repeat's later runs speak it from the start).
        let mut spoken = self.config.iperf3.then(|| iperf3_peer::ASKED.to_string());
        for k in 1..=runs {
            if runs > 1 {
                live.run_header(k, runs);
            }
            let outcome = self.one_run(&mut spoken, &mut peer, live)?;
            queued_seconds += outcome.queued_seconds;
            let end = summary::end(&outcome, self.config.spec.direction);
            rates.push(received_rate(&end));
            let failed = outcome.error.is_some();
            last = Some((outcome, end));
            if failed {
                break;
            }
        }
        let (outcome, end) = last.expect("at least one run");
        Ok((
            outcome,
            Runs {
                end,
                rates,
                queued_seconds,
                peer,
            },
        ))
    }

    /// One run, in wirespeed's protocol or, where it is `spoken`, iperf3's.
    fn one_run(
        &self,
        spoken: &mut Option<String>,
        peer: &mut Option<Iperf3Peer>,
        live: &mut LiveLines,
    ) -> anyhow::Result<TestOutcome> {
        let (config, agent_addr) = (self.config, self.agent_addr);
        if let Some(why) = spoken.as_deref() {
            let (o, p) = iperf3_peer::run(
                config,
                agent_addr,
                (!config.iperf3, why),
                self.interrupt.clone(),
                live,
            )?;
            *peer = Some(p);
            return Ok(o);
        }
        match client::run_with_options(&self.client_config, &config.local, live) {
            Ok(o) => Ok(o),
            // An iperf3 server where an agent was expected: the test goes on in iperf3's
            // protocol at the same address, where that is safe (iperf3_peer::fallback).
            Err(ClientError::Session(SessionError::Iperf3Server(state)))
                if config.remote.is_some() =>
            {
                let why = iperf3_peer::fallback(config, agent_addr, state)?;
                live.announce(self.header.replacen(
                    &agent_addr.to_string(),
                    &format!("{agent_addr} (iperf3 server, detected)"),
                    1,
                ));
                let (o, p) = iperf3_peer::run(
                    config,
                    agent_addr,
                    (true, &why),
                    self.interrupt.clone(),
                    live,
                )?;
                *peer = Some(p);
                *spoken = Some(why);
                Ok(o)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// The rate received, both ways added for a bidirectional test.
pub(super) fn received_rate(end: &End) -> f64 {
    end.sum_received.bits_per_second
        + end
            .sum_received_bidir_reverse
            .as_ref()
            .map_or(0.0, |s| s.bits_per_second)
}

/// The result of the last run, with the statistics of all.
fn throughput_result(
    config: &Config,
    agent_addr: SocketAddr,
    outcome: &TestOutcome,
    runs: Runs,
    partial_reason: Option<String>,
) -> ThroughputResult {
    let Runs {
        end,
        rates,
        queued_seconds,
        peer,
    } = runs;
    let repeat = (config.repeat > 1)
        .then(|| resample::summarize(&rates, 2000))
        .flatten();
    let link_rate = analysis::link_rate(
        config.link_rate,
        outcome.client.environment.as_ref(),
        outcome.local,
        agent_addr,
    );
    ThroughputResult {
        start: Start {
            local: outcome.local.to_string(),
            agent: agent_addr.to_string(),
            in_process_agent: config.remote.is_none(),
            agent_software: outcome.agent.as_ref().map(|a| a.software.clone()),
            client_environment: outcome.client.environment.clone(),
            agent_environment: outcome.agent.as_ref().and_then(|a| a.environment.clone()),
            timestamp_source: "CLOCK_MONOTONIC for rates; UDP jitter from kernel receive timestamps (SO_TIMESTAMPNS)".into(),
        },
        intervals: outcome.intervals.clone(),
        agent_intervals: outcome
            .agent
            .as_ref()
            .map(|a| a.intervals.clone())
            .unwrap_or_default(),
        end,
        error: outcome.error.clone(),
        partial: partial_reason.is_some(),
        partial_reason,
        link_rate,
        repeat,
        queued_seconds,
        iperf3: peer,
        rate_format: config.rate_format,
        spec: config.spec.clone(),
    }
}

/// What was asked, as the document's parameters.
fn parameters(config: &Config, agent_addr: SocketAddr) -> Parameters {
    Parameters {
        agent: agent_addr.to_string(),
        in_process_agent: config.remote.is_none(),
        test: config.spec.clone(),
        interval: config.spec.interval.unwrap_or_default(),
        link_rate_bits_per_second: config.link_rate.map(BitRate::bits_per_second),
        client_cpu: config.affinity.map(|a| a.client),
        title: config.title.clone(),
    }
}

/// The verdicts and warnings, judged from the result and the run's own facts.
fn judge(
    doc: &mut Document<Parameters, ThroughputResult>,
    outcome: &TestOutcome,
    agent_addr: SocketAddr,
) {
    let (verdicts, warnings) = analysis::judge(&doc.result, outcome, agent_addr);
    for verdict in &verdicts {
        doc.verdict(verdict);
    }
    for warning in &warnings {
        doc.warning(warning);
    }
    if let Some(p) = &doc.result.iperf3 {
        for warning in iperf3_peer::warnings(p) {
            doc.warning(&warning);
        }
    }
    if let Some(r) = &doc.result.repeat
        && r.spread_percent > 10.0
    {
        doc.warning(&analysis::ThroughputWarning::RunsSpread {
            runs: r.values.len(),
            spread_percent: r.spread_percent,
        });
    }
}

/// Why a test's result is partial, or `None` when it ran whole.
#[doc(hidden)]
pub fn partial_reason(o: &TestOutcome) -> Option<String> {
    let mut why = Vec::new();
    match o.error.as_deref() {
        Some("interrupted") => {
            why.push("interrupted by SIGINT or SIGTERM before the test's end".to_string());
        }
        Some(e) => why.push(format!("the test ended early: {e}")),
        None => {}
    }
    for (end, side) in [("client", Some(&o.client)), ("agent", o.agent.as_ref())] {
        for s in side.iter().flat_map(|s| &s.streams) {
            if let Some(e) = &s.error {
                why.push(format!("stream {} failed at the {end}: {e}", s.id));
            }
        }
    }
    if o.error.is_none() && o.agent.is_none() {
        why.push("the agent's view is missing".into());
    }
    // A test that moved nothing measured nothing: a rate of 0 is no result (issue 32).
    let receivers: Vec<u64> = [Some(&o.client), o.agent.as_ref()]
        .into_iter()
        .flatten()
        .flat_map(|side| &side.streams)
        .filter(|s| s.role == wirespeed_net::report::Role::Receiver)
        .map(|s| s.bytes)
        .collect();
    if why.is_empty() && !receivers.is_empty() && receivers.iter().all(|&b| b == 0) {
        why.push("no byte arrived at the receiving end: the test moved nothing".into());
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// An agent serving in a thread of this process: its handle and the thread.
#[doc(hidden)]
pub type AgentThread = (
    wirespeed_net::agent::AgentHandle,
    std::thread::JoinHandle<io::Result<()>>,
);

type LocalAgent = Option<AgentThread>;

/// An agent in this process on loopback (127.0.0.1, or ::1 with `ipv6`), on a free port: the
/// far end of a test that names no HOST.
#[doc(hidden)]
pub fn start_local_agent(
    ipv6: bool,
    auth: Option<AuthKey>,
) -> anyhow::Result<(SocketAddr, AgentThread)> {
    start_local_agent_with(ipv6, auth, false)
}

/// [`start_local_agent`], listening with Multipath TCP when `mptcp` (`tcp --mptcp`).
pub(crate) fn start_local_agent_with(
    ipv6: bool,
    auth: Option<AuthKey>,
    mptcp: bool,
) -> anyhow::Result<(SocketAddr, AgentThread)> {
    let ip: IpAddr = if ipv6 { "::1" } else { "127.0.0.1" }
        .parse()
        .expect("an address");
    let agent = Agent::bind(
        SocketAddr::new(ip, 0),
        AgentConfig {
            auth,
            mptcp,
            ..AgentConfig::default()
        },
    )
    .with_context(|| format!("cannot start the in-process agent on {ip}"))?;
    let addr = agent.local_addr()?;
    Ok((addr, agent.spawn()?))
}

fn stop(agent: LocalAgent) {
    if let Some((handle, thread)) = agent {
        handle.stop();
        let _ = thread.join();
    }
}
