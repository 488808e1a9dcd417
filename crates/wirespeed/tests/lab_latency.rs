//! `wirespeed latency` across a lab's link (issue 17's ground truths; a child of the `lab`
//! tests, whose helpers and lock it uses): the probes' round trip under a UDP flood, under TCP
//! uploads through drop-tail and FQ-CoDel queues, their own load on the link, and the idle
//! round trip against 2D plus serialization.

use std::process::{Command, Stdio};

use super::{LAB_LOCK, can_build_labs, temp_topology};
use crate::util::wirespeed;

/// Runs `wirespeed latency` from h1 to an agent on h2 across a 10 Mbit/s link with 10 ms of
/// delay each way and a drop-tail queue of 100 frames (`aqm` added when given), with one cubic
/// upload as the load; returns the document.
fn latency_across(aqm: Option<&str>, load: &str) -> serde_json::Value {
    latency_run(aqm, &format!("--idle 2s -t 6s -P 1 --direction up {load}"))
}

/// Runs `wirespeed latency 198.18.0.2 ARGS --json` from h1 across the link `latency_across`
/// builds; returns the document.
fn latency_run(aqm: Option<&str>, args: &str) -> serde_json::Value {
    let load = args;
    let mut topology = "[[host]]\nname = \"h1\"\n[[host]]\nname = \"h2\"\n[[link]]\na = \"h1\"\nb = \"h2\"\nrate = \"10M\"\ndelay = \"10ms\"\nqueue = 100\n".to_string();
    if let Some(a) = aqm {
        topology.push_str(&format!("aqm = \"{a}\"\n"));
    }
    let tag = format!(
        "latency-{}-{}",
        aqm.unwrap_or("tail"),
        load.bytes().map(u64::from).sum::<u64>()
    );
    let path = temp_topology(&tag, &topology);
    let exe = env!("CARGO_BIN_EXE_wirespeed");
    // The agent serves every session of the run and is stopped by its PID when it ends. It
    // runs at a real-time priority (as the lab's emulator does) where `chrt` can give it: its
    // echo's answer is the one user-space step in a UDP probe's round trip, and on a CI
    // machine whose other tests load both cores its wake-up otherwise adds tens of
    // milliseconds to some probes (measured beside a loopback `tcp -P 2`: the probes' mean
    // rise 153% of the lab's queue under bbr; with `chrt -f 10`, 99.5-101%).
    let script = format!(
        "W='{exe}'; L=\"$WIRESPEED_LAB\"\n\
         RT=; \"$W\" lab exec \"$L\" h2 -- chrt -f 10 true 2>/dev/null && RT='chrt -f 10'\n\
         \"$W\" lab exec \"$L\" h2 -- $RT \"$W\" serve -B 198.18.0.2 >/dev/null 2>&1 &\n\
         agent=$!\n\
         for i in $(seq 40); do\n\
           if \"$W\" lab exec \"$L\" h1 -- \"$W\" latency 198.18.0.2 {load} --json; then\n\
             kill $agent; wait $agent; exit 0\n\
           fi\n\
           sleep 0.25\n\
         done\n\
         kill $agent; exit 1"
    );
    let out = Command::new(exe)
        .args([
            "lab",
            "run",
            &path.display().to_string(),
            "--",
            "sh",
            "-c",
            &script,
        ])
        .output()
        .unwrap();
    let _ = std::fs::remove_file(&path);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = stdout.find('{').expect("a JSON document");
    serde_json::from_str(&stdout[start..]).unwrap()
}

