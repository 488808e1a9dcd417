use wirespeed_net::engine::*;
use wirespeed_net::spec::TestSpec;

#[test]
fn the_clamp_is_held_only_for_a_buffer_of_whole_packets_of_a_set_mss() {
    let spec = |rcv: Option<u64>, mss: Option<u32>| TestSpec {
        receive_buffer_bytes: rcv,
        mss_bytes: mss,
        ..TestSpec::default()
    };
    // Seed 004's 3 packets of 1460 bytes: held.
    assert_eq!(held_clamp(&spec(Some(4380), Some(1460))), Some(4380));
    // A byte-sized buffer without -M, or one below the MSS: the kernel's window stays.
    assert_eq!(held_clamp(&spec(Some(16384), None)), None);
    assert_eq!(held_clamp(&spec(Some(1000), Some(1460))), None);
    assert_eq!(held_clamp(&spec(None, Some(1460))), None);
}
