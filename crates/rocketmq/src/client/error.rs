//! Errors of the admin client. Every one names the node, the request and, for a refusal, the broker's own
//! response code and remark.

use super::codes::RequestCode;
use crate::codec::DecodeError;

/// What went wrong with one request to one node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{node}: {request}: {kind}")]
pub struct AdminError {
    /// The node's address.
    pub node: String,
    /// The request.
    pub request: RequestCode,
    /// What happened.
    pub kind: ErrorKind,
}

/// The ways a request fails.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    /// The TCP connection could not be opened.
    #[error("cannot connect: {0}")]
    Connect(String),
    /// The connection closed (or broke) while the request was in flight.
    #[error("connection closed: {0}")]
    Closed(String),
    /// No answer within the timeout.
    #[error("no answer within {0} ms")]
    Timeout(u64),
    /// The node sent bytes that are not a frame; the connection was dropped.
    #[error("malformed frame: {0}")]
    Frame(DecodeError),
    /// The node answered with a non-zero response code.
    #[error("response code {code}{}", remark.as_deref().map(|r| format!(": {r}")).unwrap_or_default())]
    Response {
        /// The node's response code.
        code: i32,
        /// The node's remark.
        remark: Option<String>,
    },
    /// The response body is not what the request returns.
    #[error("bad response body: {0}")]
    Body(String),
}

impl AdminError {
    /// Whether the node could not be reached or did not answer (connect failure, closed, timeout), as opposed
    /// to answering badly.
    pub fn is_unreachable(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Connect(_) | ErrorKind::Closed(_) | ErrorKind::Timeout(_)
        )
    }

    /// The node's response code, if it refused the request.
    pub fn response_code(&self) -> Option<i32> {
        match &self.kind {
            ErrorKind::Response { code, .. } => Some(*code),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_node_request_and_code() {
        let e = AdminError {
            node: "127.0.0.1:10911".into(),
            request: RequestCode::VIEW_BROKER_STATS_DATA,
            kind: ErrorKind::Response {
                code: 1,
                remark: Some("No stats data".into()),
            },
        };
        assert_eq!(
            e.to_string(),
            "127.0.0.1:10911: VIEW_BROKER_STATS_DATA (315): response code 1: No stats data"
        );
        assert_eq!(e.response_code(), Some(1));
    }
}
