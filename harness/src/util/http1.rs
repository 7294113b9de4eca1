//! A minimal HTTP/1.1 client over one TCP connection.
//!
//! The load driver needs to cost no more CPU per request than `wrk`, so requests are
//! pre-serialised once and responses are parsed in place from a reused buffer; the body is
//! skipped unless the caller asks for it (conformance checks do, the driver does not).

use std::io;
use std::net::SocketAddr;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MAX_HEADERS: usize = 64;
/// Initial read buffer per connection: small, because C10K runs hold 10,000 of them; it grows
/// only for response heads larger than this (bodies stream through it).
const READ_CHUNK: usize = 4 * 1024;
/// Responses with larger heads are treated as malformed rather than buffered without bound.
const MAX_HEAD: usize = 64 * 1024;

#[derive(Debug)]
pub enum HttpError {
    Io(io::Error),
    /// The peer closed the connection before a complete response arrived.
    Closed,
    Malformed(String),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Io(e) => write!(f, "i/o error: {e}"),
            HttpError::Closed => write!(f, "connection closed before a complete response"),
            HttpError::Malformed(m) => write!(f, "malformed response: {m}"),
        }
    }
}

impl std::error::Error for HttpError {}

impl From<io::Error> for HttpError {
    fn from(e: io::Error) -> Self {
        HttpError::Io(e)
    }
}

/// Serialises a request once; the driver writes the same bytes for every request.
pub fn build_request(
    method: &str,
    path: &str,
    host: &str,
    body: Option<(&str, &[u8])>,
    close: bool,
) -> Vec<u8> {
    let mut out = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: iobound\r\n");
    if close {
        out.push_str("Connection: close\r\n");
    }
    if let Some((content_type, bytes)) = body {
        out.push_str(&format!(
            "Content-Type: {content_type}\r\nContent-Length: {}\r\n",
            bytes.len()
        ));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    if let Some((_, b)) = body {
        bytes.extend_from_slice(b);
    }
    bytes
}

#[derive(Debug, Clone, Default)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Empty unless the body was requested.
    pub body: Vec<u8>,
    /// The server asked to close the connection (or HTTP/1.0 without keep-alive).
    pub close: bool,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

enum BodyKind {
    Length(usize),
    Chunked,
    UntilClose,
}

pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
    /// Valid unread bytes are buf[pos..end].
    pos: usize,
    end: usize,
}

