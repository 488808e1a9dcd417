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

use std::collections::VecDeque;
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::LabError;
use crate::addressing::{Plan, plan};
use crate::device::{DeviceCounters, Watched};
use crate::emulator::clock::{Clock, Nanos, RealClock, SpinPolicy, monotonic_now, thread_cpu_ns};
use crate::emulator::gso;
use crate::emulator::handoff::{self, Receiver, Sender};
use crate::emulator::host::{HostCounters, HostCpu};
use crate::emulator::link::{Direction, DirectionCounters, Event, Verdict};
use crate::emulator::router::RouterEgress;
use crate::emulator::shared::{SharedConfig, SharedMedium};
use crate::emulator::stats::{LatenessHistogram, LatenessSummary};
use crate::shared_port::{SharedPort, StationShared};
use crate::sys::{self, Tap};
use crate::topology::LinkDuplex;
use crate::topology::{NodeKind, Topology};
use wirespeed_sim::mac::MacDuplex;

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
                    direction = direction.with_aqm(aqm);
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

/// The most reads one wake-up of [`run_one_thread`] makes before it looks at the releases
/// again (it also stops as soon as a release comes due): a sender that keeps the TAP full
/// cannot hold a release back by more than one read.
const READS_PER_WAKE: usize = 64;

/// One offloaded direction served by one thread (on request: [`THREADS_ENV`]): it releases
/// every write that is due (sleep, then spin: [`RealClock`]), then reads every frame and
/// super-packet the sending TAP holds (non-blocking, until the TAP is empty, a release comes
/// due, or [`READS_PER_WAKE`]), and then waits in one `ppoll` for the TAP to become readable
/// or until shortly before the next release (a nanosecond timeout, then the spin). With two
/// threads, each super-packet cost four wake-ups (the reader's poll, the releaser's hand-off
/// and its sleep to the instant, and the same for the acknowledgement coming back) and a
/// cross-thread wake-up; here a burst of reads and the releases due between them share one.
/// The decisions are [`Ingress`]'s and the writes [`Egress`]'s, unchanged: the hand-off FIFO
/// between them stays, uncontended (a lock each way, no wake-up), so the data path allocates
/// nothing once warm (`tests::the_data_path_allocates_nothing_per_frame_once_warm`).
///
/// Releases come before reads, so a frame's fate is never decided while writes that were due
/// before it still count against the memory bound. The risk of one thread: a write into the
/// receiving TAP runs the receiving host's stack in this thread, and a read is a copy of up to
/// 64 KB; a release due meanwhile waits for them (counted in `lab status`: `late_after_previous_write`,
/// and `late_behind` for a read that ran past it).
fn run_one_thread(ingress: Ingress, egress: Egress) {
    sys::tighten_timer_slack();
    sys::realtime_priority_of(RELEASE_PRIORITY);
    let clock = RealClock::for_realtime_thread_with(egress.spin);
    let spin = |at: Nanos, now: Nanos| clock.spin_before(at, now);
    let mut one = OneThread::new(ingress, egress);
    let mut cpu_published = Nanos(0);
    // The TAP may hold more: the last read did not find it empty.
    let mut readable = false;
    while !one.egress.stop.load(Ordering::Relaxed) {
        if publish_cpu(
            &one.egress.shared.cpu_ns[1],
            &mut cpu_published,
            clock.now(),
        ) {
            one.egress
                .shared
                .spin_ns
                .store(clock.spun_ns(), Ordering::Relaxed);
        }
        // Releases first: everything due, and what is due within its spin.
        one.release_due(&clock, &spin);
        if readable {
            match one.read_batch(&clock, &spin, None) {
                Some(more) => readable = more,
                None => return,
            }
            if readable {
                // More to read, or a release due: no wait.
                continue;
            }
        }
        let now = clock.now();
        let target = one.holding.front().map(|s| {
            let spin = clock.spin_before(s.at, now);
            (s.at, Nanos(s.at.0.saturating_sub(spin)))
        });
        let wait = target.map_or(POLL_INTERVAL.as_nanos() as i64, |(_, t)| t.minus(now));
        let wait = wait.clamp(0, POLL_INTERVAL.as_nanos() as i64);
        let timeout = libc::timespec {
            tv_sec: 0,
            tv_nsec: wait as libc::c_long,
        };
        let mut pfd = libc::pollfd {
            fd: one.ingress.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        let ready = sys::ppoll(std::slice::from_mut(&mut pfd), &timeout);
        if ready > 0 {
            readable = true;
        } else if let Some((due, target)) = target
            && wait > 0
            && ready == 0
        {
            // A timed wait for a held write: its wake-up error is the clock's (a zero wait was
            // only a look, not a sleep).
            let woke = clock.now();
            clock.record_wake(target, woke);
            one.slept_past_due |= woke > due;
        }
    }
}

/// The state of [`run_one_thread`] and its two steps, which the tests drive in virtual time.
struct OneThread {
    ingress: Ingress,
    egress: Egress,
    pools: BufferPools,
    scratch: Vec<u8>,
    verdicts: Vec<Verdict>,
    /// Writes handed over by the ingress code, in release order.
    holding: VecDeque<Scheduled>,
    previous_write_end: Nanos,
    slept_past_due: bool,
}

impl OneThread {
    fn new(ingress: Ingress, egress: Egress) -> OneThread {
        let small = ingress.frame_buffer + gso::VNET_HDR_LEN;
        let mut pools = BufferPools::new(small, SUPER_READ_BUFFER);
        let scratch = pools.take(SUPER_READ_BUFFER);
        OneThread {
            ingress,
            egress,
            pools,
            scratch,
            verdicts: Vec::new(),
            holding: VecDeque::new(),
            previous_write_end: Nanos(0),
            slept_past_due: false,
        }
    }

    /// True if the next release is due within its spin (`spin(at, now)`) at `now`.
    fn due_soon(&self, now: Nanos, spin: &impl Fn(Nanos, Nanos) -> u64) -> bool {
        self.holding
            .front()
            .is_some_and(|s| s.at.minus(now) <= i64::try_from(spin(s.at, now)).unwrap_or(i64::MAX))
    }

    /// Releases every held write that is due within its spin, each at its instant on `clock`
    /// (sleep, then spin), counting the late ones by cause.
    fn release_due(&mut self, clock: &impl Clock, spin: &impl Fn(Nanos, Nanos) -> u64) {
        while self.due_soon(clock.now(), spin) {
            let reached = clock.now();
            let s = self.holding.pop_front().expect("a held write");
            let due = s.at;
            let now = clock.wait_until(due);
            if let Some(cause) = late_cause(
                due,
                reached,
                self.previous_write_end,
                self.slept_past_due,
                now,
            ) {
                self.egress.shared.late[cause as usize].fetch_add(1, Ordering::Relaxed);
            }
            self.egress.release(s, due, now);
            self.previous_write_end = clock.now();
            self.slept_past_due = false;
        }
    }

    /// Reads what the sending TAP holds, up to [`READS_PER_WAKE`], until it is empty or a
    /// release comes due, charged from `at` if given (virtual time) or else from the clock:
    /// `Some(true)` if the TAP may hold more, `Some(false)` if it was empty, `None` if the
    /// egress side is gone.
    fn read_batch(
        &mut self,
        clock: &impl Clock,
        spin: &impl Fn(Nanos, Nanos) -> u64,
        at: Option<Nanos>,
    ) -> Option<bool> {
        for _ in 0..READS_PER_WAKE {
            match self.ingress.read_and_offer(
                at,
                &mut self.scratch,
                &mut self.pools,
                &mut self.verdicts,
            ) {
                Some(true) => {}
                Some(false) => return None,
                None => return Some(false),
            }
            while let Ok(s) = self.egress.from_ingress.try_recv() {
                self.holding.push_back(s);
            }
            if self.due_soon(clock.now(), spin) {
                break;
            }
        }
        Some(true)
    }
}

fn spawn(name: String, f: impl FnOnce() + Send + 'static) -> JoinHandle<()> {
    std::thread::Builder::new()
        .name(name)
        .spawn(f)
        .expect("the emulator can start a thread")
}

struct Scheduled {
    at: Nanos,
    buffer: Vec<u8>,
    len: usize,
    /// What this write counts against the direction's memory bound, in frame buffers
    /// ([`memory_charge`]; 1 for a frame).
    frames: u64,
}

#[derive(Default)]
struct PortShared {
    counters: Mutex<DirectionCounters>,
    lateness: Mutex<LatenessHistogram>,
    /// Frame buffers' worth of memory handed to the egress thread and not yet written or
    /// dropped ([`memory_charge`]; one per frame where each frame has its own buffer).
    in_flight: AtomicU64,
    /// Writes into the receiving TAP that failed.
    write_errors: AtomicU64,
    /// CPU time of the ingress and egress threads, nanoseconds (published every ~10 ms).
    cpu_ns: [AtomicU64; 2],
    /// Of the egress thread's, the time it spun waiting for releases (published with it).
    spin_ns: AtomicU64,
    /// True if the port's TAP devices carry super-packets (vnet header and TSO).
    offloaded: AtomicBool,
    /// Reads that were super-packets of two or more segments.
    super_packets: AtomicU64,
    /// The segments (frames) those super-packets stood for.
    super_packet_frames: AtomicU64,
    /// Super-packets cut into frames in software because one of their segments was dropped.
    segmented: AtomicU64,
    /// The longest time a delivered super-packet held its first segment back: from the
    /// instant the first segment's last bit reached the far end to the release of the whole
    /// (the timing error super-packets add), nanoseconds.
    held_back_max_ns: AtomicU64,
    /// Releases later than [`LATE_RELEASE_NS`], by cause ([`LateCause`]).
    late: [AtomicU64; 3],
    /// One thread serves the direction (reads, releases and writes: [`run_one_thread`]); its
    /// CPU time is published as the egress thread's.
    one_thread: AtomicBool,
}

/// The SCHED_FIFO priority of the egress (release) threads: one above the ingress and
/// shared-medium threads' 10 (`sys::realtime_priority`).
const RELEASE_PRIORITY: i32 = 11;

/// A release later than this is counted by its cause in `lab status` (the issue's bound on
/// the 99th percentile at 1 Gbit/s), nanoseconds.
pub const LATE_RELEASE_NS: i64 = 50_000;

/// Why a release was late ([`LATE_RELEASE_NS`]), as the egress thread sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LateCause {
    /// The thread came to the release already past due, and its previous write into the
    /// receiving TAP (which runs the receiving host's stack in this thread) ended after the
    /// release was due: the previous write's work delayed it.
    PreviousWrite,
    /// The thread came to the release already past due though its previous write ended in
    /// time and it had not slept past the instant: it was preempted (or busy with the
    /// hand-off).
    Behind,
    /// A sleep returned after the release was due: the thread's timed wait for the hand-off
    /// (which sleeps until shortly before the release) or its wait for the instant (sleep,
    /// then spin): a late wake-up, or preemption while it spun.
    Wait,
}

