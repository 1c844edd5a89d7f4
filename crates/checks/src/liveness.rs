//! Liveness of nodes: `name_server_down`, `broker_down` (silent, or gone from the registry while seen before or
//! expected), `bookie_unreachable`, `slave_fall_behind`, and `collector_error` for nodes that answered badly.

use crate::SlaveFallBehindThresholds;
use mqwatch_model::{
    ClusterSnapshot, Evidence, Finding, FindingKind, NodeRef, NodeRole, NodeStatus,
    ObservedNodeState, Subject,
};

/// Why a node counts as down, if it does.
pub fn down_reason(n: &NodeStatus) -> Option<String> {
    if !n.answered {
        return Some(n.error.clone().unwrap_or_else(|| "did not answer".into()));
    }
    if n.registration == Some(ObservedNodeState::Unregistered)
        && n.node.role != NodeRole::NameServer
    {
        return Some("not registered any more".into());
    }
    None
}

fn kind_for(role: NodeRole) -> Option<FindingKind> {
    match role {
        NodeRole::NameServer => Some(FindingKind::NameServerDown),
        NodeRole::Broker | NodeRole::Controller => Some(FindingKind::BrokerDown),
        NodeRole::Bookie => Some(FindingKind::BookieUnreachable),
        NodeRole::Host => None,
    }
}

/// One finding per node that is down.
pub fn node_down(s: &ClusterSnapshot, now_ms: u64) -> Vec<Finding> {
    s.nodes
        .iter()
        .filter_map(|n| {
            let kind = kind_for(n.node.role)?;
            let reason = down_reason(n)?;
            let message = format!("{} is down: {reason}", n.node);
            let evidence = Evidence::new()
                .with("reason", reason)
                .with("addr", n.node.addr.clone())
                .with("expected", n.expected)
                .with("last_answer_ms", n.last_answer_ms);
            let subject = Subject::Node {
                node: n.node.clone(),
            };
            Some(crate::finding(s, kind, subject, message, evidence, now_ms))
        })
        .collect()
}

