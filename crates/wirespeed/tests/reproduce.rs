//! `wirespeed reproduce`: the list, a bad name, and the envelope and boggs reproductions end
//! to end (short forms).

use crate::util::{assert_one_line_error, wirespeed};

fn json(args: &[&str]) -> serde_json::Value {
    let run = wirespeed(args);
    assert_eq!(run.status, 0, "{}", run.stderr);
    serde_json::from_str(&run.stdout).expect("one JSON document")
}

fn rows(doc: &serde_json::Value) -> Vec<serde_json::Value> {
    doc["result"]["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["rows"].as_array().unwrap().clone())
        .collect()
}

fn row<'a>(rows: &'a [serde_json::Value], quantity: &str) -> &'a serde_json::Value {
    rows.iter()
        .find(|r| r["quantity"].as_str().unwrap().starts_with(quantity))
        .unwrap_or_else(|| panic!("no row {quantity}"))
}

#[test]
fn list_names_every_reproduction() {
    let run = wirespeed(&["reproduce", "--list"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    for name in [
        "envelope",
        "boggs",
        "duplex-mismatch",
        "bellovin",
        "vj-buffers",
    ] {
        assert!(run.stdout.contains(name), "{}", run.stdout);
    }
    let doc = json(&["reproduce", "--list", "--json"]);
    assert_eq!(doc["schema"], "wirespeed.reproduce.v1");
    assert!(doc["result"]["reproductions"].as_array().unwrap().len() >= 2);
}

#[test]
fn bad_name_and_misplaced_flags_are_one_line_errors() {
    assert_one_line_error(&wirespeed(&["reproduce", "nope"]), "'nope'");
    assert_one_line_error(&wirespeed(&["reproduce"]), "NAME");
    assert_one_line_error(
        &wirespeed(&["reproduce", "boggs", "--no-lab"]),
        "--no-lab applies to envelope",
    );
    assert_one_line_error(
        &wirespeed(&["reproduce", "boggs", "-t", "10ms"]),
        "--time must be",
    );
    assert_one_line_error(
        &wirespeed(&["reproduce", "vj-buffers", "-t", "5s"]),
        "--time applies to envelope, boggs, duplex-mismatch and bellovin",
    );
    assert_one_line_error(
        &wirespeed(&["reproduce", "bellovin", "-t", "2s"]),
        "--time for bellovin is the probing budget per address family: give 5s to 300s",
    );
    assert_one_line_error(
        &wirespeed(&["reproduce", "vj-buffers", "--runs", "2"]),
        "--runs applies to duplex-mismatch",
    );
    assert_one_line_error(
        &wirespeed(&["reproduce", "duplex-mismatch", "--runs", "0"]),
        "--runs",
    );
}

#[test]
fn envelope_reproduces_the_seed_004_ceiling_and_the_host_bound() {
    // Alone: the host bound is loopback TCP at full speed, which loads both cores and is judged
    // against 1 Gbit/s (320 Mbit/s beside other labs at six test threads under load 13).
    let _lane = crate::lab::LAB_LOCK.alone();
    let doc = json(&["reproduce", "envelope", "--no-lab", "-t", "300ms", "--json"]);
    assert_eq!(doc["schema"], "wirespeed.reproduce.v1");
    assert_eq!(doc["result"]["name"], "envelope");
    let rows = rows(&doc);
    let ceiling = row(&rows, "10 Mbit/s TCP ceiling (seed 004)");
    assert_eq!(ceiling["paper"], 1104.0);
    assert_eq!(ceiling["verdict"], "within");
    let kib = ceiling["ours"].as_f64().unwrap();
    assert!((kib / 1104.0 - 1.0).abs() < 0.01, "{kib}");
    // Loopback moves far more than 1 Gbit/s on any machine CI runs on.
    let host = row(&rows, "host bound >= 1 Gbit/s");
    assert_eq!(host["verdict"], "within", "{host}");
    assert!(
        doc["result"]["notes"][0]
            .as_str()
            .unwrap()
            .contains("--no-lab")
    );
    let count = |k: &str| doc["result"][k].as_u64().unwrap();
    assert_eq!(count("outside"), 0, "{}", doc["result"]);
    assert!(count("within") >= 5 && count("within") < count("rows"));
}

#[test]
fn envelope_text_prints_paper_and_ours_side_by_side() {
    let run = wirespeed(&["reproduce", "envelope", "--no-lab", "-t", "200ms"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    assert!(run.stdout.contains("paper"), "{}", run.stdout);
    assert!(run.stdout.contains("1,104"), "{}", run.stdout);
    assert!(
        run.stdout.contains("ground truth configured"),
        "{}",
        run.stdout
    );
}

#[test]
fn boggs_reproduces_the_seed_000_figures_in_the_simulator() {
    // 5 s per point (the seed's window is 10 s): the stated figures settle sooner except the
    // per-host spread, which is not asserted here (2 s windows cut off enough late 1536-byte
    // packets to pull their mean delay under the tolerance).
    let doc = json(&["reproduce", "boggs", "-t", "5s", "--json"]);
    let rows = rows(&doc);
    for q in [
        "1 host, 64 B back to back",
        "2 hosts, 64 B",
        "64 B: host count of the packet-rate peak",
        "24 hosts, 64 B utilisation",
        "24 hosts, 1536 B utilisation",
        "24 hosts, 1536 B delay per packet",
    ] {
        assert_eq!(row(&rows, q)["verdict"], "within", "{q}: {}", row(&rows, q));
    }
    // Issue 21: the rows still outside say, beside the figure, what was measured about why.
    for (q, cause) in [
        (
            "24 hosts, 64 B: 2 clusters vs 4, utilisation",
            "with the restart at 80 us it is -",
        ),
        (
            "24 hosts, 1536 B: delay sd / mean",
            "of packets meet 16 collisions",
        ),
    ] {
        let r = row(&rows, q);
        assert_eq!(r["verdict"], "outside", "{q}: {r}");
        let why = r["why"].as_str().unwrap();
        assert!(
            why.contains("the measured cause") && why.contains(cause),
            "{why}"
        );
    }
    for bytes in [64, 512, 1536, 4000] {
        let falls = row(&rows, &format!("{bytes} B: falls from 3 to 24 hosts"));
        assert_eq!(falls["verdict"], "within", "{falls}");
    }
    assert_eq!(doc["parameters"]["time_seconds"], 5.0);
}

/// Lab reproductions need CAP_NET_ADMIN (CI runs as root); elsewhere they are skipped with a
/// message, as the lab tests do.
fn can_build_labs(test: &str) -> bool {
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        eprintln!("{test}: skipped (needs root for network namespaces)");
    }
    root
}

#[test]
fn envelope_lab_link_carries_its_ceiling() {
    if !can_build_labs("envelope_lab_link_carries_its_ceiling") {
        return;
    }
    // Alone: the TCP goodput across the lab's link is judged within -3% .. +0.5% of its
    // ceiling (beside other labs at six test threads under load 10-16 it read -6.6%). Over 2 s:
    // the receiver's rate includes the connection's start and slow start, which on a loaded
    // machine took more than 3% of a 1 s run (-3.44% alone, in the full suite at load 8-14).
    let _lane = crate::lab::LAB_LOCK.alone();
    let doc = json(&["reproduce", "envelope", "-t", "2s", "--json"]);
    let rows = rows(&doc);
    let lab = row(&rows, "TCP goodput across the link");
    assert_eq!(lab["configured"].as_f64().unwrap().round(), 9.0);
    assert_eq!(lab["verdict"], "within", "{lab}");
}

#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn boggs_lab_bit_rate_vs_n_follows_the_simulator() {
    if !can_build_labs("boggs_lab_bit_rate_vs_n_follows_the_simulator") {
        return;
    }
    let _lane = crate::lab::LAB_LOCK.alone();
    // Seed 000 figure 3-3's experiment on labs/boggs-24.toml: 2 and 8 stations, 512- and
    // 1514-byte frames, 1 s windows (about 20 s with the lab's set-up).
    let doc = json(&[
        "reproduce",
        "boggs",
        "--lab",
        "--lab-hosts",
        "2,8",
        "-t",
        "1s",
        "--json",
    ]);
    assert_eq!(doc["parameters"]["lab"], true);
    let rows = rows(&doc);
    for q in [
        "lab 512 B, 2 hosts",
        "lab 512 B, 8 hosts",
        "lab 1514 B, 2 hosts",
        "lab 1514 B, 8 hosts",
    ] {
        let r = row(&rows, q);
        // The configured column is the simulator's figure for the same segment.
        let sim_rate = r["configured"].as_f64().unwrap();
        assert!(sim_rate > 9.0, "{r}");
        // Within the row's 3%, or outside only with its measured cause: on a busy 2-core CI
        // the stations' generators lose the CPU and their queues run dry (counted by the
        // emulator's MAC), which the row then names. A broken medium misses by far more.
        assert!(r["ours"].as_f64().unwrap() > 0.85 * sim_rate, "{q}: {r}");
        if r["verdict"] != "within" {
            let why = r["why"].as_str().unwrap();
            assert!(why.contains("measured cause: "), "{q}: {r}");
        }
        // Seed 000 §3.3's delay, measured by the emulator's MAC from the first attempt to the
        // end of the successful transmission, beside the simulator's: same kind of figure
        // (a frame or so per station, model time), so within a factor of two whatever the
        // machine's load; the TAP hand-off stamp included the station's queue, 15 frames more.
        let d = row(
            &rows,
            &format!(
                "lab delay {} (MAC first attempt to end of successful transmission)",
                q.trim_start_matches("lab ")
            ),
        );
        let (ours, sim) = (
            d["ours"].as_f64().unwrap(),
            d["configured"].as_f64().unwrap(),
        );
        assert!(ours > 0.5 * sim && ours < 2.0 * sim, "{q}: {d}");
        assert!(
            d["why"]
                .as_str()
                .unwrap()
                .contains("from the station's queue"),
            "{d}"
        );
    }
    // A lab row outside says what the lab's stations measured (issue 21 item 5): the times
    // their queues ran dry, or that the count does not explain it.
    let lab_rows = rows
        .iter()
        .filter(|r| r["quantity"].as_str().unwrap().starts_with("lab "));
    for r in lab_rows.filter(|r| r["verdict"] == "outside") {
        let why = r["why"].as_str().unwrap();
        assert!(
            why.contains("measured cause: ") || why.contains("not explained: "),
            "{r}"
        );
        assert!(why.contains("ran dry"), "{r}");
    }
    assert_one_line_error(
        &wirespeed(&["reproduce", "envelope", "--lab"]),
        "--lab applies to boggs",
    );
}

#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn duplex_mismatch_shows_the_counter_signature() {
    if !can_build_labs("duplex_mismatch_shows_the_counter_signature") {
        return;
    }
    let _lane = crate::lab::LAB_LOCK.beside_others();
    // 200 kB each way (the seed moved 50 MB): enough for the MAC counters, under a second
    // when the link does not stall. It stalls at times, for tens of seconds: each transfer is
    // cut at 5 s and counted by what arrived, so six transfers take at most about 40 s.
    let started = std::time::Instant::now();
    let doc = json(&[
        "reproduce",
        "duplex-mismatch",
        "-n",
        "200kB",
        "-t",
        "5s",
        "--json",
    ]);
    let took = started.elapsed();
    assert_eq!(doc["parameters"]["size_bytes"], 200_000);
    assert_eq!(doc["parameters"]["time_seconds"], 5.0);
    // Eight transfers of at most 5 s (+2 s to stop a stuck client) and four labs: a run that
    // waited on a stalled byte count or results exchange instead would take far longer.
    assert!(took < std::time::Duration::from_secs(180), "{took:?}");
    let rows = rows(&doc);
    // Every rate row says what moved, complete or cut at the cap; none is missing.
    for q in [
        "test 1, PUT half -> full: rate (median)",
        "test 2, PUT full -> half: rate (median)",
        "1990s TCP, test 1, PUT half -> full: rate (median)",
        "1990s TCP, test 2, PUT full -> half: rate (median)",
        "seed's hosts, test 1, PUT half -> full: rate (median)",
        "seed's hosts, test 2, PUT full -> half: rate (median)",
        "PUT half -> full: rate",
        "PUT full -> half: rate",
    ] {
        let r = row(&rows, q);
        let why = r["why"].as_str().unwrap();
        assert!(why.contains(" B in "), "{q}: {r}");
        let kib = r["ours"].as_f64().unwrap();
        assert!((0.0..1200.0).contains(&kib), "{q}: {r}");
        eprintln!("{q}: {kib:.1} KiB/s; {why}");
    }
    for q in [
        "test 1, half end (DUT01): collisions",
        "test 1, half end (DUT01): late collisions",
        "test 1, full end (DUT02): CRC errors",
        "test 2, half end (DUT01): collisions",
    ] {
        eprintln!("{q}: {}", row(&rows, q)["ours"]);
    }
    // Properties of the MACs, true of every run: a full-duplex end counts no collisions, the
    // half end of a mismatch no CRC errors, a matched link no late collisions.
    for q in [
        "test 1, full end (DUT02): collisions",
        "test 1, full end (DUT02): late collisions",
        "test 1, half end (DUT01): CRC errors",
        "test 2, full end (DUT02): collisions",
        "PUT half -> full, sender: late collisions",
        "PUT full -> half, receiver: CRC errors + short",
    ] {
        assert_eq!(row(&rows, q)["verdict"], "within", "{q}: {}", row(&rows, q));
    }
    // The 1990s TCP profile's mismatch lab: the same MAC signature.
    let full_end = row(&rows, "1990s TCP, test 2, full end: collisions");
    assert_eq!(full_end["verdict"], "within", "{full_end}");
    assert_eq!(
        doc["result"]["comparisons"][1]["title"],
        "Duplex mismatch (Table 7) with a 1990s TCP"
    );
    // The seed's hosts (405 us per frame): the full end's ACK lands inside the half end's
    // next frame, so (nearly) every collision of test 1 is late, as the seed's all were; and
    // the half end is the slower sender (measured 8 against 486 KiB/s).
    for q in [
        "seed's hosts, test 1, half end: late collisions / collisions",
        "seed's hosts, asymmetry: rate full->half / half->full (median)",
    ] {
        assert_eq!(row(&rows, q)["verdict"], "within", "{q}: {}", row(&rows, q));
    }
    // Solaris 2.5.1's 8 KB window (`tcp -w 8192`): the sender of every transfer that finished
    // saw at most what Linux advertises for it (the full end's transfer finishes: 200 kB at
    // 134-575 KiB/s measured); without the flag it would see the autotuned tens of kilobytes.
    let w = row(
        &rows,
        "seed's hosts, window the sender saw (largest, finished transfers)",
    );
    assert_eq!(w["verdict"], "within", "{w}");
    assert!(w["ours"].as_f64().unwrap() <= 8688.0, "{w}");
    // A rate row outside says what the TCPs did.
    for r in &rows {
        let q = r["quantity"].as_str().unwrap();
        if q.contains("rate (median)") && r["verdict"] == "outside" {
            assert!(
                r["why"].as_str().unwrap().contains("measured cause: "),
                "{r}"
            );
        }
    }
    // Frames the half end sends into the full end's traffic collide: the mismatch is there.
    let coll = row(&rows, "test 1, half end (DUT01): collisions")["ours"]
        .as_f64()
        .unwrap()
        + row(&rows, "test 2, half end (DUT01): collisions")["ours"]
            .as_f64()
            .unwrap();
    assert!(coll > 0.0);
}

#[test]
fn bellovin_recovers_the_per_byte_cost_and_flags_the_board() {
    if !can_build_labs("bellovin_recovers_the_per_byte_cost_and_flags_the_board") {
        return;
    }
    let _lane = crate::lab::LAB_LOCK.beside_others();
    // A 15 s budget: the rounds the seed path's DS0 fits in it (5 or 6 of its 2.2 s rounds by
    // the configured lines, against 16 in the default 40 s). The judged row is the slow line's
    // per byte, which one probe per size per round pins to about 0.05% (its tolerance is 2%).
    let doc = json(&["reproduce", "bellovin", "-t", "15s", "--json"]);
    assert_eq!(doc["parameters"]["time_seconds"], 15.0);
    let rows = rows(&doc);
    let per_byte = row(&rows, "one-way per byte, roc -> cbnewsa");
    assert_eq!(per_byte["verdict"], "within", "{per_byte}");
    let method = doc["result"]["comparisons"][0]["method"].as_str().unwrap();
    assert!(method.contains("budget 15 s"), "{method}");
    let board = row(&rows, "hop 2 (ciscomci + ether) per byte");
    assert_eq!(board["verdict"], "within", "{board}");
    assert!(board["why"].as_str().unwrap().contains("ciscobtw"));
}

/// Issue 6's accuracy check, end to end: a chain whose three hops differ in link rate,
/// forwarding cost and answer cost, probed hop by hop against a calibration twin. The rows'
/// verdicts apply issue 6's tolerances (2% per byte, 20 us fixed). On this loaded 2-core
/// machine the rounds' minimums scatter by 40-100 us from round to round (issue 21 item 9), so
/// the reproduction averages the lower half of the rounds and adds rounds until the even and
/// the odd ones agree; what it still cannot meet on a loaded machine it says in the method.
/// The bounds here are twice the tolerances per byte going out (four times for a router's
/// answer per byte, 1.5 times for fixed costs), which a working recovery met in every run
/// measured (bench/RESULTS.md), and which a broken one misses by far: without the plane fit, hop 1's per byte reads 1.8 for 0.8 us/byte and an answer per
/// byte near 0 or doubled; without the calibration, hop 2's fixed cost reads 40-60 us high; a
/// wrong differencing mixes hops whose costs differ several-fold.
#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn per_hop_costs_of_a_lab_chain_are_recovered() {
    if !can_build_labs("per_hop_costs_of_a_lab_chain_are_recovered") {
        return;
    }
    let _lane = crate::lab::LAB_LOCK.alone();
    let chain = concat!(env!("CARGO_MANIFEST_DIR"), "/../../labs/probe-chain.toml");
    let started = std::time::Instant::now();
    let doc = json(&["reproduce", "bellovin", "--topology", chain, "--json"]);
    // The rounds stop at a 40 s budget; this bound only catches a loop that ignores it.
    assert!(started.elapsed().as_secs() < 150, "{:?}", started.elapsed());
    let per_hop = &doc["result"]["comparisons"][0];
    assert!(per_hop["title"].as_str().unwrap().contains("Each hop"));
    let method = per_hop["method"].as_str().unwrap();
    assert!(method.contains("rounds ("), "{method}");
    // Issue 31: the rounds are planned from the path, and every family it carries is probed
    // (this chain is IPv4 only).
    assert!(
        method.contains("planned from the path's configured round trips"),
        "{method}"
    );
    assert!(per_hop["title"].as_str().unwrap().contains("over IPv4"));
    let titles: Vec<&str> = doc["result"]["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["title"].as_str().unwrap())
        .collect();
    assert!(!titles.iter().any(|t| t.contains("IPv6")), "{titles:?}");
    if method.contains("loaded") {
        assert!(method.contains("load average"), "{method}");
    }
    let rows = per_hop["rows"].as_array().unwrap();
    // Three hops (per byte, fixed) and two routers' answers.
    assert_eq!(rows.len(), 8, "{rows:?}");
    for r in rows {
        let (c, o) = (
            r["configured"].as_f64().unwrap(),
            r["ours"].as_f64().unwrap(),
        );
        let q = r["quantity"].as_str().unwrap();
        // Issue 31: a row is within only against its fixed tolerance, and only when this
        // run's interval, printed beside it, is narrower than that tolerance.
        let tolerance = r["tolerance"].as_str().unwrap();
        let (fixed, interval) = tolerance_and_interval(tolerance);
        if r["verdict"] == "within" {
            assert!(
                interval <= fixed && (o - c).abs() <= fixed_in_unit(fixed, c, q),
                "{r}"
            );
        }
        if interval > fixed {
            assert_ne!(r["verdict"], "within", "{r}");
        }
        let ok = if q.ends_with("fixed") {
            (o - c).abs() <= 30.0
        } else if q.contains("answer") {
            // A difference of two slopes of one plane, the noisiest row (up to 3.1% seen).
            (o / c - 1.0).abs() <= 0.08
        } else {
            (o / c - 1.0).abs() <= 0.04
        };
        assert!(ok, "{r} ({method})");
    }
    // The configured column is the file's: hop 2 is the 2 Mbit/s link (4 us/byte) plus r1's
    // forwarding (0.1 us/byte).
    let hop2 = row(rows, "hop 2 (r1 -> r2) per byte out");
    assert!(
        (hop2["configured"].as_f64().unwrap() - 4.1).abs() < 1e-9,
        "{hop2}"
    );
    // No seed figures on a chain that is not the seed's.
    assert!(rows.iter().all(|r| r["paper"].is_null()));
}

/// Issue 31: a path that carries IPv4 and IPv6 is probed and reported over both. A one-router
/// dual-stack chain (10 Mbit/s both sides, r1 forwarding at 100 us + 100 ns/byte): the method
/// names both families, each family has its own per-hop and whole-path comparisons with the
/// same rows, the configured column is the same for both (the file's costs), and each
/// family's per-byte rows come near it. Heavy: two families' rounds over two labs.
#[test]
#[ignore = "heavy tier: run by bench/heavy-tests.sh"]
fn bellovin_probes_both_families_of_a_dual_stack_path() {
    if !can_build_labs("bellovin_probes_both_families_of_a_dual_stack_path") {
        return;
    }
    let _guard = crate::lab::LAB_LOCK.alone();
    let dir = std::env::temp_dir().join(format!("ws-dual-stack-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("dual-stack.toml");
    std::fs::write(
        &file,
        r#"name = "dual-stack"

[[host]]
name = "h1"

[[host]]
name = "h2"

[[router]]
name = "r1"
icmp_ratelimit = false
forward = { fixed = "100us", per_byte = "100ns" }
answer = { fixed = "300us", per_byte = "2000ns" }

[[link]]
a = "h1"
b = "r1"
rate = "10M"
length_m = 100

[[link]]
a = "r1"
b = "h2"
rate = "10M"
length_m = 100
"#,
    )
    .unwrap();
    let started = std::time::Instant::now();
    let doc = json(&[
        "reproduce",
        "bellovin",
        "--topology",
        file.to_str().unwrap(),
        "--json",
    ]);
    let _ = std::fs::remove_dir_all(&dir);
    // Two families of at most the longest budget each; this only catches a runaway loop.
    assert!(started.elapsed().as_secs() < 400, "{:?}", started.elapsed());
    let comparisons = doc["result"]["comparisons"].as_array().unwrap();
    let titled = |family: &str, what: &str| {
        comparisons
            .iter()
            .find(|c| {
                let t = c["title"].as_str().unwrap_or_default();
                t.contains(what) && t.contains(&format!("over {family}"))
            })
            .unwrap_or_else(|| panic!("no {what} over {family}: {comparisons:?}"))
    };
    let v4 = titled("IPv4", "Each hop");
    let v6 = titled("IPv6", "Each hop");
    titled("IPv4", "The whole path");
    titled("IPv6", "The whole path");
    assert!(
        v4["method"]
            .as_str()
            .unwrap()
            .contains("every address family the path carries (IPv4 and IPv6)"),
        "{}",
        v4["method"]
    );
    let (rows4, rows6) = (
        v4["rows"].as_array().unwrap(),
        v6["rows"].as_array().unwrap(),
    );
    let quantities = |rows: &[serde_json::Value]| -> Vec<String> {
        rows.iter()
            .map(|r| r["quantity"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(quantities(rows4), quantities(rows6));
    for (a, b) in rows4.iter().zip(rows6) {
        eprintln!("{a}\n{b}");
        let q = a["quantity"].as_str().unwrap();
        if !q.ends_with("fixed") {
            assert_eq!(a["configured"], b["configured"], "{a} {b}");
        }
        // Each family measured every row; the per-byte costs going out come near the file's.
        for r in [a, b] {
            let (c, o) = (
                r["configured"].as_f64().unwrap(),
                r["ours"].as_f64().unwrap(),
            );
            assert!(o.is_finite(), "{r}");
            if q.ends_with("per byte out") {
                assert!((o / c - 1.0).abs() <= 0.08, "{r}");
            }
        }
    }
}

/// A bellovin tolerance column, "2% (run +-0.62%)" or "20 us (run +-3.5 us)": the fixed
/// tolerance and this run's interval, in the same unit (NaN-free: no interval reads infinite).
fn tolerance_and_interval(column: &str) -> (f64, f64) {
    let number = |s: &str| {
        s.trim_start_matches("+-")
            .trim_end_matches(['%', ')'])
            .trim_end_matches(" us")
            .parse::<f64>()
            .unwrap_or(f64::INFINITY)
    };
    let (fixed, run) = column.split_once(" (run").expect(column);
    (
        number(fixed.trim_end_matches(" us")),
        number(
            run.trim_start_matches(' ')
                .trim_start_matches(": no interval"),
        ),
    )
}

/// A fixed tolerance (percent, or us for a fixed row) in the row's own unit around `c`.
fn fixed_in_unit(tolerance: f64, c: f64, quantity: &str) -> f64 {
    if quantity.ends_with("fixed") {
        tolerance
    } else {
        tolerance / 100.0 * c.abs()
    }
}

#[test]
fn vj_buffers_seed_004_diagonal_appears_with_the_3_60_host_model() {
    if !can_build_labs("vj_buffers_seed_004_diagonal_appears_with_the_3_60_host_model") {
        return;
    }
    // Alone: the diagonal's rise is judged between two rates of one run, and the modern lab's
    // plateau within its tolerance of the link's ceiling.
    let _lane = crate::lab::LAB_LOCK.alone();
    // 300 kB per point (the seed: four runs of 8 MB), across both labs.
    let doc = json(&["reproduce", "vj-buffers", "-n", "300kB", "--json"]);
    let comparisons = doc["result"]["comparisons"].as_array().unwrap();
    assert_eq!(comparisons.len(), 3);
    let rows_of = |i: usize| comparisons[i]["rows"].as_array().unwrap().clone();
    let (sun3, modern, granted) = (rows_of(0), rows_of(1), rows_of(2));
    assert_eq!((sun3.len(), modern.len(), granted.len()), (15, 15, 12));
    assert_eq!(row(&sun3, "1 packet: task to task")["paper"], 384.0);
    // The 3/60 host cost makes the rate rise with the buffer (the seed's 2.6x from 1 to 12
    // packets); hosts that answer at once are near the link's rate from 1 packet on.
    let rise = |rows: &[serde_json::Value]| {
        row(rows, "the diagonal: rate at 12 packets / rate at 1")["ours"]
            .as_f64()
            .unwrap()
    };
    // Full runs give 2.4x and 1.1x; 300 kB points on a loaded 2-core machine spread, so the
    // bounds only keep the two apart (without the host model both come out near 1.1x).
    assert!(rise(&sun3) > 1.55, "{}", rise(&sun3));
    // A loaded machine can slow the modern lab's 1-packet point (stop and wait) and make it
    // rise (1.54x at load 9 with the test binary on 4 threads; 1.9-3.2x in session 24, each
    // time with one retransmission timeout after the receiver pruned its queue): then only
    // with the figures that show the load did it, the emulator's lateness, the receiver's
    // wait for a CPU, the sender's empty socket and the timeouts (at their least, 200 ms)
    // making up half of what that window lost against the 12-packet rate.
    let modern_diagonal = row(&modern, "the diagonal: rate at 12 packets / rate at 1");
    assert!(
        rise(&modern) < 1.45
            || modern_diagonal["why"]
                .as_str()
                .unwrap()
                .contains("measured cause: the machine's load"),
        "{modern_diagonal}"
    );
    // The 1-packet row is the one the host cost was derived from: stop and wait. A loaded
    // machine can take it below the seed's by more than 25% (287 KiB/s at load average 7.2,
    // 234 at 9.5): then only with what the load did during that point printed beside it, the
    // emulator's lateness per round trip and the load average (issue 21).
    let one = row(&sun3, "1 packet: task to task");
    if one["verdict"] != "within" {
        let why = one["why"].as_str().unwrap();
        assert!(
            why.contains("below the seed")
                && why.contains("the emulator released frames")
                && why.contains("load average"),
            "{one}"
        );
    }
    // The 3/60 plateau (seed: 91% of the ceiling): outside only with this run's collisions
    // per ACK frame printed as its cause (issue 21 item 4).
    let lance = row(&sun3, "plateau, % of the ceiling");
    if lance["verdict"] == "outside" {
        let why = lance["why"].as_str().unwrap();
        assert!(
            why.contains("measured cause: ACKs colliding with data"),
            "{lance}"
        );
        assert!(why.contains("collisions per ACK frame"), "{lance}");
    }
    // With 12 packets in flight the emulated link, not the buffer, sets the modern rate.
    let plateau = row(&modern, "plateau, % of the ceiling");
    assert_eq!(plateau["verdict"], "within", "{plateau}");
    assert!(plateau["ours"].as_f64().unwrap() <= 101.0, "{plateau}");
    // A buffer of K packets is a window of K packets, as in the seed.
    for r in &granted {
        assert_eq!(r["verdict"], "within", "{r}");
    }
}

#[test]
fn reproduce_takes_no_rate_format() {
    // Every figure carries its own unit column, so -f would be parsed and ignored: refused.
    let run = wirespeed(&["reproduce", "boggs", "-f", "m"]);
    assert_eq!(run.status, 2, "{}", run.stderr);
}

#[test]
fn an_installed_binary_reproduces_from_any_directory() {
    // `cargo install` copies the binary alone: its labs and examples must be built in. Run a
    // copy from an empty directory with no source tree above it.
    let dir = std::env::temp_dir().join(format!("wirespeed-installed-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    let exe = dir.join("bin/wirespeed");
    std::fs::copy(env!("CARGO_BIN_EXE_wirespeed"), &exe).unwrap();
    let run = |args: &[&str]| {
        crate::util::output_of_fresh_copy(|| {
            let mut copy = std::process::Command::new(&exe);
            copy.args(args).current_dir(&dir);
            copy
        })
    };
    let list = run(&["reproduce", "--list"]);
    assert!(list.status.success());
    assert!(String::from_utf8_lossy(&list.stdout).contains("labs/boggs-24.toml"));
    let boggs = run(&["reproduce", "boggs", "-t", "1s", "--json"]);
    let stderr = String::from_utf8_lossy(&boggs.stderr).to_string();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(boggs.status.success(), "{stderr}");
    let doc: serde_json::Value = serde_json::from_slice(&boggs.stdout).unwrap();
    assert!(!rows(&doc).is_empty());
}

/// Issue 15 item 5: the progress line names the topology that will be measured, not the
/// built-in one it replaces (checked with a file that is then refused, so no lab is built).
#[test]
fn a_given_topology_is_named_in_the_progress_line() {
    let dir = std::env::temp_dir().join(format!("ws-topology-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("my-path.toml");
    std::fs::write(&file, "not toml [\n").unwrap();
    let run = crate::util::wirespeed(&[
        "reproduce",
        "bellovin",
        "--topology",
        file.to_str().unwrap(),
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(run.status, 2, "{}", run.stderr);
    let first = run.stderr.lines().next().unwrap_or_default();
    assert!(first.contains("my-path.toml"), "{first}");
    assert!(!first.contains("seed-001-path.toml"), "{first}");
}
