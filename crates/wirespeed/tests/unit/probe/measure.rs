use wirespeed::probe::measure::*;
use wirespeed::probe::result::HopReport;
use wirespeed_model::bestcase::HopAnalysis;

/// Issue 21 item 7: the default sizes are never padded by Ethernet (46 bytes and up).
#[test]
fn default_sizes_start_above_ethernet_padding() {
    assert_eq!(unpadded_packet_bytes(), 46);
    let sizes = default_sizes(28, Some(1500));
    assert_eq!((sizes[0], sizes[15], sizes.len()), (46, 1500, 16));
    // A UDP echo's smallest probe (52 bytes) is above it already.
    assert_eq!(default_sizes(52, None)[0], 52);
}

/// Issue 31: `--hops` spends its 16 default sizes at the smallest size, at the quote limit
/// and at the largest, per family; a span too short for three clusters keeps them even.
#[test]
fn hop_sizes_cluster_at_the_ends_and_the_quote_limit() {
    let v6 = hop_sizes(48, Some(1500), 1232);
    assert_eq!(v6.len(), 16);
    assert_eq!(&v6[..5], [48, 56, 64, 72, 80]);
    assert_eq!(&v6[5..10], [1232, 1240, 1248, 1256, 1264]);
    assert_eq!(&v6[10..], [1460, 1468, 1476, 1484, 1492, 1500]);
    let v4 = hop_sizes(28, Some(1500), 548);
    assert_eq!((v4[0], v4[5], v4[15]), (46, 548, 1500));
    assert!(v4.windows(2).all(|w| w[0] < w[1]), "{v4:?}");
    // The agent's short replies start at 88 bytes on IPv6.
    assert_eq!(hop_sizes(88, Some(1500), 1232)[0], 88);
    // An IPv6 path of 1280 bytes leaves 48 above the knee: evenly, as before.
    assert_eq!(
        hop_sizes(48, Some(1280), 1232),
        default_sizes(48, Some(1280))
    );
    assert_eq!(hop_sizes(28, Some(576), 548), default_sizes(28, Some(576)));
    assert_eq!(quote_limit("198.18.0.1".parse().unwrap()), 548);
    assert_eq!(quote_limit("2001:2::1".parse().unwrap()), 1232);
}

/// Issue 15 item 4: the destination probed alone (TTL 64) is "the destination", not hop 64.
#[test]
fn the_destination_alone_is_not_called_hop_64() {
    let report = |ttl: u8, destination: bool| HopReport {
        responder: None,
        destination,
        transit: None,
        analysis: HopAnalysis {
            ttl,
            sizes: Vec::new(),
            loss_fraction: 0.0,
            fit: None,
            no_fit_reason: None,
            rate_limit: None,
            increment: None,
        },
    };
    assert_eq!(hop_name(&report(64, true), false), "the destination");
    assert_eq!(hop_name(&report(3, true), true), "hop 3 (the destination)");
    assert_eq!(hop_name(&report(2, false), true), "hop 2");
}
