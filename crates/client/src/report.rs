//! The report a client sends each interval, and mqwatch decodes: JSON naming the client (id, address, its
//! cluster), the interval, and one [`Entry`] per (topic, broker) with sends in it. Each entry's latency
//! histogram is the stats crate's compact wire form (tens of bytes), base64 in the JSON.
//!
//! Decoding checks the version and every histogram; a bad report is an error naming the entry, never a panic.

use crate::stats::ErrorKind;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD_NO_PAD;
use mqwatch_stats::histogram::Snapshot;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The report format's version; mqwatch refuses others with a clear error.
pub const PAYLOAD_VERSION: u32 = 1;

/// One interval of one client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// [`PAYLOAD_VERSION`].
    pub version: u32,
    /// The client's id (e.g. `host@pid`, or the id the application gives its producer).
    pub client_id: String,
    /// The client's address as seen from its host (IP), for per-client views.
    pub address: String,
    /// The mqwatch cluster name the client sends to, when the application configured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// Interval start, ms since the Unix epoch.
    pub start_ms: u64,
    /// Interval end, ms since the Unix epoch.
    pub end_ms: u64,
    /// Reports this client dropped unsent so far (its buffer was full while mqwatch was unreachable).
    #[serde(default)]
    pub dropped_reports: u64,
    /// One per (topic, broker) with sends in the interval.
    pub entries: Vec<Entry>,
}

/// The interval's statistics of one (topic, broker).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Topic.
    pub topic: String,
    /// Broker name or address, as the client knows it.
    pub broker: String,
    /// Successful sends.
    pub success: u64,
    /// Failed sends by kind.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub errors: BTreeMap<ErrorKind, u64>,
    /// The successful sends' latency histogram: `Snapshot::encode`, base64 without padding.
    pub latency: String,
}

/// Why bytes are not a report.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// Not JSON of the report's shape.
    #[error("client report: {0}")]
    Json(#[from] serde_json::Error),
    /// Another version.
    #[error(
        "client report: version {0} is not supported (this mqwatch reads version {PAYLOAD_VERSION})"
    )]
    Version(u32),
    /// An entry's histogram does not decode.
    #[error("client report: entry {index} (topic {topic:?}, broker {broker:?}): latency: {reason}")]
    Latency {
        /// Index of the entry.
        index: usize,
        /// Its topic.
        topic: String,
        /// Its broker.
        broker: String,
        /// What was wrong.
        reason: String,
    },
}

impl Entry {
    /// An entry with `latency` encoded.
    pub fn new(
        topic: &str,
        broker: &str,
        success: u64,
        errors: BTreeMap<ErrorKind, u64>,
        latency: &Snapshot,
    ) -> Self {
        Self {
            topic: topic.to_string(),
            broker: broker.to_string(),
            success,
            errors,
            latency: STANDARD_NO_PAD.encode(latency.encode()),
        }
    }

    /// The latency histogram.
    pub fn latency(&self) -> Result<Snapshot, String> {
        let bytes = STANDARD_NO_PAD
            .decode(self.latency.as_bytes())
            .map_err(|e| format!("base64: {e}"))?;
        Snapshot::decode(&bytes).map_err(|e| e.to_string())
    }

    /// Failed sends of every kind.
    pub fn failures(&self) -> u64 {
        self.errors.values().sum()
    }
}

impl Report {
    /// The JSON body to post.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Decodes and validates a posted body, with every entry's histogram.
    pub fn from_json(bytes: &[u8]) -> Result<(Report, Vec<Snapshot>), ReportError> {
        let report: Report = serde_json::from_slice(bytes)?;
        if report.version != PAYLOAD_VERSION {
            return Err(ReportError::Version(report.version));
        }
        let latencies = report
            .entries
            .iter()
            .enumerate()
            .map(|(index, e)| {
                e.latency().map_err(|reason| ReportError::Latency {
                    index,
                    topic: e.topic.clone(),
                    broker: e.broker.clone(),
                    reason,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok((report, latencies))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_stats::histogram::Histogram;

    fn report() -> Report {
        let h = Histogram::new();
        h.record(1_500_000);
        Report {
            version: PAYLOAD_VERSION,
            client_id: "app@1".into(),
            address: "10.0.0.9".into(),
            cluster: Some("rmq".into()),
            start_ms: 0,
            end_ms: 60_000,
            dropped_reports: 0,
            entries: vec![Entry::new(
                "t",
                "b",
                1,
                [(ErrorKind::Timeout, 2)].into(),
                &h.snapshot(),
            )],
        }
    }

    #[test]
    fn round_trips() {
        let r = report();
        let (back, lat) = Report::from_json(&r.to_json()).unwrap();
        assert_eq!(back, r);
        assert_eq!(lat[0].count(), 1);
        assert_eq!(back.entries[0].failures(), 2);
    }

    #[test]
    fn bad_reports_are_errors_naming_the_problem() {
        let mut r = report();
        r.version = 9;
        let e = Report::from_json(&r.to_json()).unwrap_err().to_string();
        assert!(e.contains("version 9"), "{e}");
        let mut r = report();
        r.entries[0].latency = "!!".into();
        let e = Report::from_json(&r.to_json()).unwrap_err().to_string();
        assert!(e.contains("entry 0") && e.contains("\"t\""), "{e}");
        r.entries[0].latency = STANDARD_NO_PAD.encode([0xff, 0xff, 0xff]);
        assert!(Report::from_json(&r.to_json()).is_err());
        assert!(Report::from_json(b"{").is_err());
        assert!(Report::from_json(b"").is_err());
    }
}
