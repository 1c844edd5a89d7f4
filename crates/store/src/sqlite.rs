//! The SQLite backend: one connection to a database file in WAL mode with `synchronous = FULL` (a committed
//! transaction is on disk before the call returns, so neither a crash nor a power cut loses it), driven from
//! tokio through `spawn_blocking`. The file and its directory are created on first open.

use crate::error::{Result, StoreError};
use crate::rows::{self, BadCell, Cells, to_db};
use crate::sql;
use crate::types::{
    AlarmChanges, AlarmRecord, FindingQuery, FindingRecord, NewDelivery, NewSilence, OutboxEntry,
    Resolution, Retention, RetentionReport, Rollup, SeriesPoint, SeriesQuery, Silence, key_columns,
};
use mqwatch_model::Finding;
use rusqlite::{Connection, Params, Statement, TransactionBehavior, params};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A SQLite store; clones share the connection.
#[derive(Clone)]
pub(crate) struct SqliteStore {
    db: Arc<str>,
    conn: Arc<Mutex<Connection>>,
}

fn sq(db: &str, op: &str) -> impl FnOnce(rusqlite::Error) -> StoreError {
    let (db, op) = (db.to_string(), op.to_string());
    move |source| StoreError::Sqlite { db, op, source }
}

pub(crate) fn bad_row(db: &str, table: &'static str, b: BadCell) -> StoreError {
    StoreError::BadRow {
        db: db.to_string(),
        table,
        key: b.key,
        reason: b.reason,
    }
}

