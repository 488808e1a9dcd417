//! `tcp --brief`, `udp --brief`: the received rate against the envelope ceiling, in one line.

use wirespeed_model::RateFormat;
use wirespeed_net::Protocol;
use wirespeed_net::spec::{Direction, Flow};
use wirespeed_net::summary::Sum;

use super::ThroughputResult;
use super::analysis;
use crate::common::brief::{Headline, percent};

impl Headline for ThroughputResult {
    fn headline(&self, format: RateFormat) -> Vec<String> {
        let command = match self.spec.protocol {
            Protocol::Tcp => "tcp",
            Protocol::Udp => "udp",
        };
        let mut parts = vec![self.direction_line(&self.end.sum_received, Flow::Upload, format)];
        if self.spec.direction == Direction::Both
            && let Some(back) = &self.end.sum_received_bidir_reverse
        {
            parts.push(format!(
                "back: {}",
                self.direction_line(back, Flow::Download, format)
            ));
        }
        let mut line = format!("{command}: {}", parts.join("; "));
        if let Some(r) = &self.repeat {
            line.push_str(&format!(
                "; median of {} runs {}",
                r.values.len(),
                format.format(r.median)
            ));
        }
        if let Some(why) = &self.partial_reason {
            line.push_str(&format!(" (partial: {why})"));
        }
        vec![line]
    }
}

impl ThroughputResult {
    /// One direction: what arrived, the datagrams lost (UDP), and the ceiling it is held to.
    fn direction_line(&self, sum: &Sum, flow: Flow, format: RateFormat) -> String {
        // Without -R the test's only direction is the client's upload; with it, the download.
        let flow = match (self.spec.direction, flow) {
            (Direction::Receive, _) => Flow::Download,
            (_, f) => f,
        };
        let mut line = format!("{} received", format.format(sum.bits_per_second));
        if let (Some(datagrams), Some(lost)) = (sum.datagrams, sum.lost) {
            line.push_str(&format!(
                ", {lost} of {datagrams} datagrams lost ({})",
                percent(lost as f64, datagrams as f64)
            ));
            if let Some(j) = sum.jitter_seconds {
                line.push_str(&format!(", jitter {}", crate::common::brief::ms(j * 1e3)));
            }
        }
        match analysis::brief_ceiling(self, flow) {
            Some((ceiling, whence)) => line.push_str(&format!(
                ", {} of the {} ceiling ({whence})",
                percent(sum.bits_per_second, ceiling),
                format.format(ceiling)
            )),
            None => line.push_str(" (no link rate to compare with: --link-rate gives one)"),
        }
        line
    }
}
