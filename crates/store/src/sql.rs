//! The SQL both backends run, written once in PostgreSQL's `$n` placeholder style ([`sqlite`] turns it into
//! SQLite's `?n`), and the versioned migrations, one list per backend because their DDL differs in types only.
//! A migration is never edited once released: a change is a new version appended to both lists.

/// PostgreSQL's `$n` placeholders as SQLite's `?n` (the statements here use `$` for nothing else).
pub(crate) fn sqlite(sql: &str) -> String {
    sql.replace('$', "?")
}

/// The table that records which migrations ran (both backends).
pub(crate) const SCHEMA_VERSION_TABLE: &str = "CREATE TABLE IF NOT EXISTS schema_version (
    version BIGINT PRIMARY KEY,
    applied_ms BIGINT NOT NULL
)";
/// The version the database is at (0 when none ran).
pub(crate) const CURRENT_VERSION: &str = "SELECT COALESCE(MAX(version), 0) FROM schema_version";
/// Records a migration.
pub(crate) const RECORD_VERSION: &str =
    "INSERT INTO schema_version (version, applied_ms) VALUES ($1, $2)";

/// SQLite migrations: (version, statements), in order.
pub(crate) const SQLITE_MIGRATIONS: &[(i64, &str)] = &[(
    1,
    "CREATE TABLE series_minute (
        cluster TEXT NOT NULL, metric TEXT NOT NULL, subject TEXT NOT NULL,
        minute_ms INTEGER NOT NULL, value REAL NOT NULL,
        PRIMARY KEY (cluster, metric, subject, minute_ms)
    ) WITHOUT ROWID;
    CREATE INDEX series_minute_time ON series_minute (minute_ms);
    CREATE TABLE series_hour (
        cluster TEXT NOT NULL, metric TEXT NOT NULL, subject TEXT NOT NULL, bucket_ms INTEGER NOT NULL,
        value_avg REAL NOT NULL, value_min REAL NOT NULL, value_max REAL NOT NULL, value_sum REAL NOT NULL,
        samples INTEGER NOT NULL,
        PRIMARY KEY (cluster, metric, subject, bucket_ms)
    ) WITHOUT ROWID;
    CREATE INDEX series_hour_time ON series_hour (bucket_ms);
    CREATE TABLE series_day (
        cluster TEXT NOT NULL, metric TEXT NOT NULL, subject TEXT NOT NULL, bucket_ms INTEGER NOT NULL,
        value_avg REAL NOT NULL, value_min REAL NOT NULL, value_max REAL NOT NULL, value_sum REAL NOT NULL,
        samples INTEGER NOT NULL,
        PRIMARY KEY (cluster, metric, subject, bucket_ms)
    ) WITHOUT ROWID;
    CREATE INDEX series_day_time ON series_day (bucket_ms);
    CREATE TABLE findings (
        at_ms INTEGER NOT NULL, cluster TEXT NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL,
        severity TEXT NOT NULL, finding TEXT NOT NULL,
        PRIMARY KEY (cluster, at_ms, kind, subject)
    );
    CREATE INDEX findings_time ON findings (at_ms);
    CREATE INDEX findings_kind ON findings (kind, at_ms);
    CREATE TABLE alarms (
        kind TEXT NOT NULL, cluster TEXT NOT NULL, subject TEXT NOT NULL,
        state TEXT NOT NULL, since_ms INTEGER NOT NULL, last_notified_ms INTEGER,
        notified INTEGER NOT NULL, severity TEXT NOT NULL, finding TEXT NOT NULL, updated_ms INTEGER NOT NULL,
        PRIMARY KEY (kind, cluster, subject)
    );
    CREATE TABLE silences (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        kind TEXT, cluster TEXT, subject TEXT,
        created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,
        created_by TEXT NOT NULL, comment TEXT NOT NULL
    );
    CREATE INDEX silences_expiry ON silences (expires_ms);
    CREATE TABLE outbox (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        channel TEXT NOT NULL, alarm_key TEXT NOT NULL, payload TEXT NOT NULL,
        created_ms INTEGER NOT NULL, attempts INTEGER NOT NULL, next_attempt_ms INTEGER NOT NULL,
        delivered_ms INTEGER, last_error TEXT
    );
    CREATE INDEX outbox_due ON outbox (next_attempt_ms) WHERE delivered_ms IS NULL;
    CREATE INDEX outbox_pending_key ON outbox (channel, alarm_key, id) WHERE delivered_ms IS NULL;
    CREATE INDEX outbox_delivered ON outbox (delivered_ms) WHERE delivered_ms IS NOT NULL;",
)];