/// The UDP echo's idle p50, loaded p50 and loaded p99, ms.
fn udp_echo(doc: &serde_json::Value) -> (f64, f64, f64) {
    let udp = doc["result"]["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "udp_echo")
        .unwrap();
    let f = |phase: &str, q: &str| udp[phase][q].as_f64().unwrap();
    (
        f("idle", "p50_ms"),
        f("loaded", "p50_ms"),
        f("loaded", "p99_ms"),
    )
}

/// The UDP echo's idle p50 and p90, ms.
fn udp_echo_idle(doc: &serde_json::Value) -> (f64, f64) {
    let udp = doc["result"]["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "udp_echo")
        .unwrap();
    (
        udp["idle"]["p50_ms"].as_f64().unwrap(),
        udp["idle"]["p90_ms"].as_f64().unwrap(),
    )
}

/// True if the kernel offers congestion control `cc` (loading its module if need be).
fn has_congestion_control(cc: &str) -> bool {
    let available = || {
        std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
            .is_ok_and(|t| t.split_whitespace().any(|a| a == cc))
    };
    available()
        || (Command::new("modprobe")
            .arg(format!("tcp_{cc}"))
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
            && available())
}

/// Issue 17's ground truth for `wirespeed latency` under TCP: one upload, cubic and then bbr,
/// across a 10 Mbit/s link with 10 ms each way and a drop-tail queue of 100 frames. The probes'
/// mean round trip over the loaded window rose by what the lab's emulator sampled in the
/// link's two queues over the same window (every millisecond, read through `lab status` at the
/// window's ends), within 10%, plus the idle phase's own p50-p90 spread (the probes' noise
/// without any load, measured in the same run). The verdict names the link's queue and its
/// size in milliseconds. cubic fills the queue (the median rises by up to the 123 ms of 100
/// full frames); bbr keeps about one bandwidth-delay product in it (8-20 ms here).
#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn latency_under_tcp_agrees_with_the_queue_the_lab_samples() {
    if !can_build_labs("latency-tcp") {
        return;
    }
    let _guard = LAB_LOCK.alone();
    // 2 x 10 ms, plus a minimum frame's serialization each way (84 byte times at 10 Mbit/s).
    let base = 20.0 + 2.0 * 84.0 * 8.0 / 10e6 * 1e3;
    let full = 100.0 * 1538.0 * 8.0 / 10e6 * 1e3;
    for cc in ["cubic", "bbr"] {
        if !has_congestion_control(cc) {
            eprintln!("latency-tcp {cc}: skipped: the kernel has no {cc}");
            continue;
        }
        let doc = latency_across(None, &format!("-C {cc}"));
        let (idle, loaded, p99) = udp_echo(&doc);
        let (_, idle_p90) = udp_echo_idle(&doc);
        let w = &doc["result"]["link_queue"];
        let f = |k: &str| w[k].as_f64().unwrap_or(f64::NAN);
        let queue = f("out_mean_ms") + f("back_mean_ms");
        let probes = f("probe_mean_increase_ms");
        let spread = (idle_p90 - idle).max(0.0);
        eprintln!(
            "latency lab, {cc} up: idle p50 {idle:.3} ms (base {base:.3}), loaded p50 {loaded:.3}, p99 {p99:.3} ms; the lab sampled {:.3} ms out + {:.4} ms back over {:.2} s ({} samples), the probes' mean rose by {probes:.3} ms ({:.1}%, idle spread {spread:.3} ms); upload {:.4e} bit/s; verdicts {}",
            f("out_mean_ms"),
            f("back_mean_ms"),
            f("to_seconds") - f("from_seconds"),
            w["samples"],
            probes / queue * 100.0,
            doc["result"]["upload_bits_per_second"]
                .as_f64()
                .unwrap_or(f64::NAN),
            doc["verdicts"]
        );
        assert!(
            (idle - base).abs() < 0.2 * base,
            "idle {idle} against {base}"
        );
        // At least 2 s of the emulator's 1 ms samples, and the probes sent meanwhile.
        assert!(w["samples"].as_u64().unwrap() >= 2_000, "{w}");
        assert!(w["probes"].as_u64().unwrap() >= 40, "{w}");
        assert!(queue > 1.0, "{cc} built no queue: {w}");
        assert!(
            (probes - queue).abs() <= 0.1 * queue + spread,
            "{cc}: the probes' mean rose by {probes} ms, the lab's queues held {queue} ms (idle spread {spread})"
        );
        assert!(p99 - idle < 1.1 * full + 5.0, "p99 {p99} past a full queue");
        let verdicts = doc["verdicts"].to_string();
        assert!(
            verdicts.contains("drop-tail queue (it holds 100 frames: 123 ms when full"),
            "{verdicts}"
        );
        assert!(
            verdicts.contains("sampling the queue of link h1-h2 every 1 ms"),
            "{verdicts}"
        );
        // The split: the link's queue as the lab sampled it; the qdisc of eth0 (the emulator
        // reads the TAP as frames come, so the queue forms in the link, not here) a small
        // part of it; the sender's socket buffer holding the upload's unsent bytes, which the
        // probes on flows of their own do not wait behind.
        let queues = doc["result"]["queues"].as_array().unwrap();
        let kind = |k: &str| {
            queues
                .iter()
                .find(|q| q["queue"] == k)
                .unwrap_or_else(|| panic!("no {k} in {queues:?}"))
        };
        let ms = |k: &str| kind(k)["mean_ms"].as_f64().unwrap();
        assert_eq!(ms("lab_link"), f("out_mean_ms"));
        assert!(
            kind("qdisc")["location"]
                .as_str()
                .unwrap()
                .starts_with("the qdisc of eth0 ("),
            "{queues:?}"
        );
        assert!(
            ms("qdisc") < 0.1 * ms("lab_link"),
            "the qdisc held {} ms, the link {} ms",
            ms("qdisc"),
            ms("lab_link")
        );
        assert_eq!(kind("sender_socket_buffers")["probes_wait_here"], false);
        assert!(
            kind("sender_socket_buffers")["mean_bytes"]
                .as_f64()
                .unwrap()
                > 0.0,
            "{queues:?}"
        );
        assert!(
            verdicts.contains("queue: the emulated link h1-h2's drop-tail queue (100 frames"),
            "{verdicts}"
        );
        assert!(verdicts.contains("tcp_notsent_lowat"), "{verdicts}");
        if cc == "cubic" {
            // Loss-based: the sawtooth keeps the queue between half full and full.
            assert!(
                loaded - idle > 0.4 * full && loaded - idle < 1.05 * full,
                "loaded {loaded}, idle {idle}, full queue {full}"
            );
        }
    }
}

/// Issue 17's fq_codel ground truth: `aqm = "fq_codel"` on the same link under the same
/// uploads (cubic, then bbr). The probes' flow is sparse, so FQ-CoDel serves it ahead of the
/// upload's queue: its p99 stays under CoDel's 5 ms target + one full frame's serialization
/// (1.23 ms at 10 Mbit/s) + a stated margin of 5 ms above the idle median (for the agent's and
/// the client's wake-ups on a loaded 2-core machine; measured +1.3-1.9 ms, once +5.2 ms), where
/// behind drop-tail it is a full queue (+118 ms with cubic). And the upload still reaches 95%
/// of the envelope's ceiling for TCP on that link (`wirespeed envelope --rate 10M`: 9.415
/// Mbit/s), measured over the loaded window.
#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn latency_under_load_with_fq_codel_stays_near_target() {
    if !can_build_labs("latency-fq") {
        return;
    }
    // Alone: the upload is judged at 95% of the link's TCP ceiling and the probes within 5 ms.
    let _guard = LAB_LOCK.alone();
    let envelope = wirespeed(&["envelope", "--rate", "10M", "--json"]);
    assert_eq!(envelope.status, 0, "{}", envelope.stderr);
    let envelope: serde_json::Value = serde_json::from_str(&envelope.stdout).unwrap();
    let ceiling = envelope["result"]["goodput_bits_per_second"]
        .as_f64()
        .unwrap();
    let (target, frame, margin) = (5.0, 1538.0 * 8.0 / 10e6 * 1e3, 5.0);
    for cc in ["cubic", "bbr"] {
        if !has_congestion_control(cc) {
            eprintln!("latency-fq {cc}: skipped: the kernel has no {cc}");
            continue;
        }
        let fq = latency_across(Some("fq_codel"), &format!("-C {cc}"));
        let (idle, loaded, p99) = udp_echo(&fq);
        let rate = fq["result"]["upload_bits_per_second"].as_f64().unwrap();
        eprintln!(
            "latency lab, fq_codel, {cc} up: idle {idle:.3}, loaded p50 {loaded:.3}, p99 {p99:.3} ms (+{:.3}, bound {:.3}); upload {rate:.4e} bit/s = {:.1}% of the envelope's {ceiling:.4e}; verdicts {}",
            p99 - idle,
            target + frame + margin,
            rate / ceiling * 100.0,
            fq["verdicts"]
        );
        assert!(
            fq["verdicts"].to_string().contains("managed by fq_codel"),
            "{}",
            fq["verdicts"]
        );
        assert!(
            p99 - idle < target + frame + margin,
            "fq_codel, {cc}: p99 {p99}, idle {idle}"
        );
        // Issue 31: the probes' own rise, not the load's queue, says whether they waited in
        // the link's queue: where the link held more than twice what the probes rose, they
        // did not wait in it, and it is not "near its target" above twice the 5 ms target.
        let link = fq["result"]["queues"]
            .as_array()
            .unwrap()
            .iter()
            .find(|q| q["queue"] == "lab_link")
            .cloned();
        if let Some(link) = link {
            let held = link["mean_ms"].as_f64().unwrap();
            if held > 2.0 * (loaded - idle) {
                assert_eq!(link["probes_wait_here"], false, "{link}");
            }
            if held > 2.0 * target {
                assert!(
                    !link["remedy"].as_str().unwrap().contains("near its"),
                    "{link}"
                );
            }
        }
        assert!(
            rate >= 0.95 * ceiling,
            "fq_codel, {cc}: upload {rate} against the envelope's {ceiling}"
        );
    }
}

