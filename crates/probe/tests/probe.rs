//! The end-to-end probe against real peers: a real RocketMQ name server with two real brokers, and a real
//! tansu broker (Kafka protocol), both started by crates/testkit on free ports and stopped by PID. Nothing here
//! is simulated: the probe produces to and reads back from the real brokers, and stopping one is a real stop.

use mqwatch_checks::produce::ProduceFailureThresholds;
use mqwatch_model::{Engine, Finding, FindingKind, Span};
use mqwatch_probe::kafka::KafkaTarget;
use mqwatch_probe::rocketmq::RocketMqTarget;
use mqwatch_probe::{BrokerSummary, ProbeConfig, Prober, Target, now_ms, probe_findings};
use mqwatch_testkit::rocketmq::{BrokerSpec, RocketMqCluster};
use mqwatch_testkit::tansu::Tansu;
use std::time::{Duration, Instant};

const WINDOW_MS: u64 = 300_000;

fn config() -> ProbeConfig {
    ProbeConfig {
        enabled: true,
        topic: "mqwatch-canary".into(),
        interval: Span::from_millis(200),
        sla: Span::from_secs(3),
    }
}

/// Polls `probe` every 50 ms until it returns `Some`, or panics with `what` after `deadline`.
async fn eventually<T>(what: &str, deadline: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn broker<'a>(summaries: &'a [BrokerSummary], name: &str) -> Option<&'a BrokerSummary> {
    summaries.iter().find(|s| s.broker.name == name)
}

fn findings(p: &Prober, engine: Engine) -> Vec<Finding> {
    let now = now_ms();
    probe_findings(
        "c",
        engine,
        "mqwatch-canary",
        &p.summaries(now, WINDOW_MS),
        p.discovery_error().as_deref(),
        &ProduceFailureThresholds::default(),
        now,
    )
}

