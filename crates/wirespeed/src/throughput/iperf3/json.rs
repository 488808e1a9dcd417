//! `--json-format iperf3`: a `tcp` or `udp` result in the layout `iperf3 -J` prints, so that the
//! dashboards and pipelines built on iperf3's JSON (perfSONAR's pScheduler, iperf3_exporter,
//! k8s-netperf) read wirespeed's runs unchanged.
//!
//! The layout follows iperf 3.12: `start` (`connected`, `connecting_to`, `test_start`, ...),
//! `intervals[].streams[]` and `intervals[].sum`, and `end` (`streams[].sender/receiver` for
//! TCP, `streams[].udp` and `sum` for UDP, `sum_sent`, `sum_received`,
//! `cpu_utilization_percent`), in iperf3's units: rates in bits per second, `rtt`, `rttvar`,
//! `min_rtt`, `max_rtt` and `mean_rtt` in microseconds, `jitter_ms` in milliseconds, windows
//! and `snd_cwnd` in bytes. Where wirespeed samples a figure only at the end of the test and
//! iperf3 per interval (`rttvar`, `snd_wnd`, `pmtu`), every interval carries the end-of-test
//! value; "socket" numbers are wirespeed's stream ids. A partial or failed run carries iperf3's
//! top-level `error`.

use serde_json::{Value, json};
use wirespeed_net::Protocol;
use wirespeed_net::report::{Interval, IntervalSum, Role, StreamReport};
use wirespeed_net::spec::{Amount, Direction, Flow, TestSpec};
use wirespeed_net::summary::{StreamPair, Sum};
use wirespeed_report::Document;

use crate::throughput::{Parameters, ThroughputResult};

fn micros(seconds: f64) -> u64 {
    (seconds * 1e6).round().max(0.0) as u64
}

fn host_and_port(address: &str) -> (String, u16) {
    match address.parse::<std::net::SocketAddr>() {
        Ok(a) => (a.ip().to_string(), a.port()),
        Err(_) => (address.to_string(), 0),
    }
}

/// Whether this end (the client) sends the streams it reports first.
fn client_sends(spec: &TestSpec) -> bool {
    spec.direction != Direction::Receive
}

fn udp_sum(sum: &Sum) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert(
        "jitter_ms".into(),
        json!(sum.jitter_seconds.unwrap_or(0.0) * 1e3),
    );
    m.insert("lost_packets".into(), json!(sum.lost.unwrap_or(0)));
    m.insert("packets".into(), json!(sum.datagrams.unwrap_or(0)));
    m.insert(
        "lost_percent".into(),
        json!(sum.lost_percent.unwrap_or(0.0)),
    );
    m
}

fn end_sum(sum: &Sum, protocol: Protocol, sender: bool, tcp_retransmits: bool) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("start".into(), json!(0));
    m.insert("end".into(), json!(sum.seconds));
    m.insert("seconds".into(), json!(sum.seconds));
    m.insert("bytes".into(), json!(sum.bytes));
    m.insert("bits_per_second".into(), json!(sum.bits_per_second));
    if protocol == Protocol::Tcp && tcp_retransmits {
        m.insert("retransmits".into(), json!(sum.retransmits.unwrap_or(0)));
    }
    if protocol == Protocol::Udp {
        m.extend(udp_sum(sum));
    }
    m.insert("sender".into(), json!(sender));
    Value::Object(m)
}

fn interval_sum(iv: &Interval, sum: &IntervalSum, protocol: Protocol, sender: bool) -> Value {
    let seconds = iv.end_seconds - iv.start_seconds;
    let mut m = serde_json::Map::new();
    m.insert("start".into(), json!(iv.start_seconds));
    m.insert("end".into(), json!(iv.end_seconds));
    m.insert("seconds".into(), json!(seconds));
    m.insert("bytes".into(), json!(sum.bytes));
    m.insert("bits_per_second".into(), json!(sum.bits_per_second));
    match protocol {
        Protocol::Tcp if sender => {
            m.insert("retransmits".into(), json!(sum.retransmits.unwrap_or(0)));
        }
        Protocol::Udp => {
            m.insert("packets".into(), json!(sum.datagrams.unwrap_or(0)));
        }
        Protocol::Tcp => {}
    }
    m.insert("omitted".into(), json!(iv.omitted));
    m.insert("sender".into(), json!(sender));
    Value::Object(m)
}

/// The sender's end-of-test TCP figures of stream `id`.
fn sender_report(end: &[StreamPair], id: u32) -> Option<&StreamReport> {
    end.iter()
        .find(|p| p.id == id)
        .and_then(|p| p.sender.as_ref())
}