/// Issue 17: the latency probes' own load is reported and stays under 1% of the link. The
/// lab counts every frame of the idle phase, when only the probes run, on the 10 Mbit/s link
/// each way: with the default probe interval (40 ms) that is under 1% of the link both ways,
/// and the run's own estimate of its probes' wire bytes (which it reports for the loaded phase)
/// agrees with the count within 10%; probing every 5 ms is past 1%, and the run says so (the
/// next test: each interval is its own lab, so the two run side by side).
#[test]
fn latency_probes_own_load_stays_under_one_percent_of_the_link() {
    if !can_build_labs("latency-probe-load") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    probes_own_load("40ms", true);
}

/// The other half of the test above: probes every 5 ms are past 1% of the link, and warned.
#[test]
fn latency_probes_every_5_ms_are_past_one_percent_of_the_link_and_warned() {
    if !can_build_labs("latency-probe-load-5ms") {
        return;
    }
    let _guard = LAB_LOCK.beside_others();
    probes_own_load("5ms", false);
}

/// One latency run across the 10 Mbit/s lab probing every `interval`: the lab's count of the
/// idle phase's frames against the run's estimate, and whether it is `under` 1% of the link.
fn probes_own_load(interval: &str, under: bool) {
    let doc = latency_run(
        None,
        &format!("--idle 3s -t 1s -P 1 --direction up --probe-interval {interval}"),
    );
    let r = &doc["result"];
    let c = &r["probe_load_on_link"];
    let f = |k: &str| c[k].as_f64().unwrap_or(f64::NAN);
    eprintln!(
        "latency lab, probes every {interval}: the lab counted {:.0} bit/s out ({:.3}%, {:.1} frames/s) and {:.0} bit/s back ({:.3}%, {:.1} frames/s) over {:.2} s idle; estimated {:.0} and {:.0}; loaded phase: {} of the link; warnings {}",
        f("out_bits_per_second"),
        f("out_share_percent"),
        f("out_frames_per_second"),
        f("back_bits_per_second"),
        f("back_share_percent"),
        f("back_frames_per_second"),
        f("to_seconds") - f("from_seconds"),
        f("estimate_out_bits_per_second"),
        f("estimate_back_bits_per_second"),
        r["probe_share_of_link_percent"],
        doc["warnings"]
    );
    assert!(f("to_seconds") - f("from_seconds") > 2.0, "{c}");
    for way in ["out", "back"] {
        let counted = f(&format!("{way}_bits_per_second"));
        let estimated = f(&format!("estimate_{way}_bits_per_second"));
        assert!(
            (estimated - counted).abs() < 0.1 * counted,
            "{way}: estimated {estimated}, the lab counted {counted}"
        );
        let share = f(&format!("{way}_share_percent"));
        assert_eq!(share < 1.0, under, "{way}: {share}% of the link");
    }
    let reported = r["probe_share_of_link_percent"].as_f64().unwrap();
    assert_eq!(reported < 1.0, under, "{reported}");
    let warned = doc["warnings"]
        .to_string()
        .contains("the probes' own load is");
    assert_eq!(warned, !under, "{}", doc["warnings"]);
}

