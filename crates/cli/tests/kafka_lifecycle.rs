//! Kafka broker lifecycle end to end: the real `mqwatch check` binary, run again and again on one state
//! directory, against a SCRIPTED Kafka cluster (crates/kafka/tests/scripted: protocol-exact, NOT real servers;
//! every request and response is kafka-protocol's own type on a real TCP connection, answered from a script
//! this test changes between runs). Real: the binary, its client, collector, checks, state directory and JSON.
//!
//! Runs: brokers 1 and 2 serve, broker 3 is registered fenced (DescribeCluster v2 lists it, Metadata does not):
//! in startup; runs repeat until it has been in startup past the 1 s threshold (`startup_pending`, the startup
//! carried over between runs by the state directory); then 3 is unfenced and 2, which served, is fenced
//! (`node_fenced`); then 2 is gone, its port closed and its registration removed (`broker_down`: known from the
//! state directory). The lifecycle metrics of both sets appear in the JSON each run.

#[path = "../../kafka/tests/scripted/mod.rs"]
mod scripted;

use scripted::{Part, Script};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn check(config: &Path, state: &Path) -> (Option<i32>, Value) {
    let out = Command::new(env!("CARGO_BIN_EXE_mqwatch"))
        .args(["check", "--json", "--config"])
        .arg(config)
        .arg("--state-dir")
        .arg(state)
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), doc)
}

/// `(kind, subject node name)` of every node finding.
fn node_findings(doc: &Value) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = doc["clusters"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| {
            Some((
                f["kind"].as_str()?.to_string(),
                f["subject"]["node"]["name"].as_str()?.to_string(),
            ))
        })
        .collect();
    v.sort();
    v
}

fn lifecycle(doc: &Value) -> &Value {
    &doc["clusters"][0]["lifecycle"]
}

/// The lifecycle row of broker `id`: (state, registration_state_code).
fn row(doc: &Value, id: &str) -> Option<(String, u64)> {
    lifecycle(doc)["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["node"]["name"] == id)
        .map(|r| {
            (
                r["state"].as_str().unwrap().to_string(),
                r["registration_state_code"].as_u64().unwrap(),
            )
        })
}

#[test]
fn startup_pending_node_fenced_and_broker_down_across_check_runs() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (shared, brokers, addrs) = rt.block_on(async {
        let mut addrs = BTreeMap::new();
        let mut listeners = Vec::new();
        for id in 1..=3 {
            let (l, a) = scripted::listener().await;
            addrs.insert(id, a);
            listeners.push((id, l));
        }
        let part = |index: i32, leader: i32| Part {
            topic: "orders",
            index,
            leader,
            replicas: vec![1, 2],
            isr: vec![1, 2],
            earliest: 0,
            latest: 10,
            leader_epoch: 0,
        };
        let shared = scripted::shared(Script {
            brokers: addrs
                .clone()
                .into_iter()
                .filter(|(id, _)| *id != 3)
                .collect(),
            fenced: BTreeMap::from([(3, addrs[&3].clone())]),
            partitions: vec![part(0, 1), part(1, 2)],
            offset_fetch_max: 8,
            admin_apis: true,
            list_groups_max: 5,
            ..Default::default()
        });
        let brokers: BTreeMap<i32, scripted::ScriptedBroker> = listeners
            .into_iter()
            .map(|(id, l)| (id, scripted::serve_shared(id, l, shared.clone())))
            .collect();
        (shared, brokers, addrs)
    });
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    std::fs::write(
        &config,
        format!(
            "[[cluster]]\nname = \"scripted\"\nengine = \"kafka\"\nbootstrap = [\"{}\"]\ntimeout = \"1s\"\n\n\
             [thresholds.lifecycle]\nstartup = \"1s\"\ncontrolled_shutdown = \"1s\"\n",
            addrs[&1]
        ),
    )
    .unwrap();
    let state = dir.path().join("state");

    // Run 1: broker 3 just registered fenced: in startup, not yet pending for long.
    let (code, doc) = check(&config, &state);
    assert_eq!(code, Some(0), "{doc:#}");
    assert_eq!(row(&doc, "3"), Some(("startup".into(), 10)));
    assert_eq!(row(&doc, "1"), Some(("active".into(), 30)));
    let m = &lifecycle(&doc)["metrics"];
    assert_eq!(m["in_startup"], 1, "{m:#}");
    assert_eq!(m["longest_pending_startup"]["node"]["name"], "3", "{m:#}");
    assert_eq!(
        (m["fenced"].as_u64(), m["active"].as_u64()),
        (Some(1), Some(2)),
        "{m:#}"
    );
    assert_eq!(m["degraded"], true, "{m:#}");
    assert!(node_findings(&doc).is_empty(), "{doc:#}");

    // Runs until broker 3 has been in startup past 1 s: the startup began in run 1 (state directory).
    let deadline = Instant::now() + Duration::from_secs(20);
    let doc = loop {
        let (code, doc) = check(&config, &state);
        if node_findings(&doc).contains(&("startup_pending".into(), "3".into())) {
            assert_eq!(code, Some(1), "startup_pending is a warning: {doc:#}");
            break doc;
        }
        assert!(Instant::now() < deadline, "no startup_pending: {doc:#}");
    };
    let pending = lifecycle(&doc)["metrics"]["longest_pending_startup"]["pending_ms"]
        .as_u64()
        .unwrap();
    assert!(pending > 1_000, "{pending}");

    // Broker 3 unfenced; broker 2, which served, fenced.
    let mut next = (**shared.read().unwrap()).clone();
    next.fenced = BTreeMap::from([(2, addrs[&2].clone())]);
    next.brokers.remove(&2);
    next.brokers.insert(3, addrs[&3].clone());
    scripted::set(&shared, next.clone());
    let (_, doc) = check(&config, &state);
    assert_eq!(
        node_findings(&doc),
        vec![("node_fenced".to_string(), "2".to_string())],
        "{doc:#}"
    );
    assert_eq!(row(&doc, "3"), Some(("active".into(), 30)));
    assert_eq!(row(&doc, "2"), Some(("fenced".into(), 10)));
    assert_eq!(lifecycle(&doc)["metrics"]["in_startup"], 0);

    // Broker 2 gone: port closed, registration removed. Known from the state directory: broker_down.
    brokers[&2].stop();
    next.fenced.clear();
    next.gone.insert(2);
    scripted::set(&shared, next);
    let (code, doc) = check(&config, &state);
    assert_eq!(code, Some(2), "broker_down is critical: {doc:#}");
    assert_eq!(
        node_findings(&doc),
        vec![("broker_down".to_string(), "2".to_string())],
        "{doc:#}"
    );
    assert_eq!(
        row(&doc, "2"),
        None,
        "an unregistered broker leaves the tracker"
    );
    let m = &lifecycle(&doc)["metrics"];
    assert_eq!(
        (m["fenced"].as_u64(), m["active"].as_u64()),
        (Some(0), Some(2)),
        "{m:#}"
    );
    assert_eq!(m["degraded"], false, "{m:#}");
}
