//! Completions and manual pages, loaded the way a shell and `man` load them.

use std::process::Command;

use super::util::wirespeed;

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("wirespeed-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What bash offers for the words typed so far (the last one being completed).
fn bash_offers(script: &std::path::Path, words: &[&str]) -> Vec<String> {
    let line = words.join(" ");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let program = format!(
        "source '{}'; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT={}; \
         _wirespeed wirespeed '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script.display(),
        quoted.join(" "),
        words.len() - 1,
        line.len(),
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash runs");
    assert!(
        out.status.success(),
        "bash: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_commands_and_their_own_flags() {
    let run = wirespeed(&["completions", "bash"]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let dir = scratch("completions");
    let script = dir.join("wirespeed.bash");
    std::fs::write(&script, &run.stdout).unwrap();
    let commands = bash_offers(&script, &["wirespeed", "s"]);
    for want in ["serve", "sweep", "sim"] {
        assert!(
            commands.iter().any(|c| c == want),
            "{want} not in {commands:?}"
        );
    }
    assert!(!commands.iter().any(|c| c == "tcp"), "{commands:?}");
    let flags = bash_offers(&script, &["wirespeed", "tcp", "--con"]);
    assert!(flags.iter().any(|f| f == "--congestion"), "{flags:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_manual_page_renders_without_a_warning() {
    let dir = scratch("man");
    let run = wirespeed(&["man", "--dir", dir.to_str().unwrap()]);
    assert_eq!(run.status, 0, "{}", run.stderr);
    let mut pages: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    pages.sort();
    assert!(pages.len() >= 15, "{pages:?}");
    let have_groff = Command::new("groff").arg("--version").output().is_ok();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let name = page.file_stem().unwrap().to_str().unwrap();
        assert!(text.contains(&format!(".TH {name} 1")), "{name}");
        if have_groff {
            let out = Command::new("groff")
                .args(["-man", "-Tutf8", "-ww", "-z"])
                .arg(page)
                .output()
                .unwrap();
            assert!(
                out.status.success() && out.stderr.is_empty(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn man_refuses_a_file_given_as_its_directory() {
    let dir = scratch("man-file");
    let file = dir.join("not-a-dir");
    std::fs::write(&file, "x").unwrap();
    let run = wirespeed(&["man", "--dir", file.to_str().unwrap()]);
    super::util::assert_one_line_error(&run, "is a file, not a directory");
    std::fs::remove_dir_all(&dir).unwrap();
}
