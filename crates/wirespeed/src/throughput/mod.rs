//! `wirespeed tcp [HOST]` and `wirespeed udp [HOST]`: what rate do two tasks get over this
//! path? Without HOST, an in-process agent on loopback gives the host's own ceiling (seed 002
//! runs ttcp on loopback before anything else).

#[doc(hidden)]
pub mod analysis;
#[doc(hidden)]
pub mod brief;
pub(crate) mod html;
#[doc(hidden)]
pub mod iperf3;
#[doc(hidden)]
pub mod measure;
#[doc(hidden)]
pub mod metrics;
#[doc(hidden)]
pub mod result;
#[doc(hidden)]
pub mod text;

pub(crate) use measure::{AgentThread, start_local_agent};
pub use measure::{Measurement, measure};
pub use result::{Parameters, ThroughputResult};
pub use text::LiveLines;

use std::io::{self, Write};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use wirespeed_model::units::parse_duration;
use wirespeed_model::{BitRate, ByteSize, RateFormat};
use wirespeed_net::auth::AuthKey;
use wirespeed_net::{Amount, Direction, Protocol, TestSpec};

use crate::common::exit_status::Exit;
use crate::common::output::{self, OutputArgs};
use wirespeed_net::control::DEFAULT_PORT;

/// `-n`: ttcp's number of buffers (a bare number), or a byte size (`16MiB`, `1000000B`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    Buffers(u64),
    Bytes(u64),
}

impl FromStr for Count {
    type Err = String;

    fn from_str(s: &str) -> Result<Count, String> {
        if let Ok(n) = s.parse::<u64>() {
            return Ok(Count::Buffers(n));
        }
        s.parse::<ByteSize>()
            .map(|b| Count::Bytes(b.bytes()))
            .map_err(|_| {
                format!("'{s}' is not a count: a number of -l buffers (2048) or a byte size (16MiB, 1000000B)")
            })
    }
}

/// `-A CLIENT[,AGENT]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[doc(hidden)]
pub struct Affinity {
    pub client: usize,
    pub agent: Option<usize>,
}

impl FromStr for Affinity {
    type Err = String;

    fn from_str(s: &str) -> Result<Affinity, String> {
        let bad = || {
            format!("'{s}' is not a CPU placement: use CLIENT or CLIENT,AGENT CPU numbers (-A 0,1)")
        };
        let (c, a) = match s.split_once(',') {
            Some((c, a)) => (c, Some(a)),
            None => (s, None),
        };
        Ok(Affinity {
            client: c.parse().map_err(|_| bad())?,
            agent: a.map(str::parse).transpose().map_err(|_| bad())?,
        })
    }
}

#[derive(Debug, Clone, Args)]
#[doc(hidden)]
pub struct ThroughputArgs {
    /// The agent (`wirespeed serve`) as HOST or HOST:PORT; without it, an in-process agent on
    /// loopback measures this host's own ceiling.
    #[arg(value_name = "HOST")]
    host: Option<String>,

    /// The agent's port [default: 5210; 5201 with --iperf3].
    #[arg(long, short = 'p')]
    port: Option<u16>,

    /// HOST runs an iperf3 3.x server (`iperf3 -s`), not a wirespeed agent: speak iperf3's
    /// protocol to it (docs/iperf3.md). Its results are shown beside this end's; what it does
    /// not report (its TCP_INFO, per-stream CPU) is said.
    #[arg(long)]
    iperf3: bool,

    /// Test duration (default 10 s).
    #[arg(long, short = 't', value_parser = parse_duration, value_name = "DURATION", conflicts_with = "num")]
    time: Option<Duration>,

    /// Amount per stream instead of a duration: a number of -l buffers (ttcp's -n), or a byte
    /// size such as 16MiB. Exactly that many bytes arrive (TCP).
    #[arg(long, short = 'n', visible_alias = "bytes", value_name = "COUNT")]
    num: Option<Count>,

    /// Bytes per write/read (TCP, default 128 KiB) or per datagram (UDP, default 1472).
    #[arg(long, short = 'l', value_name = "BYTES")]
    len: Option<ByteSize>,

