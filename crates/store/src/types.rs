//! The rows the store keeps, as Rust values: series points and rollups, findings history, alarm state, silences and
//! outbox deliveries. Times are milliseconds since the Unix epoch (UTC); hour and day buckets start on UTC
//! boundaries.

use mqwatch_model::{Finding, FindingKey, FindingKind, Severity, Span};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// One minute.
pub const MINUTE_MS: u64 = 60_000;
/// One hour.
pub const HOUR_MS: u64 = 3_600_000;
/// One UTC day.
pub const DAY_MS: u64 = 86_400_000;

/// One per-minute value of one series: (cluster, metric, subject) at `minute_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// The cluster's configured name.
    pub cluster: String,
    /// What is measured, e.g. `produce_messages`, `backlog`.
    pub metric: String,
    /// What it is measured on, e.g. `topic orders` or `group g1`; empty for the cluster as a whole.
    pub subject: String,
    /// The minute's start (ms); [`Store::insert_minutes`](crate::Store::insert_minutes) floors it to the minute.
    pub minute_ms: u64,
    /// The value.
    pub value: f64,
}

impl SeriesPoint {
    /// A point; `minute_ms` is floored to the minute on insert.
    pub fn new(
        cluster: impl Into<String>,
        metric: impl Into<String>,
        subject: impl Into<String>,
        minute_ms: u64,
        value: f64,
    ) -> Self {
        Self {
            cluster: cluster.into(),
            metric: metric.into(),
            subject: subject.into(),
            minute_ms,
            value,
        }
    }
}

/// The granularity of rolled-up series.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Resolution {
    /// Hour buckets, rolled up from minute rows.
    Hour,
    /// UTC day buckets, rolled up from hour rows (so they outlive the minute rows).
    Day,
}

impl Resolution {
    /// The bucket width in ms.
    pub fn width_ms(self) -> u64 {
        match self {
            Resolution::Hour => HOUR_MS,
            Resolution::Day => DAY_MS,
        }
    }
}

/// Aggregates of one series over one hour or day bucket.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rollup {
    /// The cluster.
    pub cluster: String,
    /// The metric.
    pub metric: String,
    /// The subject.
    pub subject: String,
    /// The bucket's start (ms).
    pub bucket_ms: u64,
    /// Mean of the minute values in the bucket.
    pub avg: f64,
    /// Smallest minute value.
    pub min: f64,
    /// Largest minute value.
    pub max: f64,
    /// Sum of the minute values.
    pub sum: f64,
    /// How many minute values.
    pub count: u64,
}

/// Which rows of one metric a range query reads: `[from_ms, to_ms)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesQuery {
    /// The cluster.
    pub cluster: String,
    /// The metric.
    pub metric: String,
    /// One subject, or every subject of the metric.
    pub subject: Option<String>,
    /// Inclusive start (ms).
    pub from_ms: u64,
    /// Exclusive end (ms).
    pub to_ms: u64,
}

/// How long rows are kept; `[store.retention]` in config. Delivered outbox rows count from their delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Retention {
    /// Per-minute series rows (MQCloud: 30 days).
    pub minutes: Span,
    /// Hour rollups (default 400 days).
    pub hours: Span,
    /// Day rollups (default: kept forever).
    pub days: Option<Span>,
    /// Findings history (default 30 days).
    pub findings: Span,
    /// Delivered outbox rows (default 7 days; undelivered ones are never deleted).
    pub delivered: Span,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            minutes: Span::from_millis(30 * DAY_MS),
            hours: Span::from_millis(400 * DAY_MS),
            days: None,
            findings: Span::from_millis(30 * DAY_MS),
            delivered: Span::from_millis(7 * DAY_MS),
        }
    }
}

/// Rows one retention pass deleted, per table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct RetentionReport {
    /// From `series_minute`.
    pub minutes: u64,
    /// From `series_hour`.
    pub hours: u64,
    /// From `series_day`.
    pub days: u64,
    /// From `findings`.
    pub findings: u64,
    /// Delivered rows from `outbox`.
    pub delivered: u64,
    /// Expired rows from `silences`.
    pub silences: u64,
}

