//! One end of a control connection: frames in and out, the phase checked on every message,
//! deadlines on every wait.

use std::io;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::auth::Seal;
use crate::control::{
    FrameReader, Message, Phase, PolledBody, ProtocolError, decode_body, encode_greeting,
    encode_sealed, foreign_greeting, open_sealed, write_message,
};
use std::io::Write;

/// Why a session ended early.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionError {
    /// The socket failed.
    #[error("control connection: {0}")]
    Io(#[from] io::Error),
    /// The peer sent something out of order.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// The peer said nothing for too long.
    #[error("the peer sent nothing for {} s while {what}", .after.as_secs_f64())]
    Timeout {
        /// What the session was waiting for.
        what: &'static str,
        /// How long it waited.
        after: Duration,
    },
    /// The peer closed the connection.
    #[error("the peer closed the control connection")]
    Closed,
    /// The peer's first bytes are another protocol's (a client reached a web or SSH server).
    #[error(
        "this is not a wirespeed agent: it answered {0:?}; check the address and port (-p) of `wirespeed serve`"
    )]
    NotAgent(String),
    /// A frame after a keyed handshake whose tag is wrong.
    #[error(
        "a control message failed its integrity check (forged, changed, replayed or reordered on the way: something between the two ends is tampering with the connection); the session is closed"
    )]
    Forged,
    /// The peer answered as an iperf3 server does: its PARAM_EXCHANGE (or ACCESS_DENIED) state
    /// byte where an agent's first frame starts with a zero.
    #[error(
        "this is an iperf3 server, not a wirespeed agent (it answered with iperf3's {0} state); test it with --iperf3"
    )]
    Iperf3Server(&'static str),
}

/// A control connection and its phase.
pub struct Control {
    pub stream: TcpStream,
    reader: FrameReader,
    pub(crate) phase: Phase,
    agent_side: bool,
    auth_required: bool,
    /// Set once a keyed handshake completes: every frame after it is tagged and checked.
    seal: Option<Seal>,
}

impl Control {
    pub fn new(stream: TcpStream, prefix: &[u8], agent_side: bool, auth_required: bool) -> Control {
        Control {
            stream,
            reader: FrameReader::with_prefix(prefix),
            phase: Phase::AwaitHello,
            agent_side,
            auth_required,
            seal: None,
        }
    }

    /// From now on every frame both ways is tagged under the session's keys.
    pub(crate) fn secure(&mut self, seal: Seal) {
        self.seal = Some(seal);
    }

    pub(crate) fn send(&mut self, m: &Message) -> io::Result<()> {
        if let Some(seal) = &mut self.seal {
            self.stream.write_all(&encode_sealed(m, seal))?;
            return self.stream.flush();
        }
        if !self.agent_side && matches!(m, Message::Hello { .. }) {
            self.stream.write_all(&encode_greeting(m))?;
            return self.stream.flush();
        }
        write_message(&mut self.stream, m)
    }

    /// Moves the phase for a message this end sent or decided on.
    pub fn set_phase(&mut self, phase: Phase) {
        self.phase = phase;
    }

    /// One poll: waits at most `wait` for a message; checks and applies its transition.
    pub(crate) fn poll(&mut self, wait: Duration) -> Result<Option<Message>, SessionError> {
        self.stream
            .set_read_timeout(Some(wait.max(Duration::from_millis(1))))?;
        let polled = self.reader.poll_body(&mut self.stream);
        // Before the agent's first message, bytes that cannot start a frame are another
        // protocol's: say so rather than "a frame too large" or "malformed".
        if !self.agent_side
            && self.phase == Phase::AwaitHello
            && let Some(line) = foreign_greeting(self.reader.buffered())
        {
            // iperf3 reads the hello's first 37 bytes as its cookie and answers with one state
            // byte (crate::iperf3::codec::State).
            return Err(match self.reader.buffered()[0] {
                9 => SessionError::Iperf3Server("PARAM_EXCHANGE"),
                0xff => SessionError::Iperf3Server("ACCESS_DENIED"),
                _ => SessionError::NotAgent(line),
            });
        }
        match polled? {
            PolledBody::Pending => Ok(None),
            PolledBody::Closed => Err(SessionError::Closed),
            PolledBody::Body(body) => {
                let m = match &mut self.seal {
                    Some(seal) => open_sealed(&body, seal).ok_or(SessionError::Forged)?,
                    None => decode_body(&body),
                }
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?
                .with_peer_text_escaped();
                self.phase = if self.agent_side {
                    self.phase.on_client(&m, self.auth_required)?
                } else {
                    self.phase.on_agent(&m)?
                };
                Ok(Some(m))
            }
        }
    }

    /// Waits up to `timeout` for the next message.
    pub(crate) fn recv(
        &mut self,
        timeout: Duration,
        what: &'static str,
    ) -> Result<Message, SessionError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(SessionError::Timeout {
                    what,
                    after: timeout,
                });
            }
            if let Some(m) = self.poll(left.min(Duration::from_millis(200)))? {
                return Ok(m);
            }
        }
    }
}

impl crate::control::handshake::Channel for Control {
    type Error = SessionError;

    fn send_message(&mut self, m: &Message) -> io::Result<()> {
        self.send(m)
    }

    fn recv_message(
        &mut self,
        wait: Duration,
        what: &'static str,
    ) -> Result<Message, SessionError> {
        self.recv(wait, what)
    }

    fn secure(&mut self, seal: Seal) {
        Control::secure(self, seal);
    }
}
