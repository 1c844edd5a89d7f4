//! The response guard: every response body is walked along its schema before kafka-protocol decodes it, and
//! refused if any declared count or length cannot fit in the bytes left.
//!
//! Why: kafka-protocol 0.18 decodes an array with `Vec::with_capacity(count)`, the count read from the wire. A
//! malformed answer declaring a huge count makes that allocation fail, which aborts the process (not a panic:
//! nothing can catch it). Every array element takes at least one byte on the wire, so a count larger than the
//! bytes left is impossible; the walker ([`walk`]) checks every count, at every depth, exactly where the decoder
//! will read it. Responses whose API or version the tables ([`tables`]) do not cover are refused before decoding,
//! and the client never negotiates such a version ([`versions`]). Record batches (Fetch) are read by mqwatch's
//! own bounded reader ([`records`]), never by kafka-protocol's, whose decoder reserves the batch's declared record
//! count and header count up front and decompresses without a limit.
//!
//! What it costs: one extra pass over the bytes, no allocation.

pub mod records;
mod tables;
mod walk;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_records;

use bytes::Bytes;
use kafka_protocol::messages::{ConsumerProtocolAssignment, ConsumerProtocolSubscription};
use kafka_protocol::protocol::{Decodable, VersionRange};
use tables::{ASSIGNMENT_MESSAGE, Message, RESPONSES, SUBSCRIPTION_MESSAGE};

/// Why a response was refused: where in it (`topics[3].partitions`) and what was wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardError {
    /// Field names and indexes from the innermost out.
    path: Vec<String>,
    reason: String,
}

impl GuardError {
    pub(crate) fn new(reason: String) -> Self {
        Self {
            path: Vec::new(),
            reason,
        }
    }

    pub(crate) fn at_field(mut self, name: &str) -> Self {
        self.path.push(name.to_string());
        self
    }

    pub(crate) fn at_index(mut self, i: usize) -> Self {
        self.path.push(format!("[{i}]"));
        self
    }

    /// The reason alone (e.g. `declares 54267904 elements, only 4 bytes left`).
    pub fn reason(&self) -> &str {
        &self.reason
    }

    /// Where: `topics[3].partitions`, empty at the top level.
    pub fn path(&self) -> String {
        let mut out = String::new();
        for seg in self.path.iter().rev() {
            if !out.is_empty() && !seg.starts_with('[') {
                out.push('.');
            }
            out.push_str(seg);
        }
        out
    }
}

impl std::fmt::Display for GuardError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.path() {
            p if p.is_empty() => write!(f, "{}", self.reason),
            p => write!(f, "{p}: {}", self.reason),
        }
    }
}

impl std::error::Error for GuardError {}

fn message(api_key: i16) -> Option<&'static Message> {
    RESPONSES.iter().find(|m| m.api_key == Some(api_key))
}

/// The versions of `api_key`'s response the guard covers (`None`: mqwatch decodes no response of that API).
pub fn versions(api_key: i16) -> Option<VersionRange> {
    message(api_key).map(|m| VersionRange {
        min: m.min,
        max: m.max,
    })
}

/// Every API whose responses the guard covers, with its versions.
pub fn apis() -> impl Iterator<Item = (i16, VersionRange)> {
    RESPONSES.iter().filter_map(|m| {
        Some((
            m.api_key?,
            VersionRange {
                min: m.min,
                max: m.max,
            },
        ))
    })
}

/// Checks a response body (after its header) of `api_key` in `version` before it is decoded.
pub fn check_response(api_key: i16, version: i16, body: &[u8]) -> Result<(), GuardError> {
    let Some(m) = message(api_key) else {
        return Err(GuardError::new(format!(
            "mqwatch does not decode responses of api key {api_key}"
        )));
    };
    check(m, version, body)
}

fn check(m: &Message, version: i16, body: &[u8]) -> Result<(), GuardError> {
    if version < m.min || version > m.max {
        return Err(GuardError::new(format!(
            "{} v{version} is outside the versions mqwatch checks ({}..={})",
            m.schema.name, m.min, m.max
        )));
    }
    walk::walk(m, version, body).map(drop)
}

/// Checks then decodes a response body.
pub fn decode<T: Decodable>(api_key: i16, version: i16, mut body: Bytes) -> Result<T, String> {
    check_response(api_key, version, &body).map_err(|e| e.to_string())?;
    T::decode(&mut body, version).map_err(|e| e.to_string())
}

/// A classic consumer's member metadata (`version` i16, then the subscription), checked then decoded; `None`
/// when empty, not a consumer subscription, or malformed.
pub fn subscription(bytes: &Bytes) -> Option<ConsumerProtocolSubscription> {
    blob(&SUBSCRIPTION_MESSAGE, bytes)
}

/// A classic consumer's member assignment, as [`subscription`].
pub fn assignment(bytes: &Bytes) -> Option<ConsumerProtocolAssignment> {
    blob(&ASSIGNMENT_MESSAGE, bytes)
}

fn blob<T: Decodable>(m: &Message, bytes: &Bytes) -> Option<T> {
    if bytes.len() < 2 {
        return None;
    }
    let version = i16::from_be_bytes([bytes[0], bytes[1]]);
    let mut body = bytes.slice(2..);
    check(m, version, &body).ok()?;
    T::decode(&mut body, version).ok()
}

/// What mqwatch does with a response body of `api_key` in `version` (the fuzz target's entry): the guard, then
/// kafka-protocol's decoder for that response, then the bytes inside it that mqwatch reads (a Fetch's record
/// batches, a DescribeGroups member's subscription and assignment). `Err` says why it was refused.
pub fn decode_any(api_key: i16, version: i16, body: &[u8]) -> Result<(), String> {
    use kafka_protocol::messages::*;
    let body = Bytes::copy_from_slice(body);
    macro_rules! plain {
        ($t:ty) => {
            decode::<$t>(api_key, version, body).map(drop)
        };
    }
    match api_key {
        0 => plain!(ProduceResponse),
        1 => {
            let r: FetchResponse = decode(api_key, version, body)?;
            for p in r.responses.iter().flat_map(|t| &t.partitions) {
                if let Some(records) = &p.records {
                    records::first_at_or_after(records, 0).map_err(|e| e.to_string())?;
                }
            }
            Ok(())
        }
        2 => plain!(ListOffsetsResponse),
        3 => plain!(MetadataResponse),
        8 => plain!(OffsetCommitResponse),
        9 => plain!(OffsetFetchResponse),
        10 => plain!(FindCoordinatorResponse),
        15 => {
            let r: DescribeGroupsResponse = decode(api_key, version, body)?;
            for m in r.groups.iter().flat_map(|g| &g.members) {
                let _ = subscription(&m.member_metadata);
                let _ = assignment(&m.member_assignment);
            }
            Ok(())
        }
        16 => plain!(ListGroupsResponse),
        17 => plain!(SaslHandshakeResponse),
        18 => plain!(ApiVersionsResponse),
        19 => plain!(CreateTopicsResponse),
        32 => plain!(DescribeConfigsResponse),
        36 => plain!(SaslAuthenticateResponse),
        60 => plain!(DescribeClusterResponse),
        69 => plain!(ConsumerGroupDescribeResponse),
        other => Err(format!(
            "mqwatch does not decode responses of api key {other}"
        )),
    }
}
