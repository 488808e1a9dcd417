use std::io::Write;
use wirespeed::common::line_prefix::*;

fn through(prefix: &LinePrefix, pieces: &[&str]) -> String {
    let mut out = Vec::new();
    let mut w = prefix.wrap(&mut out);
    for p in pieces {
        w.write_all(p.as_bytes()).unwrap();
    }
    String::from_utf8(out).unwrap()
}

#[test]
fn every_line_starts_with_the_title_however_it_is_written() {
    let p = LinePrefix::new(Some("h1"), None).unwrap();
    assert_eq!(
        through(&p, &["a\nb", "c\n", "\nd\n"]),
        "h1:  a\nh1:  bc\nh1:  \nh1:  d\n"
    );
    let none = LinePrefix::default();
    assert_eq!(through(&none, &["a\nb\n"]), "a\nb\n");
}

#[test]
fn the_stamp_comes_before_the_title_as_iperf3_writes_them() {
    let p = LinePrefix::new(Some("t"), Some("[%Y]")).unwrap();
    let line = through(&p, &["x\n"]);
    assert!(
        line.starts_with("[2") && line.ends_with("]t:  x\n"),
        "{line}"
    );
}

#[test]
fn hostile_titles_and_formats_are_refused() {
    for bad in ["", "a\nb", "\u{1b}[31m"] {
        assert!(LinePrefix::new(Some(bad), None).is_err(), "{bad:?}");
    }
    let long = "x".repeat(201);
    let e = LinePrefix::new(Some(&long), None).unwrap_err().to_string();
    assert!(e.contains("at most 200"), "{e}");
    let e = LinePrefix::new(None, Some("%T\n")).unwrap_err().to_string();
    assert!(e.starts_with("--timestamps:"), "{e}");
}