/// One `collector_error` finding per node (or for the cluster) that answered badly, listing the requests.
pub fn collector_errors(s: &ClusterSnapshot, now_ms: u64) -> Vec<Finding> {
    let mut groups: Vec<(Option<&NodeRef>, Vec<serde_json::Value>)> = Vec::new();
    for e in &s.errors {
        let entry = serde_json::json!({ "request": e.request, "error": e.error });
        match groups.iter_mut().find(|(n, _)| *n == e.node.as_ref()) {
            Some((_, v)) => v.push(entry),
            None => groups.push((e.node.as_ref(), vec![entry])),
        }
    }
    groups
        .into_iter()
        .map(|(node, errors)| {
            let first = errors[0]["request"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let err = errors[0]["error"].as_str().unwrap_or_default().to_string();
            let (subject, who) = match node {
                Some(n) => (Subject::Node { node: n.clone() }, n.to_string()),
                None => (Subject::Cluster, format!("cluster {}", s.cluster)),
            };
            let more = if errors.len() > 1 {
                format!(" (and {} more)", errors.len() - 1)
            } else {
                String::new()
            };
            let message = format!("{who} answered {first} badly: {err}{more}");
            Finding::new(
                FindingKind::CollectorError,
                &s.cluster,
                crate::engine(s),
                subject,
                message,
                now_ms,
            )
            .with_evidence(Evidence::new().with("errors", errors))
        })
        .collect()
}

/// One `slave_fall_behind` finding per answering replica whose store trails its master's by over the threshold.
pub fn slave_fall_behind(
    s: &ClusterSnapshot,
    t: &SlaveFallBehindThresholds,
    now_ms: u64,
) -> Vec<Finding> {
    s.nodes
        .iter()
        .filter(|n| n.answered)
        .filter_map(|slave| {
            let master_ref = slave.replica_of.as_ref()?;
            let master = s
                .nodes
                .iter()
                .find(|m| &m.node == master_ref && m.answered)?;
            let behind = master.store_max_offset? - slave.store_max_offset?;
            if behind <= t.bytes {
                return None;
            }
            let message = format!(
                "{} is {behind} bytes behind its master {}",
                slave.node, master.node
            );
            let evidence = Evidence::new()
                .with("behind_bytes", behind)
                .with("master", master.node.name.clone())
                .with("threshold_bytes", t.bytes);
            let subject = Subject::Node {
                node: slave.node.clone(),
            };
            Some(crate::finding(
                s,
                FindingKind::SlaveFallBehind,
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
    use crate::testing::snapshot;
    use mqwatch_model::CollectorErrorRecord;

    fn node(
        role: NodeRole,
        name: &str,
        answered: bool,
        reg: Option<ObservedNodeState>,
    ) -> NodeStatus {
        NodeStatus {
            node: NodeRef::new(role, name),
            registration: reg,
            expected: false,
            answered,
            error: (!answered)
                .then(|| "GET_BROKER_RUNTIME_INFO (28): no answer within 3000 ms".into()),
            last_answer_ms: None,
            replica_of: None,
            store_max_offset: None,
        }
    }

    #[test]
    fn silent_or_unregistered_nodes_are_down_with_the_right_kind() {
        let mut s = snapshot(vec![]);
        s.nodes = vec![
            node(NodeRole::NameServer, "127.0.0.1:9876", false, None),
            node(
                NodeRole::Broker,
                "broker-a:0",
                true,
                Some(ObservedNodeState::Active),
            ),
            node(
                NodeRole::Broker,
                "broker-b:0",
                true,
                Some(ObservedNodeState::Unregistered),
            ),
            node(
                NodeRole::Broker,
                "broker-c:0",
                false,
                Some(ObservedNodeState::Active),
            ),
        ];
        let kinds: Vec<(FindingKind, String)> = node_down(&s, 0)
            .into_iter()
            .map(|f| (f.kind, f.subject.to_string()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                (
                    FindingKind::NameServerDown,
                    "name_server 127.0.0.1:9876".into()
                ),
                (FindingKind::BrokerDown, "broker broker-b:0".into()),
                (FindingKind::BrokerDown, "broker broker-c:0".into()),
            ]
        );
    }

    #[test]
    fn a_slave_more_than_the_threshold_behind_is_found() {
        let mut s = snapshot(vec![]);
        let mut master = node(
            NodeRole::Broker,
            "broker-a:0",
            true,
            Some(ObservedNodeState::Active),
        );
        master.store_max_offset = Some(30 * 1024 * 1024);
        let mut slave = node(
            NodeRole::Broker,
            "broker-a:1",
            true,
            Some(ObservedNodeState::Active),
        );
        slave.replica_of = Some(master.node.clone());
        slave.store_max_offset = Some(10 * 1024 * 1024);
        s.nodes = vec![master, slave];
        let t = SlaveFallBehindThresholds::default();
        let f = slave_fall_behind(&s, &t, 0);
        assert_eq!(f.len(), 1);
        assert_eq!(
            f[0].evidence.get("behind_bytes"),
            Some(&serde_json::json!(20 * 1024 * 1024))
        );
        s.nodes[1].store_max_offset = Some(25 * 1024 * 1024);
        assert!(slave_fall_behind(&s, &t, 0).is_empty());
    }

    #[test]
    fn collector_errors_are_grouped_per_node() {
        let mut s = snapshot(vec![]);
        let b = NodeRef::new(NodeRole::Broker, "broker-a:0");
        for r in ["GET_CONSUME_STATS (208)", "GET_TOPIC_STATS_INFO (202)"] {
            s.errors.push(CollectorErrorRecord {
                node: Some(b.clone()),
                request: r.into(),
                error: "bad body".into(),
            });
        }
        s.errors.push(CollectorErrorRecord {
            node: None,
            request: "config".into(),
            error: "x".into(),
        });
        let f = collector_errors(&s, 0);
        assert_eq!(f.len(), 2);
        assert!(
            f[0].message.contains("GET_CONSUME_STATS (208)") && f[0].message.contains("1 more"),
            "{}",
            f[0].message
        );
        assert_eq!(f[1].subject, Subject::Cluster);
    }
}
