//! The collector against scripted Kafka brokers (tests/scripted: protocol-exact, NOT real servers): a healthy
//! broker with partitions and groups, a second broker that hangs, an under-replicated and a leaderless partition,
//! and DescribeGroups dropped as tansu drops it. What is real here is mqwatch's client and collector.

mod scripted;

use mqwatch_kafka::client::{ClientConfig, KafkaClient};
use mqwatch_kafka::collector::{KnownBroker, LagMemory, Target, collect};
use mqwatch_model::{AgeSource, Engine, LogRef, ObservedNodeState};
use scripted::{Part, Script};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn part(topic: &'static str, index: i32, leader: i32, isr: &[i32], range: (i64, i64)) -> Part {
    Part {
        topic,
        index,
        leader,
        replicas: vec![1, 2],
        isr: isr.to_vec(),
        earliest: range.0,
        latest: range.1,
        leader_epoch: 0,
    }
}

fn log(topic: &str, partition: i32) -> LogRef {
    LogRef::Partition {
        topic: topic.into(),
        partition,
    }
}

async fn run(offset_fetch_max: i16) {
    let (l1, a1) = scripted::listener().await;
    let (l2, a2) = scripted::listener().await;
    let (l4, a4) = scripted::listener().await;
    let admin_apis = offset_fetch_max >= 8;
    let script = Arc::new(Script {
        brokers: BTreeMap::from([(1, a1.clone()), (2, a2.clone())]),
        racks: BTreeMap::from([(1, "rack-a".to_string())]),
        partitions: vec![
            part("orders", 0, 1, &[1, 2], (2, 10)),
            part("orders", 1, 1, &[1], (0, 4)),
            part("slow", 0, 2, &[1, 2], (0, 7)),
            part("lost", 0, -1, &[], (0, 0)),
        ],
        commits: BTreeMap::from([
            ("g1".to_string(), vec![("orders", 0, 5)]),
            ("g2".to_string(), vec![("orders", 0, 10), ("orders", 1, 4)]),
        ]),
        offset_fetch_max,
        drop_describe_groups: true,
        fetch_base_ms: 100_000,
        admin_apis,
        fenced: BTreeMap::from([(4, a4.clone())]),
        min_isr: BTreeMap::from([("orders", 2)]),
        ..Default::default()
    });
    let b1 = scripted::serve(1, l1, script.clone());
    let _hung = scripted::hang(l2);
    let _b4 = scripted::serve(4, l4, script.clone());

    let client = KafkaClient::new(ClientConfig {
        request_timeout: Duration::from_millis(500),
        connect_timeout: Duration::from_millis(500),
        ..ClientConfig::default()
    });
    let mut target = Target::new("scripted", vec![a1.clone()]);
    target.expected_brokers = vec!["1".into(), "3".into()];
    target.known_brokers = vec![KnownBroker {
        id: 1,
        addr: a1.clone(),
    }];
    let memory = LagMemory::new();
    let started = Instant::now();
    let s = collect(&client, &target, &memory, 200_000).await;
    // The hung broker costs one timeout (its connection probe), not one per request.
    assert!(
        started.elapsed() < Duration::from_millis(1_400),
        "cycle took {:?}",
        started.elapsed()
    );

    assert_eq!(s.engine, Some(Engine::Kafka));
    let node = |name: &str| s.nodes.iter().find(|n| n.node.name == name).unwrap();
    assert!(node("1").answered);
    assert_eq!(node("1").registration, Some(ObservedNodeState::Active));
    assert!(node("1").expected);
    assert!(!node("2").answered, "{:?}", node("2"));
    assert!(
        node("2").error.as_deref().unwrap().contains("ApiVersions"),
        "{:?}",
        node("2")
    );
    assert_eq!(
        node("3").registration,
        Some(ObservedNodeState::Unregistered)
    );
    assert!(!node("3").answered);

    // Ranges: only partitions led by the answering broker.
    let ranges: Vec<(LogRef, i64, i64)> = s
        .logs
        .iter()
        .map(|l| (l.log.clone(), l.earliest, l.latest))
        .collect();
    assert_eq!(
        ranges,
        vec![(log("orders", 0), 2, 10), (log("orders", 1), 0, 4)]
    );

    // Placement as Metadata says it.
    assert_eq!(s.partitions.len(), 4);
    let p = |t: &str, i: i32| s.partitions.iter().find(|p| p.log == log(t, i)).unwrap();
    assert_eq!(p("orders", 1).out_of_sync(), vec!["2"]);
    assert!(p("lost", 0).is_offline());
    assert_eq!(p("slow", 0).leader.as_deref(), Some("2"));
    assert_eq!(
        s.racks,
        BTreeMap::from([("1".to_string(), "rack-a".to_string())])
    );

    // Groups: committed offsets, "unknown" where no commit, lag exact.
    let g1 = s.groups.iter().find(|g| g.group.name == "g1").unwrap();
    let pos: Vec<(LogRef, Option<i64>, Option<i64>)> = g1
        .positions
        .iter()
        .map(|p| (p.log.clone(), p.committed, p.lag()))
        .collect();
    assert_eq!(
        pos,
        vec![
            (log("orders", 0), Some(5), Some(5)),
            (log("orders", 1), None, None)
        ]
    );
    let g2 = s.groups.iter().find(|g| g.group.name == "g2").unwrap();
    assert!(g2.positions.iter().all(|p| p.lag() == Some(0)));

    // Time lag: the record at g1's commit (offset 5) was written at 100 000 + 5 000; idle positions are 0 s.
    let ages: Vec<(Option<u64>, Option<AgeSource>)> = g1
        .positions
        .iter()
        .map(|p| (p.oldest_unconsumed_age_ms, p.age_source))
        .collect();
    assert_eq!(
        ages,
        vec![
            (Some(95_000), Some(AgeSource::RecordTimestamp)),
            (None, None)
        ]
    );
    assert!(
        g2.positions
            .iter()
            .all(|p| p.oldest_unconsumed_age_ms == Some(0) && p.age_source == Some(AgeSource::Idle))
    );

    // DescribeGroups dropped: one collector error naming it, the rest of the cycle present.
    assert!(
        s.errors
            .iter()
            .any(|e| e.request.starts_with("DescribeGroups (15)") && e.error.contains("closed")),
        "{:#?}",
        s.errors
    );
    assert!(
        s.errors
            .iter()
            .all(|e| e.request.starts_with("DescribeGroups (15)")),
        "only DescribeGroups answered badly: {:#?}",
        s.errors
    );
    let offset_fetches = b1
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k == 9)
        .count();
    assert_eq!(offset_fetches, if offset_fetch_max >= 8 { 1 } else { 2 });

    // A second cycle reuses the connection to broker 1 (only DescribeGroups' drop forces one reconnect).
    let before = b1.connections.load(std::sync::atomic::Ordering::SeqCst);
    let fetches = |b: &scripted::ScriptedBroker| {
        b.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| *k == 1)
            .count()
    };
    assert_eq!(fetches(&b1), 1);
    let again = collect(&client, &target, &memory, 201_000).await;
    assert_eq!(again.logs, s.logs);
    // The commit did not move: its record's timestamp comes from the cache, not a second Fetch.
    assert_eq!(fetches(&b1), 1);
    let g1 = again.groups.iter().find(|g| g.group.name == "g1").unwrap();
    assert_eq!(g1.positions[0].oldest_unconsumed_age_ms, Some(96_000));
    let after = b1.connections.load(std::sync::atomic::Ordering::SeqCst);
    assert!(after - before <= 1, "{before} -> {after}");
}

