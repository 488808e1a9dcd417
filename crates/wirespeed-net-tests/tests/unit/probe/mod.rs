mod echo;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wirespeed_net::icmp_socket::SocketChoice;
use wirespeed_net::probe::*;

fn loopback(target: IpAddr, max_ttl: Option<u8>) -> ProbeConfig {
    ProbeConfig {
        target,
        scope_id: 0,
        tos: None,
        sizes: vec![min_size(target), 200, 600, 1400],
        per_size: 4,
        max_ttl,
        gap: Duration::ZERO,
        hop_interval: Duration::ZERO,
        timeout: Duration::from_secs(1),
        seed: 1,
        max_duration: Duration::from_secs(20),
        socket: SocketChoice::Auto,
        udp: None,
        only_ttls: None,
        interrupt: None,
        progress: None,
    }
}

#[test]
fn an_interrupt_stops_the_schedule_and_keeps_what_was_measured() {
    let flag = Arc::new(AtomicBool::new(true));
    let before = ProbeConfig {
        interrupt: Some(flag.clone()),
        ..loopback("127.0.0.1".parse().unwrap(), None)
    };
    let first = run(&before).expect("an interrupted run is a result, not an error");
    assert!(first.interrupted && first.samples.is_empty() && first.hops.is_empty());

    // A schedule of ~4 s (1000 probes per size, 1 ms apart), interrupted by a thread.
    flag.store(false, Ordering::SeqCst);
    let long = ProbeConfig {
        per_size: 1000,
        gap: Duration::from_millis(1),
        interrupt: Some(flag.clone()),
        ..loopback("127.0.0.1".parse().unwrap(), None)
    };
    let setter = {
        let flag = flag.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            flag.store(true, Ordering::SeqCst);
        })
    };
    let second = run(&long).unwrap();
    setter.join().unwrap();
    assert!(second.interrupted);
    assert!(
        second.samples.len() < 4 * 1000,
        "the schedule was cut short"
    );
}

#[test]
fn echo_probes_on_loopback_v4_and_v6() {
    for target in ["127.0.0.1", "::1"] {
        let target: IpAddr = target.parse().unwrap();
        let run = run(&loopback(target, None))
            .expect("loopback answers (run as root or allow ping sockets)");
        assert_eq!(run.samples.len(), 16);
        for s in &run.samples {
            assert_eq!(s.reply, ReplyKind::EchoReply, "{s:?}");
            // An echo reply carries the request back: as many bytes returned as sent.
            assert_eq!(s.returned_bytes, s.sent_bytes, "{s:?}");
            assert!(s.rtt_user_ns.unwrap() < 1_000_000_000);
            // Loopback stamps both ways (loopback_xmit calls skb_tx_timestamp), and the
            // kernel interval lies inside the one measured around the syscalls.
            assert!(s.rtt_kernel_ns.unwrap() <= s.rtt_user_ns.unwrap(), "{s:?}");
        }
        // Every size was probed per_size times, in shuffled order.
        let sizes: Vec<usize> = run.samples.iter().map(|s| s.sent_bytes).collect();
        assert_ne!(sizes.windows(2).filter(|w| w[0] == w[1]).count(), 15);
        assert!(run.hops[0].destination);
    }
}

#[test]
fn per_hop_on_loopback_finds_the_host_at_ttl_1() {
    let run = run(&loopback("127.0.0.1".parse().unwrap(), Some(4))).unwrap();
    assert_eq!(run.hops.len(), 1);
    assert!(run.hops[0].destination && run.hops[0].ttl == 1);
}

#[test]
fn the_scheduler_spaces_each_hop_and_fills_in_with_others() {
    use std::collections::VecDeque;
    let t0 = Instant::now();
    let second = Duration::from_secs(1);
    const P: Series = Series::Probe;
    let mut last = vec![None; 256];
    let mut q: VecDeque<(u8, usize, Series)> =
        VecDeque::from([(1, 100, P), (1, 200, P), (2, 100, P)]);
    assert_eq!(pick(&mut q, &last, t0, second), Pick::Send((1, 100, P)));
    last[1] = Some(t0);
    // Hop 1 is busy: hop 2 goes first, and hop 1's second probe keeps its place.
    assert_eq!(pick(&mut q, &last, t0, second), Pick::Send((2, 100, P)));
    last[2] = Some(t0);
    assert_eq!(q, VecDeque::from([(1, 200, P)]));
    assert_eq!(
        pick(&mut q, &last, t0, second),
        Pick::WaitUntil(t0 + second)
    );
    assert_eq!(
        pick(&mut q, &last, t0 + second, second),
        Pick::Send((1, 200, P))
    );
    // No interval: strictly in order.
    let mut q: VecDeque<(u8, usize, Series)> = VecDeque::from([(1, 1, P), (1, 2, P)]);
    assert_eq!(
        pick(&mut q, &last, t0, Duration::ZERO),
        Pick::Send((1, 1, P))
    );
}

#[test]
fn too_small_a_probe_is_refused_before_sending() {
    let mut c = loopback("::1".parse().unwrap(), None);
    c.sizes = vec![20];
    let e = run(&c).unwrap_err();
    assert!(e.to_string().contains("48 bytes"), "{e}");
}
