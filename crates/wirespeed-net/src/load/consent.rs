//! Who a load test may send to, and how a destination proves that it agreed (issue 13,
//! finding 2; docs/traffic-rules.md).
//!
//! An agent that sends whatever a client asks to wherever the client says is a traffic cannon:
//! a plain UDP echo service answers any probe, and a blind spoofer can forge the answer to one
//! it chose itself. So the rule is:
//!
//! 1. A generator sends test traffic only to its own address (the seed's receiver-off sink) or
//!    to the address of its own control connection (the client that asked), unless the
//!    operator of the agent listed the destination with `serve --allow-destination CIDR`.
//! 2. Whatever the address, a destination other than the generator's own sink must prove that
//!    it is a wirespeed agent's counting sink in the same test: the sending agent draws a
//!    128-bit nonce from the operating system's random source (the controller never sees it
//!    before the destination does and cannot choose it), sends it in one [`NONCE_DATAGRAM_BYTES`]
//!    datagram to the destination, and starts only when the same value comes back through
//!    the controller, which read it from the destination agent over that agent's own control
//!    connection (authenticated when the agents hold a key). A UDP echo service has no control
//!    connection to report through; a spoofer never sees the nonce.
//!
//! 3. A nonce is visible to anyone on the path to the destination, so a bare nonce proves
//!    nothing there (issue 32: an observer relayed it and aimed 542 MB at a silent host). A
//!    destination beyond the generator's own address and its client's therefore needs a key:
//!    the sink's agent answers with [`consent_proof`], an HMAC under the fleet's key of the
//!    nonce, the test's tag and the host, and the generator checks it. A generator without a
//!    key sends only to its own address or its client's. A generator with a key checks the
//!    proof for every destination.
//!
//! The price of a refused destination is at most [`MAX_NONCE_SENDS`] datagrams of 32 bytes.

use std::net::IpAddr;

use wirespeed_model::load::GENERATOR_HEADER_BYTES;

use super::generator::{CONSENT, write_header};

/// Bytes of the sending agent's secret: 128 bits.
pub const NONCE_BYTES: usize = 16;
/// The consent datagram: the test header (flags [`CONSENT`]) and the nonce, nothing more.
pub const NONCE_DATAGRAM_BYTES: usize = GENERATOR_HEADER_BYTES + NONCE_BYTES;
/// How many times a generator sends its nonce (lost datagrams are sent again, 100 ms apart).
pub const MAX_NONCE_SENDS: u32 = crate::agent_config::CONSENT_DATAGRAMS_PER_DESTINATION;

/// The consent datagram of host `host` in test `tag`.
pub fn nonce_datagram(
    tag: u64,
    host: u32,
    nonce: &[u8; NONCE_BYTES],
) -> [u8; NONCE_DATAGRAM_BYTES] {
    let mut d = [0u8; NONCE_DATAGRAM_BYTES];
    write_header(&mut d, tag, host, CONSENT);
    d[GENERATOR_HEADER_BYTES..].copy_from_slice(nonce);
    d
}

/// The nonce a consent datagram carries, if `bytes` is exactly one.
pub fn read_nonce(bytes: &[u8]) -> Option<[u8; NONCE_BYTES]> {
    if bytes.len() != NONCE_DATAGRAM_BYTES {
        return None;
    }
    bytes[GENERATOR_HEADER_BYTES..].try_into().ok()
}

/// Consent datagrams an agent sends on behalf of one client address in a minute by default
/// (`serve --max-consent-datagrams` sets it), whatever the number of its sessions: ten
/// targets' worth ([`MAX_NONCE_SENDS`] each). Without it, a
/// client opening sessions without end made the agent send 600 datagrams a second, 12 bytes
/// of each chosen by the client, to any UDP port of an address the rules allow (issue 32).
pub const NONCE_DATAGRAMS_PER_MINUTE: u32 = 10 * MAX_NONCE_SENDS;

/// The agent's count of consent datagrams per client address over the last minute (a fixed
/// window per address). At most [`NonceBudget::MAX_ADDRESSES`] addresses are remembered;
/// beyond that, windows that have ended are forgotten first, then the oldest.
#[derive(Debug)]
pub struct NonceBudget {
    per_minute: u32,
    #[doc(hidden)]
    pub windows: std::sync::Mutex<std::collections::HashMap<IpAddr, (std::time::Instant, u32)>>,
}

impl Default for NonceBudget {
    fn default() -> Self {
        NonceBudget::new(NONCE_DATAGRAMS_PER_MINUTE)
    }
}

