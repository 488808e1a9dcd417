//! Bit rates, byte sizes and durations: parsed from what engineers type, printed unambiguously.
//!
//! Networking mixes two prefix systems and most tools blur them (iperf's `-w 64K` is 65,536
//! bytes, its `-b 64K` is 64,000 bit/s). wirespeed keeps them apart everywhere: `k`, `M`, `G`,
//! `T` are decimal (powers of 1000) and `Ki`, `Mi`, `Gi`, `Ti` are binary (powers of 1024), for
//! rates and sizes alike, and every printed figure carries a unit that says which one it is
//! (`kB` versus `KiB`, `Mbit/s`). Parsing is exact: `1.544M` is 1,544,000 bit/s, not a float
//! that prints back as 1543999.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// A value that could not be read as a rate, a size or a duration.
///
/// The message names the value, what was expected and an example, so that a command-line error
/// is one self-explaining line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
#[non_exhaustive]
pub struct ParseUnitError {
    /// What the user typed.
    pub input: String,
    /// The kind of quantity: "bit rate", "byte size", "duration".
    pub what: &'static str,
    /// The accepted forms.
    pub expected: &'static str,
    /// A few valid values.
    pub example: &'static str,
    /// Set when the text is a well-formed quantity too large to hold: the largest one held.
    pub largest: Option<&'static str>,
    /// Set when the text is a well-formed quantity below the least this kind holds (a rate of
    /// 0): that least.
    pub least: Option<&'static str>,
    /// Set when the text is a well-formed quantity with a minus sign: none of these can be
    /// negative, and "not a duration" would send the user looking for a syntax error.
    pub negative: bool,
}

impl ParseUnitError {
    fn message(&self) -> String {
        if self.negative {
            return format!(
                "'{}' is negative: a {} is never below 0, for example {}",
                self.input, self.what, self.example
            );
        }
        if let Some(least) = self.least {
            return format!(
                "'{}' is out of range for a {}: at least {least}, for example {}",
                self.input, self.what, self.example
            );
        }
        match self.largest {
            // A well-formed figure that is merely too big is out of range, not "not a
            // duration": the fix is a smaller figure, not another syntax.
            Some(largest) => format!(
                "'{}' is out of range for a {}: at most {largest}, for example {}",
                self.input, self.what, self.example
            ),
            None => format!(
                "'{}' is not a {}: expected {}, for example {}",
                self.input, self.what, self.expected, self.example
            ),
        }
    }

    fn too_large(mut self, largest: &'static str) -> ParseUnitError {
        self.largest = Some(largest);
        self
    }

    fn too_small(mut self, least: &'static str) -> ParseUnitError {
        self.least = Some(least);
        self
    }

    /// The error for `text` if it is a number with a minus sign (`-1`, `-0.5s`), so that the
    /// parsers refuse it as negative rather than as a syntax they do not know.
    fn if_negative(self, text: &str) -> Result<(), ParseUnitError> {
        let negative = text
            .trim()
            .strip_prefix('-')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit() || c == '.'));
        if negative {
            return Err(ParseUnitError {
                negative: true,
                ..self
            });
        }
        Ok(())
    }
}

/// A decimal number split into an integer scaled by a power of ten, so that prefixes multiply
/// exactly.
#[derive(Debug, Clone, Copy)]
struct Decimal {
    digits: u128,
    /// The value is `digits / 10^scale`.
    scale: u32,
}

impl Decimal {
    fn parse(text: &str) -> Option<Decimal> {
        let (int, frac) = match text.split_once('.') {
            Some((i, f)) => (i, f),
            None => (text, ""),
        };
        if int.is_empty() && frac.is_empty() {
            return None;
        }
        if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let frac = frac.trim_end_matches('0');
        if frac.len() > 18 || int.len() > 20 {
            return None;
        }
        let mut digits: u128 = 0;
        for b in int.bytes().chain(frac.bytes()) {
            digits = digits.checked_mul(10)?.checked_add(u128::from(b - b'0'))?;
        }
        Some(Decimal {
            digits,
            scale: frac.len() as u32,
        })
    }

