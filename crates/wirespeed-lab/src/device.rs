//! The host side of a lab's TAP devices: what each namespace's stack counted on the interface
//! the emulator serves, so that a frame lost before the emulator read it (the sending host's
//! TAP queue was full) or after it wrote it (the receiving stack's backlog was full) is counted
//! where it was lost.
//!
//! A TAP device's transmit path ends in a ring of `txqueuelen` frames that the emulator reads;
//! the kernel's tun driver never stops its queue, so when the ring is full it drops the frame
//! and counts it in the interface's `tx_dropped` (drivers/net/tun.c, `tun_net_xmit`): the
//! sender's TCP sees a loss the emulator never saw. Issue 20 measured 1,119 such drops at
//! 2.5 Gbit/s while `lab status` said 0. The counters are read from `/proc/net/dev` of the
//! interface's namespace: the file is opened once by a thread inside that namespace
//! (`/proc/thread-self/net/dev` belongs to the namespace it was opened in) and re-read for
//! each status.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::LabError;
use crate::sys;

/// One interface's counters as `/proc/net/dev` lists them (the ones a lab needs).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NetDevLine {
    /// Frames received.
    pub rx_packets: u64,
    /// Frames the stack dropped on receive.
    pub rx_dropped: u64,
    /// Frames transmitted (handed to the device).
    pub tx_packets: u64,
    /// Frames the device dropped on transmit (a TAP's full ring).
    pub tx_dropped: u64,
}

/// The line of interface `name` in the text of `/proc/net/dev`.
pub fn parse_net_dev(text: &str, name: &str) -> Option<NetDevLine> {
    text.lines().skip(2).find_map(|line| {
        let (dev, rest) = line.split_once(':')?;
        if dev.trim() != name {
            return None;
        }
        let f: Vec<u64> = rest
            .split_whitespace()
            .map(|v| v.parse().ok())
            .collect::<Option<_>>()?;
        // rx: bytes packets errs drop fifo frame compressed multicast;
        // tx: bytes packets errs drop fifo colls carrier compressed.
        (f.len() >= 16).then(|| NetDevLine {
            rx_packets: f[1],
            rx_dropped: f[3],
            tx_packets: f[9],
            tx_dropped: f[11],
        })
    })
}

/// Losses on the host side of a port's TAP devices (`lab status`'s "drop host").
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceCounters {
    /// Frames the sending node's stack handed to its interface that its TAP ring (of
    /// `tx_queue_len` frames) dropped before the emulator read them (`tx_dropped`).
    pub sender_tx_dropped: u64,
    /// The sending interface's transmit ring, frames (`txqueuelen`); 0 if unknown.
    pub sender_tx_queue_len: u64,
    /// Frames the emulator wrote that the receiving node's stack dropped (`rx_dropped` of the
    /// receiving interface).
    pub receiver_rx_dropped: u64,
    /// Writes into the receiving TAP that failed (the frame is lost).
    pub write_errors: u64,
}

/// An interface in some namespace whose counters can be read from any thread.
#[derive(Debug)]
pub struct Watched {
    name: String,
    file: Mutex<File>,
    /// A socket made in the interface's namespace, to ask for its `txqueuelen`.
    socket: Option<std::net::UdpSocket>,
}

impl Watched {
    /// Opens the counters of interface `name` in namespace `ns`.
    pub fn open(ns: &str, name: &str) -> Result<Watched, LabError> {
        let (file, socket) = sys::in_namespace(ns, move || {
            (
                File::open("/proc/thread-self/net/dev"),
                std::net::UdpSocket::bind(("0.0.0.0", 0)).ok(),
            )
        })?;
        let file = file.map_err(|source| LabError::Io {
            what: format!("open /proc/net/dev in {ns}"),
            source,
        })?;
        Ok(Watched {
            name: name.to_string(),
            file: Mutex::new(file),
            socket,
        })
    }

    /// The interface's transmit ring now, frames (0 if unknown).
    pub fn tx_queue_len(&self) -> u64 {
        self.socket
            .as_ref()
            .and_then(|s| sys::tx_queue_len(s, &self.name))
            .unwrap_or(0)
    }

    /// The interface's counters now (zeros if they cannot be read).
    pub fn read(&self) -> NetDevLine {
        let mut file = self.file.lock().expect("device file lock");
        let mut text = String::new();
        if file.seek(SeekFrom::Start(0)).is_err() || file.read_to_string(&mut text).is_err() {
            return NetDevLine::default();
        }
        parse_net_dev(&text, &self.name).unwrap_or_default()
    }
}
