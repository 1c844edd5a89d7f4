//! mqwatch's store: what outlives one collection cycle. Per-minute series per (cluster, metric, subject) with
//! rollups to hour and UTC-day buckets and retention (minute rows 30 days by default), the findings each cycle
//! saw, alarm state, silences, and the delivery outbox the alert channels drain. Everything a call commits is on
//! disk when it returns, and every alert cycle's writes go in one transaction ([`Store::apply_alarm_changes`]).
//!
//! Two backends behind one type: SQLite (the default, one file, created on first run) and PostgreSQL (several
//! mqwatch instances sharing state). [`Store`] is an enum over the two rather than a trait object: the set is
//! closed, config picks one at start, and an enum keeps `async fn` methods without boxing every future or
//! pulling in `async-trait`. Both run the same SQL text ([`sql`](crate::sql) is written once) and the same
//! versioned migrations (table `schema_version`), and the same test suite runs on both.
//!
//! Not here: what an alarm is and when it changes (crate `mqwatch-alert`), how a channel renders a delivery.

mod config;
mod error;
mod postgres;
mod rows;
mod sql;
mod sqlite;
mod types;

pub use config::{StoreConfig, StoreUrl, redact};
pub use error::{Result, StoreError};
pub use types::{
    AlarmChanges, AlarmRecord, AlarmState, DAY_MS, FindingQuery, FindingRecord, HOUR_MS, MINUTE_MS,
    NewDelivery, NewSilence, OutboxEntry, Resolution, Retention, RetentionReport, Rollup,
    SeriesPoint, SeriesQuery, Silence, SilenceMatcher,
};

use mqwatch_model::Finding;
use postgres::PgStore;
use sqlite::SqliteStore;
use std::collections::HashMap;

/// The newest schema version this build migrates to.
pub const SCHEMA_VERSION: i64 = {
    let list = sql::SQLITE_MIGRATIONS;
    list[list.len() - 1].0
};

/// An open store. Cheap to clone: clones share one connection.
#[derive(Clone)]
pub struct Store(Backend);

#[derive(Clone)]
enum Backend {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

/// Calls the same method on whichever backend is open.
macro_rules! dispatch {
    ($self:ident . $method:ident ( $($arg:expr),* )) => {
        match &$self.0 {
            Backend::Sqlite(s) => s.$method($($arg),*).await,
            Backend::Postgres(p) => p.$method($($arg),*).await,
        }
    };
}

fn floor(ms: u64, width: u64) -> u64 {
    ms - ms % width
}

fn ceil(ms: u64, width: u64) -> u64 {
    floor(ms, width).saturating_add(if ms.is_multiple_of(width) { 0 } else { width })
}

impl Store {
    /// Opens the store at `url`, creating a SQLite file (and its directory) when absent, and migrates its schema
    /// to [`SCHEMA_VERSION`].
    pub async fn open(url: &StoreUrl) -> Result<Self> {
        Ok(Store(match url {
            StoreUrl::Sqlite(path) => Backend::Sqlite(SqliteStore::open(path.clone()).await?),
            StoreUrl::Postgres(text) => {
                Backend::Postgres(PgStore::open(text, &url.redacted()).await?)
            }
        }))
    }

    /// The database, for messages: a file path or a URL without password.
    pub fn describe(&self) -> &str {
        match &self.0 {
            Backend::Sqlite(s) => s.db(),
            Backend::Postgres(p) => p.db(),
        }
    }

    /// The schema version the database is at.
    pub async fn schema_version(&self) -> Result<i64> {
        dispatch!(self.schema_version())
    }

