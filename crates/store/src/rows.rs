//! Decoding rows into [`types`](crate::types) values, once for both backends: [`Cells`] is the little each driver
//! must provide (typed cell access by column index), and the decoders read the columns the queries in
//! [`sql`](crate::sql) select, in their order.

use crate::types::{
    AlarmRecord, FindingRecord, OutboxEntry, Rollup, SeriesPoint, Silence, SilenceMatcher,
};
use mqwatch_model::{Finding, FindingKind, Severity};

/// Why a row does not decode, and which row.
#[derive(Debug)]
pub(crate) struct BadCell {
    /// The row's key, as far as it was read.
    pub key: String,
    /// Why.
    pub reason: String,
}

type Cell<T> = Result<T, String>;

/// Typed access to a row's cells by index.
pub(crate) trait Cells {
    fn i64(&self, idx: usize) -> Cell<i64>;
    fn opt_i64(&self, idx: usize) -> Cell<Option<i64>>;
    fn f64(&self, idx: usize) -> Cell<f64>;
    fn text(&self, idx: usize) -> Cell<String>;
    fn opt_text(&self, idx: usize) -> Cell<Option<String>>;
    fn bool(&self, idx: usize) -> Cell<bool>;
}

impl Cells for rusqlite::Row<'_> {
    fn i64(&self, idx: usize) -> Cell<i64> {
        self.get(idx).map_err(|e| e.to_string())
    }
    fn opt_i64(&self, idx: usize) -> Cell<Option<i64>> {
        self.get(idx).map_err(|e| e.to_string())
    }
    fn f64(&self, idx: usize) -> Cell<f64> {
        self.get(idx).map_err(|e| e.to_string())
    }
    fn text(&self, idx: usize) -> Cell<String> {
        self.get(idx).map_err(|e| e.to_string())
    }
    fn opt_text(&self, idx: usize) -> Cell<Option<String>> {
        self.get(idx).map_err(|e| e.to_string())
    }
    fn bool(&self, idx: usize) -> Cell<bool> {
        self.get(idx).map_err(|e| e.to_string())
    }
}

impl Cells for tokio_postgres::Row {
    fn i64(&self, idx: usize) -> Cell<i64> {
        self.try_get(idx).map_err(|e| e.to_string())
    }
    fn opt_i64(&self, idx: usize) -> Cell<Option<i64>> {
        self.try_get(idx).map_err(|e| e.to_string())
    }
    fn f64(&self, idx: usize) -> Cell<f64> {
        self.try_get(idx).map_err(|e| e.to_string())
    }
    fn text(&self, idx: usize) -> Cell<String> {
        self.try_get(idx).map_err(|e| e.to_string())
    }
    fn opt_text(&self, idx: usize) -> Cell<Option<String>> {
        self.try_get(idx).map_err(|e| e.to_string())
    }
    fn bool(&self, idx: usize) -> Cell<bool> {
        self.try_get(idx).map_err(|e| e.to_string())
    }
}

/// Milliseconds as stored (BIGINT): saturates at `i64::MAX` (year 292 million).
pub(crate) fn to_db(ms: u64) -> i64 {
    i64::try_from(ms).unwrap_or(i64::MAX)
}

/// Milliseconds as read back; a negative value (never written by mqwatch) reads as 0.
pub(crate) fn from_db(ms: i64) -> u64 {
    u64::try_from(ms).unwrap_or(0)
}

fn bad(key: impl Into<String>) -> impl FnOnce(String) -> BadCell {
    let key = key.into();
    move |reason| BadCell { key, reason }
}

pub(crate) fn series_point(r: &dyn Cells) -> Result<SeriesPoint, BadCell> {
    let b = || bad("series point");
    Ok(SeriesPoint {
        cluster: r.text(0).map_err(b())?,
        metric: r.text(1).map_err(b())?,
        subject: r.text(2).map_err(b())?,
        minute_ms: from_db(r.i64(3).map_err(b())?),
        value: r.f64(4).map_err(b())?,
    })
}