/// A finding as one cycle recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindingRecord {
    /// When the cycle recorded it (ms).
    pub at_ms: u64,
    /// The finding.
    pub finding: Finding,
}

/// Which findings history to read: `[from_ms, to_ms)`, newest first, at most `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FindingQuery {
    /// One cluster, or all.
    pub cluster: Option<String>,
    /// One kind, or all.
    pub kind: Option<FindingKind>,
    /// Inclusive start (ms).
    pub from_ms: u64,
    /// Exclusive end (ms).
    pub to_ms: u64,
    /// Most rows returned.
    pub limit: u32,
}

impl FindingQuery {
    /// Every finding recorded in `[from_ms, to_ms)`, up to 10 000.
    pub fn between(from_ms: u64, to_ms: u64) -> Self {
        Self {
            cluster: None,
            kind: None,
            from_ms,
            to_ms,
            limit: 10_000,
        }
    }
}

/// Where an alarm stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AlarmState {
    /// The finding is present but has not lasted its `for` period yet.
    Pending,
    /// The finding lasted its `for` period and is still present.
    Firing,
    /// The finding was firing and is gone.
    Resolved,
}

impl AlarmState {
    /// The lowercase spelling stored in the `alarms` table.
    pub fn as_str(self) -> &'static str {
        match self {
            AlarmState::Pending => "pending",
            AlarmState::Firing => "firing",
            AlarmState::Resolved => "resolved",
        }
    }
}

impl fmt::Display for AlarmState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for AlarmState {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pending" => Ok(AlarmState::Pending),
            "firing" => Ok(AlarmState::Firing),
            "resolved" => Ok(AlarmState::Resolved),
            other => Err(format!(
                "unknown alarm state {other:?} (pending, firing or resolved)"
            )),
        }
    }
}

/// One alarm's persisted state, keyed by its finding's [`FindingKey`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlarmRecord {
    /// Where it stands.
    pub state: AlarmState,
    /// When it entered `state` (ms).
    pub since_ms: u64,
    /// When a firing notification for this key was last enqueued (ms), in this episode or an earlier one.
    pub last_notified_ms: Option<u64>,
    /// Whether the current episode's firing was notified (so its resolve is worth telling).
    pub notified: bool,
    /// The severity last seen.
    pub severity: Severity,
    /// The finding last seen.
    pub finding: Finding,
}

impl AlarmRecord {
    /// The alarm key.
    pub fn key(&self) -> FindingKey {
        self.finding.key()
    }
}

/// A notification to deliver through one channel, to be added to the outbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewDelivery {
    /// The channel's configured name.
    pub channel: String,
    /// The alarm key it is about (its display form, e.g. `backlog/rmq/group g1`).
    pub alarm_key: String,
    /// What the channel renders and sends.
    pub payload: serde_json::Value,
}

/// What one alert cycle changes, written in one transaction: alarm rows upserted and removed, deliveries enqueued.
/// A crash leaves either all of it or none, so a restart neither repeats nor loses a notification.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AlarmChanges {
    /// Alarm rows to insert or replace.
    pub upserts: Vec<AlarmRecord>,
    /// Alarm rows to delete.
    pub removals: Vec<FindingKey>,
    /// Deliveries to enqueue.
    pub deliveries: Vec<NewDelivery>,
}

impl AlarmChanges {
    /// True when there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.upserts.is_empty() && self.removals.is_empty() && self.deliveries.is_empty()
    }
}

/// Which alarm keys a silence covers: every field that is set must match; an unset field matches anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SilenceMatcher {
    /// The finding kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<FindingKind>,
    /// The cluster's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    /// The subject's display form, e.g. `group g1` or `broker broker-a:0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<String>,
}

