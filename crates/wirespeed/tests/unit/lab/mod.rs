mod text;

/// Issue 30: a library caller reads the typed status: the list of labs (whatever labs
/// this host has), and a lab that is not there refused in one line naming it.
#[test]
fn a_library_caller_reads_the_lab_status() {
    let listed = wirespeed::lab::status(None).unwrap();
    assert!(matches!(
        listed.result,
        wirespeed::lab::StatusResult::List { .. }
    ));
    assert_eq!(listed.parameters.name, None);
    let err = wirespeed::lab::status(Some("ws-no-such-lab-30")).unwrap_err();
    assert!(format!("{err:#}").contains("ws-no-such-lab-30"), "{err:#}");
}
