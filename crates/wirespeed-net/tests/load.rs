//! The load controller and three in-process agents on loopback: a complete test with a counting
//! sink, an agent stopped mid-test (reported, the others kept), a refusal, and a controller
//! talking to an agent of another protocol version.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::time::{Duration, Instant};

use wirespeed_model::load::{DelaySource, LengthDeck, Schedule};
use wirespeed_net::agent::AgentHandle;
use wirespeed_net::control::{Message, encode};
use wirespeed_net::load::RawEthernet;
use wirespeed_net::load::controller::{self, LoadConfig, LoadError, Sink};
use wirespeed_net::{Agent, AgentConfig, Limits};

fn agent(config: AgentConfig) -> (SocketAddr, AgentHandle) {
    let a = Agent::bind("127.0.0.1:0".parse().unwrap(), config).unwrap();
    let addr = a.local_addr().unwrap();
    let (h, _t) = a.spawn().unwrap();
    (addr, h)
}

fn config(agents: Vec<SocketAddr>, sink: Sink) -> LoadConfig {
    LoadConfig {
        agents,
        auth: None,
        schedule: Schedule {
            settle_ns: 100_000_000,
            transmit_ns: 600_000_000,
            measure_ns: 300_000_000,
            cooldown_ns: 100_000_000,
        },
        deck: LengthDeck::from_counts(&[(64, 6), (1536, 2)]).unwrap(),
        rate_bits_per_second: Some(2e6),
        sink,
        seed: 1,
        idle_timeout: Duration::from_secs(2),
        clock_probes: 4,
        raw: None,
        tos: None,
    }
}

/// The bits a generator of [`config`]'s schedule offered in its 0.3 s window at 2 Mbit/s: all
/// of them, less the window's time it reports giving up behind its schedule (a machine too busy
/// to run it, which the report measures; the rate checks judge what was offered).
fn offered_bits(r: &wirespeed_net::load::LoadReport) -> f64 {
    assert!((0.0..=0.3).contains(&r.skipped_in_window_s), "{r:?}");
    2e6 * (0.3 - r.skipped_in_window_s)
}

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[test]
fn raw_frames_on_an_absent_interface_are_refused_in_one_sentence() {
    let _loading = crate::rates::loading();
    let (addr, h) = agent(AgentConfig::default());
    let mut cfg = config(vec![addr], Sink::Own);
    cfg.raw = Some(RawEthernet {
        interface: Some("ws-no-such-if".into()),
    });
    let e = controller::run(&cfg).unwrap_err().to_string();
    // Not root: the root sentence; root: the interface sentence.
    let expected = if root() {
        "no interface \"ws-no-such-if\""
    } else {
        "need root"
    };
    assert!(e.contains(expected) && !e.contains('\n'), "{e}");
    h.stop();
}

#[test]
fn two_agents_send_raw_frames_to_themselves_on_loopback() {
    let _judging = crate::rates::judging();
    if !root() {
        eprintln!("skipped: raw Ethernet needs root");
        return;
    }
    let agents: Vec<_> = (0..2).map(|_| agent(AgentConfig::default())).collect();
    let mut cfg = config(agents.iter().map(|a| a.0).collect(), Sink::Own);
    // The agents' control address is 127.0.0.1: the frames go out on lo.
    cfg.raw = Some(RawEthernet { interface: None });
    let out = controller::run(&cfg).unwrap();
    assert!(out.complete, "{out:?}");
    for a in &out.agents {
        let r = a.report.as_ref().unwrap();
        let c = r.counters;
        // 0.3 s at 2 Mbit/s charged: 600 kbit, paced one frame per call, less what a
        // generator descheduled past its catch-up gave up of the window (it says so).
        let offered = offered_bits(r);
        assert!(
            (c.charged_bits as f64 - offered).abs() < 1e5,
            "{offered} offered: {r:?}"
        );
        assert_eq!(r.interface.as_deref(), Some("lo"));
        assert_eq!(r.delay_source, DelaySource::KernelTxSoftware);
        assert!(
            r.timestamping
                .as_deref()
                .unwrap()
                .contains("no hardware transmit")
        );
        assert!(c.delay_count > 0, "{c:?}");
    }
    for (_, h) in agents {
        h.stop();
    }
}

