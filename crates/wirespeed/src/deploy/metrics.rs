//! `deploy --metrics-file`: what was planned (how long the mesh Job should take) and how many
//! manifests of each kind were written.

use std::collections::BTreeMap;

use crate::common::metrics::{Exposition, Metrics};
use crate::deploy::Manifests;

impl Metrics for Manifests {
    fn metrics(&self, m: &mut Exposition) {
        m.gauge(
            "predicted_mesh_seconds",
            "how long the Job's mesh should take, as the mesh plans it",
            &[],
            self.predicted_mesh_seconds,
        );
        m.gauge(
            "longest_mesh_seconds",
            "the longest the Job's mesh can take by its schedule",
            &[],
            self.longest_mesh_seconds,
        );
        let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
        for manifest in &self.manifests {
            let kind = manifest
                .get("kind")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("unknown");
            *kinds.entry(kind).or_default() += 1;
        }
        for (kind, n) in kinds {
            m.gauge(
                "manifests",
                "manifests written, per Kubernetes kind",
                &[("kind", kind)],
                n as f64,
            );
        }
    }
}
