use wirespeed::common::brief::Headline;
use wirespeed::load::Stats;
use wirespeed::load::{LoadResult, Row};
use wirespeed_model::RateFormat;

fn stats(bits_per_second: f64, delay: f64, excess: Option<f64>) -> Stats {
    Stats {
        bits_per_second,
        bits_per_second_std_dev: 0.0,
        packets_per_second: bits_per_second / 8.0 / 64.0,
        packets_per_second_std_dev: 0.0,
        delay_mean_seconds: delay,
        delay_std_dev_seconds: 0.0,
        ideal_delay_seconds: None,
        excess_delay_seconds: excess,
        jain_fairness: 0.9987,
        per_host_bits_per_second: Vec::new(),
    }
}

fn row(hosts: usize, measured: Option<Stats>, complete: bool) -> Row {
    Row {
        lengths: if complete { "64" } else { "6/2" }.into(),
        hosts,
        reporting_hosts: hosts - usize::from(!complete),
        complete,
        measured,
        delay_source: None,
        loss_at_sink: Some(0.00125),
        model_shared_10mbit: Some(stats(8.9e6, 2.0e-4, None)),
        per_host: Vec::new(),
    }
}

#[test]
fn one_line_per_test_with_the_model_beside_it() {
    let r = LoadResult {
        results_file: None,
        rows: vec![
            row(1, Some(stats(9.38e6, 1.234e-4, None)), true),
            // A tiny negative excess is rounding of nothing, shown as 0.
            row(2, Some(stats(1.8e7, 2.5e-4, Some(-1.973e-20))), true),
            row(3, None, false),
        ],
        rate_format: RateFormat::Adaptive,
    };
    assert_eq!(
        r.headline(RateFormat::Adaptive),
        [
            "load: 1 host, 64-byte packets: 9.38 Mbit/s, 18,320 packets/s, delay 123.4 us, loss 0.125%; model of a shared 10 Mbit/s segment: 8.9 Mbit/s, delay 200 us",
            "load: 2 hosts, 64-byte packets: 18 Mbit/s, 35,156 packets/s, delay 250 us (excess 0 s), Jain fairness 0.999, loss 0.125%; model of a shared 10 Mbit/s segment: 8.9 Mbit/s, delay 200 us",
            "load: 3 hosts, length mix 6/2: no host reported, loss 0.125%; model of a shared 10 Mbit/s segment: 8.9 Mbit/s, delay 200 us (incomplete: 2 of 3 hosts reported)",
        ]
    );
    let none = LoadResult {
        results_file: None,
        rows: Vec::new(),
        rate_format: RateFormat::Adaptive,
    };
    assert_eq!(
        none.headline(RateFormat::Adaptive),
        ["load: no test finished"]
    );
}