    /// Parallel streams, one thread each.
    #[arg(long, short = 'P', default_value_t = 1, value_name = "N")]
    parallel: u32,

    /// Reverse: the agent sends, this end receives.
    #[arg(long, short = 'R', conflicts_with = "bidir")]
    reverse: bool,

    /// Both directions at once.
    #[arg(long)]
    bidir: bool,

    /// Socket send and receive buffer at both ends (Linux grants double, clamped to
    /// net.core.[rw]mem_max; both sizes are reported).
    #[arg(long, short = 'w', value_name = "BYTES")]
    window: Option<ByteSize>,

    /// TCP_NODELAY: no Nagle coalescing.
    #[arg(long, short = 'N')]
    nodelay: bool,

    /// TCP maximum segment size.
    #[arg(long = "mss", short = 'M', value_name = "BYTES", value_parser = crate::common::flags::parse_mss)]
    mss: Option<u32>,

    /// TCP congestion control at both ends (cubic, reno, bbr: see
    /// /proc/sys/net/ipv4/tcp_available_congestion_control).
    #[arg(long, short = 'C', value_name = "ALGO")]
    congestion: Option<String>,

    /// IP TOS byte (IPv6: traffic class) of every data packet, at both ends (iperf3's -S): a
    /// number (184, 0xb8, 0270) or a DSCP name (ef, af11..af43, cs0..cs7, le).
    #[arg(long = "tos", short = 'S', value_name = "TOS", value_parser = wirespeed_model::dscp::parse_tos)]
    tos: Option<u8>,

    /// TCP: the data connections run Multipath TCP (RFC 8684). The agent must listen with
    /// `serve --mptcp` (the in-process one does), or they fall back to TCP, which is reported.
    #[arg(long)]
    mptcp: bool,

    /// UDP: the send rate per stream; 0 = as fast as possible. TCP: a cap per stream, held by
    /// the kernel's pacing at whichever end sends (SO_MAX_PACING_RATE, iperf3's --fq-rate); 0
    /// or none: no cap.
    #[arg(long, short = 'b', value_name = "RATE", value_parser = crate::common::flags::not_negative_text)]
    bitrate: Option<String>,

    /// TCP: send this file (with sendfile, from the page cache, from its start again at its
    /// end) instead of a buffer.
    #[arg(long, value_name = "PATH", conflicts_with = "zerocopy")]
    file: Option<PathBuf>,

    /// TCP: send with MSG_ZEROCOPY (the kernel reads the pages instead of copying them; the
    /// report says how many sends it copied anyway, as it must on loopback).
    #[arg(long)]
    zerocopy: bool,

    /// TCP: senders send what each ACK frees at once, without the kernel's pacing (the default
    /// paces every sender but a loopback one), as iperf3 sends without --fq-rate; for
    /// comparing like with like against an unpaced tool.
    #[arg(long)]
    no_pacing: bool,

    /// UDP: require segmentation offload (UDP_SEGMENT: up to 64 datagrams per send and per
    /// trip through the stack), an error where the kernel or path lacks it. It is already the
    /// default wherever it works; receivers always accept coalesced (GRO) buffers.
    #[arg(long, conflicts_with = "no_gso")]
    gso: bool,

    /// UDP: one datagram per message (sendmmsg), each its own trip through the stack, as
    /// iperf3 sends; without it senders use UDP_SEGMENT where the kernel and path take it.
    #[arg(long)]
    no_gso: bool,

    /// Use IPv4 (loopback 127.0.0.1 without HOST).
    #[arg(long, short = '4', conflicts_with = "ipv6")]
    ipv4: bool,

    /// Use IPv6 (loopback ::1 without HOST).
    #[arg(long, short = '6')]
    ipv6: bool,

    /// Local address to send from.
    #[arg(long, short = 'B', value_name = "ADDR")]
    bind: Option<IpAddr>,

    /// Give up on a connection to the agent (control or data) not answered within MS
    /// milliseconds, as iperf3's --connect-timeout [default: 10 s, the agent's silence limit].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..=600_000))]
    connect_timeout: Option<u64>,

