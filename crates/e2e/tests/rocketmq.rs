//! RocketMQ end to end. REAL: the name server and brokers (`rocketmq-namesrv` / `rocketmq-broker` 1.0.0, started by
//! mqwatch-testkit on free loopback ports, stopped by PID), and the client traffic (the `rocketmq-client-rust`
//! 1.0.0 producer and push consumer in the `mqwatch-rmq-client` program). mqwatch's collector, checks and state
//! run in-process exactly as `serve` and `check` run them. Every test starts its own cluster.

use mqwatch_checks::{
    BacklogThresholds, ClientBlockedThresholds, ConsumeFailureThresholds, Thresholds,
};
use mqwatch_cli::config::ClusterConfig;
use mqwatch_cli::run::{Collectors, CycleResult, cycle, now_ms};
use mqwatch_cli::state::StateDir;
use mqwatch_model::{ClusterSnapshot, Finding, FindingKind, Span, Subject, TrafficMetric};
use mqwatch_state::ClusterState;
use mqwatch_testkit::poll_until;
use mqwatch_testkit::process::PeerProcess;
use mqwatch_testkit::rocketmq::{BrokerSpec, RocketMqCluster};
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(90);

/// Re-runs an async block (which may borrow test state mutably) until it yields `Some`, or fails after
/// [`DEADLINE`]. Polls every 200 ms; never a fixed sleep standing in for synchronisation.
macro_rules! eventually {
    ($what:expr, $body:expr) => {{
        let start = std::time::Instant::now();
        loop {
            if let Some(v) = $body.await {
                break v;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "timed out after {DEADLINE:?} waiting for {}",
                $what
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }};
}

/// mqwatch pointed at a test cluster: config, state directory, in-memory state, admin client.
struct Watch {
    config: ClusterConfig,
    thresholds: Thresholds,
    state: StateDir,
    memory: ClusterState,
    collectors: Collectors,
    _dir: tempfile::TempDir,
}

impl Watch {
    fn new(cluster: &RocketMqCluster) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ClusterConfig::rocketmq(&cluster.namesrv_addr);
        config.name = "e2e".into();
        config.timeout = Span::from_secs(3);
        let thresholds = Thresholds {
            backlog: BacklogThresholds {
                count: 10,
                age: Span::from_millis(1_000),
            },
            client_blocked: ClientBlockedThresholds {
                block: Span::from_secs(2),
                min_block: Span::from_secs(2),
                min_cached_messages: 1,
            },
            consume_failure: ConsumeFailureThresholds {
                retries: 10,
                dead_letters: 1,
            },
            ..Default::default()
        };
        let collectors = Collectors::new(&config);
        Watch {
            config,
            thresholds,
            state: StateDir::resolve(Some(dir.path()), None).unwrap(),
            memory: ClusterState::new(),
            collectors,
            _dir: dir,
        }
    }

    async fn cycle(&mut self) -> CycleResult {
        cycle(
            &self.config,
            &self.collectors,
            &self.thresholds,
            &self.state,
            &mut self.memory,
            &|_, _| {},
            now_ms(),
        )
        .await
        .unwrap()
    }
}

fn client_bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mqwatch-rmq-client"))
}

/// Produces `count` messages of `size` bytes with the real producer and waits for it to finish.
fn produce(cluster: &RocketMqCluster, topic: &str, count: u64, size: usize) {
    let out = client_bin()
        .args([
            &cluster.namesrv_addr,
            "produce",
            topic,
            &count.to_string(),
            &size.to_string(),
        ])
        .output()
        .expect("run mqwatch-rmq-client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("SENT {count}")),
        "producer failed: {out:?}\n{}",
        cluster.logs()
    );
}

/// Starts a real push consumer; returns once it says READY.
fn consumer(cluster: &RocketMqCluster, topic: &str, group: &str, mode: &str) -> PeerProcess {
    let mut cmd = client_bin();
    cmd.args([&cluster.namesrv_addr, "consume", topic, group, mode]);
    let p = PeerProcess::spawn(&format!("consumer-{group}"), cmd, cluster.dir());
    poll_until("the consumer to start", DEADLINE, || {
        p.log_tail(4096).contains("READY").then_some(())
    });
    p
}