/// The cause of a release due at `due` that the thread turned to at `reached`, after a
/// previous write that ended at `previous_write_end` (and, if `slept_past_due`, a timed wait
/// for the hand-off that returned after `due`), and made at `released`; `None` if it was not
/// late ([`LATE_RELEASE_NS`]).
fn late_cause(
    due: Nanos,
    reached: Nanos,
    previous_write_end: Nanos,
    slept_past_due: bool,
    released: Nanos,
) -> Option<LateCause> {
    if released.minus(due) <= LATE_RELEASE_NS {
        None
    } else if reached <= due {
        Some(LateCause::Wait)
    } else if previous_write_end > due {
        Some(LateCause::PreviousWrite)
    } else if slept_past_due {
        Some(LateCause::Wait)
    } else {
        Some(LateCause::Behind)
    }
}

/// How often a thread publishes its CPU time.
const CPU_PUBLISH_NS: i64 = 10_000_000;

/// Publishes the calling thread's CPU time into `slot` if `CPU_PUBLISH_NS` passed since `last`;
/// true if it did.
fn publish_cpu(slot: &AtomicU64, last: &mut Nanos, now: Nanos) -> bool {
    if now.minus(*last) >= CPU_PUBLISH_NS {
        slot.store(thread_cpu_ns(), Ordering::Relaxed);
        *last = now;
        return true;
    }
    false
}

/// The most a super-packet may hold its first frame back after that frame's last bit reached
/// the far end, nanoseconds: a super-packet whose segments would span more is written as runs
/// of segments that each fit (single frames where one frame takes longer: at 10 Mbit/s every
/// frame leaves at its own instant; at 1 Gbit/s runs of 6 full segments; at 10 Gbit/s a whole
/// 64 KB super-packet, 44 segments in 53 us). So the timing error super-packets add is at most
/// this, and at most one super-packet's serialization time, never early.
pub const HOLD_BACK_MAX_NS: i64 = 64_000;

/// The memory bound of a direction whose bound without super-packets is `frames`
/// ([`crate::topology::Link::in_flight_frames`]): with super-packets (`vnet`) it also holds
/// the minimum-size frames (84 bytes on the wire at `bits_per_second`) that a run holds back
/// after their arrival ([`HOLD_BACK_MAX_NS`]) and 1 ms of them for the egress thread's release
/// lateness, so that the bound does not refuse frames the queue would take (measured: with
/// the bound at exactly queue + propagation + 2, 64-byte frames at 100 Mbit/s met it before
/// the queue was full). The slack is at most an eighth of `frames` (plus one), so the memory
/// a lab may hold stays within 1/8 of what `topology::check_memory` budgets.
fn with_super_packet_slack(frames: u64, bits_per_second: u64, vnet: bool) -> u64 {
    if !vnet {
        return frames;
    }
    const MIN_WIRE_BITS: u128 = 84 * 8;
    let ns = u128::try_from(HOLD_BACK_MAX_NS).unwrap_or(0) + 1_000_000;
    let slack = u64::try_from(u128::from(bits_per_second) * ns / (MIN_WIRE_BITS * 1_000_000_000))
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    frames.saturating_add(slack.min(frames / 8 + 1))
}

/// What a write of `frames` frames in a buffer of `capacity` bytes counts against its
/// direction's memory bound ([`crate::topology::Link::in_flight_frames`], which
/// `topology::check_memory` budgets at one frame buffer, `slot` bytes, each): the frame buffers
/// its memory fills, but never more than its frames. Counting frames alone made the bound
/// refuse minimum-size frames before the configured queue was full: a run of ten 64-byte
/// segments is one small buffer, yet it counted ten, so the frames a late release still held
/// (the emulator's own lateness, past the bound's 1 ms of slack) ate the queue's room
/// (bench/RESULTS.md, issue 20: 216 and 542 memory refusals of UDP GSO paced at 110% of
/// 100 Mbit/s line rate besides the queue's drops). Never more than its frames, so a queue of
/// N frames fits wherever it did; a buffer of a power-of-two size class holds at most twice
/// the frames' slots, as before.
fn memory_charge(frames: u64, capacity: usize, slot: usize) -> u64 {
    frames
        .min(u64::try_from(capacity.div_ceil(slot.max(1))).unwrap_or(u64::MAX))
        .max(1)
}

/// Bytes of the buffer a super-packet is read into: the vnet header, 64 KB of IP packet (the
/// kernel's default `gso_max_size`), an Ethernet header with a VLAN tag, and one byte more to
/// tell a truncated read.
const SUPER_READ_BUFFER: usize = gso::VNET_HDR_LEN + 65_536 + 18 + 1;

/// Free buffers in size classes (the smallest holds one frame with its vnet header, each next
/// twice the previous, the last [`SUPER_READ_BUFFER`]), so that a frame or a small super-packet
/// in flight holds at most twice its bytes, and the data path allocates nothing once warm.
struct BufferPools {
    sizes: Vec<usize>,
    free: Vec<Vec<Vec<u8>>>,
}

impl BufferPools {
    fn new(small: usize, largest: usize) -> BufferPools {
        let mut sizes = Vec::new();
        let mut size = small;
        while size < largest {
            sizes.push(size);
            size *= 2;
        }
        sizes.push(largest);
        BufferPools {
            free: vec![Vec::new(); sizes.len()],
            sizes,
        }
    }

    fn class_of(&self, len: usize) -> usize {
        self.sizes
            .iter()
            .position(|&s| s >= len)
            .unwrap_or(self.sizes.len() - 1)
    }

    fn largest(&self) -> usize {
        self.sizes.len() - 1
    }

    fn take(&mut self, len: usize) -> Vec<u8> {
        let c = self.class_of(len);
        self.free[c].pop().unwrap_or_else(|| vec![0; self.sizes[c]])
    }

    fn put(&mut self, buffer: Vec<u8>) {
        if let Some(c) = self.sizes.iter().position(|&s| s == buffer.len()) {
            self.free[c].push(buffer);
        }
    }
}

struct Ingress {
    /// The sending kernel's transmit stamps, where this link uses them.
    stamps: Option<crate::ingress_stamp::IngressStamps>,
    fd: libc::c_int,
    /// Its TAP devices carry the vnet header: reads may be super-packets.
    vnet: bool,
    /// Bytes of each frame buffer (the link's largest frame, plus one).
    frame_buffer: usize,
    /// The most frames this direction may hold at once ([`crate::topology::Link::in_flight_frames`]).
    max_in_flight: u64,
    direction: Direction,
    router: Option<RouterEgress>,
    host: Option<Arc<Mutex<HostCpu>>>,
    to_egress: Sender<Scheduled>,
    recycled: Receiver<Vec<u8>>,
    shared: Arc<PortShared>,
    stop: Arc<AtomicBool>,
}

impl Ingress {
    /// The instant a frame just read entered the link: its transmit stamp where there is
    /// one, else now.
    fn charged_from(&mut self, frame: &[u8]) -> Nanos {
        let now = monotonic_now();
        match &mut self.stamps {
            Some(stamps) => stamps.sent_at(frame, now),
            None => now,
        }
    }

    /// When a frame just read is ready for the link, and what a router on the way costs it:
    /// charged from `at` (a super-packet's instant) or its own arrival ([`Self::charged_from`]),
    /// plus the time a slow sending host's CPU takes to hand it over.
    fn ready_for_link(&mut self, frame: &[u8], at: Option<Nanos>) -> (Nanos, Duration) {
        let now = match at {
            Some(t) => t,
            None => self.charged_from(frame),
        };
        let processing = self
            .router
            .as_ref()
            .map_or(Duration::ZERO, |r| r.charge(frame).duration());
        // A slow host's driver hands the frame to the link only when its CPU is done.
        let ready = self.host.as_ref().map_or(now, |cpu| {
            cpu.lock()
                .expect("host lock")
                .transmit(now, frame.len() as u64)
        });
        (ready, processing)
    }

    /// Publishes this thread's CPU time, then waits up to [`POLL_INTERVAL`] for the TAP to
    /// have a frame; false when it has none yet (the caller checks `stop` and waits again).
    fn wait_readable(&self, cpu_published: &mut Nanos) -> bool {
        publish_cpu(&self.shared.cpu_ns[0], cpu_published, monotonic_now());
        let mut pfd = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        sys::poll(
            std::slice::from_mut(&mut pfd),
            POLL_INTERVAL.as_millis() as i32,
        ) > 0
    }

    fn run(self) {
        if self.vnet {
            self.run_offloaded();
        } else if self.direction.has_aqm() {
            self.run_aqm();
        } else {
            self.run_drop_tail();
        }
    }

    /// The event path of a direction with active queue management: each frame read is
    /// enqueued with a tag, its buffer held here until the queue delivers or drops it; between
    /// reads the thread sleeps only until the queue's next event, so that every departure is
    /// decided at (or just after) its instant with every earlier arrival already known.
    fn run_aqm(mut self) {
        sys::tighten_timer_slack();
        sys::realtime_priority();
        let mut st = AqmHeld::default();
        let mut cpu_published = Nanos(0);
        while !self.stop.load(Ordering::Relaxed) {
            let now = monotonic_now();
            publish_cpu(&self.shared.cpu_ns[0], &mut cpu_published, now);
            if !self.aqm_advance(now, &mut st) {
                return;
            }
            let wait = self
                .direction
                .next_event()
                .map_or(POLL_INTERVAL.as_nanos() as i64, |t| t.minus(now))
                .clamp(0, POLL_INTERVAL.as_nanos() as i64);
            let timeout = libc::timespec {
                tv_sec: 0,
                tv_nsec: wait as libc::c_long,
            };
            let mut pfd = libc::pollfd {
                fd: self.fd,
                events: libc::POLLIN,
                revents: 0,
            };
            let ready = sys::ppoll(std::slice::from_mut(&mut pfd), &timeout);
            if ready <= 0 {
                continue;
            }
            loop {
                match self.aqm_read_one(None, &mut st) {
                    Some(true) => {}
                    Some(false) => return,
                    None => break,
                }
            }
        }
    }

