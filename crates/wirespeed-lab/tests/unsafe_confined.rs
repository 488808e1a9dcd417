//! `unsafe` appears nowhere in the crate's sources but under `src/sys/` (`lib.rs` denies it
//! elsewhere; this catches an `allow` that would let it back in). The same check as
//! wirespeed-net's `tests/layers.rs`.

use std::path::{Path, PathBuf};

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `text` without its comments: `/* */` blocks, then everything after `//` on each line.
fn code_lines(text: &str) -> Vec<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("/*") {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open + 2..].find("*/") else {
            rest = "";
            break;
        };
        out.extend(rest[open..open + 2 + close + 2].matches('\n').map(|_| '\n'));
        rest = &rest[open + 2 + close + 2..];
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap_or("").to_string())
        .collect()
}

fn has_token(code: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(word).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

#[test]
fn unsafe_appears_only_under_sys() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut found = Vec::new();
    let mut in_sys = 0;
    for file in files {
        let rel = file.strip_prefix(&root).unwrap();
        let lines = code_lines(&std::fs::read_to_string(&file).unwrap());
        if rel.starts_with("sys") {
            in_sys += lines.iter().filter(|l| has_token(l, "unsafe")).count();
            continue;
        }
        for (n, line) in lines.iter().enumerate() {
            if has_token(line, "unsafe") {
                found.push(format!("src/{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "unsafe outside src/sys/: move it into sys behind a safe function:\n{}",
        found.join("\n")
    );
    assert!(in_sys > 5, "{in_sys} unsafe tokens under src/sys/");
}
