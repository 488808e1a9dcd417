//! The unit tests of `wirespeed_report::Table` (the library's private `table` module).

use wirespeed_report::Table;

#[test]
fn columns_align() {
    let mut t = Table::new(["size", "KB/s"]);
    t.row(["1", "384"]).row(["12", "1001"]);
    assert_eq!(t.to_string(), "size  KB/s\n1      384\n12    1001\n");
}
