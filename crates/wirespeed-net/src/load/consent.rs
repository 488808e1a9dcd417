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
//! The price of a refused destination is at most [`MAX_NONCE_SENDS`] datagrams of 32 bytes.

use std::net::IpAddr;

use wirespeed_model::load::GENERATOR_HEADER_BYTES;

use super::generator::{CONSENT, write_header};

/// Bytes of the sending agent's secret: 128 bits.
pub const NONCE_BYTES: usize = 16;
/// The consent datagram: the test header (flags [`CONSENT`]) and the nonce, nothing more.
pub const NONCE_DATAGRAM_BYTES: usize = GENERATOR_HEADER_BYTES + NONCE_BYTES;
/// How many times a generator sends its nonce (lost datagrams are sent again, 100 ms apart).
pub const MAX_NONCE_SENDS: u32 = 20;

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

/// Equal bytes, compared in time independent of where they differ.
pub(crate) fn same_nonce(a: &[u8], b: &[u8]) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn blocks_parse_and_contain() {
        let lab: Cidr = "198.18.0.0/15".parse().unwrap();
        assert!(lab.contains(ip("198.18.0.1")) && lab.contains(ip("198.19.255.255")));
        assert!(!lab.contains(ip("198.20.0.0")) && !lab.contains(ip("10.0.0.1")));
        assert!(
            lab.contains(ip("::ffff:198.18.3.4")),
            "v4-mapped counts as v4"
        );
        assert!(!lab.contains(ip("2001:2::1")));
        let v6: Cidr = "2001:2::/48".parse().unwrap();
        assert!(v6.contains(ip("2001:2:0:ffff::9")) && !v6.contains(ip("2001:3::1")));
        let one: Cidr = "127.0.0.2".parse().unwrap();
        assert_eq!(one.to_string(), "127.0.0.2/32");
        assert!(one.contains(ip("127.0.0.2")) && !one.contains(ip("127.0.0.3")));
        let host_bits: Cidr = "198.18.0.1/15".parse().unwrap();
        assert_eq!(host_bits, lab);
        let all: Cidr = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(ip("203.0.113.9")) && !all.contains(ip("::1")));
        for bad in [
            "",
            "198.18.0.0/33",
            "::/129",
            "host/8",
            "1.2.3.4/x",
            "1.2.3.4/-1",
        ] {
            let e = bad.parse::<Cidr>().unwrap_err();
            assert!(e.contains("examples"), "{e}");
        }
    }

    #[test]
    fn only_own_client_or_allowed_addresses_pass_rule_one() {
        let client = ip("127.0.0.1");
        let own = ip("127.0.0.1");
        assert!(destination_allowed(ip("127.0.0.1"), client, own, &[]).is_ok());
        assert!(destination_allowed(ip("::ffff:127.0.0.1"), client, own, &[]).is_ok());
        let e = destination_allowed(ip("127.0.0.2"), client, own, &[]).unwrap_err();
        assert!(
            e.contains("--allow-destination") && e.contains("127.0.0.2"),
            "{e}"
        );
        assert_eq!(e.lines().count(), 1);
        let allow = ["127.0.0.0/8".parse().unwrap()];
        assert!(destination_allowed(ip("127.0.0.2"), client, own, &allow).is_ok());
        assert!(destination_allowed(ip("198.18.0.2"), client, own, &allow).is_err());
        // The agent's own address (a sink host sending to its own sink).
        assert!(destination_allowed(ip("198.18.0.2"), client, ip("198.18.0.2"), &[]).is_ok());
    }

    #[test]
    fn the_nonce_datagram_reads_back_and_nothing_else_does() {
        let n = [7u8; NONCE_BYTES];
        let d = nonce_datagram(9, 2, &n);
        assert_eq!(read_nonce(&d), Some(n));
        assert_eq!(read_nonce(&d[..31]), None);
        assert_eq!(read_nonce(&[0u8; 33]), None);
        assert!(same_nonce(&n, &[7u8; 16]) && !same_nonce(&n, &[7u8; 15]));
        assert!(!same_nonce(&n, &[[7u8; 15].as_slice(), &[8]].concat()));
    }

    proptest! {
        #[test]
        fn a_block_contains_its_own_address_and_the_prefix_decides(a: u32, b: u32, p in 0u8..=32) {
            let net: Cidr = format!("{}/{p}", std::net::Ipv4Addr::from(a)).parse().unwrap();
            prop_assert!(net.contains(std::net::Ipv4Addr::from(a).into()));
            let same_prefix = p == 0 || (a ^ b) >> (32 - u32::from(p)) == 0;
            prop_assert_eq!(net.contains(std::net::Ipv4Addr::from(b).into()), same_prefix);
        }
    }
}
