use std::path::{Path, PathBuf};
use wirespeed_net::daemon::*;

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ws-daemon-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn a_pid_file_of_a_running_process_is_refused_and_a_stale_one_taken() {
    let dir = scratch("pid");
    let file = dir.join("agent.pid");
    assert!(check_pid_file(&file).is_ok(), "absent is fine");
    write_pid_file(&file, std::process::id()).unwrap();
    let err = check_pid_file(&file).unwrap_err().to_string();
    assert!(
        err.contains(&format!("agent {} is running", std::process::id())),
        "{err}"
    );
    // A process that has ended and been reaped.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let gone = child.id();
    child.wait().unwrap();
    write_pid_file(&file, gone).unwrap();
    assert!(check_pid_file(&file).is_ok(), "a stale file is replaced");
    std::fs::write(&file, "hello\n").unwrap();
    let err = check_pid_file(&file).unwrap_err().to_string();
    assert!(err.contains("not a pid file"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_guard_removes_only_its_own_pid_file() {
    let dir = scratch("guard");
    let file = dir.join("agent.pid");
    write_pid_file(&file, 4_000_000).unwrap();
    drop(PidFileGuard::new(file.clone(), 4_000_000));
    assert!(!file.exists());
    write_pid_file(&file, 4_000_001).unwrap();
    drop(PidFileGuard::new(file.clone(), 4_000_000));
    assert!(file.exists(), "a successor's file is left alone");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_unwritable_directory_is_found_before_the_agent_starts() {
    let err = check_pid_file(Path::new("/nonexistent-dir/agent.pid"))
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot write the pid file"), "{err}");
}