    /// Lets the queue of a direction with active queue management release (or drop) what is
    /// due at `now`; false if the egress thread is gone.
    fn aqm_advance(&mut self, now: Nanos, st: &mut AqmHeld) -> bool {
        self.direction.advance(now, &mut st.events);
        self.release(&mut st.events, &mut st.held, &mut st.pool)
    }

    /// One read of [`Ingress::run_aqm`]: reads a frame and enqueues it, charged from `at` if
    /// given (virtual time, for tests) or else from the clock. `None` if the TAP had nothing
    /// to read; `Some(false)` if the egress thread is gone.
    fn aqm_read_one(&mut self, at: Option<Nanos>, st: &mut AqmHeld) -> Option<bool> {
        let mut buffer = st
            .pool
            .pop()
            .or_else(|| self.recycled.try_recv().ok())
            .unwrap_or_else(|| vec![0; self.frame_buffer]);
        let len = match sys::read_frame(self.fd, &mut buffer) {
            Ok(len) if len > 0 => len,
            _ => {
                st.pool.push(buffer);
                return None;
            }
        };
        // The memory bound counts the frames queued here as well as those in flight.
        if self.shared.in_flight.load(Ordering::Acquire) + st.held.len() as u64
            >= self.max_in_flight
        {
            self.direction.refuse_memory(len as u64);
            *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
            st.pool.push(buffer);
            return Some(true);
        }
        let (ready, processing) = self.ready_for_link(&buffer[..len], at);
        let tag = st.next_tag;
        st.next_tag += 1;
        self.direction
            .enqueue(ready, &buffer[..len], processing, tag, &mut st.events);
        st.held.insert(tag, (buffer, len));
        Some(self.release(&mut st.events, &mut st.held, &mut st.pool))
    }

    /// Hands the delivered frames to the egress thread and takes the dropped ones' buffers
    /// back; publishes the counters. False if the egress thread is gone.
    fn release(
        &mut self,
        events: &mut Vec<Event>,
        held: &mut std::collections::HashMap<u64, (Vec<u8>, usize)>,
        pool: &mut Vec<Vec<u8>>,
    ) -> bool {
        for event in events.drain(..) {
            match event {
                Event::Deliver { tag, at } => {
                    let (buffer, len) = held.remove(&tag).expect("a held frame");
                    self.shared.in_flight.fetch_add(1, Ordering::AcqRel);
                    if self
                        .to_egress
                        .send(Scheduled {
                            at,
                            buffer,
                            len,
                            frames: 1,
                        })
                        .is_err()
                    {
                        return false;
                    }
                }
                Event::Drop { tag, .. } => {
                    if let Some((buffer, _)) = held.remove(&tag) {
                        pool.push(buffer);
                    }
                }
            }
        }
        *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
        true
    }

    /// A drop-tail direction between TAP devices with the vnet header: a read is one frame or
    /// one super-packet (up to 64 KB of TCP or UDP payload that the sender's stack did not
    /// cut, [`gso`]). A super-packet's segments are offered to the direction one by one at
    /// the instant it was read ([`Direction::offer_segments`]: per segment the wire is charged
    /// header, FCS, preamble and gap, the queue counts a frame, loss draws once), exactly as
    /// the same frames from a device without offloads would be. If every segment is
    /// delivered, the super-packet is written whole into the far TAP when its last segment's
    /// last bit arrives, and the far stack takes it as a NIC's GRO would hand it over: its
    /// first segments arrive late by at most the serialization time of the segments after
    /// them, less than one super-packet's (`held_back_max_ns` in `lab status`), never early.
    /// If any segment is dropped (queue full, loss, memory bound), the super-packet is cut
    /// into real frames ([`gso::segment`]) and each survivor is released at its own instant,
    /// so drops and timing stay exact per frame.
    fn run_offloaded(mut self) {
        sys::realtime_priority();
        let small = self.frame_buffer + gso::VNET_HDR_LEN;
        let mut pools = BufferPools::new(small, SUPER_READ_BUFFER);
        let mut scratch = pools.take(SUPER_READ_BUFFER);
        let mut verdicts = Vec::new();
        let mut cpu_published = Nanos(0);
        while !self.stop.load(Ordering::Relaxed) {
            if !self.wait_readable(&mut cpu_published) {
                continue;
            }
            loop {
                match self.read_and_offer(None, &mut scratch, &mut pools, &mut verdicts) {
                    Some(true) => {}
                    Some(false) => return,
                    None => break,
                }
            }
        }
    }

    /// One step of [`Ingress::run_offloaded`]: takes back the buffers the egress thread
    /// wrote, reads one frame or super-packet and decides its fate, charged from `at` if given
    /// (virtual time, for tests) or else from the clock. `None` if the TAP had nothing to
    /// read; `Some(false)` if the egress thread is gone.
    fn read_and_offer(
        &mut self,
        at: Option<Nanos>,
        scratch: &mut Vec<u8>,
        pools: &mut BufferPools,
        verdicts: &mut Vec<Verdict>,
    ) -> Option<bool> {
        while let Ok(b) = self.recycled.try_recv() {
            pools.put(b);
        }
        let n = match sys::read_frame(self.fd, scratch) {
            Ok(n) if n > 0 => n,
            _ => return None,
        };
        Some(match at {
            None => self.offer_read(scratch, n, pools, verdicts),
            Some(now) => match gso::VnetHdr::parse(&scratch[..n]) {
                Some(hdr) => self.offer_read_at(now, hdr, scratch, n, pools, verdicts),
                None => true,
            },
        })
    }

    /// Decides the fate of one read of `n` bytes (vnet header and frame) in `scratch`; false
    /// if the egress thread is gone.
    fn offer_read(
        &mut self,
        scratch: &mut Vec<u8>,
        n: usize,
        pools: &mut BufferPools,
        verdicts: &mut Vec<Verdict>,
    ) -> bool {
        let Some(hdr) = gso::VnetHdr::parse(&scratch[..n]) else {
            return true;
        };
        // A super-packet has one copy at the packet socket, as a frame does: the stamp pairs
        // with the frame after the vnet header.
        let now = self.charged_from(&scratch[gso::VNET_HDR_LEN..n]);
        self.offer_read_at(now, hdr, scratch, n, pools, verdicts)
    }

    /// [`Ingress::offer_read`] of a read charged from `now` whose vnet header is `hdr`.
    fn offer_read_at(
        &mut self,
        now: Nanos,
        hdr: gso::VnetHdr,
        scratch: &mut Vec<u8>,
        n: usize,
        pools: &mut BufferPools,
        verdicts: &mut Vec<Verdict>,
    ) -> bool {
        let frame_len = (n - gso::VNET_HDR_LEN) as u64;
        // A read that filled the buffer was truncated (a super-packet beyond 64 KB): it is
        // offered at its full size, which no link's MTU takes (counted as too big).
        let plan = (hdr.is_gso() && n < scratch.len())
            .then(|| gso::Plan::new(&hdr, &scratch[gso::VNET_HDR_LEN..n]).ok())
            .flatten()
            .filter(|p| p.segments() > 1);
        let Some(plan) = plan else {
            if self.shared.in_flight.load(Ordering::Acquire) >= self.max_in_flight {
                self.direction.refuse_memory(frame_len);
                *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
                return true;
            }
            let verdict = self.direction.offer(now, frame_len, Duration::ZERO);
            *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
            let Verdict::Deliver { at } = verdict else {
                return true;
            };
            let mut buffer = pools.take(n);
            buffer[..n].copy_from_slice(&scratch[..n]);
            return self.send(at, buffer, n, 1);
        };
        let k = plan.segments() as u64;
        verdicts.clear();
        self.offer_within_memory(now, &plan, verdicts);
        *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
        let at = |v: &Verdict| match v {
            Verdict::Deliver { at } => Some(*at),
            Verdict::Drop(_) => None,
        };
        let whole = verdicts.iter().all(|v| at(v).is_some());
        if let (true, Some(Some(first)), Some(Some(last))) =
            (whole, verdicts.first().map(at), verdicts.last().map(at))
            && last.minus(first) <= HOLD_BACK_MAX_NS
        {
            self.note_super_packet(k, last.minus(first));
            // A large read leaves with the buffer it was read into; a small one is copied
            // into a buffer of its size, so that memory follows the bytes in flight.
            let buffer = if pools.class_of(n) == pools.largest() {
                std::mem::replace(scratch, pools.take(SUPER_READ_BUFFER))
            } else {
                let mut b = pools.take(n);
                b[..n].copy_from_slice(&scratch[..n]);
                b
            };
            return self.send(last, buffer, n, k);
        }
        // Cut: into runs of delivered segments that each leave within the bound of their first
        // (on a slow link, or where a segment was dropped, single frames).
        if !whole {
            self.shared.segmented.fetch_add(1, Ordering::Relaxed);
        }
        let frame = &scratch[gso::VNET_HDR_LEN..n];
        let mut i = 0;
        while i < verdicts.len() {
            let Some(first) = at(&verdicts[i]) else {
                i += 1;
                continue;
            };
            let mut j = i + 1;
            while j < verdicts.len()
                && at(&verdicts[j]).is_some_and(|t| t.minus(first) <= HOLD_BACK_MAX_NS)
            {
                j += 1;
            }
            let count = j - i;
            let last = at(&verdicts[j - 1]).expect("a delivered segment");
            if count > 1 {
                self.note_super_packet(count as u64, last.minus(first));
            }
            let mut buffer = pools.take(gso::VNET_HDR_LEN + plan.header + count * plan.mss);
            let (len, hdr) = gso::cut_run(
                &plan,
                frame,
                i,
                count,
                hdr.gso_type,
                &mut buffer[gso::VNET_HDR_LEN..],
            );
            hdr.write(&mut buffer);
            if !self.send(last, buffer, gso::VNET_HDR_LEN + len, count as u64) {
                return false;
            }
            i = j;
        }
        true
    }

