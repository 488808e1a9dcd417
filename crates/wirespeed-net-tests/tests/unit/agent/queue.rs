use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wirespeed_net::agent::queue::*;
use wirespeed_net::agent_config::Exclusive;

fn ip(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

fn gate(queue_max: usize, timeout_ms: u64) -> Arc<Gate> {
    Arc::new(Gate::new(Exclusive {
        queue_max,
        queue_timeout: Duration::from_millis(timeout_ms),
    }))
}

fn go(w: Wait<'_>) -> Turn<'_> {
    match w {
        Wait::Go(t) => t,
        Wait::Refused(r, _) => panic!("refused: {r}"),
        Wait::Gone(_) => panic!("gone"),
    }
}

#[test]
fn one_address_runs_the_others_wait_in_order_and_the_queue_is_bounded() {
    let g = gate(1, 60_000);
    let first = go(g.wait(ip(1), &mut |_, _| true, &|| false, &|| false));
    // The same address joins its own test (latency's several sessions).
    let same = go(g.wait(ip(1), &mut |_, _| true, &|| false, &|| false));
    assert!(same.waited.is_none());
    let started = Arc::new(AtomicBool::new(false));
    let (g2, s2) = (g.clone(), started.clone());
    let second = std::thread::spawn(move || {
        let mut notices = 0;
        let t = go(g2.wait(
            ip(2),
            &mut |position, _| {
                assert_eq!(position, 0);
                notices += 1;
                true
            },
            &|| false,
            &|| false,
        ));
        s2.store(true, Ordering::SeqCst);
        assert!(notices >= 1, "told it waits");
        t.waited.expect("it waited")
    });
    // Wait (bounded) until the second test is in the queue.
    let deadline = Instant::now() + Duration::from_secs(30);
    while g.stats().waiting == 0 {
        assert!(Instant::now() < deadline);
        std::thread::sleep(Duration::from_millis(5));
    }
    // The queue holds one: a third address is refused at once, naming the flag.
    match g.wait(ip(3), &mut |_, _| true, &|| false, &|| false) {
        Wait::Refused(r, _) => assert!(r.contains("--queue-max"), "{r}"),
        _ => panic!("a full queue refuses"),
    }
    drop(first);
    assert!(
        !started.load(Ordering::SeqCst),
        "still one session of the first test"
    );
    drop(same);
    let waited = second.join().unwrap();
    assert!(waited > Duration::ZERO);
    let st = g.stats();
    assert_eq!((st.waiting, st.queued_total, st.refused_total), (0, 1, 1));
}

#[test]
fn a_wait_past_the_timeout_is_refused_and_a_client_that_leaves_frees_its_place() {
    let g = gate(4, 1_000);
    let _running = go(g.wait(ip(1), &mut |_, _| true, &|| false, &|| false));
    match g.wait(ip(2), &mut |_, _| true, &|| false, &|| false) {
        Wait::Refused(r, waited) => {
            assert!(r.contains("--queue-timeout"), "{r}");
            assert!(waited >= Duration::from_secs(1));
        }
        _ => panic!("refused after the timeout"),
    }
    assert!(matches!(
        g.wait(ip(3), &mut |_, _| true, &|| true, &|| false),
        Wait::Gone(_)
    ));
    assert!(matches!(
        g.wait(ip(4), &mut |_, _| false, &|| false, &|| false),
        Wait::Gone(_)
    ));
    assert_eq!(g.stats().waiting, 0, "every place given up");
}
