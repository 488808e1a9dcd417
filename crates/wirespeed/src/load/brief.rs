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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Stats;

    fn stats(bits_per_second: f64, delay: f64, excess: Option<f64>) -> Stats {
        Stats {
            bits_per_second,
            bits_per_second_std_dev: 0.0,
            packets_per_second: bits_per_second / 8.0 / 64.0,
            packets_per_second_std_dev: 0.0,
            delay_mean_seconds: delay,
            delay_std_dev_seconds: 0.0,
            ideal_delay_seconds: None,
            excess_delay_seconds: excess,
            jain_fairness: 0.9987,
            per_host_bits_per_second: Vec::new(),
        }
    }

    fn row(hosts: usize, measured: Option<Stats>, complete: bool) -> Row {
        Row {
            lengths: if complete { "64" } else { "6/2" }.into(),
            hosts,
            reporting_hosts: hosts - usize::from(!complete),
            complete,
            measured,
            delay_source: None,
            loss_at_sink: Some(0.00125),
            model_shared_10mbit: Some(stats(8.9e6, 2.0e-4, None)),
            per_host: Vec::new(),
        }
    }

    #[test]
    fn one_line_per_test_with_the_model_beside_it() {
        let r = LoadResult {
            results_file: None,
            rows: vec![
                row(1, Some(stats(9.38e6, 1.234e-4, None)), true),
                // A tiny negative excess is rounding of nothing, shown as 0.
                row(2, Some(stats(1.8e7, 2.5e-4, Some(-1.973e-20))), true),
                row(3, None, false),
            ],
            rate_format: RateFormat::Adaptive,
        };
        assert_eq!(
            r.headline(RateFormat::Adaptive),
            [
                "load: 1 host, 64-byte packets: 9.38 Mbit/s, 18,320 packets/s, delay 123.4 us, loss 0.125%; model of a shared 10 Mbit/s segment: 8.9 Mbit/s, delay 200 us",
                "load: 2 hosts, 64-byte packets: 18 Mbit/s, 35,156 packets/s, delay 250 us (excess 0 s), Jain fairness 0.999, loss 0.125%; model of a shared 10 Mbit/s segment: 8.9 Mbit/s, delay 200 us",
                "load: 3 hosts, length mix 6/2: no host reported, loss 0.125%; model of a shared 10 Mbit/s segment: 8.9 Mbit/s, delay 200 us (incomplete: 2 of 3 hosts reported)",
            ]
        );
        let none = LoadResult {
            results_file: None,
            rows: Vec::new(),
            rate_format: RateFormat::Adaptive,
        };
        assert_eq!(
            none.headline(RateFormat::Adaptive),
            ["load: no test finished"]
        );
    }
}