    /// Offers a super-packet's segments to the direction, as many as the memory bound has room
    /// for; the rest are refused (`drops_memory`) one by one, so that the bound never takes
    /// more than the frames beyond it. (Refusing the whole super-packet when its last segment
    /// would not fit threw away up to 63 frames the queue had room for: a 64-segment UDP
    /// super-packet of 64-byte frames at 100 Mbit/s is 430 us of wire, and the refusals left
    /// the wire idle; bench/RESULTS.md, issue 20 part B.)
    fn offer_within_memory(&mut self, now: Nanos, plan: &gso::Plan, verdicts: &mut Vec<Verdict>) {
        let in_flight = self.shared.in_flight.load(Ordering::Acquire);
        let room =
            usize::try_from(self.max_in_flight.saturating_sub(in_flight)).unwrap_or(usize::MAX);
        self.direction.offer_segments(
            now,
            plan.segment_lens().take(room),
            Duration::ZERO,
            verdicts,
        );
        for len in plan.segment_lens().skip(room) {
            self.direction.refuse_memory(len);
            verdicts.push(Verdict::Drop(crate::emulator::link::DropReason::Memory));
        }
    }

    /// Counts a super-packet of `frames` delivered whole, its first frame held back `held` ns.
    fn note_super_packet(&self, frames: u64, held: i64) {
        self.shared.super_packets.fetch_add(1, Ordering::Relaxed);
        self.shared
            .super_packet_frames
            .fetch_add(frames, Ordering::Relaxed);
        self.shared
            .held_back_max_ns
            .fetch_max(held.max(0) as u64, Ordering::Relaxed);
    }

    /// Hands a write of `frames` frames to the egress thread; false if it is gone.
    fn send(&self, at: Nanos, buffer: Vec<u8>, len: usize, frames: u64) -> bool {
        let charge = memory_charge(frames, buffer.len(), self.frame_buffer + gso::VNET_HDR_LEN);
        self.shared.in_flight.fetch_add(charge, Ordering::AcqRel);
        self.to_egress
            .send(Scheduled {
                at,
                buffer,
                len,
                frames: charge,
            })
            .is_ok()
    }

    fn run_drop_tail(mut self) {
        sys::realtime_priority();
        let mut spare: Option<Vec<u8>> = None;
        let mut cpu_published = Nanos(0);
        while !self.stop.load(Ordering::Relaxed) {
            if !self.wait_readable(&mut cpu_published) {
                continue;
            }
            // Drain everything queued on the device before polling again: one poll per burst,
            // one read per frame.
            loop {
                match self.drop_tail_read_one(None, &mut spare) {
                    Some(true) => {}
                    Some(false) => return,
                    None => break,
                }
            }
        }
    }

    /// One read of [`Ingress::run_drop_tail`]: reads a frame and decides its fate, charged
    /// from `at` if given (virtual time, for tests) or else from the clock; `spare` keeps a
    /// buffer between reads. `None` if the TAP had nothing to read; `Some(false)` if the
    /// egress thread is gone.
    fn drop_tail_read_one(
        &mut self,
        at: Option<Nanos>,
        spare: &mut Option<Vec<u8>>,
    ) -> Option<bool> {
        let mut buffer = spare
            .take()
            .or_else(|| self.recycled.try_recv().ok())
            .unwrap_or_else(|| vec![0; self.frame_buffer]);
        let len = match sys::read_frame(self.fd, &mut buffer) {
            Ok(len) if len > 0 => len,
            _ => {
                *spare = Some(buffer);
                return None;
            }
        };
        // The memory bound: a direction never holds more frames than its rate, delay and
        // queue allow, whatever the sender or a slow receiving host does.
        if self.shared.in_flight.load(Ordering::Acquire) >= self.max_in_flight {
            self.direction.refuse_memory(len as u64);
            *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
            *spare = Some(buffer);
            return Some(true);
        }
        let (ready, processing) = self.ready_for_link(&buffer[..len], at);
        let verdict = self.direction.offer(ready, len as u64, processing);
        *self.shared.counters.lock().expect("counters lock") = self.direction.counters();
        match verdict {
            Verdict::Deliver { at } => {
                self.shared.in_flight.fetch_add(1, Ordering::AcqRel);
                Some(
                    self.to_egress
                        .send(Scheduled {
                            at,
                            buffer,
                            len,
                            frames: 1,
                        })
                        .is_ok(),
                )
            }
            Verdict::Drop(_) => {
                *spare = Some(buffer);
                Some(true)
            }
        }
    }
}

/// The frames a direction with active queue management holds while they wait in its queue
/// ([`Ingress::run_aqm`]), by tag, with free buffers and the queue's events.
#[derive(Default)]
struct AqmHeld {
    held: std::collections::HashMap<u64, (Vec<u8>, usize)>,
    pool: Vec<Vec<u8>>,
    events: Vec<Event>,
    next_tag: u64,
}

struct Egress {
    spin: SpinPolicy,
    fd: libc::c_int,
    host: Option<Arc<Mutex<HostCpu>>>,
    from_ingress: Receiver<Scheduled>,
    recycle: Sender<Vec<u8>>,
    shared: Arc<PortShared>,
    stop: Arc<AtomicBool>,
}

impl Egress {
    /// Takes each frame when its last bit reaches the far port, charges the receiving host's
    /// CPU there (at that instant, so that its transmit and receive work interleave in time
    /// order), and writes it when the CPU is done. Without a host model "done" is the
    /// arrival, and a frame is written at its scheduled instant.
    fn run(self) {
        sys::tighten_timer_slack();
        // One above the ingress threads: on two cores the four threads of a link often want
        // both, and a release is due at an instant while a read is charged from the sender's
        // transmit stamp (at up to 1 Gbit/s, `ingress_stamp`) or waits in the TAP's queue.
        sys::realtime_priority_of(RELEASE_PRIORITY);
        let clock = RealClock::for_realtime_thread_with(self.spin);
        let mut next: Option<Scheduled> = None;
        let mut holding: VecDeque<(Nanos, Scheduled)> = VecDeque::new();
        let mut disconnected = false;
        let mut cpu_published = Nanos(0);
        let mut previous_write_end = Nanos(0);
        let mut slept_past_due = false;
        // When the thread turned to the next release, if it did so before the hand-off branch
        // below waited for that frame's arrival.
        let mut reached: Option<Nanos> = None;
        while !self.stop.load(Ordering::Relaxed) {
            if publish_cpu(&self.shared.cpu_ns[1], &mut cpu_published, clock.now()) {
                self.shared
                    .spin_ns
                    .store(clock.spun_ns(), Ordering::Relaxed);
            }
            if next.is_none() && !disconnected {
                // Sleep in the channel until shortly before the held frame is due; the last
                // stretch is spun in `wait_until`, as the pump does (a sleep wakes late).
                let now = clock.now();
                let wait = holding.front().map_or(POLL_INTERVAL, |(done, _)| {
                    let spin = i64::try_from(clock.spin_before(*done, now)).unwrap_or(i64::MAX);
                    Duration::from_nanos((done.minus(now) - spin).max(0) as u64).min(POLL_INTERVAL)
                });
                // With a frame due now, only a look (a zero `recv_timeout` goes through the
                // channel's waiting machinery: microseconds of every idle release, issue 17).
                let got = if wait.is_zero() {
                    self.from_ingress.try_recv().map_err(|e| match e {
                        TryRecvError::Empty => RecvTimeoutError::Timeout,
                        TryRecvError::Disconnected => RecvTimeoutError::Disconnected,
                    })
                } else {
                    self.from_ingress.recv_timeout(wait)
                };
                match got {
                    Ok(s) => next = Some(s),
                    Err(RecvTimeoutError::Timeout) => {
                        // A timed wait for a held frame: its wake-up error is the clock's too
                        // (a zero wait was only a look, not a sleep: no wake-up to learn from).
                        if !holding.is_empty() && !wait.is_zero() && wait < POLL_INTERVAL {
                            let woke = clock.now();
                            clock.record_wake(now.after(wait), woke);
                            slept_past_due |= holding.front().is_some_and(|(d, _)| woke > *d);
                        }
                    }
                    Err(RecvTimeoutError::Disconnected) => disconnected = true,
                }
            }
            let due = holding.front().map(|(done, _)| *done);
            match (due, next.as_ref().map(|s| s.at)) {
                (Some(done), arrival) if arrival.is_none_or(|a| done <= a) => {
                    // Never block longer than the poll interval: a stop must be seen at once,
                    // whatever the delay (frames in flight are dropped then).
                    if done.minus(clock.now()) > POLL_INTERVAL.as_nanos() as i64 {
                        if next.is_some() {
                            std::thread::sleep(POLL_INTERVAL);
                        }
                        continue;
                    }
                    let reached = reached.take().unwrap_or_else(|| clock.now());
                    let now = clock.wait_until(done);
                    let (_, s) = holding.pop_front().expect("a frame is held");
                    if let Some(cause) =
                        late_cause(done, reached, previous_write_end, slept_past_due, now)
                    {
                        self.shared.late[cause as usize].fetch_add(1, Ordering::Relaxed);
                    }
                    self.release(s, done, now);
                    previous_write_end = clock.now();
                    slept_past_due = false;
                }
                (_, Some(at)) => {
                    if at.minus(clock.now()) > POLL_INTERVAL.as_nanos() as i64 {
                        std::thread::sleep(POLL_INTERVAL);
                        continue;
                    }
                    // Without a host model this wait is the release's own (`done` is `at`):
                    // the thread turned to the release now.
                    if holding.is_empty() && self.host.is_none() {
                        reached = Some(clock.now());
                    }
                    clock.wait_until(at);
                    let s = next.take().expect("a frame is next");
                    let done = self.host.as_ref().map_or(at, |cpu| {
                        cpu.lock().expect("host lock").receive(at, s.len as u64)
                    });
                    holding.push_back((done, s));
                }
                (None, None) if disconnected => return,
                (_, None) => {}
            }
        }
    }
}

impl Egress {
    /// Writes `s`, due at `done`, into the receiving TAP at `now`; records its lateness and
    /// gives its buffer back to the ingress thread.
    fn release(&self, s: Scheduled, done: Nanos, now: Nanos) {
        // A full socket queue in the far namespace drops the frame, as a NIC would (the
        // receiving interface counts it); a failed write is counted here.
        if sys::write_frame(self.fd, &s.buffer[..s.len]).is_err() {
            self.shared.write_errors.fetch_add(1, Ordering::Relaxed);
        }
        self.shared
            .lateness
            .lock()
            .expect("lateness lock")
            .record(now.minus(done));
        self.shared.in_flight.fetch_sub(s.frames, Ordering::AcqRel);
        let _ = self.recycle.send(s.buffer);
    }
}

