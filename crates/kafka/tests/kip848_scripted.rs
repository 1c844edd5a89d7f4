//! KIP-848 consumer groups against scripted Kafka brokers (tests/scripted: protocol-exact, NOT real servers; the
//! requests and responses are kafka-protocol's own types): a coordinator that offers ConsumerGroupDescribe (API
//! 69) and lists group types (ListGroups v5) gets it asked for its `consumer` groups and DescribeGroups for its
//! classic ones; one that lists no types (ListGroups v4) gets DescribeGroups for all, and the groups it answers
//! GROUP_ID_NOT_FOUND for ("not a classic group", as Kafka answers) asked again by ConsumerGroupDescribe; one
//! without API 69 leaves that answer a collector error. Members land in the classic path's model either way.
//! What is real here is mqwatch's client and collector.

mod scripted;

use mqwatch_kafka::client::{ClientConfig, KafkaClient};
use mqwatch_kafka::collector::{LagMemory, Target, collect};
use mqwatch_model::{ClusterSnapshot, LogRef};
use scripted::{Member, Part, Script};
use std::collections::BTreeMap;
use std::sync::Arc;

fn part(index: i32, latest: i64) -> Part {
    Part {
        topic: "orders",
        index,
        leader: 1,
        replicas: vec![1],
        isr: vec![1],
        earliest: 0,
        latest,
        leader_epoch: 0,
    }
}

fn member(client_id: &'static str, assigned: Vec<i32>) -> Member {
    Member {
        client_id,
        host: "/10.0.0.7",
        subscribed: vec!["orders"],
        assigned: vec![("orders", assigned)],
    }
}

async fn cycle(list_groups_max: i16, kip848: bool) -> ClusterSnapshot {
    let (l1, a1) = scripted::listener().await;
    let script = Script {
        brokers: BTreeMap::from([(1, a1.clone())]),
        partitions: vec![part(0, 10), part(1, 20)],
        commits: BTreeMap::from([
            (
                "modern".to_string(),
                vec![("orders", 0, 4), ("orders", 1, 20)],
            ),
            ("classic".to_string(), vec![("orders", 0, 10)]),
        ]),
        offset_fetch_max: 8,
        admin_apis: true,
        list_groups_max,
        kip848,
        group_types: BTreeMap::from([("modern".to_string(), "consumer")]),
        members: BTreeMap::from([
            (
                "modern".to_string(),
                vec![member("c-1", vec![0]), member("c-2", vec![1])],
            ),
            ("classic".to_string(), vec![member("old-1", vec![0, 1])]),
        ]),
        ..Default::default()
    };
    let broker = scripted::serve(1, l1, Arc::new(script));
    let client = KafkaClient::new(ClientConfig::default());
    let s = collect(
        &client,
        &Target::new("k848", vec![a1]),
        &LagMemory::new(),
        1_000,
    )
    .await;
    let seen = broker.seen.lock().unwrap().clone();
    let describes = |key| seen.iter().filter(|(k, _)| *k == key).count();
    if kip848 {
        assert_eq!(describes(69), 1, "one ConsumerGroupDescribe: {seen:?}");
    } else {
        assert_eq!(describes(69), 0, "{seen:?}");
    }
    s
}

fn members(s: &ClusterSnapshot, group: &str) -> Vec<(String, String)> {
    let g = s.groups.iter().find(|g| g.group.name == group).unwrap();
    g.clients
        .iter()
        .map(|c| (c.client_id.clone(), c.addr.clone()))
        .collect()
}

fn lags(s: &ClusterSnapshot, group: &str) -> Vec<(LogRef, Option<i64>)> {
    let g = s.groups.iter().find(|g| g.group.name == group).unwrap();
    g.positions
        .iter()
        .map(|p| (p.log.clone(), p.lag()))
        .collect()
}

fn log(partition: i32) -> LogRef {
    LogRef::Partition {
        topic: "orders".into(),
        partition,
    }
}

#[tokio::test]
async fn typed_listing_sends_consumer_groups_to_consumer_group_describe() {
    let s = cycle(5, true).await;
    assert!(s.errors.is_empty(), "{:#?}", s.errors);
    assert_eq!(
        members(&s, "modern"),
        vec![
            ("c-1".to_string(), "/10.0.0.7".to_string()),
            ("c-2".to_string(), "/10.0.0.7".to_string())
        ]
    );
    let g = s.groups.iter().find(|g| g.group.name == "modern").unwrap();
    assert!(
        g.clients
            .iter()
            .all(|c| c.subscriptions.contains_key("orders"))
    );
    assert_eq!(
        lags(&s, "modern"),
        vec![(log(0), Some(6)), (log(1), Some(0))]
    );
    assert_eq!(members(&s, "classic").len(), 1);
    assert_eq!(lags(&s, "classic"), vec![(log(0), Some(0)), (log(1), None)]);
}

#[tokio::test]
async fn untyped_listing_falls_back_from_describe_groups_not_found() {
    let s = cycle(4, true).await;
    assert!(s.errors.is_empty(), "{:#?}", s.errors);
    assert_eq!(members(&s, "modern").len(), 2);
    assert_eq!(members(&s, "classic").len(), 1);
}

#[tokio::test]
async fn without_consumer_group_describe_the_not_found_answer_is_a_collector_error() {
    let s = cycle(5, false).await;
    assert_eq!(s.errors.len(), 1, "{:#?}", s.errors);
    assert!(s.errors[0].request.starts_with("DescribeGroups (15)"));
    assert!(
        s.errors[0].error.contains("GROUP_ID_NOT_FOUND") && s.errors[0].error.contains("modern"),
        "{:#?}",
        s.errors
    );
    // Offsets and lag still there.
    assert_eq!(
        lags(&s, "modern"),
        vec![(log(0), Some(6)), (log(1), Some(0))]
    );
    assert!(members(&s, "modern").is_empty());
}