    /// This end's data port: stream N of -P (and of --bidir's second direction) takes PORT+N,
    /// as iperf3's --cport; the control connection keeps an ephemeral port.
    #[arg(long, value_name = "PORT", value_parser = clap::value_parser!(u16).range(1..))]
    cport: Option<u16>,

    /// Bind this end's sockets to interface IFNAME (SO_BINDTODEVICE): the test leaves by it
    /// whatever the routes say, or fails.
    #[arg(long, value_name = "IFNAME", value_parser = crate::common::flags::parse_interface_name)]
    bind_dev: Option<String>,

    /// UDP: set IPv4's Don't Fragment bit on this end's datagrams (IP_MTU_DISCOVER = DO; IPv6:
    /// no fragmenting here either); a datagram over the path MTU is refused before the test.
    #[arg(long)]
    dont_fragment: bool,

    /// Prefix every output line with STR (iperf3's -T); in JSON, the `title` field.
    #[arg(long, short = 'T', value_name = "STR")]
    title: Option<String>,

    /// Stamp every output line with the local time, in the strftime FORMAT (default `%c `,
    /// as iperf3): --timestamps='%F %T '.
    #[arg(long, value_name = "FORMAT", num_args = 0..=1, require_equals = true, default_missing_value = crate::common::line_prefix::DEFAULT_STAMP_FORMAT)]
    timestamps: Option<String>,

    /// Seconds between interval lines; 0 for none.
    #[arg(long, short = 'i', default_value = "1", value_parser = parse_duration, value_name = "DURATION")]
    interval: Duration,

    /// Leave the first DURATION (slow start, warm-up) out of the totals (timed tests).
    #[arg(long, short = 'O', value_parser = parse_duration, value_name = "DURATION", conflicts_with = "num")]
    omit: Option<Duration>,

    /// Pin this end's stream threads to CPU CLIENT and the agent's to AGENT.
    #[arg(long, short = 'A', value_name = "CLIENT[,AGENT]")]
    affinity: Option<Affinity>,

    #[command(flatten)]
    key: crate::common::flags::KeyArgs,

    /// The path's link rate, for the envelope ceiling in the verdict. Without it: inside a
    /// wirespeed lab, the configured rate of the link the test leaves by; on a NIC with a
    /// physical layer, the speed it reports; never the speed of a virtual interface (veth,
    /// TAP, TUN, bridge, virtio), which is a constant of its driver.
    #[arg(long, value_name = "RATE", value_parser = parse_link_rate)]
    link_rate: Option<BitRate>,

    /// Run the test N times against the same agent and report the median, extremes and a
    /// bootstrap 95% interval of the received rate.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100))]
    repeat: u32,

    /// Print one JSON object per interval as it ends, then the document.
    #[arg(long, conflicts_with = "json_format")]
    json_stream: bool,

    /// The JSON layout: `wirespeed` (the `wirespeed.tcp.v1` / `udp.v1` document) or `iperf3`
    /// (what `iperf3 -J` prints, for tools that read it). Implies --json.
    #[arg(long, value_name = "LAYOUT", value_enum)]
    json_format: Option<JsonFormat>,

    #[command(flatten)]
    schedule: crate::common::schedule::ScheduleArgs,

    #[command(flatten)]
    brief: crate::common::brief::BriefArgs,

    #[command(flatten)]
    output: OutputArgs,
}

/// The flags (argument ids) that only `tcp` takes: `udp` refuses each with the fix, and
/// neither its help, its completions nor its manual page offer them.
pub(crate) const TCP_ONLY: [&str; 7] = [
    "nodelay",
    "mss",
    "congestion",
    "file",
    "zerocopy",
    "no_pacing",
    "mptcp",
];

/// The flags that only `udp` takes, likewise.
pub(crate) const UDP_ONLY: [&str; 3] = ["gso", "no_gso", "dont_fragment"];

/// `--json-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum JsonFormat {
    /// wirespeed's own document.
    Wirespeed,
    /// `iperf3 -J`'s layout.
    Iperf3,
}

/// The largest `--link-rate`: 10 Tbit/s, beyond any Ethernet standardised.
const MAX_LINK_RATE: u64 = 10_000_000_000_000;

