//! `envelope --metrics-file`: the ceiling and what it is made of.

use crate::common::metrics::{Exposition, Metrics};
use crate::envelope::EnvelopeReport;

impl Metrics for EnvelopeReport {
    fn metrics(&self, m: &mut Exposition) {
        let e = &self.envelope;
        m.gauge(
            "link_rate_bits_per_second",
            "the link's signalling rate the envelope is computed for",
            &[],
            e.params.rate.bits_per_second() as f64,
        );
        m.gauge(
            "goodput_bits_per_second",
            "the payload rate ceiling of the link after every header, gap and ACK",
            &[],
            e.goodput_bits_per_second,
        );
        m.gauge(
            "efficiency_ratio",
            "payload bytes over wire bytes in one cycle",
            &[],
            e.efficiency,
        );
        m.gauge(
            "segment_payload_bytes",
            "payload bytes per full-sized segment or datagram",
            &[],
            e.payload_bytes as f64,
        );
        m.gauge(
            "data_frames_per_second",
            "full-sized data frames per second at the ceiling",
            &[],
            e.frames_per_second,
        );
        m.gauge(
            "minimum_size_frames_per_second",
            "the link's rate in minimum-sized frames",
            &[],
            e.min_frames_per_second,
        );
        m.gauge(
            "serialization_seconds_per_byte",
            "time on the wire per byte",
            &[],
            e.seconds_per_byte,
        );
        m.gauge(
            "serialization_seconds_per_frame",
            "time on the wire per full-sized data frame",
            &[],
            e.seconds_per_frame,
        );
        if let Some(pipe) = &e.pipe {
            m.gauge(
                "round_trip_seconds",
                "the round-trip time the pipe is sized for",
                &[],
                pipe.rtt_seconds,
            );
            m.gauge(
                "bandwidth_delay_payload_bytes",
                "payload in flight that keeps the link full over one round trip",
                &[],
                pipe.bdp_payload_bytes,
            );
        }
    }
}
