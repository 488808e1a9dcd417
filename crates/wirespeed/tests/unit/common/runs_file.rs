use serde::Deserialize;
use serde::Serialize;
use std::path::{Path, PathBuf};
use wirespeed::common::runs_file::*;

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Plan {
    schema: String,
    points: u32,
}

impl RunsPlan for Plan {
    const SCHEMA: &'static str = "wirespeed.test-runs.v1";
    fn schema(&self) -> &str {
        &self.schema
    }
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Run {
    point: u32,
    value: f64,
}

fn temp(name: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("ws-runs-file-{}-{name}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn plan() -> Plan {
    Plan {
        schema: Plan::SCHEMA.into(),
        points: 8,
    }
}

/// A file with the plan and runs 0..n, each line whole.
fn written(name: &str, n: u32) -> PathBuf {
    let path = temp(name);
    let mut file = RunsFile::create(&path, &plan()).unwrap();
    for point in 0..n {
        file.append(&Run {
            point,
            value: f64::from(point) * 1.5,
        })
        .unwrap();
    }
    path
}

fn resume(path: &Path) -> anyhow::Result<Resumed<Plan, Run>> {
    RunsFile::resume::<Plan, Run>(path)
}

#[test]
fn whole_files_resume_unchanged() {
    let path = written("whole", 3);
    let before = std::fs::read(&path).unwrap();
    let r = resume(&path).unwrap();
    assert_eq!(r.plan, plan());
    assert_eq!(r.runs.len(), 3);
    assert!(r.repair.is_none());
    assert_eq!(std::fs::read(&path).unwrap(), before);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_torn_last_line_is_cut_off_and_reported_and_appends_follow_whole_records() {
    let path = written("torn", 7);
    let whole = std::fs::read(&path).unwrap();
    let fragment = br#"{"point":7,"val"#;
    let mut torn = whole.clone();
    torn.extend_from_slice(fragment);
    std::fs::write(&path, &torn).unwrap();
    let mut r = resume(&path).unwrap();
    assert_eq!(r.runs.len(), 7, "every whole record is kept");
    let repair = r.repair.expect("the repair is reported");
    assert!(
        repair.contains(&format!("dropped {} bytes", fragment.len())),
        "{repair}"
    );
    assert!(repair.contains("line 9"), "{repair}");
    assert_eq!(std::fs::read(&path).unwrap(), whole, "the fragment is gone");
    r.file
        .append(&Run {
            point: 7,
            value: 0.0,
        })
        .unwrap();
    drop(r.file); // the lock is this open file's: close it as a finished run would
    let again = resume(&path).unwrap();
    assert_eq!(again.runs.len(), 8, "the next resume reads all 8");
    assert!(again.repair.is_none());
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_last_record_missing_only_its_newline_is_kept() {
    let path = written("newline", 4);
    let mut bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes.pop(), Some(b'\n'));
    std::fs::write(&path, &bytes).unwrap();
    let mut r = resume(&path).unwrap();
    assert_eq!(r.runs.len(), 4, "the record without its newline is whole");
    assert!(r.repair.is_none(), "nothing was dropped");
    r.file
        .append(&Run {
            point: 4,
            value: 2.0,
        })
        .unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 6, "{text}");
    drop(r); // the lock is this open file's: close it as a finished run would
    assert_eq!(resume(&path).unwrap().runs.len(), 5);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_plan_alone_without_its_newline_is_kept() {
    let path = written("plan-only", 0);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.pop();
    std::fs::write(&path, &bytes).unwrap();
    let mut r = resume(&path).unwrap();
    assert!(r.runs.is_empty());
    r.file
        .append(&Run {
            point: 0,
            value: 1.0,
        })
        .unwrap();
    drop(r); // the lock is this open file's: close it as a finished run would
    assert_eq!(resume(&path).unwrap().runs.len(), 1);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn every_truncation_keeps_exactly_the_whole_records_before_it() {
    let path = written("every-cut", 3);
    let whole = std::fs::read(&path).unwrap();
    let ends: Vec<usize> = whole
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i + 1)
        .collect();
    for cut in ends[0] - 1..=whole.len() {
        std::fs::write(&path, &whole[..cut]).unwrap();
        let r = resume(&path).unwrap_or_else(|e| panic!("cut at {cut}: {e:#}"));
        // Whole lines before the cut, plus the one the cut leaves missing only its newline.
        let expected = ends.iter().filter(|&&e| e - 1 <= cut).count() - 1;
        assert_eq!(r.runs.len(), expected, "cut at {cut}");
        let kept = std::fs::read(&path).unwrap();
        assert!(
            whole.starts_with(&kept),
            "cut at {cut}: the repair only removes bytes"
        );
        assert_eq!(kept.last(), Some(&b'\n'), "cut at {cut}: ends whole");
    }
    let _ = std::fs::remove_file(&path);
}

#[test]
fn damage_in_the_middle_is_refused_and_the_file_left_alone() {
    let path = written("middle", 3);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2] = r#"{"point":1,"val"#;
    let damaged = lines.join("\n") + "\n";
    std::fs::write(&path, &damaged).unwrap();
    let err = format!("{:#}", resume(&path).err().expect("refused"));
    assert!(
        err.contains("line 4 follows the unreadable line 3"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), damaged);
    let _ = std::fs::remove_file(&path);
}

#[test]
fn other_files_are_refused() {
    let path = temp("other");
    std::fs::write(&path, "").unwrap();
    assert!(format!("{:#}", resume(&path).err().unwrap()).contains("is empty"));
    std::fs::write(
        &path,
        "{\"schema\":\"wirespeed.other-runs.v1\",\"points\":1}\n",
    )
    .unwrap();
    assert!(format!("{:#}", resume(&path).err().unwrap()).contains("is not a"));
    std::fs::write(&path, "{\"schema\":\"wirespeed.te").unwrap();
    assert!(format!("{:#}", resume(&path).err().unwrap()).contains("start again"));
    let _ = std::fs::remove_file(&path);
}

#[test]
fn a_second_writer_is_refused_while_the_first_holds_the_file() {
    let path = temp("locked");
    let first = RunsFile::create(&path, &plan()).unwrap();
    let err = resume(&path).err().unwrap().to_string();
    assert!(err.contains("being written by another wirespeed"), "{err}");
    drop(first);
    assert!(
        resume(&path).is_ok(),
        "free again once the first has closed it"
    );
    let _ = std::fs::remove_file(&path);
}

#[test]
fn create_refuses_an_existing_file() {
    let path = written("exists", 1);
    let err = RunsFile::create(&path, &plan()).err().unwrap();
    assert!(format!("{err:#}").contains("exists: to continue it, use --resume"));
    let _ = std::fs::remove_file(&path);
}
