//! The unit tests of wirespeed-model, one module per module of the library (`load` here tests
//! `wirespeed_model::load`), compiled against the built library: see this package's Cargo.toml
//! for why they live here.

mod autoneg;
mod bestcase;
mod bottleneck;
mod csma_theory;
mod delay;
mod destination;
mod diagnose;
mod dscp;
mod envelope;
mod framing;
mod load;
mod mesh;
mod moments;
mod peer;
mod perhop;
mod resample;
mod sequence;
mod sockbuf;
mod stability;
mod stats;
mod sweep;
mod units;

/// The libraries whose unit tests live in packages of their own (wirespeed-model here;
/// wirespeed-sim, -report, -lab and -net in crates/wirespeed-{sim,report,lab,net}-tests)
/// or, for the binary's library, in its end-to-end test binary (crates/wirespeed/tests/unit/)
/// are not compiled in test mode (`[lib] test = false`), so a `#[cfg(test)]` module written in
/// their sources would be compiled by nobody and its tests would never run; this names such a
/// file.
#[test]
fn no_library_whose_tests_moved_holds_unit_tests_that_would_never_run() {
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
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for (library, tests) in [
        (
            "wirespeed-model",
            "crates/wirespeed-model-tests/tests/unit/",
        ),
        ("wirespeed-sim", "crates/wirespeed-sim-tests/tests/unit/"),
        (
            "wirespeed-report",
            "crates/wirespeed-report-tests/tests/unit/",
        ),
        ("wirespeed-lab", "crates/wirespeed-lab-tests/tests/unit/"),
        ("wirespeed-net", "crates/wirespeed-net-tests/tests/unit/"),
        ("wirespeed", "crates/wirespeed/tests/unit/"),
    ] {
        let src = crates.join(library).join("src");
        let mut found = Vec::new();
        walk(&src, &mut found);
        assert!(
            src.join("lib.rs").is_file(),
            "{} is not the library",
            src.display()
        );
        assert!(
            found.is_empty(),
            "#[cfg(test)] in {}: {library}'s unit tests are never compiled there; put them in \
             {tests}",
            found.join(", ")
        );
    }
}
