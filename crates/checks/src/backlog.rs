//! `backlog`: a consumer group behind its logs. Count is `latest - committed` summed over the logs the group
//! committed on; logs without a commit are counted apart (a broker shows them as offset 0, which is not a backlog
//! of the whole log). Age is that of the oldest unconsumed message. Clustering groups need count AND age over
//! their thresholds (MQCloud); broadcasting groups are judged on count alone.

use crate::BacklogThresholds;
use mqwatch_model::{
    ClusterSnapshot, Evidence, Finding, FindingKind, GroupStatus, MessageModel, Subject,
};

/// A group's backlog, measured.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GroupBacklog {
    /// Messages behind on logs with a commit.
    pub count: i64,
    /// Age of the oldest unconsumed message, where known.
    pub age_ms: Option<u64>,
    /// Logs with a positive lag.
    pub logs_behind: usize,
    /// Logs the group never committed on.
    pub logs_without_commit: usize,
    /// Messages retained on those logs.
    pub messages_without_commit: i64,
}

/// Measures one group.
pub fn measure(g: &GroupStatus) -> GroupBacklog {
    let mut b = GroupBacklog::default();
    for p in &g.positions {
        match p.lag() {
            Some(lag) if lag > 0 => {
                b.count += lag;
                b.logs_behind += 1;
                b.age_ms = b.age_ms.max(p.oldest_unconsumed_age_ms);
            }
            Some(_) => {}
            None => {
                b.logs_without_commit += 1;
                b.messages_without_commit += (p.latest - p.earliest).max(0);
            }
        }
    }
    b
}

/// Whether the count is over its threshold.
pub fn over_count(b: &GroupBacklog, t: &BacklogThresholds) -> bool {
    b.count > t.count
}

/// Whether the age is known and over its threshold.
pub fn over_age(b: &GroupBacklog, t: &BacklogThresholds) -> bool {
    b.age_ms.is_some_and(|a| a > t.age.as_millis())
}

/// Whether a group of this model with this backlog is a finding.
pub fn is_backlog(model: MessageModel, b: &GroupBacklog, t: &BacklogThresholds) -> bool {
    match model {
        MessageModel::Clustering => over_count(b, t) && over_age(b, t),
        MessageModel::Broadcasting => over_count(b, t),
    }
}

/// One `backlog` finding per group over its thresholds.
pub fn check(s: &ClusterSnapshot, t: &BacklogThresholds, now_ms: u64) -> Vec<Finding> {
    s.groups
        .iter()
        .filter_map(|g| {
            let b = measure(g);
            if !is_backlog(g.model, &b, t) {
                return None;
            }
            let age = b
                .age_ms
                .map(|a| format!(", oldest unconsumed message {} s old", a / 1000))
                .unwrap_or_default();
            let message = format!(
                "group {} is {} messages behind on {} logs{age}",
                g.group.name, b.count, b.logs_behind
            );
            let evidence = Evidence::new()
                .with("count", b.count)
                .with("age_ms", b.age_ms)
                .with("logs_behind", b.logs_behind)
                .with("logs_without_commit", b.logs_without_commit)
                .with("messages_without_commit", b.messages_without_commit)
                .with("threshold_count", t.count)
                .with("threshold_age_ms", t.age.as_millis())
                .with(
                    "message_model",
                    serde_json::to_value(g.model).unwrap_or_default(),
                );
            let subject = Subject::Group {
                group: g.group.clone(),
                topic: None,
            };
            Some(crate::finding(
                s,
                FindingKind::Backlog,
                subject,
                message,
                evidence,
                now_ms,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{group, position, snapshot};

    fn t() -> BacklogThresholds {
        BacklogThresholds {
            count: 100,
            age: mqwatch_model::Span::from_secs(60),
        }
    }

    #[test]
    fn a_log_without_commit_is_not_a_backlog_of_the_whole_log() {
        let g = group(
            "g",
            vec![
                position("t", 0, 0, 5_000, None, None),
                position("t", 1, 0, 50, Some(20), Some(1)),
            ],
        );
        let b = measure(&g);
        assert_eq!(b.count, 30);
        assert_eq!(
            (b.logs_without_commit, b.messages_without_commit),
            (1, 5_000)
        );
        assert!(check(&snapshot(vec![g]), &t(), 0).is_empty());
    }

    #[test]
    fn clustering_needs_count_and_age() {
        let old = group(
            "g",
            vec![position("t", 0, 0, 1_000, Some(0), Some(120_000))],
        );
        let young = group("g", vec![position("t", 0, 0, 1_000, Some(0), Some(5_000))]);
        let f = check(&snapshot(vec![old]), &t(), 7);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].evidence.get("count"), Some(&serde_json::json!(1_000)));
        assert_eq!(
            f[0].evidence.get("age_ms"),
            Some(&serde_json::json!(120_000))
        );
        assert_eq!(f[0].first_seen_ms, 7);
        assert!(check(&snapshot(vec![young]), &t(), 7).is_empty());
    }

    #[test]
    fn broadcasting_is_judged_on_count_alone() {
        let mut g = group("g", vec![position("t", 0, 0, 1_000, Some(0), None)]);
        assert!(check(&snapshot(vec![g.clone()]), &t(), 0).is_empty());
        g.model = MessageModel::Broadcasting;
        assert_eq!(check(&snapshot(vec![g]), &t(), 0).len(), 1);
    }

    #[test]
    fn kafka_groups_fire_on_count_and_record_timestamp_age() {
        use mqwatch_model::{AgeSource, Engine, LogRef};
        let part = |p: i32, latest: i64, committed: Option<i64>, age: Option<u64>| {
            mqwatch_model::GroupPosition {
                log: LogRef::Partition {
                    topic: "orders".into(),
                    partition: p,
                },
                earliest: 0,
                latest,
                committed,
                oldest_unconsumed_age_ms: age,
                age_source: Some(if age == Some(0) {
                    AgeSource::Idle
                } else {
                    AgeSource::RecordTimestamp
                }),
            }
        };
        let kafka = |positions| {
            let mut s = snapshot(vec![group("billing", positions)]);
            s.engine = Some(Engine::Kafka);
            s
        };
        let f = check(
            &kafka(vec![
                part(0, 600, Some(500), Some(90_000)),
                part(1, 80, Some(80), Some(0)),
                part(2, 7, None, None),
            ]),
            &t(),
            0,
        );
        assert!(f.is_empty(), "100 behind is not over 100: {f:?}");
        let s = kafka(vec![
            part(0, 601, Some(500), Some(90_000)),
            part(1, 80, Some(80), Some(0)),
            part(2, 7, None, None),
        ]);
        let f = check(&s, &t(), 0);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].engine, Engine::Kafka);
        assert_eq!(f[0].subject.to_string(), "group billing");
        assert_eq!(f[0].evidence.get("count"), Some(&serde_json::json!(101)));
        assert_eq!(
            f[0].evidence.get("age_ms"),
            Some(&serde_json::json!(90_000))
        );
        assert_eq!(
            f[0].evidence.get("logs_without_commit"),
            Some(&serde_json::json!(1))
        );
        let young = kafka(vec![part(0, 601, Some(500), Some(30_000))]);
        assert!(
            check(&young, &t(), 0).is_empty(),
            "count alone is not enough"
        );
    }

    #[test]
    fn committed_beyond_latest_is_not_negative_backlog() {
        let g = group("g", vec![position("t", 0, 0, 10, Some(500), None)]);
        assert_eq!(measure(&g).count, 0);
    }
}
