//! The collector against a real tansu 0.6.0 broker (sqlite storage): topics created, known records produced and
//! offsets committed with mqwatch's own client, then one collection cycle asserted exactly: partitions, earliest
//! and latest offsets, committed offsets, offset lag ("unknown" without a commit), and tansu's broken
//! DescribeGroups reported as a collector error while the rest of the cycle is present.
//!
//! Skips (saying so) only when the tansu binary is not installed; `scripts/test` installs it.

use bytes::Bytes;
use mqwatch_kafka::client::{ClientConfig, KafkaClient};
use mqwatch_kafka::collector::{LagMemory, Target, collect};
use mqwatch_model::{AgeSource, Engine, LogRef, ObservedNodeState};
use mqwatch_testkit::retry_until_ok;
use mqwatch_testkit::tansu::{self, Tansu};
use std::time::Duration;

fn log(topic: &str, partition: i32) -> LogRef {
    LogRef::Partition {
        topic: topic.into(),
        partition,
    }
}

#[test]
fn tansu_offsets_commits_and_lag_are_exact() {
    if tansu::missing() {
        return;
    }
    let mut broker = Tansu::start();
    let rt = mqwatch_testkit::runtime();
    rt.block_on(async {
        let addr = broker.addr.clone();
        let client = KafkaClient::new(ClientConfig::default());
        for (topic, partitions) in [("orders", 3), ("events", 1)] {
            retry_until_ok("create topic", Duration::from_secs(20), || {
                client.create_topic(&addr, topic, partitions, 1)
            })
            .await;
        }
        let values = |n: usize| -> Vec<Bytes> {
            (0..n).map(|i| Bytes::from(format!("record-{i}"))).collect()
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as i64;
        for (topic, partition, n) in [("orders", 0, 5), ("orders", 1, 3), ("events", 0, 4)] {
            let records = values(n);
            let batch = retry_until_ok("produce", Duration::from_secs(20), || {
                client.produce(&addr, topic, partition, &records, now - 60_000)
            })
            .await;
            assert_eq!(batch.base_offset, 0, "{topic}-{partition}");
        }
        let coordinator = retry_until_ok("find coordinator", Duration::from_secs(20), || {
            client.find_coordinator(&addr, "g1")
        })
        .await;
        let g1 = [("orders".to_string(), 0, 2), ("orders".to_string(), 1, 3)];
        retry_until_ok("commit g1", Duration::from_secs(20), || {
            client.commit_offsets(&coordinator, "g1", &g1)
        })
        .await;
        let coordinator = retry_until_ok("find coordinator", Duration::from_secs(20), || {
            client.find_coordinator(&addr, "g2")
        })
        .await;
        let g2 = [("events".to_string(), 0, 4)];
        retry_until_ok("commit g2", Duration::from_secs(20), || {
            client.commit_offsets(&coordinator, "g2", &g2)
        })
        .await;

        let target = Target::new("tansu", vec![addr.clone()]);
        let memory = LagMemory::new();
        let s = collect(&client, &target, &memory, now as u64).await;
        assert_eq!(s.engine, Some(Engine::Kafka));
        assert_eq!(s.nodes.len(), 1, "{:#?}", s.nodes);
        assert!(s.nodes[0].answered);
        assert_eq!(s.nodes[0].registration, Some(ObservedNodeState::Active));

        let ranges: Vec<(LogRef, i64, i64)> = s
            .logs
            .iter()
            .map(|l| (l.log.clone(), l.earliest, l.latest))
            .collect();
        assert_eq!(
            ranges,
            vec![
                (log("events", 0), 0, 4),
                (log("orders", 0), 0, 5),
                (log("orders", 1), 0, 3),
                (log("orders", 2), 0, 0),
            ]
        );
        assert_eq!(s.partitions.len(), 4);
        let leader = s.nodes[0].node.name.clone();
        assert!(
            s.partitions
                .iter()
                .all(|p| p.leader.as_deref() == Some(leader.as_str()) && p.out_of_sync().is_empty()),
            "{:#?}",
            s.partitions
        );

        let positions = |g: &str| -> Vec<(LogRef, Option<i64>, Option<i64>)> {
            s.groups
                .iter()
                .find(|x| x.group.name == g)
                .unwrap_or_else(|| panic!("group {g} missing: {:#?}", s.groups))
                .positions
                .iter()
                .map(|p| (p.log.clone(), p.committed, p.lag()))
                .collect()
        };
        assert_eq!(
            positions("g1"),
            vec![
                (log("orders", 0), Some(2), Some(3)),
                (log("orders", 1), Some(3), Some(0)),
                (log("orders", 2), None, None),
            ]
        );
        assert_eq!(positions("g2"), vec![(log("events", 0), Some(4), Some(0))]);

        // Time lag: the record at g1's commit on orders-0 was produced with timestamp now - 60 s (read back with
        // one Fetch); orders-1 is idle (0 s); orders-2 has no commit, so no age.
        let ages: Vec<(Option<u64>, Option<AgeSource>)> = s
            .groups
            .iter()
            .find(|x| x.group.name == "g1")
            .unwrap()
            .positions
            .iter()
            .map(|p| (p.oldest_unconsumed_age_ms, p.age_source))
            .collect();
        assert_eq!(
            ages,
            vec![
                (Some(60_000), Some(AgeSource::RecordTimestamp)),
                (Some(0), Some(AgeSource::Idle)),
                (None, None),
            ]
        );

        // tansu 0.6 on sqlite closes the connection on DescribeGroups, and (seen here) on DescribeConfigs of a
        // topic with configuration keys: both reported, nothing else is, and the cycle went on.
        let failed: Vec<&str> = s.errors.iter().map(|e| e.request.as_str()).collect();
        assert!(
            failed
                .iter()
                .all(|r| r.starts_with("DescribeGroups (15)") || r.starts_with("DescribeConfigs (32)")),
            "{:#?}",
            s.errors
        );
        assert!(
            failed.iter().any(|r| r.starts_with("DescribeGroups (15)")),
            "DescribeGroups was expected to fail on tansu/sqlite: {:#?}",
            s.errors
        );
    });
    broker.process.stop(Duration::from_secs(5));
}