enum Shared {
    Direction(Arc<PortShared>),
    Station(Arc<StationShared>),
}

impl Shared {
    fn counters(&self) -> DirectionCounters {
        match self {
            Shared::Direction(p) => *p.counters.lock().expect("counters lock"),
            Shared::Station(s) => *s.counters.lock().expect("counters lock"),
        }
    }

    fn host(&self) -> Option<HostCounters> {
        match self {
            Shared::Direction(_) => None,
            Shared::Station(s) => *s.host.lock().expect("host lock"),
        }
    }

    /// Failed writes into the receiving TAP, and the CPU time of the threads serving the port
    /// (a shared medium's one thread serves all its ports).
    fn write_errors_and_cpu(&self) -> (u64, u64) {
        match self {
            Shared::Direction(p) => (
                p.write_errors.load(Ordering::Relaxed),
                p.cpu_ns[0].load(Ordering::Relaxed) + p.cpu_ns[1].load(Ordering::Relaxed),
            ),
            Shared::Station(s) => (
                s.write_errors.load(Ordering::Relaxed),
                s.cpu_ns.load(Ordering::Relaxed),
            ),
        }
    }

    /// CPU time of the ingress thread, the egress thread, and the egress thread's spin,
    /// nanoseconds (zeros on a shared medium, whose one thread is `write_errors_and_cpu`'s).
    fn stage_cpu(&self) -> [u64; 3] {
        match self {
            Shared::Direction(p) => [
                p.cpu_ns[0].load(Ordering::Relaxed),
                p.cpu_ns[1].load(Ordering::Relaxed),
                p.spin_ns.load(Ordering::Relaxed),
            ],
            Shared::Station(_) => [0; 3],
        }
    }

    /// Releases later than [`LATE_RELEASE_NS`] by [`LateCause`] (zeros on a shared medium).
    fn late_releases(&self) -> [u64; 3] {
        match self {
            Shared::Direction(p) => [0, 1, 2].map(|i| p.late[i].load(Ordering::Relaxed)),
            Shared::Station(_) => [0; 3],
        }
    }

    fn super_packets(&self) -> SuperPackets {
        match self {
            Shared::Direction(p) => SuperPackets {
                offloads: p.offloaded.load(Ordering::Relaxed),
                super_packets: p.super_packets.load(Ordering::Relaxed),
                frames: p.super_packet_frames.load(Ordering::Relaxed),
                segmented: p.segmented.load(Ordering::Relaxed),
                held_back_max_ns: p.held_back_max_ns.load(Ordering::Relaxed),
            },
            Shared::Station(_) => SuperPackets::default(),
        }
    }

    fn lateness(&self) -> LatenessHistogram {
        match self {
            Shared::Direction(p) => p.lateness.lock().expect("lateness lock").clone(),
            Shared::Station(s) => s.lateness.lock().expect("lateness lock").clone(),
        }
    }
}

#[derive(Default)]
struct SuperPackets {
    offloads: bool,
    super_packets: u64,
    frames: u64,
    segmented: u64,
    held_back_max_ns: u64,
}

struct PortHandle {
    /// The sending host's CPU, on a full-duplex port of a host with a processing model.
    host: Option<Arc<Mutex<HostCpu>>>,
    link: usize,
    from: String,
    to: String,
    interface: String,
    rate_bits_per_second: u64,
    delay_ns: u64,
    medium: String,
    shared: Shared,
    /// "codel" or "fq_codel" on a direction with active queue management.
    aqm: Option<String>,
    /// The sending interface, in its namespace (its host-side drops).
    sender: Option<Watched>,
    /// The receiving interface (on a shared medium: the station's own).
    receiver: Option<Watched>,
    /// The pairing of frames with their transmit stamps, where the ingress uses them.
    stamps: Option<Arc<crate::ingress_stamp::SharedCounters>>,
}

/// The emulator's threads. [`Emulator::stop`] ends them.
pub struct Emulator {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    ports: Vec<PortHandle>,
    started: Nanos,
    /// When the previous status was taken and each port's CPU time then.
    previous_cpu: Mutex<(Nanos, Vec<u64>, Vec<f64>)>,
}

/// One direction of a link as `lab status` shows it: the egress port of `from`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PortStatus {
    /// Link index in the topology file (segments number after the links).
    pub link: usize,
    /// How this port reaches the medium: "full" (a private direction) or "half" (CSMA/CD on
    /// a half-duplex link, a hub, or the half end of a duplex mismatch; the full end of a
    /// mismatch is "full" on a shared medium).
    #[serde(default)]
    pub medium: String,
    /// Sending node.
    pub from: String,
    /// Receiving node.
    pub to: String,
    /// Interface in the sender's namespace.
    pub interface: String,
    /// Configured rate.
    pub rate_bits_per_second: u64,
    /// Configured propagation delay.
    pub delay_ns: u64,
    /// Frames, bytes, drops, queue depth.
    pub counters: DirectionCounters,
    /// Fraction of the time since start the wire was busy.
    pub utilization: f64,
    /// How late frames were released against their schedule.
    pub lateness: LatenessSummary,
    /// The sending host's CPU at this port, if it has a processing model (transmit and
    /// receive work together).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<HostCounters>,
    /// The direction's active queue management, "codel" or "fq_codel" (absent: drop-tail);
    /// what it did is `counters.aqm`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aqm: Option<String>,
    /// Frames lost on the host side of the port's TAP devices.
    #[serde(default)]
    pub device: DeviceCounters,
    /// What the emulator itself spent on this port.
    #[serde(default)]
    pub cost: EmulatorCost,
    /// On a link of at most 1 Gbit/s: frames charged from the sending kernel's transmit stamp
    /// (`crate::ingress_stamp`), and those that could not be paired with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ingress_stamps: Option<crate::ingress_stamp::StampCounters>,
}

/// The emulator's own cost on one port: CPU time of the threads that serve it.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct EmulatorCost {
    /// CPU time of the port's threads since the lab started, seconds.
    pub cpu_seconds: f64,
    /// Share of one core those threads used since the previous status (about 200 ms).
    pub cpu_share_recent: f64,
    /// CPU per frame offered, nanoseconds.
    pub cpu_ns_per_frame: f64,
    /// CPU per byte offered, nanoseconds.
    pub cpu_ns_per_byte: f64,
    /// Reads that carried more than one frame (TAP super-packets); 0 while every read is one
    /// frame.
    pub super_packets: u64,
    /// True if the port's TAP devices carry super-packets (vnet header, checksum offload and
    /// TSO; a link without per-frame semantics at its ends, `runtime::offloads_allowed`).
    pub offloads: bool,
    /// Frames (segments) the super-packets stood for; each was charged as a frame.
    pub super_packet_frames: u64,
    /// Super-packets cut into frames by the emulator because one of their segments was
    /// dropped (queue, loss, memory), so that the survivors leave at their own instants.
    pub segmented_in_software: u64,
    /// The timing error super-packets added: the longest a delivered super-packet held its
    /// first segment back after that segment's last bit reached the far end (the
    /// serialization time of the segments after it, under one super-packet's), microseconds.
    pub held_back_max_us: f64,
    /// True on a shared medium, where one thread serves every port (the CPU is the medium's).
    pub shared_thread: bool,
    /// True if one thread serves this direction, reading, releasing and writing
    /// (on request, `WIRESPEED_LAB_THREADS=1`, on a link with super-packets): its CPU is
    /// `egress_cpu_seconds`, and `ingress_cpu_seconds` is 0.
    pub one_thread: bool,
    /// Of `cpu_seconds`, the ingress thread's (reading the sending TAP, deciding each frame's
    /// fate); 0 on a shared medium.
    pub ingress_cpu_seconds: f64,
    /// Of `cpu_seconds`, the egress thread's (waiting for each release, writing into the
    /// receiving TAP, which runs the receiving stack in this thread); 0 on a shared medium.
    pub egress_cpu_seconds: f64,
    /// Of `egress_cpu_seconds`, the time spent spinning before releases (the timer strategy's
    /// cost, not work: `clock::SpinPolicy`).
    pub spin_cpu_seconds: f64,
    /// Releases more than 50 us late ([`LATE_RELEASE_NS`]) whose thread came to them past
    /// due because its previous write into the receiving TAP (the receiving host's stack,
    /// run in the emulator's thread) ended after they were due.
    pub late_after_previous_write: u64,
    /// Releases more than 50 us late whose thread came to them past due for another reason:
    /// it was preempted (no sleep of its own returned late, no write ran past them), or, with
    /// one thread per direction (`one_thread`), a read of the sending TAP ran past them.
    pub late_behind: u64,
    /// Releases more than 50 us late because a sleep of the thread returned after they were
    /// due: its timed wait for the hand-off, or its wait for the instant (sleep, then spin).
    pub late_in_wait: u64,
}

impl EmulatorCost {
    /// CPU per frame of the busier of the port's two threads, spinning aside, nanoseconds:
    /// what one frame costs the stage that limits the frames per second the port can carry.
    /// `None` on a shared medium or before any frame.
    pub fn busiest_stage_ns_per_frame(&self, frames_in: u64, frames_out: u64) -> Option<f64> {
        if self.shared_thread || frames_in == 0 || frames_out == 0 {
            return None;
        }
        let ingress = self.ingress_cpu_seconds * 1e9 / frames_in as f64;
        let egress =
            (self.egress_cpu_seconds - self.spin_cpu_seconds).max(0.0) * 1e9 / frames_out as f64;
        Some(ingress.max(egress))
    }
}

