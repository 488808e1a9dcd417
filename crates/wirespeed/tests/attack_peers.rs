//! Issue 32's findings as attacks on a real `wirespeed serve` process on loopback: a keyless
//! impostor between a keyed client and a real agent, peers that send forged text and
//! impossible figures, idle peers that hold every slot. Every agent is started here on port 0
//! and stopped by its PID; every wait and loop is bounded.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

use wirespeed_net::auth::TAG_BYTES;
use wirespeed_net::control::{Message, encode};
use wirespeed_net::spec::{Amount, TestSpec};

use crate::util::{Scratch, ServeProcess, wirespeed};

/// A key file of this test, in a scratch directory removed on drop.
struct KeyFile {
    _dir: Scratch,
    path: String,
}

impl KeyFile {
    fn new(tag: &str) -> KeyFile {
        let dir = Scratch::new(&format!("key-{tag}"));
        let path = dir.write("key", "0123456789abcdef0123456789abcdef\n");
        KeyFile { _dir: dir, path }
    }

    fn path(&self) -> &str {
        &self.path
    }
}

fn addr(agent: &ServeProcess) -> SocketAddr {
    ([127, 0, 0, 1], agent.port).into()
}

/// One frame as it crossed the wire: the length prefix and the body.
fn read_frame(s: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len)?;
    let n = u32::from_be_bytes(len) as usize;
    assert!(n <= 256 * 1024, "a frame of {n} bytes");
    let mut frame = len.to_vec();
    frame.resize(4 + n, 0);
    s.read_exact(&mut frame[4..])?;
    Ok(frame)
}

/// A sealed frame's message type (its JSON without the tag).
fn sealed_type(frame: &[u8]) -> String {
    sealed_json(frame)["type"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn sealed_json(frame: &[u8]) -> serde_json::Value {
    let json = &frame[4..frame.len() - TAG_BYTES];
    serde_json::from_slice(json).expect("a sealed frame's JSON")
}

/// The impostor of finding 1: accepts the keyed client, relays its hello to the real agent,
/// the agent's challenge back, the client's answer on, and the agent's welcome; then returns
/// both connections for the attack proper.
fn relay_handshake(listener: &TcpListener, agent: SocketAddr) -> (TcpStream, TcpStream) {
    let (mut client, _) = listener.accept().unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut real = TcpStream::connect(agent).unwrap();
    real.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let hello = read_frame(&mut client).unwrap();
    real.write_all(&hello).unwrap();
    let challenge = read_frame(&mut real).unwrap();
    client.write_all(&challenge).unwrap();
    let answer = read_frame(&mut client).unwrap();
    real.write_all(&answer).unwrap();
    let welcome = read_frame(&mut real).unwrap();
    assert_eq!(
        sealed_type(&welcome),
        "welcome",
        "the relay passes the handshake, as a TCP proxy would"
    );
    client.write_all(&welcome).unwrap();
    (client, real)
}

/// What the real agent sends once the impostor has spoken: every frame's type (and an
/// error's sentence) until it closes (bounded by its read timeout).
fn agent_answers(real: &mut TcpStream) -> Vec<String> {
    let mut seen = Vec::new();
    while let Ok(frame) = read_frame(real) {
        let m = sealed_json(&frame);
        let t = sealed_type(&frame);
        if t == "error" {
            let why = m["message"].as_str().unwrap_or_default();
            assert!(why.contains("integrity check"), "{why}");
        }
        seen.push(t);
        if seen.len() > 8 {
            break;
        }
    }
    seen
}

#[test]
fn issue_32_finding_1_an_impostor_relay_gets_no_test_from_the_agent() {
    let key = KeyFile::new("relay");
    let mut agent = ServeProcess::start(&["--auth-key-file", key.path()]);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let impostor = listener.local_addr().unwrap().port().to_string();
    let keyed_client = {
        let key = key.path().to_string();
        std::thread::spawn(move || {
            wirespeed(&[
                "tcp",
                "127.0.0.1",
                "-p",
                &impostor,
                "-n",
                "1MiB",
                "--auth-key-file",
                &key,
            ])
        })
    };
    // 1. Its own request after the relayed handshake, unsealed: refused, nothing accepted.
    let (client, mut real) = relay_handshake(&listener, addr(&agent));
    let own = Message::Request {
        spec: TestSpec {
            amount: Amount::Bytes(1 << 30),
            ..TestSpec::default()
        },
        client_udp_ports: vec![],
    };
    real.write_all(&encode(&own)).unwrap();
    let seen = agent_answers(&mut real);
    assert_eq!(
        seen,
        ["error"],
        "the agent's answers to the injected request"
    );
    drop(client);
    let run = keyed_client.join().unwrap();
    assert_eq!(run.status, 2, "{}", run.stderr);
    // 2. The client's own sealed request, changed on the way (1 MiB -> 9 MiB): refused.
    let keyed_client = {
        let key = key.path().to_string();
        let port = listener.local_addr().unwrap().port().to_string();
        std::thread::spawn(move || {
            wirespeed(&[
                "tcp",
                "127.0.0.1",
                "-p",
                &port,
                "-n",
                "1MiB",
                "--auth-key-file",
                &key,
            ])
        })
    };
    let (mut client, mut real) = relay_handshake(&listener, addr(&agent));
    let mut request = read_frame(&mut client).unwrap();
    let text = String::from_utf8_lossy(&request).to_string();
    let at = text
        .find("1048576")
        .expect("the client's -n in its request");
    request[at] = b'9';
    real.write_all(&request).unwrap();
    assert_eq!(agent_answers(&mut real), ["error"]);
    drop(client);
    assert_eq!(keyed_client.join().unwrap().status, 2);
    assert!(agent.alive());
}

#[test]
fn issue_32_finding_1_a_keyed_client_refuses_an_agent_that_does_not_prove_the_key() {
    let key = KeyFile::new("unproven");
    // A keyless impostor that welcomes whoever says hello.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let impostor = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let _hello = read_frame(&mut s).unwrap();
        s.write_all(&encode(&Message::Welcome {
            protocol_version: wirespeed_net::control::PROTOCOL_VERSION,
            software: "wirespeed 0.1.0".into(),
        }))
        .unwrap();
        // Whatever the client says next (a test request would be the finding).
        read_frame(&mut s).is_ok()
    });
    let run = wirespeed(&[
        "tcp",
        "127.0.0.1",
        "-p",
        &port,
        "-n",
        "1MiB",
        "--auth-key-file",
        key.path(),
    ]);
    crate::util::assert_one_line_error(&run, "did not prove that it holds the key");
    assert!(
        !impostor.join().unwrap(),
        "the client sent its request to the impostor"
    );
    // A keyless real agent is refused the same way (a keyed downgrade), and a keyed agent
    // refuses a keyless client with the flag to add.
    let keyless = ServeProcess::start(&[]);
    let p = keyless.port.to_string();
    let run = wirespeed(&[
        "tcp",
        "127.0.0.1",
        "-p",
        &p,
        "-n",
        "1MiB",
        "--auth-key-file",
        key.path(),
    ]);
    crate::util::assert_one_line_error(&run, "did not prove that it holds the key");
    let keyed = ServeProcess::start(&["--auth-key-file", key.path()]);
    let p = keyed.port.to_string();
    let run = wirespeed(&["tcp", "127.0.0.1", "-p", &p, "-n", "1MiB"]);
    crate::util::assert_one_line_error(&run, "--auth-key-file");
    let run = wirespeed(&[
        "tcp",
        "127.0.0.1",
        "-p",
        &p,
        "-n",
        "1MiB",
        "--auth-key-file",
        key.path(),
    ]);
    assert_eq!(run.status, 0, "{}", run.stderr);
}

