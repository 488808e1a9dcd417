use wirespeed_model::peer::*;

#[test]
fn control_characters_and_forged_lines_become_visible_escapes() {
    let forged = "refused\nsession 99 127.0.0.1:1 completed\n\x1b[2J\r\u{7f}\u{9b}x\\n";
    let shown = escape(forged);
    assert_eq!(
        shown,
        "refused\\nsession 99 127.0.0.1:1 completed\\n\\x1b[2J\\r\\x7f\\x9bx\\\\n"
    );
    assert_eq!(shown.lines().count(), 1);
    assert!(!shown.chars().any(char::is_control));
    assert_eq!(escape("plain text, ünïcode"), "plain text, ünïcode");
    assert_eq!(escape("a\u{202e}b"), "a\\u{202e}b");
    let long = "x".repeat(5000);
    assert_eq!(escape(&long).chars().count(), MAX_SHOWN + 3);
}

#[test]
fn impossible_figures_are_named_with_their_peer() {
    let f = Figures::of("agent 127.0.0.1:5210");
    let e = f.quantity("rate", f64::MAX * 10.0).unwrap_err();
    assert_eq!(
        e.to_string(),
        "agent 127.0.0.1:5210 reported an impossible rate: inf is not a finite, non-negative number; its figures are not shown"
    );
    assert!(f.quantity("rate", -5e9).is_err());
    assert!(f.quantity("rate", f64::NAN).is_err());
    assert!(
        f.answered(10, 11)
            .unwrap_err()
            .to_string()
            .contains("11 answered of 10")
    );
    assert!(f.answered(10, 10).is_ok());
    let e = f
        .ordered("latency", &[Some(0.003), Some(0.001), None, Some(0.004)])
        .unwrap_err();
    assert!(e.to_string().contains("impossible latency"), "{e}");
    assert!(
        f.ordered("latency", &[Some(0.001), None, Some(0.002), Some(0.002)])
            .is_ok()
    );
    // 1 MB in 1 s is 8 Mbit/s; 1.7e308 and 80 Mbit/s are not.
    assert!(f.rate(8e6, 1_000_000, 1.0).is_ok());
    assert!(f.rate(1.7e308, 1_000_000, 1.0).is_err());
    assert!(
        f.rate(80e6, 1_000_000, 1.0)
            .unwrap_err()
            .to_string()
            .contains("impossible rate")
    );
    assert!(f.rate(0.0, 0, 0.0).is_ok());
    assert!(f.rate(1e9, 5, 0.0).is_err());
    // The peer's own name is escaped too.
    let e = Figures::of("agent\n\x1b[31m")
        .quantity("rate", -1.0)
        .unwrap_err();
    assert!(e.to_string().starts_with("agent\\n\\x1b[31m reported"));
}
