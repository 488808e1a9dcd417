//! Length-prefixed framing: `[u32 big-endian length][length bytes of JSON]`.
//!
//! [`decode`] is a pure function over bytes (the fuzz target and the proptest feed it anything);
//! [`FrameReader`] accumulates what a socket delivers, so that a read timeout in the middle of a
//! frame loses nothing, and never holds more than one frame's cap.

use std::io::{self, Read, Write};

use super::message::Message;

/// The largest frame body accepted, in bytes. Results with many streams fit easily; anything
/// larger is a broken or hostile peer.
pub const MAX_FRAME_BYTES: usize = 256 * 1024;

/// Why bytes are not a valid control message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The length prefix announces more than [`MAX_FRAME_BYTES`].
    #[error("control message of {len} bytes exceeds the limit of {MAX_FRAME_BYTES} bytes")]
    TooLarge {
        /// The announced length.
        len: usize,
    },
    /// The body is not a JSON control message of a known type.
    #[error("malformed control message: {0}")]
    Malformed(#[from] serde_json::Error),
}

/// Encodes one message as a frame.
pub fn encode(message: &Message) -> Vec<u8> {
    let body = serde_json::to_vec(message).expect("control messages always serialize");
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    frame
}

/// Encodes a client's first message with `\r\n\r\n` inside the frame, after the JSON (which
/// JSON admits as trailing whitespace, so an agent reads the same message). A server of another
/// protocol that reads a request up to a blank line (HTTP) then answers at once instead of
/// waiting for more, and the client can name what it reached ([`foreign_greeting`]).
pub fn encode_greeting(message: &Message) -> Vec<u8> {
    let mut body = serde_json::to_vec(message).expect("control messages always serialize");
    body.extend_from_slice(b"\r\n\r\n");
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    frame
}

/// The first line of what a peer sent, if it cannot be a wirespeed agent's frame: an agent's
/// first byte is always zero (a frame length below 16 MiB), while other protocols open with
/// text such as `HTTP/1.1 400 Bad Request` or `SSH-2.0-OpenSSH_9.6`. Shown printable, at
/// most 60 characters.
pub fn foreign_greeting(bytes: &[u8]) -> Option<String> {
    let first = *bytes.first()?;
    if first == 0 {
        return None;
    }
    let line: String = bytes
        .iter()
        .take_while(|&&b| b != b'\r' && b != b'\n')
        .take(60)
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '.'
            }
        })
        .collect();
    Some(line)
}

/// Writes one message as a frame, in one write.
pub fn write_message(out: &mut impl Write, message: &Message) -> io::Result<()> {
    out.write_all(&encode(message))?;
    out.flush()
}

/// Reads one whole frame from a blocking stream and decodes it, for a caller that waits for
/// each message in turn (a test, a one-shot client). Its read timeout bounds the wait; the
/// length prefix is checked before the body is allocated.
pub fn read_message(input: &mut impl Read) -> Result<Message, ReadError> {
    let mut prefix = [0u8; 4];
    input.read_exact(&mut prefix).map_err(ReadError::Io)?;
    let mut body = vec![0u8; announced_len(prefix).map_err(ReadError::Decode)?];
    input.read_exact(&mut body).map_err(ReadError::Io)?;
    decode_body(&body).map_err(ReadError::Decode)
}

/// Why [`read_message`] returned no message.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The stream ended, failed or timed out before the whole frame arrived.
    #[error("control stream: {0}")]
    Io(io::Error),
    /// The frame arrived but is too large or not a message.
    #[error(transparent)]
    Decode(DecodeError),
}

/// The body length a frame's prefix announces, refused over [`MAX_FRAME_BYTES`] before anything
/// is allocated for it.
fn announced_len(prefix: [u8; 4]) -> Result<usize, DecodeError> {
    let len = u32::from_be_bytes(prefix) as usize;
    if len > MAX_FRAME_BYTES {
        return Err(DecodeError::TooLarge { len });
    }
    Ok(len)
}

/// The body of the first frame in `bytes`: `Ok(None)` when more bytes are needed.
pub fn frame_body(bytes: &[u8]) -> Result<Option<&[u8]>, DecodeError> {
    let Some(prefix) = bytes.first_chunk::<4>() else {
        return Ok(None);
    };
    let len = announced_len(*prefix)?;
    Ok(bytes.get(4..4 + len))
}

/// Decodes the first frame in `bytes`: `Ok(None)` when more bytes are needed, otherwise the
/// message and the number of bytes it used.
pub fn decode(bytes: &[u8]) -> Result<Option<(Message, usize)>, DecodeError> {
    let Some(body) = frame_body(bytes)? else {
        return Ok(None);
    };
    let message = decode_body(body)?;
    Ok(Some((message, 4 + body.len())))
}

