//! `model --metrics-file`: the delays in seconds (the model files speak milliseconds), each
//! labelled by the group, hop or component it belongs to.

use wirespeed_model::delay::Cost;

use crate::common::metrics::{Exposition, Metrics};
use crate::model::{CompareReport, FitReport, PredictReport};

const MS: f64 = 1e-3;

fn cost(m: &mut Exposition, prefix: &str, labels: &[(&'static str, &str)], c: &Cost) {
    m.gauge(
        &format!("{prefix}fixed_delay_seconds"),
        "the size-independent part of the one-way delay",
        labels,
        c.fixed_ms * MS,
    );
    m.gauge(
        &format!("{prefix}delay_seconds_per_byte"),
        "the one-way delay each byte adds",
        labels,
        c.per_byte_ms * MS,
    );
}

impl Metrics for PredictReport {
    fn metrics(&self, m: &mut Exposition) {
        let p = &self.prediction;
        for row in p.rows.iter().chain([&p.total]) {
            cost(m, "predicted_", &[("group", row.group.as_str())], &row.cost);
            for (size, ms) in p.sizes.iter().zip(&row.at_sizes_ms) {
                m.gauge(
                    "predicted_delay_seconds",
                    "the predicted one-way delay of a packet of this size, per group",
                    &[
                        ("group", row.group.as_str()),
                        ("size_bytes", &size.to_string()),
                    ],
                    ms * MS,
                );
            }
        }
    }
}

impl Metrics for CompareReport {
    fn metrics(&self, m: &mut Exposition) {
        for named in &self.segments {
            let s = &named.segment;
            let hop = s.hop.to_string();
            cost(m, "expected_", &[("hop", hop.as_str())], &s.expected);
            cost(m, "measured_", &[("hop", hop.as_str())], &s.measured);
            m.flag(
                "anomalous",
                "1 when the segment to this hop is outside tolerance of the model",
                &[("hop", hop.as_str())],
                s.anomalous,
            );
        }
    }
}

impl Metrics for FitReport {
    fn metrics(&self, m: &mut Exposition) {
        for (tag, c) in &self.components {
            cost(m, "fitted_", &[("component", tag.as_str())], &c.cost());
        }
    }
}
