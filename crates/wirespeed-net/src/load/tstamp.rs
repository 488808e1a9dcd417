//! Which clock stamps a raw generator's transmissions: the NIC's, where it has a hardware
//! transmit timestamp unit, else the kernel's software stamp at the driver.
//!
//! The seed's transmission delay ends at "the end of [the packet's] successful transmission"
//! (seed 000 §3.3), which only the device knows. A NIC with a PTP hardware clock stamps a frame
//! as it leaves (`SOF_TIMESTAMPING_TX_HARDWARE`); the kernel's software stamp
//! (`skb_tx_timestamp` in the driver) marks the hand-off to the device's ring instead. The
//! capability is read with `ETHTOOL_GET_TS_INFO` (what `ethtool -T` prints), transmit stamping
//! is switched on with `SIOCSHWTSTAMP` only if it is off (keeping the receive filter a PTP
//! daemon may have set), and the NIC's clock is read against `CLOCK_REALTIME` through its
//! `/dev/ptpN` so that a hardware stamp and the send time are on one time line. veth, TAP and
//! loopback have no hardware stamps: [`choose`] then says software, and why.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use rustix::time::{ClockId, DynamicClockId, clock_gettime_dynamic};
use wirespeed_model::load::DelaySource;

use super::clock_ns;
use crate::sys::{cmsg, ethtool, socket_options};

/// What an interface can stamp, from `ETHTOOL_GET_TS_INFO`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TsInfo {
    /// `SOF_TIMESTAMPING_*` capabilities.
    pub so_timestamping: u32,
    /// Index of its PTP hardware clock (`/dev/ptpN`), -1 for none.
    pub phc_index: i32,
    /// Bit set of the `HWTSTAMP_TX_*` modes it supports.
    pub tx_types: u32,
}

/// The stamping a raw generator will ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Choice {
    /// Hardware transmit stamps in the clock `/dev/ptp{phc}`.
    Hardware {
        /// The PHC index.
        phc: i32,
    },
    /// Software stamps; the sentence says why not hardware.
    Software(String),
}

/// Reads `ETHTOOL_GET_TS_INFO` for `interface` through any socket `fd`.
pub fn ts_info(fd: &impl AsFd, interface: &str) -> io::Result<TsInfo> {
    check_name(interface)?;
    let (so_timestamping, phc_index, tx_types) = ethtool::ts_info(fd, interface)?;
    Ok(TsInfo {
        so_timestamping,
        phc_index,
        tx_types,
    })
}

/// Hardware transmit stamps if the interface can give them, else software and why.
pub fn choose(interface: &str, info: &io::Result<TsInfo>) -> Choice {
    let info = match info {
        Ok(i) => i,
        Err(e) => {
            return Choice::Software(format!(
                "{interface}: timestamping capabilities unknown (ETHTOOL_GET_TS_INFO: {e}); software stamps"
            ));
        }
    };
    let wanted = libc::SOF_TIMESTAMPING_TX_HARDWARE | libc::SOF_TIMESTAMPING_RAW_HARDWARE;
    let missing = if info.so_timestamping & wanted != wanted {
        "no hardware transmit timestamps"
    } else if info.tx_types & (1 << libc::HWTSTAMP_TX_ON) == 0 {
        "hardware stamps but no HWTSTAMP_TX_ON mode"
    } else if info.phc_index < 0 {
        "hardware stamps but no PTP hardware clock to read them against"
    } else {
        return Choice::Hardware {
            phc: info.phc_index,
        };
    };
    let software = if info.so_timestamping & libc::SOF_TIMESTAMPING_TX_SOFTWARE != 0 {
        "software transmit stamps"
    } else {
        "software stamps (the driver does not claim SOF_TIMESTAMPING_TX_SOFTWARE)"
    };
    Choice::Software(format!(
        "{interface}: {missing} (ETHTOOL_GET_TS_INFO); {software}"
    ))
}

/// Switches transmit stamping on at the NIC unless it is on already; keeps its receive filter.
pub fn enable_hardware_tx(fd: &impl AsFd, interface: &str) -> io::Result<()> {
    check_name(interface)?;
    let mut config = libc::hwtstamp_config {
        flags: 0,
        tx_type: 0,
        rx_filter: 0,
    };
    ethtool::hwtstamp(fd, interface, &mut config, false)?;
    if config.tx_type == libc::HWTSTAMP_TX_ON as libc::c_int {
        return Ok(());
    }
    config.tx_type = libc::HWTSTAMP_TX_ON as libc::c_int;
    ethtool::hwtstamp(fd, interface, &mut config, true)
}

