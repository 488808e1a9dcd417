//! The verdicts of `latency`: what the load added to the probes' round trips, where it
//! waited, and what would shrink it. Each must hold under every load kind (TCP flows or a UDP
//! stream) and direction (issue 31): with load both ways a round trip crosses both
//! directions' queues, and under fq_codel the probes' own rise, not the queue the load's
//! flows build, says what the probes waited.

use std::net::SocketAddr;

use wirespeed_report::Document;

use wirespeed_model::RateFormat;

use super::{LatencyParams, LatencyResult, LoadDirection, ProbeKind, time_ms};

/// fq_codel's and CoDel's target sojourn time (RFC 8289 section 4.4; RFC 8290): a standing
/// queue above twice it is not "held near its target".
const AQM_TARGET_MS: f64 = 5.0;

/// The load in words for the header: TCP flows, or a UDP stream per flow at its rate, and the
/// direction (issue 31: under `--udp-load` the header said "TCP flow(s)").
pub(super) fn load_words(
    flows: u32,
    udp_load_bits_per_second: Option<u64>,
    direction: LoadDirection,
) -> String {
    let way = match direction {
        LoadDirection::Up => "up",
        LoadDirection::Down => "down",
        LoadDirection::Both => "each way",
    };
    match udp_load_bits_per_second {
        Some(bps) => format!(
            "{flows} UDP flow(s) of {} each, {way}",
            RateFormat::Adaptive.format(bps as f64)
        ),
        None => format!("{flows} TCP flow(s) {way}"),
    }
}

/// The UDP probes' medians, idle and loaded, and the rise the load added, ms.
pub(super) struct Rise {
    pub(super) idle_p50_ms: f64,
    pub(super) loaded_p50_ms: f64,
    pub(super) loaded_p99_ms: f64,
    pub(super) delay_ms: f64,
}

/// What the load added to the probes' median round trip, and the bytes it stands for. Loaded
/// one way, the rise waits in that direction's queue, at that direction's measured rate.
/// Loaded both ways, a round trip crosses both directions' queues: the rise is their sum, and
/// the round trips cannot split it, so each direction's figure is given as the most it could
/// hold (all of the rise in its queue, at its rate), never one sum at the faster rate (issue
/// 31: "147 kB standing in a queue" for two queues).
pub(super) fn rise_verdict(
    rise: &Rise,
    direction: LoadDirection,
    (up, down): (Option<f64>, Option<f64>),
    format: RateFormat,
    (location, remedy): (&str, &str),
) -> String {
    let bytes_at = |bps: f64| super::queues::bytes_text((rise.delay_ms / 1e3 * bps / 8.0).max(0.0));
    let medians = format!(
        "{} idle, {} loaded, p99 {}",
        time_ms(rise.idle_p50_ms),
        time_ms(rise.loaded_p50_ms),
        time_ms(rise.loaded_p99_ms)
    );
    let one_way = |bps: Option<f64>, name: &str| match bps.filter(|b| b.is_finite() && *b > 0.0) {
        Some(b) => format!(
            "at the {name}'s {} that is {} standing in its queue",
            format.format(b),
            bytes_at(b)
        ),
        None => format!("the {name}'s rate was not measured, so its bytes are not known"),
    };
    match direction {
        LoadDirection::Up | LoadDirection::Down => {
            let name = if direction == LoadDirection::Up {
                "upload"
            } else {
                "download"
            };
            let rate = if direction == LoadDirection::Up {
                up
            } else {
                down
            };
            format!(
                "the load added {} to the median UDP round trip ({medians}): {}; where: {location}; {remedy}",
                time_ms(rise.delay_ms),
                one_way(rate, name)
            )
        }
        LoadDirection::Both => format!(
            "the load added {} to the median UDP round trip ({medians}): loaded both ways, a round trip crosses both directions' queues, so that is their sum, which round trips cannot split; were it all one way's: {}; or {}; where: {location}; {remedy}",
            time_ms(rise.delay_ms),
            one_way(up, "upload"),
            one_way(down, "download")
        ),
    }
}

