//! Netlink messages and attributes as bytes (netlink(7), genetlink): building requests and
//! walking replies without trusting a single length field.
//!
//! A message is a 16-byte `nlmsghdr` (length, type, flags, sequence, port) and a payload; a
//! generic netlink payload starts with a 4-byte `genlmsghdr` (command, version, reserved) and
//! continues with attributes: a 4-byte header (length, type) and the value, each padded to 4
//! bytes. Every reader here checks lengths first and returns an error rather than panic.

pub(crate) const NLMSG_HDRLEN: usize = 16;
pub(crate) const GENL_HDRLEN: usize = 4;
pub const NLMSG_ERROR: u16 = 2;
pub const NLMSG_DONE: u16 = 3;
pub const NLM_F_REQUEST: u16 = 1;
pub const NLM_F_ACK: u16 = 4;
/// NLM_F_ROOT | NLM_F_MATCH: every object of the kind, ended by `NLMSG_DONE`.
pub const NLM_F_DUMP: u16 = 0x300;
pub const NLA_F_NESTED: u16 = 1 << 15;
const NLA_TYPE_MASK: u16 = !(NLA_F_NESTED | (1 << 14));

/// A malformed message or attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed(pub(crate) &'static str);

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_ne_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// One netlink message of a datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    pub kind: u16,
    pub seq: u32,
    pub(crate) payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// For `NLMSG_ERROR`: the error code (0 is an acknowledgement).
    pub fn error_code(&self) -> Result<i32, Malformed> {
        u32_at(self.payload, 0)
            .map(|v| v as i32)
            .ok_or(Malformed("short error message"))
    }

    /// The attributes after the generic netlink header.
    pub fn genl_attrs(&self) -> Result<Attrs<'a>, Malformed> {
        self.payload
            .get(GENL_HDRLEN..)
            .map(Attrs)
            .ok_or(Malformed("short generic netlink header"))
    }

    /// A fixed family header of `len` bytes (rtnetlink's `tcmsg`, `ifinfomsg`) and the
    /// attributes after it.
    pub(crate) fn split_header(&self, len: usize) -> Result<(&'a [u8], Attrs<'a>), Malformed> {
        if self.payload.len() < len {
            return Err(Malformed("short family header"));
        }
        let rest = self.payload.get(align4(len)..).unwrap_or(&[]);
        Ok((&self.payload[..len], Attrs(rest)))
    }
}

/// The messages of one received datagram.
pub fn messages(mut buf: &[u8]) -> impl Iterator<Item = Result<Message<'_>, Malformed>> {
    std::iter::from_fn(move || {
        if buf.is_empty() {
            return None;
        }
        let parsed = (|| {
            let len = u32_at(buf, 0).ok_or(Malformed("short message header"))? as usize;
            if len < NLMSG_HDRLEN || len > buf.len() {
                return Err(Malformed("message length out of bounds"));
            }
            let kind = u16_at(buf, 4).ok_or(Malformed("short message header"))?;
            let seq = u32_at(buf, 8).ok_or(Malformed("short message header"))?;
            Ok((
                len,
                Message {
                    kind,
                    seq,
                    payload: &buf[NLMSG_HDRLEN..len],
                },
            ))
        })();
        match parsed {
            Ok((len, msg)) => {
                buf = buf.get(align4(len)..).unwrap_or(&[]);
                Some(Ok(msg))
            }
            Err(e) => {
                buf = &[];
                Some(Err(e))
            }
        }
    })
}

/// One attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attr<'a> {
    pub(crate) kind: u16,
    pub data: &'a [u8],
}

impl<'a> Attr<'a> {
    pub fn u8(&self) -> Option<u8> {
        self.data.first().copied()
    }

    pub fn u16(&self) -> Option<u16> {
        (self.data.len() >= 2)
            .then(|| u16_at(self.data, 0))
            .flatten()
    }

    pub fn u32(&self) -> Option<u32> {
        (self.data.len() >= 4)
            .then(|| u32_at(self.data, 0))
            .flatten()
    }

    /// A u64 value; exactly 8 bytes (a zero-length pad attribute is not a value).
    pub fn u64(&self) -> Option<u64> {
        self.data.try_into().ok().map(u64::from_ne_bytes)
    }

    /// The words of a bitmap (`u32` array).
    pub fn u32s(&self) -> Vec<u32> {
        self.data
            .chunks_exact(4)
            .map(|c| u32::from_ne_bytes(c.try_into().expect("chunks of 4")))
            .collect()
    }

