//! The transfers of `reproduce duplex-mismatch`: one TCP transfer across a lab link, capped
//! in time and counted by its receiver, with what both ends' MACs and TCPs counted during it
//! (emulator counters and `/proc/net/snmp`, `/proc/net/netstat` in each namespace, after
//! minus before); and the rounds of them each way across a mismatch lab.

use std::time::Duration;

use wirespeed_lab::PortStatus;
use wirespeed_lab::emulator::link::DirectionCounters;

use super::super::LabGuard;

/// One end's MAC counters during one transfer (after minus before).
#[derive(Debug, Clone, Copy, Default)]
#[doc(hidden)]
pub struct Mac {
    pub sent: u64,
    pub received: u64,
    pub collisions: u64,
    pub late: u64,
    pub fcs: u64,
    pub runts: u64,
}

fn counters(ports: &[PortStatus], node: &str) -> DirectionCounters {
    ports
        .iter()
        .find(|p| p.from == node)
        .map(|p| p.counters)
        .unwrap_or_default()
}

fn delta(before: &[PortStatus], after: &[PortStatus], node: &str) -> Mac {
    let (b, a) = (counters(before, node), counters(after, node));
    Mac {
        sent: a.frames_out - b.frames_out,
        received: a.frames_received - b.frames_received,
        collisions: a.collisions - b.collisions,
        late: a.late_collisions - b.late_collisions,
        fcs: a.fcs_errors - b.fcs_errors,
        runts: a.runts - b.runts,
    }
}

/// One namespace's TCP counters (`/proc/net/snmp` Tcp and `/proc/net/netstat` TcpExt): what
/// its TCP did to repair losses and how it acknowledged, as `nstat` shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[doc(hidden)]
pub struct TcpCounters {
    /// Segments sent (Tcp OutSegs).
    pub out_segs: u64,
    /// Segments received (Tcp InSegs).
    pub in_segs: u64,
    /// Segments retransmitted (Tcp RetransSegs).
    pub retrans_segs: u64,
    /// Retransmission timer expiries (TcpExt TCPTimeouts).
    pub timeouts: u64,
    /// Fast retransmits (TcpExt TCPFastRetrans).
    pub fast_retrans: u64,
    /// ACKs sent by the delayed-ACK timer (TcpExt DelayedACKs).
    pub delayed_acks: u64,
}

/// The value named `name` in the `prefix` table of a `/proc/net/snmp`-style text (a line of
/// names followed by a line of values, both starting with `prefix:`).
fn proc_value(text: &str, prefix: &str, name: &str) -> Option<u64> {
    let mut lines = text.lines().filter(|l| l.starts_with(prefix));
    while let (Some(names), Some(values)) = (lines.next(), lines.next()) {
        let i = names.split_whitespace().position(|n| n == name);
        if let Some(i) = i {
            return values.split_whitespace().nth(i)?.parse().ok();
        }
    }
    None
}

impl TcpCounters {
    /// From the texts of `/proc/net/snmp` and `/proc/net/netstat`; a missing counter is 0.
    #[doc(hidden)]
    pub fn parse(snmp: &str, netstat: &str) -> TcpCounters {
        let tcp = |n| proc_value(snmp, "Tcp:", n).unwrap_or(0);
        let ext = |n| proc_value(netstat, "TcpExt:", n).unwrap_or(0);
        TcpCounters {
            out_segs: tcp("OutSegs"),
            in_segs: tcp("InSegs"),
            retrans_segs: tcp("RetransSegs"),
            timeouts: ext("TCPTimeouts"),
            fast_retrans: ext("TCPFastRetrans"),
            delayed_acks: ext("DelayedACKs"),
        }
    }

    fn read(lab: &LabGuard, node: &str) -> anyhow::Result<TcpCounters> {
        Ok(TcpCounters::parse(
            &lab.proc_net(node, "snmp")?,
            &lab.proc_net(node, "netstat")?,
        ))
    }

    #[doc(hidden)]
    pub fn since(self, before: TcpCounters) -> TcpCounters {
        TcpCounters {
            out_segs: self.out_segs.saturating_sub(before.out_segs),
            in_segs: self.in_segs.saturating_sub(before.in_segs),
            retrans_segs: self.retrans_segs.saturating_sub(before.retrans_segs),
            timeouts: self.timeouts.saturating_sub(before.timeouts),
            fast_retrans: self.fast_retrans.saturating_sub(before.fast_retrans),
            delayed_acks: self.delayed_acks.saturating_sub(before.delayed_acks),
        }
    }
}

/// A transfer from `from` to `to`, capped in time: what arrived, and both ends' counters.
#[doc(hidden)]
pub struct Transfer {
    pub kib_per_second: f64,
    pub bytes: u64,
    pub seconds: f64,
    /// Every byte arrived before the cap.
    pub complete: bool,
    /// The longest time in which nothing arrived (100 ms resolution).
    pub longest_gap: f64,
    pub from: Mac,
    pub to: Mac,
    /// The sender's and the receiver's TCP counters over the transfer.
    pub sender: TcpCounters,
    pub receiver: TcpCounters,
    /// The window the sender saw advertised at the end, if the transfer finished.
    pub peer_window: Option<u32>,
}