pub(crate) fn rollup(r: &dyn Cells) -> Result<Rollup, BadCell> {
    let b = || bad("rollup");
    Ok(Rollup {
        cluster: r.text(0).map_err(b())?,
        metric: r.text(1).map_err(b())?,
        subject: r.text(2).map_err(b())?,
        bucket_ms: from_db(r.i64(3).map_err(b())?),
        avg: r.f64(4).map_err(b())?,
        min: r.f64(5).map_err(b())?,
        max: r.f64(6).map_err(b())?,
        sum: r.f64(7).map_err(b())?,
        count: from_db(r.i64(8).map_err(b())?),
    })
}

fn finding_json(text: &str, key: &str) -> Result<Finding, BadCell> {
    serde_json::from_str(text).map_err(|e| BadCell {
        key: key.to_string(),
        reason: format!("finding JSON: {e}"),
    })
}

pub(crate) fn finding_record(r: &dyn Cells) -> Result<FindingRecord, BadCell> {
    let at_ms = from_db(r.i64(0).map_err(bad("finding"))?);
    let text = r.text(1).map_err(bad(format!("finding at {at_ms}")))?;
    Ok(FindingRecord {
        at_ms,
        finding: finding_json(&text, &format!("finding at {at_ms}"))?,
    })
}

pub(crate) fn alarm(r: &dyn Cells) -> Result<AlarmRecord, BadCell> {
    let kind = r.text(0).map_err(bad("alarm"))?;
    let cluster = r.text(1).map_err(bad("alarm"))?;
    let subject = r.text(2).map_err(bad("alarm"))?;
    let key = format!("{kind}/{cluster}/{subject}");
    let b = || bad(key.clone());
    let state = r.text(3).map_err(b())?.parse().map_err(b())?;
    let severity: Severity = serde_json::from_value(serde_json::Value::String(
        r.text(7).map_err(b())?,
    ))
    .map_err(|e| BadCell {
        key: key.clone(),
        reason: format!("severity: {e}"),
    })?;
    let finding = finding_json(&r.text(8).map_err(b())?, &key)?;
    if finding.kind.as_str() != kind || finding.cluster != cluster {
        return Err(BadCell {
            key,
            reason: "the finding JSON names another alarm key".into(),
        });
    }
    Ok(AlarmRecord {
        state,
        since_ms: from_db(r.i64(4).map_err(b())?),
        last_notified_ms: r.opt_i64(5).map_err(b())?.map(from_db),
        notified: r.bool(6).map_err(b())?,
        severity,
        finding,
    })
}

pub(crate) fn silence(r: &dyn Cells) -> Result<Silence, BadCell> {
    let id = r.i64(0).map_err(bad("silence"))?;
    let b = || bad(format!("silence {id}"));
    let kind = match r.opt_text(1).map_err(b())? {
        Some(k) => Some(k.parse::<FindingKind>().map_err(|e| BadCell {
            key: format!("silence {id}"),
            reason: e.to_string(),
        })?),
        None => None,
    };
    Ok(Silence {
        id,
        matcher: SilenceMatcher {
            kind,
            cluster: r.opt_text(2).map_err(b())?,
            subject: r.opt_text(3).map_err(b())?,
        },
        created_ms: from_db(r.i64(4).map_err(b())?),
        expires_ms: from_db(r.i64(5).map_err(b())?),
        created_by: r.text(6).map_err(b())?,
        comment: r.text(7).map_err(b())?,
    })
}

pub(crate) fn outbox(r: &dyn Cells) -> Result<OutboxEntry, BadCell> {
    let id = r.i64(0).map_err(bad("delivery"))?;
    let b = || bad(format!("delivery {id}"));
    let payload = r.text(3).map_err(b())?;
    Ok(OutboxEntry {
        id,
        channel: r.text(1).map_err(b())?,
        alarm_key: r.text(2).map_err(b())?,
        payload: serde_json::from_str(&payload).map_err(|e| BadCell {
            key: format!("delivery {id}"),
            reason: format!("payload JSON: {e}"),
        })?,
        created_ms: from_db(r.i64(4).map_err(b())?),
        attempts: u32::try_from(r.i64(5).map_err(b())?).unwrap_or(u32::MAX),
        next_attempt_ms: from_db(r.i64(6).map_err(b())?),
        delivered_ms: r.opt_i64(7).map_err(b())?.map(from_db),
        last_error: r.opt_text(8).map_err(b())?,
    })
}
