//! The agents of a mesh: named by `--agents` and `--agents-file` (a name that resolves to
//! several addresses is one agent per address), waited for (`--wait-for-agents`), or started
//! in this process on loopback (`--local`), and checked before any test.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use wirespeed_net::agent::AgentHandle;
use wirespeed_net::auth::AuthKey;
use wirespeed_net::{Agent, AgentConfig};

use super::result::AgentEntry;
use super::{Fleet, MAX_AGENTS, verdicts, wait};

/// `HOST`, `HOST:PORT`, `[V6]:PORT` or `V6`, with every address a name resolves to.
#[doc(hidden)]
pub fn resolve(text: &str, default_port: u16) -> anyhow::Result<Vec<SocketAddr>> {
    let host = crate::common::host::Host::parse(text, "agent")?;
    host.addresses(host.port().unwrap_or(default_port), "agent")
}

/// The agents named by `--agents` and `--agents-file`, in order.
#[doc(hidden)]
pub fn named_agents(args: &Named) -> anyhow::Result<Vec<AgentEntry>> {
    let mut out = Vec::new();
    let mut add = |name: Option<&str>, spec: &str| -> anyhow::Result<()> {
        let addrs = resolve(spec, args.port)?;
        let many = addrs.len() > 1;
        for a in addrs {
            let name = match (name, many) {
                (Some(n), false) => n.to_string(),
                (Some(n), true) => format!("{n}/{}", a.ip()),
                (None, _) => a.to_string(),
            };
            out.push(AgentEntry { name, address: a });
        }
        Ok(())
    };
    for a in &args.specs {
        add(None, a).with_context(|| "--agents".to_string())?;
    }
    if let Some(path) = &args.file {
        let shown = path.display();
        let meta = std::fs::metadata(path)
            .with_context(|| format!("--agents-file {shown}: cannot read it"))?;
        if meta.len() > 4 << 20 {
            bail!(
                "--agents-file {shown}: {} bytes is too large for a list of agents (at most 4 MiB)",
                meta.len()
            );
        }
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--agents-file {shown}: cannot read it"))?;
        for (i, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let words: Vec<&str> = line.split_whitespace().collect();
            let r = match words.as_slice() {
                [spec] => add(None, spec),
                [name, spec] => add(Some(name), spec),
                _ => Err(anyhow::anyhow!(
                    "{} words; a line is HOST[:PORT] or NAME HOST[:PORT]",
                    words.len()
                )),
            };
            r.with_context(|| format!("{shown}:{}", i + 1))?;
        }
    }
    Ok(out)
}

/// In-process agents on loopback, stopped when dropped.
#[doc(hidden)]
pub struct LocalAgents(Vec<AgentHandle>);

impl Drop for LocalAgents {
    fn drop(&mut self) {
        for h in &self.0 {
            h.stop();
        }
    }
}

fn local_agents(n: usize, key: &AuthKey) -> anyhow::Result<(Vec<AgentEntry>, LocalAgents)> {
    let mut entries = Vec::new();
    let mut handles = LocalAgents(Vec::new());
    for i in 0..n {
        let a = Agent::bind(
            SocketAddr::from(([127, 0, 0, 1], 0)),
            AgentConfig {
                auth: Some(key.clone()),
                ..AgentConfig::default()
            },
        )
        .context("starting an in-process agent on loopback")?;
        entries.push(AgentEntry {
            name: format!("local{}", i + 1),
            address: a.local_addr()?,
        });
        let (h, _thread) = a.spawn()?;
        handles.0.push(h);
    }
    Ok((entries, handles))
}

fn random_key() -> anyhow::Result<AuthKey> {
    let mut k = [0u8; 32];
    wirespeed_net::auth::random_bytes(&mut k).context("drawing a key for the local agents")?;
    Ok(AuthKey::from_bytes(&k))
}

