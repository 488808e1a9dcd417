//! The operating system side of a lab: capabilities, network namespaces, TAP devices, `ip`.
//!
//! Namespaces are made and configured with iproute2 (`ip netns add`, `ip -n NS -batch -`),
//! which every Linux with namespaces has and which names them under /run/netns so that
//! `ip netns exec` and other tools find them. TAP devices are opened directly
//! (`/dev/net/tun`, `TUNSETIFF` with `IFF_TAP | IFF_NO_PI`, see the kernel's
//! Documentation/networking/tuntap.rst) so that the emulator holds their file descriptors; they
//! are not persistent, so they vanish with the process that holds them.
//!
//! This module tree is the only place in the crate where `unsafe` is allowed (`lib.rs` denies
//! it elsewhere, and `tests/layers.rs` checks the sources): what `rustix` and `std` offer
//! safely (setns, pipes, signals to other processes, clocks, timer slack, file flags) is called
//! through them, and the rest (the `TUNSETIFF` ioctl, reads and writes on the emulator's raw
//! descriptors, `poll`, the real-time scheduler, signal handlers and masks, `fork` and the
//! `pre_exec` hook, in [`process`]) sits behind safe functions that state their invariants.

pub mod packet;
pub mod process;

use std::fs::File;
use std::io::Write;
use std::num::NonZeroU64;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::process::{Command, Stdio};

use rustix::fs::{OFlags, fcntl_getfl, fcntl_setfl};
use rustix::process::{Pid, Signal, kill_process};
use rustix::thread::{LinkNameSpaceType, move_into_link_name_space};

use crate::LabError;

/// Prefix of every namespace and device a lab creates; `lab down --all` removes what has it.
pub const PREFIX: &str = "ws-";

/// Bit of CAP_NET_ADMIN in the capability sets (linux/capability.h).
const CAP_NET_ADMIN: u32 = 12;

/// True if this process may create namespaces and devices (effective CAP_NET_ADMIN).
pub fn has_net_admin() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_NET_ADMIN) != 0)
}

/// Fails with [`LabError::NeedNetAdmin`] unless this process has CAP_NET_ADMIN.
pub fn require_net_admin() -> Result<(), LabError> {
    if has_net_admin() {
        Ok(())
    } else {
        Err(LabError::NeedNetAdmin)
    }
}

/// Runs `ip ARGS`, feeding `stdin` if given; fails with its stderr.
pub fn ip(args: &[&str], stdin: Option<&str>) -> Result<(), LabError> {
    let mut child = Command::new("ip")
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| LabError::Io {
            what: "run ip (iproute2)".into(),
            source,
        })?;
    if let Some(text) = stdin {
        let mut pipe = child.stdin.take().expect("stdin was piped");
        pipe.write_all(text.as_bytes())
            .map_err(|source| LabError::Io {
                what: "write to ip -batch".into(),
                source,
            })?;
    }
    let out = child.wait_with_output().map_err(|source| LabError::Io {
        what: "wait for ip".into(),
        source,
    })?;
    if out.status.success() {
        Ok(())
    } else {
        Err(LabError::Command {
            command: format!("ip {}", args.join(" ")),
            stderr: String::from_utf8_lossy(&out.stderr)
                .trim()
                .replace('\n', "; "),
        })
    }
}

