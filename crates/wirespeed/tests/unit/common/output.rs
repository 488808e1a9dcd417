use std::path::Path;
use wirespeed::common::output::*;

#[test]
fn output_paths_are_checked_before_the_work() {
    let tmp = std::env::temp_dir();
    assert!(check_output_file("--plot", &tmp.join("ws-output-check.svg")).is_ok());
    let e = check_output_file("--plot", &tmp).unwrap_err().to_string();
    assert!(e.contains("is a directory"), "{e}");
    let e = check_output_file("--heatmap", Path::new("/nonexistent/x.svg"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("/nonexistent does not exist"), "{e}");
    assert!(check_output_file("--csv", Path::new("cells.csv")).is_ok());
    assert!(check_output_dir("--plot", &tmp.join("ws-output-check-dir")).is_ok());
    let e = check_output_dir("--plot", Path::new("/nonexistent/plots"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("does not exist"), "{e}");
}
