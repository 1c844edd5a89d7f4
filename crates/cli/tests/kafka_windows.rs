//! What mqwatch keeps across Kafka cycles, against a REAL tansu 0.6.0 broker (sqlite storage, started by
//! mqwatch-testkit on a free port, stopped by PID; records produced and offsets committed with mqwatch's own
//! client): traffic windows per topic, broker (the partition's leader, tansu's node 111) and cluster from
//! latest-offset growth between two cycles, both in-process and through `mqwatch serve`'s
//! `/api/v1/clusters/{name}/traffic`; and `consumer_lag_status` over a window of real commits (STOP for a
//! committer that went away, OK once it caught up). Nothing here is simulated.
//!
//! Skips (saying so) only when the tansu binary is not installed; `scripts/test` installs it.

mod common;

use bytes::Bytes;
use mqwatch_checks::{LagStatusThresholds, Thresholds};
use mqwatch_cli::config::ClusterConfig;
use mqwatch_cli::run::{Collectors, CycleResult, cycle, now_ms};
use mqwatch_cli::state::StateDir;
use mqwatch_kafka::client::{ClientConfig, KafkaClient};
use mqwatch_model::{FindingKind, LagStatus, Severity};
use mqwatch_state::ClusterState;
use mqwatch_testkit::tansu::{self, Tansu};
use mqwatch_testkit::{poll_until, retry_until_ok};
use std::time::Duration;

const LONG: Duration = Duration::from_secs(20);

async fn produce(client: &KafkaClient, addr: &str, topic: &str, partition: i32, n: usize) {
    let records: Vec<Bytes> = (0..n).map(|i| Bytes::from(format!("r{i}"))).collect();
    let ts = now_ms() as i64;
    retry_until_ok("produce", LONG, || {
        client.produce(addr, topic, partition, &records, ts)
    })
    .await;
}

async fn commit(client: &KafkaClient, addr: &str, group: &str, offsets: &[(String, i32, i64)]) {
    let coordinator =
        retry_until_ok("coordinator", LONG, || client.find_coordinator(addr, group)).await;
    retry_until_ok("commit", LONG, || {
        client.commit_offsets(&coordinator, group, offsets)
    })
    .await;
}

/// A cluster config, thresholds, state dir and in-memory state, cycled in-process as `serve` does.
struct Watch {
    config: ClusterConfig,
    thresholds: Thresholds,
    state: StateDir,
    memory: ClusterState,
    collectors: Collectors,
    _dir: tempfile::TempDir,
}

impl Watch {
    fn new(addr: &str, window: usize) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ClusterConfig::kafka(addr);
        config.name = "k".into();
        let thresholds = Thresholds {
            lag_status: LagStatusThresholds {
                window,
                ..Default::default()
            },
            ..Default::default()
        };
        Watch {
            collectors: Collectors::new(&config),
            config,
            thresholds,
            state: StateDir::resolve(Some(dir.path()), None).unwrap(),
            memory: ClusterState::new(),
            _dir: dir,
        }
    }

    async fn cycle(&mut self) -> CycleResult {
        let r = cycle(
            &self.config,
            &self.collectors,
            &self.thresholds,
            &self.state,
            &mut self.memory,
            &|_, _| {},
            now_ms(),
        )
        .await
        .unwrap();
        assert!(
            !r.snapshot.logs.is_empty(),
            "the cycle read no offsets: {:?}",
            r.snapshot.errors
        );
        r
    }
}

#[test]
fn records_produced_between_two_cycles_are_traffic_of_topic_leader_and_cluster() {
    if tansu::missing() {
        return;
    }
    let broker = Tansu::start();
    let addr = broker.addr.clone();
    mqwatch_testkit::runtime().block_on(async {
        let client = KafkaClient::new(ClientConfig::default());
        retry_until_ok("create topic", LONG, || {
            client.create_topic(&addr, "orders", 3, 1)
        })
        .await;
        retry_until_ok("create topic", LONG, || {
            client.create_topic(&addr, "audit", 1, 1)
        })
        .await;
        produce(&client, &addr, "orders", 0, 4).await;
        let mut w = Watch::new(&addr, 10);
        w.cycle().await;
        produce(&client, &addr, "orders", 0, 7).await;
        produce(&client, &addr, "orders", 2, 5).await;
        produce(&client, &addr, "audit", 0, 3).await;
        let second = w.cycle().await;
        let leader = second
            .snapshot
            .partitions
            .iter()
            .find_map(|p| p.leader.clone())
            .unwrap();
        assert_eq!(leader, "111", "tansu's node id");
        w.memory.traffic.tick(now_ms());
        let t = &w.memory.traffic;
        let total = |set: &mqwatch_stats::window::StatsSet, k: &str| set.get(k).map(|s| s.value);
        assert_eq!(
            total(&t.topic_produce, "orders"),
            Some(12),
            "4 before the first look are not traffic"
        );
        assert_eq!(total(&t.topic_produce, "audit"), Some(3));
        assert_eq!(total(&t.broker_produce, "111"), Some(15));
        assert_eq!(total(&t.cluster_produce, "k"), Some(15));
    });
}

