//! The crate's layering, checked from its sources: no module imports one that imports it back
//! (directly or around a circle), and the control protocol imports nothing but the plain wire
//! records it carries (`spec`, `report`) and the key primitives (`auth`); and `unsafe` appears
//! nowhere but in `src/sys/`. A module that breaks a rule fails here, naming the circle, the
//! import or the line.

use std::collections::{BTreeMap, BTreeSet};
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

/// Each top-level module and the top-level modules its non-test code names as `crate::X`.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let rel = file.strip_prefix(&root).unwrap();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        // Test modules may use anything; they come last in every file here.
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let targets = graph.entry(module.clone()).or_default();
        for line in code.lines() {
            let line = line.split("//").next().unwrap_or("");
            for (i, _) in line.match_indices("crate::") {
                let name: String = line[i + 7..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() && name != module {
                    targets.insert(name);
                }
            }
        }
    }
    graph
}

fn find_circle(
    graph: &BTreeMap<String, BTreeSet<String>>,
    at: &str,
    path: &mut Vec<String>,
    done: &mut BTreeSet<String>,
) -> Option<Vec<String>> {
    if let Some(i) = path.iter().position(|m| m == at) {
        let mut circle = path[i..].to_vec();
        circle.push(at.to_string());
        return Some(circle);
    }
    if done.contains(at) {
        return None;
    }
    path.push(at.to_string());
    for next in graph.get(at).into_iter().flatten() {
        if graph.contains_key(next)
            && let Some(c) = find_circle(graph, next, path, done)
        {
            return Some(c);
        }
    }
    path.pop();
    done.insert(at.to_string());
    None
}

#[test]
fn no_module_imports_one_that_imports_it_back() {
    let graph = import_graph();
    assert!(graph.len() > 15, "{graph:?}");
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        if let Some(circle) = find_circle(&graph, module, &mut Vec::new(), &mut done) {
            panic!("import circle: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn the_control_protocol_imports_only_the_records_it_carries() {
    let graph = import_graph();
    let allowed: BTreeSet<&str> = ["spec", "report", "auth"].into();
    let control = &graph["control"];
    let features: Vec<&String> = control
        .iter()
        .filter(|m| !allowed.contains(m.as_str()))
        .collect();
    assert!(
        features.is_empty(),
        "control imports {features:?}: move what it needs into control or a record module"
    );
    // And those records do no I/O of their own: they import nothing above them.
    for record in ["spec", "report"] {
        let above: Vec<&String> = graph[record]
            .iter()
            .filter(|m| !["spec", "report"].contains(&m.as_str()))
            .collect();
        assert!(above.is_empty(), "{record} imports {above:?}");
    }
}

/// `text` without its comments: `/* */` blocks, then everything after `//` on each line (doc
/// comments included), as the import scan above reads lines.
fn code_lines(text: &str) -> Vec<String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find("/*") {
        out.push_str(&rest[..open]);
        let Some(close) = rest[open + 2..].find("*/") else {
            rest = "";
            break;
        };
        // Keep the line count, so line numbers still point at the source.
        out.extend(rest[open..open + 2 + close + 2].matches('\n').map(|_| '\n'));
        rest = &rest[open + 2 + close + 2..];
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap_or("").to_string())
        .collect()
}

/// Whether `code` holds `word` as a token of its own (`unsafe`, not `unsafe_code`).
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
        let text = std::fs::read_to_string(&file).unwrap();
        let lines = code_lines(&text);
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
        "unsafe outside src/sys/: move it into the sys module of its kernel facility, behind a \
         safe function that states its invariants:\n{}",
        found.join("\n")
    );
    // The scan itself works: the sys tree does hold the crate's unsafe code.
    assert!(in_sys > 10, "{in_sys} unsafe tokens under src/sys/");
}

#[test]
fn the_unsafe_scan_sees_code_and_skips_comments() {
    let lines = code_lines("let a = 1; // unsafe here is prose\n/* unsafe\n */ unsafe { f() }\n");
    assert!(!has_token(&lines[0], "unsafe"));
    assert_eq!(lines.len(), 3);
    assert!(has_token(&lines[2], "unsafe"), "{lines:?}");
    assert!(!has_token("#![deny(unsafe_code)]", "unsafe"));
    assert!(has_token("let x = unsafe{ y };", "unsafe"));
}