fn collect<T>(
    db: &str,
    op: &str,
    table: &'static str,
    stmt: &mut Statement<'_>,
    params: impl Params,
    decode: fn(&dyn Cells) -> Result<T, BadCell>,
) -> Result<Vec<T>> {
    let mut rows = stmt.query(params).map_err(sq(db, op))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(sq(db, op))? {
        out.push(decode(row).map_err(|b| bad_row(db, table, b))?);
    }
    Ok(out)
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

impl SqliteStore {
    /// Opens (creating when absent) the database at `path` and brings its schema up to date.
    pub(crate) async fn open(path: PathBuf) -> Result<Self> {
        let db: Arc<str> = format!("sqlite://{}", path.display()).into();
        let name = db.clone();
        let conn = tokio::task::spawn_blocking(move || -> Result<Connection> {
            let db = &*name;
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|source| StoreError::Io {
                    db: db.to_string(),
                    dir: dir.display().to_string(),
                    source,
                })?;
            }
            let mut conn = Connection::open(&path).map_err(sq(db, "open"))?;
            conn.busy_timeout(Duration::from_secs(10))
                .map_err(sq(db, "set busy timeout"))?;
            let mode: String = conn
                .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
                .map_err(sq(db, "set journal_mode WAL"))?;
            if !mode.eq_ignore_ascii_case("wal") {
                tracing::warn!(db, mode, "SQLite would not switch to WAL mode");
            }
            conn.pragma_update(None, "synchronous", "FULL")
                .map_err(sq(db, "set synchronous FULL"))?;
            migrate(&mut conn, db)?;
            Ok(conn)
        })
        .await
        .map_err(|e| StoreError::Task {
            db: db.to_string(),
            op: "open".into(),
            reason: e.to_string(),
        })??;
        Ok(Self {
            db,
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// The database, for messages.
    pub(crate) fn db(&self) -> &str {
        &self.db
    }

    /// Runs `f` on the connection in the blocking pool.
    async fn run<T, F>(&self, op: &'static str, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &str) -> Result<T> + Send + 'static,
    {
        let conn = self.conn.clone();
        let db = self.db.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = conn.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            f(&mut guard, &db)
        })
        .await
        .map_err(|e| StoreError::Task {
            db: self.db.to_string(),
            op: op.into(),
            reason: e.to_string(),
        })?
    }

    pub(crate) async fn schema_version(&self) -> Result<i64> {
        self.run("read schema_version", |c, db| {
            c.query_row(sql::CURRENT_VERSION, [], |r| r.get(0))
                .map_err(sq(db, "read schema_version"))
        })
        .await
    }

    pub(crate) async fn insert_minutes(&self, points: Vec<SeriesPoint>) -> Result<()> {
        self.run("insert into series_minute", move |c, db| {
            let op = "insert into series_minute";
            let tx = c.transaction().map_err(sq(db, op))?;
            {
                let mut stmt = tx
                    .prepare_cached(&sql::sqlite(sql::UPSERT_MINUTE))
                    .map_err(sq(db, op))?;
                for p in &points {
                    stmt.execute(params![
                        p.cluster,
                        p.metric,
                        p.subject,
                        to_db(p.minute_ms),
                        p.value
                    ])
                    .map_err(sq(db, op))?;
                }
            }
            tx.commit().map_err(sq(db, op))
        })
        .await
    }

    pub(crate) async fn minutes(&self, q: SeriesQuery) -> Result<Vec<SeriesPoint>> {
        self.run("read series_minute", move |c, db| {
            let op = "read series_minute";
            let mut stmt = c
                .prepare_cached(&sql::sqlite(sql::SELECT_MINUTES))
                .map_err(sq(db, op))?;
            collect(
                db,
                op,
                "series_minute",
                &mut stmt,
                params![
                    q.cluster,
                    q.metric,
                    q.subject,
                    to_db(q.from_ms),
                    to_db(q.to_ms)
                ],
                rows::series_point,
            )
        })
        .await
    }

    pub(crate) async fn roll_up(&self, hours: (u64, u64), days: (u64, u64)) -> Result<()> {
        self.run("roll up into series_hour and series_day", move |c, db| {
            let tx = c.transaction().map_err(sq(db, "roll up: begin"))?;
            tx.execute(
                &sql::sqlite(sql::ROLL_UP_HOURS),
                params![to_db(hours.0), to_db(hours.1)],
            )
            .map_err(sq(db, "roll up series_minute into series_hour"))?;
            tx.execute(
                &sql::sqlite(sql::ROLL_UP_DAYS),
                params![to_db(days.0), to_db(days.1)],
            )
            .map_err(sq(db, "roll up series_hour into series_day"))?;
            tx.commit().map_err(sq(db, "roll up: commit"))
        })
        .await
    }

    pub(crate) async fn rollups(&self, res: Resolution, q: SeriesQuery) -> Result<Vec<Rollup>> {
        let table = table_of(res);
        self.run("read rollups", move |c, db| {
            let op = format!("read {table}");
            let mut stmt = c
                .prepare_cached(&sql::sqlite(&sql::select_rollups(table)))
                .map_err(sq(db, &op))?;
            collect(
                db,
                &op,
                table,
                &mut stmt,
                params![
                    q.cluster,
                    q.metric,
                    q.subject,
                    to_db(q.from_ms),
                    to_db(q.to_ms)
                ],
                rows::rollup,
            )
        })
        .await
    }

    pub(crate) async fn apply_retention(
        &self,
        now_ms: u64,
        r: Retention,
    ) -> Result<RetentionReport> {
        self.run("retention", move |c, db| {
            let cut = |span: mqwatch_model::Span| to_db(now_ms.saturating_sub(span.as_millis()));
            let tx = c.transaction().map_err(sq(db, "retention: begin"))?;
            let del = |sql_text: &str, table: &str, cutoff: i64| -> Result<u64> {
                tx.execute(&sql::sqlite(sql_text), params![cutoff])
                    .map(|n| n as u64)
                    .map_err(sq(db, &format!("retention: delete from {table}")))
            };
            let report = RetentionReport {
                minutes: del(sql::DELETE_MINUTES, "series_minute", cut(r.minutes))?,
                hours: del(sql::DELETE_HOURS, "series_hour", cut(r.hours))?,
                days: match r.days {
                    Some(days) => del(sql::DELETE_DAYS, "series_day", cut(days))?,
                    None => 0,
                },
                findings: del(sql::DELETE_FINDINGS, "findings", cut(r.findings))?,
                delivered: del(sql::DELETE_DELIVERED, "outbox", cut(r.delivered))?,
                silences: del(sql::DELETE_SILENCES, "silences", cut(r.findings))?,
            };
            tx.commit().map_err(sq(db, "retention: commit"))?;
            Ok(report)
        })
        .await
    }

    pub(crate) async fn record_findings(&self, at_ms: u64, findings: Vec<Finding>) -> Result<()> {
        self.run("insert into findings", move |c, db| {
            let op = "insert into findings";
            let tx = c.transaction().map_err(sq(db, op))?;
            {
                let mut stmt = tx
                    .prepare_cached(&sql::sqlite(sql::UPSERT_FINDING))
                    .map_err(sq(db, op))?;
                for f in &findings {
                    let (kind, cluster, subject) = key_columns(&f.key());
                    stmt.execute(params![
                        to_db(at_ms),
                        cluster,
                        kind,
                        subject,
                        f.severity.as_str(),
                        json(f)
                    ])
                    .map_err(sq(db, op))?;
                }
            }
            tx.commit().map_err(sq(db, op))
        })
        .await
    }

    pub(crate) async fn findings(&self, q: FindingQuery) -> Result<Vec<FindingRecord>> {
        self.run("read findings", move |c, db| {
            let op = "read findings";
            let mut stmt = c
                .prepare_cached(&sql::sqlite(sql::SELECT_FINDINGS))
                .map_err(sq(db, op))?;
            collect(
                db,
                op,
                "findings",
                &mut stmt,
                params![
                    q.cluster,
                    q.kind.map(|k| k.as_str()),
                    to_db(q.from_ms),
                    to_db(q.to_ms),
                    i64::from(q.limit)
                ],
                rows::finding_record,
            )
        })
        .await
    }

    pub(crate) async fn alarms(&self) -> Result<Vec<AlarmRecord>> {
        self.run("read alarms", |c, db| {
            let op = "read alarms";
            let mut stmt = c.prepare_cached(sql::SELECT_ALARMS).map_err(sq(db, op))?;
            collect(db, op, "alarms", &mut stmt, [], rows::alarm)
        })
        .await
    }

    pub(crate) async fn apply_alarm_changes(
        &self,
        changes: AlarmChanges,
        now_ms: u64,
    ) -> Result<Vec<i64>> {
        self.run("apply alarm changes", move |c, db| {
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sq(db, "apply alarm changes: begin"))?;
            let ids = write_alarm_changes(&tx, db, &changes, now_ms)?;
            tx.commit().map_err(sq(db, "apply alarm changes: commit"))?;
            Ok(ids)
        })
        .await
    }

    pub(crate) async fn alarm_cycle<T, F>(&self, now_ms: u64, evaluate: F) -> Result<(T, Vec<i64>)>
    where
        T: Send + 'static,
        F: FnOnce(&[AlarmRecord], &[Silence]) -> (AlarmChanges, T) + Send + 'static,
    {
        self.run("alarm cycle", move |c, db| {
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sq(db, "alarm cycle: begin"))?;
            let alarms = {
                let mut stmt = tx
                    .prepare_cached(sql::SELECT_ALARMS)
                    .map_err(sq(db, "read alarms"))?;
                collect(db, "read alarms", "alarms", &mut stmt, [], rows::alarm)?
            };
            let silences = {
                let op = "read silences";
                let mut stmt = tx
                    .prepare_cached(&sql::sqlite(sql::SELECT_SILENCES))
                    .map_err(sq(db, op))?;
                collect(
                    db,
                    op,
                    "silences",
                    &mut stmt,
                    params![to_db(now_ms)],
                    rows::silence,
                )?
            };
            let (changes, out) = evaluate(&alarms, &silences);
            let ids = write_alarm_changes(&tx, db, &changes, now_ms)?;
            tx.commit().map_err(sq(db, "alarm cycle: commit"))?;
            Ok((out, ids))
        })
        .await
    }

    pub(crate) async fn add_silence(&self, s: NewSilence) -> Result<i64> {
        self.run("insert into silences", move |c, db| {
            c.query_row(
                &sql::sqlite(sql::INSERT_SILENCE),
                params![
                    s.matcher.kind.map(|k| k.as_str()),
                    s.matcher.cluster,
                    s.matcher.subject,
                    to_db(s.created_ms),
                    to_db(s.expires_ms),
                    s.created_by,
                    s.comment
                ],
                |r| r.get(0),
            )
            .map_err(sq(db, "insert into silences"))
        })
        .await
    }

    pub(crate) async fn silences(&self, active_at_ms: u64) -> Result<Vec<Silence>> {
        self.run("read silences", move |c, db| {
            let op = "read silences";
            let mut stmt = c
                .prepare_cached(&sql::sqlite(sql::SELECT_SILENCES))
                .map_err(sq(db, op))?;
            collect(
                db,
                op,
                "silences",
                &mut stmt,
                params![to_db(active_at_ms)],
                rows::silence,
            )
        })
        .await
    }

    pub(crate) async fn delete_silence(&self, id: i64) -> Result<bool> {
        self.run("delete from silences", move |c, db| {
            c.execute(&sql::sqlite(sql::DELETE_SILENCE), params![id])
                .map(|n| n > 0)
                .map_err(sq(db, &format!("delete from silences, id {id}")))
        })
        .await
    }

    pub(crate) async fn enqueue(&self, d: NewDelivery, now_ms: u64) -> Result<i64> {
        self.run("insert into outbox", move |c, db| {
            insert_delivery(c, db, &d, now_ms)
        })
        .await
    }

    pub(crate) async fn due(&self, now_ms: u64, limit: u32) -> Result<Vec<OutboxEntry>> {
        self.run("read due outbox rows", move |c, db| {
            let op = "read due rows of outbox";
            let mut stmt = c
                .prepare_cached(&sql::sqlite(&sql::select_due()))
                .map_err(sq(db, op))?;
            collect(
                db,
                op,
                "outbox",
                &mut stmt,
                params![to_db(now_ms), i64::from(limit)],
                rows::outbox,
            )
        })
        .await
    }

    pub(crate) async fn claim_due(
        &self,
        now_ms: u64,
        lease_until_ms: u64,
        limit: u32,
    ) -> Result<Vec<OutboxEntry>> {
        self.run("claim due outbox rows", move |c, db| {
            let op = "claim due rows of outbox";
            let tx = c
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(sq(db, op))?;
            let mut out = {
                let mut stmt = tx
                    .prepare_cached(&sql::sqlite(&sql::claim_due("")))
                    .map_err(sq(db, op))?;
                collect(
                    db,
                    op,
                    "outbox",
                    &mut stmt,
                    params![to_db(now_ms), to_db(lease_until_ms), i64::from(limit)],
                    rows::outbox,
                )?
            };
            tx.commit().map_err(sq(db, op))?;
            out.sort_by_key(|e| e.id);
            Ok(out)
        })
        .await
    }

    pub(crate) async fn mark_delivered(&self, id: i64, now_ms: u64) -> Result<bool> {
        self.run("mark outbox row delivered", move |c, db| {
            c.execute(
                &sql::sqlite(sql::MARK_DELIVERED),
                params![id, to_db(now_ms)],
            )
            .map(|n| n > 0)
            .map_err(sq(db, &format!("mark outbox row {id} delivered")))
        })
        .await
    }

    pub(crate) async fn reschedule(&self, id: i64, next_ms: u64, error: String) -> Result<bool> {
        self.run("reschedule outbox row", move |c, db| {
            c.execute(
                &sql::sqlite(sql::RESCHEDULE),
                params![id, to_db(next_ms), error],
            )
            .map(|n| n > 0)
            .map_err(sq(db, &format!("reschedule outbox row {id}")))
        })
        .await
    }

    pub(crate) async fn delivery(&self, id: i64) -> Result<Option<OutboxEntry>> {
        self.run("read outbox row", move |c, db| {
            let op = format!("read outbox row {id}");
            let mut stmt = c
                .prepare_cached(&sql::sqlite(&sql::select_delivery()))
                .map_err(sq(db, &op))?;
            Ok(collect(db, &op, "outbox", &mut stmt, params![id], rows::outbox)?.pop())
        })
        .await
    }

    pub(crate) async fn recent_outbox(&self, limit: u32) -> Result<Vec<OutboxEntry>> {
        self.run("read outbox", move |c, db| {
            let op = "read outbox";
            let mut stmt = c
                .prepare_cached(&sql::sqlite(&sql::select_recent_outbox()))
                .map_err(sq(db, op))?;
            collect(
                db,
                op,
                "outbox",
                &mut stmt,
                params![i64::from(limit)],
                rows::outbox,
            )
        })
        .await
    }
}

