//! The contents of an under-replication mark znode: protobuf TEXT of
//! `UnderreplicatedLedgerFormat { repeated string replica = 1; optional int64 ctime = 2; }`. It owns reading
//! (and, for tests and fixtures, writing) that text; where marks live is [`crate::paths`]' business.

use crate::textformat::{TextMessage, escape};

/// Why a mark's bytes are not an `UnderreplicatedLedgerFormat`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("under-replication mark: {0}")]
pub struct MarkError(pub String);

/// One ledger's under-replication mark.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UnderReplicatedMark {
    /// Bookie ids that are replicating (or marked) the ledger.
    pub replicas: Vec<String>,
    /// When it was marked, ms since the epoch (absent in marks written by old versions).
    pub ctime_ms: Option<i64>,
}

impl UnderReplicatedMark {
    /// Parses a mark's znode value.
    pub fn decode(bytes: &[u8]) -> Result<Self, MarkError> {
        let t = TextMessage::parse(bytes).map_err(|e| MarkError(e.to_string()))?;
        Ok(UnderReplicatedMark {
            replicas: t.strings_all("replica").map_err(MarkError)?,
            ctime_ms: t.int("ctime").map_err(MarkError)?,
        })
    }

    /// Writes the text as BookKeeper's `TextFormat` printer does.
    pub fn encode_text(&self) -> String {
        let mut out = String::new();
        for r in &self.replicas {
            out.push_str(&format!("replica: \"{}\"\n", escape(r.as_bytes())));
        }
        if let Some(c) = self.ctime_ms {
            out.push_str(&format!("ctime: {c}\n"));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_bookkeeper_text() {
        let m = UnderReplicatedMark::decode(
            b"replica: \"10.0.0.1:3181\"\nreplica: \"10.0.0.2:3181\"\nctime: 1700000000000\n",
        )
        .unwrap();
        assert_eq!(m.replicas, ["10.0.0.1:3181", "10.0.0.2:3181"]);
        assert_eq!(m.ctime_ms, Some(1_700_000_000_000));
        assert_eq!(
            UnderReplicatedMark::decode(&m.encode_text().into_bytes()).unwrap(),
            m
        );
        assert_eq!(
            UnderReplicatedMark::decode(b"").unwrap(),
            UnderReplicatedMark::default()
        );
    }

    #[test]
    fn rejects_bad_marks() {
        assert!(UnderReplicatedMark::decode(b"replica: 3").is_err());
        assert!(UnderReplicatedMark::decode(b"ctime: \"x\"").is_err());
        assert!(UnderReplicatedMark::decode(b"replica: \"\\377\"").is_err());
    }
}