#[test]
fn serve_shows_kafka_traffic_per_topic_broker_and_cluster() {
    if tansu::missing() {
        return;
    }
    let broker = Tansu::start();
    let addr = broker.addr.clone();
    let rt = mqwatch_testkit::runtime();
    let client = KafkaClient::new(ClientConfig::default());
    rt.block_on(async {
        retry_until_ok("create topic", LONG, || {
            client.create_topic(&addr, "orders", 2, 1)
        })
        .await;
        produce(&client, &addr, "orders", 0, 2).await;
    });
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    std::fs::write(
        &config,
        format!(
            "[[cluster]]\nname = \"k\"\nengine = \"kafka\"\nbootstrap = [\"{addr}\"]\ninterval = \"500ms\"\n"
        ),
    )
    .unwrap();
    let state = dir.path().join("state");
    let (_serve, http) = common::start_serve("serve-kafka-traffic", &config, &state, dir.path());
    poll_until("the first cycle", Duration::from_secs(60), || {
        common::get_json(&http, "/api/v1/clusters/k").filter(|c| {
            c["snapshot"]["logs"]
                .as_array()
                .is_some_and(|l| !l.is_empty())
        })
    });
    rt.block_on(async {
        produce(&client, &addr, "orders", 0, 9).await;
        produce(&client, &addr, "orders", 1, 4).await;
    });
    let report = poll_until(
        "13 messages in the traffic windows",
        Duration::from_secs(60),
        || {
            common::get_json(&http, "/api/v1/clusters/k/traffic")
                .filter(|r| r["cluster_produce"]["k"]["value"] == 13)
        },
    );
    assert_eq!(report["topic_produce"]["orders"]["value"], 13, "{report:#}");
    assert_eq!(report["broker_produce"]["111"]["value"], 13, "{report:#}");
    // The minute window samples every 10 s: the 13 show up there within one sampling.
    poll_until("the minute window", Duration::from_secs(40), || {
        common::get_json(&http, "/api/v1/clusters/k/traffic")
            .filter(|r| r["broker_produce"]["111"]["minute"]["sum"] == 13)
    });
}

#[test]
fn a_committer_that_went_away_is_stop_and_ok_once_caught_up() {
    if tansu::missing() {
        return;
    }
    let broker = Tansu::start();
    let addr = broker.addr.clone();
    mqwatch_testkit::runtime().block_on(async {
        let client = KafkaClient::new(ClientConfig::default());
        retry_until_ok("create topic", LONG, || {
            client.create_topic(&addr, "orders", 2, 1)
        })
        .await;
        produce(&client, &addr, "orders", 0, 5).await;
        produce(&client, &addr, "orders", 1, 3).await;
        let at = |o0, o1| [("orders".to_string(), 0, o0), ("orders".to_string(), 1, o1)];
        commit(&client, &addr, "billing", &at(2, 3)).await;
        let mut w = Watch::new(&addr, 3);
        let mut statuses = Vec::new();
        for _ in 0..3 {
            let r = w.cycle().await;
            statuses.push(r.lag_status.iter().find(|g| g.group.name == "billing").map(|g| g.status));
        }
        assert_eq!(
            statuses,
            vec![Some(LagStatus::Ok), Some(LagStatus::Ok), Some(LagStatus::Stop)],
            "judged once the window of 3 is full; no members online (tansu's DescribeGroups fails), so STOP"
        );
        let r = w.cycle().await;
        let f = r
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::ConsumerLagStatus)
            .unwrap_or_else(|| panic!("{:#?}", r.findings));
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.subject.to_string(), "group billing");
        assert_eq!(f.evidence.get("status"), Some(&serde_json::json!("STOP")));
        assert_eq!(f.evidence.get("logs_not_ok"), Some(&serde_json::json!(1)), "orders-1 is caught up");
        let st = &r.lag_status.iter().find(|g| g.group.name == "billing").unwrap();
        assert_eq!((st.total_lag, st.logs), (3, 2));

        commit(&client, &addr, "billing", &at(5, 3)).await;
        let r = w.cycle().await;
        assert!(
            r.findings.iter().all(|f| f.kind != FindingKind::ConsumerLagStatus),
            "{:#?}",
            r.findings
        );
        let st = r.lag_status.iter().find(|g| g.group.name == "billing").unwrap();
        assert_eq!((st.status, st.total_lag), (LagStatus::Ok, 0));
    });
}