/// Waits until `name` has at least 3 messages read back, and returns its summary.
async fn delivering(p: &Prober, name: &str) -> BrokerSummary {
    eventually(
        &format!("round trips through {name}"),
        Duration::from_secs(60),
        || {
            broker(&p.summaries(now_ms(), WINDOW_MS), name)
                .filter(|s| s.delivered >= 3)
                .cloned()
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rocketmq_round_trips_per_broker_and_a_stopped_broker_loses_its_probes() {
    let mut cluster = RocketMqCluster::start(&[
        BrokerSpec::master("broker-a"),
        BrokerSpec::master("broker-b"),
    ]);
    let target = RocketMqTarget::new(
        vec![cluster.namesrv_addr.clone()],
        "mqwatch-canary",
        Duration::from_secs(3),
    );
    let p = Prober::start(Target::Rocketmq(target), config());
    for name in ["broker-a:0", "broker-b:0"] {
        let s = delivering(&p, name).await;
        eprintln!("{name}: {s:?}");
        assert_eq!(s.lost, 0, "{s:?}\n{}", cluster.logs());
        let rt = s.roundtrip_p99_ms.expect("round-trip latency");
        let produce = s.produce_p99_ms.expect("produce latency");
        assert!(
            rt > 0.0 && rt < 3_000.0 && produce <= rt * 1.05 + 1.0,
            "{s:?}"
        );
        assert_eq!(
            s.broker.addr.as_deref(),
            Some(cluster.broker(&name[..8], 0).addr.as_str())
        );
    }
    assert!(
        findings(&p, Engine::Rocketmq).is_empty(),
        "healthy cluster: {:?}",
        findings(&p, Engine::Rocketmq)
    );

    cluster
        .broker("broker-b", 0)
        .process
        .stop(Duration::from_secs(10));
    let f = eventually(
        "a produce_failure about broker-b",
        Duration::from_secs(30),
        || {
            findings(&p, Engine::Rocketmq).into_iter().find(|f| {
                f.kind == FindingKind::ProduceFailure
                    && f.subject.to_string() == "broker broker-b:0"
            })
        },
    )
    .await;
    eprintln!("{}", f.message);
    assert!(
        f.evidence.get("lost").and_then(|v| v.as_u64()).unwrap_or(0) >= 1,
        "{f:?}"
    );
    assert!(f.evidence.get("error").is_some(), "{f:?}");
    // broker-a keeps delivering, with nothing lost.
    let before = broker(&p.summaries(now_ms(), WINDOW_MS), "broker-a:0")
        .unwrap()
        .delivered;
    let a = eventually(
        "broker-a to keep delivering",
        Duration::from_secs(30),
        || {
            broker(&p.summaries(now_ms(), WINDOW_MS), "broker-a:0")
                .filter(|s| s.delivered >= before + 3)
                .cloned()
        },
    )
    .await;
    assert_eq!(a.lost, 0, "{a:?}");
    assert!(
        !findings(&p, Engine::Rocketmq)
            .iter()
            .any(|f| f.subject.to_string() == "broker broker-a:0"),
        "broker-a is healthy"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tansu_round_trips_and_a_stopped_broker_loses_its_probes() {
    let mut tansu = Tansu::start();
    let target = KafkaTarget::new(
        vec![tansu.addr.clone()],
        "mqwatch-canary",
        Duration::from_secs(3),
    );
    let p = Prober::start(Target::Kafka(Box::new(target)), config());
    let name = eventually("tansu to be listed", Duration::from_secs(60), || {
        p.summaries(now_ms(), WINDOW_MS)
            .first()
            .map(|s| s.broker.name.clone())
    })
    .await;
    let s = delivering(&p, &name).await;
    eprintln!("{name}: {s:?}");
    assert_eq!(s.lost, 0, "{s:?}\n{}", tansu.process.log_tail(4000));
    assert!(
        s.roundtrip_p99_ms
            .is_some_and(|rt| rt > 0.0 && rt < 3_000.0),
        "{s:?}"
    );
    assert!(
        findings(&p, Engine::Kafka).is_empty(),
        "{:?}",
        findings(&p, Engine::Kafka)
    );

    tansu.process.stop(Duration::from_secs(10));
    let subject = format!("broker {name}");
    let f = eventually(
        "a produce_failure about the stopped broker",
        Duration::from_secs(30),
        || {
            findings(&p, Engine::Kafka)
                .into_iter()
                .find(|f| f.kind == FindingKind::ProduceFailure && f.subject.to_string() == subject)
        },
    )
    .await;
    eprintln!("{}", f.message);
    assert!(
        f.evidence.get("lost").and_then(|v| v.as_u64()).unwrap_or(0) >= 1,
        "{f:?}"
    );
    assert!(
        findings(&p, Engine::Kafka)
            .iter()
            .any(|f| f.kind == FindingKind::CollectorError),
        "metadata cannot be read either"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_rocketmq_broker_loses_its_probes_and_recovers_when_resumed() {
    let mut cluster = RocketMqCluster::start(&[BrokerSpec::master("broker-h")]);
    let target = RocketMqTarget::new(
        vec![cluster.namesrv_addr.clone()],
        "mqwatch-canary",
        Duration::from_secs(1),
    );
    let p = Prober::start(Target::Rocketmq(target), config());
    delivering(&p, "broker-h:0").await;

    // SIGSTOP: the broker stays registered and its port open, but answers nothing.
    cluster.broker("broker-h", 0).process.pause();
    let f = eventually(
        "a produce_failure about the hung broker",
        Duration::from_secs(30),
        || {
            findings(&p, Engine::Rocketmq).into_iter().find(|f| {
                f.kind == FindingKind::ProduceFailure
                    && f.subject.to_string() == "broker broker-h:0"
            })
        },
    )
    .await;
    eprintln!("{}", f.message);
    let error = f
        .evidence
        .get("error")
        .and_then(|e| e.as_str())
        .unwrap_or_default()
        .to_string();
    assert!(
        error.contains("no answer") || error.contains("sla"),
        "{f:?}"
    );

    cluster.broker("broker-h", 0).process.resume();
    let before = broker(&p.summaries(now_ms(), WINDOW_MS), "broker-h:0")
        .unwrap()
        .delivered;
    eventually(
        "round trips again after resume",
        Duration::from_secs(30),
        || {
            broker(&p.summaries(now_ms(), WINDOW_MS), "broker-h:0")
                .filter(|s| s.delivered >= before + 3)
                .map(drop)
        },
    )
    .await;
}
