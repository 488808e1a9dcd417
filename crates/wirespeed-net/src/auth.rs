//! Pre-shared-key authentication of both ends, bound to the session (issue 32).
//!
//! The construction is HKDF-SHA256 (RFC 5869) and HMAC-SHA256 (RFC 2104) from RustCrypto, in
//! the shape of TLS 1.3's PSK handshake reduced to what a control channel needs:
//!
//! 1. the client's hello carries 32 random bytes `Nc`; the agent answers with its own `Na`;
//! 2. both derive, from the key and `Nc || Na` as HKDF's salt, a confirmation key and one frame
//!    key per direction;
//! 3. each end proves the key with `HMAC(confirm, role || transcript)`, where the transcript
//!    names the construction (`wirespeed-auth-v2`), the protocol version, the hello's software
//!    and both nonces. The agent proves first; the client checks that proof before it answers;
//! 4. every frame after the handshake carries `HMAC(frame key of its direction, sequence ||
//!    body)`: a relay that passed the handshake between a keyed client and a real agent cannot
//!    add, change, drop, reorder or reflect a single message, so it gains nothing a plain TCP
//!    proxy would not.
//!
//! A proof names its role, so the agent's proof cannot stand for the client's; it names both
//! nonces, so a proof recorded or relayed from another session is worthless. The key never
//! crosses the wire. This authenticates; it does not encrypt (test parameters and results are
//! not secret, and an on-path attacker can always cut a connection).

use std::io;
use std::path::Path;

use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha2::Sha256;

#[doc(hidden)]
pub type HmacSha256 = Hmac<Sha256>;

/// The construction and its version: the first bytes of every transcript and key label, so
/// that nothing proved or derived here can be taken for anything else.
const HANDSHAKE_LABEL: &[u8] = b"wirespeed-auth-v2";

/// Bytes of each end's handshake nonce.
pub const HANDSHAKE_NONCE_BYTES: usize = 32;

/// Bytes of a frame's tag (HMAC-SHA256).
pub const TAG_BYTES: usize = 32;

/// A pre-shared key read from a file.
#[derive(Clone)]
pub struct AuthKey(Vec<u8>);

impl std::fmt::Debug for AuthKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuthKey(..)")
    }
}

/// Why a key file cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The file cannot be read.
    #[error("cannot read the key file {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: io::Error,
    },
    /// The file holds fewer than 16 bytes (after trailing whitespace is dropped).
    #[error(
        "the key file {path} holds {len} bytes; use at least 16 (e.g. head -c 32 /dev/urandom | base64 > {path})"
    )]
    TooShort {
        /// The file.
        path: String,
        /// Its usable length.
        len: usize,
    },
}

impl AuthKey {
    /// The key in `path`: its bytes without trailing whitespace, at least 16 of them.
    pub fn from_file(path: &Path) -> Result<AuthKey, KeyError> {
        let shown = path.display().to_string();
        let mut bytes = std::fs::read(path).map_err(|source| KeyError::Read {
            path: shown.clone(),
            source,
        })?;
        while bytes.last().is_some_and(|b| b.is_ascii_whitespace()) {
            bytes.pop();
        }
        if bytes.len() < 16 {
            return Err(KeyError::TooShort {
                path: shown,
                len: bytes.len(),
            });
        }
        Ok(AuthKey(bytes))
    }

    /// A key from bytes (tests).
    pub fn from_bytes(bytes: &[u8]) -> AuthKey {
        AuthKey(bytes.to_vec())
    }

    /// The session's keys once both nonces are known: `protocol_version` and `software` are
    /// the client's hello's.
    pub fn handshake(
        &self,
        protocol_version: u32,
        software: &str,
        client_nonce: &[u8],
        agent_nonce: &[u8],
    ) -> Handshake {
        let mut transcript = Vec::with_capacity(HANDSHAKE_LABEL.len() + 96 + software.len());
        for part in [
            HANDSHAKE_LABEL,
            &protocol_version.to_be_bytes(),
            software.as_bytes(),
            client_nonce,
            agent_nonce,
        ] {
            // Each part length-prefixed, so that no two different transcripts share bytes.
            transcript.extend_from_slice(&(part.len() as u32).to_be_bytes());
            transcript.extend_from_slice(part);
        }
        let salt = [client_nonce, agent_nonce].concat();
        let hk = Hkdf::<Sha256>::new(Some(&salt), &self.0);
        let key = |purpose: &[u8]| {
            let mut k = [0u8; 32];
            hk.expand_multi_info(&[HANDSHAKE_LABEL, b" ", purpose, b" ", &transcript], &mut k)
                .expect("32 bytes is a valid HKDF-SHA256 length");
            k
        };
        Handshake {
            confirm: key(b"confirm"),
            client_to_agent: key(b"client-to-agent frames"),
            agent_to_client: key(b"agent-to-client frames"),
            transcript,
        }
    }