/// PostgreSQL migrations: (version, statements), in order; the same tables as [`SQLITE_MIGRATIONS`].
pub(crate) const POSTGRES_MIGRATIONS: &[(i64, &str)] = &[(
    1,
    "CREATE TABLE series_minute (
        cluster TEXT NOT NULL, metric TEXT NOT NULL, subject TEXT NOT NULL,
        minute_ms BIGINT NOT NULL, value DOUBLE PRECISION NOT NULL,
        PRIMARY KEY (cluster, metric, subject, minute_ms)
    );
    CREATE INDEX series_minute_time ON series_minute (minute_ms);
    CREATE TABLE series_hour (
        cluster TEXT NOT NULL, metric TEXT NOT NULL, subject TEXT NOT NULL, bucket_ms BIGINT NOT NULL,
        value_avg DOUBLE PRECISION NOT NULL, value_min DOUBLE PRECISION NOT NULL,
        value_max DOUBLE PRECISION NOT NULL, value_sum DOUBLE PRECISION NOT NULL,
        samples BIGINT NOT NULL,
        PRIMARY KEY (cluster, metric, subject, bucket_ms)
    );
    CREATE INDEX series_hour_time ON series_hour (bucket_ms);
    CREATE TABLE series_day (
        cluster TEXT NOT NULL, metric TEXT NOT NULL, subject TEXT NOT NULL, bucket_ms BIGINT NOT NULL,
        value_avg DOUBLE PRECISION NOT NULL, value_min DOUBLE PRECISION NOT NULL,
        value_max DOUBLE PRECISION NOT NULL, value_sum DOUBLE PRECISION NOT NULL,
        samples BIGINT NOT NULL,
        PRIMARY KEY (cluster, metric, subject, bucket_ms)
    );
    CREATE INDEX series_day_time ON series_day (bucket_ms);
    CREATE TABLE findings (
        at_ms BIGINT NOT NULL, cluster TEXT NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL,
        severity TEXT NOT NULL, finding TEXT NOT NULL,
        PRIMARY KEY (cluster, at_ms, kind, subject)
    );
    CREATE INDEX findings_time ON findings (at_ms);
    CREATE INDEX findings_kind ON findings (kind, at_ms);
    CREATE TABLE alarms (
        kind TEXT NOT NULL, cluster TEXT NOT NULL, subject TEXT NOT NULL,
        state TEXT NOT NULL, since_ms BIGINT NOT NULL, last_notified_ms BIGINT,
        notified BOOLEAN NOT NULL, severity TEXT NOT NULL, finding TEXT NOT NULL, updated_ms BIGINT NOT NULL,
        PRIMARY KEY (kind, cluster, subject)
    );
    CREATE TABLE silences (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        kind TEXT, cluster TEXT, subject TEXT,
        created_ms BIGINT NOT NULL, expires_ms BIGINT NOT NULL,
        created_by TEXT NOT NULL, comment TEXT NOT NULL
    );
    CREATE INDEX silences_expiry ON silences (expires_ms);
    CREATE TABLE outbox (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        channel TEXT NOT NULL, alarm_key TEXT NOT NULL, payload TEXT NOT NULL,
        created_ms BIGINT NOT NULL, attempts BIGINT NOT NULL, next_attempt_ms BIGINT NOT NULL,
        delivered_ms BIGINT, last_error TEXT
    );
    CREATE INDEX outbox_due ON outbox (next_attempt_ms) WHERE delivered_ms IS NULL;
    CREATE INDEX outbox_pending_key ON outbox (channel, alarm_key, id) WHERE delivered_ms IS NULL;
    CREATE INDEX outbox_delivered ON outbox (delivered_ms) WHERE delivered_ms IS NOT NULL;",
)];

/// Upserts one minute row (SQLite, in a loop inside one transaction).
pub(crate) const UPSERT_MINUTE: &str =
    "INSERT INTO series_minute (cluster, metric, subject, minute_ms, value)
    VALUES ($1, $2, $3, $4, $5)
    ON CONFLICT (cluster, metric, subject, minute_ms) DO UPDATE SET value = excluded.value";

/// Upserts a batch of minute rows from five parallel arrays (PostgreSQL; keys must be distinct).
pub(crate) const UPSERT_MINUTES_UNNEST: &str =
    "INSERT INTO series_minute (cluster, metric, subject, minute_ms, value)
    SELECT * FROM UNNEST($1::text[], $2::text[], $3::text[], $4::bigint[], $5::float8[])
    ON CONFLICT (cluster, metric, subject, minute_ms) DO UPDATE SET value = excluded.value";

/// Minute rows of one metric (one subject or all) in `[$4, $5)`.
pub(crate) const SELECT_MINUTES: &str =
    "SELECT cluster, metric, subject, minute_ms, value FROM series_minute
    WHERE cluster = $1 AND metric = $2 AND (CAST($3 AS TEXT) IS NULL OR subject = $3)
      AND minute_ms >= $4 AND minute_ms < $5
    ORDER BY subject, minute_ms";

