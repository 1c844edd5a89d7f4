//! mqwatch's own async admin client: one connection per node, a timeout on every call, and errors that name the
//! node, the request code and the node's own response code and remark.

mod admin;
mod codes;
mod connection;
mod error;

pub use admin::{CODE_CONSUMER_NOT_ONLINE, CODE_NO_STATS, CODE_QUERY_NOT_FOUND};
pub use codes::RequestCode;
pub use error::{AdminError, ErrorKind};

use crate::codec::{Frame, Header, parse_lenient_json};
use connection::Connection;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Talks to any number of name servers and brokers, one connection each, reopened when closed.
pub struct AdminClient {
    timeout: Duration,
    /// One slot per node; a slot's lock is held while connecting, so concurrent calls share one connection.
    connections: Mutex<HashMap<String, Slot>>,
}

type Slot = Arc<tokio::sync::Mutex<Option<Arc<Connection>>>>;

impl AdminClient {
    /// A client whose every call (connect included) gives up after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Self {
            timeout,
            connections: Mutex::new(HashMap::new()),
        }
    }

    /// The per-call timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    async fn connection(&self, addr: &str) -> Result<Arc<Connection>, ErrorKind> {
        let slot = {
            let mut m = self
                .connections
                .lock()
                .map_err(|_| ErrorKind::Closed("client state poisoned".into()))?;
            m.entry(addr.to_string()).or_default().clone()
        };
        let mut slot = slot.lock().await;
        if let Some(c) = slot.as_ref().filter(|c| !c.is_closed()) {
            return Ok(c.clone());
        }
        let c = Arc::new(Connection::open(addr, self.timeout).await?);
        *slot = Some(c.clone());
        Ok(c)
    }

    /// Sends `code` with `ext` fields and `body` to `addr`; a non-zero response code is an error.
    pub async fn request(
        &self,
        addr: &str,
        code: RequestCode,
        ext: &[(&str, String)],
        body: Vec<u8>,
    ) -> Result<Frame, AdminError> {
        let frame = self.exchange(addr, code, ext, body).await?;
        if frame.header.code != 0 {
            let kind = ErrorKind::Response {
                code: frame.header.code,
                remark: frame.header.remark,
            };
            return Err(AdminError {
                node: addr.to_string(),
                request: code,
                kind,
            });
        }
        Ok(frame)
    }

    /// Sends `code` and returns the response whatever its code (for requests whose non-zero codes are answers,
    /// like PULL_MESSAGE's "no new message").
    pub async fn exchange(
        &self,
        addr: &str,
        code: RequestCode,
        ext: &[(&str, String)],
        body: Vec<u8>,
    ) -> Result<Frame, AdminError> {
        let fail = |kind| AdminError {
            node: addr.to_string(),
            request: code,
            kind,
        };
        let conn = self.connection(addr).await.map_err(fail)?;
        let mut header = Header {
            code: code.0,
            language: "RUST".into(),
            version: 501,
            ..Default::default()
        };
        header.ext_fields = ext
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect();
        conn.call(header, body, self.timeout).await.map_err(fail)
    }

    /// Like [`request`](Self::request) with no body, parsing the response body as (lenient) JSON.
    pub async fn request_json(
        &self,
        addr: &str,
        code: RequestCode,
        ext: &[(&str, String)],
    ) -> Result<serde_json::Value, AdminError> {
        let frame = self.request(addr, code, ext, Vec::new()).await?;
        parse_lenient_json(&frame.body).map_err(|e| AdminError {
            node: addr.to_string(),
            request: code,
            kind: ErrorKind::Body(e.to_string()),
        })
    }
}
