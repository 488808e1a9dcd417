use wirespeed_net::localtime::*;

#[test]
fn a_format_writes_the_local_time_of_a_moment() {
    let f = StampFormat::new("%Y|%%|").unwrap();
    // 2001-09-09T01:46:40Z: in any zone within ±12 h the year is 2001.
    assert_eq!(f.at(1_000_000_000).as_deref(), Some("2001|%|"));
    assert!(!StampFormat::new("%c ").unwrap().now().is_empty());
}

#[test]
fn hostile_formats_are_refused_with_the_fix() {
    assert!(StampFormat::new("").unwrap_err().contains("empty"));
    let long = "%Y".repeat(40);
    assert!(StampFormat::new(&long).unwrap_err().contains("at most 64"));
    assert!(StampFormat::new("%T\n").unwrap_err().contains("control"));
    assert!(StampFormat::new("a\0b").is_err());
    // Short to write, long to expand: %c is about 24 bytes, 12 of them pass 256.
    let wide = "%c".repeat(12);
    assert!(
        StampFormat::new(&wide)
            .unwrap_err()
            .contains("more than 256")
    );
}