/// Issue 17's idle ground truth: with no load, the UDP echo's network round trip (the raw
/// round trip less the agent's residence time, from its kernel's receive stamp to its kernel's
/// transmit stamp, which the agent reports in a follow-up) is 2D + the probe's serialization
/// both ways, within 20 us at its best and within 60 us at its median. What remains above it
/// is the emulator's release (a few us) and each receiving host's TAP write path (5-10 us,
/// bench/RESULTS.md); without the follow-ups the agent's own send path (10-30 us) stays in
/// the network's round trip and the residence ends at the `sendmsg`, which the count of
/// probes carried to the transmit stamp checks; without the residence (the agent's wake-up,
/// 70-110 us) or with the emulator charging each frame from its own read instead of the
/// sending kernel's transmit stamp (130-150 us a round trip) the best probe is 180-300 us
/// above. The bounds are on the best probe and the median of some 400 (every 10 ms for 4 s: a
/// loaded CI machine delays some probes, not all; the best of a second run of the same if the
/// first run's best missed, so a burst of other work cannot fail it alone), and the raw round
/// trip is checked to contain the network's.
///
/// No probe may beat the wire: every stamp that bounds the network's round trip is taken
/// before the emulator starts the frame on the link (each end's transmit stamp as the datagram
/// enters its device's queue) or after the frame has left it (receive stamps), so the best
/// probe is at least 2D + serialization, checked without a second chance (2 us of slack for
/// rounding). With the client's transmit stamp taken at the driver instead, after the
/// device's packet sockets (where the emulator stamps the frame) had been served, the best
/// probe came 0.5-8.8 us under the wire in 4 of 6 runs and 139 us under in one of eight.
#[test]
fn latency_idle_is_within_20_us_of_2d_plus_serialization() {
    if !can_build_labs("latency-idle-truth") {
        return;
    }
    // Alone: the best round trip is judged within 20 us of the wire's.
    let _guard = LAB_LOCK.alone();
    // The echo's IP packet (IPv4, UDP, cookie, sequence, residence and follow-up fields: 76
    // bytes) in Ethernet framing (header, FCS, preamble, gap: 38 bytes) at 10 Mbit/s, each
    // way; 10 ms each way.
    let truth_us = |ip_bytes: f64| 2.0 * 10_000.0 + 2.0 * (ip_bytes + 38.0).max(84.0) * 8.0 / 10.0;
    let us = |v: &serde_json::Value| v.as_f64().unwrap() * 1e3;
    let mut runs = 0;
    let doc = loop {
        runs += 1;
        let doc = latency_run(
            None,
            "--idle 4s -t 1s -P 1 --direction up --probe-interval 10ms",
        );
        let net = doc["result"]["kinds"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["kind"] == "udp_echo")
            .map(|k| k["network_round_trip"].clone())
            .unwrap_or_default();
        let best = net["idle"]["min_ms"].as_f64();
        let truth = truth_us(net["probe_ip_bytes"].as_f64().unwrap_or(0.0));
        if let Some(b) = best {
            assert!(
                b * 1e3 >= truth - 2.0,
                "a probe beat the wire: best network round trip {:.1} us against {truth:.1} us",
                b * 1e3
            );
        }
        if runs == 2 || best.is_some_and(|b| b * 1e3 - truth <= 20.0) {
            break doc;
        }
        eprintln!("latency lab idle: first run's best {best:?} ms, running again");
    };
    let udp = doc["result"]["kinds"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == "udp_echo")
        .unwrap();
    let net = &udp["network_round_trip"];
    assert!(net.is_object(), "no network round trip: {udp}");
    assert_eq!(net["residence_rejected"], 0, "{net}");
    assert_eq!(net["probe_ip_bytes"], 76, "{net}");
    let truth_us = truth_us(76.0);
    let (best, median) = (us(&net["idle"]["min_ms"]), us(&net["idle"]["p50_ms"]));
    let (raw_best, raw_median) = (us(&udp["idle"]["min_ms"]), us(&udp["idle"]["p50_ms"]));
    eprintln!(
        "latency lab idle, against 2D + serialization = {truth_us:.1} us: network best {:+.1} us, median {:+.1} us; raw best {:+.1}, median {:+.1}; agent residence p50 {:.1} us; {} probes, {} to the agent's transmit stamp",
        best - truth_us,
        median - truth_us,
        raw_best - truth_us,
        raw_median - truth_us,
        us(&net["agent_residence_idle"]["p50_ms"]),
        net["idle"]["probes"],
        net["idle_to_transmit_stamp"],
    );
    let probes = net["idle"]["probes"].as_u64().unwrap();
    assert!(probes >= 200, "{net}");
    // Each residence reaches the agent's transmit stamp (its follow-up came with the next
    // reply), but for the last probes and a reply lost now and then.
    let to_transmit = net["idle_to_transmit_stamp"].as_u64().unwrap();
    assert!(
        to_transmit * 10 >= probes * 9,
        "{to_transmit} of {probes} idle probes' residences reached the agent's transmit stamp"
    );
    assert!(
        best - truth_us <= 20.0 && best >= truth_us - 2.0,
        "best network round trip {best:.1} us against {truth_us:.1} us"
    );
    assert!(
        median - truth_us <= 60.0 && median >= truth_us - 20.0,
        "median network round trip {median:.1} us against {truth_us:.1} us"
    );
    assert!(raw_median >= median, "raw {raw_median} < network {median}");
}

