//! Errors of the Kafka client. Every one names the broker (its address), the API (name and key) and, once
//! negotiated, the version the request was sent in.

use kafka_protocol::messages::ApiKey;
use std::fmt;

/// A Kafka API as named in errors: `Metadata (3)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Api(pub i16);

impl Api {
    /// The API of a request type, e.g. `Api::of::<MetadataRequest>()`.
    pub fn of<R: kafka_protocol::protocol::Request>() -> Self {
        Api(R::KEY)
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match ApiKey::try_from(self.0) {
            Ok(k) => write!(f, "{k:?} ({})", self.0),
            Err(()) => write!(f, "api key {}", self.0),
        }
    }
}

/// What went wrong with one request to one broker.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{broker}: {api}{}: {kind}", version.map(|v| format!(" v{v}")).unwrap_or_default())]
pub struct KafkaError {
    /// The broker's address (`host:port`).
    pub broker: String,
    /// The request.
    pub api: Api,
    /// The version it was (or was to be) sent in, once chosen.
    pub version: Option<i16>,
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
    /// The broker sent a frame that is too large, too small or cut short; the connection was dropped.
    #[error("bad frame: {0}")]
    Frame(String),
    /// The response could not be decoded in the version the request was sent in.
    #[error("undecodable response: {0}")]
    Decode(String),
    /// The request could not be encoded in the negotiated version (a field the version lacks).
    #[error("cannot encode request: {0}")]
    Encode(String),
    /// The broker and mqwatch share no version of this API.
    #[error("no common version: mqwatch speaks {ours}, the broker {}", theirs.as_deref().unwrap_or("does not offer it"))]
    Unsupported {
        /// mqwatch's range, `min..max`.
        ours: String,
        /// The broker's range, `None` when it does not list the API.
        theirs: Option<String>,
    },
    /// The broker answered with a Kafka error code (top-level or for the one thing asked).
    #[error("error code {code} ({name}){}", about.as_deref().map(|a| format!(" for {a}")).unwrap_or_default())]
    Code {
        /// The Kafka error code.
        code: i16,
        /// Its name, e.g. `COORDINATOR_NOT_AVAILABLE`.
        name: String,
        /// What it is about, e.g. a topic or group, when not the whole request.
        about: Option<String>,
    },
    /// The client's settings could not be used (e.g. a password file unreadable).
    #[error("configuration: {0}")]
    Config(String),
    /// The TLS handshake failed (certificate not trusted, wrong name, not a TLS listener, …).
    #[error("TLS: {0}")]
    Tls(String),
    /// SASL authentication failed or could not start (mechanism not enabled, credentials refused, the server's
    /// SCRAM signature wrong).
    #[error("authentication failed: {0}")]
    Authentication(String),
}

impl ErrorKind {
    /// A Kafka error code as an error, about `about` when given.
    pub fn code(code: i16, about: Option<String>) -> Self {
        ErrorKind::Code {
            code,
            name: code_name(code),
            about,
        }
    }
}

/// Kafka's name of an error code, e.g. `UNKNOWN_TOPIC_OR_PARTITION` (kafka-protocol's variant in upper snake
/// case), or `UNKNOWN(<code>)`.
pub fn code_name(code: i16) -> String {
    match kafka_protocol::error::ResponseError::try_from_code(code) {
        None => "NONE".into(),
        Some(kafka_protocol::error::ResponseError::Unknown(c)) => format!("UNKNOWN({c})"),
        Some(e) => upper_snake(&format!("{e:?}")),
    }
}

fn upper_snake(camel: &str) -> String {
    let mut out = String::with_capacity(camel.len() + 8);
    for (i, c) in camel.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

impl KafkaError {
    /// Whether the broker could not be reached or did not answer in time (connect failure, timeout), as opposed
    /// to answering badly. A connection the broker closed on one request is a bad answer: the next request
    /// reconnects.
    pub fn is_unreachable(&self) -> bool {
        matches!(self.kind, ErrorKind::Connect(_) | ErrorKind::Timeout(_))
    }

    /// Whether the broker refused mqwatch itself (TLS handshake, SASL authentication, or the client's settings
    /// unusable): every other request to it would fail the same way, yet the broker is up.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self.kind,
            ErrorKind::Tls(_) | ErrorKind::Authentication(_) | ErrorKind::Config(_)
        )
    }

    /// The Kafka error code, when the broker answered with one.
    pub fn error_code(&self) -> Option<i16> {
        match &self.kind {
            ErrorKind::Code { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The request as collector error records name it: `Metadata (3) v12`.
    pub fn request(&self) -> String {
        match self.version {
            Some(v) => format!("{} v{v}", self.api),
            None => self.api.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_name_broker_api_version_and_code() {
        let e = KafkaError {
            broker: "127.0.0.1:9092".into(),
            api: Api(15),
            version: Some(5),
            kind: ErrorKind::code(15, Some("group g1".into())),
        };
        assert_eq!(
            e.to_string(),
            "127.0.0.1:9092: DescribeGroups (15) v5: error code 15 (COORDINATOR_NOT_AVAILABLE) for group g1"
        );
        assert_eq!(e.error_code(), Some(15));
        assert_eq!(e.request(), "DescribeGroups (15) v5");
        assert!(!e.is_unreachable());
    }

    #[test]
    fn unsupported_names_both_ranges_and_unknown_keys_stay_numeric() {
        let e = KafkaError {
            broker: "b:1".into(),
            api: Api(999),
            version: None,
            kind: ErrorKind::Unsupported {
                ours: "1..10".into(),
                theirs: None,
            },
        };
        assert_eq!(
            e.to_string(),
            "b:1: api key 999: no common version: mqwatch speaks 1..10, the broker does not offer it"
        );
        assert_eq!(code_name(3), "UNKNOWN_TOPIC_OR_PARTITION");
        assert_eq!(code_name(-1), "UNKNOWN_SERVER_ERROR");
        assert_eq!(code_name(30000), "UNKNOWN(30000)");
    }
}
