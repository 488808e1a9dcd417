use wirespeed::common::interrupt::*;
use wirespeed::common::output::OutputArgs;
use wirespeed_model::RateFormat;

#[test]
fn words_are_quoted_only_when_a_shell_would_split_or_expand_them() {
    assert_eq!(quote("--resume"), "--resume");
    assert_eq!(quote("/tmp/a-b_c.jsonl"), "/tmp/a-b_c.jsonl");
    assert_eq!(quote("a b"), "'a b'");
    assert_eq!(quote("it's"), r"'it'\''s'");
    assert_eq!(quote("$HOME"), "'$HOME'");
    assert_eq!(quote(""), "''");
}

#[test]
fn output_flags_round_trip() {
    for unit in [
        "a", "b", "k", "m", "g", "t", "B", "K", "M", "G", "kB", "MB", "GB",
    ] {
        let args = OutputArgs {
            json: true,
            rate_format: unit.parse().unwrap(),
            metrics_file: None,
        };
        let words = output_words(&args);
        assert_eq!(words[0], "--json");
        let back: RateFormat = words.get(2).map_or("a", String::as_str).parse().unwrap();
        assert_eq!(back, args.rate_format, "{unit}");
    }
    for (d, word) in [
        (std::time::Duration::from_micros(1500), "1500us"),
        (std::time::Duration::from_secs(5), "5s"),
        (std::time::Duration::from_millis(2500), "2500ms"),
        (std::time::Duration::from_nanos(7), "7ns"),
    ] {
        assert_eq!(duration_word(d), word);
        assert_eq!(wirespeed_model::units::parse_duration(word).unwrap(), d);
    }
}