/// Issue 17's first ground truth: a UDP load above the link's rate holds the drop-tail queue
/// full, so a probe that gets in waits the whole queue: the loaded median UDP round trip is
/// the idle one plus 100 full frames at 10 Mbit/s (123 ms), within 5%, and the probes' mean
/// rise is the mean queue the lab itself sampled over the same window, within 5% of a full one.
#[test]
fn latency_behind_a_full_drop_tail_queue_is_the_queue() {
    if !can_build_labs("latency-udp") {
        return;
    }
    // Alone: the loaded median is judged within 5% of the full queue.
    let _guard = LAB_LOCK.alone();
    let queue = 100.0 * 1538.0 * 8.0 / 10e6 * 1e3;
    let doc = latency_across(None, "--udp-load 12M");
    let (idle, loaded, p99) = udp_echo(&doc);
    eprintln!(
        "latency lab, UDP 12M into 10M: idle p50 {idle:.3} ms, loaded p50 {loaded:.3} ms (+{:.2}, the full queue {queue:.2}), p99 {p99:.3} ms",
        loaded - idle
    );
    // On a machine whose cores are busy the paced UDP sender loses the CPU now and then and
    // catches up in bursts: the queue drains in the gaps and overflows in the bursts (at load
    // 10 it held 85% of a full queue on average, with 1,309 frames dropped at it in 5 s). So
    // the load is judged by what the lab counted, the queue overflowing (a drop-tail queue
    // drops only when full) and more than half full on average, and the probes like with
    // like: their mean rise against the queue's mean over the same window (in that run their
    // median against its mean missed by 13% of a full queue, the means by 2%).
    let w = &doc["result"]["link_queue"];
    let sampled = w["out_mean_ms"].as_f64().unwrap_or(f64::NAN)
        + w["back_mean_ms"].as_f64().unwrap_or(f64::NAN);
    let probes = w["probe_mean_increase_ms"].as_f64().unwrap_or(f64::NAN);
    eprintln!(
        "the lab sampled {sampled:.2} ms of queue over the loaded window and dropped {} frames at it; the probes' mean rose by {probes:.2} ms",
        w["out_drops"]
    );
    assert!(
        w["out_drops"].as_u64().unwrap_or(0) > 0,
        "the load never overflowed the link's queue: {w}"
    );
    assert!(
        sampled > 0.5 * queue && sampled <= 1.02 * queue,
        "the lab's queue held {sampled} ms on average; full is {queue}: {w}"
    );
    assert!(
        ((loaded - idle) - queue).abs() < 0.05 * queue,
        "median increase {} against the full queue's {queue} ms ({w})",
        loaded - idle
    );
    assert!(
        (probes - sampled).abs() < 0.05 * queue,
        "the probes' mean rose by {probes} ms against the {sampled} ms the lab sampled (full {queue})"
    );
}