#[test]
fn three_agents_report_and_the_sink_counts_every_host() {
    let _judging = crate::rates::judging();
    let agents: Vec<_> = (0..3).map(|_| agent(AgentConfig::default())).collect();
    let addrs = agents.iter().map(|a| a.0).collect();
    let out = controller::run(&config(addrs, Sink::Host(0))).unwrap();
    assert!(out.complete, "{out:?}");
    let sink = out.agents[0]
        .report
        .as_ref()
        .unwrap()
        .sink
        .clone()
        .expect("host 0 counts");
    for a in &out.agents {
        let r = a.report.as_ref().unwrap();
        let c = r.counters;
        // 0.3 s at 2 Mbit/s charged: 600 kbit, less what the generator gave up.
        let offered = offered_bits(r);
        assert!(
            (c.charged_bits as f64 - offered).abs() < 1e5,
            "{offered} offered: {r:?}"
        );
        assert_eq!(sink.received[a.host], c.packets, "loopback drops none");
        assert!(c.delay_count > 0 && c.delay_mean_s() < 0.05, "{r:?}");
        let clock = a.clock.unwrap();
        assert!(clock.offset_ns.unsigned_abs() <= clock.error_bound_ns + 1_000_000);
    }
    for (_, h) in agents {
        h.stop();
    }
}

#[test]
fn an_agent_stopped_mid_test_is_reported_and_the_others_kept() {
    let _loading = crate::rates::loading();
    let agents: Vec<_> = (0..3).map(|_| agent(AgentConfig::default())).collect();
    let addrs = agents.iter().map(|a| a.0).collect();
    let victim = agents[1].1.clone();
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        victim.stop();
    });
    let started = Instant::now();
    let out = controller::run(&config(addrs, Sink::Own)).unwrap();
    killer.join().unwrap();
    assert!(!out.complete);
    assert!(out.agents[1].report.is_none());
    assert!(out.agents[1].error.is_some(), "{:?}", out.agents[1]);
    assert!(out.agents[0].report.is_some() && out.agents[2].report.is_some());
    assert!(started.elapsed() < Duration::from_secs(5));
    for (_, h) in agents {
        h.stop();
    }
}

#[test]
fn refusals_and_other_versions_end_the_run_with_one_sentence() {
    let _loading = crate::rates::loading();
    let (addr, h) = agent(AgentConfig {
        limits: Limits {
            max_duration: Duration::from_millis(500),
            ..Limits::default()
        },
        ..AgentConfig::default()
    });
    let e = controller::run(&config(vec![addr], Sink::Own)).unwrap_err();
    assert!(matches!(e, LoadError::Refused { .. }), "{e}");
    assert!(e.to_string().contains("--max-duration"), "{e}");
    h.stop();

    // A fake agent that welcomes in version 99.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let fake = l.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let mut buf = [0u8; 512];
        let _ = s.read(&mut buf);
        s.write_all(&encode(&Message::Welcome {
            protocol_version: 99,
            software: "wirespeed 9".into(),
        }))
        .unwrap();
        std::thread::sleep(Duration::from_millis(100));
    });
    let e = controller::run(&config(vec![fake], Sink::Own)).unwrap_err();
    assert!(
        e.to_string()
            .contains("protocol version 99, this controller version 1"),
        "{e}"
    );
    t.join().unwrap();
}

