//! `lab status --metrics-file`: each port's configuration and what its emulator counted,
//! labelled by the direction (sending and receiving node) and the sender's interface.

use crate::common::metrics::{Exposition, Metrics};
use crate::lab::StatusResult;

impl Metrics for StatusResult {
    fn metrics(&self, m: &mut Exposition) {
        match self {
            StatusResult::One {
                lab,
                uptime_seconds,
                ports,
                ..
            } => {
                m.gauge(
                    "uptime_seconds",
                    "time since the lab's emulator started",
                    &[("lab", lab.name.as_str())],
                    *uptime_seconds,
                );
                for p in ports {
                    let port = [
                        ("lab", lab.name.as_str()),
                        ("from", p.from.as_str()),
                        ("to", p.to.as_str()),
                        ("interface", p.interface.as_str()),
                    ];
                    let c = &p.counters;
                    m.gauge(
                        "rate_bits_per_second",
                        "the port's configured rate",
                        &port,
                        p.rate_bits_per_second as f64,
                    );
                    m.gauge(
                        "delay_seconds",
                        "the port's configured propagation delay",
                        &port,
                        p.delay_ns as f64 * 1e-9,
                    );
                    m.gauge(
                        "utilization_ratio",
                        "fraction of the time since start the wire was busy",
                        &port,
                        p.utilization,
                    );
                    m.gauge(
                        "frames_sent",
                        "frames the port released onto its wire since the lab started",
                        &port,
                        c.frames_out as f64,
                    );
                    m.gauge(
                        "sent_bytes",
                        "bytes the port released onto its wire since the lab started",
                        &port,
                        c.bytes_out as f64,
                    );
                    m.gauge(
                        "queue_bytes",
                        "bytes waiting in the port's queue now",
                        &port,
                        c.queue_bytes as f64,
                    );
                    m.gauge(
                        "collisions",
                        "collisions on a half-duplex medium since the lab started",
                        &port,
                        c.collisions as f64,
                    );
                    for (reason, n) in [
                        ("queue", c.drops_queue),
                        ("loss", c.drops_loss),
                        ("medium", c.drops_medium),
                        ("too_big", c.drops_too_big),
                        ("memory", c.drops_memory),
                    ] {
                        let mut labels = port.to_vec();
                        labels.push(("reason", reason));
                        m.gauge(
                            "dropped_frames",
                            "frames the port dropped since the lab started, per reason",
                            &labels,
                            n as f64,
                        );
                    }
                }
            }
            StatusResult::List { labs } => {
                m.gauge("labs", "labs recorded on this host", &[], labs.len() as f64);
                for l in labs {
                    m.flag(
                        "emulator_running",
                        "1 when the lab's emulator runs, 0 when only its leftovers remain",
                        &[("lab", l.lab.name.as_str())],
                        l.emulator_running,
                    );
                }
            }
        }
    }
}