impl Conn {
    pub async fn connect(addr: SocketAddr) -> io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        Ok(Conn {
            stream,
            buf: vec![0; READ_CHUNK],
            pos: 0,
            end: 0,
        })
    }

    /// Writes `request` and reads one complete response. With `keep_body` false the body is
    /// consumed but not stored and headers are not copied, which is what the driver wants.
    pub async fn send(&mut self, request: &[u8], keep_body: bool) -> Result<Response, HttpError> {
        if let Err(e) = self.stream.write_all(request).await {
            // A server may answer before it has read the whole body (a 413 for one too large)
            // and close: the answer is then in our receive buffer while the rest of the body
            // cannot be sent. The answer counts; without one, the write's error does.
            use std::io::ErrorKind::{BrokenPipe, ConnectionReset};
            if matches!(e.kind(), BrokenPipe | ConnectionReset) {
                if let Ok(r) = self.read_response(keep_body).await {
                    return Ok(r);
                }
            }
            return Err(e.into());
        }
        self.read_response(keep_body).await
    }

    async fn fill(&mut self) -> Result<usize, HttpError> {
        if self.pos == self.end {
            self.pos = 0;
            self.end = 0;
        } else if self.end == self.buf.len() {
            if self.pos > 0 {
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.pos = 0;
            } else {
                if self.buf.len() >= MAX_HEAD {
                    return Err(HttpError::Malformed("response head too large".into()));
                }
                let n = self.buf.len() * 2;
                self.buf.resize(n, 0);
            }
        }
        let n = self.stream.read(&mut self.buf[self.end..]).await?;
        self.end += n;
        Ok(n)
    }

    async fn read_response(&mut self, keep_body: bool) -> Result<Response, HttpError> {
        let mut resp = Response::default();
        let body_kind;
        loop {
            let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
            let mut parsed = httparse::Response::new(&mut headers);
            match parsed.parse(&self.buf[self.pos..self.end]) {
                Ok(httparse::Status::Complete(head_len)) => {
                    resp.status = parsed.code.unwrap_or(0);
                    let http10 = parsed.version == Some(0);
                    let mut length = None;
                    let mut chunked = false;
                    let mut close = http10;
                    for h in parsed.headers.iter() {
                        if h.name.eq_ignore_ascii_case("content-length") {
                            let v = std::str::from_utf8(h.value)
                                .ok()
                                .and_then(|s| s.trim().parse().ok());
                            length = Some(v.ok_or_else(|| {
                                HttpError::Malformed("bad content-length".into())
                            })?);
                        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
                            chunked = contains_token(h.value, b"chunked");
                        } else if h.name.eq_ignore_ascii_case("connection") {
                            if contains_token(h.value, b"close") {
                                close = true;
                            } else if contains_token(h.value, b"keep-alive") {
                                close = false;
                            }
                        }
                        if keep_body {
                            resp.headers.push((
                                h.name.to_string(),
                                String::from_utf8_lossy(h.value).into_owned(),
                            ));
                        }
                    }
                    resp.close = close;
                    body_kind = if resp.status == 204
                        || resp.status == 304
                        || (100..200).contains(&resp.status)
                    {
                        BodyKind::Length(0)
                    } else if chunked {
                        BodyKind::Chunked
                    } else if let Some(n) = length {
                        BodyKind::Length(n)
                    } else {
                        BodyKind::UntilClose
                    };
                    self.pos += head_len;
                    break;
                }
                Ok(httparse::Status::Partial) => {
                    if self.fill().await? == 0 {
                        return Err(HttpError::Closed);
                    }
                }
                Err(e) => return Err(HttpError::Malformed(e.to_string())),
            }
        }
        match body_kind {
            BodyKind::Length(n) => self.read_exact_body(n, keep_body, &mut resp.body).await?,
            BodyKind::Chunked => self.read_chunked(keep_body, &mut resp.body).await?,
            BodyKind::UntilClose => {
                resp.close = true;
                loop {
                    self.take(usize::MAX, keep_body, &mut resp.body);
                    if self.fill().await? == 0 {
                        break;
                    }
                }
            }
        }
        Ok(resp)
    }

    /// Moves up to `max` buffered bytes into `out` (or drops them); returns how many.
    fn take(&mut self, max: usize, keep: bool, out: &mut Vec<u8>) -> usize {
        let n = (self.end - self.pos).min(max);
        if keep {
            out.extend_from_slice(&self.buf[self.pos..self.pos + n]);
        }
        self.pos += n;
        n
    }

    async fn read_exact_body(
        &mut self,
        mut n: usize,
        keep: bool,
        out: &mut Vec<u8>,
    ) -> Result<(), HttpError> {
        loop {
            n -= self.take(n, keep, out);
            if n == 0 {
                return Ok(());
            }
            if self.fill().await? == 0 {
                return Err(HttpError::Closed);
            }
        }
    }

    async fn read_line(&mut self) -> Result<Vec<u8>, HttpError> {
        loop {
            if let Some(i) = self.buf[self.pos..self.end]
                .windows(2)
                .position(|w| w == b"\r\n")
            {
                let line = self.buf[self.pos..self.pos + i].to_vec();
                self.pos += i + 2;
                return Ok(line);
            }
            if self.fill().await? == 0 {
                return Err(HttpError::Closed);
            }
        }
    }

    async fn read_chunked(&mut self, keep: bool, out: &mut Vec<u8>) -> Result<(), HttpError> {
        loop {
            let line = self.read_line().await?;
            let size_text = std::str::from_utf8(&line)
                .ok()
                .map(|s| s.split(';').next().unwrap_or("").trim().to_string())
                .unwrap_or_default();
            let size = usize::from_str_radix(&size_text, 16)
                .map_err(|_| HttpError::Malformed(format!("bad chunk size {size_text:?}")))?;
            if size == 0 {
                // Trailers end with an empty line.
                while !self.read_line().await?.is_empty() {}
                return Ok(());
            }
            self.read_exact_body(size, keep, out).await?;
            if !self.read_line().await?.is_empty() {
                return Err(HttpError::Malformed("chunk not followed by CRLF".into()));
            }
        }
    }
}

