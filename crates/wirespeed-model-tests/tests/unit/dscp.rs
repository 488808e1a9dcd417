use proptest::prelude::*;
use wirespeed_model::dscp::*;

#[test]
fn numbers_read_as_iperf3_reads_them_and_names_as_the_rfcs_define() {
    assert_eq!(parse_tos("184"), Ok(0xb8));
    assert_eq!(parse_tos("0xB8"), Ok(0xb8));
    assert_eq!(parse_tos("0270"), Ok(0xb8));
    assert_eq!(parse_tos("0"), Ok(0));
    assert_eq!(parse_tos("EF"), Ok(46 << 2));
    assert_eq!(parse_tos("af41"), Ok(34 << 2));
    assert_eq!(parse_tos("cs1"), Ok(0x20));
    assert_eq!(parse_tos("le"), Ok(4));
    assert!(parse_tos("256").unwrap_err().contains("over 255"));
    assert!(parse_tos("fast").unwrap_err().contains("DSCP name"));
    assert!(parse_tos("0x").is_err() && parse_tos("09").is_err());
    assert_eq!(describe(0xb8), "0xb8 (DSCP 46, EF)");
    assert_eq!(describe(0x29), "0x29 (DSCP 10, AF11, ECN bits 01)");
    assert_eq!(describe(0x0c), "0x0c (DSCP 3)");
}

proptest! {
    /// Every byte comes back from each way of writing it, and every name from its byte.
    #[test]
    fn every_byte_reads_back_in_each_notation(tos: u8) {
        prop_assert_eq!(parse_tos(&tos.to_string()), Ok(tos));
        prop_assert_eq!(parse_tos(&format!("0x{tos:x}")), Ok(tos));
        prop_assert_eq!(parse_tos(&format!("0{tos:o}")), Ok(tos));
        let d = describe(tos);
        if let Some(name) = d.split(", ").nth(1).map(|n| n.trim_end_matches(')'))
            && !name.starts_with("ECN")
        {
            prop_assert_eq!(parse_tos(name), Ok(tos & !0b11));
        }
    }
}
