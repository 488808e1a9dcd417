use wirespeed::sweep::html::*;
use wirespeed_model::sweep::Axis;

#[test]
fn buffer_ticks_carry_their_unit() {
    let packets: Axis = "1,8,64".parse().unwrap();
    assert_eq!(
        buffer_axis(&packets, 1460, "receive buffer"),
        (
            vec!["1".to_string(), "8".into(), "64".into()],
            "receive buffer, packets of 1460 bytes".to_string()
        )
    );
    let bytes: Axis = "16KiB,1MiB".parse().unwrap();
    let (ticks, title) = buffer_axis(&bytes, 1460, "send buffer");
    assert_eq!(ticks, ["16 KiB", "1 MiB"]);
    assert_eq!(title, "send buffer");
}
