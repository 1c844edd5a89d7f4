//! Builders for snapshots in unit tests.

use mqwatch_model::{
    ClientQueue, ClientStatus, ClusterSnapshot, Engine, GroupPosition, GroupRef, GroupStatus,
    LogRef, MessageModel,
};

pub fn queue(topic: &str, id: i32) -> LogRef {
    LogRef::Queue {
        topic: topic.into(),
        broker: "broker-a".into(),
        queue_id: id,
    }
}

pub fn position(
    topic: &str,
    id: i32,
    earliest: i64,
    latest: i64,
    committed: Option<i64>,
    age: Option<u64>,
) -> GroupPosition {
    GroupPosition {
        log: queue(topic, id),
        earliest,
        latest,
        committed,
        oldest_unconsumed_age_ms: age,
        age_source: None,
    }
}

pub fn group(name: &str, positions: Vec<GroupPosition>) -> GroupStatus {
    GroupStatus {
        group: GroupRef::new(name),
        model: MessageModel::Clustering,
        positions,
        ..Default::default()
    }
}

pub fn client(id: &str, subs: &[(&str, &str)], queues: Vec<ClientQueue>) -> ClientStatus {
    ClientStatus {
        client_id: id.into(),
        addr: "127.0.0.1:1".into(),
        subscriptions: subs
            .iter()
            .map(|(t, e)| (t.to_string(), e.to_string()))
            .collect(),
        queues,
        error: None,
    }
}

pub fn snapshot(groups: Vec<GroupStatus>) -> ClusterSnapshot {
    ClusterSnapshot {
        cluster: "c".into(),
        engine: Some(Engine::Rocketmq),
        groups,
        ..Default::default()
    }
}
