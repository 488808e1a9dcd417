//! `wirespeed deploy kubernetes`: the manifests that hand the agents' placement and
//! keeping-alive to Kubernetes (issue 19) instead of a home-made orchestrator: a DaemonSet
//! running `serve` on every node (host networking, so that a mesh measures the nodes' own
//! paths; the key from a Secret; a memory limit that matches the agent's `--max-memory`;
//! readiness from the agent's metrics endpoint), a headless Service whose DNS name resolves to
//! every ready agent, and a Job running `mesh` over that name. Printed as YAML (or inside a
//! `wirespeed.deploy.v1` document with `--json`), for `kubectl apply -f -`; nothing is applied
//! here.
//!
//! The command's shape: flags and their checked [`Config`] here, the schema in `result.rs`,
//! the manifests made from a `Config` (printing nothing) in `manifests.rs`, the YAML view in
//! `text.rs` and the `--metrics-file` figures in `metrics.rs`.

use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use anyhow::bail;
use clap::{Args, Subcommand};
use wirespeed_model::ByteSize;
use wirespeed_model::units::parse_duration;
use wirespeed_net::agent_config::Cidr;
use wirespeed_net::control::DEFAULT_PORT;
use wirespeed_report::Document;

use crate::common::output::{self, OutputArgs};

#[doc(hidden)]
pub mod manifests;
mod metrics;
#[doc(hidden)]
pub mod result;
#[doc(hidden)]
pub mod text;

pub(crate) use manifests::manifests;
pub(crate) use result::{Manifests, Parameters};

/// Where the key file is mounted in every container.
pub(crate) const KEY_DIR: &str = "/etc/wirespeed";
/// The key's file name inside the Secret.
pub(crate) const KEY_ITEM: &str = "auth.key";
/// The image `packaging/container/build.sh` tags for this version, so that the default names
/// an image that exists once that script has run (and that a node importing it finds).
#[doc(hidden)]
pub const DEFAULT_IMAGE: &str = concat!("localhost/wirespeed:", env!("CARGO_PKG_VERSION"));

#[derive(Debug, Args)]
pub(crate) struct DeployArgs {
    #[command(subcommand)]
    target: Target,
}

#[derive(Debug, Subcommand)]
enum Target {
    /// A DaemonSet of agents (host networking, key from a Secret), a headless Service over
    /// them and a Job that runs `mesh` across them, as YAML for `kubectl apply -f -`.
    Kubernetes(KubernetesArgs),
}

#[derive(Debug, Args)]
#[doc(hidden)]
pub struct KubernetesArgs {
    /// Address blocks of the nodes, which the agents may test (their `--allow-destination`;
    /// repeat or list several): the mesh's Job runs in a pod, so the nodes' addresses are
    /// neither an agent's own nor its client's.
    #[arg(long, value_name = "CIDR", num_args = 1.., required = true, value_parser = parse_cidr)]
    allow_destination: Vec<Cidr>,

    /// The namespace of every object.
    #[arg(long, default_value = "wirespeed")]
    namespace: String,

    /// The image: by default the tag `packaging/container/build.sh` makes of this version
    /// (push it to a registry the nodes can pull from and name it here).
    #[arg(long, default_value = DEFAULT_IMAGE)]
    image: String,

    /// The Secret holding the fleet's key under `auth.key`
    /// (`kubectl create secret generic NAME --from-file=auth.key=FILE`).
    #[arg(long, default_value = "wirespeed-key")]
    secret: String,

    /// The agents' port on every node.
    #[arg(long, short = 'p', default_value_t = DEFAULT_PORT)]
    port: u16,

    /// The agents' metrics port (readiness and Prometheus), on the node's address.
    #[arg(long, default_value_t = 9210)]
    metrics_port: u16,

    /// The agent's memory budget (`serve --max-memory`); the container's limit is this plus
    /// a quarter (at least 256 MiB) for the process itself, as the Debian unit's.
    #[arg(long, default_value = "1GiB", value_name = "BYTES")]
    max_memory: ByteSize,