/// Minute rows of one subject of one metric in `[$4, $5)`: an equality on `subject`, so both backends walk the
/// primary key of that one series (the `IS NULL OR` form above makes SQLite scan every subject of the metric).
pub(crate) const SELECT_MINUTES_OF_SUBJECT: &str =
    "SELECT cluster, metric, subject, minute_ms, value FROM series_minute
    WHERE cluster = $1 AND metric = $2 AND subject = $3 AND minute_ms >= $4 AND minute_ms < $5
    ORDER BY minute_ms";

/// Recomputes hour buckets in `[$1, $2)` from minute rows.
pub(crate) const ROLL_UP_HOURS: &str = "INSERT INTO series_hour
        (cluster, metric, subject, bucket_ms, value_avg, value_min, value_max, value_sum, samples)
    SELECT cluster, metric, subject, (minute_ms / 3600000) * 3600000,
        AVG(value), MIN(value), MAX(value), SUM(value), COUNT(*)
    FROM series_minute WHERE minute_ms >= $1 AND minute_ms < $2
    GROUP BY cluster, metric, subject, (minute_ms / 3600000) * 3600000
    ON CONFLICT (cluster, metric, subject, bucket_ms) DO UPDATE SET
        value_avg = excluded.value_avg, value_min = excluded.value_min, value_max = excluded.value_max,
        value_sum = excluded.value_sum, samples = excluded.samples";

/// Recomputes day buckets in `[$1, $2)` from hour rows.
pub(crate) const ROLL_UP_DAYS: &str = "INSERT INTO series_day
        (cluster, metric, subject, bucket_ms, value_avg, value_min, value_max, value_sum, samples)
    SELECT cluster, metric, subject, (bucket_ms / 86400000) * 86400000,
        SUM(value_sum) / CAST(SUM(samples) AS DOUBLE PRECISION), MIN(value_min), MAX(value_max),
        SUM(value_sum), CAST(SUM(samples) AS BIGINT)
    FROM series_hour WHERE bucket_ms >= $1 AND bucket_ms < $2
    GROUP BY cluster, metric, subject, (bucket_ms / 86400000) * 86400000
    ON CONFLICT (cluster, metric, subject, bucket_ms) DO UPDATE SET
        value_avg = excluded.value_avg, value_min = excluded.value_min, value_max = excluded.value_max,
        value_sum = excluded.value_sum, samples = excluded.samples";

/// Rollup rows of `table` (`series_hour` or `series_day`) for one metric in `[$4, $5)`.
pub(crate) fn select_rollups(table: &str) -> String {
    format!(
        "SELECT cluster, metric, subject, bucket_ms, value_avg, value_min, value_max, value_sum, samples
        FROM {table}
        WHERE cluster = $1 AND metric = $2 AND (CAST($3 AS TEXT) IS NULL OR subject = $3)
          AND bucket_ms >= $4 AND bucket_ms < $5
        ORDER BY subject, bucket_ms"
    )
}

/// Retention deletes, each with `$1` = the cut-off (ms): (table, statement).
pub(crate) const DELETE_MINUTES: &str = "DELETE FROM series_minute WHERE minute_ms < $1";
/// Deletes hour rollups older than `$1`.
pub(crate) const DELETE_HOURS: &str = "DELETE FROM series_hour WHERE bucket_ms < $1";
/// Deletes day rollups older than `$1`.
pub(crate) const DELETE_DAYS: &str = "DELETE FROM series_day WHERE bucket_ms < $1";
/// Deletes findings recorded before `$1`.
pub(crate) const DELETE_FINDINGS: &str = "DELETE FROM findings WHERE at_ms < $1";
/// Deletes outbox rows delivered before `$1`.
pub(crate) const DELETE_DELIVERED: &str =
    "DELETE FROM outbox WHERE delivered_ms IS NOT NULL AND delivered_ms < $1";
/// Deletes silences that expired before `$1`.
pub(crate) const DELETE_SILENCES: &str = "DELETE FROM silences WHERE expires_ms < $1";

/// Upserts one finding of one cycle.
pub(crate) const UPSERT_FINDING: &str =
    "INSERT INTO findings (at_ms, cluster, kind, subject, severity, finding)
    VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (cluster, at_ms, kind, subject) DO UPDATE SET
        severity = excluded.severity, finding = excluded.finding";

/// Findings history, newest first.
pub(crate) const SELECT_FINDINGS: &str = "SELECT at_ms, finding FROM findings
    WHERE (CAST($1 AS TEXT) IS NULL OR cluster = $1) AND (CAST($2 AS TEXT) IS NULL OR kind = $2)
      AND at_ms >= $3 AND at_ms < $4
    ORDER BY at_ms DESC, cluster, kind, subject
    LIMIT $5";