/// The message in a frame's body. Every decoder of a control message comes here, and this is
/// not generic: the protocol's deserializer (serde's internally tagged enum over every report
/// type) is compiled once, in this crate, instead of again in each crate or test binary that
/// instantiates [`FrameReader::poll`] for its own stream type, which cost each of them most of
/// its compile (15 of 18 s at opt-level 3).
pub(crate) fn decode_body(body: &[u8]) -> Result<Message, DecodeError> {
    serde_json::from_slice(body).map_err(DecodeError::Malformed)
}

/// A sealed frame: the message's JSON, then its tag; the length prefix counts both.
pub fn encode_sealed(message: &Message, seal: &mut crate::auth::Seal) -> Vec<u8> {
    let body = serde_json::to_vec(message).expect("control messages always serialize");
    let tag = seal.tag(&body);
    let mut frame = Vec::with_capacity(4 + body.len() + tag.len());
    frame.extend_from_slice(&((body.len() + tag.len()) as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    frame.extend_from_slice(&tag);
    frame
}

/// Checks a sealed frame's body (JSON then tag) and decodes its message; `None` when the tag
/// is wrong (a forged, changed, replayed or reordered frame) or the frame is too short for one.
pub fn open_sealed(
    body: &[u8],
    seal: &mut crate::auth::Seal,
) -> Option<Result<Message, DecodeError>> {
    let split = body.len().checked_sub(crate::auth::TAG_BYTES)?;
    let (json, tag) = body.split_at(split);
    seal.check(json, tag).then(|| decode_body(json))
}

/// What [`FrameReader::poll`] found. (One per control message, never on the data path, so the
/// size of the message variant does not matter.)
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Polled {
    /// A whole message.
    Message(Message),
    /// Nothing complete yet (the read timed out).
    Pending,
    /// The peer closed the connection.
    Closed,
}

/// What [`FrameReader::poll_body`] found.
#[derive(Debug)]
pub enum PolledBody {
    /// A whole frame's body.
    Body(Vec<u8>),
    /// Nothing complete yet (the read timed out).
    Pending,
    /// The peer closed the connection.
    Closed,
}

/// Reads frames from a stream, keeping partial frames across read timeouts.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: Vec<u8>,
}

impl FrameReader {
    /// A reader that starts with bytes already read from the stream (the agent reads four bytes
    /// to tell control from data connections).
    pub fn with_prefix(prefix: &[u8]) -> FrameReader {
        FrameReader {
            buf: prefix.to_vec(),
        }
    }

    /// Returns the next message if one is complete, reading at most once from `input` (whose
    /// read timeout sets how long this waits).
    pub fn poll(&mut self, input: &mut impl Read) -> io::Result<Polled> {
        Ok(match self.poll_body(input)? {
            PolledBody::Body(body) => Polled::Message(
                decode_body(&body).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?,
            ),
            PolledBody::Pending => Polled::Pending,
            PolledBody::Closed => Polled::Closed,
        })
    }

    /// Returns the next frame's body, undecoded, if one is complete (a sealed frame's body is
    /// checked before it is decoded), reading at most once from `input`.
    pub fn poll_body(&mut self, input: &mut impl Read) -> io::Result<PolledBody> {
        if let Some(b) = self.take()? {
            return Ok(PolledBody::Body(b));
        }
        let mut chunk = [0u8; 16 * 1024];
        match input.read(&mut chunk) {
            Ok(0) => Ok(PolledBody::Closed),
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                Ok(match self.take()? {
                    Some(b) => PolledBody::Body(b),
                    None => PolledBody::Pending,
                })
            }
            // A read with a timeout set fails with EINTR when the process was stopped and then
            // continued (SIGSTOP/SIGCONT, signal(7)) although no handler ran: nothing was read,
            // so it is a poll that found nothing, not the end of the session.
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {
                Ok(PolledBody::Pending)
            }
            Err(e) => Err(e),
        }
    }

    /// The bytes read but not yet decoded.
    pub fn buffered(&self) -> &[u8] {
        &self.buf
    }

    fn take(&mut self) -> io::Result<Option<Vec<u8>>> {
        match frame_body(&self.buf) {
            Ok(Some(body)) => {
                let body = body.to_vec();
                self.buf.drain(..4 + body.len());
                Ok(Some(body))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(io::Error::new(io::ErrorKind::InvalidData, e)),
        }
    }
}

/// A read that ended because of `SO_RCVTIMEO`.
pub(crate) fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}
