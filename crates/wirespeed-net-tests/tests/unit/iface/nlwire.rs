use proptest::prelude::*;
use wirespeed_net::iface::nlwire::*;

#[test]
fn a_request_has_the_bytes_the_kernel_expects() {
    let bytes = Request::genl(0x10, NLM_F_REQUEST | NLM_F_ACK, 7, 3, 1)
        .begin(1)
        .string(2, "lo")
        .end()
        .finish();
    #[rustfmt::skip]
    let want: Vec<u8> = [
        &32u32.to_ne_bytes()[..], &0x10u16.to_ne_bytes(), &5u16.to_ne_bytes(),
        &7u32.to_ne_bytes(), &0u32.to_ne_bytes(),
        &[3, 1, 0, 0],
        &12u16.to_ne_bytes(), &(1u16 | NLA_F_NESTED).to_ne_bytes(),
        &7u16.to_ne_bytes(), &2u16.to_ne_bytes(), b"lo\0", &[0],
    ].concat();
    assert_eq!(bytes, want);
    let msgs: Vec<_> = messages(&bytes).collect();
    assert_eq!(msgs.len(), 1);
    let msg = msgs[0].unwrap();
    assert_eq!((msg.kind, msg.seq), (0x10, 7));
    let header = msg.genl_attrs().unwrap().find(1).expect("nested header");
    assert_eq!(header.nested().find(2).unwrap().data, b"lo\0");
}

#[test]
fn values_read_back() {
    let bytes = Request::genl(1, 0, 0, 0, 0)
        .u32(1, 0xDEAD_BEEF)
        .bytes(2, &42u64.to_ne_bytes())
        .flag(3)
        .bytes(4, &[1, 0, 0, 0, 3, 0, 0, 0])
        .finish();
    let msg = messages(&bytes).next().unwrap().unwrap();
    let attrs = msg.genl_attrs().unwrap();
    assert_eq!(attrs.find(1).unwrap().u32(), Some(0xDEAD_BEEF));
    assert_eq!(attrs.find(2).unwrap().u64(), Some(42));
    assert_eq!(attrs.find(3).unwrap().data, b"");
    assert_eq!(attrs.find(3).unwrap().u64(), None, "a pad is not a value");
    assert_eq!(attrs.find(4).unwrap().u32s(), [1, 3]);
    assert!(attrs.find(9).is_none());
}

#[test]
fn lengths_past_the_end_are_errors() {
    let mut bytes = Request::genl(1, 0, 0, 0, 0).u32(1, 5).finish();
    bytes[20] = 200; // the attribute claims 200 bytes
    let msg = messages(&bytes).next().unwrap().unwrap();
    let first = msg.genl_attrs().unwrap().into_iter().next().unwrap();
    assert!(first.is_err());
    bytes[0] = 255; // the message claims more than the datagram
    assert!(messages(&bytes).next().unwrap().is_err());
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..256)) {
        for msg in messages(&bytes).take(64).flatten() {
            let _ = msg.error_code();
            if let Ok(attrs) = msg.genl_attrs() {
                for a in attrs.into_iter().take(64).flatten() {
                    let _ = (a.u8(), a.u16(), a.u32(), a.u64(), a.u32s());
                    for n in a.nested().into_iter().take(64).flatten() {
                        let _ = n.u32();
                    }
                }
            }
        }
    }
}
