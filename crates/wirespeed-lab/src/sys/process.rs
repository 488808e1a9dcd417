//! Process control that no crate offers safely: `fork` for the emulator process, a `pre_exec`
//! hook that moves a command into a cgroup, and the blocked-signal set the emulator waits on.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

/// Which side of a [`fork`] this is.
pub(crate) enum Forked {
    /// The parent, with the child's pid.
    Parent(i32),
    /// The child, which must leave through [`exit_child`].
    Child,
}

/// Forks the process.
///
/// Invariant the caller keeps: the process is single-threaded at the call (as
/// `lifecycle::up` is, `Lab::build` having joined the threads it starts), so that the child,
/// which holds copies of every lock as it was at the fork, may run ordinary Rust code
/// (allocate, take locks); and the child ends with [`exit_child`], never by returning into the
/// parent's frames.
pub(crate) fn fork() -> io::Result<Forked> {
    // SAFETY: the process is single-threaded here (the invariant above), so the child may run
    // ordinary Rust code.
    match unsafe { libc::fork() } {
        pid if pid < 0 => Err(io::Error::last_os_error()),
        0 => Ok(Forked::Child),
        pid => Ok(Forked::Parent(pid)),
    }
}

/// Ends a forked child with `code`, without running the parent's atexit handlers.
pub(crate) fn exit_child(code: i32) -> ! {
    // SAFETY: _exit ends the calling process and has no preconditions.
    unsafe { libc::_exit(code) }
}

/// Makes `cmd` write its own pid into `procs` (an open `cgroup.procs`) between fork and exec,
/// so that it and everything it forks end with the lab; the command fails to start if the
/// write fails.
pub(crate) fn write_pid_before_exec(cmd: &mut Command, procs: File) {
    // SAFETY: the closure runs between fork and exec and calls only async-signal-safe
    // functions (getpid, write) on a stack buffer; `procs` (close-on-exec) lives in the
    // closure, so in the Command, until the command has started.
    unsafe {
        cmd.pre_exec(move || {
            let mut digits = [0u8; 12];
            let mut n = libc::getpid() as u32;
            let mut i = digits.len();
            loop {
                i -= 1;
                digits[i] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            let len = digits.len() - i;
            if libc::write(procs.as_raw_fd(), digits[i..].as_ptr().cast(), len) != len as isize {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// A set of signals blocked on the thread that made it (and on the threads it starts after),
/// so that only [`SignalSet::wait`] sees them.
pub(crate) struct SignalSet(libc::sigset_t);

impl SignalSet {
    /// Blocks `signals` on the calling thread (before any emulator thread starts, so that they
    /// inherit the mask).
    pub(crate) fn block(signals: &[libc::c_int]) -> SignalSet {
        // SAFETY: sigset operations on a local set; pthread_sigmask on this thread.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for &s in signals {
                libc::sigaddset(&mut set, s);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            SignalSet(set)
        }
    }

    /// Waits up to `timeout` for one of the signals; which one, or `None` at the timeout.
    pub(crate) fn wait(&self, timeout: Duration) -> Option<i32> {
        let ts = libc::timespec {
            tv_sec: timeout.as_secs() as libc::time_t,
            tv_nsec: timeout.subsec_nanos() as libc::c_long,
        };
        // SAFETY: a valid set and timespec; the siginfo pointer may be null.
        let s = unsafe { libc::sigtimedwait(&self.0, std::ptr::null_mut(), &ts) };
        (s > 0).then_some(s)
    }
}