/// Why the lab, not the link it emulates, limits what `port` shows, if it does: frames lost
/// before the emulator read them, an emulator thread near a full core, or releases late by
/// more than a millisecond at the 99th percentile (of at least 1,000 frames: the percentile
/// of a lab's first few frames says nothing).
pub fn lab_bottleneck(port: &PortStatus) -> Option<String> {
    let name = format!("{} {} -> {}", port.interface, port.from, port.to);
    if port.device.sender_tx_dropped > 0 {
        return Some(format!(
            "port {name}: {} frames were dropped by the sending host's TAP queue (txqueuelen {}) before the emulator read them: the lab, not the link, is the bottleneck",
            port.device.sender_tx_dropped, port.device.sender_tx_queue_len
        ));
    }
    if port.cost.cpu_share_recent > 0.9 {
        return Some(format!(
            "port {name}: the emulator's threads used {:.0}% of a core: the lab, not the link, may be the bottleneck",
            port.cost.cpu_share_recent * 100.0
        ));
    }
    // The stage that limits the port: a thread that needs more CPU per frame (its spin before
    // releases aside) than the wire holds an average frame cannot carry line rate even with a
    // core to itself; super-packets divide the per-read and per-write cost by the frames each
    // carries, so the warning says how many they carried.
    let (frames_in, frames_out) = (port.counters.frames_in, port.counters.frames_out);
    if frames_out >= 10_000
        && port.counters.busy_ns > 0
        && let Some(stage) = port.cost.busiest_stage_ns_per_frame(frames_in, frames_out)
    {
        let wire = port.counters.busy_ns as f64 / frames_out as f64;
        if stage > 0.9 * wire {
            let k = &port.cost;
            let carried = if !k.offloads {
                "one frame per read and write (no super-packets on this link)".to_string()
            } else if k.super_packets == 0 {
                "no super-packets yet: every read carried one frame".to_string()
            } else {
                format!(
                    "super-packets carried {:.1} frames each on average, {:.0}% of the frames",
                    k.super_packet_frames as f64 / k.super_packets as f64,
                    k.super_packet_frames as f64 * 100.0 / frames_in.max(1) as f64
                )
            };
            return Some(format!(
                "port {name}: the emulator's busier thread needs {:.2} us of CPU per frame (spinning aside) and the wire holds a frame {:.2} us: it cannot carry this link's line rate ({carried}): the lab, not the link, is the bottleneck",
                stage / 1e3,
                wire / 1e3
            ));
        }
    }
    if port.lateness.frames >= 1_000 && port.lateness.p99_us > 1_000.0 {
        return Some(format!(
            "port {name}: 1% of frames left more than {:.0} us late: the lab's timing, not the link's, shapes this traffic",
            port.lateness.p99_us
        ));
    }
    None
}

