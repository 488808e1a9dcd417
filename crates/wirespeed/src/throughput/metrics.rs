//! `tcp`/`udp --metrics-file`: what each direction carried, per stream, and at what cost.

use wirespeed_net::spec::Flow;
use wirespeed_net::summary::Sum;

use crate::common::metrics::{Exposition, Metrics};
use crate::throughput::ThroughputResult;
use crate::throughput::analysis::LinkRate;

fn direction(flow: Flow) -> &'static str {
    match flow {
        Flow::Upload => "upload",
        Flow::Download => "download",
    }
}

fn sums(m: &mut Exposition, sent: &Sum, received: &Sum, flow: Flow) {
    let d = [("direction", direction(flow))];
    m.gauge(
        "received_bits_per_second",
        "payload rate the receiving end counted, per direction (upload: client to agent)",
        &d,
        received.bits_per_second,
    );
    m.gauge(
        "sent_bits_per_second",
        "payload rate the sending end wrote, per direction",
        &d,
        sent.bits_per_second,
    );
    m.gauge(
        "received_bytes",
        "payload bytes the receiving end counted, per direction",
        &d,
        received.bytes as f64,
    );
    m.gauge(
        "sent_bytes",
        "payload bytes the sending end wrote, per direction",
        &d,
        sent.bytes as f64,
    );
    m.gauge(
        "duration_seconds",
        "the receiving end's longest stream time, per direction",
        &d,
        received.seconds,
    );
    m.maybe(
        "retransmitted_segments",
        "TCP segments the sender retransmitted, per direction",
        &d,
        sent.retransmits.map(|r| r as f64),
    );
    m.maybe(
        "sent_datagrams",
        "UDP datagrams sent, per direction",
        &d,
        sent.datagrams.map(|r| r as f64),
    );
    m.maybe(
        "lost_datagrams",
        "UDP datagrams the receiver found missing, per direction",
        &d,
        received.lost.map(|r| r as f64),
    );
    m.maybe(
        "lost_ratio",
        "UDP datagrams lost over those sent, per direction",
        &d,
        received.lost_percent.map(|p| p / 100.0),
    );
    m.maybe(
        "jitter_seconds",
        "UDP receiver's RFC 3550 jitter (mean of the streams), per direction",
        &d,
        received.jitter_seconds,
    );
}

impl Metrics for ThroughputResult {
    fn metrics(&self, m: &mut Exposition) {
        let end = &self.end;
        // The primary direction is the first stream's (upload unless -R); --bidir adds download.
        let primary = end.streams.first().map_or(Flow::Upload, |s| s.flow);
        sums(m, &end.sum_sent, &end.sum_received, primary);
        if let (Some(s), Some(r)) = (&end.sum_sent_bidir_reverse, &end.sum_received_bidir_reverse) {
            sums(m, s, r, Flow::Download);
        }
        for pair in &end.streams {
            let id = pair.id.to_string();
            let labels = [("direction", direction(pair.flow)), ("stream", id.as_str())];
            if let Some(r) = &pair.receiver {
                m.gauge(
                    "stream_received_bits_per_second",
                    "payload rate the receiving end counted, per stream",
                    &labels,
                    r.bits_per_second(),
                );
            }
            if let Some(info) = pair.sender.as_ref().and_then(|s| s.tcp_info.as_ref()) {
                m.gauge(
                    "stream_round_trip_seconds",
                    "the sender's smoothed TCP round-trip time at the end, per stream",
                    &labels,
                    info.rtt_seconds,
                );
                m.gauge(
                    "stream_congestion_window_segments",
                    "the sender's congestion window at the end, per stream",
                    &labels,
                    f64::from(info.cwnd_segments),
                );
            }
        }
        let cpu = &end.cpu_utilization_percent;
        m.gauge(
            "cpu_utilization_ratio",
            "CPU time over wall time (1 = one core busy), per end",
            &[("end", "client")],
            cpu.host_total / 100.0,
        );
        m.maybe(
            "cpu_utilization_ratio",
            "CPU time over wall time (1 = one core busy), per end",
            &[("end", "agent")],
            cpu.remote_total.map(|p| p / 100.0),
        );
        let link = match &self.link_rate {
            LinkRate::Given { bits_per_second } => Some((*bits_per_second, "given")),
            LinkRate::Lab {
                bits_per_second, ..
            } => Some((*bits_per_second, "lab")),
            LinkRate::Nic {
                bits_per_second, ..
            } => Some((*bits_per_second, "nic")),
            LinkRate::Unknown { .. } => None,
        };
        if let Some((bps, source)) = link {
            m.gauge(
                "link_rate_bits_per_second",
                "the link rate the verdict compares with, and where it comes from",
                &[("source", source)],
                bps as f64,
            );
        }
        m.gauge(
            "queued_seconds",
            "how long the test waited for another to end on an exclusive agent",
            &[],
            self.queued_seconds,
        );
        m.flag(
            "partial",
            "1 when the test did not run whole (its figures are what was counted)",
            &[],
            self.partial,
        );
    }
}
