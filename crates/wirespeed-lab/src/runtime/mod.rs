//! A lab on the real machine: namespaces and TAP devices built from a topology, and the
//! emulator's threads moving frames between them on the real clock.
//!
//! Each direction of a link has two threads. The ingress thread reads frames from the sending
//! end's TAP device as they come, stamps them with `CLOCK_MONOTONIC` and asks the direction's
//! [`Direction`] when each must be delivered; the egress thread holds each frame until that
//! instant (sleep, then spin: [`RealClock`]) and writes it into the far end's TAP device,
//! recording how late it was. The two threads share a FIFO and recycle their buffers, so the
//! data path allocates nothing once it is warm. A direction that carries super-packets above
//! 1 Gbit/s has one thread instead, which does both between its waits in one `ppoll`
//! ([`run_one_thread`], [`THREADS_ENV`]).
//!
//! A host with a processing model ([`crate::topology::HostConfig`]) has one [`HostCpu`] per
//! port, shared by the ingress thread of the direction leaving it (transmit cost, charged when
//! the frame is read) and the egress thread of the direction reaching it (receive cost,
//! charged when the frame's last bit arrives; the frame is written when the CPU is done).
//!
//! A direction with active queue management (`aqm = "codel"` or `"fq_codel"`) decides a
//! frame's fate when it leaves the queue, not when it arrives: its ingress thread holds the
//! queued frames' buffers, hands each arrival to [`Direction::enqueue`], and also wakes at
//! [`Direction::next_event`] (the instant the wire frees) to let the queue release the next
//! frame; the egress thread is the same.
//!
//! A half-duplex link, a duplex-mismatch link and a hub ([`crate::topology::Segment`]) are one
//! shared medium each: a single thread holds all their stations' TAP devices and runs the
//! simulator's CSMA/CD MAC on the real clock (`shared_port`).
//!
//! Teardown order matters: the threads stop first, then the TAP descriptors close (which
//! destroys the devices), then the namespaces are deleted. Deleting a namespace while a TAP is
//! still open would move the device back to the root namespace instead of destroying it.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::LabError;
use crate::addressing::{Plan, plan};
use crate::device::Watched;
use crate::emulator::clock::{SpinPolicy, monotonic_now};
use crate::emulator::handoff;
use crate::emulator::host::HostCpu;
use crate::emulator::link::Direction;
use crate::emulator::router::RouterEgress;
use crate::emulator::shared::{SharedConfig, SharedMedium};
use crate::shared_port::{SharedPort, StationShared};
use crate::sys::{self, Tap};
use crate::topology::{AqmKind, LinkDuplex};
use crate::topology::{NodeKind, Topology};
use wirespeed_sim::mac::MacDuplex;

// Public only as test seams, hidden from the documentation: the runtime's unit tests
// (crates/wirespeed-lab-tests) drive the ingress and egress threads' loops, the one-thread
// mode and the status figures directly, frame by frame; a user builds a lab through [`Lab`].
#[doc(hidden)]
pub mod egress;
#[doc(hidden)]
pub mod ingress;
#[doc(hidden)]
pub mod one_thread;
#[doc(hidden)]
pub mod port;
#[doc(hidden)]
pub mod status;

use egress::Egress;
use ingress::{Ingress, with_super_packet_slack};
use one_thread::run_one_thread;
use port::{PortShared, Scheduled};
use status::{PortHandle, Shared};

pub use ingress::HOLD_BACK_MAX_NS;
pub use port::LATE_RELEASE_NS;
pub use status::{Emulator, EmulatorCost, LabBottleneck, PortStatus, lab_bottleneck};

/// How often idle threads look at the stop flag.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// A built lab: namespaces configured, TAP devices open. Dropping it tears everything down.
#[derive(Debug)]
pub struct Lab {
    /// The lab's name (`ws-NAME-NODE` are its namespaces).
    pub name: String,
    /// The topology it was built from.
    pub topology: Topology,
    /// Its addresses and routes.
    pub plan: Plan,
    namespaces: Vec<String>,
    taps: Vec<Tap>,
    torn_down: bool,
    /// How the egress threads wait for a release ([`crate::emulator::clock::SPIN_ENV`]).
    spin: SpinPolicy,
    /// Threads per offloaded direction ([`THREADS_ENV`]).
    threads: Threads,
    /// CPUs the directions' threads are bound to, in port order, round robin ([`CPUS_ENV`];
    /// empty: not bound).
    cpus: Vec<usize>,
}