impl NonceBudget {
    /// A budget of `per_minute` datagrams per client address.
    pub fn new(per_minute: u32) -> NonceBudget {
        NonceBudget {
            per_minute,
            windows: Default::default(),
        }
    }

    /// Datagrams one client address may cause in a minute.
    pub fn per_minute(&self) -> u32 {
        self.per_minute
    }

    /// Addresses remembered at most (a few hundred KiB).
    pub const MAX_ADDRESSES: usize = 4096;
    const WINDOW: std::time::Duration = std::time::Duration::from_secs(60);

    /// Takes one datagram from `client`'s budget; false when this minute's is spent.
    pub fn take(&self, client: IpAddr) -> bool {
        self.take_at(client, std::time::Instant::now())
    }

    /// Whether `client` may still send one datagram this minute (nothing is taken).
    pub fn left(&self, client: IpAddr) -> u32 {
        let now = std::time::Instant::now();
        let w = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        match w.get(&client.to_canonical()) {
            Some(&(since, n)) if now.duration_since(since) < Self::WINDOW => {
                self.per_minute.saturating_sub(n)
            }
            _ => self.per_minute,
        }
    }

    #[doc(hidden)]
    pub fn take_at(&self, client: IpAddr, now: std::time::Instant) -> bool {
        let mut w = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if w.len() >= Self::MAX_ADDRESSES && !w.contains_key(&client.to_canonical()) {
            w.retain(|_, (since, _)| now.duration_since(*since) < Self::WINDOW);
            if w.len() >= Self::MAX_ADDRESSES
                && let Some(oldest) = w
                    .iter()
                    .min_by_key(|(_, (since, _))| *since)
                    .map(|(a, _)| *a)
            {
                w.remove(&oldest);
            }
        }
        let entry = w.entry(client.to_canonical()).or_insert((now, 0));
        if now.duration_since(entry.0) >= Self::WINDOW {
            *entry = (now, 0);
        }
        if entry.1 >= self.per_minute {
            return false;
        }
        entry.1 += 1;
        true
    }
}

/// The context of a load consent proof (its own, apart from the handshake's and the mesh's).
pub const LOAD_CONSENT_CONTEXT: &[u8] = b"wirespeed-load-consent-v1";

/// What a sink's agent proves under the key: the test, the host and the nonce it received.
pub fn consent_bytes(tag: u64, host: u32, nonce: &[u8]) -> Vec<u8> {
    let mut b = tag.to_be_bytes().to_vec();
    b.extend_from_slice(&host.to_be_bytes());
    b.extend_from_slice(nonce);
    b
}

/// The sink's agent's proof that host `host` of test `tag` sent it `nonce`.
pub fn consent_proof(key: &crate::auth::AuthKey, tag: u64, host: u32, nonce: &[u8]) -> Vec<u8> {
    key.prove(LOAD_CONSENT_CONTEXT, &consent_bytes(tag, host, nonce))
}

/// Whether a generator without a key may send to `destination` at all: only its own address
/// or its client's, where a bare nonce is proof enough (no third party is aimed at).
pub fn keyless_allows(destination: IpAddr, client: IpAddr, own: IpAddr) -> Result<(), String> {
    let d = destination.to_canonical();
    if d == client.to_canonical() || d == own.to_canonical() {
        return Ok(());
    }
    Err(format!(
        "refused by the agent: {d} is neither this agent's address nor its client's, and without a key its consent cannot be proven (anyone who sees the nonce on its way there could relay it); start every agent of the test with `wirespeed serve --auth-key-file FILE` holding the same key (see docs/traffic-rules.md)"
    ))
}

/// Equal bytes, compared in time independent of where they differ.
#[doc(hidden)]
pub fn same_nonce(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

pub use crate::agent_config::Cidr;

/// Rule 1: may an agent whose control connection runs from `client` to `own` send to
/// `destination`? The refusal is the one line the client prints.
pub fn destination_allowed(
    destination: IpAddr,
    client: IpAddr,
    own: IpAddr,
    allow: &[Cidr],
) -> Result<(), String> {
    let d = destination.to_canonical();
    if d == client.to_canonical() || d == own.to_canonical() || allow.iter().any(|c| c.contains(d))
    {
        return Ok(());
    }
    Err(format!(
        "refused by the agent: it sends load traffic only to its own address and its client's ({}), and {d} is neither; \
         to send to other wirespeed agents the operator must start it with `wirespeed serve --allow-destination CIDR` (see docs/traffic-rules.md)",
        client.to_canonical()
    ))
}