    /// `self * multiplier` if that is a whole number that fits in a u64.
    fn times_exact(self, multiplier: u128) -> Option<u64> {
        let product = self.digits.checked_mul(multiplier)?;
        let divisor = 10u128.pow(self.scale);
        if product % divisor != 0 {
            return None;
        }
        u64::try_from(product / divisor).ok()
    }

    /// `self * multiplier`, rounded to the nearest whole number.
    fn times_rounded(self, multiplier: u128) -> Option<u64> {
        let product = self.digits.checked_mul(multiplier)?;
        let divisor = 10u128.pow(self.scale);
        u64::try_from((product + divisor / 2) / divisor).ok()
    }
}

/// Splits `"1.544Mbit/s"` into `("1.544", "Mbit/s")`, ignoring spaces between them.
fn split_number(text: &str) -> (&str, &str) {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    (&text[..end], text[end..].trim_start())
}

/// The multiplier of an SI or IEC prefix at the start of `unit`, and the rest of the unit.
fn prefix(unit: &str) -> (u128, &str) {
    const BINARY: [(&str, u128); 4] = [
        ("Ki", 1 << 10),
        ("Mi", 1 << 20),
        ("Gi", 1 << 30),
        ("Ti", 1 << 40),
    ];
    const DECIMAL: [(&str, u128); 5] = [
        ("k", 1_000),
        ("K", 1_000),
        ("M", 1_000_000),
        ("G", 1_000_000_000),
        ("T", 1_000_000_000_000),
    ];
    for (p, m) in BINARY {
        if let Some(rest) = unit.strip_prefix(p) {
            return (m, rest);
        }
    }
    for (p, m) in DECIMAL {
        if let Some(rest) = unit.strip_prefix(p) {
            return (m, rest);
        }
    }
    (1, unit)
}

/// A bit rate in bits per second.
///
/// Parses `10M`, `10Mbit`, `10 Mbit/s`, `10Mbps`, `1G`, `56k`, `1.544M`, `100Mi` (binary), and
/// byte rates written with a capital B (`1.25MB/s`, `125kBps`, eight bits to the byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BitRate(u64);

impl BitRate {
    /// A rate of `bits_per_second`.
    pub const fn from_bits_per_second(bits_per_second: u64) -> BitRate {
        BitRate(bits_per_second)
    }

    /// Bits per second.
    pub const fn bits_per_second(self) -> u64 {
        self.0
    }

    /// Bits per second as a float, for arithmetic.
    pub fn bps(self) -> f64 {
        self.0 as f64
    }

    /// Bytes per second (eight bits each).
    pub fn bytes_per_second(self) -> f64 {
        self.0 as f64 / 8.0
    }

    /// Serialization time of one byte at this rate, in seconds (8 / rate).
    pub fn seconds_per_byte(self) -> f64 {
        8.0 / self.0 as f64
    }
}

impl FromStr for BitRate {
    type Err = ParseUnitError;

    fn from_str(text: &str) -> Result<BitRate, ParseUnitError> {
        let error = || ParseUnitError {
            input: text.to_string(),
            what: "bit rate",
            expected: "a number with an optional k/M/G/T (decimal) or Ki/Mi/Gi (binary) prefix \
                       and bit, bit/s, bps or B/s",
            example: "10M, 1.544Mbit/s, 56k, 1G, 125MB/s",
            largest: None,
            least: None,
            negative: false,
        };
        error().if_negative(text)?;
        let (number, unit) = split_number(text);
        let value = Decimal::parse(number).ok_or_else(error)?;
        let (multiplier, rest) = prefix(unit);
        let bits_per_unit = match rest {
            "" | "b" | "bit" | "bits" | "bit/s" | "bits/s" | "b/s" | "bps" => 1,
            "B" | "B/s" | "Bps" | "byte/s" | "bytes/s" => 8,
            _ => return Err(error()),
        };
        let bps = value
            .times_rounded(multiplier * bits_per_unit)
            .ok_or_else(|| error().too_large("2^64 - 1 bit/s"))?;
        if bps == 0 {
            return Err(error().too_small("1 bit/s"));
        }
        Ok(BitRate(bps))
    }
}

impl fmt::Display for BitRate {
    /// The largest decimal prefix that keeps the figure at or above one, exact to the bit
    /// (`1.544 Mbit/s`, `56 kbit/s`, `10 Gbit/s`), so that printing and parsing round-trip.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (value, prefix) = exact_decimal(self.0);
        write!(f, "{value} {prefix}bit/s")
    }
}