/// Writes one alarm cycle's changes inside the caller's transaction; returns the new outbox ids.
fn write_alarm_changes(
    tx: &Connection,
    db: &str,
    changes: &AlarmChanges,
    now_ms: u64,
) -> Result<Vec<i64>> {
    for a in &changes.upserts {
        let (kind, cluster, subject) = key_columns(&a.key());
        tx.execute(
            &sql::sqlite(sql::UPSERT_ALARM),
            params![
                kind,
                cluster,
                subject,
                a.state.as_str(),
                to_db(a.since_ms),
                a.last_notified_ms.map(to_db),
                a.notified,
                a.severity.as_str(),
                json(&a.finding),
                to_db(now_ms)
            ],
        )
        .map_err(sq(db, &format!("upsert into alarms, key {}", a.key())))?;
    }
    for key in &changes.removals {
        let (kind, cluster, subject) = key_columns(key);
        tx.execute(
            &sql::sqlite(sql::DELETE_ALARM),
            params![kind, cluster, subject],
        )
        .map_err(sq(db, &format!("delete from alarms, key {key}")))?;
    }
    let mut ids = Vec::with_capacity(changes.deliveries.len());
    for d in &changes.deliveries {
        ids.push(insert_delivery(tx, db, d, now_ms)?);
    }
    Ok(ids)
}