fn contains_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|b| *b == b',')
        .any(|part| part.trim_ascii().eq_ignore_ascii_case(token))
}

/// Whether GET `path` on `addr` answers 200 within 2 s: a server's readiness.
pub fn answers_200(rt: &tokio::runtime::Runtime, addr: SocketAddr, path: &str) -> bool {
    let answer = rt.block_on(async {
        tokio::time::timeout(
            std::time::Duration::from_secs(2),
            fetch(addr, "GET", path, None),
        )
        .await
    });
    matches!(answer, Ok(Ok(r)) if r.status == 200)
}

/// One request on a fresh connection, for checks that need the whole response.
pub async fn fetch(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: Option<(&str, &[u8])>,
) -> Result<Response, HttpError> {
    let mut conn = Conn::connect(addr).await?;
    let req = build_request(method, path, &addr.to_string(), body, true);
    conn.send(&req, true).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::net::TcpListener;

    /// Serves one canned byte stream per accepted connection and returns its address.
    async fn canned(reply: &'static [u8]) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            loop {
                let (mut s, _) = listener.accept().await.unwrap();
                tokio::spawn(async move {
                    let mut buf = [0u8; 4096];
                    let _ = s.read(&mut buf).await;
                    // Dribble the reply in small writes to exercise partial parsing.
                    for part in reply.chunks(7) {
                        s.write_all(part).await.unwrap();
                        s.flush().await.unwrap();
                    }
                });
            }
        });
        addr
    }

    /// A server that answers 413 after the first bytes of a large body and closes: the client
    /// cannot send the rest, and still gets the answer.
    #[tokio::test]
    async fn an_answer_before_the_whole_body_was_sent_counts() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            s.write_all(
                b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
            )
            .await
            .unwrap();
            // Closing with unread data resets the connection: the client's next write fails.
            drop(s);
        });
        let body = vec![b'x'; 32 << 20];
        let r = fetch(addr, "POST", "/messages", Some(("application/json", &body)))
            .await
            .unwrap();
        assert_eq!(r.status, 413);
    }

    #[tokio::test]
    async fn reads_content_length_body() {
        let addr = canned(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!").await;
        let r = fetch(addr, "GET", "/", None).await.unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(r.body, b"Hello, World!");
        assert_eq!(r.header("content-type"), Some("text/plain"));
    }

    #[tokio::test]
    async fn reads_chunked_body() {
        let addr = canned(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nHello\r\n8;x=y\r\n, World!\r\n0\r\n\r\n").await;
        let r = fetch(addr, "GET", "/", None).await.unwrap();
        assert_eq!(r.body, b"Hello, World!");
    }

    #[tokio::test]
    async fn reads_until_close_without_length() {
        let addr = canned(b"HTTP/1.0 400 Bad Request\r\n\r\nno length here").await;
        let r = fetch(addr, "GET", "/", None).await.unwrap();
        assert_eq!(r.status, 400);
        assert_eq!(r.body, b"no length here");
        assert!(r.close);
    }

    #[tokio::test]
    async fn truncated_response_is_an_error() {
        let addr = canned(b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort").await;
        match fetch(addr, "GET", "/", None).await {
            Err(HttpError::Closed) => {}
            other => panic!("expected Closed, got {other:?}"),
        }
    }

    #[test]
    fn request_has_length_and_close() {
        let r = build_request("POST", "/m", "h:1", Some(("application/json", b"{}")), true);
        let text = String::from_utf8(r).unwrap();
        assert!(text.starts_with("POST /m HTTP/1.1\r\nHost: h:1\r\n"));
        assert!(text.contains("Connection: close\r\n"));
        assert!(text.contains("Content-Length: 2\r\n"));
        assert!(text.ends_with("\r\n\r\n{}"));
    }
}
