use std::io;
use wirespeed_net::load::tstamp::*;

fn info(so: u32, phc: i32, tx: u32) -> io::Result<TsInfo> {
    Ok(TsInfo {
        so_timestamping: so,
        phc_index: phc,
        tx_types: tx,
    })
}

#[test]
fn hardware_only_with_the_stamp_the_tx_mode_and_a_clock() {
    let hw = libc::SOF_TIMESTAMPING_TX_HARDWARE
        | libc::SOF_TIMESTAMPING_RAW_HARDWARE
        | libc::SOF_TIMESTAMPING_TX_SOFTWARE;
    let on = 1 << libc::HWTSTAMP_TX_ON;
    assert_eq!(
        choose("eno1", &info(hw, 0, on)),
        Choice::Hardware { phc: 0 }
    );
    let Choice::Software(why) = choose("eno1", &info(hw, -1, on)) else {
        panic!("no clock, no hardware")
    };
    assert!(why.contains("no PTP hardware clock"), "{why}");
    let Choice::Software(why) = choose("eno1", &info(hw, 0, 0)) else {
        panic!("no tx mode, no hardware")
    };
    assert!(why.contains("HWTSTAMP_TX_ON"), "{why}");
    let Choice::Software(why) = choose("veth0", &info(libc::SOF_TIMESTAMPING_TX_SOFTWARE, -1, 0))
    else {
        panic!("software only")
    };
    assert_eq!(
        why,
        "veth0: no hardware transmit timestamps (ETHTOOL_GET_TS_INFO); software transmit stamps"
    );
    let err = Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP));
    assert!(matches!(choose("x", &err), Choice::Software(w) if w.contains("unknown")));
}

#[test]
fn loopback_has_no_hardware_stamps_so_software_is_chosen() {
    // Capability absent -> software, stated: the path every veth/TAP/loopback takes.
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let got = ts_info(&sock, "lo");
    let choice = choose("lo", &got);
    let Choice::Software(why) = choice else {
        panic!("lo claims hardware stamps: {got:?}")
    };
    assert!(why.starts_with("lo: "), "{why}");
    assert!(
        ts_info(&sock, "ws-no-such-if").is_err(),
        "an absent interface is an error"
    );
    assert!(check_name("").is_err() && check_name("a-name-far-too-long-for-ifreq").is_err());
}
