use proptest::prelude::*;
use std::time::Duration;
use wirespeed_model::units::*;

/// Issue 33: a minus sign is refused as negative and a zero rate as below the least
/// rate, not as a syntax the parser does not know.
#[test]
fn negative_and_zero_quantities_say_so() {
    let e = parse_duration("-1").unwrap_err().to_string();
    assert!(
        e.contains("'-1' is negative") && e.contains("duration"),
        "{e}"
    );
    let e = parse_duration("-0.5ms").unwrap_err().to_string();
    assert!(e.contains("negative"), "{e}");
    let e = "-10M".parse::<BitRate>().unwrap_err().to_string();
    assert!(e.contains("negative") && e.contains("bit rate"), "{e}");
    let e = "-64KiB".parse::<ByteSize>().unwrap_err().to_string();
    assert!(e.contains("negative") && e.contains("byte size"), "{e}");
    let e = "0".parse::<BitRate>().unwrap_err().to_string();
    assert!(
        e.contains("at least 1 bit/s") && !e.contains("is not a"),
        "{e}"
    );
    // A hyphen that starts no number is still a syntax error.
    let e = parse_duration("-x").unwrap_err().to_string();
    assert!(e.contains("is not a duration"), "{e}");
    let e = parse_number_list("-1", 1, 24, 24).unwrap_err();
    assert!(e.contains("negative") && e.contains("1 to 24"), "{e}");
    assert_eq!(
        parse_number_list("1-4", 1, 24, 24).unwrap(),
        vec![1, 2, 3, 4]
    );
}

#[test]
fn rates_parse_exactly() {
    let bps = |s: &str| s.parse::<BitRate>().unwrap().bits_per_second();
    assert_eq!(bps("10M"), 10_000_000);
    assert_eq!(bps("10Mbit"), 10_000_000);
    assert_eq!(bps("10 Mbit/s"), 10_000_000);
    assert_eq!(bps("10Mbps"), 10_000_000);
    assert_eq!(bps("1G"), 1_000_000_000);
    assert_eq!(bps("56k"), 56_000);
    assert_eq!(bps("1.544M"), 1_544_000);
    assert_eq!(bps("1Mi"), 1_048_576);
    assert_eq!(bps("1.25MB/s"), 10_000_000);
    assert_eq!(bps("9600"), 9_600);
}

#[test]
fn bad_rates_say_what_was_expected() {
    // "-5M" and "0" are well-formed: negative_and_zero_quantities_say_so.
    for bad in ["", "fast", "10X", "1.2.3M", "10Mfoo"] {
        let err = bad.parse::<BitRate>().unwrap_err().to_string();
        assert!(err.contains("is not a bit rate"), "{bad}: {err}");
        assert!(err.contains("for example"), "{bad}: {err}");
    }
}

#[test]
fn sizes_keep_decimal_and_binary_apart() {
    let b = |s: &str| s.parse::<ByteSize>().unwrap().bytes();
    assert_eq!(b("1500"), 1500);
    assert_eq!(b("64K"), 64_000);
    assert_eq!(b("64kB"), 64_000);
    assert_eq!(b("64KiB"), 65_536);
    assert_eq!(b("64Ki"), 65_536);
    assert_eq!(b("8M"), 8_000_000);
    assert_eq!(b("8MiB"), 8_388_608);
    assert_eq!(b("1.5KiB"), 1536);
    assert!(
        "1.5".parse::<ByteSize>().is_err(),
        "half a byte is not a size"
    );
    assert!("12 parsecs".parse::<ByteSize>().is_err());
}

#[test]
fn sizes_print_with_the_prefix_that_divides() {
    assert_eq!(ByteSize::from_bytes(1500).to_string(), "1500 B");
    assert_eq!(ByteSize::from_bytes(65_536).to_string(), "64 KiB");
    assert_eq!(ByteSize::from_bytes(8_000_000).to_string(), "8 MB");
    assert_eq!(ByteSize::from_bytes(1001).to_string(), "1001 B");
}

#[test]
fn durations_parse() {
    assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
    assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
    assert_eq!(parse_duration("250ms").unwrap(), Duration::from_millis(250));
    assert_eq!(parse_duration("30us").unwrap(), Duration::from_micros(30));
    assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
    assert_eq!(
        parse_duration("7d").unwrap(),
        Duration::from_secs(7 * 86_400)
    );
    assert_eq!(
        parse_duration("30d").unwrap(),
        Duration::from_secs(30 * 86_400)
    );
    assert_eq!(
        parse_duration("2w").unwrap(),
        Duration::from_secs(14 * 86_400)
    );
    assert_eq!(
        parse_duration("1.5d").unwrap(),
        Duration::from_secs(36 * 3_600)
    );
    assert_eq!(
        parse_duration("1 week").unwrap(),
        Duration::from_secs(7 * 86_400)
    );
    // The largest unit still overflows into the range error, not a wrap.
    assert!(
        parse_duration("1000000w")
            .unwrap_err()
            .to_string()
            .contains("584 years")
    );
    assert!(
        parse_duration("soon")
            .unwrap_err()
            .to_string()
            .contains("10s, 250ms")
    );
}

