//! The running emulator as `lab status` sees it: each port's counters, lateness and CPU cost
//! ([`PortStatus`], [`EmulatorCost`]), and whether the emulator itself is the bottleneck
//! ([`lab_bottleneck`]). [`Emulator`] owns the threads and stops them.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use serde::{Deserialize, Serialize};

use crate::device::{DeviceCounters, Watched};
use crate::emulator::clock::{Nanos, monotonic_now};
use crate::emulator::host::{HostCounters, HostCpu};
use crate::emulator::link::DirectionCounters;
use crate::emulator::stats::{LatenessHistogram, LatenessSummary};
use crate::shared_port::StationShared;

use super::port::{LateCause, PortShared};

pub(super) enum Shared {
    Direction(Arc<PortShared>),
    Station(Arc<StationShared>),
}

impl Shared {
    pub(super) fn counters(&self) -> DirectionCounters {
        match self {
            Shared::Direction(p) => *p.counters.lock().expect("counters lock"),
            Shared::Station(s) => *s.counters.lock().expect("counters lock"),
        }
    }

    pub(super) fn host(&self) -> Option<HostCounters> {
        match self {
            Shared::Direction(_) => None,
            Shared::Station(s) => *s.host.lock().expect("host lock"),
        }
    }

    /// Failed writes into the receiving TAP, and the CPU time of the threads serving the port
    /// (a shared medium's one thread serves all its ports).
    pub(super) fn write_errors_and_cpu(&self) -> (u64, u64) {
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
    pub(super) fn stage_cpu(&self) -> [u64; 3] {
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
    pub(super) fn late_releases(&self) -> [u64; 3] {
        match self {
            Shared::Direction(p) => [0, 1, 2].map(|i| p.late[i].load(Ordering::Relaxed)),
            Shared::Station(_) => [0; 3],
        }
    }

    pub(super) fn super_packets(&self) -> SuperPackets {
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

    pub(super) fn lateness(&self) -> LatenessHistogram {
        match self {
            Shared::Direction(p) => p.lateness.lock().expect("lateness lock").clone(),
            Shared::Station(s) => s.lateness.lock().expect("lateness lock").clone(),
        }
    }
}

#[derive(Default)]
pub(super) struct SuperPackets {
    pub(super) offloads: bool,
    pub(super) super_packets: u64,
    pub(super) frames: u64,
    pub(super) segmented: u64,
    pub(super) held_back_max_ns: u64,
}

pub(super) struct PortHandle {
    /// The sending host's CPU, on a full-duplex port of a host with a processing model.
    pub(super) host: Option<Arc<Mutex<HostCpu>>>,
    pub(super) link: usize,
    pub(super) from: String,
    pub(super) to: String,
    pub(super) interface: String,
    pub(super) rate_bits_per_second: u64,
    pub(super) delay_ns: u64,
    pub(super) medium: String,
    pub(super) shared: Shared,
    /// "codel" or "fq_codel" on a direction with active queue management.
    pub(super) aqm: Option<String>,
    /// FQ-CoDel's flow-hash perturbation on this direction's link.
    pub(super) fq_perturbation: Option<u64>,
    /// The sending interface, in its namespace (its host-side drops).
    pub(super) sender: Option<Watched>,
    /// The receiving interface (on a shared medium: the station's own).
    pub(super) receiver: Option<Watched>,
    /// The pairing of frames with their transmit stamps, where the ingress uses them.
    pub(super) stamps: Option<Arc<crate::ingress_stamp::SharedCounters>>,
}

/// The emulator's threads. [`Emulator::stop`] ends them.
pub struct Emulator {
    pub(super) stop: Arc<AtomicBool>,
    pub(super) threads: Vec<JoinHandle<()>>,
    pub(super) ports: Vec<PortHandle>,
    pub(super) started: Nanos,
    /// When the previous status was taken and each port's CPU time then.
    pub(super) previous_cpu: Mutex<(Nanos, Vec<u64>, Vec<f64>)>,
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
    /// FQ-CoDel's flow-hash perturbation (the topology's `fq_perturbation`, or the one drawn
    /// at random when the lab started): set it in the topology to repeat a run's flow-to-queue
    /// mapping.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_perturbation: Option<u64>,
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

/// Why the lab, not the link it emulates, limits what a port shows: a `lab status` warning
/// (issue 30: a script acts on its `kind`). `port` names the port as `IFACE FROM -> TO`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LabBottleneck {
    /// The sending host's TAP queue dropped frames before the emulator read them.
    TapQueueDrops {
        /// `IFACE FROM -> TO`.
        port: String,
        /// Frames dropped.
        frames_dropped: u64,
        /// The TAP's txqueuelen, frames.
        tx_queue_frames: u64,
    },
    /// The emulator's threads used most of a core lately.
    EmulatorNearFullCore {
        /// `IFACE FROM -> TO`.
        port: String,
        /// The share of a core they used (0-1).
        cpu_share: f64,
    },
    /// The busier emulator thread needs more CPU per frame than the wire holds one.
    EmulatorSlowerThanLineRate {
        /// `IFACE FROM -> TO`.
        port: String,
        /// CPU the busier thread spends per frame, spinning aside.
        cpu_seconds_per_frame: f64,
        /// How long the wire holds the average frame.
        wire_seconds_per_frame: f64,
        /// Whether the link takes super-packets from its TAPs.
        offloads: bool,
        /// Super-packets read, and the frames they carried.
        super_packets: u64,
        /// See `super_packets`.
        super_packet_frames: u64,
        /// Frames read in all.
        frames_in: u64,
    },
    /// 1% of the frames left more than a millisecond late.
    LateReleases {
        /// `IFACE FROM -> TO`.
        port: String,
        /// The 99th percentile of the lateness.
        p99_late_seconds: f64,
    },
}

impl std::fmt::Display for LabBottleneck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LabBottleneck::TapQueueDrops {
                port,
                frames_dropped,
                tx_queue_frames,
            } => write!(
                f,
                "port {port}: {frames_dropped} frames were dropped by the sending host's TAP queue (txqueuelen {tx_queue_frames}) before the emulator read them: the lab, not the link, is the bottleneck"
            ),
            LabBottleneck::EmulatorNearFullCore { port, cpu_share } => write!(
                f,
                "port {port}: the emulator's threads used {:.0}% of a core: the lab, not the link, may be the bottleneck",
                cpu_share * 100.0
            ),
            LabBottleneck::EmulatorSlowerThanLineRate {
                port,
                cpu_seconds_per_frame,
                wire_seconds_per_frame,
                offloads,
                super_packets,
                super_packet_frames,
                frames_in,
            } => {
                let carried = if !offloads {
                    "one frame per read and write (no super-packets on this link)".to_string()
                } else if *super_packets == 0 {
                    "no super-packets yet: every read carried one frame".to_string()
                } else {
                    format!(
                        "super-packets carried {:.1} frames each on average, {:.0}% of the frames",
                        *super_packet_frames as f64 / *super_packets as f64,
                        *super_packet_frames as f64 * 100.0 / (*frames_in).max(1) as f64
                    )
                };
                write!(
                    f,
                    "port {port}: the emulator's busier thread needs {:.2} us of CPU per frame (spinning aside) and the wire holds a frame {:.2} us: it cannot carry this link's line rate ({carried}): the lab, not the link, is the bottleneck",
                    cpu_seconds_per_frame * 1e6,
                    wire_seconds_per_frame * 1e6
                )
            }
            LabBottleneck::LateReleases {
                port,
                p99_late_seconds,
            } => write!(
                f,
                "port {port}: 1% of frames left more than {:.0} us late: the lab's timing, not the link's, shapes this traffic",
                p99_late_seconds * 1e6
            ),
        }
    }
}