/// The namespace of `node` in lab `lab`.
pub fn namespace_name(lab: &str, node: &str) -> String {
    format!("{}{lab}-{node}", sys::PREFIX)
}

impl Lab {
    /// Builds the namespaces, devices, addresses and routes of `topology` under `name`.
    /// `tap_id` (a few characters) makes the TAP device names unique: `ws-<tap_id>-<port>`.
    pub fn build(topology: Topology, name: &str, tap_id: &str) -> Result<Lab, LabError> {
        sys::require_net_admin()?;
        let spin = SpinPolicy::from_env().map_err(|message| LabError::BadSetting { message })?;
        let threads = Threads::from_env().map_err(|message| LabError::BadSetting { message })?;
        let cpus = cpus_from_env().map_err(|message| LabError::BadSetting { message })?;
        if let Ok(value) = std::env::var(crate::ingress_stamp::STAMPS_ENV)
            && !matches!(value.as_str(), "0" | "all")
        {
            return Err(LabError::BadStampsSetting { value });
        }
        let plan = plan(&topology);
        let mut lab = Lab {
            spin,
            threads,
            cpus,
            name: name.to_string(),
            namespaces: Vec::new(),
            taps: Vec::new(),
            plan,
            topology,
            torn_down: false,
        };
        // On any error below, dropping `lab` removes what was made so far.
        for node in &lab.topology.nodes {
            let ns = namespace_name(name, &node.name);
            sys::add_namespace(&ns)?;
            lab.namespaces.push(ns);
        }
        let mut moves = String::new();
        let offload = offloads_wanted();
        for (port, interface) in lab.plan.interfaces.iter().enumerate() {
            let tap_name = format!("{}{tap_id}-{port}", sys::PREFIX);
            let tap = if offload && offloads_allowed(&lab.topology, interface.link) {
                Tap::create_offloaded(&tap_name)?
            } else {
                Tap::create(&tap_name)?
            };
            moves.push_str(&format!(
                "link set {} netns {}\n",
                tap.name, lab.namespaces[interface.node]
            ));
            lab.taps.push(tap);
        }
        for (k, station) in lab.plan.stations.iter().enumerate() {
            let port = lab.plan.interfaces.len() + k;
            let tap = Tap::create(&format!("{}{tap_id}-{port}", sys::PREFIX))?;
            moves.push_str(&format!(
                "link set {} netns {}\n",
                tap.name, lab.namespaces[station.node]
            ));
            lab.taps.push(tap);
        }
        sys::ip(&["-batch", "-"], Some(&moves))?;
        for node in 0..lab.topology.nodes.len() {
            lab.configure_node(node)?;
        }
        Ok(lab)
    }