/// Whether the probes wait in a queue of `queue_ms` managed by `aqm`, judged by their own rise
/// (issue 31): fq_codel serves a sparse flow such as the probes' ahead of the load's queue, so
/// probes that rose by less than half of what the queue holds did not wait in it. Without a
/// measured rise, or with a single-queue discipline, every packet that leaves waits in it.
pub(super) fn probes_wait_in(aqm: Option<&str>, queue_ms: f64, probe_rise_ms: f64) -> bool {
    let fair = aqm.is_some_and(|a| a.starts_with("fq"));
    !(fair && probe_rise_ms.is_finite() && queue_ms.is_finite() && probe_rise_ms < 0.5 * queue_ms)
}

/// What would shrink an emulated link's queue of `queue_ms`, from its discipline and the
/// probes' own rise: "held near its target" only when it is (issue 31: said of a 30.75 ms
/// queue under fq_codel's 5 ms target, whose probes rose 0.7 ms).
pub(super) fn link_queue_remedy(aqm: Option<&str>, queue_ms: f64, probe_rise_ms: f64) -> String {
    match aqm {
        None => "an AQM on the link (aqm = \"fq_codel\" or \"codel\" in the lab file) keeps it near 5 ms; a shorter `queue` caps it".into(),
        Some(a) if queue_ms <= 2.0 * AQM_TARGET_MS => format!(
            "{a} already holds the standing queue near its {AQM_TARGET_MS:.0} ms target"
        ),
        Some(a) if !probes_wait_in(aqm, queue_ms, probe_rise_ms) => format!(
            "{a} lets the load's own flows keep {} standing, above its {AQM_TARGET_MS:.0} ms target, but serves the probes' sparse flow ahead of it (they rose {}): only the load waits; ECN on the load's flows or a shorter `queue` shortens its wait",
            time_ms(queue_ms),
            time_ms(probe_rise_ms)
        ),
        Some(a) => format!(
            "{a} holds {}, above its {AQM_TARGET_MS:.0} ms target, and the probes wait in it (they rose {}): a shorter `queue` caps it",
            time_ms(queue_ms),
            time_ms(probe_rise_ms)
        ),
    }
}

pub(super) fn verdicts(doc: &mut Document<LatencyParams, LatencyResult>) {
    let r = &doc.result;
    if let Some(why) = &r.partial_reason {
        doc.warnings
            .push(format!("partial result ({why}): no verdict"));
        return;
    }
    let udp = r.kinds.iter().find(|k| k.kind == ProbeKind::UdpEcho);
    let Some(udp) = udp.filter(|u| u.idle.p50_ms.is_finite() && u.loaded.p50_ms.is_finite()) else {
        doc.warnings.push(
            "no UDP echo answered in one of the phases: no latency verdict (is UDP to the agent blocked?)".into(),
        );
        return;
    };
    for k in &r.kinds {
        if k.loaded.probes > 0 && k.loaded.lost * 10 > k.loaded.probes {
            doc.warnings.push(format!(
                "{}: {} of {} probes unanswered under load",
                k.kind.label(),
                k.loaded.lost,
                k.loaded.probes
            ));
        }
    }
    if let Some(q) = &r.queue {
        // Below the idle phase's own spread the difference is noise, not a queue.
        let noise = (udp.idle.p90_ms - udp.idle.p50_ms).max(0.05);
        if q.delay_ms <= noise {
            doc.verdicts.push(format!(
                "the load added no measurable delay: median UDP round trip {} idle, {} loaded (p99 {}), a difference within the idle phase's own spread ({})",
                time_ms(udp.idle.p50_ms),
                time_ms(udp.loaded.p50_ms),
                time_ms(udp.loaded.p99_ms),
                time_ms(noise),
            ));
        } else {
            doc.verdicts.push(rise_verdict(
                &Rise {
                    idle_p50_ms: udp.idle.p50_ms,
                    loaded_p50_ms: udp.loaded.p50_ms,
                    loaded_p99_ms: udp.loaded.p99_ms,
                    delay_ms: q.delay_ms,
                },
                doc.parameters.direction,
                (r.upload_bits_per_second, r.download_bits_per_second),
                r.rate_format,
                (&q.location, &q.remedy),
            ));
        }
    }
    if let Some(w) = &r.link_queue
        && w.samples > 0
    {
        let both = w.out_mean_ms + w.back_mean_ms.max(0.0);
        doc.verdicts.push(format!(
            "the lab's own count: over the same {:.1} s of load its emulator, sampling the queue of link {} every 1 ms, found {} on average on the way out ({} at the link's rate; {} frames dropped at the full queue) and {} on the way back; the UDP probes' mean round trip rose by {} in that window ({:.0}% of the queues' {}){}",
            w.to_seconds - w.from_seconds,
            w.link,
            time_ms(w.out_mean_ms),
            crate::latency::queues::bytes_text(w.out_mean_bytes),
            w.out_drops,
            time_ms(w.back_mean_ms),
            time_ms(w.probe_mean_increase_ms),
            w.probe_mean_increase_ms / both * 100.0,
            time_ms(both),
            if w.aqm.as_deref().is_some_and(|a| a.starts_with("fq_codel")) {
                ": fq_codel serves a sparse flow such as the probes' ahead of the load's queue, so they wait less than it holds"
            } else {
                ""
            },
        ));
    }
    queue_verdicts(doc);
    let r = &doc.result;
    if r.rpm_loaded.is_finite() {
        doc.verdicts.push(format!(
            "responsiveness: {:.0} RPM under load ({:.0} idle)",
            r.rpm_loaded, r.rpm_idle
        ));
    }
    match r.probe_share_of_link_percent {
        Some(share) if share >= 1.0 => doc.warnings.push(format!(
            "the probes' own load is {share:.1}% of the link: lengthen --probe-interval"
        )),
        None if r.probe_share_percent.is_finite() && r.probe_share_percent >= 1.0 => {
            doc.warnings.push(format!(
                "the probes' own load is {:.1}% of the measured rate: lengthen --probe-interval",
                r.probe_share_percent
            ))
        }
        _ => {}
    }
}

