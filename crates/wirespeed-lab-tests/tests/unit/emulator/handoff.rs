use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::time::Duration;
use wirespeed_lab::emulator::handoff::*;

#[test]
fn values_arrive_in_order_and_each_side_sees_the_other_go() {
    let (tx, rx) = channel();
    for i in 0..100 {
        tx.send(i).unwrap();
    }
    for i in 0..100 {
        assert_eq!(rx.try_recv(), Ok(i));
    }
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));
    assert_eq!(
        rx.recv_timeout(Duration::from_millis(1)),
        Err(RecvTimeoutError::Timeout)
    );
    tx.send(7).unwrap();
    drop(tx);
    // What was sent before the sender left is still received.
    assert_eq!(rx.recv_timeout(Duration::from_secs(1)), Ok(7));
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(1)),
        Err(RecvTimeoutError::Disconnected)
    );
    let (tx, rx) = channel();
    drop(rx);
    assert_eq!(tx.send(3), Err(3));
}

#[test]
fn a_waiting_receiver_is_woken_by_a_send() {
    let (tx, rx) = channel();
    let t = std::thread::spawn(move || rx.recv_timeout(Duration::from_secs(20)));
    std::thread::sleep(Duration::from_millis(20));
    tx.send(42u32).unwrap();
    // Within the 20 s bound (a lost wake-up would time out instead).
    assert_eq!(t.join().unwrap(), Ok(42));
}