    fn configure_node(&self, node: usize) -> Result<(), LabError> {
        let ns = &self.namespaces[node];
        // Name and MTU first; IPv6 off where the link has none before the device is up, so
        // that it never sends a single IPv6 frame there; then addresses and routes.
        let mut names = String::new();
        let mut batch = String::new();
        let mut no_ipv6 = Vec::new();
        for (port, interface) in self.plan.interfaces.iter().enumerate() {
            if interface.node != node {
                continue;
            }
            let mtu = self.topology.links[interface.link].mtu;
            let dev = &interface.name;
            names.push_str(&format!("link set {} name {dev}\n", self.taps[port].name));
            names.push_str(&format!("link set {dev} mtu {mtu}\n"));
            if interface.ipv6.is_none() {
                no_ipv6.push(dev.clone());
            }
            batch.push_str(&format!("link set {dev} up\n"));
            batch.push_str(&format!("addr add {} dev {dev}\n", interface.ipv4));
            if let Some(v6) = interface.ipv6 {
                batch.push_str(&format!("addr add {v6}/64 dev {dev} nodad\n"));
            }
        }
        for (k, station) in self.plan.stations.iter().enumerate() {
            if station.node != node {
                continue;
            }
            let segment = &self.topology.segments[station.segment];
            let dev = &station.name;
            let tap = &self.taps[self.plan.interfaces.len() + k].name;
            names.push_str(&format!("link set {tap} name {dev}\n"));
            names.push_str(&format!("link set {dev} mtu {}\n", segment.mtu));
            // The device's ring (a TAP's ring is txqueuelen frames) holds as many frames as the
            // station's queue: the emulator stops reading a station whose queue is full, and a
            // default ring of 1000 would leave a saturating sender 1000 frames behind the
            // medium (30 s of 1514-byte frames among 24 stations) when it stops.
            names.push_str(&format!("link set {dev} txqueuelen {}\n", segment.queue));
            no_ipv6.push(dev.clone());
            batch.push_str(&format!("link set {dev} up\n"));
            batch.push_str(&format!("addr add {} dev {dev}\n", station.ipv4));
        }
        for route in self.plan.routes.iter().filter(|r| r.node == node) {
            batch.push_str(&format!(
                "route add {}/{} via {} dev {}\n",
                route.dest.network(),
                route.dest.prefix,
                route.via,
                route.dev
            ));
            if let Some((dest, via)) = route.via6 {
                batch.push_str(&format!(
                    "route add {dest}/64 via {via} dev {}\n",
                    route.dev
                ));
            }
        }
        sys::ip(&["-n", ns, "-batch", "-"], Some(&names))?;
        if std::path::Path::new("/proc/sys/net/ipv6").exists() {
            for dev in &no_ipv6 {
                sys::sysctl(ns, &format!("net/ipv6/conf/{dev}/disable_ipv6"), "1")?;
            }
        }
        sys::ip(&["-n", ns, "-batch", "-"], Some(&batch))?;
        if let NodeKind::Host(host) = &self.topology.nodes[node].kind {
            // Only inside this lab's own namespace: net.ipv4.tcp_* are per namespace.
            for setting in &host.tcp {
                sys::sysctl(ns, &format!("net/ipv4/{}", setting.key), &setting.value)?;
            }
        }
        if let NodeKind::Router(config) = &self.topology.nodes[node].kind {
            sys::sysctl(ns, "net/ipv4/ip_forward", "1")?;
            sys::sysctl(ns, "net/ipv6/conf/all/forwarding", "1")?;
            if !config.icmp_ratelimit {
                sys::sysctl(ns, "net/ipv4/icmp_ratelimit", "0")?;
                sys::sysctl(ns, "net/ipv6/icmp/ratelimit", "0")?;
            }
        }
        Ok(())
    }

    /// The namespace of the node called `node`.
    pub fn namespace(&self, node: &str) -> Option<&str> {
        self.topology
            .node_index(node)
            .map(|i| self.namespaces[i].as_str())
    }

    /// All namespaces, in node order.
    pub fn namespaces(&self) -> &[String] {
        &self.namespaces
    }

    /// Serves each offloaded direction with `threads` when the emulator starts, whatever
    /// [`THREADS_ENV`] said when the lab was built (for tests and benches that compare the
    /// two designs in one process).
    pub fn set_threads(&mut self, threads: Threads) {
        self.threads = threads;
    }