fn parse_link_rate(text: &str) -> Result<BitRate, String> {
    let rate = text.parse::<BitRate>().map_err(|e| e.to_string())?;
    if rate.bits_per_second() > MAX_LINK_RATE {
        return Err("out of range: use 1 bit/s to 10 Tbit/s (e.g. --link-rate 1G)".into());
    }
    Ok(rate)
}

impl ThroughputArgs {
    #[doc(hidden)]
    pub fn spec(&self, protocol: Protocol) -> anyhow::Result<TestSpec> {
        let udp = protocol == Protocol::Udp;
        let len = self
            .len
            .map_or(if udp { 1472 } else { 128 * 1024 }, ByteSize::bytes);
        let len = u32::try_from(len)
            .map_err(|_| anyhow::anyhow!("-l {len} is too large: use at most 64MiB"))?;
        let amount = match (self.num, self.time) {
            (Some(Count::Buffers(n)), _) => Amount::Bytes(n.saturating_mul(u64::from(len))),
            (Some(Count::Bytes(n)), _) => Amount::Bytes(n),
            (None, Some(t)) => Amount::Seconds(t.as_secs_f64()),
            (None, None) => Amount::Seconds(10.0),
        };
        let rate = match (&self.bitrate, udp) {
            (Some(b), true) if b == "0" => 0,
            (Some(b), true) => b.parse::<BitRate>()?.bits_per_second(),
            (None, true) => 1_000_000,
            (_, false) => 0,
        };
        let tcp_cap = match (&self.bitrate, udp) {
            (Some(b), false) if b != "0" => Some(b.parse::<BitRate>()?.bits_per_second()),
            _ => None,
        };
        if self.file.is_some() && (udp || self.reverse) {
            bail!(
                "--file is sent by this end's TCP senders: use it with `wirespeed tcp`, without -R"
            );
        }
        if let Some(f) = &self.file {
            check_source(f)?;
        }
        if self.no_pacing && udp {
            bail!(
                "--no-pacing turns off TCP pacing: use it with `wirespeed tcp` (UDP senders pace to -b)"
            );
        }
        if self.zerocopy && udp {
            bail!("--zerocopy is for TCP senders: use it with `wirespeed tcp` (UDP has --gso)");
        }
        if (self.gso || self.no_gso) && !udp {
            bail!(
                "--gso/--no-gso choose UDP segmentation offload: use them with `wirespeed udp` (TCP always has it)"
            );
        }
        if self.dont_fragment && !udp {
            bail!(
                "--dont-fragment marks UDP datagrams: use it with `wirespeed udp` (TCP segments already fit the path MTU)"
            );
        }
        if self.dont_fragment && (self.reverse || self.bidir) {
            bail!(
                "--dont-fragment marks this end's datagrams, and with -R or --bidir the agent sends: drop one of them"
            );
        }
        if udp && (self.nodelay || self.mss.is_some() || self.congestion.is_some()) {
            bail!("--nodelay, -M and -C are TCP options: use them with `wirespeed tcp`");
        }
        let spec = TestSpec {
            protocol,
            direction: if self.bidir {
                Direction::Both
            } else if self.reverse {
                Direction::Receive
            } else {
                Direction::Send
            },
            streams: self.parallel,
            amount,
            length_bytes: len,
            window_bytes: self.window.map(ByteSize::bytes),
            send_buffer_bytes: None,
            receive_buffer_bytes: None,
            nodelay: self.nodelay,
            mss_bytes: self.mss,
            congestion: self.congestion.clone(),
            rate_bits_per_second: rate,
            agent_cpu: self.affinity.and_then(|a| a.agent),
            omit: self.omit.unwrap_or_default(),
            gso: self.gso,
            no_gso: self.no_gso,
            zerocopy: self.zerocopy,
            no_pacing: self.no_pacing,
            interval: (!self.interval.is_zero()).then_some(self.interval),
            tos: self.tos,
            mptcp: self.mptcp,
            no_drain: false,
            max_pacing_rate_bits_per_second: tcp_cap,
        };
        spec.validate().map_err(anyhow::Error::msg)?;
        Ok(spec)
    }