fn topic_messages(s: &ClusterSnapshot, topic: &str) -> i64 {
    s.logs
        .iter()
        .filter(|l| l.log.to_string().contains(&format!(" {topic}@")))
        .map(|l| l.latest - l.earliest)
        .sum()
}

fn group_lag(s: &ClusterSnapshot, group: &str) -> Option<(i64, usize)> {
    let g = s.groups.iter().find(|g| g.group.name == group)?;
    let committed = g.positions.iter().filter(|p| p.committed.is_some()).count();
    Some((g.positions.iter().filter_map(|p| p.lag()).sum(), committed))
}

fn find<'a>(findings: &'a [Finding], kind: FindingKind, subject: &str) -> Option<&'a Finding> {
    findings
        .iter()
        .find(|f| f.kind == kind && f.subject.to_string().contains(subject))
}

async fn create_topic(cluster: &RocketMqCluster, watch: &Watch, topic: &str, queues: u32) {
    for b in cluster.brokers.iter().filter(|b| b.spec.id == 0) {
        watch
            .collectors
            .rocketmq
            .create_topic(&b.addr, topic, queues)
            .await
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn traffic_counts_equal_what_was_produced() {
    let cluster = RocketMqCluster::start(&[
        BrokerSpec::master("broker-a"),
        BrokerSpec::master("broker-b"),
    ]);
    let mut watch = Watch::new(&cluster);
    create_topic(&cluster, &watch, "traffic-t", 4).await;
    produce(&cluster, "traffic-t", 200, 128);

    let r = eventually!("200 messages in the topic's queues", async {
        let r = watch.cycle().await;
        (topic_messages(&r.snapshot, "traffic-t") == 200).then_some(r)
    });
    assert_eq!(
        r.snapshot
            .logs
            .iter()
            .filter(|l| l.log.to_string().contains(" traffic-t@"))
            .count(),
        8
    );

    // The brokers' own minute counters (VIEW_BROKER_STATS_DATA) fill within ~10-25 s.
    let (messages, bytes) = eventually!("the brokers' minute counters", async {
        let r = watch.cycle().await;
        let sum = |m: TrafficMetric| -> u64 {
            r.snapshot
                .traffic
                .iter()
                .filter(|t| {
                    t.metric == m && t.topic.as_deref() == Some("traffic-t") && t.group.is_none()
                })
                .map(|t| t.last_minute)
                .sum()
        };
        let got = (
            sum(TrafficMetric::ProduceMessages),
            sum(TrafficMetric::ProduceBytes),
        );
        (got.0 == 200).then_some(got)
    });
    assert_eq!(messages, 200);
    assert!(
        bytes >= 200 * 128,
        "{bytes} bytes for 200 messages of 128 bytes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_consumer_leaves_a_backlog_of_the_right_count_and_a_growing_age() {
    let cluster = RocketMqCluster::start(&[BrokerSpec::master("broker-a")]);
    let mut watch = Watch::new(&cluster);
    create_topic(&cluster, &watch, "backlog-t", 4).await;
    let mut c = consumer(&cluster, "backlog-t", "backlog-g", "ok");
    produce(&cluster, "backlog-t", 40, 64);
    eventually!("the consumer to commit everything", async {
        let r = watch.cycle().await;
        (group_lag(&r.snapshot, "backlog-g") == Some((0, 4))).then_some(())
    });
    c.kill();
    produce(&cluster, "backlog-t", 30, 64);

    let first = eventually!("a backlog finding", async {
        let r = watch.cycle().await;
        find(&r.findings, FindingKind::Backlog, "backlog-g").cloned()
    });
    assert_eq!(
        first.evidence.get("count"),
        Some(&serde_json::json!(30)),
        "{first:?}"
    );
    let age = |f: &Finding| f.evidence.get("age_ms").and_then(|v| v.as_u64()).unwrap();
    let later = eventually!("the backlog to age", async {
        let r = watch.cycle().await;
        find(&r.findings, FindingKind::Backlog, "backlog-g")
            .filter(|f| age(f) > age(&first) + 1_000)
            .cloned()
    });
    assert_eq!(later.evidence.get("count"), Some(&serde_json::json!(30)));
    assert_eq!(
        later.first_seen_ms, first.first_seen_ms,
        "one alarm, first seen once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_blocked_in_its_handler_is_client_blocked() {
    let cluster = RocketMqCluster::start(&[BrokerSpec::master("broker-a")]);
    let mut watch = Watch::new(&cluster);
    create_topic(&cluster, &watch, "block-t", 2).await;
    let _c = consumer(&cluster, "block-t", "block-g", "block");
    produce(&cluster, "block-t", 20, 64);
    let f = eventually!("a client_blocked finding", async {
        let r = watch.cycle().await;
        r.findings
            .iter()
            .find(|f| f.kind == FindingKind::ClientBlocked)
            .cloned()
    });
    assert_eq!(f.evidence.get("group"), Some(&serde_json::json!("block-g")));
    assert!(
        f.evidence
            .get("cached_messages")
            .and_then(|v| v.as_i64())
            .unwrap()
            >= 1,
        "{f:?}"
    );
    assert!(matches!(f.subject, Subject::Client { .. }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_messages_are_a_consume_failure_with_the_right_count() {
    let cluster = RocketMqCluster::start(&[BrokerSpec::master("broker-a")]);
    let mut watch = Watch::new(&cluster);
    create_topic(&cluster, &watch, "reject-t", 2).await;
    let _c = consumer(&cluster, "reject-t", "reject-g", "reject");
    let retry_total = |s: &ClusterSnapshot| {
        s.groups
            .iter()
            .find(|g| g.group.name == "reject-g")?
            .retry_total
    };
    let before = eventually!("the group's retry topic", async {
        let r = watch.cycle().await;
        retry_total(&r.snapshot).map(|_| r.snapshot)
    });
    let base = retry_total(&before).unwrap();
    produce(&cluster, "reject-t", 20, 64);
    let after = eventually!("20 messages sent back for retry", async {
        let r = watch.cycle().await;
        (retry_total(&r.snapshot) == Some(base + 20)).then_some(r.snapshot)
    });
    let f = mqwatch_checks::failures::consume_failure(
        &before,
        &after,
        &watch.thresholds.consume_failure,
        now_ms(),
    );
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].evidence.get("retries"), Some(&serde_json::json!(20)));
    // The Rust broker never counts SNDBCK_PUT_NUMS, so the count comes from the retry topic's growth.
    assert_eq!(
        f[0].evidence.get("source"),
        Some(&serde_json::json!("retry topic growth"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consumer_offset_beyond_max_is_offset_out_of_range() {
    let cluster = RocketMqCluster::start(&[BrokerSpec::master("broker-a")]);
    let mut watch = Watch::new(&cluster);
    create_topic(&cluster, &watch, "oor-t", 2).await;
    produce(&cluster, "oor-t", 10, 64);
    let broker = cluster.brokers[0].addr.clone();
    let max = watch
        .collectors
        .rocketmq
        .max_offset(&broker, "oor-t", 0)
        .await
        .unwrap();
    watch
        .collectors
        .rocketmq
        .create_subscription_group(&broker, "oor-g")
        .await
        .unwrap();
    watch
        .collectors
        .rocketmq
        .update_consumer_offset(&broker, "oor-g", "oor-t", 0, max + 100)
        .await
        .unwrap();
    let r = watch.cycle().await;
    let f = find(&r.findings, FindingKind::OffsetOutOfRange, "oor-g").expect("offset_out_of_range");
    let logs = f.evidence.get("logs").unwrap().as_array().unwrap();
    assert_eq!(logs.len(), 1, "{f:?}");
    assert_eq!(logs[0]["committed"], serde_json::json!(max + 100));
    assert_eq!(logs[0]["latest"], serde_json::json!(max));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_broker_is_broker_down_and_leaves_the_lifecycle_within_two_cycles() {
    let mut cluster = RocketMqCluster::start(&[
        BrokerSpec::master("broker-a"),
        BrokerSpec::master("broker-b"),
    ]);
    let mut watch = Watch::new(&cluster);
    eventually!("both brokers registered and active", async {
        let r = watch.cycle().await;
        let m = watch.memory.lifecycle.metrics(now_ms());
        (m.active == 2 && r.findings.is_empty()).then_some(())
    });
    cluster.broker("broker-b", 0).process.kill();
    let mut down = None;
    for _ in 0..2 {
        let r = watch.cycle().await;
        if let Some(f) = find(&r.findings, FindingKind::BrokerDown, "broker-b:0") {
            down = Some(f.clone());
            break;
        }
    }
    let down = down.expect("broker_down for broker-b:0 within two cycles");
    assert!(down.message.contains("broker-b:0"), "{down:?}");
    // Registered but silent (fenced), or already gone from the name server's list (unregistered): not active.
    let m = watch.memory.lifecycle.metrics(now_ms());
    assert_eq!(m.active, 1, "{m:?}");
    let b = mqwatch_model::NodeRef::new(mqwatch_model::NodeRole::Broker, "broker-b:0");
    let state = watch.memory.lifecycle.state(&b);
    assert!(state.is_none_or(|s| s.is_fenced()), "broker-b is {state:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_slave_is_reported() {
    let mut cluster = RocketMqCluster::start(&[
        BrokerSpec::master("broker-a"),
        BrokerSpec::slave("broker-a"),
    ]);
    let mut watch = Watch::new(&cluster);
    eventually!("master and slave registered", async {
        let r = watch.cycle().await;
        let up = r
            .snapshot
            .nodes
            .iter()
            .filter(|n| n.node.name.starts_with("broker-a:") && n.answered)
            .count();
        (up == 2).then_some(())
    });
    cluster
        .broker("broker-a", 1)
        .process
        .stop(Duration::from_secs(10));
    let f = eventually!("the slave reported", async {
        let r = watch.cycle().await;
        r.findings
            .iter()
            .find(|f| {
                matches!(
                    f.kind,
                    FindingKind::BrokerDown | FindingKind::SlaveFallBehind
                ) && f.subject.to_string().contains("broker-a:1")
            })
            .cloned()
    });
    assert!(f.message.contains("broker-a:1"), "{f:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_broker_costs_one_timeout_and_is_broker_down() {
    let mut cluster = RocketMqCluster::start(&[
        BrokerSpec::master("broker-a"),
        BrokerSpec::master("broker-b"),
    ]);
    let mut watch = Watch::new(&cluster);
    create_topic(&cluster, &watch, "hang-t", 4).await;
    eventually!("both brokers active", async {
        let r = watch.cycle().await;
        (watch.memory.lifecycle.metrics(now_ms()).active == 2 && r.findings.is_empty())
            .then_some(())
    });
    // SIGSTOP: the broker keeps its sockets and its registration, and answers nothing.
    cluster.broker("broker-b", 0).process.pause();
    let r = watch.cycle().await;
    cluster.broker("broker-b", 0).process.resume();
    let down = find(&r.findings, FindingKind::BrokerDown, "broker-b:0")
        .expect("broker_down for the hung broker");
    assert!(
        down.message.contains("no answer within 3000 ms"),
        "{down:?}"
    );
    // Every request to it after the first timeout is skipped, so the cycle is one timeout long, not one per
    // request (it would be dozens here): generous bound, far below two timeouts plus the healthy broker's work.
    assert!(
        r.snapshot.cycle_ms < 6_000,
        "cycle took {} ms",
        r.snapshot.cycle_ms
    );
    assert_eq!(topic_messages(&r.snapshot, "hang-t"), 0);
    assert!(
        r.snapshot
            .logs
            .iter()
            .any(|l| l.log.to_string().contains("hang-t@broker-a")),
        "broker-a still read"
    );
}
