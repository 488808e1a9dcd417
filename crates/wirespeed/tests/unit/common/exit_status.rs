use wirespeed::common::exit_status::*;

#[test]
fn statuses_are_carried_by_the_error_and_default_to_bad_input() {
    let partial: anyhow::Error = Exit::partial("cut short".into()).into();
    assert_eq!(code_of(&partial), PARTIAL);
    assert_eq!(code_of(&partial.context("while testing")), PARTIAL);
    assert_eq!(
        code_of(&anyhow::anyhow!("-t x is not a duration")),
        BAD_INPUT
    );
    let fault: anyhow::Error = Exit {
        code: 1,
        message: "a fault".into(),
    }
    .into();
    assert_eq!(code_of(&fault), 1);
}