fn intervals(result: &ThroughputResult, protocol: Protocol, sender: bool) -> Vec<Value> {
    result
        .intervals
        .iter()
        .map(|iv| {
            let seconds = iv.end_seconds - iv.start_seconds;
            let streams: Vec<Value> = iv
                .streams
                .iter()
                .map(|s| {
                    let mut m = serde_json::Map::new();
                    m.insert("socket".into(), json!(s.id));
                    m.insert("start".into(), json!(iv.start_seconds));
                    m.insert("end".into(), json!(iv.end_seconds));
                    m.insert("seconds".into(), json!(seconds));
                    m.insert("bytes".into(), json!(s.bytes));
                    m.insert("bits_per_second".into(), json!(s.bits_per_second));
                    let sends = s.role == Role::Sender;
                    match protocol {
                        Protocol::Tcp if sends => {
                            let info = sender_report(&result.end.streams, s.id)
                                .and_then(|r| r.tcp_info.as_ref());
                            m.insert("retransmits".into(), json!(s.retransmits.unwrap_or(0)));
                            m.insert("snd_cwnd".into(), json!(s.cwnd_bytes.unwrap_or(0)));
                            m.insert(
                                "snd_wnd".into(),
                                json!(info.and_then(|i| i.peer_window_bytes).unwrap_or(0)),
                            );
                            m.insert("rtt".into(), json!(s.rtt_seconds.map_or(0, micros)));
                            m.insert(
                                "rttvar".into(),
                                json!(info.map_or(0, |i| micros(i.rttvar_seconds))),
                            );
                            m.insert("pmtu".into(), json!(info.map_or(0, |i| i.pmtu_bytes)));
                        }
                        Protocol::Udp => {
                            m.insert("packets".into(), json!(s.datagrams.unwrap_or(0)));
                        }
                        Protocol::Tcp => {}
                    }
                    m.insert("omitted".into(), json!(iv.omitted));
                    m.insert("sender".into(), json!(sends));
                    Value::Object(m)
                })
                .collect();
            let own = if sender {
                iv.sum_sent.as_ref()
            } else {
                iv.sum_received.as_ref()
            };
            let zero = IntervalSum {
                bytes: 0,
                bits_per_second: 0.0,
                datagrams: None,
                retransmits: None,
            };
            let mut out = json!({
                "streams": streams,
                "sum": interval_sum(iv, own.unwrap_or(&zero), protocol, sender),
            });
            // `--bidir`: iperf3's client sums the way back apart, as what it received.
            if result.spec.direction == Direction::Both {
                out["sum_bidir_reverse"] = interval_sum(
                    iv,
                    iv.sum_received.as_ref().unwrap_or(&zero),
                    protocol,
                    false,
                );
            }
            out
        })
        .collect()
}

fn end_stream(pair: &StreamPair, result: &ThroughputResult, protocol: Protocol) -> Value {
    // iperf3's `sender` in both blocks says whether the client is the sending end: with
    // `--bidir`, of this stream (false on the streams that come back).
    let client_is_sender = match result.spec.direction {
        Direction::Both => pair.flow == Flow::Upload,
        _ => client_sends(&result.spec),
    };
    let side = |r: &StreamReport, sender: bool| end_side(pair, r, sender, client_is_sender, result);
    match protocol {
        Protocol::Tcp => {
            let mut m = serde_json::Map::new();
            if let Some(s) = &pair.sender {
                m.insert("sender".into(), side(s, true));
            }
            if let Some(r) = &pair.receiver {
                m.insert("receiver".into(), side(r, false));
            }
            Value::Object(m)
        }
        Protocol::Udp => json!({ "udp": udp_end_stream(pair) }),
    }
}

