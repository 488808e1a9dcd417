use clap::CommandFactory;

use wirespeed::cli::Cli;
use wirespeed::common::install_aids::*;

#[test]
fn every_command_and_subcommand_has_a_page_that_names_it() {
    let pages = pages(Cli::command()).unwrap();
    let names: Vec<&str> = pages.iter().map(|(n, _)| n.as_str()).collect();
    for want in [
        "wirespeed",
        "wirespeed-tcp",
        "wirespeed-udp",
        "wirespeed-serve",
        "wirespeed-sim-csma",
        "wirespeed-lab-up",
        "wirespeed-model-compare",
    ] {
        assert!(names.contains(&want), "{want} missing from {names:?}");
    }
    for (name, page) in &pages {
        let text = String::from_utf8_lossy(page);
        assert!(text.starts_with(".ie"), "{name}: not roff");
        assert!(text.contains(&format!(".TH {name} 1")), "{name}: no title");
    }
}

#[test]
fn pages_written_to_a_directory_are_all_there() {
    let dir = std::env::temp_dir().join(format!("wirespeed-man-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    man(
        ManArgs {
            dir: Some(dir.clone()),
        },
        Cli::command(),
    )
    .unwrap();
    let names: Vec<String> = pages(Cli::command())
        .unwrap()
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    let missing = missing_pages(&dir, &names);
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(missing.is_empty(), "{missing:?}");
}
