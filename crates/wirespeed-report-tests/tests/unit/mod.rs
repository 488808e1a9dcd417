//! The unit tests of wirespeed-report, one module per module of the library (`plot` here tests
//! `wirespeed_report::plot`; `document`, `csv` and `table` test the items the library
//! re-exports from its private modules of those names).

mod csv;
mod decode;
mod document;
mod html;
mod plot;
mod table;

/// wirespeed-report's library is not compiled in test mode (`[lib] test = false`), so a
/// `#[cfg(test)]` module written in its sources would be compiled by nobody and its tests would
/// never run; this names such a file instead.
#[test]
fn the_library_holds_no_unit_tests_that_would_never_run() {
    fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs")
                && std::fs::read_to_string(&path)
                    .unwrap()
                    .contains("#[cfg(test)]")
            {
                found.push(path.display().to_string());
            }
        }
    }
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../wirespeed-report/src");
    let mut found = Vec::new();
    walk(&src, &mut found);
    assert!(
        src.join("lib.rs").is_file(),
        "{} is not the library",
        src.display()
    );
    assert!(
        found.is_empty(),
        "#[cfg(test)] in {}: wirespeed-report's unit tests are never compiled there; put them in \
         crates/wirespeed-report-tests/tests/unit/",
        found.join(", ")
    );
}
