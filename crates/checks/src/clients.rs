//! Checks over what a group's online clients say of themselves (RocketMQ consumer running info):
//! `client_blocked` (cached messages, nothing consumed for too long) and `subscription_inconsistent` (members of
//! one group subscribe differently).

use crate::ClientBlockedThresholds;
use mqwatch_model::{ClientQueue, ClusterSnapshot, Evidence, Finding, FindingKind, Subject};
use std::collections::BTreeMap;

/// How long a client queue has been blocked, if it counts as blocked at all.
pub fn blocked_for(q: &ClientQueue, t: &ClientBlockedThresholds, now_ms: u64) -> Option<u64> {
    if q.cached_messages < t.min_cached_messages || q.last_consume_ms == 0 {
        return None;
    }
    let blocked = now_ms.saturating_sub(q.last_consume_ms);
    let threshold = t.block.as_millis().max(t.min_block.as_millis());
    (blocked >= threshold).then_some(blocked)
}

/// One `client_blocked` finding per client with at least one blocked queue.
pub fn client_blocked(
    s: &ClusterSnapshot,
    t: &ClientBlockedThresholds,
    now_ms: u64,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in &s.groups {
        for c in &g.clients {
            let blocked: Vec<(&ClientQueue, u64)> = c
                .queues
                .iter()
                .filter_map(|q| blocked_for(q, t, now_ms).map(|b| (q, b)))
                .collect();
            let Some(worst) = blocked.iter().map(|(_, b)| *b).max() else {
                continue;
            };
            let cached: i64 = blocked.iter().map(|(q, _)| q.cached_messages).sum();
            let queues: Vec<String> = blocked.iter().map(|(q, _)| q.log.to_string()).collect();
            let message = format!(
                "client {} of group {} has consumed nothing for {} s on {} queues holding {cached} cached messages",
                c.client_id,
                g.group.name,
                worst / 1000,
                blocked.len()
            );
            let evidence = Evidence::new()
                .with("group", g.group.name.clone())
                .with("client_addr", c.addr.clone())
                .with("blocked_ms", worst)
                .with("cached_messages", cached)
                .with("queues", queues);
            let subject = Subject::Client {
                client_id: c.client_id.clone(),
            };
            out.push(crate::finding(
                s,
                FindingKind::ClientBlocked,
                subject,
                message,
                evidence,
                now_ms,
            ));
        }
    }
    out
}

/// One `subscription_inconsistent` finding per group whose online members do not all subscribe alike.
pub fn subscription_inconsistent(s: &ClusterSnapshot, now_ms: u64) -> Vec<Finding> {
    let mut out = Vec::new();
    for g in &s.groups {
        let mut variants: BTreeMap<&BTreeMap<String, String>, Vec<&str>> = BTreeMap::new();
        for c in g.clients.iter().filter(|c| c.error.is_none()) {
            variants
                .entry(&c.subscriptions)
                .or_default()
                .push(&c.client_id);
        }
        if variants.len() < 2 {
            continue;
        }
        let shown: Vec<serde_json::Value> = variants
            .iter()
            .map(|(subs, clients)| serde_json::json!({ "subscriptions": subs, "clients": clients }))
            .collect();
        let message = format!(
            "members of group {} subscribe in {} different ways",
            g.group.name,
            variants.len()
        );
        let subject = Subject::Group {
            group: g.group.clone(),
            topic: None,
        };
        out.push(
            Finding::new(
                FindingKind::SubscriptionInconsistent,
                &s.cluster,
                crate::engine(s),
                subject,
                message,
                now_ms,
            )
            .with_evidence(Evidence::new().with("variants", shown)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{client, group, queue, snapshot};
    use mqwatch_model::Span;

    fn cq(id: i32, cached: i64, last_consume_ms: u64) -> ClientQueue {
        ClientQueue {
            log: queue("t", id),
            cached_messages: cached,
            last_consume_ms,
            last_pull_ms: last_consume_ms,
        }
    }

    fn t() -> ClientBlockedThresholds {
        ClientBlockedThresholds {
            block: Span::from_secs(10),
            min_block: Span::from_secs(60),
            min_cached_messages: 100,
        }
    }

    #[test]
    fn blocked_needs_cached_messages_and_the_larger_of_both_times() {
        let now = 1_000_000;
        assert_eq!(
            blocked_for(&cq(0, 100, now - 60_000), &t(), now),
            Some(60_000)
        );
        assert_eq!(
            blocked_for(&cq(0, 100, now - 59_999), &t(), now),
            None,
            "min_block wins over block"
        );
        assert_eq!(
            blocked_for(&cq(0, 99, now - 600_000), &t(), now),
            None,
            "too few cached messages"
        );
        assert_eq!(
            blocked_for(&cq(0, 500, 0), &t(), now),
            None,
            "never consumed: unknown, not blocked"
        );
    }

    #[test]
    fn one_finding_per_blocked_client_with_its_worst_queue() {
        let now = 1_000_000;
        let mut g = group("g", vec![]);
        g.clients = vec![
            client(
                "c1",
                &[("t", "*")],
                vec![
                    cq(0, 150, now - 90_000),
                    cq(1, 300, now - 70_000),
                    cq(2, 5, 0),
                ],
            ),
            client("c2", &[("t", "*")], vec![cq(3, 150, now - 1_000)]),
        ];
        let f = client_blocked(&snapshot(vec![g]), &t(), now);
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].subject,
            Subject::Client {
                client_id: "c1".into()
            }
        );
        assert_eq!(
            f[0].evidence.get("blocked_ms"),
            Some(&serde_json::json!(90_000))
        );
        assert_eq!(
            f[0].evidence.get("cached_messages"),
            Some(&serde_json::json!(450))
        );
    }

    #[test]
    fn members_that_subscribe_differently_are_inconsistent() {
        let mut g = group("g", vec![]);
        g.clients = vec![
            client("c1", &[("t", "*")], vec![]),
            client("c2", &[("t", "*")], vec![]),
        ];
        assert!(subscription_inconsistent(&snapshot(vec![g.clone()]), 0).is_empty());
        g.clients.push(client("c3", &[("t", "tagA")], vec![]));
        let f = subscription_inconsistent(&snapshot(vec![g]), 0);
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].evidence
                .get("variants")
                .and_then(|v| v.as_array())
                .map(Vec::len),
            Some(2)
        );
    }
}
