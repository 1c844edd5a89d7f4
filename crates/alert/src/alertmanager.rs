//! The Alertmanager channel: renders alarms as Alertmanager v2 alerts (`POST <url>/api/v2/alerts`, a JSON array).
//! Labels: `alertname` (the finding kind), `cluster`, `subject`, `severity`; annotations: `summary` (the finding's
//! message) and `key`. A firing alert carries `startsAt` and no `endsAt`, so Alertmanager keeps it for its
//! `resolve_timeout` (5m by default): the deliverer re-posts every firing, notified alarm at least every channel
//! `resend` (default 1m). A resolve carries `endsAt`, which ends the alert at once.

use crate::lifecycle::{Event, Notification};
use mqwatch_model::{Finding, Severity};
use mqwatch_store::AlarmRecord;
use serde_json::{Value, json};

/// One Alertmanager alert for an alarm as a notification tells it.
pub fn alert_of_notification(n: &Notification) -> Value {
    match n.event {
        Event::Firing | Event::Repeat => firing(&n.finding, n.severity, &n.key, n.since_ms),
        Event::Resolved => {
            let mut alert = base(&n.finding, n.severity, &n.key);
            alert["endsAt"] = json!(rfc3339(n.since_ms));
            alert
        }
    }
}

/// One Alertmanager alert for a firing alarm row (the re-post).
pub fn alert_of_alarm(alarm: &AlarmRecord) -> Value {
    firing(
        &alarm.finding,
        alarm.severity,
        &alarm.key().to_string(),
        alarm.since_ms,
    )
}

fn firing(finding: &Finding, severity: Severity, key: &str, since_ms: u64) -> Value {
    let mut alert = base(finding, severity, key);
    alert["startsAt"] = json!(rfc3339(since_ms));
    alert
}

fn base(finding: &Finding, severity: Severity, key: &str) -> Value {
    json!({
        "labels": {
            "alertname": finding.kind.as_str(),
            "cluster": finding.cluster,
            "subject": finding.subject.to_string(),
            "severity": severity.as_str(),
        },
        "annotations": {
            "summary": finding.message,
            "key": key,
        },
    })
}

/// `<url>/api/v2/alerts`.
pub fn endpoint(url: &str) -> String {
    format!("{}/api/v2/alerts", url.trim_end_matches('/'))
}

/// Milliseconds since the epoch as RFC 3339 UTC with milliseconds, e.g. `2023-11-14T22:13:20.000Z`.
pub fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = ((secs / 86_400) as i64, secs % 86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ms % 1000
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{Engine, FindingKind, GroupRef, Subject};

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(endpoint("http://h:9093/"), "http://h:9093/api/v2/alerts");
    }

    #[test]
    fn firing_has_starts_at_and_resolve_has_ends_at() {
        let finding = Finding::new(
            FindingKind::Backlog,
            "rmq",
            Engine::Rocketmq,
            Subject::Group {
                group: GroupRef::new("g1"),
                topic: None,
            },
            "group g1 is behind",
            0,
        );
        let mut n = Notification {
            event: Event::Firing,
            key: "backlog/rmq/group g1".into(),
            severity: Severity::Warning,
            since_ms: 1_000,
            at_ms: 1_000,
            finding,
            channels: vec!["am".into()],
        };
        let a = alert_of_notification(&n);
        assert_eq!(
            a["labels"],
            json!({"alertname": "backlog", "cluster": "rmq", "subject": "group g1", "severity": "warning"})
        );
        assert_eq!(a["startsAt"], "1970-01-01T00:00:01.000Z");
        assert!(a.get("endsAt").is_none());
        n.event = Event::Resolved;
        n.since_ms = 5_000;
        let r = alert_of_notification(&n);
        assert_eq!(r["endsAt"], "1970-01-01T00:00:05.000Z");
        assert!(r.get("startsAt").is_none());
    }
}