    pub fn nested(&self) -> Attrs<'a> {
        Attrs(self.data)
    }
}

/// A run of attributes.
#[derive(Debug, Clone, Copy)]
pub struct Attrs<'a>(pub(crate) &'a [u8]);

impl<'a> Attrs<'a> {
    /// The first attribute of this type, if well formed.
    pub fn find(self, kind: u16) -> Option<Attr<'a>> {
        self.into_iter()
            .map_while(Result::ok)
            .find(|a| a.kind == kind)
    }
}

impl<'a> IntoIterator for Attrs<'a> {
    type Item = Result<Attr<'a>, Malformed>;
    type IntoIter = Box<dyn Iterator<Item = Self::Item> + 'a>;

    fn into_iter(self) -> Self::IntoIter {
        let mut buf = self.0;
        Box::new(std::iter::from_fn(move || {
            if buf.len() < 4 {
                return None;
            }
            let len = u16_at(buf, 0)? as usize;
            let kind = u16_at(buf, 2)? & NLA_TYPE_MASK;
            if len < 4 || len > buf.len() {
                buf = &[];
                return Some(Err(Malformed("attribute length out of bounds")));
            }
            let attr = Attr {
                kind,
                data: &buf[4..len],
            };
            buf = buf.get(align4(len)..).unwrap_or(&[]);
            Some(Ok(attr))
        }))
    }
}

/// Builds one request.
#[derive(Debug)]
pub struct Request {
    buf: Vec<u8>,
    nests: Vec<usize>,
}

impl Request {
    /// A generic netlink request: header, then `cmd` and `version`.
    pub fn genl(family: u16, flags: u16, seq: u32, cmd: u8, version: u8) -> Request {
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(&0u32.to_ne_bytes());
        buf.extend_from_slice(&family.to_ne_bytes());
        buf.extend_from_slice(&flags.to_ne_bytes());
        buf.extend_from_slice(&seq.to_ne_bytes());
        buf.extend_from_slice(&0u32.to_ne_bytes());
        buf.extend_from_slice(&[cmd, version, 0, 0]);
        Request {
            buf,
            nests: Vec::new(),
        }
    }

    /// A routing netlink request (`NETLINK_ROUTE`): header, then the family's fixed header.
    pub fn route(kind: u16, flags: u16, seq: u32, header: &[u8]) -> Request {
        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(&0u32.to_ne_bytes());
        buf.extend_from_slice(&kind.to_ne_bytes());
        buf.extend_from_slice(&flags.to_ne_bytes());
        buf.extend_from_slice(&seq.to_ne_bytes());
        buf.extend_from_slice(&0u32.to_ne_bytes());
        buf.extend_from_slice(header);
        buf.resize(align4(buf.len()), 0);
        Request {
            buf,
            nests: Vec::new(),
        }
    }

    fn attr(&mut self, kind: u16, data: &[u8]) -> &mut Request {
        let len = 4 + data.len();
        self.buf.extend_from_slice(&(len as u16).to_ne_bytes());
        self.buf.extend_from_slice(&kind.to_ne_bytes());
        self.buf.extend_from_slice(data);
        self.buf.resize(align4(self.buf.len()), 0);
        self
    }

    pub fn u32(&mut self, kind: u16, v: u32) -> &mut Request {
        self.attr(kind, &v.to_ne_bytes())
    }

    pub fn flag(&mut self, kind: u16) -> &mut Request {
        self.attr(kind, &[])
    }

    pub fn bytes(&mut self, kind: u16, v: &[u8]) -> &mut Request {
        self.attr(kind, v)
    }

    /// A NUL-terminated string.
    pub fn string(&mut self, kind: u16, v: &str) -> &mut Request {
        let mut data = v.as_bytes().to_vec();
        data.push(0);
        self.attr(kind, &data)
    }

    pub fn begin(&mut self, kind: u16) -> &mut Request {
        self.nests.push(self.buf.len());
        self.attr(kind | NLA_F_NESTED, &[])
    }

    pub fn end(&mut self) -> &mut Request {
        let start = self.nests.pop().expect("end() after begin()");
        let len = (self.buf.len() - start) as u16;
        self.buf[start..start + 2].copy_from_slice(&len.to_ne_bytes());
        self
    }

    pub fn finish(&mut self) -> Vec<u8> {
        assert!(self.nests.is_empty(), "every begin() has its end()");
        let len = self.buf.len() as u32;
        self.buf[0..4].copy_from_slice(&len.to_ne_bytes());
        std::mem::take(&mut self.buf)
    }
}