    /// Starts the emulator's threads.
    pub fn start(&self) -> Emulator {
        let stop = Arc::new(AtomicBool::new(false));
        let perturbations: Vec<u64> = self
            .topology
            .links
            .iter()
            .map(|link| {
                link.aqm
                    .and_then(|a| a.perturbation)
                    .unwrap_or_else(fresh_perturbation)
            })
            .collect();
        let mut ports = Vec::new();
        let mut threads = Vec::new();
        for link in &self.topology.links {
            if link.is_shared() {
                self.start_shared_link(link, &stop, &mut ports, &mut threads);
                continue;
            }
            // One CPU per host port, shared by the two threads that touch that port.
            let cpus = [
                self.host_cpu(self.plan.end(link.index, true).node),
                self.host_cpu(self.plan.end(link.index, false).node),
            ];
            for (from_a, config) in [(true, link.ab), (false, link.ba)] {
                let src = self.plan.end(link.index, from_a);
                let dst = self.plan.end(link.index, !from_a);
                let src_port = 2 * link.index + usize::from(!from_a);
                let dst_port = 2 * link.index + usize::from(from_a);
                let router = self.egress_costs(src.node);
                let port = Arc::new(PortShared::default());
                let (tx, rx) = handoff::channel::<Scheduled>();
                let (recycle_tx, recycle_rx) = handoff::channel::<Vec<u8>>();
                let mut direction = Direction::new(config, link.layer, link.mtu);
                if let Some(aqm) = &link.aqm {
                    direction = direction.with_aqm(aqm, perturbations[link.index]);
                }
                let (src_cpu, dst_cpu) = if from_a {
                    (cpus[0].clone(), cpus[1].clone())
                } else {
                    (cpus[1].clone(), cpus[0].clone())
                };
                // Both ends of a link are opened alike; super-packets only where both carry
                // the vnet header (the far end must accept what the near end hands over).
                let vnet = self.taps[src_port].offloads.vnet_hdr
                    && self.taps[dst_port].offloads.vnet_hdr
                    && link.aqm.is_none();
                port.offloaded
                    .store(vnet && self.taps[src_port].offloads.tso, Ordering::Relaxed);
                // Charged from the sending kernel's transmit stamps where the ingress thread's
                // wake-up is a sizeable share of a frame's time (best effort: without the
                // socket, frames are charged from their read).
                // Not with one thread per direction: measured at 100 Mbit/s with one thread
                // forced, the frames stopped pairing with their stamps (bench/RESULTS.md,
                // issue 20, one thread against two), so such a link is charged from its reads.
                let one_thread = vnet && self.threads == Threads::One;
                let stamps = (crate::ingress_stamp::stamped_here(config.rate.bits_per_second())
                    && !one_thread)
                    .then(|| {
                        crate::ingress_stamp::IngressStamps::open(
                            &self.namespaces[src.node],
                            &src.name,
                        )
                        .ok()
                    })
                    .flatten();
                let stamp_counters = stamps.as_ref().map(|s| s.counters());
                let ingress = Ingress {
                    stamps,
                    fd: self.taps[src_port].raw_fd(),
                    vnet,
                    frame_buffer: link.frame_buffer(),
                    max_in_flight: with_super_packet_slack(
                        link.in_flight_frames(&config),
                        config.rate.bits_per_second(),
                        vnet,
                    ),
                    direction,
                    router,
                    host: src_cpu.clone(),
                    to_egress: tx,
                    recycled: recycle_rx,
                    shared: Arc::clone(&port),
                    stop: Arc::clone(&stop),
                };
                let egress = Egress {
                    spin: self.spin,
                    fd: self.taps[dst_port].raw_fd(),
                    host: dst_cpu,
                    from_ingress: rx,
                    recycle: recycle_tx,
                    shared: Arc::clone(&port),
                    stop: Arc::clone(&stop),
                };
                // The port first: a thread's name is cut to 15 bytes (`ws-in-0:rates-0`).
                let label = format!("{}:{}", ports.len(), self.name);
                let cpu = (!self.cpus.is_empty()).then(|| self.cpus[ports.len() % self.cpus.len()]);
                let pin = move || {
                    if let Some(cpu) = cpu {
                        sys::pin_to_cpu(cpu);
                    }
                };
                if one_thread {
                    port.one_thread.store(true, Ordering::Relaxed);
                    threads.push(spawn(format!("ws-io-{label}"), move || {
                        pin();
                        run_one_thread(ingress, egress)
                    }));
                } else {
                    threads.push(spawn(format!("ws-in-{label}"), move || {
                        pin();
                        ingress.run()
                    }));
                    threads.push(spawn(format!("ws-out-{label}"), move || {
                        pin();
                        egress.run()
                    }));
                }
                ports.push(PortHandle {
                    link: link.index,
                    from: self.topology.nodes[src.node].name.clone(),
                    to: self.topology.nodes[dst.node].name.clone(),
                    interface: src.name.clone(),
                    rate_bits_per_second: config.rate.bits_per_second(),
                    delay_ns: u64::try_from(config.delay.as_nanos()).unwrap_or(u64::MAX),
                    medium: "full".into(),
                    shared: Shared::Direction(port),
                    host: src_cpu,
                    aqm: link.aqm.map(|a| a.kind.name().to_string()),
                    fq_perturbation: link
                        .aqm
                        .filter(|a| a.kind == AqmKind::FqCodel)
                        .map(|_| perturbations[link.index]),
                    sender: Watched::open(&self.namespaces[src.node], &src.name).ok(),
                    receiver: Watched::open(&self.namespaces[dst.node], &dst.name).ok(),
                    stamps: stamp_counters,
                });
            }
        }
        for segment in &self.topology.segments {
            self.start_segment(segment, &stop, &mut ports, &mut threads);
        }
        let started = monotonic_now();
        Emulator {
            stop,
            threads,
            ports,
            started,
            previous_cpu: Mutex::new((started, Vec::new(), Vec::new())),
        }
    }

