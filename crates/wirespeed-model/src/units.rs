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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Issue 33: a minus sign is refused as negative and a zero rate as below the least
    /// rate, not as a syntax the parser does not know.
    #[test]
    fn negative_and_zero_quantities_say_so() {
        let e = parse_duration("-1").unwrap_err().to_string();
        assert!(
            e.contains("'-1' is negative") && e.contains("duration"),
            "{e}"
        );
        let e = parse_duration("-0.5ms").unwrap_err().to_string();
        assert!(e.contains("negative"), "{e}");
        let e = "-10M".parse::<BitRate>().unwrap_err().to_string();
        assert!(e.contains("negative") && e.contains("bit rate"), "{e}");
        let e = "-64KiB".parse::<ByteSize>().unwrap_err().to_string();
        assert!(e.contains("negative") && e.contains("byte size"), "{e}");
        let e = "0".parse::<BitRate>().unwrap_err().to_string();
        assert!(
            e.contains("at least 1 bit/s") && !e.contains("is not a"),
            "{e}"
        );
        // A hyphen that starts no number is still a syntax error.
        let e = parse_duration("-x").unwrap_err().to_string();
        assert!(e.contains("is not a duration"), "{e}");
        let e = parse_number_list("-1", 1, 24, 24).unwrap_err();
        assert!(e.contains("negative") && e.contains("1 to 24"), "{e}");
        assert_eq!(
            parse_number_list("1-4", 1, 24, 24).unwrap(),
            vec![1, 2, 3, 4]
        );
    }

    #[test]
    fn rates_parse_exactly() {
        let bps = |s: &str| s.parse::<BitRate>().unwrap().bits_per_second();
        assert_eq!(bps("10M"), 10_000_000);
        assert_eq!(bps("10Mbit"), 10_000_000);
        assert_eq!(bps("10 Mbit/s"), 10_000_000);
        assert_eq!(bps("10Mbps"), 10_000_000);
        assert_eq!(bps("1G"), 1_000_000_000);
        assert_eq!(bps("56k"), 56_000);
        assert_eq!(bps("1.544M"), 1_544_000);
        assert_eq!(bps("1Mi"), 1_048_576);
        assert_eq!(bps("1.25MB/s"), 10_000_000);
        assert_eq!(bps("9600"), 9_600);
    }

    #[test]
    fn bad_rates_say_what_was_expected() {
        // "-5M" and "0" are well-formed: negative_and_zero_quantities_say_so.
        for bad in ["", "fast", "10X", "1.2.3M", "10Mfoo"] {
            let err = bad.parse::<BitRate>().unwrap_err().to_string();
            assert!(err.contains("is not a bit rate"), "{bad}: {err}");
            assert!(err.contains("for example"), "{bad}: {err}");
        }
    }

    #[test]
    fn sizes_keep_decimal_and_binary_apart() {
        let b = |s: &str| s.parse::<ByteSize>().unwrap().bytes();
        assert_eq!(b("1500"), 1500);
        assert_eq!(b("64K"), 64_000);
        assert_eq!(b("64kB"), 64_000);
        assert_eq!(b("64KiB"), 65_536);
        assert_eq!(b("64Ki"), 65_536);
        assert_eq!(b("8M"), 8_000_000);
        assert_eq!(b("8MiB"), 8_388_608);
        assert_eq!(b("1.5KiB"), 1536);
        assert!(
            "1.5".parse::<ByteSize>().is_err(),
            "half a byte is not a size"
        );
        assert!("12 parsecs".parse::<ByteSize>().is_err());
    }

    #[test]
    fn sizes_print_with_the_prefix_that_divides() {
        assert_eq!(ByteSize::from_bytes(1500).to_string(), "1500 B");
        assert_eq!(ByteSize::from_bytes(65_536).to_string(), "64 KiB");
        assert_eq!(ByteSize::from_bytes(8_000_000).to_string(), "8 MB");
        assert_eq!(ByteSize::from_bytes(1001).to_string(), "1001 B");
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(parse_duration("30us").unwrap(), Duration::from_micros(30));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(
            parse_duration("7d").unwrap(),
            Duration::from_secs(7 * 86_400)
        );
        assert_eq!(
            parse_duration("30d").unwrap(),
            Duration::from_secs(30 * 86_400)
        );
        assert_eq!(
            parse_duration("2w").unwrap(),
            Duration::from_secs(14 * 86_400)
        );
        assert_eq!(
            parse_duration("1.5d").unwrap(),
            Duration::from_secs(36 * 3_600)
        );
        assert_eq!(
            parse_duration("1 week").unwrap(),
            Duration::from_secs(7 * 86_400)
        );
        // The largest unit still overflows into the range error, not a wrap.
        assert!(
            parse_duration("1000000w")
                .unwrap_err()
                .to_string()
                .contains("584 years")
        );
        assert!(
            parse_duration("soon")
                .unwrap_err()
                .to_string()
                .contains("10s, 250ms")
        );
    }

    #[test]
    fn rate_formats_follow_iperf_letters() {
        let f = |s: &str| s.parse::<RateFormat>().unwrap();
        assert_eq!(f("m").format(10e6), "10 Mbit/s");
        assert_eq!(f("K").format(8.0 * 1024.0 * 1104.0), "1104 KiB/s");
        assert_eq!(f("kB").format(8e3), "1 kB/s");
        assert_eq!(RateFormat::Adaptive.format(1.544e6), "1.544 Mbit/s");
        assert!("x".parse::<RateFormat>().is_err());
    }

    #[test]
    fn digits_are_grouped_in_threes() {
        assert_eq!(group_digits(0), "0");
        assert_eq!(group_digits(999), "999");
        assert_eq!(group_digits(1_250_000), "1,250,000");
    }

    #[test]
    fn durations_print_in_a_readable_unit() {
        assert_eq!(format_seconds(0.142857), "142.9 ms");
        assert_eq!(format_seconds(8e-7), "800 ns");
        assert_eq!(format_seconds(12.34), "12.34 s");
    }

    #[test]
    fn number_lists_take_every_range_syntax() {
        let p = |t: &str| parse_number_list(t, 1, 2000, 1000);
        assert_eq!(p("1-4").unwrap(), vec![1, 2, 3, 4]);
        assert_eq!(p("1..4").unwrap(), vec![1, 2, 3, 4]);
        assert_eq!(p("28..200:64").unwrap(), vec![28, 92, 156, 200]);
        assert_eq!(p("8, 1-3, 2").unwrap(), vec![1, 2, 3, 8]);
        for bad in ["", "a", "4-1", "0-3", "1..3000", "1..5:0", "5:2", "1-3-5"] {
            assert!(p(bad).is_err(), "{bad}");
        }
        assert!(parse_number_list("1..100000", 1, 1_000_000, 1000).is_err());
    }

    proptest! {
        /// `A-B`, `A..B` and `A..B:1` are one list; a stepped range ends at `B`.
        #[test]
        fn range_syntaxes_agree(a in 1u64..500, len in 0u64..200, step in 1u64..50) {
            let b = a + len;
            let p = |t: String| parse_number_list(&t, 1, 1000, 10_000).unwrap();
            let dash = p(format!("{a}-{b}"));
            prop_assert_eq!(&dash, &(a..=b).collect::<Vec<_>>());
            prop_assert_eq!(&p(format!("{a}..{b}")), &dash);
            prop_assert_eq!(&p(format!("{a}..{b}:1")), &dash);
            let stepped = p(format!("{a}..{b}:{step}"));
            prop_assert_eq!(stepped.first().copied(), Some(a));
            prop_assert_eq!(stepped.last().copied(), Some(b));
            prop_assert!(stepped.windows(2).all(|w| w[1] - w[0] <= step));
            let listed = dash.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
            prop_assert_eq!(p(listed), dash);
        }
    }

    proptest! {
        #[test]
        fn rate_print_parse_round_trips(bps in 1u64..=u64::MAX / 1024) {
            let rate = BitRate::from_bits_per_second(bps);
            prop_assert_eq!(rate.to_string().parse::<BitRate>().unwrap(), rate);
        }

        #[test]
        fn size_print_parse_round_trips(bytes in 0u64..=u64::MAX / 1024) {
            let size = ByteSize::from_bytes(bytes);
            prop_assert_eq!(size.to_string().parse::<ByteSize>().unwrap(), size);
        }

        #[test]
        fn binary_prefix_is_1024_times(n in 0u64..1_000_000) {
            let kib: ByteSize = format!("{n}KiB").parse().unwrap();
            let kb: ByteSize = format!("{n}kB").parse().unwrap();
            prop_assert_eq!(kib.bytes(), n * 1024);
            prop_assert_eq!(kb.bytes(), n * 1000);
        }

        #[test]
        fn duration_nanos_round_trip(ns in 0u64..10_000_000_000_000) {
            let d = parse_duration(&format!("{ns}ns")).unwrap();
            prop_assert_eq!(d.as_nanos(), u128::from(ns));
        }
    }

    #[test]
    fn a_figure_too_large_is_out_of_range_not_another_syntax() {
        let e = parse_duration("99999999999999s").unwrap_err().to_string();
        assert!(e.contains("out of range for a duration"), "{e}");
        assert!(!e.contains("is not a duration"), "{e}");
        let e = "99999999999999999999T"
            .parse::<BitRate>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("out of range for a bit rate"), "{e}");
        let e = "99999999999GiB"
            .parse::<ByteSize>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("out of range for a byte size"), "{e}");
        // A fraction of a byte is a syntax problem, not a range one.
        let e = "1.5".parse::<ByteSize>().unwrap_err().to_string();
        assert!(e.contains("is not a byte size"), "{e}");
        assert!(
            parse_duration("ten")
                .unwrap_err()
                .to_string()
                .contains("is not a duration")
        );
    }
}
