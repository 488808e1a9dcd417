//! `diagnose --metrics-file`: each interface's rates, error counts and link settings, labelled
//! by the interface's name; with --peer, each direction's transfer.

use wirespeed_model::diagnose::Severity;
use wirespeed_model::envelope::Duplex;

use crate::common::metrics::{Exposition, Metrics};
use crate::diagnose::DiagnoseReport;
use crate::diagnose::result::InterfaceReport;

impl Metrics for DiagnoseReport {
    fn metrics(&self, m: &mut Exposition) {
        for i in &self.interfaces {
            interface_metrics(m, i);
        }
        if let Some(peer) = &self.peer {
            for t in [&peer.to_peer, &peer.from_peer] {
                let labels = [("direction", t.direction.as_str())];
                m.gauge(
                    "peer_transfer_bits_per_second",
                    "the TCP transfer's rate to or from the peer agent",
                    &labels,
                    t.bits_per_second,
                );
                m.maybe(
                    "peer_transfer_retransmitted_segments",
                    "segments the transfer's sender retransmitted",
                    &labels,
                    t.retransmits.map(|r| r as f64),
                );
            }
        }
    }
}

/// One interface's figures, labelled by its name: rates, what its counters grew by, its link
/// settings and its findings by severity.
fn interface_metrics(m: &mut Exposition, i: &InterfaceReport) {
    let name = i.evidence.name.as_str();
    let iface = [("interface", name)];
    let d = &i.diagnosis;
    m.flag("healthy", "1 when no finding is a fault", &iface, d.healthy);
    for (direction, bits, packets) in [
        (
            "receive",
            d.rates.rx_bits_per_second,
            d.rates.rx_packets_per_second,
        ),
        (
            "transmit",
            d.rates.tx_bits_per_second,
            d.rates.tx_packets_per_second,
        ),
    ] {
        let labels = [("interface", name), ("direction", direction)];
        m.gauge(
            "rate_bits_per_second",
            "the interface's rate over the interval",
            &labels,
            bits,
        );
        m.gauge(
            "packets_per_second",
            "frames per second over the interval",
            &labels,
            packets,
        );
    }
    m.gauge(
        "errors_per_second",
        "PHY and MAC errors per second over the interval",
        &iface,
        d.rates.errors_per_second,
    );
    m.gauge(
        "overflows_per_second",
        "drops and overruns per second over the interval",
        &iface,
        d.rates.overflows_per_second,
    );
    let delta = &d.delta;
    for (counter, v) in [
        ("collisions", Some(delta.collisions)),
        ("fcs_errors", Some(delta.fcs_errors)),
        ("late_collisions", delta.late_collisions),
        ("tx_carrier_errors", Some(delta.tx_carrier_errors)),
        ("rx_dropped", Some(delta.rx_dropped)),
        ("tx_dropped", Some(delta.tx_dropped)),
    ] {
        m.maybe(
            "interval_events",
            "how much a MAC or drop counter grew over the interval",
            &[("interface", name), ("counter", counter)],
            v.map(|v| v as f64),
        );
    }
    m.gauge(
        "interval_seconds",
        "the time between the two readings of the counters",
        &iface,
        i.evidence.interval_seconds,
    );
    let link = &i.evidence.link;
    m.maybe(
        "link_speed_bits_per_second",
        "the speed the driver reports",
        &iface,
        link.speed_mbps.map(|s| f64::from(s) * 1e6),
    );
    m.maybe(
        "link_full_duplex",
        "1 when the driver reports full duplex, 0 half",
        &iface,
        link.duplex.map(|x| f64::from(u8::from(x == Duplex::Full))),
    );
    for (severity, word) in [
        (Severity::Info, "info"),
        (Severity::Warning, "warning"),
        (Severity::Fault, "fault"),
    ] {
        m.gauge(
            "findings",
            "findings of each severity",
            &[("interface", name), ("severity", word)],
            d.findings.iter().filter(|f| f.severity == severity).count() as f64,
        );
    }
}
