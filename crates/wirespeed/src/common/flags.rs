//! Flags that mean the same on every command that takes them, defined once and flattened in
//! (as `OutputArgs` is for `--json` and `-f`).

use std::path::PathBuf;

use clap::Args;
use wirespeed_net::auth::AuthKey;
use wirespeed_sim::traffic::{LengthMix, SEED_LENGTHS};

/// `--auth-key-file`: the key a client proves to an agent that asks for one.
#[derive(Debug, Clone, Default, Args)]
#[doc(hidden)]
pub struct KeyArgs {
    /// A file with the agent's pre-shared key, if it asks for one (an HMAC-SHA256 challenge;
    /// the same file the agent was started with).
    #[arg(long, value_name = "FILE")]
    pub(crate) auth_key_file: Option<PathBuf>,
}

impl KeyArgs {
    /// The key, read and checked, if a file was given.
    pub(crate) fn load(&self) -> anyhow::Result<Option<AuthKey>> {
        Ok(self
            .auth_key_file
            .as_deref()
            .map(AuthKey::from_file)
            .transpose()?)
    }
}

/// The value parser of a letter that used to mean something else in one command: it refuses
/// every value with the flag to use instead, so that `-n`, `-R` mean one thing everywhere
/// (`-n` an amount to send, `-R` the reverse direction) and an old command line fails with the
/// fix instead of a bare "unexpected argument".
pub(crate) fn moved_to(
    meaning: &'static str,
    instead: &'static str,
) -> impl Fn(&str) -> Result<String, String> + Clone + Send + Sync + 'static {
    move |_| Err(format!("{meaning}; use {instead} here"))
}

/// What `-n` means wherever it is taken.
pub(crate) const MOVED_N: &str =
    "-n is an amount to send in every command that takes it (tcp, udp, sweep, reproduce)";

/// What `-R` means wherever it is taken.
pub(crate) const MOVED_R: &str = "-R is the reverse direction (tcp, udp)";

/// A value read later by its own parser (udp's `-b`, where 0 means unlimited), refused here
/// only if it is a negative number, so that the refusal names the flag.
pub(crate) fn not_negative_text(text: &str) -> Result<String, String> {
    if text
        .trim()
        .strip_prefix('-')
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
    {
        return Err(format!(
            "'{text}' is negative: give 0 or more (such as 10M)"
        ));
    }
    Ok(text.to_string())
}

/// A real number of 0 or more (fractions, tolerances, loads): a negative or non-finite value
/// is refused by the flag's parser, before any work.
pub(crate) fn non_negative(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a number (such as 0.5 or 25)"))?;
    if value < 0.0 {
        return Err(format!(
            "'{text}' is negative: give 0 or more (such as 0.5)"
        ));
    }
    if !value.is_finite() {
        return Err(format!("'{text}' is not a finite number (such as 0.5)"));
    }
    Ok(value)
}

/// `-M`/`--mss`: the TCP_MAXSEG a connection is asked for, within what Linux accepts
/// (`TCP_MIN_MSS` 88 to `MAX_TCP_WINDOW` 32767), so that `-M 1` is refused with the range
/// before the test instead of the kernel's bare EINVAL after the handshake.
pub(crate) fn parse_mss(text: &str) -> Result<u32, String> {
    let mss: u32 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a whole number of bytes (such as -M 1460)"))?;
    if !(88..=32_767).contains(&mss) {
        return Err(format!(
            "{mss} bytes is out of range: Linux sets a TCP maximum segment of 88 to 32767 \
             bytes (such as -M 1460)"
        ));
    }
    Ok(mss)
}

/// `--hosts`: host counts (`sim csma`, `load`, `reproduce --lab-hosts`).
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub struct HostList(pub Vec<usize>);

/// `--lengths`: packet lengths or length mixes (`sim csma`, `load`).
#[derive(Debug, Clone, PartialEq)]
#[doc(hidden)]
pub struct LengthList(pub Vec<LengthMix>);

/// Host counts, 1 to 1024, in the number-list syntax every command shares (`1-24`, `1..24`,
/// `1,2,4,8`, `2..24:2`).
#[doc(hidden)]
pub fn parse_hosts(text: &str) -> Result<HostList, String> {
    let hosts = wirespeed_model::units::parse_number_list(text, 1, 1024, 1024)
        .map_err(|e| format!("host counts: {e}"))?;
    Ok(HostList(hosts.into_iter().map(|h| h as usize).collect()))
}

#[doc(hidden)]
pub fn parse_lengths(text: &str) -> Result<LengthList, String> {
    let bad = |part: &str| {
        format!("{part:?} is not a packet length (examples: seed, 64, 1536, 6/2, 64:6+1536:2)")
    };
    let mut mixes = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        if part == "seed" {
            mixes.extend(SEED_LENGTHS.iter().map(|&bytes| LengthMix::Fixed { bytes }));
        } else if let Some((s, l)) = part.split_once('/') {
            let s: u32 = s.parse().map_err(|_| bad(part))?;
            let l: u32 = l.parse().map_err(|_| bad(part))?;
            // 6/0 is a fixed length written as a ratio; say which one to write.
            if s == 0 || l == 0 {
                return Err(format!(
                    "{part:?}: a ratio mixes short and long packets, so both counts must be at \
                     least 1 (for one length alone write it, such as 64 or 1536)"
                ));
            }
            mixes.push(LengthMix::seed_ratio(s, l));
        } else if part.contains(':') {
            let lengths = part
                .split('+')
                .map(|item| {
                    let (b, w) = item.split_once(':').ok_or_else(|| bad(part))?;
                    let b: u64 = b.parse().map_err(|_| bad(part))?;
                    let w: f64 = w.parse().map_err(|_| bad(part))?;
                    Ok((b, w))
                })
                .collect::<Result<Vec<_>, String>>()?;
            mixes.push(LengthMix::Weighted { lengths });
        } else {
            let bytes: u64 = part.parse().map_err(|_| bad(part))?;
            mixes.push(LengthMix::Fixed { bytes });
        }
    }
    Ok(LengthList(mixes))
}

/// An interface name as a flag gives it (`--bind-dev`): what the kernel takes as a name (1 to 15
/// bytes, no `/`, blank or NUL, not `.` or `..`), so that it is never read as a path.
#[doc(hidden)]
pub fn parse_interface_name(text: &str) -> Result<String, String> {
    let bad = text.is_empty()
        || text.len() > 15
        || text == "."
        || text == ".."
        || text
            .chars()
            .any(|c| c == '/' || c == ':' || c.is_whitespace() || c.is_control());
    if bad {
        return Err(format!(
            "{text:?} is not an interface name: give one that `ip link` lists (lo, eth0), 1 to 15 characters without '/', ':' or blanks"
        ));
    }
    Ok(text.to_string())
}
