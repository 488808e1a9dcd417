use std::mem::{size_of, zeroed};
use wirespeed_net::sys::cmsg::*;

fn message(level: i32, kind: i32, data: &[u8]) -> Vec<u8> {
    let header = size_of::<libc::cmsghdr>();
    let len = header + data.len();
    let mut out = vec![0u8; align(len)];
    // SAFETY: all-zero is a valid cmsghdr.
    let mut h: libc::cmsghdr = unsafe { zeroed() };
    h.cmsg_len = len as _;
    h.cmsg_level = level;
    h.cmsg_type = kind;
    // SAFETY: `out` holds at least one header; unaligned write of plain data.
    unsafe { std::ptr::write_unaligned(out.as_mut_ptr().cast::<libc::cmsghdr>(), h) };
    out[header..len].copy_from_slice(data);
    out
}

#[test]
fn the_walk_reads_each_message_and_stops_at_a_lying_header() {
    let mut control = message(1, 2, &7i32.to_ne_bytes());
    control.extend(message(3, 4, &[9; 16]));
    let got: Vec<(i32, i32, Vec<u8>)> = messages(&control)
        .map(|c| (c.level, c.kind, c.data.to_vec()))
        .collect();
    assert_eq!(got.len(), 2);
    assert_eq!(int(&got[0].2), Some(7));
    assert_eq!((got[1].0, got[1].1, got[1].2.len()), (3, 4, 16));
    assert_eq!(
        timespec(&got[1].2, 0).map(|t| t.0),
        Some(i64::from_ne_bytes([9; 8]))
    );
    assert_eq!(timespec(&got[1].2, 1), None);
    // A header claiming more than the buffer holds ends the walk.
    let mut bad = message(1, 2, &[0; 4]);
    bad[0] = 200;
    assert_eq!(messages(&bad).count(), 0);
    assert_eq!(messages(&control[..10]).count(), 0);
}