impl SilenceMatcher {
    /// Whether `key` is covered.
    pub fn matches(&self, key: &FindingKey) -> bool {
        self.kind.is_none_or(|k| k == key.kind)
            && self.cluster.as_deref().is_none_or(|c| c == key.cluster)
            && self
                .subject
                .as_deref()
                .is_none_or(|s| s == key.subject.to_string())
    }
}

/// A silence to add.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSilence {
    /// What it covers.
    pub matcher: SilenceMatcher,
    /// When it was created (ms).
    pub created_ms: u64,
    /// When it stops covering anything (ms).
    pub expires_ms: u64,
    /// Who asked for it.
    pub created_by: String,
    /// Why.
    pub comment: String,
}

/// A stored silence: mutes notifications (never state) for matching alarm keys until it expires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Silence {
    /// Its id.
    pub id: i64,
    /// What it covers.
    pub matcher: SilenceMatcher,
    /// When it was created (ms).
    pub created_ms: u64,
    /// When it stops covering anything (ms).
    pub expires_ms: u64,
    /// Who asked for it.
    pub created_by: String,
    /// Why.
    pub comment: String,
}

impl Silence {
    /// Whether it mutes `key` at `now_ms`.
    pub fn mutes(&self, key: &FindingKey, now_ms: u64) -> bool {
        now_ms < self.expires_ms && self.matcher.matches(key)
    }
}

/// One delivery in the outbox.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutboxEntry {
    /// Its id (increasing in enqueue order).
    pub id: i64,
    /// The channel's configured name.
    pub channel: String,
    /// The alarm key it is about.
    pub alarm_key: String,
    /// What the channel renders and sends.
    pub payload: serde_json::Value,
    /// When it was enqueued (ms).
    pub created_ms: u64,
    /// Attempts made so far.
    pub attempts: u32,
    /// When it may be tried (again).
    pub next_attempt_ms: u64,
    /// When it was delivered, if it was.
    pub delivered_ms: Option<u64>,
    /// Why the last attempt failed, if it did.
    pub last_error: Option<String>,
}

/// The identity columns of an alarm key as stored: `(kind, cluster, subject display form)`.
pub(crate) fn key_columns(key: &FindingKey) -> (String, String, String) {
    (
        key.kind.as_str().to_string(),
        key.cluster.clone(),
        key.subject.to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{GroupRef, Subject};

    fn key(kind: FindingKind, cluster: &str, group: &str) -> FindingKey {
        FindingKey {
            kind,
            cluster: cluster.into(),
            subject: Subject::Group {
                group: GroupRef::new(group),
                topic: None,
            },
        }
    }

    #[test]
    fn matcher_fields_narrow_and_silences_expire() {
        let k = key(FindingKind::Backlog, "rmq", "g1");
        assert!(SilenceMatcher::default().matches(&k));
        let m = SilenceMatcher {
            kind: Some(FindingKind::Backlog),
            cluster: Some("rmq".into()),
            subject: Some("group g1".into()),
        };
        assert!(m.matches(&k));
        assert!(!m.matches(&key(FindingKind::Backlog, "rmq", "g2")));
        assert!(!m.matches(&key(FindingKind::ClientBlocked, "rmq", "g1")));
        assert!(!m.matches(&key(FindingKind::Backlog, "kafka", "g1")));
        let s = Silence {
            id: 1,
            matcher: m,
            created_ms: 0,
            expires_ms: 100,
            created_by: "ops".into(),
            comment: "maintenance".into(),
        };
        assert!(s.mutes(&k, 99));
        assert!(!s.mutes(&k, 100));
    }

    #[test]
    fn alarm_states_round_trip() {
        for s in [
            AlarmState::Pending,
            AlarmState::Firing,
            AlarmState::Resolved,
        ] {
            assert_eq!(s.as_str().parse::<AlarmState>(), Ok(s));
        }
        assert!("open".parse::<AlarmState>().is_err());
    }
}
