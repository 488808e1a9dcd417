use std::io::{Read, Write};
use std::net::TcpListener;
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wirespeed_net::counters::Counters;
use wirespeed_net::report::DrainEnd;
use wirespeed_net::spec::Amount;
use wirespeed_net::tcp::*;

/// The time a capped writer gave up: only spans that end with the socket empty count, by
/// what left it short of the cap, and only inside the measured window.
#[test]
fn a_capped_writer_counts_the_time_its_socket_stood_empty() {
    let ms = Duration::from_millis;
    let t0 = Instant::now();
    // 8 Mbit/s: a million bytes a second, 1,000 bytes a millisecond; window 100-1100 ms.
    let mut b = Behind::new(8_000_000, (t0 + ms(100), Some(t0 + ms(1100))));
    b.look(t0, 0, 0, 1448); // the first look only starts the account
    // Kept up: 200 ms later 200,000 bytes left and the socket still holds data.
    b.look(t0 + ms(200), 200_000, 50_000, 1448);
    assert_eq!(b.skipped_seconds(), 0.0);
    // Back 300 ms later with the socket empty: 50,000 bytes (50 ms) left, so it stood
    // empty for the last 250 ms (250-500 ms, inside the window).
    b.look(t0 + ms(500), 250_000, 0, 1448);
    assert!((b.skipped_seconds() - 0.250).abs() < 1e-6, "{b:?}");
    // A span the path held back ends with data still queued: nothing given up.
    b.look(t0 + ms(700), 310_000, 200_000, 1448);
    assert!((b.skipped_seconds() - 0.250).abs() < 1e-6, "{b:?}");
    // Less than a segment left (empty for the kernel), 50 ms sent in 600: empty 750-1300
    // ms, of which 750-1100 ms is in the window.
    b.look(t0 + ms(1300), 360_000, 100, 1448);
    assert!((b.skipped_seconds() - 0.600).abs() < 1e-6, "{b:?}");
    // Before the window (a -O warm-up): not counted.
    let mut w = Behind::new(8_000_000, (t0 + ms(500), None));
    w.look(t0, 0, 0, 1448);
    w.look(t0 + ms(300), 0, 0, 1448);
    assert_eq!(w.skipped_seconds(), 0.0);
    // Less than the cap's worth in flight at the start, more afterwards (the first ten
    // segments leave unpaced): a span sent faster than the cap gives nothing back.
    w.look(t0 + ms(600), 400_000, 0, 1448);
    assert_eq!(w.skipped_seconds(), 0.0);
}

/// A capped sender over loopback reports the time it gave up, within its window, and its
/// bytes arrive.
#[test]
fn a_capped_sender_reports_what_it_gave_up() {
    let (mut rx, mut tx) = pair();
    wirespeed_net::sockopt::cap_pacing_rate(&tx, 8_000_000).unwrap();
    let reader = std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 << 10];
        let mut got = 0u64;
        while let Ok(n) = rx.read(&mut buf) {
            if n == 0 {
                break;
            }
            got += n as u64;
        }
        got
    });
    let c = Counters::new(None, None);
    let stop = AtomicBool::new(false);
    let start = Instant::now();
    let skipped = send_capped(
        &mut tx,
        16 << 10,
        Amount::Seconds(0.3),
        start,
        &stop,
        false,
        8_000_000,
        &c,
    )
    .unwrap()
    .expect("this kernel reports a socket's unsent data");
    drop(tx);
    let got = reader.join().unwrap();
    assert_eq!(got, c.bytes.load(Ordering::Relaxed));
    assert!(got > 0);
    assert!((0.0..=0.3).contains(&skipped), "{skipped}");
}

/// A receiver and its sender over loopback.
fn pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (rx, _) = l.accept().unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    (rx, tx)
}

#[test]
fn a_no_drain_receiver_reads_the_tail_until_the_senders_reset() {
    // The sender writes before and after the receiver's counted time, then resets: the
    // test is over only when the reset came, behind the last of the data.
    let (mut rx, mut tx) = pair();
    let at = Instant::now() + Duration::from_millis(100);
    let sender = std::thread::spawn(move || {
        tx.write_all(&[1u8; 1000]).unwrap();
        // Causal, not timed: wait until the receiver's counted time has surely passed.
        std::thread::sleep(
            at.saturating_duration_since(Instant::now()) + Duration::from_millis(50),
        );
        tx.write_all(&[2u8; 4000]).unwrap();
        socket2::SockRef::from(&tx)
            .set_linger(Some(Duration::ZERO))
            .unwrap();
        drop(tx);
    });
    let c = Counters::new(None, None);
    let until = Until {
        at,
        // Long enough that only the reset can end the tail on a busy machine.
        quiet: Duration::from_secs(10),
        cap: Duration::from_secs(20),
    };
    let r = receive(&mut rx, 64 << 10, None, None, Some(until), &c).unwrap();
    sender.join().unwrap();
    let drain = r.drain.expect("a no_drain receiver reports its tail");
    assert_eq!(drain.ended_by, DrainEnd::Reset, "{drain:?}");
    // The counted part is what came before its end, the tail the rest (Linux still hands
    // out the data queued before a reset).
    assert_eq!(
        c.bytes.load(Ordering::Relaxed) + drain.bytes,
        5000,
        "{drain:?}"
    );
    assert!(r.counted_end >= at);
}

#[test]
fn a_tail_without_a_reset_ends_when_the_data_stops() {
    // A sender that neither resets nor closes (its reset lost): the tail ends after the
    // quiet time, not at the idle timeout.
    let (mut rx, mut tx) = pair();
    let at = Instant::now() + Duration::from_millis(20);
    tx.write_all(&[1u8; 1000]).unwrap();
    let c = Counters::new(None, None);
    let until = Until {
        at,
        quiet: Duration::from_millis(30),
        cap: Duration::from_secs(20),
    };
    let r = receive(&mut rx, 64 << 10, None, None, Some(until), &c).unwrap();
    assert_eq!(r.drain.map(|d| d.ended_by), Some(DrainEnd::Quiet));
    // A plain receiver has no tail.
    tx.write_all(&[1u8; 10]).unwrap();
    drop(tx);
    let r = receive(&mut rx, 64 << 10, None, None, None, &c).unwrap();
    assert!(r.drain.is_none());
}