/// A controller that holds the fleet's key (an insider, or anyone the operator gave the key)
/// and sends whatever load messages it likes over a properly sealed control connection.
struct KeyedController {
    stream: TcpStream,
    seal: wirespeed_net::auth::Seal,
}

impl KeyedController {
    fn connect(agent: SocketAddr, key: &KeyFile) -> KeyedController {
        use wirespeed_net::auth::{AuthKey, Role, hex, unhex};
        let key = AuthKey::from_file(std::path::Path::new(key.path())).unwrap();
        let mut stream = TcpStream::connect_timeout(&agent, Duration::from_secs(3)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let (software, nc) = ("attack_peers".to_string(), [0x5au8; 32]);
        stream
            .write_all(&encode(&Message::Hello {
                protocol_version: wirespeed_net::control::PROTOCOL_VERSION,
                software: software.clone(),
                nonce: Some(hex(&nc)),
            }))
            .unwrap();
        let frame = read_frame(&mut stream).unwrap();
        let Ok(Some((Message::Challenge { nonce, .. }, _))) =
            wirespeed_net::control::decode(&frame)
        else {
            panic!("no challenge")
        };
        let h = key.handshake(
            wirespeed_net::control::PROTOCOL_VERSION,
            &software,
            &nc,
            &unhex(&nonce).unwrap(),
        );
        stream
            .write_all(&encode(&Message::AuthResponse {
                mac: hex(&h.proof(Role::Client)),
            }))
            .unwrap();
        let mut c = KeyedController {
            stream,
            seal: h.seal(Role::Client),
        };
        assert!(matches!(c.recv(), Message::Welcome { .. }));
        c
    }

    fn recv(&mut self) -> Message {
        let frame = read_frame(&mut self.stream).expect("an answer within 10 s");
        wirespeed_net::control::open_sealed(&frame[4..], &mut self.seal)
            .expect("a sealed frame")
            .expect("a message")
    }

    fn load(&mut self, m: wirespeed_net::load::LoadMessage) -> Message {
        let frame = wirespeed_net::control::encode_sealed(&Message::Load(m), &mut self.seal);
        self.stream.write_all(&frame).unwrap();
        self.recv()
    }
}

/// A host that never takes part: it only counts what reaches it (bounded in time).
struct Silent {
    socket: std::net::UdpSocket,
}

impl Silent {
    /// Every datagram that reached it within `wait`, as an on-path observer sees them.
    fn datagrams(&self, wait: Duration) -> Vec<Vec<u8>> {
        let mut got = Vec::new();
        let end = std::time::Instant::now() + wait;
        let mut buf = [0u8; 2048];
        while std::time::Instant::now() < end && got.len() < 100_000 {
            self.socket
                .set_read_timeout(Some(Duration::from_millis(50)))
                .unwrap();
            if let Ok(n) = self.socket.recv(&mut buf) {
                got.push(buf[..n].to_vec());
            }
        }
        got
    }
}

fn refusal(m: Message) -> String {
    match m {
        Message::Refused { reason } => reason,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn issue_32_finding_1_an_on_path_observer_cannot_relay_a_destinations_consent() {
    use wirespeed_model::load::{LengthDeck, Schedule};
    use wirespeed_net::load::{LoadMessage, LoadTest};
    let key = KeyFile::new("consent");
    let silent = Silent {
        socket: std::net::UdpSocket::bind("127.0.0.3:0").unwrap(),
    };
    let victim = silent.socket.local_addr().unwrap();
    let test = LoadTest {
        tag: 0x6f62_7365_7276_6572,
        host: 0,
        hosts: 1,
        schedule: Schedule {
            settle_ns: 100_000_000,
            transmit_ns: 500_000_000,
            measure_ns: 200_000_000,
            cooldown_ns: 100_000_000,
        },
        deck: LengthDeck::from_counts(&[(512, 1)]).unwrap(),
        rate_bits_per_second: Some(2e6),
        count_sink: false,
        seed: 1,
        raw: None,
        tos: None,
    };
    // A keyed generator that allows the whole block: the observer (here, the test reading the
    // silent host's socket) copies the nonce off the wire and relays it, bare or with a proof
    // it made up. Both are refused, and so is 'go'.
    let generator = ServeProcess::start(&[
        "--auth-key-file",
        key.path(),
        "--allow-destination",
        "127.0.0.0/8",
    ]);
    for forged in [None, Some("00".repeat(32))] {
        let mut evil = KeyedController::connect(addr(&generator), &key);
        assert!(matches!(
            evil.load(LoadMessage::Announce { test: test.clone() }),
            Message::Load(LoadMessage::Ready { .. })
        ));
        assert_eq!(
            evil.load(LoadMessage::Target {
                destination: victim
            }),
            Message::Load(LoadMessage::NonceSent)
        );
        let seen = silent.datagrams(Duration::from_millis(300));
        let nonce = seen.first().expect("the nonce reached the silent host")[16..].to_vec();
        let why = refusal(evil.load(LoadMessage::Nonce {
            nonce: wirespeed_net::auth::hex(&nonce),
            proof: forged,
        }));
        assert!(why.contains("did not prove"), "{why}");
    }
    // Past any schedule, the silent host saw nonces only: 32-byte datagrams, at most 20 a
    // target, never a test frame.
    let seen = silent.datagrams(Duration::from_millis(800));
    assert!(seen.len() <= 40, "{} datagrams", seen.len());
    assert!(
        seen.iter().all(|d| d.len() == 32),
        "a test frame reached it"
    );
    // The same generator without a key refuses the target outright: nothing is sent.
    let keyless = ServeProcess::start(&["--allow-destination", "127.0.0.0/8"]);
    let mut evil = crate::attack_peers::Plain::connect(addr(&keyless));
    evil.load(LoadMessage::Announce { test: test.clone() });
    let why = refusal(evil.load(LoadMessage::Target {
        destination: victim,
    }));
    assert!(why.contains("--auth-key-file"), "{why}");
    assert!(silent.datagrams(Duration::from_millis(300)).is_empty());
}

/// A keyless controller speaking the protocol by hand.
struct Plain {
    stream: TcpStream,
}

impl Plain {
    fn connect(agent: SocketAddr) -> Plain {
        let mut stream = TcpStream::connect_timeout(&agent, Duration::from_secs(3)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
            .write_all(&encode(&Message::Hello {
                protocol_version: wirespeed_net::control::PROTOCOL_VERSION,
                software: "attack_peers".into(),
                nonce: None,
            }))
            .unwrap();
        let mut p = Plain { stream };
        assert!(matches!(p.recv(), Message::Welcome { .. }));
        p
    }

    fn send(&mut self, m: &Message) {
        self.stream.write_all(&encode(m)).unwrap();
    }

    fn recv(&mut self) -> Message {
        let frame = read_frame(&mut self.stream).expect("an answer within 10 s");
        wirespeed_net::control::decode(&frame).unwrap().unwrap().0
    }

    fn load(&mut self, m: wirespeed_net::load::LoadMessage) -> Message {
        self.send(&Message::Load(m));
        self.recv()
    }
}