    /// A half-duplex or mismatched link: one thread, two stations (end a is station 0).
    fn start_shared_link(
        &self,
        link: &crate::topology::Link,
        stop: &Arc<AtomicBool>,
        ports: &mut Vec<PortHandle>,
        threads: &mut Vec<JoinHandle<()>>,
    ) {
        let mac = |d| match d {
            LinkDuplex::Full => MacDuplex::Full,
            LinkDuplex::Half => MacDuplex::Half,
        };
        let word = |d| match d {
            LinkDuplex::Full => "full",
            LinkDuplex::Half => "half",
        };
        let delay_s = link.ab.delay.as_secs_f64();
        let config = SharedConfig {
            rate: link.ab.rate,
            duplex: vec![mac(link.duplex_a), mac(link.duplex_b)],
            // The medium is given by its delay; any velocity gives it back exactly.
            length_m: delay_s * wirespeed_sim::bus::SPEED_OF_LIGHT,
            velocity_factor: 1.0,
            queue: match link.ab.queue {
                crate::topology::QueueLimit::Packets(p) => p,
                crate::topology::QueueLimit::Bytes(_) => unreachable!("refused on half duplex"),
            },
            seed: link.ab.seed,
            mtu: link.mtu,
        };
        let mut shared = Vec::new();
        let mut cpus = Vec::new();
        for (from_a, duplex) in [(true, link.duplex_a), (false, link.duplex_b)] {
            let src = self.plan.end(link.index, from_a);
            let dst = self.plan.end(link.index, !from_a);
            let station = Arc::new(StationShared::default());
            shared.push(Arc::clone(&station));
            cpus.push(self.host_model(src.node).map(|h| HostCpu::new(&h)));
            ports.push(PortHandle {
                link: link.index,
                from: self.topology.nodes[src.node].name.clone(),
                to: self.topology.nodes[dst.node].name.clone(),
                interface: src.name.clone(),
                rate_bits_per_second: link.ab.rate.bits_per_second(),
                delay_ns: u64::try_from(link.ab.delay.as_nanos()).unwrap_or(u64::MAX),
                medium: word(duplex).into(),
                shared: Shared::Station(station),
                aqm: None,
                fq_perturbation: None,
                host: None,
                sender: Watched::open(&self.namespaces[src.node], &src.name).ok(),
                receiver: Watched::open(&self.namespaces[src.node], &src.name).ok(),
                stamps: None,
            });
        }
        let port = SharedPort {
            frame_buffer: link.frame_buffer(),
            max_held: config.queue as usize + 2,
            memory_drops: vec![0; 2],
            fds: vec![
                self.taps[2 * link.index].raw_fd(),
                self.taps[2 * link.index + 1].raw_fd(),
            ],
            cpus,
            medium: SharedMedium::new(&config, monotonic_now()),
            shared,
            stop: Arc::clone(stop),
        };
        let label = format!("{}:{}", self.name, link.index);
        threads.push(spawn(format!("ws-csma-{label}"), move || port.run()));
    }

