//! `load --brief`: one line per test (hosts x packet lengths), the seed's figures that answer
//! "what does this many hosts' load give?": the rate carried, packets per second, the mean
//! transmission delay and how fairly the hosts shared, beside the model of a shared segment.

use wirespeed_model::RateFormat;
use wirespeed_model::units::{format_seconds, group_digits, significant};

use super::{LoadResult, Row};
use crate::common::brief::Headline;

impl Headline for LoadResult {
    fn headline(&self, format: RateFormat) -> Vec<String> {
        if self.rows.is_empty() {
            return vec!["load: no test finished".into()];
        }
        self.rows.iter().map(|r| row_line(r, format)).collect()
    }
}

/// A delay the way the table prints it: 0 for what rounding leaves of nothing, a sign kept.
fn delay(seconds: f64) -> String {
    if !seconds.is_finite() {
        "n/a".into()
    } else if seconds.abs() < 1e-9 {
        "0 s".into()
    } else if seconds < 0.0 {
        format!("-{}", format_seconds(-seconds))
    } else {
        format_seconds(seconds)
    }
}

fn row_line(r: &Row, format: RateFormat) -> String {
    // One length is a size in bytes; a mix (the seed's `6/2`: six 64-byte packets to two of
    // 1536) is named as the command took it.
    let lengths = match r.lengths.parse::<u64>() {
        Ok(bytes) => format!("{bytes}-byte packets"),
        Err(_) => format!("length mix {}", r.lengths),
    };
    let mut line = format!(
        "load: {} host{}, {lengths}: ",
        r.hosts,
        if r.hosts == 1 { "" } else { "s" },
    );
    match &r.measured {
        Some(m) => {
            line.push_str(&format!(
                "{}, {} packets/s, delay {}",
                format.format(m.bits_per_second),
                group_digits(m.packets_per_second.round() as u64),
                delay(m.delay_mean_seconds)
            ));
            if let Some(e) = m.excess_delay_seconds {
                line.push_str(&format!(" (excess {})", delay(e)));
            }
            if r.hosts > 1 {
                line.push_str(&format!(", Jain fairness {:.3}", m.jain_fairness));
            }
        }
        None => line.push_str("no host reported"),
    }
    if let Some(loss) = r.loss_at_sink {
        line.push_str(&format!(", loss {}%", significant(loss * 100.0, 3)));
    }
    if let Some(p) = &r.model_shared_10mbit {
        line.push_str(&format!(
            "; model of a shared 10 Mbit/s segment: {}, delay {}",
            format.format(p.bits_per_second),
            delay(p.delay_mean_seconds)
        ));
    }
    if !r.complete {
        line.push_str(&format!(
            " (incomplete: {} of {} hosts reported)",
            r.reporting_hosts, r.hosts
        ));
    }
    line
}