    fn agent_address(&self) -> anyhow::Result<Option<SocketAddr>> {
        let Some(host) = &self.host else {
            return Ok(None);
        };
        let port = match (self.port, self.iperf3) {
            (None, true) => Some(iperf3::peer::DEFAULT_PORT),
            (p, _) => p,
        };
        resolve_agent(host, port, self.ipv4, self.ipv6).map(Some)
    }

    /// `-A` names CPUs this process can run on (the agent's too when it runs in this process).
    fn check_affinity(&self) -> anyhow::Result<()> {
        let Some(a) = self.affinity else {
            return Ok(());
        };
        if let Some(reason) = wirespeed_net::sockopt::cpu_refusal(a.client, "this end") {
            bail!(reason);
        }
        if self.host.is_none()
            && let Some(reason) = a
                .agent
                .and_then(|cpu| wirespeed_net::sockopt::cpu_refusal(cpu, "the agent"))
        {
            bail!(reason);
        }
        Ok(())
    }
}

/// `--file`: a regular file this process can read, with data in it (sendfile reads a regular
/// file's pages; a directory, a FIFO or a device is refused before the test, not mid-way).
fn check_source(f: &std::path::Path) -> anyhow::Result<()> {
    use std::io::Read;
    let shown = f.display();
    let meta = std::fs::metadata(f).map_err(|e| {
        anyhow::anyhow!(
            "--file {shown}: cannot read it ({}): give a readable regular file",
            io_reason(&e)
        )
    })?;
    if meta.is_dir() {
        bail!("--file {shown} is a directory: give a regular file to send");
    }
    if !meta.is_file() {
        bail!(
            "--file {shown} is not a regular file (a FIFO, socket or device): give a regular file to send"
        );
    }
    if meta.len() == 0 {
        bail!("--file {shown} is empty: give a file with data to send");
    }
    std::fs::File::open(f)
        .and_then(|mut h| h.read(&mut [0u8; 1]))
        .map_err(|e| {
            anyhow::anyhow!(
                "--file {shown}: cannot read it ({}): give a readable regular file",
                io_reason(&e)
            )
        })?;
    Ok(())
}

/// An I/O error's reason without the "(os error N)" tail.
fn io_reason(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(i) => text[..i].to_string(),
        None => text,
    }
}

/// The control address of an agent given as an address, `address:port`, or a name, keeping only
/// the address family asked for (`-4`, `-6`).
pub(crate) fn resolve_agent(
    host: &str,
    port: Option<u16>,
    ipv4: bool,
    ipv6: bool,
) -> anyhow::Result<SocketAddr> {
    // A port in HOST:PORT and another in -p: which one was meant cannot be guessed.
    let one_port = |in_host: u16| -> anyhow::Result<u16> {
        match port {
            Some(p) if p != in_host => bail!(
                "two ports: {host} names {in_host} and -p names {p}; give the port once (HOST:PORT or -p)"
            ),
            _ => Ok(in_host),
        }
    };
    let family = |ip: IpAddr| -> anyhow::Result<()> {
        if ip.is_ipv4() && ipv6 {
            bail!("{ip} is an IPv4 address but -6 asks for IPv6: drop -6 or give an IPv6 address");
        }
        if ip.is_ipv6() && ipv4 {
            bail!("{ip} is an IPv6 address but -4 asks for IPv4: drop -4 or give an IPv4 address");
        }
        Ok(())
    };
    let parsed = crate::common::host::Host::parse(host, "agent")?;
    if let crate::common::host::Host::Address(addr, _) = parsed {
        family(addr.ip())?;
    }
    let port = match parsed.port() {
        Some(written) => one_port(written)?,
        None => port.unwrap_or(DEFAULT_PORT),
    };
    let name = match parsed {
        crate::common::host::Host::Name(name, _) => name,
        crate::common::host::Host::Address(..) => host,
    };
    parsed
        .addresses(port, "agent")?
        .into_iter()
        .find(|a| (!ipv4 || a.is_ipv4()) && (!ipv6 || a.is_ipv6()))
        .ok_or_else(|| {
            anyhow::anyhow!(
                "'{name}' has no {} address",
                if ipv6 { "IPv6" } else { "IPv4" }
            )
        })
}

