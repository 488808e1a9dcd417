//! The TCP data path: one blocking socket per thread, one buffer allocated per stream, plain
//! `write`/`read` calls of `-l` bytes (ttcp's loop, seed 002). The counters a reporter samples
//! are relaxed atomic stores of thread-local totals: no lock, no allocation per call.

use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use crate::engine::Counters;
use crate::spec::Amount;

/// The byte pattern ttcp sends: printable characters, so a capture is readable.
pub(crate) fn pattern(len: usize) -> Vec<u8> {
    (0..len).map(|i| b' ' + (i % 95) as u8).collect()
}

fn silent(e: io::Error) -> io::Error {
    if crate::control::is_timeout(&e) {
        io::Error::new(
            io::ErrorKind::TimedOut,
            "the peer stopped reading (timed out)",
        )
    } else {
        e
    }
}

/// Writes `-l`-byte buffers until the deadline or until exactly `amount` bytes are written,
/// then closes the sending half so that the receiver sees the end.
pub(crate) fn send(
    s: &mut TcpStream,
    len: usize,
    amount: Amount,
    start: Instant,
    stop: &AtomicBool,
    c: &Counters,
) -> io::Result<()> {
    let buf = pattern(len);
    let (mut bytes, mut calls) = (0u64, 0u64);
    let deadline = amount.duration().map(|d| start + d);
    let limit = match amount {
        Amount::Bytes(n) => n,
        Amount::Seconds(_) => u64::MAX,
    };
    while bytes < limit && !stop.load(Ordering::Relaxed) {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            break;
        }
        let want = (limit - bytes).min(len as u64) as usize;
        match s.write(&buf[..want]) {
            Ok(n) => {
                bytes += n as u64;
                calls += 1;
                c.publish(bytes, calls);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(silent(e)),
        }
    }
    if bytes < limit && deadline.is_none() {
        return Err(io::Error::other(format!(
            "stopped after {bytes} of {limit} bytes"
        )));
    }
    s.shutdown(Shutdown::Write)
}

/// Reads `-l`-byte buffers until the sender closes. With `expect`, fewer bytes is an error.
pub(crate) fn receive(
    s: &mut TcpStream,
    len: usize,
    expect: Option<u64>,
    c: &Counters,
) -> io::Result<()> {
    let mut buf = vec![0u8; len];
    let (mut bytes, mut calls) = (0u64, 0u64);
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                bytes += n as u64;
                calls += 1;
                c.publish(bytes, calls);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if crate::control::is_timeout(&e) => {
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the peer went silent (no data within the idle timeout)",
                ));
            }
            Err(e) => return Err(e),
        }
    }
    match expect {
        Some(n) if bytes != n => Err(io::Error::other(format!(
            "received {bytes} of {n} bytes before the sender closed"
        ))),
        _ => Ok(()),
    }
}