    /// HMAC-SHA256 of `context || data` under the key, for proofs other than the handshake's
    /// (the mesh destination's consent). No context starts as the handshake's does, so no
    /// proof can stand for a handshake answer or the other way round.
    pub fn prove(&self, context: &[u8], data: &[u8]) -> Vec<u8> {
        assert!(
            !context.starts_with(b"wirespeed-auth"),
            "a context of its own"
        );
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(context);
        mac.update(data);
        mac.finalize().into_bytes().to_vec()
    }

    /// Whether `proof` is [`AuthKey::prove`] of `context || data`, compared in constant time.
    pub fn check_proof(&self, context: &[u8], data: &[u8], proof: &[u8]) -> bool {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(context);
        mac.update(data);
        mac.verify_slice(proof).is_ok()
    }
}

/// Which end of a control connection proves or seals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The end that said hello.
    Client,
    /// `wirespeed serve`.
    Agent,
}

impl Role {
    fn label(self) -> &'static [u8] {
        match self {
            Role::Client => b"client proof",
            Role::Agent => b"agent proof",
        }
    }
}

/// One session's keys, derived by [`AuthKey::handshake`].
pub struct Handshake {
    confirm: [u8; 32],
    client_to_agent: [u8; 32],
    agent_to_client: [u8; 32],
    transcript: Vec<u8>,
}

impl std::fmt::Debug for Handshake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Handshake(..)")
    }
}

fn mac_of(key: &[u8], parts: &[&[u8]]) -> HmacSha256 {
    let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
    for p in parts {
        mac.update(p);
    }
    mac
}

impl Handshake {
    /// `role`'s proof that it holds the key, for this session's transcript only.
    pub fn proof(&self, role: Role) -> [u8; 32] {
        mac_of(&self.confirm, &[role.label(), &self.transcript])
            .finalize()
            .into_bytes()
            .into()
    }

    /// Whether `proof` is `role`'s proof for this session, compared in constant time.
    pub fn verify(&self, role: Role, proof: &[u8]) -> bool {
        mac_of(&self.confirm, &[role.label(), &self.transcript])
            .verify_slice(proof)
            .is_ok()
    }

    /// The frame seal of the end that plays `me`.
    pub fn seal(&self, me: Role) -> Seal {
        let (send, receive) = match me {
            Role::Client => (self.client_to_agent, self.agent_to_client),
            Role::Agent => (self.agent_to_client, self.client_to_agent),
        };
        Seal {
            send,
            receive,
            sent: 0,
            received: 0,
        }
    }
}

/// Tags frames after the handshake: a key per direction and a count of frames each way, so
/// that a frame cannot be replayed, reordered, dropped (the next one fails) or sent back.
pub struct Seal {
    send: [u8; 32],
    receive: [u8; 32],
    sent: u64,
    received: u64,
}

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Seal(sent {}, received {})", self.sent, self.received)
    }
}

impl Seal {
    /// The tag of the next frame this end sends.
    pub fn tag(&mut self, body: &[u8]) -> [u8; TAG_BYTES] {
        let tag = mac_of(&self.send, &[&self.sent.to_be_bytes(), body])
            .finalize()
            .into_bytes()
            .into();
        self.sent += 1;
        tag
    }

    /// Whether `tag` is right for the next frame from the peer (compared in constant time).
    pub fn check(&mut self, body: &[u8], tag: &[u8]) -> bool {
        let ok = mac_of(&self.receive, &[&self.received.to_be_bytes(), body])
            .verify_slice(tag)
            .is_ok();
        if ok {
            self.received += 1;
        }
        ok
    }
}

/// Fills `buf` from the kernel's random source (`getrandom(2)`, which unlike a read of
/// `/dev/urandom` needs no file descriptor and cannot be handed a substitute file).
pub fn random_bytes(buf: &mut [u8]) -> io::Result<()> {
    getrandom::fill(buf)?;
    Ok(())
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Bytes from hex, or `None` if `text` is not an even number of hex digits.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    // Digits only: `from_str_radix` alone also takes a sign, so "+9" read as byte 9 (found by
    // the `handshake` fuzz target).
    if !text.len().is_multiple_of(2)
        || text.len() > 4096
        || !text.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}
