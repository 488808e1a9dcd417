use std::path::Path;
use wirespeed_lab::cleanup::*;

#[test]
fn a_path_outside_the_lab_hierarchy_is_not_a_lab_cgroup() {
    assert!(!is_lab_cgroup(Path::new("/"), "x-0000"));
    assert!(!is_lab_cgroup(Path::new("/sys/fs/cgroup"), "x-0000"));
    assert!(!is_lab_cgroup(
        Path::new("/tmp/wirespeed-lab/ws-x-0000"),
        "x-0000"
    ));
    for h in hierarchies() {
        let good = h.root.join(CGROUP_PARENT).join("ws-x-0000");
        assert!(is_lab_cgroup(&good, "x-0000"), "{}", good.display());
        assert!(!is_lab_cgroup(&good, "x-0001"));
    }
}

#[test]
fn no_namespace_matches_no_process() {
    assert!(processes_in(&[]).is_empty());
    assert!(namespace_ids(&["ws-surely-absent-0000-h1".into()]).is_empty());
}
