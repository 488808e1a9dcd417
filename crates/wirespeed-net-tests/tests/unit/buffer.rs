use wirespeed_net::sys::alloc::{ALIGN, AlignedBuf};

#[test]
fn buffers_start_on_a_page_and_hold_their_bytes() {
    for len in [1, 64, 1472, 131_072, 131_073] {
        let mut b = AlignedBuf::zeroed(len);
        assert_eq!(b.as_ptr() as usize % ALIGN, 0, "len {len}");
        assert_eq!(b.len(), len);
        assert!(b.iter().all(|&x| x == 0));
        b[len - 1] = 7;
        assert_eq!(b[len - 1], 7);
    }
    let c = AlignedBuf::from_slice(b"wirespeed");
    assert_eq!(&c[..], b"wirespeed");
    assert_eq!(c.as_ptr() as usize % ALIGN, 0);
    assert!(AlignedBuf::zeroed(0).is_empty());
}
