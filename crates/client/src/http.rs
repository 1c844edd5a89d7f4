//! One HTTP/1.1 POST over `std::net`, enough to deliver a report to mqwatch without an HTTP library or async
//! runtime in the application: `Connection: close`, connect/read/write timeouts, the status line read back.
//! Plain `http://` only (put mqwatch behind a TLS-terminating proxy on the client's host otherwise).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Where reports go: `http://host:port[/path]` (default path `/api/v1/client-reports`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `host:port`.
    pub authority: String,
    /// The request path.
    pub path: String,
}

/// Why a post failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PostError {
    /// Not an `http://host:port` URL.
    #[error("mqwatch endpoint {0:?}: {1}")]
    Url(String, String),
    /// Could not connect.
    #[error("cannot connect to mqwatch: {0}")]
    Connect(String),
    /// The connection failed during the exchange.
    #[error("mqwatch connection: {0}")]
    Io(String),
    /// mqwatch answered with a non-2xx status.
    #[error("mqwatch answered {0}: {1}")]
    Status(u16, String),
}

impl PostError {
    /// Whether retrying the same report cannot help (a 4xx other than 408 and 429).
    pub fn is_permanent(&self) -> bool {
        matches!(self, PostError::Status(s, _) if (400..500).contains(s) && *s != 408 && *s != 429)
    }
}

impl Endpoint {
    /// Parses `http://host:port[/path]`.
    pub fn parse(url: &str) -> Result<Self, PostError> {
        let bad = |why: &str| PostError::Url(url.to_string(), why.to_string());
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| bad("only http:// is supported"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) if i + 1 < rest.len() => (&rest[..i], &rest[i..]),
            Some(i) => (&rest[..i], "/api/v1/client-reports"),
            None => (rest, "/api/v1/client-reports"),
        };
        if authority.is_empty() || !authority.contains(':') {
            return Err(bad("expected host:port"));
        }
        Ok(Self {
            authority: authority.to_string(),
            path: path.to_string(),
        })
    }

    fn resolve(&self) -> Result<SocketAddr, PostError> {
        self.authority
            .to_socket_addrs()
            .map_err(|e| PostError::Connect(format!("{}: {e}", self.authority)))?
            .next()
            .ok_or_else(|| PostError::Connect(format!("{}: no address", self.authority)))
    }

    /// The local IP this host uses to reach the endpoint (no packet is sent), for the report's address.
    pub fn local_ip(&self) -> Option<String> {
        let target = self.resolve().ok()?;
        let bind = if target.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        };
        let socket = std::net::UdpSocket::bind(bind).ok()?;
        socket.connect(target).ok()?;
        Some(socket.local_addr().ok()?.ip().to_string())
    }

    /// POSTs `body` as JSON with an optional bearer token; `Ok` on a 2xx answer.
    pub fn post(
        &self,
        body: &[u8],
        token: Option<&str>,
        timeout: Duration,
    ) -> Result<(), PostError> {
        let addr = self.resolve()?;
        let mut s = TcpStream::connect_timeout(&addr, timeout)
            .map_err(|e| PostError::Connect(format!("{}: {e}", self.authority)))?;
        let io = |e: std::io::Error| PostError::Io(format!("{}: {e}", self.authority));
        s.set_read_timeout(Some(timeout)).map_err(io)?;
        s.set_write_timeout(Some(timeout)).map_err(io)?;
        let auth = token
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{auth}Connection: close\r\n\r\n",
            self.path,
            self.authority,
            body.len()
        );
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        s.write_all(&request).map_err(io)?;
        let mut answer = Vec::new();
        s.take(64 * 1024).read_to_end(&mut answer).map_err(io)?;
        let text = String::from_utf8_lossy(&answer);
        let status: u16 = text
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| PostError::Io(format!("{}: no HTTP status line", self.authority)))?;
        if (200..300).contains(&status) {
            return Ok(());
        }
        let body = text
            .split_once("\r\n\r\n")
            .map(|(_, b)| b.trim().chars().take(200).collect())
            .unwrap_or_default();
        Err(PostError::Status(status, body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_endpoints_and_names_bad_ones() {
        let e = Endpoint::parse("http://127.0.0.1:8080").unwrap();
        assert_eq!(
            (e.authority.as_str(), e.path.as_str()),
            ("127.0.0.1:8080", "/api/v1/client-reports")
        );
        let e = Endpoint::parse("http://mq:80/x/y").unwrap();
        assert_eq!(e.path, "/x/y");
        assert!(
            Endpoint::parse("https://a:1")
                .unwrap_err()
                .to_string()
                .contains("only http://")
        );
        assert!(Endpoint::parse("http://nohost").is_err());
    }

    #[test]
    fn posts_and_reads_the_status() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let mut got = Vec::new();
            for status in ["204 No Content", "401 Unauthorized"] {
                let (mut c, _) = listener.accept().unwrap();
                let mut text = String::new();
                let mut buf = [0u8; 4096];
                while !text.ends_with("{}") {
                    let n = c.read(&mut buf).unwrap();
                    assert!(n > 0, "request cut short: {text}");
                    text.push_str(&String::from_utf8_lossy(&buf[..n]));
                }
                got.push(text);
                write!(c, "HTTP/1.1 {status}\r\nContent-Length: 3\r\n\r\nno\n").unwrap();
            }
            got
        });
        let e = Endpoint::parse(&url).unwrap();
        e.post(b"{}", Some("tok"), Duration::from_secs(5)).unwrap();
        let err = e.post(b"{}", None, Duration::from_secs(5)).unwrap_err();
        assert!(err.is_permanent(), "{err}");
        let got = server.join().unwrap();
        assert!(
            got[0].contains("Authorization: Bearer tok") && got[0].ends_with("{}"),
            "{}",
            got[0]
        );
        assert!(!got[1].contains("Authorization"));
        assert_eq!(e.local_ip().as_deref(), Some("127.0.0.1"));
    }
}
