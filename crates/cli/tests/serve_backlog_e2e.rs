//! The alarm path end to end on a real RocketMQ: a consumer stops → `mqwatch serve` raises a `backlog` alarm that
//! shows in the real Alertmanager and arrives at a webhook; the consumer comes back → the alarm resolves in both.
//!
//! REAL: the name server and broker (`rocketmq-namesrv` / `rocketmq-broker` 1.0.0, started by mqwatch-testkit on
//! free loopback ports, stopped by PID), the producer and push consumer (`rocketmq-client-rust` 1.0.0 in the
//! `mqwatch-rmq-client` program of crate mqwatch-e2e), Debian's Alertmanager (mqwatch-testkit), the `mqwatch`
//! binary. The webhook receiver is an axum server in the test. `mqwatch-rmq-client` is found next to the
//! `mqwatch` binary: `cargo test --workspace` (scripts/test) builds it; alone, run
//! `cargo build -p mqwatch-e2e --bin mqwatch-rmq-client` first.

mod common;

use common::{Receiver, get_json, start_serve};
use mqwatch_testkit::alertmanager::Alertmanager;
use mqwatch_testkit::poll_until;
use mqwatch_testkit::process::PeerProcess;
use mqwatch_testkit::rocketmq::{BrokerSpec, RocketMqCluster};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(120);
const TOPIC: &str = "orders-e2e";
const GROUP: &str = "billing";

fn client_bin() -> Command {
    let path = PathBuf::from(env!("CARGO_BIN_EXE_mqwatch")).with_file_name("mqwatch-rmq-client");
    assert!(
        path.exists(),
        "{} is missing: cargo test --workspace builds it, or run cargo build -p mqwatch-e2e --bin mqwatch-rmq-client",
        path.display()
    );
    Command::new(path)
}

fn produce(cluster: &RocketMqCluster, count: u64) {
    let out = client_bin()
        .args([
            &cluster.namesrv_addr,
            "produce",
            TOPIC,
            &count.to_string(),
            "64",
        ])
        .output()
        .expect("run mqwatch-rmq-client");
    assert!(
        out.status.success()
            && String::from_utf8_lossy(&out.stdout).contains(&format!("SENT {count}")),
        "producer failed: {out:?}\n{}",
        cluster.logs()
    );
}

fn consumer(cluster: &RocketMqCluster, name: &str) -> PeerProcess {
    let mut cmd = client_bin();
    cmd.args([&cluster.namesrv_addr, "consume", TOPIC, GROUP, "ok"]);
    let p = PeerProcess::spawn(name, cmd, cluster.dir());
    poll_until("the consumer to start", DEADLINE, || {
        p.log_tail(4096).contains("READY").then_some(())
    });
    p
}

/// The group's (backlog, positions with a commit) in serve's latest cycle.
fn group_lag(addr: &str) -> Option<(i64, usize)> {
    let c = get_json(addr, "/api/v1/clusters/rmq")?;
    let g = c["snapshot"]["groups"]
        .as_array()?
        .iter()
        .find(|g| g["group"]["name"] == GROUP)?
        .clone();
    let positions = g["positions"].as_array()?;
    let lag = positions
        .iter()
        .filter_map(|p| Some(p["latest"].as_i64()? - p["committed"].as_i64()?))
        .sum();
    let committed = positions.iter().filter(|p| p["committed"].is_i64()).count();
    Some((lag, committed))
}

fn backlog_alerts(am: &Alertmanager) -> Option<Vec<serde_json::Value>> {
    Some(
        am.alerts()?
            .into_iter()
            .filter(|a| a["labels"]["alertname"] == "backlog" && a["labels"]["cluster"] == "rmq")
            .collect(),
    )
}

#[test]
fn a_stopped_consumer_raises_backlog_in_alertmanager_and_at_the_webhook_and_its_return_resolves_it()
{
    let cluster = RocketMqCluster::start(&[BrokerSpec::master("broker-a")]);
    let am = Alertmanager::start();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    std::fs::write(
        &config,
        format!(
            "[[cluster]]\nname = \"rmq\"\nengine = \"rocketmq\"\nname_servers = [\"{ns}\"]\n\
             interval = \"1s\"\ntimeout = \"3s\"\n\n\
             [thresholds.backlog]\ncount = 50\nage = \"1s\"\n\n\
             [alerts]\nfor = \"2s\"\n\n\
             [[channel]]\nname = \"hook\"\nkind = \"webhook\"\nurl = \"{hook}\"\nkinds = [\"backlog\"]\n\n\
             [[channel]]\nname = \"am\"\nkind = \"alertmanager\"\nurl = \"{am}\"\nresend = \"5s\"\n\
             kinds = [\"backlog\"]\n",
            ns = cluster.namesrv_addr,
            hook = receiver.url,
            am = am.url,
        ),
    )
    .unwrap();

    // A consumer that keeps up. The 40 are below the threshold of 50 so that a slow consumer start (a loaded
    // machine) cannot fire the alarm before the consumer caught up.
    let mut c = consumer(&cluster, "consumer-1");
    produce(&cluster, 40);
    let (mut serve, addr) = start_serve("serve", &config, &dir.path().join("state"), dir.path());
    poll_until("the group to have consumed everything", DEADLINE, || {
        group_lag(&addr).filter(|(lag, committed)| *lag == 0 && *committed > 0)
    });
    assert!(receiver.requests().is_empty(), "no alarm while it keeps up");

    // It stops; messages keep coming.
    c.kill();
    produce(&cluster, 60);
    let firing = poll_until("the backlog firing at the webhook", DEADLINE, || {
        receiver
            .requests()
            .into_iter()
            .find(|(_, n)| n["event"] == "firing" && n["finding"]["kind"] == "backlog")
    });
    let key = firing.1["key"].as_str().unwrap().to_string();
    assert!(key.starts_with("backlog/rmq/"), "{key}");
    assert!(key.contains(GROUP), "{key}");
    assert_eq!(
        firing.1["finding"]["evidence"]["count"], 60,
        "{:?}",
        firing.1
    );
    let alerts = poll_until("the backlog alert in Alertmanager", DEADLINE, || {
        backlog_alerts(&am).filter(|a| !a.is_empty())
    });
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    assert_eq!(alerts[0]["annotations"]["key"], key.as_str(), "{alerts:?}");
    assert_eq!(alerts[0]["status"]["state"], "active", "{alerts:?}");
    let alarm = get_json(&addr, "/api/v1/alarms").unwrap();
    assert!(
        alarm
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["key"] == key.as_str() && a["state"] == "firing"),
        "{alarm}"
    );

    // It comes back and catches up: resolved in both.
    let _c = consumer(&cluster, "consumer-2");
    let resolved = poll_until("the resolve at the webhook", DEADLINE, || {
        receiver
            .requests()
            .into_iter()
            .find(|(_, n)| n["event"] == "resolved" && n["key"] == key.as_str())
    });
    assert_ne!(resolved.0, firing.0, "a second outbox row");
    poll_until("the alert to end in Alertmanager", DEADLINE, || {
        backlog_alerts(&am).filter(|a| a.is_empty())
    });
    let told: Vec<String> = receiver
        .requests()
        .iter()
        .map(|(_, n)| format!("{} {}", n["event"], n["key"]))
        .collect();
    assert_eq!(
        told,
        vec![
            format!("\"firing\" \"{key}\""),
            format!("\"resolved\" \"{key}\"")
        ],
        "one firing, one resolve"
    );
    serve.stop(Duration::from_secs(10));
}