    /// A hub: one thread for all its stations.
    fn start_segment(
        &self,
        segment: &crate::topology::Segment,
        stop: &Arc<AtomicBool>,
        ports: &mut Vec<PortHandle>,
        threads: &mut Vec<JoinHandle<()>>,
    ) {
        let config = SharedConfig {
            rate: segment.rate,
            duplex: vec![MacDuplex::Half; segment.stations.len()],
            length_m: segment.length_m,
            velocity_factor: segment.velocity_factor,
            queue: segment.queue,
            seed: segment.seed,
            mtu: segment.mtu,
        };
        let end_to_end_ns =
            segment.length_m / (segment.velocity_factor * wirespeed_sim::bus::SPEED_OF_LIGHT) * 1e9;
        let mut shared = Vec::new();
        let mut fds = Vec::new();
        let mut cpus = Vec::new();
        for (k, station) in self.plan.stations.iter().enumerate() {
            if station.segment != segment.index {
                continue;
            }
            fds.push(self.taps[self.plan.interfaces.len() + k].raw_fd());
            cpus.push(self.host_model(station.node).map(|h| HostCpu::new(&h)));
            let s = Arc::new(StationShared::default());
            shared.push(Arc::clone(&s));
            ports.push(PortHandle {
                link: self.topology.links.len() + segment.index,
                from: self.topology.nodes[station.node].name.clone(),
                to: segment.name.clone(),
                interface: station.name.clone(),
                rate_bits_per_second: segment.rate.bits_per_second(),
                delay_ns: end_to_end_ns.round() as u64,
                medium: "half".into(),
                shared: Shared::Station(s),
                host: None,
                aqm: None,
                fq_perturbation: None,
                sender: Watched::open(&self.namespaces[station.node], &station.name).ok(),
                receiver: Watched::open(&self.namespaces[station.node], &station.name).ok(),
                stamps: None,
            });
        }
        let port = SharedPort {
            frame_buffer: crate::topology::frame_buffer(segment.mtu),
            max_held: segment.queue as usize + 2,
            memory_drops: vec![0; fds.len()],
            fds,
            cpus,
            medium: SharedMedium::new(&config, monotonic_now()),
            shared,
            stop: Arc::clone(stop),
        };
        let label = format!("{}:{}", self.name, segment.name);
        threads.push(spawn(format!("ws-hub-{label}"), move || port.run()));
    }

    /// The processing model of `node`, if it is a host that has one.
    fn host_model(&self, node: usize) -> Option<crate::topology::HostConfig> {
        match &self.topology.nodes[node].kind {
            NodeKind::Host(h) if h.has_costs() => Some(h.clone()),
            _ => None,
        }
    }

    /// A CPU for one port of `node`, shared between the threads of that port.
    fn host_cpu(&self, node: usize) -> Option<Arc<Mutex<HostCpu>>> {
        self.host_model(node)
            .map(|h| Arc::new(Mutex::new(HostCpu::new(&h))))
    }

    fn egress_costs(&self, node: usize) -> Option<RouterEgress> {
        let NodeKind::Router(config) = &self.topology.nodes[node].kind else {
            return None;
        };
        if config.forward.is_zero() && config.answer.is_zero() {
            return None;
        }
        let own = self
            .plan
            .interfaces
            .iter()
            .filter(|i| i.node == node)
            .flat_map(|i| std::iter::once(IpAddr::V4(i.ipv4.addr)).chain(i.ipv6.map(IpAddr::V6)))
            .collect();
        Some(RouterEgress {
            forward: config.forward,
            answer: config.answer,
            own,
        })
    }

    /// Closes this process's TAP descriptors without removing the namespaces: for the process
    /// that hands the running lab to a detached emulator.
    pub fn release(mut self) {
        self.taps.clear();
        self.torn_down = true;
    }

    /// Closes the devices and deletes the namespaces. Idempotent; errors are ignored because
    /// teardown must go on (a namespace already gone is fine).
    pub fn teardown(&mut self) {
        if self.torn_down {
            return;
        }
        self.taps.clear();
        for ns in &self.namespaces {
            let _ = sys::delete_namespace(ns);
        }
        self.torn_down = true;
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        self.teardown();
    }
}

/// False if `WIRESPEED_LAB_OFFLOAD=0` asks for frame-per-read TAP devices everywhere (to
/// compare with the emulator before super-packets).
/// A flow-hash perturbation for a link whose topology sets none: random, so that no sender can
/// know which flows share a queue (RFC 8290 section 4.1), and below 2^63 so that the value
/// `lab status` shows can be written back as `fq_perturbation` to repeat a run.
pub fn fresh_perturbation() -> u64 {
    // The kernel's random source fails only before it is seeded at boot; a lab built then
    // still gets a value no sender can read off the topology.
    getrandom::u64().unwrap_or_else(|_| monotonic_now().0 ^ u64::from(std::process::id()) << 32)
        >> 1
}

fn offloads_wanted() -> bool {
    std::env::var("WIRESPEED_LAB_OFFLOAD").map_or(true, |v| v != "0")
}