    /// The mesh Job's TCP test length (`mesh -t`).
    #[arg(long = "time", short = 't', default_value = "5s", value_parser = parse_duration)]
    time: Duration,

    /// The mesh Job's latency probes per test.
    #[arg(long, default_value_t = 20)]
    probes: u32,

    /// How many nodes to expect: sizes the Job's deadline (twice the schedule's prediction
    /// with every test's tail at its cap, plus 5 minutes).
    #[arg(
        long,
        default_value_t = 16,
        value_name = "N",
        conflicts_with = "agents"
    )]
    nodes: usize,

    /// The agents' addresses for the Job's mesh instead of the Service's DNS name, for a
    /// cluster without cluster DNS: the nodes' addresses (the agents use the nodes' network),
    /// IP or IP:PORT, comma-separated, each inside an --allow-destination block; the Job's
    /// deadline is then sized for them.
    #[arg(long, value_name = "A,B,C", value_delimiter = ',', value_parser = parse_agent)]
    agents: Vec<SocketAddr>,

    /// The Job measures a random sample of N ordered pairs (`mesh --pairs N`, a new seed each
    /// run, in the Job's log) instead of all of them, for fleets whose full mesh takes too
    /// long; the deadline is sized for the sample.
    #[arg(long, value_name = "N")]
    pairs: Option<usize>,

    #[command(flatten)]
    output: OutputArgs,
}

fn parse_cidr(text: &str) -> Result<Cidr, String> {
    text.parse()
}

/// An agent's address: IP (the agents' `--port` is added later) or IP:PORT. Port 0 stands for
/// "the agents' port".
fn parse_agent(text: &str) -> Result<SocketAddr, String> {
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, 0));
    }
    text.parse().map_err(|_| {
        "not an address: give a node's IP or IP:PORT (e.g. --agents 10.0.0.11,10.0.0.12); names need cluster DNS, which the default (the Service's name) uses".into()
    })
}

/// Kubernetes names: lowercase letters, digits and `-`, 1 to 63, starting and ending with a
/// letter or digit (RFC 1123 labels).
#[doc(hidden)]
pub fn check_name(flag: &str, name: &str) -> anyhow::Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if !ok {
        bail!(
            "{flag} {name:?} is not a Kubernetes name: use 1 to 63 lowercase letters, digits and '-' (e.g. {flag} wirespeed)"
        );
    }
    Ok(())
}

/// What `deploy kubernetes` makes its manifests from, every flag checked: each setting once,
/// `--agents` with the agents' port filled in, and the fleet size the Job is planned for.
#[derive(Debug, Clone)]
#[doc(hidden)]
pub struct Config {
    pub(crate) allow_destination: Vec<Cidr>,
    pub(crate) namespace: String,
    pub(crate) image: String,
    pub(crate) secret: String,
    pub(crate) port: u16,
    pub(crate) metrics_port: u16,
    pub(crate) max_memory: ByteSize,
    pub(crate) time: Duration,
    pub(crate) probes: u32,
    /// How many agents the Job's mesh is sized for: those named, or `--nodes`.
    pub(crate) fleet_size: usize,
    /// `--agents`, each with the agents' port where it names none; empty for the Service's
    /// DNS name.
    pub(crate) agents: Vec<SocketAddr>,
    pub(crate) pairs: Option<usize>,
}

impl Config {
    /// The document's parameters: what the manifests were made from.
    pub(crate) fn parameters(&self) -> Parameters {
        Parameters {
            agents: self.agents.iter().map(ToString::to_string).collect(),
            allow_destination: self
                .allow_destination
                .iter()
                .map(ToString::to_string)
                .collect(),
            image: self.image.clone(),
            max_memory_bytes: self.max_memory.bytes(),
            metrics_port: self.metrics_port,
            namespace: self.namespace.clone(),
            nodes: self.fleet_size,
            pairs: self.pairs,
            port: self.port,
            probes: self.probes,
            secret: self.secret.clone(),
            target: "kubernetes",
            tcp_seconds: self.time.as_secs_f64(),
        }
    }
}

