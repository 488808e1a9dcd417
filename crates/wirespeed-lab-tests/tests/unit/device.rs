use wirespeed_lab::device::*;

const SAMPLE: &str = "Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
  eth0: 2586450   38879    0    7    0     0          0         0 565261290  373438    0  175    0     0       0          0
";

#[test]
fn the_interfaces_line_is_found_and_read() {
    assert_eq!(
        parse_net_dev(SAMPLE, "eth0"),
        Some(NetDevLine {
            rx_packets: 38879,
            rx_dropped: 7,
            tx_packets: 373438,
            tx_dropped: 175
        })
    );
    assert_eq!(parse_net_dev(SAMPLE, "eth1"), None);
    assert_eq!(parse_net_dev(SAMPLE, "et"), None);
    assert_eq!(parse_net_dev("  eth0: 1 2 x\n", "eth0"), None);
}
