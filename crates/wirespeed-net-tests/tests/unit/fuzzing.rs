/// Replays a committed corpus through `check`; the count of files read.
fn replay(target: &str, check: fn(&[u8])) -> usize {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../wirespeed-net/fuzz/corpus")
        .join(target);
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("the corpus is committed") {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        check(&bytes);
        n += 1;
    }
    n
}

#[test]
fn the_load_datagram_corpus_replays() {
    let n = replay("load_datagram", wirespeed_net::fuzzing::load_datagram);
    assert!(n >= 8, "{n} files");
}

#[test]
fn the_http_head_corpus_replays() {
    let n = replay("http_head", wirespeed_net::fuzzing::http_head);
    assert!(n >= 6, "{n} files");
}

#[test]
fn the_iperf3_control_corpus_replays() {
    let n = replay("iperf3_control", wirespeed_net::fuzzing::iperf3_control);
    assert!(n >= 8, "{n} files");
}

#[test]
fn the_handshake_corpus_replays() {
    let n = replay("handshake", wirespeed_net::fuzzing::handshake);
    assert!(n >= 4, "{n} files");
}

#[test]
fn the_datagrams_corpus_replays() {
    let n = replay("datagrams", wirespeed_net::fuzzing::datagrams);
    assert!(n >= 4, "{n} files");
}
