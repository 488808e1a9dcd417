use std::path::{Path, PathBuf};
use wirespeed::common::data::*;

/// The source tree this binary was built from.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn every_repository_data_file_is_built_in_unchanged() {
    for (dir, table) in [("labs", LABS), ("examples", EXAMPLES)] {
        // Directories (a sysfs replay tree for the docs) are read by path, not built in.
        let mut on_disk: Vec<String> = std::fs::read_dir(repo().join(dir))
            .unwrap()
            .map(Result::unwrap)
            .filter(|e| e.file_type().unwrap().is_file())
            .map(|e| format!("{dir}/{}", e.file_name().to_string_lossy()))
            .collect();
        on_disk.sort();
        let mut built: Vec<String> = table.iter().map(|f| f.path.to_string()).collect();
        built.sort();
        assert_eq!(on_disk, built, "add new files of {dir}/ to data.rs");
        for f in table {
            let text = std::fs::read_to_string(repo().join(f.path)).unwrap();
            assert_eq!(text, f.text, "{}", f.path);
        }
    }
}

#[test]
fn every_built_in_lab_parses() {
    for f in LABS {
        let name = f.path.trim_start_matches("labs/");
        LabFile::builtin(name).unwrap().topology().unwrap();
    }
    assert!(LabFile::builtin("no-such.toml").is_err());
}
