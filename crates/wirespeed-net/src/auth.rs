//! Pre-shared-key authentication: HMAC-SHA256 challenge/response (RFC 2104 over FIPS 180-4).
//!
//! The agent sends 32 random bytes; the client answers `HMAC-SHA256(key, "wirespeed-auth-v1" ||
//! nonce)`; the agent checks it with the MAC's constant-time comparison. The key never crosses
//! the wire and a recorded answer is useless for the next session's nonce. This proves the
//! client knows the key; it does not encrypt the test.

use std::io;
use std::path::Path;

use hmac::{Hmac, Mac};
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

const CONTEXT: &[u8] = b"wirespeed-auth-v1";

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

    fn mac(&self) -> HmacSha256 {
        let mut mac = HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length");
        mac.update(CONTEXT);
        mac
    }

    /// The client's answer to `nonce`.
    pub fn respond(&self, nonce: &[u8]) -> Vec<u8> {
        let mut mac = self.mac();
        mac.update(nonce);
        mac.finalize().into_bytes().to_vec()
    }

    /// Whether `answer` is the right response to `nonce`, compared in constant time.
    pub fn verify(&self, nonce: &[u8], answer: &[u8]) -> bool {
        let mut mac = self.mac();
        mac.update(nonce);
        mac.verify_slice(answer).is_ok()
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
    if !text.len().is_multiple_of(2) || text.len() > 4096 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn the_right_key_answers_and_a_wrong_one_does_not() {
        let key = AuthKey::from_bytes(b"0123456789abcdef");
        let other = AuthKey::from_bytes(b"0123456789abcdeX");
        let nonce = [9u8; 32];
        let answer = key.respond(&nonce);
        assert!(key.verify(&nonce, &answer));
        assert!(
            !key.verify(&[8u8; 32], &answer),
            "a replay for another nonce"
        );
        assert!(!other.verify(&nonce, &answer));
        assert!(!key.verify(&nonce, &answer[..31]));
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
    }

    #[test]
    fn short_key_files_are_refused() {
        let dir = std::env::temp_dir().join(format!("ws-key-{}", std::process::id()));
        std::fs::write(&dir, "short\n").unwrap();
        let e = AuthKey::from_file(&dir).unwrap_err();
        std::fs::remove_file(&dir).unwrap();
        assert!(e.to_string().contains("holds 5 bytes"), "{e}");
    }
}