#[test]
fn rate_formats_follow_iperf_letters() {
    let f = |s: &str| s.parse::<RateFormat>().unwrap();
    assert_eq!(f("m").format(10e6), "10 Mbit/s");
    assert_eq!(f("K").format(8.0 * 1024.0 * 1104.0), "1104 KiB/s");
    assert_eq!(f("kB").format(8e3), "1 kB/s");
    assert_eq!(RateFormat::Adaptive.format(1.544e6), "1.544 Mbit/s");
    assert!("x".parse::<RateFormat>().is_err());
}

#[test]
fn digits_are_grouped_in_threes() {
    assert_eq!(group_digits(0), "0");
    assert_eq!(group_digits(999), "999");
    assert_eq!(group_digits(1_250_000), "1,250,000");
}

#[test]
fn durations_print_in_a_readable_unit() {
    assert_eq!(format_seconds(0.142857), "142.9 ms");
    assert_eq!(format_seconds(8e-7), "800 ns");
    assert_eq!(format_seconds(12.34), "12.34 s");
}

#[test]
fn number_lists_take_every_range_syntax() {
    let p = |t: &str| parse_number_list(t, 1, 2000, 1000);
    assert_eq!(p("1-4").unwrap(), vec![1, 2, 3, 4]);
    assert_eq!(p("1..4").unwrap(), vec![1, 2, 3, 4]);
    assert_eq!(p("28..200:64").unwrap(), vec![28, 92, 156, 200]);
    assert_eq!(p("8, 1-3, 2").unwrap(), vec![1, 2, 3, 8]);
    for bad in ["", "a", "4-1", "0-3", "1..3000", "1..5:0", "5:2", "1-3-5"] {
        assert!(p(bad).is_err(), "{bad}");
    }
    assert!(parse_number_list("1..100000", 1, 1_000_000, 1000).is_err());
}

proptest! {
    /// `A-B`, `A..B` and `A..B:1` are one list; a stepped range ends at `B`.
    #[test]
    fn range_syntaxes_agree(a in 1u64..500, len in 0u64..200, step in 1u64..50) {
        let b = a + len;
        let p = |t: String| parse_number_list(&t, 1, 1000, 10_000).unwrap();
        let dash = p(format!("{a}-{b}"));
        prop_assert_eq!(&dash, &(a..=b).collect::<Vec<_>>());
        prop_assert_eq!(&p(format!("{a}..{b}")), &dash);
        prop_assert_eq!(&p(format!("{a}..{b}:1")), &dash);
        let stepped = p(format!("{a}..{b}:{step}"));
        prop_assert_eq!(stepped.first().copied(), Some(a));
        prop_assert_eq!(stepped.last().copied(), Some(b));
        prop_assert!(stepped.windows(2).all(|w| w[1] - w[0] <= step));
        let listed = dash.iter().map(u64::to_string).collect::<Vec<_>>().join(",");
        prop_assert_eq!(p(listed), dash);
    }
}

proptest! {
    #[test]
    fn rate_print_parse_round_trips(bps in 1u64..=u64::MAX / 1024) {
        let rate = BitRate::from_bits_per_second(bps);
        prop_assert_eq!(rate.to_string().parse::<BitRate>().unwrap(), rate);
    }

    #[test]
    fn size_print_parse_round_trips(bytes in 0u64..=u64::MAX / 1024) {
        let size = ByteSize::from_bytes(bytes);
        prop_assert_eq!(size.to_string().parse::<ByteSize>().unwrap(), size);
    }

    #[test]
    fn binary_prefix_is_1024_times(n in 0u64..1_000_000) {
        let kib: ByteSize = format!("{n}KiB").parse().unwrap();
        let kb: ByteSize = format!("{n}kB").parse().unwrap();
        prop_assert_eq!(kib.bytes(), n * 1024);
        prop_assert_eq!(kb.bytes(), n * 1000);
    }

    #[test]
    fn duration_nanos_round_trip(ns in 0u64..10_000_000_000_000) {
        let d = parse_duration(&format!("{ns}ns")).unwrap();
        prop_assert_eq!(d.as_nanos(), u128::from(ns));
    }
}

#[test]
fn a_figure_too_large_is_out_of_range_not_another_syntax() {
    let e = parse_duration("99999999999999s").unwrap_err().to_string();
    assert!(e.contains("out of range for a duration"), "{e}");
    assert!(!e.contains("is not a duration"), "{e}");
    let e = "99999999999999999999T"
        .parse::<BitRate>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("out of range for a bit rate"), "{e}");
    let e = "99999999999GiB"
        .parse::<ByteSize>()
        .unwrap_err()
        .to_string();
    assert!(e.contains("out of range for a byte size"), "{e}");
    // A fraction of a byte is a syntax problem, not a range one.
    let e = "1.5".parse::<ByteSize>().unwrap_err().to_string();
    assert!(e.contains("is not a byte size"), "{e}");
    assert!(
        parse_duration("ten")
            .unwrap_err()
            .to_string()
            .contains("is not a duration")
    );
}
