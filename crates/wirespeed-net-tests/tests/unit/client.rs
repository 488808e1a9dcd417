use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};
use wirespeed_net::client::*;
use wirespeed_net::control::{Message, Phase};
use wirespeed_net::report::SideReport;
use wirespeed_net::session::Control;
use wirespeed_net::spec::{Direction, TestSpec};

fn capped(direction: Direction) -> TestSpec {
    TestSpec {
        direction,
        max_pacing_rate_bits_per_second: Some(5_000_000),
        ..TestSpec::default()
    }
}

/// An agent that ended the test (its --max-duration), said why and closed before this end
/// sent its view: the send fails, and the reason still queued here is what the client gives
/// (it said "the agent went away before the results: Broken pipe" at six test threads
/// under load 7-12).
#[test]
fn an_agents_reason_sent_before_it_closed_is_given_when_the_send_fails() {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut client_side = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (mut agent_side, _) = l.accept().unwrap();
    // Bytes the agent never reads make its close a reset.
    client_side.write_all(b"unread").unwrap();
    let why = "the test ran past this agent's limit of 2 s (--max-duration on the agent)";
    agent_side
        .write_all(&wirespeed_net::control::encode(&Message::Error {
            message: why.into(),
        }))
        .unwrap();
    std::thread::sleep(Duration::from_millis(50));
    drop(agent_side);
    // Once the reset has arrived, a write fails (at most 5 s of writes, 10 ms apart).
    let deadline = Instant::now() + Duration::from_secs(5);
    while client_side.write(b"x").is_ok() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut ctl = Control::new(client_side, &[], false, false);
    ctl.set_phase(Phase::Running);
    let agent: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let e = exchange(
        &mut ctl,
        &SideReport::default(),
        Duration::from_secs(2),
        agent,
    )
    .unwrap_err();
    assert_eq!(e, format!("the agent reported: {why}"));
}

#[test]
fn a_rate_cap_reaches_only_agents_that_take_it() {
    let new = "wirespeed 0.2.0 +residence +followup +maxpacing";
    let old = "wirespeed 0.1.0 +residence +followup";
    for d in [Direction::Send, Direction::Receive, Direction::Both] {
        assert_eq!(request_for(capped(d), new).unwrap(), capped(d));
    }
    // An old agent receiving: the cap is this end's, and is not sent.
    let sent = request_for(capped(Direction::Send), old).unwrap();
    assert_eq!(sent.max_pacing_rate_bits_per_second, None);
    // An old agent sending could not cap: refused, naming the agent and the fix.
    for d in [Direction::Receive, Direction::Both] {
        let e = request_for(capped(d), old).unwrap_err().to_string();
        assert!(
            e.contains("wirespeed 0.1.0") && e.contains("drop -b"),
            "{e}"
        );
    }
    // Without a cap nothing changes, whatever the agent.
    let plain = TestSpec::default();
    assert_eq!(request_for(plain.clone(), old).unwrap(), plain);
}