/// True if link `link` may carry super-packets: a private full-duplex link without active
/// queue management (whose per-frame decisions are made at dequeue) whose ends are neither
/// hosts with a processing model (charged per frame on both sides of the emulator) nor routers
/// with a per-packet cost. Queue limits, loss and hidden hops stay exact with super-packets
/// (each segment is offered as a frame, and a super-packet with a dropped segment is cut).
pub fn offloads_allowed(topology: &Topology, link: usize) -> bool {
    let Some(link) = topology.links.get(link) else {
        return false;
    };
    let plain = |node: usize| match &topology.nodes[node].kind {
        NodeKind::Host(h) => !h.has_costs(),
        NodeKind::Router(r) => r.forward.is_zero() && r.answer.is_zero(),
    };
    !link.is_shared() && link.aqm.is_none() && plain(link.a) && plain(link.b)
}

/// The environment variable that chooses how many threads serve an offloaded direction
/// (a link carrying super-packets): `1`, one thread that waits in one `ppoll` for the sending
/// TAP or the next release ([`run_one_thread`]), or `2`, an ingress and an egress thread joined
/// by a hand-off, the default. Directions without super-packets always have two.
///
/// Why two by default (bench/RESULTS.md, issue 20): on a loaded machine one thread cost 9-26%
/// less CPU per 64 KB super-packet at 10 Gbit/s, but on the idle host it carried less: iperf3
/// through a 10 Gbit/s lab reached 85.8-91.2% of the ceiling with one thread against
/// 96.7-97.0% with two (queue 1,000 frames), and with a queue of the path's bandwidth-delay
/// product 89.6-98.8% (3 of 6 runs at 98% or more) against 88.4-99.2% (5 of 6). At 1 Gbit/s
/// it saved no CPU under load; 64-byte frames offered above 100 Mbit/s line rate overflowed the
/// sender's TAP ring with one thread and not with two; and the frames stopped pairing with the
/// sender's transmit stamps (`crate::ingress_stamp`).
pub const THREADS_ENV: &str = "WIRESPEED_LAB_THREADS";

/// Threads per offloaded direction ([`THREADS_ENV`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Threads {
    /// One thread reads, releases and writes.
    One,
    /// An ingress thread and an egress thread (the default).
    #[default]
    Two,
}

impl Threads {
    /// Parses [`THREADS_ENV`]'s value: `1` or `2`.
    pub fn parse(text: &str) -> Result<Threads, String> {
        match text.trim() {
            "1" => Ok(Threads::One),
            "2" => Ok(Threads::Two),
            _ => Err(format!(
                "{THREADS_ENV}={text} is not a thread count: set it to 1 (one thread per direction) or 2 (an ingress and an egress thread), or unset it (two)"
            )),
        }
    }

    /// What [`THREADS_ENV`] asks for ([`Threads::Two`] when unset).
    pub fn from_env() -> Result<Threads, String> {
        match std::env::var(THREADS_ENV) {
            Ok(v) => Threads::parse(&v),
            Err(_) => Ok(Threads::default()),
        }
    }
}

/// The environment variable that binds the threads of the private directions to CPUs, for
/// measuring placement: a comma-separated list of CPU numbers, taken round robin in port
/// order (port 0 is the first link's a -> b direction, port 1 its b -> a), e.g. `0,1` puts a
/// two-host lab's data direction on CPU 0 and its acknowledgements on CPU 1. Unset: the
/// scheduler places them.
pub const CPUS_ENV: &str = "WIRESPEED_LAB_CPUS";

/// Parses [`CPUS_ENV`]'s value against the CPUs this machine has (`available`): at most 64
/// numbers, each below `available`.
pub fn parse_cpus(text: &str, available: usize) -> Result<Vec<usize>, String> {
    let bad = || {
        format!(
            "{CPUS_ENV}={text} is not a CPU list: give comma-separated CPU numbers below {available} (e.g. 0,1), at most 64, or unset it"
        )
    };
    let cpus: Vec<usize> = text
        .split(',')
        .map(|c| c.trim().parse::<usize>().map_err(|_| bad()))
        .collect::<Result<_, _>>()?;
    if cpus.is_empty() || cpus.len() > 64 || cpus.iter().any(|&c| c >= available) {
        return Err(bad());
    }
    Ok(cpus)
}

/// The CPUs [`CPUS_ENV`] asks for (none when unset).
fn cpus_from_env() -> Result<Vec<usize>, String> {
    match std::env::var(CPUS_ENV) {
        Ok(v) => parse_cpus(
            &v,
            std::thread::available_parallelism().map_or(1, |n| n.get()),
        ),
        Err(_) => Ok(Vec::new()),
    }
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(name)
        .spawn(f)
        .expect("the emulator can start a thread")
}
