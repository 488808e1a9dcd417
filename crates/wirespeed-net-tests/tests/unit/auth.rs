use hmac::Mac;
use wirespeed_net::auth::*;

#[test]
fn hmac_sha256_matches_rfc_4231_case_2() {
    // RFC 4231 test case 2 ("Jefe", "what do ya want for nothing?"), through the raw MAC.
    let mut mac = HmacSha256::new_from_slice(b"Jefe").unwrap();
    mac.update(b"what do ya want for nothing?");
    assert_eq!(
        hex(&mac.finalize().into_bytes()),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
}

#[test]
fn proofs_name_their_role_and_session_and_a_wrong_key_fails() {
    let key = AuthKey::from_bytes(b"0123456789abcdef");
    let other = AuthKey::from_bytes(b"0123456789abcdeX");
    let (nc, na) = ([1u8; 32], [2u8; 32]);
    let ours = key.handshake(1, "wirespeed 0.1.0", &nc, &na);
    let theirs = key.handshake(1, "wirespeed 0.1.0", &nc, &na);
    let agent = ours.proof(Role::Agent);
    assert!(theirs.verify(Role::Agent, &agent));
    assert!(
        !theirs.verify(Role::Client, &agent),
        "a reflected proof (the agent's sent back as the client's)"
    );
    for (label, h) in [
        (
            "another client nonce",
            key.handshake(1, "wirespeed 0.1.0", &[3; 32], &na),
        ),
        (
            "another agent nonce",
            key.handshake(1, "wirespeed 0.1.0", &nc, &[3; 32]),
        ),
        (
            "another version",
            key.handshake(2, "wirespeed 0.1.0", &nc, &na),
        ),
        (
            "another hello",
            key.handshake(1, "wirespeed 0.1.0 +queue", &nc, &na),
        ),
        (
            "another key",
            other.handshake(1, "wirespeed 0.1.0", &nc, &na),
        ),
    ] {
        assert!(!h.verify(Role::Agent, &agent), "{label}");
    }
    assert!(!theirs.verify(Role::Agent, &agent[..31]));
}

#[test]
fn sealed_frames_open_once_in_order_and_only_in_their_direction() {
    let key = AuthKey::from_bytes(b"0123456789abcdef");
    let h = key.handshake(1, "w", &[1; 32], &[2; 32]);
    let (mut client, mut agent) = (h.seal(Role::Client), h.seal(Role::Agent));
    let t0 = client.tag(b"first");
    let t1 = client.tag(b"second");
    assert!(!agent.check(b"second", &t1), "out of order");
    assert!(!agent.check(b"firsT", &t0), "changed");
    assert!(agent.check(b"first", &t0));
    assert!(!agent.check(b"first", &t0), "replayed");
    assert!(agent.check(b"second", &t1));
    let back = agent.tag(b"first");
    assert!(!agent.check(b"first", &back), "reflected");
    assert!(client.check(b"first", &back));
    let other = AuthKey::from_bytes(b"0123456789abcdeX").handshake(1, "w", &[1; 32], &[2; 32]);
    assert!(!other.seal(Role::Agent).check(b"first", &t0));
}

#[test]
fn hex_round_trips_and_rejects_junk() {
    assert_eq!(
        unhex(&hex(&[0, 1, 254, 255])).unwrap(),
        vec![0, 1, 254, 255]
    );
    assert!(unhex("abc").is_none());
    assert!(unhex("zz").is_none());
    assert!(unhex("é1").is_none());
    assert!(unhex("+9").is_none(), "a sign is not a digit");
    assert!(unhex("-1ab").is_none());
}

#[test]
fn short_key_files_are_refused() {
    let dir = std::env::temp_dir().join(format!("ws-key-{}", std::process::id()));
    std::fs::write(&dir, "short\n").unwrap();
    let e = AuthKey::from_file(&dir).unwrap_err();
    std::fs::remove_file(&dir).unwrap();
    assert!(e.to_string().contains("holds 5 bytes"), "{e}");
}
