mod echo;
mod frame;
mod handshake;
mod mesh;
mod message;
mod phase;
mod rr;
use wirespeed_net::control::message::Cookie;
use wirespeed_net::control::*;

#[test]
fn greeting_round_trips() {
    let cookie = Cookie([7; 16]);
    let g = data_greeting(&cookie, 513);
    assert_eq!(&g[..4], b"WSD1");
    let rest: [u8; 20] = g[4..].try_into().unwrap();
    assert_eq!(parse_greeting_rest(&rest), (cookie, 513));
}