impl Emulator {
    /// Counters and timing of every port, now.
    pub fn status(&self) -> Vec<PortStatus> {
        let now = monotonic_now();
        let elapsed = now.minus(self.started).max(1) as f64;
        let mut previous = self.previous_cpu.lock().expect("cpu lock");
        let (then, cpus, shares) = &mut *previous;
        cpus.resize(self.ports.len(), 0);
        shares.resize(self.ports.len(), 0.0);
        // Threads publish their CPU time every 10 ms: a share over less than 150 ms would be
        // noise, so a status asked for sooner repeats the last one.
        let interval = now.minus(*then).max(1) as f64;
        let fresh = interval >= 150e6;
        if fresh {
            *then = now;
        }
        self.ports
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let counters = p.shared.counters();
                let (write_errors, cpu_ns) = p.shared.write_errors_and_cpu();
                if fresh {
                    shares[i] = cpu_ns.saturating_sub(cpus[i]) as f64 / interval;
                    cpus[i] = cpu_ns;
                }
                let recent = shares[i];
                let sender = p.sender.as_ref().map(|w| (w.read(), w.tx_queue_len()));
                let device = DeviceCounters {
                    sender_tx_dropped: sender.map_or(0, |(l, _)| l.tx_dropped),
                    sender_tx_queue_len: sender.map_or(0, |(_, q)| q),
                    receiver_rx_dropped: p.receiver.as_ref().map_or(0, |w| w.read().rx_dropped),
                    write_errors,
                };
                let per = |n: u64| {
                    if n == 0 {
                        0.0
                    } else {
                        cpu_ns as f64 / n as f64
                    }
                };
                let sp = p.shared.super_packets();
                let [ingress_ns, egress_ns, spin_ns] = p.shared.stage_cpu();
                let late = p.shared.late_releases();
                let cost = EmulatorCost {
                    ingress_cpu_seconds: ingress_ns as f64 / 1e9,
                    egress_cpu_seconds: egress_ns as f64 / 1e9,
                    spin_cpu_seconds: spin_ns as f64 / 1e9,
                    late_after_previous_write: late[LateCause::PreviousWrite as usize],
                    late_behind: late[LateCause::Behind as usize],
                    late_in_wait: late[LateCause::Wait as usize],
                    cpu_seconds: cpu_ns as f64 / 1e9,
                    cpu_share_recent: recent,
                    cpu_ns_per_frame: per(counters.frames_in),
                    cpu_ns_per_byte: per(counters.bytes_in),
                    super_packets: sp.super_packets,
                    offloads: sp.offloads,
                    super_packet_frames: sp.frames,
                    segmented_in_software: sp.segmented,
                    held_back_max_us: sp.held_back_max_ns as f64 / 1e3,
                    shared_thread: matches!(p.shared, Shared::Station(_)),
                    one_thread: matches!(&p.shared, Shared::Direction(d) if d.one_thread.load(Ordering::Relaxed)),
                };
                PortStatus {
                    link: p.link,
                    from: p.from.clone(),
                    to: p.to.clone(),
                    interface: p.interface.clone(),
                    rate_bits_per_second: p.rate_bits_per_second,
                    delay_ns: p.delay_ns,
                    medium: p.medium.clone(),
                    counters,
                    utilization: (counters.busy_ns as f64 / elapsed).min(1.0),
                    lateness: p.shared.lateness().summary(),
                    host: p
                        .host
                        .as_ref()
                        .map(|cpu| cpu.lock().expect("host lock").counters())
                        .or_else(|| p.shared.host()),
                    aqm: p.aqm.clone(),
                    device,
                    cost,
                    ingress_stamps: p.stamps.as_ref().map(|s| s.read()),
                }
            })
            .collect()
    }

    /// Lateness of all releases of all ports together.
    pub fn lateness(&self) -> LatenessSummary {
        let mut all = LatenessHistogram::default();
        for p in &self.ports {
            all.merge(&p.shared.lateness());
        }
        all.summary()
    }

    /// Stops and joins every thread (within about 50 ms).
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TCP/IPv4 super-packet as a stack with TSO hands it to a TAP with the vnet header:
    /// `segments` segments of 1448 payload bytes (a 10-byte vnet header, Ethernet, IPv4, TCP
    /// with timestamps); with one segment, a plain frame (no GSO).
    fn tcp_read(segments: usize) -> Vec<u8> {
        let (l3, l4, th, mss) = (14, 34, 32, 1448);
        let payload = if segments == 1 { 0 } else { segments * mss };
        let mut f = vec![0u8; l4 + th + payload];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        f[l3] = 0x45;
        f[l3 + 2..l3 + 4].copy_from_slice(&((20 + th + payload) as u16).to_be_bytes());
        f[l3 + 6] = 0x40;
        f[l3 + 8] = 64;
        f[l3 + 9] = 6;
        f[l3 + 12..l3 + 16].copy_from_slice(&[198, 18, 0, 1]);
        f[l3 + 16..l3 + 20].copy_from_slice(&[198, 18, 0, 2]);
        f[l4..l4 + 2].copy_from_slice(&40000u16.to_be_bytes());
        f[l4 + 2..l4 + 4].copy_from_slice(&5201u16.to_be_bytes());
        f[l4 + 12] = 8 << 4;
        f[l4 + 13] = 0x10;
        f[l4 + 20..l4 + 32].copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
        let hdr = gso::VnetHdr {
            flags: gso::F_NEEDS_CSUM,
            gso_type: if segments == 1 {
                gso::GSO_NONE
            } else {
                gso::GSO_TCPV4
            },
            hdr_len: (l4 + th) as u16,
            gso_size: if segments == 1 { 0 } else { mss as u16 },
            csum_start: l4 as u16,
            csum_offset: 16,
        };
        as_read(&hdr, &f)
    }

    /// The ingress and egress threads' code of one offloaded direction, driven in virtual
    /// time on one thread, with datagram socket pairs standing in for the two TAPs (one read
    /// or write is one frame or super-packet, as on a TAP with the vnet header).
    struct Rig {
        ingress: Ingress,
        egress: Egress,
        sender_host: std::os::unix::net::UnixDatagram,
        receiver_host: std::os::unix::net::UnixDatagram,
        _taps: [std::os::unix::net::UnixDatagram; 2],
        pools: BufferPools,
        scratch: Vec<u8>,
        verdicts: Vec<Verdict>,
        holding: VecDeque<Scheduled>,
        sink: Vec<u8>,
        reads: Vec<Vec<u8>>,
        /// Virtual time between the sending host's writes, and how late (behind their
        /// instant) the egress code releases.
        period_ns: u64,
        lag_ns: u64,
        /// The drop-tail path's spare buffer, and the event path's held frames.
        spare: Option<Vec<u8>>,
        aqm: AqmHeld,
        round: u64,
        /// Frames and super-packets the receiving host got.
        received: u64,
    }

    /// What one read of a TAP with the vnet header returns: the header, then the frame.
    fn as_read(hdr: &gso::VnetHdr, frame: &[u8]) -> Vec<u8> {
        let mut read = vec![0u8; gso::VNET_HDR_LEN];
        hdr.write(&mut read);
        read.extend_from_slice(frame);
        read
    }

    /// A UDP/IPv4 super-packet as a stack with USO hands it to a TAP with the vnet header:
    /// `segments` datagrams of `payload` bytes each (UDP GSO).
    fn udp_read(segments: usize, payload: usize) -> Vec<u8> {
        let (l3, l4) = (14, 34);
        let total = segments * payload;
        let mut f = vec![0u8; l4 + 8 + total];
        f[12..14].copy_from_slice(&0x0800u16.to_be_bytes());
        f[l3] = 0x45;
        f[l3 + 2..l3 + 4].copy_from_slice(&((20 + 8 + total) as u16).to_be_bytes());
        f[l3 + 8] = 64;
        f[l3 + 9] = 17;
        f[l3 + 12..l3 + 16].copy_from_slice(&[198, 18, 0, 1]);
        f[l3 + 16..l3 + 20].copy_from_slice(&[198, 18, 0, 2]);
        f[l4..l4 + 2].copy_from_slice(&40000u16.to_be_bytes());
        f[l4 + 2..l4 + 4].copy_from_slice(&5201u16.to_be_bytes());
        f[l4 + 4..l4 + 6].copy_from_slice(&((8 + total) as u16).to_be_bytes());
        let hdr = gso::VnetHdr {
            flags: gso::F_NEEDS_CSUM,
            gso_type: gso::GSO_UDP_L4,
            hdr_len: (l4 + 8) as u16,
            gso_size: payload as u16,
            csum_start: l4 as u16,
            csum_offset: 6,
        };
        as_read(&hdr, &f)
    }

    impl Rig {
        fn new() -> Rig {
            // 10 Gbit/s, 100 us, a 200-frame queue: offered faster than the wire (below), so
            // that the queue fills and drops, and a dropped segment cuts its super-packet into
            // runs: every branch of the path is taken. No random loss: the offered pattern
            // repeats, so after warm-up the buffers in flight never reach a new peak (a
            // random loss pattern does now and then, and the pools then grow by a buffer:
            // growth to a peak, not an allocation per frame).
            let config = crate::topology::DirectionConfig {
                rate: wirespeed_model::BitRate::from_bits_per_second(10_000_000_000),
                delay: Duration::from_micros(100),
                queue: crate::topology::QueueLimit::Packets(200),
                loss: 0.0,
                seed: 7,
                hidden_hops: 0,
            };
            // A 64 KB super-packet, a small one, and an acknowledgement-sized frame, one
            // every 15 us (the three take 19.3 us of wire per round on average).
            let reads = vec![tcp_read(44), tcp_read(3), tcp_read(1)];
            Rig::with(config, 10_000, reads, 15_000, 0)
        }

        fn with(
            config: crate::topology::DirectionConfig,
            max_in_flight: u64,
            reads: Vec<Vec<u8>>,
            period_ns: u64,
            lag_ns: u64,
        ) -> Rig {
            Rig::of_kind(config, None, true, max_in_flight, reads, period_ns, lag_ns)
        }

        /// A rig of any kind of direction: `vnet` (super-packets: the offloaded path) or not
        /// (one frame per read: the drop-tail path, or with `aqm` the event path).
        fn of_kind(
            config: crate::topology::DirectionConfig,
            aqm: Option<&crate::topology::AqmConfig>,
            vnet: bool,
            max_in_flight: u64,
            reads: Vec<Vec<u8>>,
            period_ns: u64,
            lag_ns: u64,
        ) -> Rig {
            use std::os::fd::AsRawFd;
            use std::os::unix::net::UnixDatagram;
            let (sender_host, sender_tap) = UnixDatagram::pair().unwrap();
            let (receiver_tap, receiver_host) = UnixDatagram::pair().unwrap();
            for s in [&sender_host, &sender_tap, &receiver_tap, &receiver_host] {
                s.set_nonblocking(true).unwrap();
            }
            let shared = Arc::new(PortShared::default());
            let stop = Arc::new(AtomicBool::new(false));
            let (tx, rx) = handoff::channel();
            let (recycle_tx, recycle_rx) = handoff::channel();
            let frame_buffer = crate::topology::frame_buffer(1500);
            let ingress = Ingress {
                stamps: None,
                fd: sender_tap.as_raw_fd(),
                vnet,
                frame_buffer,
                max_in_flight,
                direction: {
                    let d = Direction::new(
                        config,
                        wirespeed_model::LinkLayer::Ethernet { vlan_tags: 0 },
                        1500,
                    );
                    match aqm {
                        Some(a) => d.with_aqm(a),
                        None => d,
                    }
                },
                router: None,
                host: None,
                to_egress: tx,
                recycled: recycle_rx,
                shared: Arc::clone(&shared),
                stop: Arc::clone(&stop),
            };
            let egress = Egress {
                spin: SpinPolicy::Fixed(0),
                fd: receiver_tap.as_raw_fd(),
                host: None,
                from_ingress: rx,
                recycle: recycle_tx,
                shared,
                stop,
            };
            let mut pools = BufferPools::new(frame_buffer + gso::VNET_HDR_LEN, SUPER_READ_BUFFER);
            let scratch = pools.take(SUPER_READ_BUFFER);
            Rig {
                ingress,
                egress,
                sender_host,
                receiver_host,
                _taps: [sender_tap, receiver_tap],
                pools,
                scratch,
                verdicts: Vec::new(),
                holding: VecDeque::new(),
                sink: vec![0; SUPER_READ_BUFFER],
                reads,
                period_ns,
                lag_ns,
                spare: None,
                aqm: AqmHeld::default(),
                round: 0,
                received: 0,
            }
        }

        /// `n` rounds of `period_ns`: the sending host writes one read, the ingress code reads
        /// and offers it, the egress code takes what was handed over and writes everything
        /// due (`lag_ns` ago), the receiving host reads what was written.
        fn run(&mut self, n: u64) {
            for _ in 0..n {
                let now = Nanos(1_000_000 + self.round * self.period_ns);
                let read = &self.reads[(self.round % self.reads.len() as u64) as usize];
                self.sender_host.send(read).unwrap();
                self.round += 1;
                let step = if self.ingress.vnet {
                    self.ingress.read_and_offer(
                        Some(now),
                        &mut self.scratch,
                        &mut self.pools,
                        &mut self.verdicts,
                    )
                } else if self.ingress.direction.has_aqm() {
                    assert!(self.ingress.aqm_advance(now, &mut self.aqm));
                    self.ingress.aqm_read_one(Some(now), &mut self.aqm)
                } else {
                    self.ingress.drop_tail_read_one(Some(now), &mut self.spare)
                };
                assert_eq!(step, Some(true));
                while let Ok(s) = self.egress.from_ingress.try_recv() {
                    self.holding.push_back(s);
                }
                while self
                    .holding
                    .front()
                    .is_some_and(|s| s.at.0 + self.lag_ns <= now.0)
                {
                    let s = self.holding.pop_front().unwrap();
                    let at = s.at;
                    self.egress.release(s, at, now);
                    while self.receiver_host.recv(&mut self.sink).is_ok() {
                        self.received += 1;
                    }
                }
            }
        }
    }

    #[test]
    fn the_data_path_allocates_nothing_per_frame_once_warm() {
        let mut rig = Rig::new();
        rig.run(3_000);
        let before = rig.ingress.direction.counters();
        let (received_before, cut_before) = (
            rig.received,
            rig.ingress.shared.segmented.load(Ordering::Relaxed),
        );
        let ((), allocations) = sys::counting_alloc::count_on_this_thread(|| rig.run(15_000));
        let after = rig.ingress.direction.counters();
        // The run took every branch: whole super-packets, cut ones, queue drops.
        assert!(after.frames_out - before.frames_out > 150_000, "{after:?}");
        assert!(after.drops_queue > before.drops_queue, "{after:?}");
        assert!(rig.ingress.shared.segmented.load(Ordering::Relaxed) > cut_before);
        assert!(rig.received - received_before > 10_000);
        assert_eq!(rig.ingress.shared.write_errors.load(Ordering::Relaxed), 0);
        assert_eq!(
            allocations, 0,
            "the data path allocated {allocations} times over 15,000 reads once warm"
        );
    }

    #[test]
    fn the_one_thread_path_allocates_nothing_per_frame_once_warm() {
        use crate::emulator::clock::VirtualClock;
        // The same direction and offered pattern as the two-thread test above, through the
        // one thread's own steps (`OneThread::read_batch`, `OneThread::release_due`) on a
        // virtual clock with no spin.
        let Rig {
            ingress,
            egress,
            sender_host,
            receiver_host,
            _taps,
            reads,
            period_ns,
            mut sink,
            ..
        } = Rig::new();
        let mut one = OneThread::new(ingress, egress);
        let clock = VirtualClock::new(Nanos(0));
        let no_spin = |_: Nanos, _: Nanos| 0u64;
        let mut round = 0u64;
        let mut received = 0u64;
        let mut run = |n: u64| {
            for _ in 0..n {
                let now = Nanos(1_000_000 + round * period_ns);
                clock.advance_to(now);
                sender_host
                    .send(&reads[(round % reads.len() as u64) as usize])
                    .unwrap();
                round += 1;
                // As the thread does: releases due, reads until the TAP is empty (a read
                // batch stops early when a release comes due).
                loop {
                    one.release_due(&clock, &no_spin);
                    let more = one.read_batch(&clock, &no_spin, Some(now));
                    assert!(more.is_some(), "the egress side is there");
                    if more == Some(false) {
                        break;
                    }
                }
                one.release_due(&clock, &no_spin);
                while receiver_host.recv(&mut sink).is_ok() {
                    received += 1;
                }
            }
        };
        run(3_000);
        let ((), allocations) = sys::counting_alloc::count_on_this_thread(|| run(15_000));
        let c = one.ingress.direction.counters();
        assert!(c.frames_out > 150_000, "{c:?}");
        assert!(c.drops_queue > 0, "{c:?}");
        assert!(one.ingress.shared.segmented.load(Ordering::Relaxed) > 0);
        assert!(received > 10_000);
        assert_eq!(one.ingress.shared.write_errors.load(Ordering::Relaxed), 0);
        assert_eq!(
            allocations, 0,
            "the one-thread path allocated {allocations} times over 15,000 reads once warm"
        );
    }

    #[test]
    fn a_configured_queue_of_minimum_size_frames_fits_the_memory_bound_while_releases_run_late() {
        // 100 Mbit/s, 1 ms, a 1000-frame queue (bench/lab-rates.sh's 64-byte rows), the bound
        // the runtime gives it; UDP GSO super-packets of 64 datagrams of 18 bytes (64-byte
        // frames) offered at 110% of line rate, so the queue fills and drops; the egress code
        // releases 1.5 ms behind each instant (a late thread, measured up to 2.5 ms on the
        // idle host). Every frame beyond the queue must be the queue's drop, none the memory
        // bound's: counting each 64-byte frame of a run as a whole buffer refused 1,000s.
        let topology = crate::topology::Topology::parse(
            "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"100M\"\ndelay = \"1ms\"\nqueue = 1000\n",
            "t",
        )
        .unwrap();
        let link = &topology.links[0];
        let bound = with_super_packet_slack(link.in_flight_frames(&link.ab), 100_000_000, true);
        assert_eq!(bound, 1151 + 144);
        // 64 frames of 84 wire bytes at 100 Mbit/s take 430.08 us; 110%: one every 391 us.
        let mut rig = Rig::with(link.ab, bound, vec![udp_read(64, 18)], 391_000, 1_500_000);
        rig.run(3_000);
        let c = rig.ingress.direction.counters();
        assert!(c.drops_queue > 10_000, "{c:?}");
        assert!(c.frames_out > 150_000, "{c:?}");
        assert_eq!(c.drops_memory, 0, "{c:?}");
        // Memory stays bounded: the buffers in flight never exceed the bound.
        assert!(rig.ingress.shared.in_flight.load(Ordering::Relaxed) <= bound);
    }

    #[test]
    fn a_write_counts_its_buffers_against_the_memory_bound_never_more_than_its_frames() {
        let slot = crate::topology::frame_buffer(1500) + gso::VNET_HDR_LEN;
        // A frame in its own buffer: one.
        assert_eq!(memory_charge(1, slot, slot), 1);
        // Ten 64-byte segments in one small buffer: one, not ten.
        assert_eq!(memory_charge(10, slot, slot), 1);
        // A 64 KB super-packet of 44 full segments: the buffers it fills (43), not more.
        assert_eq!(memory_charge(44, SUPER_READ_BUFFER, slot), 43);
        // Three full segments in a buffer of four slots: its three frames.
        assert_eq!(memory_charge(3, 4 * slot, slot), 3);
    }

    /// One frame as a stack without offloads hands it to a plain TAP: TCP/IPv4 with
    /// timestamps, `len` bytes in all (an acknowledgement at 66).
    fn plain_frame(len: usize) -> Vec<u8> {
        let mut f = tcp_read(1)[gso::VNET_HDR_LEN..].to_vec();
        f.resize(len.max(f.len()), 0);
        let ip = (f.len() - 14) as u16;
        f[16..18].copy_from_slice(&ip.to_be_bytes());
        f
    }

    /// The frame-per-read paths (drop-tail, and the event path of CoDel and FQ-CoDel), driven
    /// in virtual time like the offloaded one: three full frames and an acknowledgement every
    /// 32 us into 1 Gbit/s (37.5 us of wire: the queue fills and drops), 3,000 rounds of
    /// warm-up, then 15,000 counted. Returns the allocations and the rig.
    fn frame_path_allocations(aqm: Option<&str>) -> (u64, Rig) {
        let text = format!(
            "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"1G\"\ndelay = \"100us\"\nqueue = 200\n{}",
            aqm.map_or(String::new(), |a| format!("aqm = \"{a}\"\n"))
        );
        let topology = crate::topology::Topology::parse(&text, "t").unwrap();
        let link = &topology.links[0];
        let bound = link.in_flight_frames(&link.ab);
        let reads = vec![
            plain_frame(1514),
            plain_frame(1514),
            plain_frame(1514),
            plain_frame(66),
        ];
        let mut rig = Rig::of_kind(link.ab, link.aqm.as_ref(), false, bound, reads, 8_000, 0);
        rig.run(3_000);
        let ((), allocations) = sys::counting_alloc::count_on_this_thread(|| rig.run(15_000));
        (allocations, rig)
    }

    #[test]
    fn the_drop_tail_path_without_super_packets_allocates_nothing_per_frame_once_warm() {
        let (allocations, rig) = frame_path_allocations(None);
        let c = rig.ingress.direction.counters();
        assert!(c.frames_out > 10_000 && c.drops_queue > 100, "{c:?}");
        assert!(rig.received > 10_000);
        assert_eq!(
            allocations, 0,
            "the drop-tail path allocated {allocations} times over 15,000 frames once warm"
        );
    }

    #[test]
    fn the_aqm_path_allocates_nothing_per_frame_once_warm() {
        for aqm in ["codel", "fq_codel"] {
            let (allocations, rig) = frame_path_allocations(Some(aqm));
            let c = rig.ingress.direction.counters();
            assert!(c.frames_out > 10_000, "{aqm}: {c:?}");
            assert!(rig.received > 10_000, "{aqm}");
            assert_eq!(
                allocations, 0,
                "the {aqm} path allocated {allocations} times over 15,000 frames once warm"
            );
        }
    }

    fn port() -> PortStatus {
        PortStatus {
            link: 0,
            medium: "full".into(),
            from: "h1".into(),
            to: "h2".into(),
            interface: "eth0".into(),
            rate_bits_per_second: 1_000_000_000,
            delay_ns: 0,
            counters: DirectionCounters::default(),
            utilization: 0.0,
            lateness: LatenessSummary::default(),
            host: None,
            aqm: None,
            device: DeviceCounters::default(),
            cost: EmulatorCost::default(),
            ingress_stamps: None,
        }
    }

    #[test]
    fn a_late_release_is_blamed_on_the_previous_write_the_wait_or_being_behind() {
        let due = Nanos(1_000_000);
        let later = |us: u64| Nanos(due.0 + us * 1_000);
        // 50 us late is not late; the previous write is blamed only if it ended after `due`.
        assert_eq!(late_cause(due, due, Nanos(0), false, later(50)), None);
        assert_eq!(
            late_cause(due, later(40), later(40), false, later(60)),
            Some(LateCause::PreviousWrite)
        );
        assert_eq!(
            late_cause(due, later(40), Nanos(900_000), false, later(60)),
            Some(LateCause::Behind)
        );
        // Past due after a sleep for the hand-off that returned past the instant.
        assert_eq!(
            late_cause(due, later(40), Nanos(900_000), true, later(60)),
            Some(LateCause::Wait)
        );
        assert_eq!(
            late_cause(due, Nanos(990_000), later(60), false, later(60)),
            Some(LateCause::Wait)
        );
    }

    #[test]
    fn the_thread_and_cpu_settings_parse_or_name_the_fix() {
        assert_eq!(Threads::parse("1"), Ok(Threads::One));
        assert_eq!(Threads::parse(" 2 "), Ok(Threads::Two));
        // Unset: two threads at every rate (one thread carried less at 10 Gbit/s on the idle
        // host).
        assert_eq!(Threads::default(), Threads::Two);
        for bad in ["", "0", "3", "two"] {
            let e = Threads::parse(bad).unwrap_err();
            assert!(e.contains("set it to 1") && !e.contains('\n'), "{e}");
        }
        assert_eq!(parse_cpus("0,1", 2), Ok(vec![0, 1]));
        assert_eq!(parse_cpus(" 1 ", 2), Ok(vec![1]));
        for bad in ["", "2", "0,,1", "-1", "a"] {
            let e = parse_cpus(bad, 2).unwrap_err();
            assert!(e.contains("below 2") && !e.contains('\n'), "{e}");
        }
        assert!(parse_cpus(&vec!["0"; 65].join(","), 2).is_err());
    }

    #[test]
    fn super_packets_get_slack_for_their_held_back_runs_within_an_eighth() {
        // 100 Mbit/s, 1000-frame queue, 1 ms: 1151 frames; 64 us + 1 ms of 84-byte frames is
        // 159, capped at 1151 / 8 + 1 = 144.
        assert_eq!(with_super_packet_slack(1151, 100_000_000, true), 1151 + 144);
        assert_eq!(with_super_packet_slack(1151, 100_000_000, false), 1151);
        // 10 Mbit/s: 15 frames + 1.
        assert_eq!(with_super_packet_slack(1151, 10_000_000, true), 1151 + 16);
    }

    #[test]
    fn the_lab_is_named_the_bottleneck_only_on_evidence() {
        assert_eq!(lab_bottleneck(&port()), None);
        let mut p = port();
        p.device.sender_tx_dropped = 3;
        p.device.sender_tx_queue_len = 500;
        let w = lab_bottleneck(&p).unwrap();
        assert!(
            w.contains("3 frames") && w.contains("txqueuelen 500"),
            "{w}"
        );
        let mut p = port();
        p.cost.cpu_share_recent = 0.95;
        assert!(lab_bottleneck(&p).unwrap().contains("95% of a core"));
        // A late first frame is no evidence; 1% of a thousand is.
        let mut p = port();
        p.lateness = LatenessSummary {
            frames: 3,
            p50_us: 2_000.0,
            p99_us: 2_000.0,
            max_us: 2_000.0,
            mean_us: 2_000.0,
        };
        assert_eq!(lab_bottleneck(&p), None);
        p.lateness.frames = 5_000;
        assert!(lab_bottleneck(&p).unwrap().contains("2000 us late"));
    }

    #[test]
    fn the_lab_is_named_the_bottleneck_when_a_stage_cannot_keep_up_with_the_wire() {
        // 100,000 full frames at 10 Gbit/s: the wire holds each 1.23 us.
        let mut p = port();
        p.rate_bits_per_second = 10_000_000_000;
        p.counters.frames_in = 100_000;
        p.counters.frames_out = 100_000;
        p.counters.busy_ns = 123_040_000;
        p.cost.offloads = true;
        p.cost.super_packets = 2_500;
        p.cost.super_packet_frames = 100_000;
        // The egress thread spent 0.2 s, of which 0.1 s spinning: 1 us of work per frame.
        p.cost.egress_cpu_seconds = 0.2;
        p.cost.spin_cpu_seconds = 0.1;
        p.cost.ingress_cpu_seconds = 0.05;
        assert_eq!(lab_bottleneck(&p), None);
        // Without the spin taken aside, the same thread would be named: spin is not work.
        p.cost.spin_cpu_seconds = 0.0;
        let w = lab_bottleneck(&p).unwrap();
        assert!(
            w.contains("2.00 us of CPU per frame")
                && w.contains("1.23 us")
                && w.contains("40.0 frames each")
                && w.contains("100% of the frames"),
            "{w}"
        );
        // The ingress thread can be the stage too; one frame per read is said so.
        let mut q = port();
        q.counters.frames_in = 20_000;
        q.counters.frames_out = 20_000;
        q.counters.busy_ns = 20_000 * 12_304;
        q.cost.ingress_cpu_seconds = 20_000.0 * 12e-6;
        let w = lab_bottleneck(&q).unwrap();
        assert!(
            w.contains("12.00 us") && w.contains("one frame per read"),
            "{w}"
        );
        // Too few frames are no evidence; a shared medium's thread is judged by its share.
        q.counters.frames_out = 9_999;
        assert_eq!(lab_bottleneck(&q), None);
        q.counters.frames_out = 20_000;
        q.cost.shared_thread = true;
        assert_eq!(lab_bottleneck(&q), None);
    }
}