/// A NIC's PTP hardware clock, read against `CLOCK_REALTIME`.
pub struct PhcClock {
    _fd: OwnedFd,
    /// PHC minus `CLOCK_REALTIME`, nanoseconds, from the tightest of several readings.
    pub offset_ns: i64,
}

impl PhcClock {
    /// Opens `/dev/ptp{index}` and measures its offset.
    pub fn open(index: i32) -> io::Result<PhcClock> {
        let file = std::fs::File::open(format!("/dev/ptp{index}"))?;
        let fd = OwnedFd::from(file);
        // A dynamic POSIX clock of an open fd (FD_TO_CLOCKID, include/linux/posix-timers.h).
        let clock = DynamicClockId::Dynamic(fd.as_fd());
        let mut best: Option<(u64, i64)> = None;
        for _ in 0..16 {
            let a = clock_ns(ClockId::Realtime);
            let ts = clock_gettime_dynamic(clock)?;
            let b = clock_ns(ClockId::Realtime);
            let phc = ts.tv_sec * 1_000_000_000 + ts.tv_nsec;
            let width = b.saturating_sub(a);
            let offset = phc - (a + width / 2) as i64;
            if best.is_none_or(|(w, _)| width < w) {
                best = Some((width, offset));
            }
        }
        Ok(PhcClock {
            _fd: fd,
            offset_ns: best.map_or(0, |(_, o)| o),
        })
    }
}

/// Sets the socket's stamping for `choice`; returns the source its delays will have.
pub fn enable_on_socket(fd: &impl AsFd, hardware: bool) -> Option<DelaySource> {
    let mut flags: libc::c_uint =
        libc::SOF_TIMESTAMPING_TX_SOFTWARE | libc::SOF_TIMESTAMPING_SOFTWARE;
    if hardware {
        flags |= libc::SOF_TIMESTAMPING_TX_HARDWARE | libc::SOF_TIMESTAMPING_RAW_HARDWARE;
    }
    socket_options::set_timestamping(fd, flags).ok().map(|()| {
        if hardware {
            DelaySource::NicTxHardware
        } else {
            DelaySource::KernelTxSoftware
        }
    })
}

/// One transmit timestamp read back from a socket's error queue.
pub(crate) struct TxStamp {
    /// Bytes of the looped-back packet written into the caller's buffer.
    pub(crate) len: usize,
    /// The kernel's software stamp, ns (0 if absent).
    pub(crate) software_ns: u64,
    /// The NIC's raw hardware stamp, ns (0 if absent).
    pub(crate) hardware_ns: u64,
    /// The stamp's key (`SOF_TIMESTAMPING_OPT_ID`), where the socket asked for one.
    pub(crate) id: Option<u32>,
}

/// Reads one message from `fd`'s error queue without waiting: its stamps and, into `data`, the
/// start of the packet it belongs to. `None` when the queue is empty.
pub(crate) fn read_tx_stamp(fd: impl AsFd, data: &mut [u8]) -> Option<TxStamp> {
    let mut control = [0u8; 512];
    let got = cmsg::recvmsg(
        fd,
        data,
        &mut control,
        libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
    )
    .ok()?;
    let ns = |(sec, nsec): (i64, i64)| sec as u64 * 1_000_000_000 + nsec as u64;
    let mut stamp = TxStamp {
        len: got.len.min(data.len()),
        software_ns: 0,
        hardware_ns: 0,
        id: None,
    };
    for c in cmsg::messages(&control[..got.control_len]) {
        if c.level == libc::SOL_SOCKET && c.kind == libc::SCM_TIMESTAMPING {
            stamp.software_ns = cmsg::timespec(c.data, 0).map_or(0, ns);
            stamp.hardware_ns = cmsg::timespec(c.data, 2).map_or(0, ns);
        } else if ((c.level == libc::SOL_IP && c.kind == libc::IP_RECVERR)
            || (c.level == libc::SOL_IPV6 && c.kind == libc::IPV6_RECVERR))
            && let Some((e, _)) = cmsg::extended_err(c.data)
            && e.ee_origin == libc::SO_EE_ORIGIN_TIMESTAMPING
        {
            stamp.id = Some(e.ee_data);
        }
    }
    Some(stamp)
}

/// Refuses what is not an interface name an `ifreq` can hold.
#[doc(hidden)]
pub fn check_name(interface: &str) -> io::Result<()> {
    let name = interface.as_bytes();
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{interface:?} is not an interface name"),
        ));
    }
    Ok(())
}
