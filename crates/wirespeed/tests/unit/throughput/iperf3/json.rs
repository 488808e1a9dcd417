use wirespeed::throughput::iperf3::json::*;

#[test]
fn http_dates_match_known_days() {
    let at = |s: u64| httpdate(std::time::UNIX_EPOCH + std::time::Duration::from_secs(s));
    assert_eq!(at(0), "Thu, 01 Jan 1970 00:00:00 GMT");
    assert_eq!(at(1_795_476_755), "Mon, 23 Nov 2026 23:32:35 GMT");
    assert_eq!(at(951_782_400), "Tue, 29 Feb 2000 00:00:00 GMT");
}
