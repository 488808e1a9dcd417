//! `reproduce --metrics-file`: every compared figure in its base unit, the paper's and ours
//! side by side (`source`), labelled by the experiment, the comparison and the quantity, and
//! how many rows fell within their tolerance. A figure whose unit has no base-unit name
//! (`% of mean`) is left out rather than mislabelled.

use crate::common::metrics::{Exposition, Metrics, base_unit};
use crate::reproduce::{List, Reproduction, Verdict};

impl Metrics for Reproduction {
    fn metrics(&self, m: &mut Exposition) {
        let experiment = self.name.as_str();
        for (verdict, n) in [
            ("within", self.within),
            ("outside", self.outside),
            ("not_compared", self.rows - self.within - self.outside),
        ] {
            m.gauge(
                "rows",
                "compared figures, per verdict against the stated tolerance",
                &[("experiment", experiment), ("verdict", verdict)],
                n as f64,
            );
        }
        for c in &self.comparisons {
            for row in &c.rows {
                let Some((unit, factor)) = base_unit(&row.unit) else {
                    continue;
                };
                let name = format!("figure_{unit}");
                for (source, v) in [
                    ("ours", row.ours),
                    ("paper", row.paper),
                    ("configured", row.configured),
                ] {
                    m.maybe(
                        &name,
                        "a compared figure (the unit in the name): ours, the paper's, or the configured truth",
                        &[
                            ("experiment", experiment),
                            ("comparison", c.title.as_str()),
                            ("quantity", row.quantity.as_str()),
                            ("source", source),
                        ],
                        v.map(|v| v * factor),
                    );
                }
                if row.verdict != Verdict::NotCompared {
                    m.flag(
                        "within_tolerance",
                        "1 when our figure is within the stated tolerance of the paper's",
                        &[
                            ("experiment", experiment),
                            ("comparison", c.title.as_str()),
                            ("quantity", row.quantity.as_str()),
                        ],
                        row.verdict == Verdict::Within,
                    );
                }
            }
        }
    }
}

impl Metrics for List {
    fn metrics(&self, m: &mut Exposition) {
        for e in &self.reproductions {
            m.gauge(
                "available",
                "1 for each reproduction this build can run",
                &[("experiment", e.name)],
                1.0,
            );
        }
    }
}