/// `n` written with the largest SI prefix under which it is at least one, without rounding.
fn exact_decimal(n: u64) -> (String, &'static str) {
    const PREFIXES: [(u64, &str); 4] = [
        (1_000_000_000_000, "T"),
        (1_000_000_000, "G"),
        (1_000_000, "M"),
        (1_000, "k"),
    ];
    for (scale, prefix) in PREFIXES {
        if n >= scale {
            let int = n / scale;
            let frac = n % scale;
            if frac == 0 {
                return (int.to_string(), prefix);
            }
            let width = scale.ilog10() as usize;
            let frac = format!("{frac:0width$}");
            return (format!("{int}.{}", frac.trim_end_matches('0')), prefix);
        }
    }
    (n.to_string(), "")
}

/// A number of bytes.
///
/// Parses `1500`, `64K` or `64kB` (64,000), `64KiB` or `64Ki` (65,536), `8M`, `8MiB`. Without
/// a unit the number is bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ByteSize(u64);

impl ByteSize {
    /// `bytes` bytes.
    pub const fn from_bytes(bytes: u64) -> ByteSize {
        ByteSize(bytes)
    }

    /// The number of bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }
}

impl FromStr for ByteSize {
    type Err = ParseUnitError;

    fn from_str(text: &str) -> Result<ByteSize, ParseUnitError> {
        let error = || ParseUnitError {
            input: text.to_string(),
            what: "byte size",
            expected: "a whole number of bytes with an optional k/M/G (x1000) or Ki/Mi/Gi \
                       (x1024) prefix and an optional B",
            example: "1500, 64KiB, 128kB, 8M, 8MiB",
            largest: None,
            least: None,
            negative: false,
        };
        error().if_negative(text)?;
        let (number, unit) = split_number(text);
        let value = Decimal::parse(number).ok_or_else(error)?;
        let (multiplier, rest) = prefix(unit);
        if !matches!(rest, "" | "B" | "byte" | "bytes") {
            return Err(error());
        }
        value.times_exact(multiplier).map(ByteSize).ok_or_else(|| {
            // Exact fails on a fraction of a byte or on overflow; only the latter is too big.
            if value.times_rounded(multiplier).is_some() {
                error()
            } else {
                error().too_large("2^64 - 1 bytes")
            }
        })
    }
}

impl fmt::Display for ByteSize {
    /// Exact: plain bytes below 1024, else the binary prefix that divides evenly, else the
    /// decimal prefix that does, else plain bytes (`1500 B`, `64 KiB`, `8 MB`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 6] = [
            (1 << 30, "GiB"),
            (1_000_000_000, "GB"),
            (1 << 20, "MiB"),
            (1_000_000, "MB"),
            (1 << 10, "KiB"),
            (1_000, "kB"),
        ];
        if self.0 >= 1000 {
            for (scale, unit) in UNITS {
                if self.0 >= scale && self.0.is_multiple_of(scale) {
                    return write!(f, "{} {unit}", self.0 / scale);
                }
            }
        }
        write!(f, "{} B", self.0)
    }
}

/// Parses a duration: `10s`, `250ms`, `30us`, `1.5s`, `500ns`, `2m`, `1h`, `7d`, `2w`; a bare
/// number is seconds (as in iperf's `-t 10`). Days and weeks are there for schedules
/// (`--until 30d`): a day is 24 h, whatever a calendar's daylight saving does.
pub fn parse_duration(text: &str) -> Result<Duration, ParseUnitError> {
    let error = || ParseUnitError {
        input: text.to_string(),
        what: "duration",
        expected: "a number with ns, us, ms, s, m, h, d or w (seconds if no unit)",
        example: "10s, 250ms, 30us, 1.5",
        largest: None,
        least: None,
        negative: false,
    };
    error().if_negative(text)?;
    let (number, unit) = split_number(text);
    let value = Decimal::parse(number).ok_or_else(error)?;
    let nanos_per_unit: u128 = match unit {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "" | "s" | "sec" => 1_000_000_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        "d" | "day" | "days" => 86_400_000_000_000,
        "w" | "week" | "weeks" => 604_800_000_000_000,
        _ => return Err(error()),
    };
    let nanos = value
        .times_rounded(nanos_per_unit)
        .ok_or_else(|| error().too_large("584 years (2^64 ns)"))?;
    Ok(Duration::from_nanos(nanos))
}

