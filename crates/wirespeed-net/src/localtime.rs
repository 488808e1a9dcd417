//! The local wall clock in a strftime format (`tcp --timestamps=FORMAT`, as iperf3 stamps each
//! output line). The format comes from a flag, so it is checked once before it is used: bounded
//! in length, no NUL or line break, and its text for now must fit [`MAX_STAMP_BYTES`].

use std::ffi::CString;
use std::time::{SystemTime, UNIX_EPOCH};

/// The longest format taken, in bytes.
pub const MAX_FORMAT_BYTES: usize = 64;

/// The longest stamp written, in bytes: a format that expands past it is refused.
pub const MAX_STAMP_BYTES: usize = 256;

/// A checked strftime format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StampFormat(CString);

impl StampFormat {
    /// Checks `format` and returns it ready to stamp; the error names the problem and the fix.
    pub fn new(format: &str) -> Result<StampFormat, String> {
        if format.is_empty() {
            return Err(
                "the timestamp format is empty: give a strftime format (--timestamps='%F %T ') or none for iperf3's '%c '".into(),
            );
        }
        if format.len() > MAX_FORMAT_BYTES {
            return Err(format!(
                "the timestamp format is {} bytes long: give at most {MAX_FORMAT_BYTES}",
                format.len()
            ));
        }
        if format.chars().any(char::is_control) {
            return Err(
                "the timestamp format holds a control character (a line break, a tab): stamps go at the start of a line; use printable text".into(),
            );
        }
        let c = CString::new(format).map_err(|_| "the timestamp format holds a NUL byte")?;
        let checked = StampFormat(c);
        if checked.at(now_seconds()).is_none() {
            return Err(format!(
                "the timestamp format '{format}' writes nothing or more than {MAX_STAMP_BYTES} bytes: use fewer conversions"
            ));
        }
        Ok(checked)
    }

    /// The stamp for `seconds` since the epoch, local time; `None` if it does not fit.
    pub fn at(&self, seconds: i64) -> Option<String> {
        let mut buf = [0u8; MAX_STAMP_BYTES];
        let n = crate::sys::localtime::format_local(&self.0, seconds, &mut buf)?;
        Some(String::from_utf8_lossy(&buf[..n]).into_owned())
    }

    /// The stamp for now (empty in the impossible case that it stopped fitting).
    pub fn now(&self) -> String {
        self.at(now_seconds()).unwrap_or_default()
    }
}

fn now_seconds() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}