/// One end of a TCP stream in iperf3's `end.streams`: with the sender's `tcp_info` figures on
/// the sending end.
fn end_side(
    pair: &StreamPair,
    r: &StreamReport,
    sender: bool,
    client_is_sender: bool,
    result: &ThroughputResult,
) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("socket".into(), json!(pair.id));
    m.insert("start".into(), json!(0));
    m.insert("end".into(), json!(r.seconds));
    m.insert("seconds".into(), json!(r.seconds));
    m.insert("bytes".into(), json!(r.bytes));
    m.insert("bits_per_second".into(), json!(r.bits_per_second()));
    if sender && let Some(info) = &r.tcp_info {
        let rtts: Vec<f64> = result
            .intervals
            .iter()
            .flat_map(|iv| iv.streams.iter())
            .filter(|s| s.id == pair.id && s.role == Role::Sender)
            .filter_map(|s| s.rtt_seconds)
            .collect();
        let cwnd_max = result
            .intervals
            .iter()
            .flat_map(|iv| iv.streams.iter())
            .filter(|s| s.id == pair.id && s.role == Role::Sender)
            .filter_map(|s| s.cwnd_bytes)
            .max()
            .unwrap_or(u64::from(info.cwnd_segments) * u64::from(info.mss_bytes));
        let mean = if rtts.is_empty() {
            info.rtt_seconds
        } else {
            rtts.iter().sum::<f64>() / rtts.len() as f64
        };
        let max = rtts.iter().copied().fold(info.rtt_seconds, f64::max);
        m.insert("retransmits".into(), json!(info.retransmits));
        m.insert("max_snd_cwnd".into(), json!(cwnd_max));
        m.insert(
            "max_snd_wnd".into(),
            json!(info.peer_window_bytes.unwrap_or(0)),
        );
        m.insert("max_rtt".into(), json!(micros(max)));
        m.insert(
            "min_rtt".into(),
            json!(micros(info.min_rtt_seconds.unwrap_or(info.rtt_seconds))),
        );
        m.insert("mean_rtt".into(), json!(micros(mean)));
    }
    m.insert("sender".into(), json!(client_is_sender));
    Value::Object(m)
}

/// One UDP stream in iperf3's `end.streams`.
fn udp_end_stream(pair: &StreamPair) -> Value {
    // iperf3 reports one UDP block per stream: the sender's bytes and time with the
    // receiver's loss, jitter and order.
    let sent = pair.sender.as_ref().or(pair.receiver.as_ref());
    let got = pair.receiver.as_ref().and_then(|r| r.udp.as_ref());
    let mut m = serde_json::Map::new();
    m.insert("socket".into(), json!(pair.id));
    m.insert("start".into(), json!(0));
    let seconds = sent.map_or(0.0, |s| s.seconds);
    m.insert("end".into(), json!(seconds));
    m.insert("seconds".into(), json!(seconds));
    m.insert("bytes".into(), json!(sent.map_or(0, |s| s.bytes)));
    m.insert(
        "bits_per_second".into(),
        json!(sent.map_or(0.0, StreamReport::bits_per_second)),
    );
    m.insert(
        "jitter_ms".into(),
        json!(got.and_then(|u| u.jitter_seconds).unwrap_or(0.0) * 1e3),
    );
    m.insert(
        "lost_packets".into(),
        json!(got.and_then(|u| u.lost).unwrap_or(0)),
    );
    m.insert(
        "packets".into(),
        json!(
            pair.sender
                .as_ref()
                .and_then(|s| s.udp.as_ref())
                .map_or(0, |u| u.datagrams)
        ),
    );
    m.insert(
        "lost_percent".into(),
        json!(got.and_then(|u| u.lost_percent).unwrap_or(0.0)),
    );
    m.insert(
        "out_of_order".into(),
        json!(got.and_then(|u| u.out_of_order).unwrap_or(0)),
    );
    m.insert("sender".into(), json!(pair.sender.is_some()));
    Value::Object(m)
}

/// The document in iperf3's layout.
pub(crate) fn document(doc: &Document<Parameters, ThroughputResult>) -> Value {
    let result = &doc.result;
    let protocol = result.spec.protocol;
    let sender = client_sends(&result.spec);
    let mut out = json!({
        "start": start_block(doc),
        "intervals": intervals(result, protocol, sender),
        "end": end_block(result, protocol, sender),
    });
    let error = result.error.clone().or_else(|| {
        result
            .partial_reason
            .clone()
            .map(|r| format!("partial result: {r}"))
    });
    if let Some(e) = error {
        out["error"] = json!(e);
    }
    // iperf3 -T puts the title at the top of its JSON.
    if let Some(t) = &doc.parameters.title {
        out["title"] = json!(t);
    }
    out
}