#[doc(hidden)]
pub fn check_agents(agents: &[AgentEntry]) -> anyhow::Result<()> {
    if agents.len() < 2 {
        bail!(
            "a mesh needs at least 2 agents, {} given: name them with --agents a,b,c or --agents-file FILE (or try --local 3)",
            agents.len()
        );
    }
    if agents.len() > MAX_AGENTS {
        bail!(
            "{} agents is more than one mesh takes ({MAX_AGENTS}: a million tests); split the fleet",
            agents.len()
        );
    }
    for (i, a) in agents.iter().enumerate() {
        // Agents test each other: a link-local address's zone is an interface of one host (the
        // controller's), which means nothing on the source agent's host.
        if wirespeed_net::address::is_link_local(a.address.ip()) {
            bail!(
                "agent {} is link-local: its zone names an interface of this host only, and agents test each other from their own hosts; give each agent a routable address",
                a.name
            );
        }
        if let Some(b) = agents[..i].iter().find(|b| b.address == a.address) {
            bail!(
                "agent {} is named twice ({} and {}): each agent once",
                a.address,
                b.name,
                a.name
            );
        }
    }
    Ok(())
}

/// The agents named on the command line: `--agents` and `--agents-file`, resolved when the
/// mesh starts (`--wait-for-agents` waits for them).
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub struct Named {
    /// `--agents`, as written.
    pub specs: Vec<String>,
    /// `--agents-file`.
    pub file: Option<PathBuf>,
    /// `-p`: the port of agents named without one.
    pub port: u16,
    /// `--wait-for-agents`.
    pub wait: Option<Duration>,
}

/// The agents of a new mesh: in-process ones (`--local`, whose handles must outlive the
/// mesh) or those named; sets `key` to the local agents' key. [`super::Mesh::new`] checks
/// them.
#[doc(hidden)]
pub fn agents_of(
    fleet: &Fleet,
    key: &mut Option<AuthKey>,
    waited: &mut Option<verdicts::MeshWarning>,
) -> anyhow::Result<(Vec<AgentEntry>, Option<LocalAgents>)> {
    let named = match fleet {
        Fleet::Local(n) => {
            let k = match key {
                Some(k) => k.clone(),
                None => random_key()?,
            };
            let (entries, handles) = local_agents(*n, &k)?;
            *key = Some(k);
            return Ok((entries, Some(handles)));
        }
        Fleet::Named(named) => named,
    };
    let agents = match named.wait {
        Some(wait) => agents_when_up(named, wait, waited)?,
        None => named_agents(named)?,
    };
    Ok((agents, None))
}

/// `--wait-for-agents`: the named agents once their names resolve (a headless Service lists
/// a pod only once it is Ready) and each accepts a connection, or at the end of `wait` with a
/// warning naming the silent ones in `waited`.
fn agents_when_up(
    args: &Named,
    wait: Duration,
    waited: &mut Option<verdicts::MeshWarning>,
) -> anyhow::Result<Vec<AgentEntry>> {
    let started = Instant::now();
    let deadline = started + wait;
    let agents = loop {
        match named_agents(args) {
            Ok(a) if a.len() >= 2 => break a,
            other if Instant::now() >= deadline => break other?,
            _ => std::thread::sleep(
                deadline
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_secs(1)),
            ),
        }
    };
    *waited = wait_until_up(&agents, started, wait);
    Ok(agents)
}

/// Waits until `started + wait` for each of `agents` to accept a connection; the warning
/// naming those that stayed silent. It goes into the document, not to stderr: a Job's log
/// (stdout and stderr together) must stay one JSON document.
#[doc(hidden)]
pub fn wait_until_up(
    agents: &[AgentEntry],
    started: Instant,
    wait: Duration,
) -> Option<verdicts::MeshWarning> {
    let addresses: Vec<SocketAddr> = agents.iter().map(|a| a.address).collect();
    let up = wait::wait_for(
        &addresses,
        (started + wait).saturating_duration_since(Instant::now()),
        wait::accepts,
    );
    let silent: Vec<String> = agents
        .iter()
        .zip(&up)
        .filter(|(_, u)| !**u)
        .map(|(a, _)| a.name.clone())
        .collect();
    (!silent.is_empty()).then_some(verdicts::MeshWarning::AgentsNotAnswering {
        silent,
        agents: agents.len(),
        wait_seconds: wait.as_secs_f64(),
    })
}
