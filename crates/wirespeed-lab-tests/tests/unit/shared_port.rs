use std::collections::HashMap;
use wirespeed_lab::shared_port::*;

#[test]
fn unicast_goes_to_its_owner_once_known_and_broadcast_to_all() {
    let mut owners = HashMap::new();
    let unicast = [2, 0, 0, 0, 0, 9, 2, 0, 0, 0, 0, 1, 8, 0];
    assert!(wanted_by(&unicast, 3, &owners), "unknown: flooded");
    owners.insert([2, 0, 0, 0, 0, 9], 1);
    assert!(wanted_by(&unicast, 1, &owners));
    assert!(!wanted_by(&unicast, 3, &owners));
    let broadcast = [0xff; 14];
    assert!(wanted_by(&broadcast, 3, &owners));
}
