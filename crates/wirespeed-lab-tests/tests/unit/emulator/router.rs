use std::time::Duration;
use wirespeed_lab::emulator::router::*;
use wirespeed_lab::topology::Cost;

/// An Ethernet frame carrying a 60-byte IPv4 packet from 198.18.1.1 to 198.18.0.1.
fn ipv4_frame(source: [u8; 4]) -> Vec<u8> {
    let mut f = vec![0u8; 14 + 60];
    f[12..14].copy_from_slice(&ETHERTYPE_IPV4.to_be_bytes());
    f[14] = 0x45;
    f[14 + 12..14 + 16].copy_from_slice(&source);
    f[14 + 16..14 + 20].copy_from_slice(&[198, 18, 0, 1]);
    f
}

fn egress() -> RouterEgress {
    RouterEgress {
        // Seed 001 Table 1: ciscomci forwards, ciscoping answers (ms -> ns).
        forward: Cost {
            fixed: Duration::from_micros(525),
            per_byte: Duration::from_nanos(40),
        },
        answer: Cost {
            fixed: Duration::from_micros(751),
            per_byte: Duration::from_nanos(1310),
        },
        own: vec!["198.18.1.1".parse().unwrap()],
    }
}

#[test]
fn seed_001_table_1_answer_and_forward_costs() {
    let e = egress();
    assert_eq!(
        e.charge(&ipv4_frame([198, 18, 1, 1])),
        Charge::Answer(Duration::from_nanos(751_000 + 60 * 1310))
    );
    assert_eq!(
        e.charge(&ipv4_frame([198, 18, 2, 2])),
        Charge::Forward(Duration::from_nanos(525_000 + 60 * 40))
    );
}

#[test]
fn arp_and_runts_are_free() {
    let mut arp = vec![0u8; 42];
    arp[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    assert_eq!(egress().charge(&arp), Charge::None);
    assert_eq!(egress().charge(&[0u8; 10]), Charge::None);
    let mut short = ipv4_frame([198, 18, 1, 1]);
    short.truncate(20);
    assert_eq!(egress().charge(&short), Charge::None);
}

proptest::proptest! {
    #[test]
    fn any_bytes_are_charged_without_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
        let charge = egress().charge(&bytes);
        if bytes.len() < 14 + 20 {
            proptest::prop_assert_eq!(charge, Charge::None);
        }
    }
}