/// Prints a duration in the unit that keeps three to four significant digits (`143 ms`,
/// `0.8 us`, `12.3 s`).
pub fn format_duration(d: Duration) -> String {
    format_seconds(d.as_secs_f64())
}

/// Prints a time in seconds in s, ms, us or ns, whichever reads best.
pub fn format_seconds(seconds: f64) -> String {
    let (value, unit) = if seconds >= 1.0 {
        (seconds, "s")
    } else if seconds >= 1e-3 {
        (seconds * 1e3, "ms")
    } else if seconds >= 1e-6 {
        (seconds * 1e6, "us")
    } else {
        (seconds * 1e9, "ns")
    };
    format!("{} {unit}", significant(value, 4))
}

/// `value` with `digits` significant digits, trailing zeros removed.
pub fn significant(value: f64, digits: usize) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let magnitude = value.abs().log10().floor() as i32;
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// `1250000` as `1,250,000`: long figures that a reader checks by hand need separators.
pub fn group_digits(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The unit a rate is printed in: iperf's and ttcp's `-f` letters.
///
/// Lowercase letters are bits per second with decimal prefixes (`k` = kbit/s); uppercase are
/// bytes per second with binary prefixes (`K` = KiB/s, 1024 bytes), as iperf prints them.
/// `kB`, `MB`, `GB` select decimal bytes, and `a` (the default) picks a decimal bit prefix
/// that suits the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum RateFormat {
    /// Pick the decimal bit/s prefix that suits the value.
    #[default]
    Adaptive,
    /// bit/s.
    Bits,
    /// kbit/s (1000).
    Kilobits,
    /// Mbit/s.
    Megabits,
    /// Gbit/s.
    Gigabits,
    /// Tbit/s.
    Terabits,
    /// B/s.
    Bytes,
    /// KiB/s (1024).
    Kibibytes,
    /// MiB/s.
    Mebibytes,
    /// GiB/s.
    Gibibytes,
    /// kB/s (1000).
    Kilobytes,
    /// MB/s.
    Megabytes,
    /// GB/s.
    Gigabytes,
}

impl FromStr for RateFormat {
    type Err = ParseUnitError;

    fn from_str(text: &str) -> Result<RateFormat, ParseUnitError> {
        Ok(match text {
            "a" | "auto" => RateFormat::Adaptive,
            "b" => RateFormat::Bits,
            "k" => RateFormat::Kilobits,
            "m" => RateFormat::Megabits,
            "g" => RateFormat::Gigabits,
            "t" => RateFormat::Terabits,
            "B" => RateFormat::Bytes,
            "K" | "KiB" => RateFormat::Kibibytes,
            "M" | "MiB" => RateFormat::Mebibytes,
            "G" | "GiB" => RateFormat::Gibibytes,
            "kB" => RateFormat::Kilobytes,
            "MB" => RateFormat::Megabytes,
            "GB" => RateFormat::Gigabytes,
            _ => {
                return Err(ParseUnitError {
                    input: text.to_string(),
                    what: "rate format",
                    expected: "a (auto), b, k, m, g, t (bit/s, decimal) or B, K, M, G (bytes/s, \
                               binary: KiB/s) or kB, MB, GB (bytes/s, decimal)",
                    example: "-f m, -f K, -f MB",
                    largest: None,
                    least: None,
                    negative: false,
                });
            }
        })
    }
}

