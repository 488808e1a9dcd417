//! The unit tests of `wirespeed_report::Csv` (the library's private `csv` module).

use wirespeed_report::Csv;

#[test]
fn quoting_follows_rfc_4180() {
    let mut csv = Csv::new(["a", "b"]);
    csv.row(["1,5", "say \"hi\""]);
    assert_eq!(csv.to_string(), "a,b\n\"1,5\",\"say \"\"hi\"\"\"\n");
}
