use wirespeed::common::brief::*;

#[test]
fn figures_read_at_a_glance() {
    assert_eq!(percent(9.408, 9.415), "99.9%");
    assert_eq!(percent(1.0, 0.0), "n/a");
    assert_eq!(ms(11.604), "11.6 ms");
    assert_eq!(ms(0.0512), "0.051 ms");
    assert_eq!(ms(2.345), "2.35 ms");
    assert_eq!(ms(123.4), "123 ms");
    assert_eq!(ms(f64::NAN), "n/a");
}