impl RateFormat {
    /// Divisor from bits per second, and the unit label.
    fn scale(self, bits_per_second: f64) -> (f64, &'static str) {
        match self {
            RateFormat::Adaptive => {
                let b = bits_per_second.abs();
                if b >= 1e12 {
                    (1e12, "Tbit/s")
                } else if b >= 1e9 {
                    (1e9, "Gbit/s")
                } else if b >= 1e6 {
                    (1e6, "Mbit/s")
                } else if b >= 1e3 {
                    (1e3, "kbit/s")
                } else {
                    (1.0, "bit/s")
                }
            }
            RateFormat::Bits => (1.0, "bit/s"),
            RateFormat::Kilobits => (1e3, "kbit/s"),
            RateFormat::Megabits => (1e6, "Mbit/s"),
            RateFormat::Gigabits => (1e9, "Gbit/s"),
            RateFormat::Terabits => (1e12, "Tbit/s"),
            RateFormat::Bytes => (8.0, "B/s"),
            RateFormat::Kibibytes => (8.0 * 1024.0, "KiB/s"),
            RateFormat::Mebibytes => (8.0 * 1024.0 * 1024.0, "MiB/s"),
            RateFormat::Gibibytes => (8.0 * 1024.0 * 1024.0 * 1024.0, "GiB/s"),
            RateFormat::Kilobytes => (8e3, "kB/s"),
            RateFormat::Megabytes => (8e6, "MB/s"),
            RateFormat::Gigabytes => (8e9, "GB/s"),
        }
    }

    /// The rate in this unit, as a number.
    pub fn value(self, bits_per_second: f64) -> f64 {
        bits_per_second / self.scale(bits_per_second).0
    }

    /// The unit label this format prints for a given rate (`Mbit/s`, `KiB/s`).
    pub fn unit(self, bits_per_second: f64) -> &'static str {
        self.scale(bits_per_second).1
    }

    /// `bits_per_second` printed in this unit with four significant digits.
    pub fn format(self, bits_per_second: f64) -> String {
        let (divisor, unit) = self.scale(bits_per_second);
        format!("{} {unit}", significant(bits_per_second / divisor, 4))
    }
}

/// Serde for `Option<Duration>` as seconds (a float, or null), for fields named `*_seconds`.
pub mod optional_seconds {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes seconds as a float.
    pub fn serialize<S: Serializer>(value: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => s.serialize_f64(d.as_secs_f64()),
            None => s.serialize_none(),
        }
    }

    /// Reads seconds from a float; negative or non-finite values are refused.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        Option::<f64>::deserialize(d)?
            .map(|secs| Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom))
            .transpose()
    }
}

/// A list of whole numbers as every command writes one: items separated by commas, each a
/// number (`64`), a range written `A-B` or `A..B` (both ends included), or a stepped range
/// `A..B:S` (every `S` from `A`, and `B` itself). `1-24`, `1..24` and `1..24:1` are the same
/// list. The result is sorted and without repeats; each value must lie in `min..=max`, and a
/// list longer than `max_items` is refused (a typing slip must not allocate gigabytes).
pub fn parse_number_list(
    text: &str,
    min: u64,
    max: u64,
    max_items: usize,
) -> Result<Vec<u64>, String> {
    let example = "such as 64, 1-24, 1..24 or 28..1500:64, joined by commas";
    let number = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|_| format!("{:?} is not a whole number ({example})", t.trim()))
    };
    let mut out: Vec<u64> = Vec::new();
    for part in text.split(',') {
        let part = part.trim();
        // `-1` would read as a range with no start; say what it is.
        if part
            .strip_prefix('-')
            .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        {
            return Err(format!(
                "{part:?} is negative: each value is {min} to {max} ({example})"
            ));
        }
        let (range, step) = match part.split_once(':') {
            Some((r, s)) => (r, number(s)?),
            None => (part, 1),
        };
        let (a, b) = if let Some((a, b)) = range.split_once("..") {
            (number(a)?, number(b)?)
        } else if let Some((a, b)) = range.split_once('-') {
            (number(a)?, number(b)?)
        } else {
            let n = number(range)?;
            if part.contains(':') {
                return Err(format!(
                    "{part:?}: a step needs a range (such as 28..1500:64)"
                ));
            }
            (n, n)
        };
        if step == 0 {
            return Err(format!("{part:?}: the step must be at least 1"));
        }
        if a > b {
            return Err(format!(
                "{part:?}: a range runs from low to high (such as {b}..{a})"
            ));
        }
        if a < min || b > max {
            return Err(format!("{part:?}: values run from {min} to {max}"));
        }
        let count = (b - a) / step + 1;
        if out.len() as u64 + count > max_items as u64 {
            return Err(format!("{text:?} names more than {max_items} values"));
        }
        let mut v = a;
        while v <= b {
            out.push(v);
            v += step;
        }
        if (b - a) % step != 0 {
            out.push(b);
        }
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}