impl Transfer {
    /// "200000 B in 0.6 s", or "61440 B in 4.9 s, cut at the cap, longest with nothing
    /// arriving 3.2 s".
    pub(super) fn moved(&self) -> String {
        let stall = if !self.complete || self.longest_gap >= 1.0 {
            format!(", longest with nothing arriving {:.1} s", self.longest_gap)
        } else {
            String::new()
        };
        let cut = if self.complete {
            ""
        } else {
            ", cut at the cap"
        };
        format!("{} B in {:.1} s{cut}{stall}", self.bytes, self.seconds)
    }

    /// What the two TCPs did: "sender 40 timeouts, 0 fast retransmits, 44 segments resent;
    /// receiver 1 delayed ACK of 653 segments sent; 121 late collisions of 123".
    #[doc(hidden)]
    pub fn tcp(&self) -> String {
        format!(
            "sender {} timeouts, {} fast retransmits, {} segments resent; receiver {} delayed ACKs of {} segments sent; half end {} late collisions of {}",
            self.sender.timeouts,
            self.sender.fast_retrans,
            self.sender.retrans_segs,
            self.receiver.delayed_acks,
            self.receiver.out_segs,
            self.from.late.max(self.to.late),
            self.from.collisions.max(self.to.collisions),
        ) + &self
            .peer_window
            .map_or(String::new(), |w| format!("; window the sender saw {w} B"))
    }
}

/// Default cap on one transfer: the seed's slowest rate (15 KB/s) moves 450 kB in it.
#[doc(hidden)]
pub const DEFAULT_CAP: Duration = Duration::from_secs(30);

fn transfer(
    lab: &LabGuard,
    from: &str,
    to: &str,
    bytes: u64,
    cap: Duration,
    client_flags: &[&str],
) -> anyhow::Result<Transfer> {
    let before = lab.ports()?;
    let (s0, r0) = (TcpCounters::read(lab, from)?, TcpCounters::read(lab, to)?);
    // A mismatched link stalls for tens of seconds at times (the half end backs off, TCP's
    // retransmission timer doubles): the transfer is stopped at the cap and what arrived is
    // the measurement.
    let got = lab.tcp_capped(from, to, bytes, cap, client_flags)?;
    let after = lab.ports()?;
    let (s1, r1) = (TcpCounters::read(lab, from)?, TcpCounters::read(lab, to)?);
    Ok(Transfer {
        kib_per_second: got.kib_per_second(),
        bytes: got.bytes,
        seconds: got.seconds,
        complete: got.complete,
        longest_gap: got.longest_gap,
        from: delta(&before, &after, from),
        to: delta(&before, &after, to),
        sender: s1.since(s0),
        receiver: r1.since(r0),
        peer_window: got.peer_window_bytes,
    })
}

/// `runs` rounds of one transfer each way across the mismatch lab in `file`.
#[doc(hidden)]
pub fn mismatch_runs(
    file: &str,
    bytes: u64,
    runs: u32,
    cap: Duration,
    client_flags: &[&str],
) -> anyhow::Result<Vec<(Transfer, Transfer)>> {
    let lab = LabGuard::up(&super::super::lab_file(file)?)?;
    let mut out = Vec::new();
    for _ in 0..runs {
        let put_half = transfer(&lab, "half", "full", bytes, cap, client_flags)?;
        let put_full = transfer(&lab, "full", "half", bytes, cap, client_flags)?;
        out.push((put_half, put_full));
    }
    drop(lab);
    Ok(out)
}

/// The two hosts of the matched link, in file order.
fn matched_nodes(lab: &LabGuard) -> anyhow::Result<(String, String)> {
    let hosts: Vec<&str> = lab
        .record
        .nodes
        .iter()
        .filter(|n| n.kind == "host")
        .map(|n| n.name.as_str())
        .collect();
    match hosts.as_slice() {
        [a, b] => Ok((a.to_string(), b.to_string())),
        _ => anyhow::bail!(
            "labs/duplex-matched.toml should have two hosts, has {}",
            hosts.len()
        ),
    }
}

/// The matched link (labs/duplex-matched.toml, both ends half duplex): its two hosts, in file
/// order, and one transfer each way.
#[doc(hidden)]
pub fn matched_transfers(
    bytes: u64,
    cap: Duration,
) -> anyhow::Result<(String, String, Transfer, Transfer)> {
    let file = super::super::lab_file("duplex-matched.toml")?;
    let lab = LabGuard::up(&file)?;
    let (a, b) = matched_nodes(&lab)?;
    let ab = transfer(&lab, &a, &b, bytes, cap, &[])?;
    let ba = transfer(&lab, &b, &a, bytes, cap, &[])?;
    drop(lab);
    Ok((a, b, ab, ba))
}
