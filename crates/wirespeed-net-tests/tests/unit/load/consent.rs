use proptest::prelude::*;
use std::net::IpAddr;
use wirespeed_net::agent_config::Cidr;
use wirespeed_net::load::consent::*;

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

#[test]
fn the_nonce_budget_is_per_address_and_per_minute() {
    let b = NonceBudget::default();
    let t = std::time::Instant::now();
    let (a, other) = (ip("127.0.0.2"), ip("127.0.0.3"));
    for _ in 0..NONCE_DATAGRAMS_PER_MINUTE {
        assert!(b.take_at(a, t));
    }
    assert!(!b.take_at(a, t + std::time::Duration::from_secs(59)));
    assert!(b.take_at(other, t), "another address has its own budget");
    assert!(b.take_at(a, t + std::time::Duration::from_secs(61)));
    for i in 0..(NonceBudget::MAX_ADDRESSES as u32 + 10) {
        b.take_at(std::net::Ipv4Addr::from(0x0a00_0000 + i).into(), t);
    }
    assert!(b.windows.lock().unwrap().len() <= NonceBudget::MAX_ADDRESSES);
    // `--max-consent-datagrams 20`: one destination's worth, then nothing this minute.
    let one = NonceBudget::new(MAX_NONCE_SENDS);
    assert_eq!(one.left(a), MAX_NONCE_SENDS);
    for _ in 0..MAX_NONCE_SENDS {
        assert!(one.take_at(a, t));
    }
    assert!(!one.take_at(a, t + std::time::Duration::from_secs(30)));
    assert!(one.take_at(a, t + std::time::Duration::from_secs(61)));
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