    /// Writes per-minute rows in one transaction. Each point's time is floored to its minute; a row that exists
    /// for (cluster, metric, subject, minute) is replaced, so writing a batch twice is harmless. Within one batch
    /// the last point for a key wins.
    pub async fn insert_minutes(&self, points: &[SeriesPoint]) -> Result<()> {
        let mut last: HashMap<(&str, &str, &str, u64), usize> =
            HashMap::with_capacity(points.len());
        for (i, p) in points.iter().enumerate() {
            last.insert(
                (
                    &p.cluster,
                    &p.metric,
                    &p.subject,
                    floor(p.minute_ms, MINUTE_MS),
                ),
                i,
            );
        }
        let mut keep: Vec<usize> = last.into_values().collect();
        keep.sort_unstable();
        let rows: Vec<SeriesPoint> = keep
            .into_iter()
            .map(|i| SeriesPoint {
                minute_ms: floor(points[i].minute_ms, MINUTE_MS),
                ..points[i].clone()
            })
            .collect();
        if rows.is_empty() {
            return Ok(());
        }
        dispatch!(self.insert_minutes(rows))
    }

    /// Minute rows of one metric in `[from_ms, to_ms)`, by subject then time.
    pub async fn minutes(&self, query: &SeriesQuery) -> Result<Vec<SeriesPoint>> {
        dispatch!(self.minutes(query.clone()))
    }

    /// Recomputes the hour buckets that overlap `[from_ms, to_ms)` from minute rows, then the day buckets that
    /// overlap it from hour rows. Idempotent; run it over recent time (e.g. the last two hours, each cycle or
    /// hourly) before retention deletes the minute rows it needs.
    pub async fn roll_up(&self, from_ms: u64, to_ms: u64) -> Result<()> {
        let hours = (floor(from_ms, HOUR_MS), ceil(to_ms, HOUR_MS));
        let days = (floor(from_ms, DAY_MS), ceil(to_ms, DAY_MS));
        dispatch!(self.roll_up(hours, days))
    }

    /// Rolled-up rows of one metric whose bucket starts in `[from_ms, to_ms)`, by subject then time.
    pub async fn rollups(
        &self,
        resolution: Resolution,
        query: &SeriesQuery,
    ) -> Result<Vec<Rollup>> {
        dispatch!(self.rollups(resolution, query.clone()))
    }

    /// Deletes what `retention` no longer keeps at `now_ms`, in one transaction; undelivered outbox rows and alarm
    /// rows are never deleted here.
    pub async fn apply_retention(
        &self,
        now_ms: u64,
        retention: &Retention,
    ) -> Result<RetentionReport> {
        dispatch!(self.apply_retention(now_ms, *retention))
    }

    /// Records the findings one cycle saw at `at_ms` (replacing what an earlier call recorded for the same
    /// cycle time and key).
    pub async fn record_findings(&self, at_ms: u64, findings: &[Finding]) -> Result<()> {
        if findings.is_empty() {
            return Ok(());
        }
        dispatch!(self.record_findings(at_ms, findings.to_vec()))
    }

    /// Findings history, newest first.
    pub async fn findings(&self, query: &FindingQuery) -> Result<Vec<FindingRecord>> {
        dispatch!(self.findings(query.clone()))
    }

    /// Every alarm row, by cluster, kind and subject.
    pub async fn alarms(&self) -> Result<Vec<AlarmRecord>> {
        dispatch!(self.alarms())
    }

    /// Writes one alert cycle's outcome in one transaction: alarm rows upserted and removed, deliveries enqueued
    /// (due at once). Returns the new outbox ids in the order of `changes.deliveries`.
    pub async fn apply_alarm_changes(
        &self,
        changes: &AlarmChanges,
        now_ms: u64,
    ) -> Result<Vec<i64>> {
        if changes.is_empty() {
            return Ok(Vec::new());
        }
        dispatch!(self.apply_alarm_changes(changes.clone(), now_ms))
    }

    /// One alarm cycle as one transaction that instances sharing the database take in turn: reads every alarm row
    /// and the silences active at `now_ms`, hands them to `evaluate` (pure: the alert stage's lifecycle), writes the
    /// [`AlarmChanges`] it returns and enqueues their deliveries, and commits. SQLite runs it under `BEGIN
    /// IMMEDIATE`; PostgreSQL under a transaction-scoped advisory lock, so two mqwatch instances evaluating the same
    /// cluster never both see "no alarm" and both enqueue its notification. Returns what `evaluate` returned and
    /// the new outbox ids.
    pub async fn alarm_cycle<T, F>(&self, now_ms: u64, evaluate: F) -> Result<(T, Vec<i64>)>
    where
        T: Send + 'static,
        F: FnOnce(&[AlarmRecord], &[Silence]) -> (AlarmChanges, T) + Send + 'static,
    {
        dispatch!(self.alarm_cycle(now_ms, evaluate))
    }

