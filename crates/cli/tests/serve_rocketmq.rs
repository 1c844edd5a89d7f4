//! `mqwatch serve` as a process against a REAL RocketMQ name server and broker (started by mqwatch-testkit on
//! free loopback ports, stopped by PID): it serves the latest cycle over HTTP, reports a killed name server as
//! `name_server_down`, and keeps running and answering.

use mqwatch_testkit::process::PeerProcess;
use mqwatch_testkit::rocketmq::{BrokerSpec, RocketMqCluster};
use mqwatch_testkit::{http_get, poll_until};
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

fn get_json(addr: &str, path: &str) -> Option<serde_json::Value> {
    let (status, body) = http_get(addr, path)?;
    (status == 200)
        .then(|| serde_json::from_str(&body).ok())
        .flatten()
}

#[test]
fn serve_reports_a_killed_name_server_and_keeps_running() {
    let mut cluster = RocketMqCluster::start(&[BrokerSpec::master("broker-a")]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    std::fs::write(
        &config,
        format!(
            "[[cluster]]\nname = \"rmq\"\nengine = \"rocketmq\"\nname_servers = [\"{}\"]\ninterval = \"1s\"\n\
             timeout = \"2s\"\n",
            cluster.namesrv_addr
        ),
    )
    .unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mqwatch"));
    cmd.args([
        "serve",
        "--config",
        config.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--state-dir",
    ])
    .arg(dir.path().join("state"));
    let mut serve = PeerProcess::spawn("mqwatch-serve", cmd, dir.path());
    let addr = poll_until("mqwatch to listen", DEADLINE, || {
        let log = serve.log_tail(4096);
        let rest = log.split("listening on http://").nth(1)?;
        Some(rest.split_whitespace().next()?.to_string())
    });

    let healthy = poll_until("a first clean cycle", DEADLINE, || {
        let c = get_json(&addr, "/api/v1/clusters/rmq")?;
        let brokers = c["snapshot"]["nodes"]
            .as_array()?
            .iter()
            .filter(|n| n["answered"] == true)
            .count();
        (brokers == 2).then_some(c)
    });
    assert_eq!(healthy["findings"], serde_json::json!([]), "{healthy}");
    let node = &healthy["lifecycle"]["nodes"][0];
    assert_eq!(node["node"]["name"], "broker-a:0", "{healthy}");
    assert_eq!(node["registration_state_code"], 30, "active: {healthy}");
    assert_eq!(healthy["lifecycle"]["metrics"]["active"], 1, "{healthy}");

    cluster.namesrv.kill();
    let findings = poll_until("name_server_down over HTTP", DEADLINE, || {
        let f = get_json(&addr, "/api/v1/findings")?;
        f.as_array()?
            .iter()
            .any(|f| f["kind"] == "name_server_down")
            .then_some(f)
    });
    assert!(
        findings.to_string().contains(&cluster.namesrv_addr),
        "{findings}"
    );
    assert!(
        serve.is_running(),
        "mqwatch exited: {}",
        serve.log_tail(2000)
    );
    assert_eq!(http_get(&addr, "/healthz").map(|(s, _)| s), Some(200));
    serve.stop(Duration::from_secs(10));
    assert!(
        serve.log_tail(500).contains("mqwatch: stopped"),
        "graceful stop: {}",
        serve.log_tail(2000)
    );
}
