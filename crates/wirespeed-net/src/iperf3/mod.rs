//! iperf3's protocol (esnet/iperf 3.x), both ways: [`codec`] the control connection's bytes
//! (pure, fuzzed), [`client`] a test against any iperf3 server, [`server`] the agent answering
//! iperf3 clients.
//!
//! The protocol, as iperf3's `iperf_api.c`, `iperf_client_api.c` and `iperf_server_api.c`
//! run it: the client opens a TCP control connection and sends a 37-byte cookie; the server
//! drives the test with one-byte states (PARAM_EXCHANGE: the client sends its parameters as
//! length-prefixed JSON; CREATE_STREAMS: the client opens each data stream to the same port,
//! a TCP one opening with the cookie, a UDP one with a 4-byte greeting the server answers;
//! TEST_START, TEST_RUNNING: data flows). The client ends the test with TEST_END; the server
//! answers EXCHANGE_RESULTS, reads the client's results JSON and sends its own, then
//! DISPLAY_RESULTS; the client closes with IPERF_DONE.

pub mod codec;

pub use codec::{
    COOKIE_BYTES, CodecError, Cookie, MAX_PARAMS_BYTES, MAX_RESULTS_BYTES, Params, Results, State,
    StreamResults, TestParams,
};
pub mod client;
pub mod server;
// Test seams: `#[doc(hidden)] pub` only so that crates/wirespeed-net-tests (where this
// crate's unit tests live) reaches what they test; not part of the library's interface.
#[doc(hidden)]
pub mod stream;