impl KubernetesArgs {
    /// Every flag checked, alone and against the others, before anything is made.
    #[doc(hidden)]
    pub fn config(&self) -> anyhow::Result<Config> {
        self.check()?;
        Ok(Config {
            allow_destination: self.allow_destination.clone(),
            namespace: self.namespace.clone(),
            image: self.image.clone(),
            secret: self.secret.clone(),
            port: self.port,
            metrics_port: self.metrics_port,
            max_memory: self.max_memory,
            time: self.time,
            probes: self.probes,
            fleet_size: self.fleet_size(),
            agents: self.agent_addresses(),
            pairs: self.pairs,
        })
    }

    fn check(&self) -> anyhow::Result<()> {
        check_name("--namespace", &self.namespace)?;
        check_name("--secret", &self.secret)?;
        if self.image.is_empty() || self.image.chars().any(char::is_whitespace) {
            bail!(
                "--image {:?} is not an image reference (e.g. --image registry.example/wirespeed:0.1.0)",
                self.image
            );
        }
        if self.port == 0 || self.metrics_port == 0 || self.port == self.metrics_port {
            bail!(
                "--port and --metrics-port must be two different ports above 0 (defaults 5210 and 9210)"
            );
        }
        let budget = self.max_memory.bytes();
        if budget < wirespeed_net::agent_config::MIN_MEMORY_BYTES {
            bail!(
                "--max-memory {budget} bytes cannot hold one session; use at least 16MiB (e.g. --max-memory 1GiB)"
            );
        }
        let t = self.time.as_secs_f64();
        if !(wirespeed_net::spec::MIN_TEST_SECONDS..=3600.0).contains(&t) {
            bail!("-t {t} s is out of range: give each test 100ms to 1h (e.g. -t 5s)");
        }
        if self.probes > wirespeed_net::control::mesh::MAX_PROBES {
            bail!(
                "--probes {} is too many: at most {} per test",
                self.probes,
                wirespeed_net::control::mesh::MAX_PROBES
            );
        }
        if !(2..=crate::mesh::MAX_AGENTS).contains(&self.nodes) {
            bail!(
                "--nodes {} is out of range: a mesh has 2 to {} agents",
                self.nodes,
                crate::mesh::MAX_AGENTS
            );
        }
        if let Some(p) = self.pairs {
            let n = self.fleet_size();
            let all = n * (n - 1);
            if p == 0 || p > all {
                bail!(
                    "--pairs {p} is out of range: {n} agents have 1 to {all} ordered pairs (drop --pairs for all of them)"
                );
            }
        }
        if !self.agents.is_empty() {
            if !(2..=crate::mesh::MAX_AGENTS).contains(&self.agents.len()) {
                bail!(
                    "--agents names {}: a mesh has 2 to {} agents",
                    self.agents.len(),
                    crate::mesh::MAX_AGENTS
                );
            }
            let agents = self.agent_addresses();
            for (i, a) in agents.iter().enumerate() {
                if !self.allow_destination.iter().any(|c| c.contains(a.ip())) {
                    bail!(
                        "--agents {a} is outside every --allow-destination block: the agents would refuse to test it; add its block (e.g. --allow-destination {}/32)",
                        a.ip()
                    );
                }
                if agents[..i].contains(a) {
                    bail!("--agents {a} is named twice: each agent once");
                }
            }
        }
        Ok(())
    }

    /// `--agents`, each with the agents' port where it names none.
    fn agent_addresses(&self) -> Vec<SocketAddr> {
        self.agents
            .iter()
            .map(|a| match a.port() {
                0 => SocketAddr::new(a.ip(), self.port),
                _ => *a,
            })
            .collect()
    }

    /// How many agents the Job's mesh is sized for: those named, or `--nodes`.
    fn fleet_size(&self) -> usize {
        if self.agents.is_empty() {
            self.nodes
        } else {
            self.agents.len()
        }
    }
}

pub(crate) fn run(args: DeployArgs) -> anyhow::Result<()> {
    let Target::Kubernetes(k) = args.target;
    let config = k.config()?;
    let doc = Document::new("deploy", config.parameters(), manifests(&config));
    output::print(&k.output, &doc)?;
    Ok(())
}