fn insert_delivery(c: &Connection, db: &str, d: &NewDelivery, now_ms: u64) -> Result<i64> {
    c.query_row(
        &sql::sqlite(sql::INSERT_DELIVERY),
        params![d.channel, d.alarm_key, d.payload.to_string(), to_db(now_ms)],
        |r| r.get(0),
    )
    .map_err(sq(
        db,
        &format!(
            "insert into outbox (channel {}, alarm {})",
            d.channel, d.alarm_key
        ),
    ))
}

/// The rollup table of a resolution.
pub(crate) fn table_of(res: Resolution) -> &'static str {
    match res {
        Resolution::Hour => "series_hour",
        Resolution::Day => "series_day",
    }
}

/// A value as stored JSON text (serialising mqwatch's own types cannot fail).
pub(crate) fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("{{\"unserialisable\":\"{e}\"}}"))
}

fn migrate(conn: &mut Connection, db: &str) -> Result<()> {
    let op = "migrate schema";
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sq(db, op))?;
    tx.execute_batch(sql::SCHEMA_VERSION_TABLE)
        .map_err(sq(db, "create schema_version"))?;
    let current: i64 = tx
        .query_row(sql::CURRENT_VERSION, [], |r| r.get(0))
        .map_err(sq(db, "read schema_version"))?;
    let known = sql::SQLITE_MIGRATIONS.last().map_or(0, |m| m.0);
    if current > known {
        return Err(StoreError::SchemaTooNew {
            db: db.to_string(),
            found: current,
            known,
        });
    }
    for (version, statements) in sql::SQLITE_MIGRATIONS.iter().filter(|m| m.0 > current) {
        tx.execute_batch(statements)
            .map_err(sq(db, &format!("migration {version}")))?;
        tx.execute(
            &sql::sqlite(sql::RECORD_VERSION),
            params![version, wall_ms()],
        )
        .map_err(sq(
            db,
            &format!("record migration {version} in schema_version"),
        ))?;
        tracing::info!(db, version, "store migrated");
    }
    tx.commit().map_err(sq(db, op))
}
