//! `localtime_r` and `strftime`: a moment as the local wall clock, in a format the user gives
//! (`--timestamps`, as iperf3 stamps its lines). Neither rustix nor socket2 offers them.
//!
//! The output buffer is a Rust slice whose length is passed to `strftime`, which writes at most
//! that many bytes and returns 0 when the text would not fit; the format is a `CStr`.

use std::ffi::CStr;
use std::mem::zeroed;

// POSIX names tzset but the libc crate does not declare it; localtime_r need not read TZ
// without it.
unsafe extern "C" {
    fn tzset();
}

/// `seconds` since the epoch as local time in `format`, written into `out`: the number of
/// bytes written, `None` when the text would not fit (or the format makes none).
pub(crate) fn format_local(format: &CStr, seconds: i64, out: &mut [u8]) -> Option<usize> {
    let t = libc::time_t::try_from(seconds).ok()?;
    // SAFETY: tm is plain data; all zeroes is a valid value that localtime_r overwrites.
    let mut tm: libc::tm = unsafe { zeroed() };
    // SAFETY: tzset reads TZ and the zone files; it takes no pointers.
    unsafe { tzset() };
    // SAFETY: valid pointers to a time_t and a tm, both alive for the call.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return None;
    }
    // SAFETY: out is writable for out.len() bytes, which strftime never exceeds; the format is
    // NUL-terminated and tm was filled by localtime_r.
    let n = unsafe {
        libc::strftime(
            out.as_mut_ptr().cast::<libc::c_char>(),
            out.len(),
            format.as_ptr(),
            &tm,
        )
    };
    (n > 0).then_some(n)
}
