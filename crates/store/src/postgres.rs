//! The PostgreSQL backend, for several mqwatch instances sharing one history: one tokio-postgres connection per
//! store (reconnected on the next call after it drops), migrations serialised across instances by an advisory
//! lock, outbox claims with `FOR UPDATE SKIP LOCKED` so two instances never deliver one row twice.

use crate::error::{Result, StoreError};
use crate::rows::{self, BadCell, Cells, to_db};
use crate::sql;
use crate::sqlite::{bad_row, json, table_of};
use crate::types::{
    AlarmChanges, AlarmRecord, FindingQuery, FindingRecord, NewDelivery, NewSilence, OutboxEntry,
    Resolution, Retention, RetentionReport, Rollup, SeriesPoint, SeriesQuery, Silence, key_columns,
};
use mqwatch_model::Finding;
use std::sync::Arc;
use tokio::sync::{Mutex, MutexGuard};
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, GenericClient, NoTls};

/// Any 64-bit number names mqwatch's migration lock; this one spells "mqwatch" in ASCII.
const MIGRATION_LOCK: i64 = 0x006d_7177_6174_6368;
/// The advisory lock one alarm cycle holds for its transaction ("mqalarm" in ASCII).
const ALARM_LOCK: i64 = 0x006d_7161_6c61_726d;

/// A PostgreSQL store; clones share the connection.
#[derive(Clone)]
pub(crate) struct PgStore {
    db: Arc<str>,
    url: Arc<str>,
    client: Arc<Mutex<Client>>,
}

fn pg(db: &str, op: &str) -> impl FnOnce(tokio_postgres::Error) -> StoreError {
    let (db, op) = (db.to_string(), op.to_string());
    move |e| StoreError::postgres(&db, op, e)
}

fn decode_all<T>(
    db: &str,
    table: &'static str,
    rows: Vec<tokio_postgres::Row>,
    decode: fn(&dyn Cells) -> Result<T, BadCell>,
) -> Result<Vec<T>> {
    rows.iter()
        .map(|r| decode(r).map_err(|b| bad_row(db, table, b)))
        .collect()
}

async fn connect(url: &str, db: &str) -> Result<Client> {
    let (client, connection) = tokio_postgres::connect(url, NoTls)
        .await
        .map_err(pg(db, "connect"))?;
    let name = db.to_string();
    tokio::spawn(async move {
        if let Err(e) = connection.await {
            tracing::warn!(db = %name, error = %e, "PostgreSQL connection ended");
        }
    });
    Ok(client)
}

impl PgStore {
    /// Connects to `url` (shown as `db`) and brings the schema up to date.
    pub(crate) async fn open(url: &str, db: &str) -> Result<Self> {
        let mut client = connect(url, db).await?;
        migrate(&mut client, db).await?;
        Ok(Self {
            db: db.into(),
            url: url.into(),
            client: Arc::new(Mutex::new(client)),
        })
    }

    /// The database URL without password.
    pub(crate) fn db(&self) -> &str {
        &self.db
    }