#[tokio::test]
async fn scripted_cluster_with_batched_offset_fetch_and_admin_apis() {
    run(8).await;
}

#[tokio::test]
async fn scripted_cluster_with_one_offset_fetch_per_group_and_no_admin_apis() {
    run(7).await;
}

#[tokio::test]
async fn no_bootstrap_answer_is_a_collector_error_and_known_brokers_are_still_probed() {
    let dead = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let client = KafkaClient::new(ClientConfig {
        request_timeout: Duration::from_millis(500),
        connect_timeout: Duration::from_millis(500),
        ..ClientConfig::default()
    });
    let mut target = Target::new("down", vec![dead.clone()]);
    target.known_brokers = vec![KnownBroker {
        id: 1,
        addr: dead.clone(),
    }];
    let s = collect(&client, &target, &LagMemory::new(), 5).await;
    assert_eq!(s.errors.len(), 1, "{:#?}", s.errors);
    assert_eq!(s.errors[0].request, "Metadata (3)");
    assert!(
        s.errors[0].error.starts_with("cannot connect"),
        "{:#?}",
        s.errors
    );
    assert_eq!(
        s.errors[0].node.as_ref().and_then(|n| n.addr.clone()),
        Some(dead)
    );
    assert_eq!(s.nodes.len(), 1);
    assert!(!s.nodes[0].answered);
    assert_eq!(
        s.nodes[0].registration, None,
        "no registry answered: unknown, not unregistered"
    );
    assert!(s.logs.is_empty() && s.groups.is_empty() && s.partitions.is_empty());
}

/// Scripted broker (test code): time lag is read with one Fetch for many partitions; a partition the broker
/// leaves out of that answer for its size is asked alone; a partition two groups commit at different offsets is
/// asked once per offset.
#[tokio::test]
async fn record_timestamps_are_fetched_in_batches_and_left_out_partitions_alone() {
    let (l1, a1) = scripted::listener().await;
    let script = Arc::new(Script {
        brokers: BTreeMap::from([(1, a1.clone())]),
        partitions: (0..5).map(|i| part("t", i, 1, &[1], (0, 10))).collect(),
        commits: BTreeMap::from([
            ("g1".to_string(), (0..5).map(|i| ("t", i, 3)).collect()),
            ("g2".to_string(), vec![("t", 0, 6)]),
        ]),
        offset_fetch_max: 8,
        fetch_base_ms: 100_000,
        fetch_left_out: [("t", 2)].into(),
        ..Default::default()
    });
    let b1 = scripted::serve(1, l1, script.clone());
    let client = KafkaClient::new(ClientConfig::default());
    let s = collect(
        &client,
        &Target::new("scripted", vec![a1]),
        &LagMemory::new(),
        200_000,
    )
    .await;
    let ages = |g: &str| -> Vec<(Option<u64>, Option<AgeSource>)> {
        s.groups
            .iter()
            .find(|x| x.group.name == g)
            .unwrap()
            .positions
            .iter()
            .map(|p| (p.oldest_unconsumed_age_ms, p.age_source))
            .collect()
    };
    // Records at offset 3 were written at 103 000, at offset 6 at 106 000.
    let at3 = (Some(97_000), Some(AgeSource::RecordTimestamp));
    assert_eq!(ages("g1"), vec![at3; 5], "{:#?}", s.errors);
    assert_eq!(
        ages("g2")[0],
        (Some(94_000), Some(AgeSource::RecordTimestamp))
    );
    // Round 1: t-0..t-4 at their first offsets (t-2 left out); round 2: t-0 at 6 alone; then t-2 alone.
    let fetches = b1
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|(k, _)| *k == 1)
        .count();
    assert_eq!(fetches, 3);
}