/// The split of the load's bytes between the queues the run measured: one line naming them
/// all, then one per queue that held at least a kilobyte, with what would shrink it.
fn queue_verdicts(doc: &mut Document<LatencyParams, LatencyResult>) {
    let r = &doc.result;
    if r.queues.is_empty() {
        return;
    }
    let loopback = doc
        .parameters
        .agent
        .parse::<SocketAddr>()
        .is_ok_and(|a| a.ip().is_loopback());
    let rate = r
        .upload_bits_per_second
        .unwrap_or(0.0)
        .max(r.download_bits_per_second.unwrap_or(0.0));
    let size = |q: &crate::latency::queues::QueueShare| {
        format!(
            "{} ({})",
            crate::latency::queues::bytes_text(q.mean_bytes),
            time_ms(q.mean_ms)
        )
    };
    let list: Vec<String> = r
        .queues
        .iter()
        .map(|q| format!("{}: {}", q.location, size(q)))
        .collect();
    let crossed: Vec<&str> = r
        .queues
        .iter()
        .filter(|q| q.probes_wait_here)
        .map(|q| match q.queue {
            crate::latency::queues::QueueKind::Qdisc => "the qdisc",
            crate::latency::queues::QueueKind::NicRing => "the ring",
            crate::latency::queues::QueueKind::LabLink => "the emulated link",
            _ => "the path beyond this host",
        })
        .collect();
    let mut lines = vec![format!(
        "where the load's bytes waited, on average over the loaded window (ms at the load's {}): {}; the probes cross {}{}",
        r.rate_format.format(rate),
        list.join("; "),
        if crossed.is_empty() {
            "none of these".to_string()
        } else {
            crossed.join(" and ")
        },
        if loopback {
            " (on loopback the qdisc is noqueue and there is no link: what delays the probes there is the CPU they share with the load)"
        } else {
            ""
        }
    )];
    for q in r.queues.iter().filter(|q| q.mean_bytes >= 1000.0) {
        lines.push(format!(
            "queue: {} held {} on average ({}{}); {}; shrink it: {}",
            q.location,
            crate::latency::queues::bytes_text(q.mean_bytes),
            if q.queue == crate::latency::queues::QueueKind::LabLink {
                format!("{} of delay at the link's rate", time_ms(q.mean_ms))
            } else {
                format!("{} at the load's rate", time_ms(q.mean_ms))
            },
            if q.max_bytes.is_finite() {
                format!(
                    "; at most {}",
                    crate::latency::queues::bytes_text(q.max_bytes)
                )
            } else {
                String::new()
            },
            if q.probes_wait_here {
                "every packet that leaves this way waits in it, the probes included"
            } else {
                "only the load's own data waits in it, not the probes on flows of their own"
            },
            q.remedy,
        ));
    }
    doc.verdicts.extend(lines);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 31: under `--udp-load` the header said "4 TCP flow(s)".
    #[test]
    fn the_header_names_the_loads_kind() {
        let udp = load_words(4, Some(12_000_000), LoadDirection::Up);
        assert!(!udp.contains("TCP"), "{udp}");
        assert!(udp.starts_with("4 UDP flow(s) of 12"), "{udp}");
        assert_eq!(
            load_words(4, None, LoadDirection::Both),
            "4 TCP flow(s) each way"
        );
    }

    /// Issue 31: with load both ways, 60 ms of rise at 9.8 Mbit/s each way was printed as
    /// one "147 kB standing in a queue" (60 ms at 19.6 Mbit/s would be twice that; at one
    /// way's rate it is 73.5 kB). Now the sum is said to be both queues', each way's figure
    /// given on its own.
    #[test]
    fn load_both_ways_reports_each_directions_queue_not_one_sum() {
        let rise = Rise {
            idle_p50_ms: 30.1,
            loaded_p50_ms: 90.1,
            loaded_p99_ms: 95.0,
            delay_ms: 60.0,
        };
        let rates = (Some(9.8e6), Some(9.8e6));
        let both = rise_verdict(
            &rise,
            LoadDirection::Both,
            rates,
            RateFormat::Adaptive,
            ("the link", "an AQM"),
        );
        assert!(!both.contains("standing in a queue"), "{both}");
        assert!(both.contains("crosses both directions' queues"), "{both}");
        assert!(
            both.contains("upload's") && both.contains("download's"),
            "{both}"
        );
        assert_eq!(both.matches("73.5 kB").count(), 2, "{both}");
        let up = rise_verdict(
            &rise,
            LoadDirection::Up,
            (Some(9.8e6), None),
            RateFormat::Adaptive,
            ("the link", "an AQM"),
        );
        assert!(up.contains("73.5 kB standing in its queue"), "{up}");
        assert!(!up.contains("download"), "{up}");
        // A direction whose rate was not measured gets no bytes.
        let down = rise_verdict(
            &rise,
            LoadDirection::Down,
            (Some(9.8e6), None),
            RateFormat::Adaptive,
            ("the link", "an AQM"),
        );
        assert!(down.contains("not measured"), "{down}");
    }

    /// Issue 31: under fq_codel the link's queue held 30.75 ms while the probes rose 0.7 ms;
    /// the verdict said the probes wait in it, "held near its target".
    #[test]
    fn under_fq_codel_the_probes_own_rise_says_whether_they_wait() {
        let fq = Some("fq_codel");
        assert!(!probes_wait_in(fq, 30.75, 0.7));
        let remedy = link_queue_remedy(fq, 30.75, 0.7);
        assert!(!remedy.contains("near its"), "{remedy}");
        assert!(
            remedy.contains("30.75 ms") || remedy.contains("30.8 ms"),
            "{remedy}"
        );
        assert!(remedy.contains("only the load waits"), "{remedy}");
        // A drop-tail queue of 30.76 ms, probes risen by as much: they wait in it.
        assert!(probes_wait_in(None, 30.76, 30.6));
        // CoDel is one queue: the probes wait in it whatever they rose.
        assert!(probes_wait_in(Some("codel"), 30.75, 0.7));
        // fq_codel holding 4 ms: near its target, said so.
        assert!(link_queue_remedy(fq, 4.0, 3.8).contains("near its 5 ms target"));
        // No measured rise: assumed to wait, as before.
        assert!(probes_wait_in(fq, 30.75, f64::NAN));
    }
}