    async fn client(&self) -> Result<MutexGuard<'_, Client>> {
        let mut guard = self.client.lock().await;
        if guard.is_closed() {
            tracing::info!(db = %self.db, "reconnecting to PostgreSQL");
            *guard = connect(&self.url, &self.db).await?;
        }
        Ok(guard)
    }

    async fn query<T>(
        &self,
        op: &str,
        table: &'static str,
        statement: &str,
        params: &[&(dyn ToSql + Sync)],
        decode: fn(&dyn Cells) -> Result<T, BadCell>,
    ) -> Result<Vec<T>> {
        let db = &*self.db;
        let client = self.client().await?;
        let rows = client.query(statement, params).await.map_err(pg(db, op))?;
        decode_all(db, table, rows, decode)
    }

    async fn execute(
        &self,
        op: &str,
        statement: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64> {
        let client = self.client().await?;
        client
            .execute(statement, params)
            .await
            .map_err(pg(&self.db, op))
    }

    pub(crate) async fn schema_version(&self) -> Result<i64> {
        let client = self.client().await?;
        let row = client
            .query_one(sql::CURRENT_VERSION, &[])
            .await
            .map_err(pg(&self.db, "read schema_version"))?;
        Ok(row.get(0))
    }

    pub(crate) async fn insert_minutes(&self, points: Vec<SeriesPoint>) -> Result<()> {
        let mut clusters = Vec::with_capacity(points.len());
        let mut metrics = Vec::with_capacity(points.len());
        let mut subjects = Vec::with_capacity(points.len());
        let mut minutes = Vec::with_capacity(points.len());
        let mut values = Vec::with_capacity(points.len());
        for p in points {
            clusters.push(p.cluster);
            metrics.push(p.metric);
            subjects.push(p.subject);
            minutes.push(to_db(p.minute_ms));
            values.push(p.value);
        }
        self.execute(
            "insert into series_minute",
            sql::UPSERT_MINUTES_UNNEST,
            &[&clusters, &metrics, &subjects, &minutes, &values],
        )
        .await
        .map(drop)
    }

    pub(crate) async fn minutes(&self, q: SeriesQuery) -> Result<Vec<SeriesPoint>> {
        self.query(
            "read series_minute",
            "series_minute",
            sql::SELECT_MINUTES,
            &[
                &q.cluster,
                &q.metric,
                &q.subject,
                &to_db(q.from_ms),
                &to_db(q.to_ms),
            ],
            rows::series_point,
        )
        .await
    }

    pub(crate) async fn roll_up(&self, hours: (u64, u64), days: (u64, u64)) -> Result<()> {
        let db = &*self.db;
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(pg(db, "roll up: begin"))?;
        tx.execute(sql::ROLL_UP_HOURS, &[&to_db(hours.0), &to_db(hours.1)])
            .await
            .map_err(pg(db, "roll up series_minute into series_hour"))?;
        tx.execute(sql::ROLL_UP_DAYS, &[&to_db(days.0), &to_db(days.1)])
            .await
            .map_err(pg(db, "roll up series_hour into series_day"))?;
        tx.commit().await.map_err(pg(db, "roll up: commit"))
    }

    pub(crate) async fn rollups(&self, res: Resolution, q: SeriesQuery) -> Result<Vec<Rollup>> {
        let table = table_of(res);
        self.query(
            &format!("read {table}"),
            table,
            &sql::select_rollups(table),
            &[
                &q.cluster,
                &q.metric,
                &q.subject,
                &to_db(q.from_ms),
                &to_db(q.to_ms),
            ],
            rows::rollup,
        )
        .await
    }

    pub(crate) async fn apply_retention(
        &self,
        now_ms: u64,
        r: Retention,
    ) -> Result<RetentionReport> {
        let db = &*self.db;
        let cut = |span: mqwatch_model::Span| to_db(now_ms.saturating_sub(span.as_millis()));
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(pg(db, "retention: begin"))?;
        async fn del(
            tx: &tokio_postgres::Transaction<'_>,
            db: &str,
            statement: &str,
            table: &str,
            cutoff: i64,
        ) -> Result<u64> {
            tx.execute(statement, &[&cutoff])
                .await
                .map_err(pg(db, &format!("retention: delete from {table}")))
        }
        let report = RetentionReport {
            minutes: del(
                &tx,
                db,
                sql::DELETE_MINUTES,
                "series_minute",
                cut(r.minutes),
            )
            .await?,
            hours: del(&tx, db, sql::DELETE_HOURS, "series_hour", cut(r.hours)).await?,
            days: match r.days {
                Some(days) => del(&tx, db, sql::DELETE_DAYS, "series_day", cut(days)).await?,
                None => 0,
            },
            findings: del(&tx, db, sql::DELETE_FINDINGS, "findings", cut(r.findings)).await?,
            delivered: del(&tx, db, sql::DELETE_DELIVERED, "outbox", cut(r.delivered)).await?,
            silences: del(&tx, db, sql::DELETE_SILENCES, "silences", cut(r.findings)).await?,
        };
        tx.commit().await.map_err(pg(db, "retention: commit"))?;
        Ok(report)
    }

    pub(crate) async fn record_findings(&self, at_ms: u64, findings: Vec<Finding>) -> Result<()> {
        let db = &*self.db;
        let op = "insert into findings";
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg(db, op))?;
        let stmt = tx.prepare(sql::UPSERT_FINDING).await.map_err(pg(db, op))?;
        for f in &findings {
            let (kind, cluster, subject) = key_columns(&f.key());
            tx.execute(
                &stmt,
                &[
                    &to_db(at_ms),
                    &cluster,
                    &kind,
                    &subject,
                    &f.severity.as_str(),
                    &json(f),
                ],
            )
            .await
            .map_err(pg(db, op))?;
        }
        tx.commit().await.map_err(pg(db, op))
    }

    pub(crate) async fn findings(&self, q: FindingQuery) -> Result<Vec<FindingRecord>> {
        self.query(
            "read findings",
            "findings",
            sql::SELECT_FINDINGS,
            &[
                &q.cluster,
                &q.kind.map(|k| k.as_str()),
                &to_db(q.from_ms),
                &to_db(q.to_ms),
                &i64::from(q.limit),
            ],
            rows::finding_record,
        )
        .await
    }

    pub(crate) async fn alarms(&self) -> Result<Vec<AlarmRecord>> {
        self.query(
            "read alarms",
            "alarms",
            sql::SELECT_ALARMS,
            &[],
            rows::alarm,
        )
        .await
    }

    pub(crate) async fn apply_alarm_changes(
        &self,
        changes: AlarmChanges,
        now_ms: u64,
    ) -> Result<Vec<i64>> {
        let db = &*self.db;
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(pg(db, "apply alarm changes: begin"))?;
        let ids = write_alarm_changes(&tx, db, &changes, now_ms).await?;
        tx.commit()
            .await
            .map_err(pg(db, "apply alarm changes: commit"))?;
        Ok(ids)
    }

    pub(crate) async fn alarm_cycle<T, F>(&self, now_ms: u64, evaluate: F) -> Result<(T, Vec<i64>)>
    where
        T: Send + 'static,
        F: FnOnce(&[AlarmRecord], &[Silence]) -> (AlarmChanges, T) + Send + 'static,
    {
        let db = &*self.db;
        let mut client = self.client().await?;
        let tx = client
            .transaction()
            .await
            .map_err(pg(db, "alarm cycle: begin"))?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&ALARM_LOCK])
            .await
            .map_err(pg(db, "alarm cycle: take the alarm lock"))?;
        let alarms = decode_all(
            db,
            "alarms",
            tx.query(sql::SELECT_ALARMS, &[])
                .await
                .map_err(pg(db, "read alarms"))?,
            rows::alarm,
        )?;
        let silences = decode_all(
            db,
            "silences",
            tx.query(sql::SELECT_SILENCES, &[&to_db(now_ms)])
                .await
                .map_err(pg(db, "read silences"))?,
            rows::silence,
        )?;
        let (changes, out) = evaluate(&alarms, &silences);
        let ids = write_alarm_changes(&tx, db, &changes, now_ms).await?;
        tx.commit().await.map_err(pg(db, "alarm cycle: commit"))?;
        Ok((out, ids))
    }

    pub(crate) async fn add_silence(&self, s: NewSilence) -> Result<i64> {
        let client = self.client().await?;
        let row = client
            .query_one(
                sql::INSERT_SILENCE,
                &[
                    &s.matcher.kind.map(|k| k.as_str()),
                    &s.matcher.cluster,
                    &s.matcher.subject,
                    &to_db(s.created_ms),
                    &to_db(s.expires_ms),
                    &s.created_by,
                    &s.comment,
                ],
            )
            .await
            .map_err(pg(&self.db, "insert into silences"))?;
        Ok(row.get(0))
    }

    pub(crate) async fn silences(&self, active_at_ms: u64) -> Result<Vec<Silence>> {
        self.query(
            "read silences",
            "silences",
            sql::SELECT_SILENCES,
            &[&to_db(active_at_ms)],
            rows::silence,
        )
        .await
    }

    pub(crate) async fn delete_silence(&self, id: i64) -> Result<bool> {
        self.execute(
            &format!("delete from silences, id {id}"),
            sql::DELETE_SILENCE,
            &[&id],
        )
        .await
        .map(|n| n > 0)
    }

    pub(crate) async fn enqueue(&self, d: NewDelivery, now_ms: u64) -> Result<i64> {
        let client = self.client().await?;
        insert_delivery(&*client, &self.db, &d, now_ms).await
    }

    pub(crate) async fn due(&self, now_ms: u64, limit: u32) -> Result<Vec<OutboxEntry>> {
        self.query(
            "read due rows of outbox",
            "outbox",
            &sql::select_due(),
            &[&to_db(now_ms), &i64::from(limit)],
            rows::outbox,
        )
        .await
    }

    pub(crate) async fn claim_due(
        &self,
        now_ms: u64,
        lease_until_ms: u64,
        limit: u32,
    ) -> Result<Vec<OutboxEntry>> {
        let mut out = self
            .query(
                "claim due rows of outbox",
                "outbox",
                &sql::claim_due("FOR UPDATE SKIP LOCKED"),
                &[&to_db(now_ms), &to_db(lease_until_ms), &i64::from(limit)],
                rows::outbox,
            )
            .await?;
        out.sort_by_key(|e| e.id);
        Ok(out)
    }

    pub(crate) async fn mark_delivered(&self, id: i64, now_ms: u64) -> Result<bool> {
        self.execute(
            &format!("mark outbox row {id} delivered"),
            sql::MARK_DELIVERED,
            &[&id, &to_db(now_ms)],
        )
        .await
        .map(|n| n > 0)
    }

    pub(crate) async fn reschedule(&self, id: i64, next_ms: u64, error: String) -> Result<bool> {
        self.execute(
            &format!("reschedule outbox row {id}"),
            sql::RESCHEDULE,
            &[&id, &to_db(next_ms), &error],
        )
        .await
        .map(|n| n > 0)
    }

    pub(crate) async fn delivery(&self, id: i64) -> Result<Option<OutboxEntry>> {
        Ok(self
            .query(
                &format!("read outbox row {id}"),
                "outbox",
                &sql::select_delivery(),
                &[&id],
                rows::outbox,
            )
            .await?
            .pop())
    }

    pub(crate) async fn recent_outbox(&self, limit: u32) -> Result<Vec<OutboxEntry>> {
        self.query(
            "read outbox",
            "outbox",
            &sql::select_recent_outbox(),
            &[&i64::from(limit)],
            rows::outbox,
        )
        .await
    }
}