/// Why the lab, not the link it emulates, limits what `port` shows, if it does: frames lost
/// before the emulator read them, an emulator thread near a full core, or releases late by
/// more than a millisecond at the 99th percentile (of at least 1,000 frames: the percentile
/// of a lab's first few frames says nothing).
pub fn lab_bottleneck(port: &PortStatus) -> Option<LabBottleneck> {
    let name = format!("{} {} -> {}", port.interface, port.from, port.to);
    if port.device.sender_tx_dropped > 0 {
        return Some(LabBottleneck::TapQueueDrops {
            port: name,
            frames_dropped: port.device.sender_tx_dropped,
            tx_queue_frames: port.device.sender_tx_queue_len,
        });
    }
    if port.cost.cpu_share_recent > 0.9 {
        return Some(LabBottleneck::EmulatorNearFullCore {
            port: name,
            cpu_share: port.cost.cpu_share_recent,
        });
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
            return Some(LabBottleneck::EmulatorSlowerThanLineRate {
                port: name,
                cpu_seconds_per_frame: stage / 1e9,
                wire_seconds_per_frame: wire / 1e9,
                offloads: k.offloads,
                super_packets: k.super_packets,
                super_packet_frames: k.super_packet_frames,
                frames_in,
            });
        }
    }
    if port.lateness.frames >= 1_000 && port.lateness.p99_us > 1_000.0 {
        return Some(LabBottleneck::LateReleases {
            port: name,
            p99_late_seconds: port.lateness.p99_us / 1e6,
        });
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
                    fq_perturbation: p.fq_perturbation,
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
