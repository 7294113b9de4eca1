//! A request's head as the test server reads it from its socket.

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

/// A request's head, parsed.
pub(super) struct Head {
    /// Its length in bytes.
    pub len: usize,
    pub method: String,
    pub path: String,
    pub close: bool,
    /// Content-Length (0 when absent).
    pub length: usize,
}

/// Reads until `buf[..end]` holds a complete request head; None when the peer closes or sends
/// something that is not HTTP.
pub(super) async fn read_head(
    sock: &mut TcpStream,
    buf: &mut [u8],
    end: &mut usize,
) -> Option<Head> {
    loop {
        let mut headers = [httparse::EMPTY_HEADER; 32];
        let mut req = httparse::Request::new(&mut headers);
        match req.parse(&buf[..*end]) {
            Ok(httparse::Status::Complete(n)) => {
                let close = req.headers.iter().any(|h| {
                    h.name.eq_ignore_ascii_case("connection")
                        && h.value.eq_ignore_ascii_case(b"close")
                });
                let length = req
                    .headers
                    .iter()
                    .find(|h| h.name.eq_ignore_ascii_case("content-length"))
                    .and_then(|h| {
                        std::str::from_utf8(h.value)
                            .ok()?
                            .trim()
                            .parse::<usize>()
                            .ok()
                    })
                    .unwrap_or(0);
                return Some(Head {
                    len: n,
                    method: req.method.unwrap_or("GET").to_string(),
                    path: req.path.unwrap_or("/").to_string(),
                    close,
                    length,
                });
            }
            Ok(httparse::Status::Partial) if *end < buf.len() => {
                match sock.read(&mut buf[*end..]).await {
                    Ok(0) | Err(_) => return None,
                    Ok(n) => *end += n,
                }
            }
            _ => return None,
        }
    }
}