/// Writes one alarm cycle's changes inside the caller's transaction; returns the new outbox ids.
async fn write_alarm_changes(
    tx: &tokio_postgres::Transaction<'_>,
    db: &str,
    changes: &AlarmChanges,
    now_ms: u64,
) -> Result<Vec<i64>> {
    for a in &changes.upserts {
        let (kind, cluster, subject) = key_columns(&a.key());
        tx.execute(
            sql::UPSERT_ALARM,
            &[
                &kind,
                &cluster,
                &subject,
                &a.state.as_str(),
                &to_db(a.since_ms),
                &a.last_notified_ms.map(to_db),
                &a.notified,
                &a.severity.as_str(),
                &json(&a.finding),
                &to_db(now_ms),
            ],
        )
        .await
        .map_err(pg(db, &format!("upsert into alarms, key {}", a.key())))?;
    }
    for key in &changes.removals {
        let (kind, cluster, subject) = key_columns(key);
        tx.execute(sql::DELETE_ALARM, &[&kind, &cluster, &subject])
            .await
            .map_err(pg(db, &format!("delete from alarms, key {key}")))?;
    }
    let mut ids = Vec::with_capacity(changes.deliveries.len());
    for d in &changes.deliveries {
        ids.push(insert_delivery(tx, db, d, now_ms).await?);
    }
    Ok(ids)
}