/// A validated throughput test: what `tcp`/`udp` flags mean, and what a library caller
/// (`reproduce`) builds directly.
#[derive(Debug, Clone)]
pub struct Config {
    pub(crate) protocol: Protocol,
    #[doc(hidden)]
    pub spec: TestSpec,
    /// The agent; None: an agent in this process on loopback.
    #[doc(hidden)]
    pub remote: Option<SocketAddr>,
    /// With no remote agent: the in-process one on ::1 instead of 127.0.0.1.
    pub(crate) ipv6: bool,
    pub(crate) bind: Option<IpAddr>,
    pub(crate) auth: Option<AuthKey>,
    pub(crate) affinity: Option<Affinity>,
    pub(crate) file: Option<PathBuf>,
    pub(crate) link_rate: Option<BitRate>,
    #[doc(hidden)]
    pub repeat: u32,
    #[doc(hidden)]
    pub rate_format: RateFormat,
    /// The remote end is an iperf3 server.
    pub(crate) iperf3: bool,
    /// This end's socket choices (`--connect-timeout`, `--cport`, `--bind-dev`,
    /// `--dont-fragment`).
    pub(crate) local: wirespeed_net::LocalOptions,
    /// `-T`.
    pub(crate) title: Option<String>,
}

impl Config {
    /// The test to run.
    pub fn spec(&self) -> &TestSpec {
        &self.spec
    }

    /// How rates are written in text.
    pub fn rate_format(&self) -> RateFormat {
        self.rate_format
    }

    /// One TCP stream through this host's loopback for `seconds`, no intervals: the host's own
    /// ceiling, as `wirespeed tcp -t SECONDS -i 0` measures it.
    pub fn loopback_tcp(seconds: f64) -> Config {
        let spec = TestSpec {
            protocol: Protocol::Tcp,
            amount: Amount::Seconds(seconds),
            length_bytes: 128 * 1024,
            ..TestSpec::default()
        };
        Config {
            protocol: Protocol::Tcp,
            spec,
            remote: None,
            ipv6: false,
            bind: None,
            auth: None,
            affinity: None,
            file: None,
            link_rate: None,
            repeat: 1,
            rate_format: RateFormat::Adaptive,
            iperf3: false,
            local: wirespeed_net::LocalOptions::default(),
            title: None,
        }
    }
}

impl ThroughputArgs {
    /// The flags, checked and turned into a test.
    #[doc(hidden)]
    pub fn config(&self, protocol: Protocol) -> anyhow::Result<Config> {
        self.check_iperf3()?;
        let spec = self.spec(protocol)?;
        self.check_affinity()?;
        let auth = self.key.load()?;
        let local = self.local_options(&spec)?;
        if let Some(t) = &self.title {
            crate::common::line_prefix::check_title(t)?;
        }
        Ok(Config {
            protocol,
            spec,
            remote: self.agent_address()?,
            ipv6: self.ipv6,
            bind: self.bind,
            auth,
            affinity: self.affinity,
            file: self.file.clone(),
            link_rate: self.link_rate,
            repeat: self.repeat,
            rate_format: self.output.rate_format,
            iperf3: self.iperf3,
            local,
            title: self.title.clone(),
        })
    }

    /// `--connect-timeout`, `--cport`, `--bind-dev` and `--dont-fragment`, checked.
    fn local_options(&self, spec: &TestSpec) -> anyhow::Result<wirespeed_net::LocalOptions> {
        if let Some(first) = self.cport {
            let flows = spec.flows().len();
            let last = usize::from(first) + flows.saturating_sub(1);
            if last > usize::from(u16::MAX) {
                bail!(
                    "--cport {first} with {flows} streams needs ports {first} to {last}, past 65535: give --cport {} or lower",
                    usize::from(u16::MAX) + 1 - flows
                );
            }
        }
        if let Some(dev) = &self.bind_dev
            && wirespeed_net::iface::index(dev).is_none()
        {
            bail!(
                "--bind-dev {dev}: no such interface on this host: give one that `ip link` lists (lo, eth0)"
            );
        }
        Ok(wirespeed_net::LocalOptions {
            connect_timeout: self.connect_timeout.map(Duration::from_millis),
            client_port: self.cport,
            bind_device: self.bind_dev.clone(),
            dont_fragment: self.dont_fragment,
        })
    }
}

