//! The binary crate's layering, checked from its sources: no top-level module (a command's
//! folder, `cli`, `common`) imports one that imports it back, directly or around a circle;
//! `common/` imports no command and not the command map; and a command's `result.rs` (its typed
//! result) imports none of its siblings, so that a reader of results needs nothing that
//! measures or prints. A module that breaks a rule fails here, naming the circle or the line.
//! Neither may any module import `cli` or `report`, which sit above the commands.
//! The module maps in the crates' doc comments are checked here too: each names every module
//! its file declares, and nothing that is not there.

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

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Each source file's path under `src/`, its top-level module, and its non-test code's lines
/// (comments cut off). Test modules may use anything; they come last in every file here, and a
/// file named `tests.rs` is all test.
fn code_files() -> Vec<(PathBuf, String, Vec<String>)> {
    let root = src();
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut out = Vec::new();
    for file in files {
        let rel = file.strip_prefix(&root).unwrap().to_path_buf();
        let first = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" || rel.ends_with("tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        let lines = code
            .lines()
            .map(|l| l.split("//").next().unwrap_or("").to_string())
            .collect();
        out.push((rel, module, lines));
    }
    out
}

/// The names a line reaches as `crate::X` (the X).
fn crate_paths(line: &str) -> Vec<String> {
    line.match_indices("crate::")
        .map(|(i, _)| {
            line[i + 7..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        .filter(|n| !n.is_empty())
        .collect()
}

fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, module, lines) in code_files() {
        let targets = graph.entry(module.clone()).or_default();
        for line in &lines {
            for name in crate_paths(line) {
                if name != module {
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
fn no_top_level_module_imports_one_that_imports_it_back() {
    let graph = import_graph();
    // The graph must be the real one: the command map reaches every command.
    assert!(
        graph["cli"].contains("throughput") && graph["cli"].contains("common"),
        "the import scan found no edges: {graph:?}"
    );
    let mut done = BTreeSet::new();
    for module in graph.keys() {
        if let Some(circle) = find_circle(&graph, module, &mut Vec::new(), &mut done) {
            panic!("import circle: {}", circle.join(" -> "));
        }
    }
}

#[test]
fn common_imports_no_command() {
    let mut upward = Vec::new();
    for (rel, module, lines) in code_files() {
        if module != "common" {
            continue;
        }
        for (n, line) in lines.iter().enumerate() {
            if crate_paths(line).iter().any(|name| name != "common") {
                upward.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "common/ imports a command or the command map (pass what it needs in instead):\n{}",
        upward.join("\n")
    );
}

#[test]
fn a_commands_result_imports_none_of_its_siblings() {
    let mut found = Vec::new();
    for (rel, module, lines) in code_files() {
        if rel.file_name().is_none_or(|f| f != "result.rs") {
            continue;
        }
        let own = format!("crate::{module}::");
        for (n, line) in lines.iter().enumerate() {
            if line.contains("super::") || line.contains(&own) {
                found.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a result.rs imports a sibling (measure, text, html...); results must read alone:\n{}",
        found.join("\n")
    );
}

/// Upward imports: `cli` (the command map) and `report` (which decodes every command's
/// documents and asks each for its view) sit above the commands and import them; a command
/// that imported either would close a loop through the top of the crate.
#[test]
fn no_command_imports_the_command_map_or_the_report() {
    let mut upward = Vec::new();
    for (rel, module, lines) in code_files() {
        if module == "cli" || module == "report" {
            continue;
        }
        for (n, line) in lines.iter().enumerate() {
            if crate_paths(line)
                .iter()
                .any(|name| name == "cli" || name == "report")
            {
                upward.push(format!("{}:{}: {}", rel.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "a command imports the command map or the report (hand it what it needs instead):\n{}",
        upward.join("\n")
    );
}

/// The module maps in the crates' doc comments: the `//!` paragraph that starts with
/// `Modules:` in each file below names, in backticks, every module the file declares (so a new
/// module cannot miss the map), and every module path it names in backticks exists (so a moved
/// or renamed one cannot stay on it). Other backticked words (types, files such as `html.rs`,
/// commands) are not module paths and are skipped by their shape.
#[test]
fn every_module_map_names_what_is_there_and_nothing_else() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let maps = [
        "wirespeed/src/lib.rs",
        "wirespeed/src/reproduce/mod.rs",
        "wirespeed-model/src/lib.rs",
        "wirespeed-sim/src/lib.rs",
        "wirespeed-net/src/lib.rs",
        "wirespeed-lab/src/lib.rs",
        "wirespeed-report/src/lib.rs",
    ];
    let mut wrong = Vec::new();
    for map in maps {
        let file = crates.join(map);
        let text = std::fs::read_to_string(&file).unwrap();
        let (named, declared) = module_map(&text);
        assert!(!named.is_empty(), "{map}: no `//! Modules:` paragraph");
        let dir = file.parent().unwrap();
        for name in &named {
            let path = dir.join(name);
            if !path.with_extension("rs").is_file() && !path.is_dir() {
                wrong.push(format!("{map}: the map names `{name}`, which is not there"));
            }
        }
        for name in &declared {
            if !named.contains(name) {
                wrong.push(format!("{map}: `mod {name}` is not on the map"));
            }
        }
    }
    assert!(wrong.is_empty(), "stale module maps:\n{}", wrong.join("\n"));
}

/// The module paths a file's `Modules:` paragraph names (`agent`, `agent/echo`; a trailing `/`
/// dropped) and the modules it declares (test modules aside).
fn module_map(text: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let docs: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(str::trim)
        .collect();
    let paragraph: String = docs
        .iter()
        .skip_while(|l| !l.starts_with("Modules:"))
        .take_while(|l| !l.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let is_path = |w: &str| {
        !w.is_empty()
            && w.starts_with(|c: char| c.is_ascii_lowercase())
            && w.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '/')
    };
    let named = paragraph
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|w| w.trim_end_matches('/'))
        .filter(|w| is_path(w))
        .map(str::to_string)
        .collect();
    let declared = text
        .lines()
        .filter_map(|l| {
            let l = l.trim();
            let rest = l
                .strip_prefix("pub(crate) mod ")
                .or_else(|| l.strip_prefix("pub mod "))
                .or_else(|| l.strip_prefix("mod "))?;
            rest.strip_suffix(';').map(str::to_string)
        })
        .filter(|m| m != "tests")
        .collect();
    (named, declared)
}

#[test]
fn a_module_map_with_a_missing_or_stale_entry_is_seen() {
    let text = "//! Modules: `a` the first, [`b`] the second, `c/` a folder, `Config` a type.\n\
                //!\n//! `d` is not on the map.\n\npub mod a;\nmod b;\npub(crate) mod c;\nmod d;\n\
                #[cfg(test)]\nmod tests;\n";
    let (named, declared) = module_map(text);
    assert_eq!(
        named.into_iter().collect::<Vec<_>>(),
        ["a", "b", "c"],
        "backticked module paths of the paragraph only"
    );
    assert_eq!(
        declared.into_iter().collect::<Vec<_>>(),
        ["a", "b", "c", "d"]
    );
}

/// The longest a production function of the binary may be (issue 30): a longer one hides
/// several phases of a run, or several tables of a view, that want a name each.
const MAX_FUNCTION_LINES: usize = 150;

/// Rust source with its comments, strings and character literals blanked to spaces (newlines
/// kept), so that the braces left are the code's own.
fn blank_non_code(text: &str) -> String {
    let s: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, part: &[char]| {
        out.extend(part.iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
    };
    let starts = |i: usize, pat: &str| {
        pat.chars()
            .enumerate()
            .all(|(k, c)| s.get(i + k) == Some(&c))
    };
    let mut i = 0;
    while i < s.len() {
        let word_before = i > 0 && (s[i - 1].is_alphanumeric() || s[i - 1] == '_');
        let end = if starts(i, "//") {
            (i..s.len()).find(|&j| s[j] == '\n').unwrap_or(s.len())
        } else if starts(i, "/*") {
            (i + 2..s.len())
                .find(|&j| starts(j, "*/"))
                .map_or(s.len(), |j| j + 2)
        } else if s[i] == 'r' && !word_before && (starts(i + 1, "\"") || starts(i + 1, "#")) {
            // A raw string: r"..." or r#"..."#.
            let hashes = (i + 1..s.len()).take_while(|&j| s[j] == '#').count();
            let open = i + 1 + hashes;
            if s.get(open) != Some(&'"') {
                out.push(s[i]);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain((0..hashes).map(|_| '#'))
                .collect();
            (open + 1..s.len())
                .find(|&j| starts(j, &close))
                .map_or(s.len(), |j| j + close.len())
        } else if s[i] == '"' {
            let mut j = i + 1;
            while j < s.len() && s[j] != '"' {
                j += if s[j] == '\\' { 2 } else { 1 };
            }
            (j + 1).min(s.len())
        } else if s[i] == '\'' && s.get(i + 2) == Some(&'\'') && s.get(i + 1) != Some(&'\\') {
            i + 3
        } else if s[i] == '\'' && s.get(i + 1) == Some(&'\\') {
            // '\n', '\'', '\u{..}': up to the closing quote.
            (i + 3..s.len().min(i + 12))
                .find(|&j| s[j] == '\'')
                .map_or(i + 1, |j| j + 1)
        } else {
            out.push(s[i]);
            i += 1;
            continue;
        };
        blank(&mut out, &s[i..end]);
        i = end;
    }
    out
}

/// The index just past the brace that closes the one at `open`.
fn closing_brace(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (k, &b) in code.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return k + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// Each production function of a source file with a body, as (name, first line, lines from
/// its `fn` to its closing brace); the bodies of `#[cfg(test)]` modules are left out.
fn function_lengths(text: &str) -> Vec<(String, usize, usize)> {
    let code = blank_non_code(text);
    let bytes = code.as_bytes();
    let line_of = |at: usize| code[..at].matches('\n').count() + 1;
    let mut test_ranges = Vec::new();
    for (at, _) in code.match_indices("#[cfg(test)]") {
        let rest = code[at + 12..].trim_start();
        let rest = rest.strip_prefix("pub(crate) ").unwrap_or(rest);
        // `mod tests;` is a file of its own (tests.rs, skipped by name); `mod tests { .. }`
        // is skipped here.
        let body = code[at + 12..].find(['{', ';']).map(|k| at + 12 + k);
        if rest.starts_with("mod ")
            && let Some(open) = body.filter(|&k| bytes[k] == b'{')
        {
            test_ranges.push(at..closing_brace(bytes, open));
        }
    }
    let mut out = Vec::new();
    for (at, _) in code.match_indices("fn ") {
        let word_before =
            at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_');
        if word_before || test_ranges.iter().any(|r| r.contains(&at)) {
            continue;
        }
        let name: String = code[at + 3..]
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty() {
            continue;
        }
        // The body opens at the first `{` outside the signature's brackets; a `;` there first
        // is a declaration without a body.
        let mut depth = 0i32;
        let mut open = None;
        for (k, &b) in bytes.iter().enumerate().skip(at) {
            match b {
                b'(' | b'[' => depth += 1,
                b')' | b']' => depth -= 1,
                b'{' if depth == 0 => {
                    open = Some(k);
                    break;
                }
                b';' if depth == 0 => break,
                _ => {}
            }
        }
        let Some(open) = open else { continue };
        let end = closing_brace(bytes, open);
        let first = line_of(at);
        out.push((name, first, line_of(end.saturating_sub(1)) - first + 1));
    }
    out
}

/// Production functions over [`MAX_FUNCTION_LINES`], as `folder/file.rs name` with their
/// length, the allowed ones left out.
fn long_functions() -> Vec<String> {
    let root = src();
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut long = Vec::new();
    for file in files {
        if file.file_name().is_some_and(|f| f == "tests.rs") {
            continue;
        }
        let rel = file.strip_prefix(&root).unwrap().display().to_string();
        let text = std::fs::read_to_string(&file).unwrap();
        for (name, line, lines) in function_lengths(&text) {
            let id = format!("{rel} {name}");
            if lines > MAX_FUNCTION_LINES {
                long.push(format!("{id} ({lines} lines, from line {line})"));
            }
        }
    }
    long
}

#[test]
fn no_production_function_is_over_150_lines() {
    let long = long_functions();
    assert!(
        long.is_empty(),
        "functions over {MAX_FUNCTION_LINES} lines (split them along their seams: a phase of \
         the run, a table of the view, a family of verdicts, each named for what it is):\n{}",
        long.join("\n")
    );
}

#[test]
fn the_function_counter_counts_from_fn_to_its_closing_brace() {
    let text = "/// doc {\nfn short() -> [u8; 2] {\n    let s = \"}\";\n    let c = '}';\n    \
                [0, 1] // }\n}\n\nfn declared(x: u8);\n\nimpl A {\n    pub(crate) fn \
                inner<'a>(x: &'a str) -> &'a str {\n        x\n    }\n}\n\
                #[cfg(test)]\nmod tests {\n    fn in_a_test() {}\n}\n";
    let found = function_lengths(text);
    assert_eq!(
        found,
        [("short".to_string(), 2, 5), ("inner".to_string(), 11, 3)],
        "strings, characters and comments hold no braces; a declaration has no body; test \
         modules are left out"
    );
}

/// The folder of each command: `mod.rs`, and `html.rs` where `report` shows its documents
/// (the report's views name it); never `render.rs` (the text view is `text.rs`).
#[test]
fn every_command_folder_has_the_shape() {
    let root = src();
    let views = std::fs::read_to_string(root.join("report/views/mod.rs")).unwrap();
    let mut wrong = Vec::new();
    let mut folders = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        if !dir.is_dir() || name == "common" {
            continue;
        }
        folders += 1;
        if !dir.join("mod.rs").is_file() {
            wrong.push(format!("{name}/ has no mod.rs"));
        }
        if name != "report"
            && views.contains(&format!("crate::{name}::"))
            && !dir.join("html.rs").is_file()
        {
            wrong.push(format!("{name}/ has a report view but no html.rs"));
        }
        let mut files = Vec::new();
        sources(&dir, &mut files);
        for f in files
            .iter()
            .filter(|f| f.file_name().is_some_and(|n| n == "render.rs"))
        {
            wrong.push(format!(
                "{} is the text view: name it text.rs",
                f.strip_prefix(&root).unwrap().display()
            ));
        }
    }
    assert!(folders >= 10, "the scan found {folders} command folders");
    assert!(
        wrong.is_empty(),
        "command folders out of shape:\n{}",
        wrong.join("\n")
    );
}
