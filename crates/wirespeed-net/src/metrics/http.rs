//! The request line and headers of an HTTP/1.x request (RFC 9112 sections 2-5), read with
//! bounds: the metrics listener faces anyone who reaches its port, so the head it holds is at
//! most [`HEAD_MAX`] bytes, with at most [`HEADERS_MAX`] header lines and [`QUERY_MAX`] query
//! parameters. Only what the listener uses is kept: the method, the path, the query (percent-
//! decoded), the bearer token and Prometheus' scrape timeout. A request body is never read
//! (the listener only answers `GET` and `HEAD`). Pure, and fuzzed (`fuzz/`, target
//! `http_head`).

/// Longest request head (request line and headers, with the blank line) held.
pub const HEAD_MAX: usize = 8 * 1024;
/// Most header lines read.
pub const HEADERS_MAX: usize = 64;
/// Most query parameters kept.
pub const QUERY_MAX: usize = 16;

/// The request method, as far as the listener cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `GET`.
    Get,
    /// `HEAD`: the answer's head without its body.
    Head,
    /// Anything else (answered 405).
    Other,
}

/// A request head, as the listener uses it.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Its method.
    pub method: Method,
    /// The path of the target, without its query (`/metrics`).
    pub path: String,
    /// The query's parameters, percent-decoded, in order.
    pub query: Vec<(String, String)>,
    /// The token of an `Authorization: Bearer TOKEN` header.
    pub bearer: Option<String>,
    /// Prometheus' `X-Prometheus-Scrape-Timeout-Seconds`, if given and a finite positive
    /// number.
    pub scrape_timeout_seconds: Option<f64>,
}

impl Request {
    /// The first value of query parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why a head is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum HeadError {
    /// No blank line within [`HEAD_MAX`] bytes.
    #[error("the request head is longer than {HEAD_MAX} bytes")]
    TooLarge,
    /// More than [`HEADERS_MAX`] header lines.
    #[error("the request has more than {HEADERS_MAX} header lines")]
    TooManyHeaders,
    /// The request line is not `METHOD /target HTTP/1.x`.
    #[error("the request line is not METHOD /path HTTP/1.x")]
    RequestLine,
    /// A header line has no `:` or a name that is not a token.
    #[error("a header line is not NAME: VALUE")]
    Header,
    /// Not UTF-8 where text is needed.
    #[error("the request head is not text")]
    NotText,
}

/// Where the head ends (just past its blank line), if it has ended: `\r\n\r\n`, or `\n\n`
/// from a lenient client (RFC 9112 section 2.2 lets a recipient take a bare LF).
fn head_end(buf: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(off) = buf[i..].iter().position(|&b| b == b'\n') {
        let nl = i + off;
        match buf.get(nl + 1) {
            Some(b'\n') => return Some(nl + 2),
            Some(b'\r') if buf.get(nl + 2) == Some(&b'\n') => return Some(nl + 3),
            _ => {}
        }
        i = nl + 1;
    }
    None
}

/// A `tchar` of RFC 9110 section 5.6.2.
fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Percent-decoding of a query component (`+` is a space, as HTML forms and Go's
/// `url.Values` write it); `None` for a bad escape or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3)?;
                let hex = std::str::from_utf8(hex).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

fn parse_query(query: &str) -> Result<Vec<(String, String)>, HeadError> {
    let mut out = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        if out.len() == QUERY_MAX {
            break;
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = percent_decode(k).ok_or(HeadError::RequestLine)?;
        let v = percent_decode(v).ok_or(HeadError::RequestLine)?;
        out.push((k, v));
    }
    Ok(out)
}

/// Reads a request head from the bytes received so far: `Ok(None)` while it is incomplete and
/// still within [`HEAD_MAX`], else the request and how many bytes its head took.
pub fn parse_head(buf: &[u8]) -> Result<Option<(Request, usize)>, HeadError> {
    let window = &buf[..buf.len().min(HEAD_MAX)];
    let Some(end) = head_end(window) else {
        return if buf.len() >= HEAD_MAX {
            Err(HeadError::TooLarge)
        } else {
            Ok(None)
        };
    };
    let head = std::str::from_utf8(&window[..end]).map_err(|_| HeadError::NotText)?;
    let mut lines = head.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let line = lines.next().ok_or(HeadError::RequestLine)?;
    let mut words = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return Err(HeadError::RequestLine);
    };
    if method.is_empty()
        || !method.bytes().all(is_token_char)
        || !target.starts_with('/')
        || !matches!(version, "HTTP/1.0" | "HTTP/1.1")
    {
        return Err(HeadError::RequestLine);
    }
    let method = match method {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        _ => Method::Other,
    };
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut request = Request {
        method,
        path: path.to_string(),
        query: parse_query(query)?,
        bearer: None,
        scrape_timeout_seconds: None,
    };
    let mut headers = 0;
    for line in lines.take_while(|l| !l.is_empty()) {
        headers += 1;
        if headers > HEADERS_MAX {
            return Err(HeadError::TooManyHeaders);
        }
        let (name, value) = line.split_once(':').ok_or(HeadError::Header)?;
        if name.is_empty() || !name.bytes().all(is_token_char) {
            return Err(HeadError::Header);
        }
        let value = value.trim_matches([' ', '\t']);
        if name.eq_ignore_ascii_case("authorization") {
            // RFC 6750 section 2.1; the scheme is case-insensitive (RFC 9110 section 11.1).
            if let Some((scheme, token)) = value.split_once(' ')
                && scheme.eq_ignore_ascii_case("bearer")
            {
                request.bearer = Some(token.trim_start_matches(' ').to_string());
            }
        } else if name.eq_ignore_ascii_case("x-prometheus-scrape-timeout-seconds") {
            request.scrape_timeout_seconds = value
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s > 0.0);
        }
    }
    Ok(Some((request, end)))
}