async fn insert_delivery(
    c: &impl GenericClient,
    db: &str,
    d: &NewDelivery,
    now_ms: u64,
) -> Result<i64> {
    let row = c
        .query_one(
            sql::INSERT_DELIVERY,
            &[
                &d.channel,
                &d.alarm_key,
                &d.payload.to_string(),
                &to_db(now_ms),
            ],
        )
        .await
        .map_err(pg(
            db,
            &format!(
                "insert into outbox (channel {}, alarm {})",
                d.channel, d.alarm_key
            ),
        ))?;
    Ok(row.get(0))
}

async fn migrate(client: &mut Client, db: &str) -> Result<()> {
    let tx = client
        .transaction()
        .await
        .map_err(pg(db, "migrate schema: begin"))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(pg(db, "migrate schema: take the migration lock"))?;
    tx.batch_execute(sql::SCHEMA_VERSION_TABLE)
        .await
        .map_err(pg(db, "create schema_version"))?;
    let current: i64 = tx
        .query_one(sql::CURRENT_VERSION, &[])
        .await
        .map_err(pg(db, "read schema_version"))?
        .get(0);
    let known = sql::POSTGRES_MIGRATIONS.last().map_or(0, |m| m.0);
    if current > known {
        return Err(StoreError::SchemaTooNew {
            db: db.to_string(),
            found: current,
            known,
        });
    }
    for (version, statements) in sql::POSTGRES_MIGRATIONS.iter().filter(|m| m.0 > current) {
        tx.batch_execute(statements)
            .await
            .map_err(pg(db, &format!("migration {version}")))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        tx.execute(sql::RECORD_VERSION, &[version, &now])
            .await
            .map_err(pg(
                db,
                &format!("record migration {version} in schema_version"),
            ))?;
        tracing::info!(db, version, "store migrated");
    }
    tx.commit().await.map_err(pg(db, "migrate schema: commit"))
}