    /// Adds a silence and returns it with its id.
    pub async fn add_silence(&self, silence: &NewSilence) -> Result<Silence> {
        let id = dispatch!(self.add_silence(silence.clone()))?;
        Ok(Silence {
            id,
            matcher: silence.matcher.clone(),
            created_ms: silence.created_ms,
            expires_ms: silence.expires_ms,
            created_by: silence.created_by.clone(),
            comment: silence.comment.clone(),
        })
    }

    /// Silences that have not expired at `now_ms`, oldest first.
    pub async fn active_silences(&self, now_ms: u64) -> Result<Vec<Silence>> {
        dispatch!(self.silences(now_ms))
    }

    /// Every stored silence, expired or not (expired ones go with findings retention), oldest first.
    pub async fn all_silences(&self) -> Result<Vec<Silence>> {
        dispatch!(self.silences(0))
    }

    /// Deletes a silence; false when there was none with `id`.
    pub async fn delete_silence(&self, id: i64) -> Result<bool> {
        dispatch!(self.delete_silence(id))
    }

    /// Enqueues one delivery, due at once; returns its id.
    pub async fn enqueue(&self, delivery: &NewDelivery, now_ms: u64) -> Result<i64> {
        dispatch!(self.enqueue(delivery.clone(), now_ms))
    }

    /// Undelivered rows due at `now_ms`, oldest first, at most `limit`. Read only: see [`Store::claim_due`] for
    /// delivering.
    pub async fn due(&self, now_ms: u64, limit: u32) -> Result<Vec<OutboxEntry>> {
        dispatch!(self.due(now_ms, limit))
    }

    /// Claims undelivered rows due at `now_ms` (oldest first, at most `limit`) by moving their next attempt to
    /// `lease_until_ms`: a deliverer that dies holding them leaves them due again then, and another instance
    /// sharing the database does not claim them meanwhile. A row is not claimed while an older undelivered row
    /// for the same channel and alarm key exists, so a resolve never overtakes its firing. Follow each with [`Store::mark_delivered`] or
    /// [`Store::reschedule`].
    pub async fn claim_due(
        &self,
        now_ms: u64,
        lease_until_ms: u64,
        limit: u32,
    ) -> Result<Vec<OutboxEntry>> {
        dispatch!(self.claim_due(now_ms, lease_until_ms, limit))
    }

    /// Marks a row delivered at `now_ms` (counting the attempt); false when it was already delivered or absent.
    pub async fn mark_delivered(&self, id: i64, now_ms: u64) -> Result<bool> {
        dispatch!(self.mark_delivered(id, now_ms))
    }

    /// Records a failed attempt with its reason and makes the row due again at `next_attempt_ms`; false when it
    /// was already delivered or absent.
    pub async fn reschedule(&self, id: i64, next_attempt_ms: u64, error: &str) -> Result<bool> {
        dispatch!(self.reschedule(id, next_attempt_ms, error.to_string()))
    }

    /// One outbox row.
    pub async fn delivery(&self, id: i64) -> Result<Option<OutboxEntry>> {
        dispatch!(self.delivery(id))
    }

    /// The newest `limit` outbox rows, newest first.
    pub async fn recent_outbox(&self, limit: u32) -> Result<Vec<OutboxEntry>> {
        dispatch!(self.recent_outbox(limit))
    }
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Store({})", self.describe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_floor_and_ceil_on_boundaries() {
        assert_eq!(floor(3_600_001, HOUR_MS), HOUR_MS);
        assert_eq!(ceil(3_600_001, HOUR_MS), 2 * HOUR_MS);
        assert_eq!(ceil(HOUR_MS, HOUR_MS), HOUR_MS);
        assert_eq!(ceil(u64::MAX, HOUR_MS), u64::MAX);
        assert_eq!(SCHEMA_VERSION, 1);
    }
}