/// The names of all network namespaces (`ip netns list`).
pub fn namespaces() -> Vec<String> {
    std::fs::read_dir("/run/netns")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Names of the links in this process's namespace.
pub fn links() -> Vec<String> {
    std::fs::read_dir("/sys/class/net")
        .map(|dir| {
            dir.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Creates namespace `name` with its loopback up, and quiets IPv6's own chatter (router
/// solicitations, duplicate address detection) on the interfaces that will be moved into it:
/// on a 56 kbit/s link each such frame would hold the line for 10 ms and blur a measurement.
pub fn add_namespace(name: &str) -> Result<(), LabError> {
    ip(&["netns", "add", name], None)?;
    ip(&["-n", name, "link", "set", "lo", "up"], None)?;
    if std::path::Path::new("/proc/sys/net/ipv6").exists() {
        for (key, value) in [
            ("net/ipv6/conf/default/router_solicitations", "0"),
            ("net/ipv6/conf/default/accept_ra", "0"),
            ("net/ipv6/conf/default/dad_transmits", "0"),
        ] {
            sysctl(name, key, value)?;
        }
    }
    Ok(())
}

/// Deletes namespace `name` (and with it every device inside).
pub fn delete_namespace(name: &str) -> Result<(), LabError> {
    ip(&["netns", "del", name], None)
}

/// Runs `f` on a new thread that has entered namespace `name`, and returns its result. Sockets
/// made inside `f` belong to that namespace for their whole life.
pub fn in_namespace<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, LabError> {
    let path = format!("/run/netns/{name}");
    let file = File::open(&path).map_err(|source| LabError::Io {
        what: format!("open {path}"),
        source,
    })?;
    let handle = std::thread::spawn(move || {
        // setns changes only this thread's namespace.
        move_into_link_name_space(file.as_fd(), Some(LinkNameSpaceType::Network))?;
        Ok(f())
    });
    handle
        .join()
        .map_err(|_| LabError::Io {
            what: format!("a thread in namespace {name} panicked"),
            source: std::io::Error::other("panic"),
        })?
        .map_err(|source| LabError::Io {
            what: format!("enter namespace {name}"),
            source,
        })
}

/// Sets a sysctl under /proc/sys inside namespace `ns` (e.g. `net/ipv4/ip_forward`).
pub fn sysctl(ns: &str, key: &str, value: &str) -> Result<(), LabError> {
    let path = format!("/proc/sys/{key}");
    let value = value.to_string();
    let shown = path.clone();
    in_namespace(ns, move || std::fs::write(&path, value))?.map_err(|source| LabError::Io {
        what: format!("write {shown} in {ns}"),
        source,
    })
}

const TUNSETIFF: libc::c_ulong = 0x4004_54ca;

#[repr(C)]
struct IfReq {
    name: [u8; libc::IFNAMSIZ],
    flags: libc::c_short,
    _pad: [u8; 22],
}

const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const TUNGETFEATURES: libc::c_ulong = 0x8004_54cf;
const IFF_VNET_HDR: libc::c_int = 0x4000;
/// `TUNSETOFFLOAD` flags (linux/if_tun.h): the device may hand over packets with a partial
/// checksum, TCP super-packets over IPv4 and IPv6 (with ECN's CWR), UDP super-packets (USO,
/// Linux 6.2 and later).
const TUN_F_CSUM: libc::c_uint = 0x01;
const TUN_F_TSO4: libc::c_uint = 0x02;
const TUN_F_TSO6: libc::c_uint = 0x04;
const TUN_F_TSO_ECN: libc::c_uint = 0x08;
const TUN_F_USO4: libc::c_uint = 0x20;
const TUN_F_USO6: libc::c_uint = 0x40;

/// Which offloads a TAP device opened with `IFF_VNET_HDR` got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Offloads {
    /// Every read and write carries a `struct virtio_net_hdr` (10 bytes) in front of the frame.
    pub vnet_hdr: bool,
    /// Checksum offload and TSO for IPv4 and IPv6 (reads may be TCP super-packets).
    pub tso: bool,
    /// UDP segmentation offload (reads may be UDP super-packets).
    pub uso: bool,
}

/// An open TAP device: reading gives the frames its namespace sends, writing delivers frames
/// to it as if received.
#[derive(Debug)]
pub struct Tap {
    fd: OwnedFd,
    /// Its name when created (in this process's namespace).
    pub name: String,
    /// What the device offloads (all false for a plain frame-per-read TAP).
    pub offloads: Offloads,
}

/// The tun/tap clone device, opened for one device (or one feature query).
fn open_tun() -> Result<std::fs::File, LabError> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/net/tun")
        .map_err(|source| LabError::Io {
            what: "open /dev/net/tun (is the tun module loaded?)".into(),
            source,
        })
}

impl Tap {
    /// Creates TAP device `name` (at most 15 bytes), one frame per read and write.
    pub fn create(name: &str) -> Result<Tap, LabError> {
        Tap::open(name, false)
    }

    /// Creates TAP device `name` with `IFF_VNET_HDR` and the offloads the kernel grants
    /// (checksum, TSO4/TSO6 with ECN, and USO4/USO6 where the kernel has them), so that one
    /// read carries up to 64 KB of TCP or UDP payload. If the kernel refuses the vnet header
    /// the device is a plain one ([`Tap::offloads`] says which it is); if it refuses the
    /// offloads the device keeps the header and carries single frames.
    pub fn create_offloaded(name: &str) -> Result<Tap, LabError> {
        let mut features: libc::c_uint = 0;
        let probe = open_tun()?;
        // SAFETY: TUNGETFEATURES writes one unsigned int, which `features` is.
        let rc = unsafe { libc::ioctl(probe.as_raw_fd(), TUNGETFEATURES, &mut features) };
        drop(probe);
        if rc < 0 || features & IFF_VNET_HDR as libc::c_uint == 0 {
            return Tap::open(name, false);
        }
        let mut tap = Tap::open(name, true)?;
        tap.offloads.vnet_hdr = true;
        let base = TUN_F_CSUM | TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
        for (flags, uso) in [(base | TUN_F_USO4 | TUN_F_USO6, true), (base, false)] {
            // SAFETY: TUNSETOFFLOAD takes its unsigned int argument by value.
            let rc = unsafe { libc::ioctl(tap.fd.as_raw_fd(), TUNSETOFFLOAD, flags) };
            if rc == 0 {
                tap.offloads.tso = true;
                tap.offloads.uso = uso;
                break;
            }
        }
        Ok(tap)
    }

    fn open(name: &str, vnet_hdr: bool) -> Result<Tap, LabError> {
        let fd = OwnedFd::from(open_tun()?);
        // Non-blocking: the emulator polls, then drains every queued frame.
        if let Ok(flags) = fcntl_getfl(&fd) {
            let _ = fcntl_setfl(&fd, flags | OFlags::NONBLOCK);
        }
        let mut req = IfReq {
            name: [0; libc::IFNAMSIZ],
            flags: (libc::IFF_TAP | libc::IFF_NO_PI | if vnet_hdr { IFF_VNET_HDR } else { 0 })
                as libc::c_short,
            _pad: [0; 22],
        };
        let bytes = name.as_bytes();
        assert!(bytes.len() < libc::IFNAMSIZ, "TAP name {name} too long");
        req.name[..bytes.len()].copy_from_slice(bytes);
        // SAFETY: TUNSETIFF reads and writes one ifreq, which `req` is laid out as.
        let rc = unsafe { libc::ioctl(fd.as_raw_fd(), TUNSETIFF, &mut req) };
        if rc < 0 {
            return Err(LabError::Io {
                what: format!("create TAP device {name} (TUNSETIFF)"),
                source: std::io::Error::last_os_error(),
            });
        }
        Ok(Tap {
            fd,
            name: name.to_string(),
            offloads: Offloads::default(),
        })
    }

    /// The raw descriptor, for the emulator's read and write loops.
    pub fn raw_fd(&self) -> libc::c_int {
        self.fd.as_raw_fd()
    }
}

/// Reads one frame into `buf`; returns its length.
pub fn read_frame(fd: libc::c_int, buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: buf is valid for buf.len() bytes of writes.
    let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// Writes one frame.
pub fn write_frame(fd: libc::c_int, frame: &[u8]) -> std::io::Result<()> {
    // SAFETY: frame is valid for frame.len() bytes of reads.
    let n = unsafe { libc::write(fd, frame.as_ptr().cast(), frame.len()) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Asks the kernel to wake this thread's timed sleeps within 1 ns of their deadline instead of
/// the default 50 us slack, so that the spin before a release is short.
pub fn tighten_timer_slack() {
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
}

static CAUGHT: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

extern "C" fn note_signal(signal: libc::c_int) {
    CAUGHT.store(signal, std::sync::atomic::Ordering::SeqCst);
}

/// From now on SIGINT, SIGTERM and SIGHUP only set a flag ([`caught_signal`]), so that the
/// process can remove what it built before it exits.
pub fn catch_termination() {
    for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores into an atomic, which is async-signal-safe.
        unsafe { libc::signal(s, note_signal as *const () as libc::sighandler_t) };
    }
}

/// The termination signal caught since [`catch_termination`], if any.
pub fn caught_signal() -> Option<i32> {
    match CAUGHT.load(std::sync::atomic::Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// Sends SIGTERM to process `pid` (one this process started).
pub fn terminate(pid: u32) {
    send_signal(pid as i32, Signal::TERM);
}

/// Sends `signal` to process `pid`; false if it could not. A `pid` of 0 or below names no one
/// process (to `kill` it would mean a whole group) and is refused.
pub fn send_signal(pid: i32, signal: Signal) -> bool {
    (pid > 0)
        .then(|| Pid::from_raw(pid))
        .flatten()
        .is_some_and(|pid| kill_process(pid, signal).is_ok())
}

/// `poll` on `fds` for at most `timeout_ms` milliseconds: how many are ready, or -1. Sound for
/// any descriptor numbers: poll only reports on them (`POLLNVAL` for one that is not open).
pub fn poll(fds: &mut [libc::pollfd], timeout_ms: i32) -> i32 {
    // SAFETY: `fds` is a valid array of fds.len() pollfd for the call.
    unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) }
}

/// `ppoll` on `fds` with a nanosecond `timeout` (no signal mask change): how many are ready,
/// or -1.
pub fn ppoll(fds: &mut [libc::pollfd], timeout: &libc::timespec) -> i32 {
    // SAFETY: `fds` is a valid array of fds.len() pollfd; the timeout outlives the call.
    unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            timeout,
            std::ptr::null(),
        )
    }
}

/// Best effort: gives this thread a real-time (SCHED_FIFO) priority so that the emulator's
/// threads are not preempted by the traffic they carry. The kernel's real-time throttling
/// (95% of each second by default) keeps a spinning thread from starving the machine; the
/// emulator's clocks keep under it (`emulator::clock::SpinBudget`).
/// Returns false if the priority could not be set (no CAP_SYS_NICE, or a container limit).
pub fn realtime_priority() -> bool {
    realtime_priority_of(10)
}

/// Best effort: binds the calling thread to CPU `cpu`; false if it could not (no such CPU, or
/// outside the process's allowed set).
pub fn pin_to_cpu(cpu: usize) -> bool {
    if cpu >= rustix::thread::CpuSet::MAX_CPU {
        return false;
    }
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set).is_ok()
}

/// [`realtime_priority`] at SCHED_FIFO priority `priority` (1-99; the emulator's threads use
/// 10, and its release threads one more, so that a release preempts a read).
pub fn realtime_priority_of(priority: i32) -> bool {
    let param = libc::sched_param {
        sched_priority: priority.clamp(1, 99),
    };
    // SAFETY: sets the calling thread's policy with a valid parameter.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) == 0 }
}

const SIOCGIFTXQLEN: libc::c_ulong = 0x8942;

#[repr(C)]
struct IfReqInt {
    name: [u8; libc::IFNAMSIZ],
    value: libc::c_int,
    _pad: [u8; 20],
}

/// The transmit queue length (`txqueuelen`) of interface `name` in the namespace `socket` was
/// made in (any socket: the ioctl only names the interface).
pub fn tx_queue_len(socket: &std::net::UdpSocket, name: &str) -> Option<u64> {
    let bytes = name.as_bytes();
    if bytes.len() >= libc::IFNAMSIZ {
        return None;
    }
    let mut req = IfReqInt {
        name: [0; libc::IFNAMSIZ],
        value: 0,
        _pad: [0; 20],
    };
    req.name[..bytes.len()].copy_from_slice(bytes);
    // SAFETY: SIOCGIFTXQLEN reads the name and writes one int of an ifreq, which `req` is laid
    // out as (a 16-byte name, then the 24-byte union whose first member is the int).
    let rc = unsafe { libc::ioctl(socket.as_raw_fd(), SIOCGIFTXQLEN, &mut req) };
    (rc == 0).then(|| u64::try_from(req.value).unwrap_or(0))
}
