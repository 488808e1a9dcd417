mod interface_name_tests {
    use wirespeed::common::flags::parse_interface_name;

    #[test]
    fn interface_names_are_names_never_paths() {
        for good in ["lo", "eth0", "ws-h1-eth0", "enp0s31f6", "a"] {
            assert_eq!(parse_interface_name(good).as_deref(), Ok(good));
        }
        for bad in [
            "",
            ".",
            "..",
            "../etc",
            "/dev/null",
            "a b",
            "sixteen-chars-xx",
            "eth0:1",
            "a\tb",
        ] {
            assert!(parse_interface_name(bad).is_err(), "{bad:?}");
        }
    }
}