/// Inserts or replaces one alarm row.
pub(crate) const UPSERT_ALARM: &str = "INSERT INTO alarms
        (kind, cluster, subject, state, since_ms, last_notified_ms, notified, severity, finding, updated_ms)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
    ON CONFLICT (kind, cluster, subject) DO UPDATE SET
        state = excluded.state, since_ms = excluded.since_ms, last_notified_ms = excluded.last_notified_ms,
        notified = excluded.notified, severity = excluded.severity, finding = excluded.finding,
        updated_ms = excluded.updated_ms";

/// Deletes one alarm row.
pub(crate) const DELETE_ALARM: &str =
    "DELETE FROM alarms WHERE kind = $1 AND cluster = $2 AND subject = $3";

/// Every alarm row.
pub(crate) const SELECT_ALARMS: &str =
    "SELECT kind, cluster, subject, state, since_ms, last_notified_ms, notified,
        severity, finding
    FROM alarms ORDER BY cluster, kind, subject";

/// Adds a silence, returning its id.
pub(crate) const INSERT_SILENCE: &str = "INSERT INTO silences
        (kind, cluster, subject, created_ms, expires_ms, created_by, comment)
    VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id";

/// Silences that have not expired at `$1` (pass 0 for every silence).
pub(crate) const SELECT_SILENCES: &str =
    "SELECT id, kind, cluster, subject, created_ms, expires_ms, created_by,
        comment
    FROM silences WHERE expires_ms > $1 ORDER BY id";

/// Deletes one silence.
pub(crate) const DELETE_SILENCE: &str = "DELETE FROM silences WHERE id = $1";

/// The outbox columns, in the order the row decoder reads them.
pub(crate) const OUTBOX_COLUMNS: &str = "id, channel, alarm_key, payload, created_ms, attempts, next_attempt_ms, \
     delivered_ms, last_error";

/// Enqueues a delivery due at once, returning its id.
pub(crate) const INSERT_DELIVERY: &str = "INSERT INTO outbox
        (channel, alarm_key, payload, created_ms, attempts, next_attempt_ms)
    VALUES ($1, $2, $3, $4, 0, $4) RETURNING id";

/// Undelivered rows due at `$1`, oldest first, at most `$2`.
pub(crate) fn select_due() -> String {
    format!(
        "SELECT {OUTBOX_COLUMNS} FROM outbox WHERE delivered_ms IS NULL AND next_attempt_ms <= $1
        ORDER BY id LIMIT $2"
    )
}

/// Claims due rows: moves their next attempt to `$2` (a lease) and returns them. A row waits while an older
/// undelivered row of its channel and alarm key exists, so one alarm's notifications reach a channel in order.
/// `lock` is PostgreSQL's `FOR UPDATE SKIP LOCKED` (so instances sharing one database never claim one row
/// twice), empty for SQLite.
pub(crate) fn claim_due(lock: &str) -> String {
    format!(
        "UPDATE outbox SET next_attempt_ms = $2 WHERE id IN (
            SELECT o.id FROM outbox o
            WHERE o.delivered_ms IS NULL AND o.next_attempt_ms <= $1
              AND NOT EXISTS (
                SELECT 1 FROM outbox e
                WHERE e.channel = o.channel AND e.alarm_key = o.alarm_key AND e.delivered_ms IS NULL
                  AND e.id < o.id)
            ORDER BY o.id LIMIT $3 {lock})
        RETURNING {OUTBOX_COLUMNS}"
    )
}

/// Marks a row delivered (only if it was not already).
pub(crate) const MARK_DELIVERED: &str =
    "UPDATE outbox SET delivered_ms = $2, attempts = attempts + 1,
        last_error = NULL
    WHERE id = $1 AND delivered_ms IS NULL";

/// Records a failed attempt and when to try again (only if not delivered).
pub(crate) const RESCHEDULE: &str =
    "UPDATE outbox SET attempts = attempts + 1, next_attempt_ms = $2,
        last_error = $3
    WHERE id = $1 AND delivered_ms IS NULL";

/// One outbox row by id.
pub(crate) fn select_delivery() -> String {
    format!("SELECT {OUTBOX_COLUMNS} FROM outbox WHERE id = $1")
}

/// The newest `$1` outbox rows, newest first.
pub(crate) fn select_recent_outbox() -> String {
    format!("SELECT {OUTBOX_COLUMNS} FROM outbox ORDER BY id DESC LIMIT $1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrations_are_numbered_from_one_without_gaps_and_both_backends_agree() {
        for list in [SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS] {
            for (i, (v, _)) in list.iter().enumerate() {
                assert_eq!(*v, i as i64 + 1);
            }
        }
        assert_eq!(SQLITE_MIGRATIONS.len(), POSTGRES_MIGRATIONS.len());
        assert_eq!(sqlite("a = $1 AND b = $12"), "a = ?1 AND b = ?12");
    }
}
