mod decoding_tests {
    //! `reproduce` reads the documents of the commands it runs in lab namespaces through the
    //! types that wrote them: a field renamed or retyped on one side fails here, not in a lab.

    use serde::de::IgnoredAny;
    use wirespeed_report::Document;

    use wirespeed::reproduce::lab_run::TcpDocument;

    fn testdata(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("testdata/report")
            .join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    #[test]
    fn recorded_documents_of_every_command_reproduce_runs_decode() {
        let tcp: TcpDocument = wirespeed_report::decode::from_str(&testdata("tcp.json")).unwrap();
        assert!(tcp.result.end.sum_received.bits_per_second > 0.0);
        // The window the duplex comparison checks: the largest of the senders' (two streams,
        // 29,696 and 29,140,992 bytes in the recorded document).
        assert_eq!(
            wirespeed::reproduce::lab_run::sender_window(&tcp),
            Some(29_140_992)
        );
        let load: Document<IgnoredAny, wirespeed::load::LoadResult> =
            wirespeed_report::decode::from_str(&testdata("load.json")).unwrap();
        assert!(!load.result.rows.is_empty());
        let sweep: Document<IgnoredAny, wirespeed::sweep::SweepReport> =
            wirespeed_report::decode::from_str(&testdata("sweep.json")).unwrap();
        assert!(!sweep.result.runs.is_empty());
        let probe: Document<IgnoredAny, wirespeed::probe::ProbeReport> =
            wirespeed_report::decode::from_str(&testdata("probe.json")).unwrap();
        assert!(!probe.result.hops.is_empty());
    }

    /// Today's tcp document, written and read back by the same types, figure for figure.
    #[test]
    fn a_loopback_tcp_document_round_trips() {
        let config = wirespeed::throughput::Config::loopback_tcp(0.2);
        let mut silent = wirespeed::throughput::text::LiveLines::new(
            config.rate_format,
            &config.spec,
            false,
            false,
        );
        let m = wirespeed::throughput::measure(&config, &mut silent).unwrap();
        let text = wirespeed_report::to_json(&m.doc).unwrap();
        let back: TcpDocument = wirespeed_report::decode::from_str(&text).unwrap();
        assert_eq!(back.result.end, m.doc.result.end);
        assert_eq!(back.result.intervals, m.doc.result.intervals);
        assert_eq!(back.parameters.test, m.doc.parameters.test);
        // Written again, the decoded document is the same text.
        let mut again = back;
        again.result.rate_format = m.doc.result.rate_format;
        assert_eq!(wirespeed_report::to_json(&again).unwrap(), text);
    }
}