/// `wirespeed tcp` and `wirespeed udp`: flags -> config -> measure -> text, JSON or iperf3's JSON.
pub(crate) fn run(mut args: ThroughputArgs, protocol: Protocol) -> anyhow::Result<()> {
    args.schedule.check_unused("--count")?;
    args.brief.check(
        &args.output,
        &[
            (args.json_stream, "--json-stream"),
            (args.json_format.is_some(), "--json-format"),
        ],
    )?;
    let config = args.config(protocol)?;
    if args.schedule.active() {
        return run_scheduled(&args, &config);
    }
    if args.json_format.is_some() {
        args.output.json = true;
    }
    if args.timestamps.is_some() && (args.output.json || args.json_stream) {
        bail!(
            "--timestamps stamps text lines: drop it with --json, --json-stream or --json-format (the document holds its start time)"
        );
    }
    let prefix = crate::common::line_prefix::LinePrefix::new(
        args.title.as_deref(),
        args.timestamps.as_deref(),
    )?;
    let human = !args.output.json && !args.json_stream && !args.brief.brief;
    let mut live = LiveLines::new(
        args.output.rate_format,
        &config.spec,
        human,
        args.json_stream,
    )
    .with_prefix(prefix.clone());
    let Measurement {
        doc,
        partial_reason,
    } = measure(&config, &mut live)?;
    if args.json_stream {
        let mut out = io::stdout().lock();
        writeln!(out, "{}", serde_json::to_string(&doc)?)?;
    } else if args.json_format == Some(JsonFormat::Iperf3) {
        let mut out = io::stdout().lock();
        serde_json::to_writer_pretty(&mut out, &crate::throughput::iperf3::json::document(&doc))?;
        writeln!(out)?;
        if let Some(path) = &args.output.metrics_file {
            crate::common::metrics::write_file(path, &doc)?;
        }
    } else if args.brief.brief {
        crate::common::brief::print(&args.output, &doc, &prefix).context("writing the result")?;
    } else {
        output::print_prefixed(&args.output, &doc, &prefix).context("writing the result")?;
    }
    if let Some(why) = partial_reason {
        // Cut short by a signal: 128 + its number, as every long command and the shell say.
        return Err(
            Exit::cut_short(format!("partial result: {why} (what was counted is above)")).into(),
        );
    }
    Ok(())
}

/// `--every`: the test on a schedule, each run's document appended to the results file.
fn run_scheduled(args: &ThroughputArgs, config: &Config) -> anyhow::Result<()> {
    if args.json_stream || args.json_format.is_some() {
        bail!(
            "--every prints one line per run and a summary: drop --json-stream/--json-format (each run's whole document is in the results file)"
        );
    }
    if args.brief.brief {
        bail!(
            "--every prints one line per run already: drop --brief (each run's whole document is in the results file)"
        );
    }
    if args.timestamps.is_some() {
        bail!(
            "--every stamps each run's line with its time already: drop --timestamps (each run's document holds its start time)"
        );
    }
    let mut one = || {
        let mut silent = LiveLines::new(config.rate_format, &config.spec, false, false);
        let m = measure(config, &mut silent)?;
        let rate = measure::received_rate(&m.doc.result.end);
        Ok(crate::common::schedule::RunOutput {
            document: serde_json::to_value(&m.doc)?,
            headline: Some(rate),
            failure: m.partial_reason,
        })
    };
    crate::common::schedule::run(
        &args.schedule,
        crate::common::schedule::Job {
            command: match config.protocol {
                Protocol::Tcp => "tcp",
                Protocol::Udp => "udp",
            },
            count_flag: "--count",
            seed: None,
            headline: "received rate",
            unit: crate::common::schedule::Unit::BitsPerSecond,
            output: &args.output,
            run: &mut one,
        },
    )
}
