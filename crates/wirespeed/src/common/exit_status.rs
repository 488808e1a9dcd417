//! Exit statuses, so that a script can tell a result from a refusal from a run cut short
//! (docs/exit-status.md):
//!
//! * 0: the command ran whole and printed its result;
//! * 1: it ran and found a fault the user asked to fail on with a threshold flag (reserved:
//!   no command has such a flag yet);
//! * 2: bad input, or the test could not start (a flag, a file, an unreachable agent): one line
//!   on stderr names the problem and the fix, and nothing is measured;
//! * 3: the test started but its result is partial (a stream failed, the agent's view is
//!   missing): what was counted is printed, marked partial, with no verdict;
//! * 130 / 143: interrupted by SIGINT / SIGTERM (128 + the signal, as the shell reports it):
//!   what finished is printed, marked partial, and kept where results are kept.
//!
//! Any error that does not carry an [`Exit`] is status 2.

use std::fmt;

/// Bad input, or the test could not start.
#[doc(hidden)]
pub const BAD_INPUT: u8 = 2;
/// The test started; its result is partial.
#[doc(hidden)]
pub const PARTIAL: u8 = 3;
/// What the text says where a run cut short has no figure (never `NaN`).
pub(crate) const NOT_MEASURED: &str = "not measured";

/// The `after_help` of `tcp` and `udp`.
pub(crate) const THROUGHPUT_HELP: &str = "\
Exit status:
  0  the test ran whole; its result and verdicts are printed
  2  bad input or the test could not start (no agent there, refused): one line on stderr
  3  partial result: a stream failed or the agent's view is missing; what was counted is
     printed marked \"partial\" (JSON \"partial\": true and \"partial_reason\"), with no
     verdict
  130, 143  interrupted by SIGINT, SIGTERM: the same partial result
  (1 is for a fault found that a flag asked to fail on; tcp and udp have no such flag)
See docs/exit-status.md.";

/// An error with its exit status.
#[derive(Debug)]
#[doc(hidden)]
pub struct Exit {
    pub code: u8,
    pub message: String,
}

impl Exit {
    /// A partial result (status 3).
    #[doc(hidden)]
    pub fn partial(message: String) -> Exit {
        Exit {
            code: PARTIAL,
            message,
        }
    }
}

impl Exit {
    /// A result cut short after its partial figures were printed: 130 or 143 when SIGINT or
    /// SIGTERM cut it, else 3. Every command's partial result goes through here, so that a
    /// signal is never reported as a failure.
    pub(crate) fn cut_short(message: String) -> Exit {
        let code = if crate::common::interrupt::requested() {
            crate::common::interrupt::signal_status()
        } else {
            PARTIAL
        };
        Exit { code, message }
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Exit {}

/// The status an error ends the process with.
pub fn code_of(err: &anyhow::Error) -> u8 {
    err.chain()
        .find_map(|e| e.downcast_ref::<Exit>())
        .map_or(BAD_INPUT, |e| e.code)
}
