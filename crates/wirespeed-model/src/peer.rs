//! What a peer says, made safe to show (issue 32, finding 4).
//!
//! Text from the wire (an agent's refusal, a client's error, a stream's error, a software
//! name) reaches terminals and log files. A peer that writes `\n` forges whole lines there
//! ("session 99 ... completed") and one that writes `ESC [2J` clears the operator's screen.
//! [`escape`] is the one function every such string passes through before it is shown: it
//! keeps printable text as it is and writes every control character as an escape a reader
//! can see (`\n`, `\r`, `\t`, `\\` and `\xNN`), so one peer string is always one line of
//! plain text. Figures are checked by [`Figures`]: finite, not negative, and consistent with
//! each other, or refused naming the peer and the figure.

use std::fmt::Write;

/// `text` with every control character (C0, DEL, C1) written as a visible escape, and the
/// backslash doubled so that an escape cannot be forged either; at most `MAX_SHOWN` characters
/// (a peer string is one line of an error, not a page).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_SHOWN));
    for (i, c) in text.chars().enumerate() {
        if i == MAX_SHOWN {
            out.push_str("...");
            break;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            // Bidirectional overrides and isolates reorder what the reader sees.
            '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// The most characters of one peer string shown.
pub const MAX_SHOWN: usize = 1000;

/// A figure from a peer that cannot be true.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{peer} reported an impossible {figure}: {why}; its figures are not shown")]
pub struct Impossible {
    /// Who said it (`agent 127.0.0.1:5210`), escaped.
    pub peer: String,
    /// Which figure (`rate`, `bytes`, `latency`).
    pub figure: &'static str,
    /// What is wrong with it.
    pub why: String,
}

/// Checks a peer's figures one by one, naming the first impossible one.
#[derive(Debug)]
pub struct Figures<'a> {
    peer: &'a str,
}

impl<'a> Figures<'a> {
    /// Checks for `peer` (shown as given: pass an address or a name this end chose).
    pub fn of(peer: &'a str) -> Figures<'a> {
        Figures { peer }
    }

    fn refuse(&self, figure: &'static str, why: String) -> Impossible {
        Impossible {
            peer: escape(self.peer),
            figure,
            why,
        }
    }

    /// A quantity that must be finite and not negative.
    pub fn quantity(&self, figure: &'static str, value: f64) -> Result<(), Impossible> {
        if value.is_finite() && value >= 0.0 {
            Ok(())
        } else {
            Err(self.refuse(
                figure,
                format!("{value} is not a finite, non-negative number"),
            ))
        }
    }

    /// [`Figures::quantity`] when present.
    pub fn maybe(&self, figure: &'static str, value: Option<f64>) -> Result<(), Impossible> {
        value.map_or(Ok(()), |v| self.quantity(figure, v))
    }

    /// Answers cannot outnumber what was sent.
    pub fn answered(&self, sent: u64, answered: u64) -> Result<(), Impossible> {
        if answered <= sent {
            Ok(())
        } else {
            Err(self.refuse("probe count", format!("{answered} answered of {sent} sent")))
        }
    }

    /// Quantiles must be in order: min <= median <= p90 <= max (those present).
    pub fn ordered(
        &self,
        figure: &'static str,
        quantiles: &[Option<f64>],
    ) -> Result<(), Impossible> {
        let present: Vec<f64> = quantiles.iter().flatten().copied().collect();
        for &v in &present {
            self.quantity(figure, v)?;
        }
        if present.windows(2).all(|w| w[0] <= w[1]) {
            Ok(())
        } else {
            Err(self.refuse(
                figure,
                format!("its quantiles are out of order (min <= median <= max fails: {present:?})"),
            ))
        }
    }

    /// A rate must match the bytes moved in the time taken: `rate` bit/s over `seconds` is
    /// `bytes`, within 10% (intervals and rounding) plus one 64 KiB write, never more.
    pub fn rate(
        &self,
        rate_bits_per_second: f64,
        bytes: u64,
        seconds: f64,
    ) -> Result<(), Impossible> {
        self.quantity("rate", rate_bits_per_second)?;
        self.quantity("duration", seconds)?;
        if seconds <= 0.0 {
            return if rate_bits_per_second == 0.0 || bytes == 0 {
                Ok(())
            } else {
                Err(self.refuse("rate", format!("{rate_bits_per_second} bit/s in no time")))
            };
        }
        let implied = bytes as f64 * 8.0 / seconds;
        let slack = implied * 0.1 + 65_536.0 * 8.0 / seconds;
        if (rate_bits_per_second - implied).abs() <= slack {
            Ok(())
        } else {
            Err(self.refuse(
                "rate",
                format!(
                    "{rate_bits_per_second} bit/s, but {bytes} bytes in {seconds} s is {implied:.0} bit/s"
                ),
            ))
        }
    }
}