/// iperf3's `start`: the connections, the host and the test asked for.
fn start_block(doc: &Document<Parameters, ThroughputResult>) -> Value {
    let result = &doc.result;
    let spec = &result.spec;
    let protocol = spec.protocol;
    let (remote_host, remote_port) = host_and_port(&doc.parameters.agent);
    let started = humantime::parse_rfc3339(&doc.started_at).ok();
    let timesecs = started
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs());
    let connected: Vec<Value> = result
        .end
        .streams
        .iter()
        .filter_map(|p| {
            let r = p.sender.as_ref().or(p.receiver.as_ref())?;
            let (local_host, local_port) = host_and_port(&r.socket.local_address);
            let (remote_host, remote_port) = host_and_port(&r.socket.peer_address);
            Some(json!({
                "socket": p.id,
                "local_host": local_host,
                "local_port": local_port,
                "remote_host": remote_host,
                "remote_port": remote_port,
            }))
        })
        .collect();
    let first = result
        .end
        .streams
        .iter()
        .find_map(|p| p.sender.as_ref().or(p.receiver.as_ref()));
    let (duration, bytes) = match spec.amount {
        Amount::Seconds(s) => (s.round() as u64, 0),
        Amount::Bytes(b) => (0, b),
    };
    let mut start = json!({
        "connected": connected,
        "version": format!("wirespeed {}", doc.wirespeed_version),
        "system_info": format!(
            "{} {} {} {}",
            if doc.host.os == "linux" { "Linux" } else { &doc.host.os },
            doc.host.hostname,
            doc.host.kernel,
            std::env::consts::ARCH
        ),
        "timestamp": {
            "time": started.map_or_else(String::new, httpdate),
            "timesecs": timesecs,
        },
        "connecting_to": { "host": remote_host, "port": remote_port },
        "cookie": "",
        "target_bitrate": spec.rate_bits_per_second,
        "sock_bufsize": spec.window_bytes.unwrap_or(0),
        "sndbuf_actual": first.map_or(0, |r| r.socket.send_buffer_granted_bytes),
        "rcvbuf_actual": first.map_or(0, |r| r.socket.receive_buffer_granted_bytes),
        "test_start": {
            "protocol": match protocol { Protocol::Tcp => "TCP", Protocol::Udp => "UDP" },
            "num_streams": spec.streams,
            "blksize": spec.length_bytes,
            "omit": spec.omit.as_secs_f64().round() as u64,
            "duration": duration,
            "bytes": bytes,
            "blocks": 0,
            "reverse": u8::from(spec.direction == Direction::Receive),
            "tos": 0,
            "target_bitrate": spec.rate_bits_per_second,
        },
    });
    if protocol == Protocol::Tcp {
        start["tcp_mss_default"] = json!(
            first
                .and_then(|r| r.tcp_info.as_ref())
                .map_or(0, |i| i.mss_bytes)
        );
    }
    start
}

/// iperf3's `end`: each stream, the sums and the CPU.
fn end_block(result: &ThroughputResult, protocol: Protocol, sender: bool) -> Value {
    let streams: Vec<Value> = result
        .end
        .streams
        .iter()
        .map(|p| end_stream(p, result, protocol))
        .collect();
    let cpu = &result.end.cpu_utilization_percent;
    let mut end = json!({
        "streams": streams,
        "sum_sent": end_sum(&result.end.sum_sent, protocol, true, true),
        // iperf 3.12 marks TCP's received sum as the sender's and UDP's as the receiver's.
        "sum_received": end_sum(
            &result.end.sum_received,
            protocol,
            if protocol == Protocol::Tcp { sender } else { !sender },
            false,
        ),
        "cpu_utilization_percent": {
            "host_total": cpu.host_total,
            "host_user": cpu.host_user,
            "host_system": cpu.host_system,
            "remote_total": cpu.remote_total.unwrap_or(0.0),
            "remote_user": cpu.remote_user.unwrap_or(0.0),
            "remote_system": cpu.remote_system.unwrap_or(0.0),
        },
    });
    if let (Some(sent), Some(received)) = (
        &result.end.sum_sent_bidir_reverse,
        &result.end.sum_received_bidir_reverse,
    ) {
        end["sum_sent_bidir_reverse"] = end_sum(sent, protocol, false, true);
        end["sum_received_bidir_reverse"] = end_sum(received, protocol, false, false);
    }
    match protocol {
        Protocol::Tcp => {
            let congestion = |pick: fn(&StreamPair) -> Option<&StreamReport>| {
                result
                    .end
                    .streams
                    .iter()
                    .find_map(|p| pick(p).and_then(|r| r.socket.congestion.clone()))
                    .unwrap_or_default()
            };
            end["sender_tcp_congestion"] = json!(congestion(|p| p.sender.as_ref()));
            end["receiver_tcp_congestion"] = json!(congestion(|p| p.receiver.as_ref()));
        }
        Protocol::Udp => {
            // iperf3's `sum`: the sender's bytes with the receiver's loss and jitter.
            let mut sum = end_sum(&result.end.sum_sent, protocol, sender, false);
            if let Value::Object(m) = &mut sum {
                m.extend(udp_sum(&result.end.sum_received));
                m.insert(
                    "packets".into(),
                    json!(result.end.sum_sent.datagrams.unwrap_or(0)),
                );
            }
            end["sum"] = sum;
        }
    }
    end
}

/// `Mon, 23 Nov 2026 23:32:35 GMT`, as iperf3's `start.timestamp.time`.
#[doc(hidden)]
pub fn httpdate(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const WEEKDAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        WEEKDAYS[(days % 7) as usize],
        day,
        MONTHS[(month - 1) as usize],
        year,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
