use wirespeed::throughput::iperf3::html::*;
use wirespeed_net::report::Role;
use wirespeed_net::spec::Flow;

/// iperf3 3.12's `-c --bidir -O 1 -t 1 -J` in small: a warm-up interval, then one counted
/// interval whose clock restarts at zero, and each direction's sums.
const BIDIR: &str = r#"{
  "start": {"version": "iperf 3.12",
            "test_start": {"protocol": "TCP", "num_streams": 1, "duration": 1, "reverse": 0}},
  "intervals": [
    {"streams": [{"socket": 5, "start": 0, "end": 1, "bytes": 100, "bits_per_second": 800,
                  "omitted": true, "sender": true},
                 {"socket": 7, "start": 0, "end": 1, "bytes": 50, "bits_per_second": 400,
                  "omitted": true, "sender": false}],
     "sum": {"start": 0, "end": 1, "bytes": 100, "bits_per_second": 800, "omitted": true,
             "sender": true},
     "sum_bidir_reverse": {"start": 0, "end": 1, "bytes": 50, "bits_per_second": 400,
                           "omitted": true, "sender": false}},
    {"streams": [],
     "sum": {"start": 0.00005, "end": 1, "bytes": 200, "bits_per_second": 1600,
             "omitted": false, "sender": true},
     "sum_bidir_reverse": {"start": 0.00005, "end": 1, "bytes": 70, "bits_per_second": 560,
                           "omitted": false, "sender": false}}],
  "end": {
    "sum_sent": {"seconds": 1, "bytes": 200, "bits_per_second": 1600},
    "sum_received": {"seconds": 1, "bytes": 199, "bits_per_second": 1592},
    "sum_sent_bidir_reverse": {"seconds": 1, "bytes": 70, "bits_per_second": 560},
    "sum_received_bidir_reverse": {"seconds": 1, "bytes": 69, "bits_per_second": 552}}
}"#;

#[test]
fn a_bidir_run_shows_both_directions_and_its_warm_up_before_the_counted_time() {
    let run: Iperf3Run = serde_json::from_str(BIDIR).unwrap();
    assert!(run.bidir());
    let ivs = run.intervals();
    // The warm-up first, then the counted second on the same time line.
    assert!(ivs[0].omitted && !ivs[1].omitted);
    assert_eq!((ivs[0].start_seconds, ivs[0].end_seconds), (0.0, 1.0));
    assert!((ivs[1].start_seconds - 1.00005).abs() < 1e-9, "{ivs:?}");
    assert!((ivs[1].end_seconds - 2.0).abs() < 1e-9);
    // Each direction's sum by its `sender`, each stream by its own.
    assert_eq!(ivs[1].sum_sent.as_ref().unwrap().bytes, 200);
    assert_eq!(ivs[1].sum_received.as_ref().unwrap().bytes, 70);
    assert_eq!(ivs[0].streams[1].role, Role::Receiver);
    assert_eq!(ivs[0].streams[1].flow, Flow::Download);
    let html = run.html().into_string();
    for label in [
        "both ways at once (--bidir)",
        "<td>client to server: sent</td>",
        "<td>client to server: received</td>",
        "<td>server to client: sent</td>",
        "<td>server to client: received</td>",
        "<td>omitted (warm-up, -O)</td>",
        "1 warm-up interval(s) omitted (-O)",
    ] {
        assert!(html.contains(label), "{label}: {html}");
    }
    let heads = run.headlines();
    assert!(
        heads
            .iter()
            .any(|(l, _, v)| l == "received rate, way back (--bidir)" && *v == 552.0),
        "{heads:?}"
    );
}