/// A fake agent that takes the test and then never reports: a slow (or hung) agent.
fn silent_agent() -> (SocketAddr, std::thread::JoinHandle<()>) {
    use wirespeed_net::control::{FrameReader, Polled};
    use wirespeed_net::load::LoadMessage;
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let t = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut reader = FrameReader::default();
        loop {
            let reply = match reader.poll(&mut s) {
                Ok(Polled::Message(Message::Hello { .. })) => Message::Welcome {
                    protocol_version: 1,
                    software: "silent".into(),
                },
                Ok(Polled::Message(Message::Load(LoadMessage::ClockQuery))) => {
                    Message::Load(LoadMessage::ClockReply {
                        agent_ns: wirespeed_net::load::monotonic_ns(),
                    })
                }
                Ok(Polled::Message(Message::Load(LoadMessage::Announce { .. }))) => {
                    Message::Load(LoadMessage::Ready { sink_port: 9 })
                }
                Ok(Polled::Message(_)) | Ok(Polled::Pending) => continue,
                _ => return,
            };
            s.write_all(&encode(&reply)).unwrap();
        }
    });
    (addr, t)
}

#[test]
fn a_slow_agent_is_reported_after_the_schedule_and_the_others_kept() {
    let _loading = crate::rates::loading();
    let (good, h) = agent(AgentConfig::default());
    let (slow, t) = silent_agent();
    let mut cfg = config(vec![good, slow], Sink::Own);
    cfg.idle_timeout = Duration::from_millis(500);
    let started = Instant::now();
    let out = controller::run(&cfg).unwrap();
    assert!(!out.complete);
    assert!(out.agents[0].report.is_some());
    let e = out.agents[1].error.as_deref().unwrap();
    assert!(e.contains("slow or dead agent"), "{e}");
    // The schedule (0.9 s) plus the grace, not the fake agent's 5 s.
    assert!(started.elapsed() < Duration::from_secs(3));
    h.stop();
    drop(out);
    t.join().unwrap();
}

fn fleet_key() -> wirespeed_net::auth::AuthKey {
    wirespeed_net::auth::AuthKey::from_bytes(b"the fleet's key, 32 bytes long..")
}

/// An agent at `ip` (a loopback address) with these allowed destinations, holding the fleet's
/// key (a destination beyond the client's address must prove its consent under a key).
fn agent_at(ip: &str, allow: &[&str]) -> (SocketAddr, AgentHandle) {
    let a = Agent::bind(
        format!("{ip}:0").parse().unwrap(),
        AgentConfig {
            allow_destinations: allow.iter().map(|c| c.parse().unwrap()).collect(),
            auth: Some(fleet_key()),
            ..AgentConfig::default()
        },
    )
    .unwrap();
    let addr = a.local_addr().unwrap();
    let (h, _t) = a.spawn().unwrap();
    (addr, h)
}

#[test]
fn a_sink_beyond_the_clients_address_needs_the_flag_and_the_nonce_exchange() {
    let _loading = crate::rates::loading();
    // The controller reaches both agents from 127.0.0.1; the sink's agent is at 127.0.0.2, so
    // the generator at 127.0.0.1 may send there only with --allow-destination (issue 13,
    // finding 2), and then only after the sink's agent reported the generator's nonce.
    let sink = agent_at("127.0.0.2", &[]);
    let strict = agent_at("127.0.0.1", &[]);
    let keyed = |agents| LoadConfig {
        auth: Some(fleet_key()),
        ..config(agents, Sink::Host(0))
    };
    let e = controller::run(&keyed(vec![sink.0, strict.0])).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("--allow-destination") && text.contains("127.0.0.2"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1);
    let open = agent_at("127.0.0.1", &["127.0.0.0/8"]);
    let out = controller::run(&keyed(vec![sink.0, open.0])).unwrap();
    assert!(out.complete, "{out:?}");
    let counts = out.agents[0].report.as_ref().unwrap().sink.clone().unwrap();
    let sent = out.agents[1].report.as_ref().unwrap().counters.packets;
    assert!(sent > 0);
    assert_eq!(
        counts.received,
        vec![
            out.agents[0].report.as_ref().unwrap().counters.packets,
            sent
        ]
    );
    assert_eq!(counts.foreign, 0);
    for (_, h) in [sink, strict, open] {
        h.stop();
    }
}
