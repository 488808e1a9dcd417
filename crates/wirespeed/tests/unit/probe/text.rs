use wirespeed::probe::text::*;
use wirespeed_model::delay::Cost;

/// Issue 15 item 7: costs read in a unit that suits them, never nine decimals of ms.
#[test]
fn times_scale_to_a_readable_unit() {
    assert_eq!(time_text(0.000000349), "0.349 ns");
    assert_eq!(time_text(0.00104), "1.04 us");
    assert_eq!(time_text(0.696), "696 us");
    assert_eq!(time_text(12.5), "12.5 ms");
    assert_eq!(time_text(f64::NAN), "-");
    assert_eq!(interval_text(0.000606, 0.00259), "[0.606, 2.59] us");
    assert_eq!(
        line(Cost::new(0.00104, -0.000000349)),
        "1.04 us - 0.349 ns/byte x size"
    );
}
