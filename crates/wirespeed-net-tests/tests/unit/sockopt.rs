use socket2::SockRef;
use wirespeed_net::sockopt::*;
use wirespeed_net::spec::TestSpec;
use wirespeed_net::sys::socket_options;

#[test]
fn tcp_info_view_reads_fields_at_their_offsets() {
    let mut b = vec![0u8; 232];
    b[field::RTT..field::RTT + 4].copy_from_slice(&25u32.to_ne_bytes());
    b[field::SND_CWND..field::SND_CWND + 4].copy_from_slice(&10u32.to_ne_bytes());
    b[field::RETRANSMITS_TOTAL..field::RETRANSMITS_TOTAL + 4].copy_from_slice(&3u32.to_ne_bytes());
    b[field::DELIVERY_RATE..field::DELIVERY_RATE + 8].copy_from_slice(&1000u64.to_ne_bytes());
    let r = TcpInfoView::new_checked(&b).unwrap().report();
    assert_eq!(r.rtt_seconds, 25e-6);
    assert_eq!(r.cwnd_segments, 10);
    assert_eq!(r.retransmits, 3);
    assert_eq!(r.delivery_rate_bits_per_second, Some(8000.0));
}

#[test]
fn a_short_tcp_info_has_no_new_fields() {
    assert!(TcpInfoView::new_checked(&[0u8; 100]).is_none());
    let r = TcpInfoView::new_checked(&[0u8; 120]).unwrap().report();
    assert_eq!(r.delivery_rate_bits_per_second, None);
    assert_eq!(r.busy_seconds, None);
}

#[test]
fn a_data_socket_has_nagle_as_asked_even_if_accepted_with_nodelay() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let _client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (s, _) = listener.accept().unwrap();
    // As the agent's accept path leaves every connection.
    s.set_nodelay(true).unwrap();
    apply_options(&s, &TestSpec::default(), true).unwrap();
    assert!(
        !s.nodelay().unwrap(),
        "without -N the data socket sends with Nagle"
    );
    let spec = TestSpec {
        nodelay: true,
        ..TestSpec::default()
    };
    apply_options(&s, &spec, true).unwrap();
    assert!(s.nodelay().unwrap(), "-N sets TCP_NODELAY");
}

#[test]
fn senders_are_paced_toward_every_peer_but_loopback() {
    let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
    assert!(paces_to(ip("198.18.0.2")));
    assert!(paces_to(ip("2001:2::2")));
    assert!(paces_to(ip("fe80::1")));
    assert!(!paces_to(ip("127.0.0.1")));
    assert!(!paces_to(ip("127.3.2.1")));
    assert!(!paces_to(ip("::1")));
    assert!(!paces_to(ip("::ffff:127.0.0.1")));
    assert!(paces_to(ip("::ffff:198.18.0.2")));
}

#[test]
fn no_pacing_leaves_a_sender_unpaced_toward_any_peer() {
    let ip = |s: &str| s.parse::<std::net::IpAddr>().unwrap();
    let paced = TestSpec::default();
    let unpaced = TestSpec {
        no_pacing: true,
        ..TestSpec::default()
    };
    assert!(paces(&paced, ip("198.18.0.2")));
    assert!(!paces(&unpaced, ip("198.18.0.2")));
    assert!(!paces(&unpaced, ip("127.0.0.1")));
    // Sent to the agent only when asked, so an agent that predates it takes every other
    // test; an agent of this build reads it back.
    let text = serde_json::to_string(&paced).unwrap();
    assert!(!text.contains("no_pacing"), "{text}");
    let text = serde_json::to_string(&unpaced).unwrap();
    let back: TestSpec = serde_json::from_str(&text).unwrap();
    assert!(back.no_pacing);
}

#[test]
fn a_tcp_sender_asks_the_kernel_to_pace_it_without_a_cap() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let s = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    // A new socket: no cap, no pacing asked.
    assert!(!pacing_enabled(&s));
    enable_pacing(&s).unwrap();
    assert!(pacing_enabled(&s), "SO_MAX_PACING_RATE left unset");
    // Uncapped: a 64-bit kernel keeps the whole value (a 32-bit read would cap at 34 Gbit/s).
    assert_eq!(
        socket_options::max_pacing_rate(&s).unwrap(),
        PACING_UNCAPPED
    );
}

#[test]
fn a_rate_cap_is_set_in_bytes_and_read_back_in_bits() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let s = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    assert_eq!(pacing_cap(&s), None, "a new socket has no cap");
    enable_pacing(&s).unwrap();
    assert_eq!(pacing_cap(&s), None, "pacing on is not a cap");
    cap_pacing_rate(&s, 5_000_000).unwrap();
    assert_eq!(socket_options::max_pacing_rate(&s).unwrap(), 625_000);
    assert_eq!(pacing_cap(&s), Some(5_000_000));
    // A tenth of a second at the cap may wait unsent.
    assert_eq!(SockRef::from(&s).tcp_notsent_lowat().unwrap(), 62_500);
    let r = socket_report(&s, &TestSpec::default(), true, String::new(), String::new());
    assert_eq!(r.max_pacing_rate_bits_per_second, Some(5_000_000));
    assert_eq!(r.paced, Some(true));
}

#[test]
fn a_real_socket_reports_granted_buffers_and_tcp_info() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let spec = TestSpec {
        window_bytes: Some(100_000),
        ..TestSpec::default()
    };
    let s = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    apply_options(&s, &spec, true).unwrap();
    let r = socket_report(&s, &spec, true, String::new(), String::new());
    // Linux doubles the request (and clamps it to rmem_max/wmem_max).
    assert!(r.send_buffer_granted_bytes > 0);
    assert!(r.congestion.is_some());
    assert!(tcp_info(&s).unwrap().mss_bytes > 0);
    assert!(thread_cpu().total_seconds() >= 0.0);
}
