//! `mqwatch demo` as a process: the real binary on port 0 at speed 30 (one fault period a minute) with 20 minutes
//! of history. Everything behind it is real — cycles, the checks, the alarm lifecycle, the SQLite store, the
//! HTTP API and `/metrics` — except the estate, which is the built-in simulation (that is what the demo is).
//! The test reads the API: three simulated clusters, traffic, backlog and latency series with points (minutes and
//! hour rollups), a backlog alarm that fires, resolves and fires again, a BookKeeper ledger below its write
//! quorum, a blocked client, a broker down then stuck in startup (and the simulated probe's messages to it lost:
//! its `produce_failure` and the probe view); then stops the process by PID and finds its temporary store
//! removed. Also the probe view of each engine and its refusals, and the bookies of the nodes view.

mod common;

use common::get_json;
use mqwatch_testkit::poll_until;
use mqwatch_testkit::process::PeerProcess;
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(150);

fn start(dir: &std::path::Path, extra: &[&str]) -> (PeerProcess, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mqwatch"));
    cmd.args(["demo", "--listen", "127.0.0.1:0", "--speed", "30"])
        .args(["--backfill", "20m", "--token", "demo-test", "--seed", "7"])
        .args(extra)
        .env("TMPDIR", dir)
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1");
    let demo = PeerProcess::spawn("demo", cmd, dir);
    let addr = poll_until("mqwatch demo to listen", DEADLINE, || {
        let log = demo.log_tail(1 << 16);
        let rest = log.split("listening on http://").nth(1)?;
        Some(rest.split_whitespace().next()?.to_string())
    });
    (demo, addr)
}

/// Points of a stored series.
fn series(addr: &str, cluster: &str, metric: &str, subject: &str, extra: &str) -> Vec<Value> {
    let path = format!(
        "/api/v1/clusters/{cluster}/series?metric={metric}&subject={}{extra}",
        subject.replace(' ', "%20")
    );
    get_json(addr, &path)
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default()
}

/// The alarm of `kind` whose key contains `part`, in `state`.
fn alarm(addr: &str, kind: &str, part: &str, state: &str) -> Option<Value> {
    get_json(addr, "/api/v1/alarms")?
        .as_array()?
        .iter()
        .find(|a| {
            a["finding"]["kind"] == kind
                && a["state"] == state
                && a["key"].as_str().is_some_and(|k| k.contains(part))
        })
        .cloned()
}

/// A current finding of `kind`.
fn finding(addr: &str, kind: &str) -> Option<Value> {
    get_json(addr, "/api/v1/findings")?
        .as_array()?
        .iter()
        .find(|f| f["kind"] == kind)
        .cloned()
}

#[test]
fn the_demo_runs_the_product_on_a_simulated_estate_with_faults_that_come_and_go() {
    let dir = tempfile::tempdir().unwrap();
    let (mut demo, addr) = start(dir.path(), &[]);

    let clusters = poll_until("three clusters", DEADLINE, || {
        let list = get_json(&addr, "/api/v1/clusters")?;
        (list.as_array()?.len() == 3).then_some(list)
    });
    let mut seen: Vec<(String, String)> = clusters
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["simulated"], true, "{c}");
            (
                c["name"].as_str().unwrap().into(),
                c["engine"].as_str().unwrap().into(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("demo-bookkeeper".into(), "bookkeeper".into()),
            ("demo-kafka".into(), "kafka".into()),
            ("demo-rocketmq".into(), "rocketmq".into())
        ]
    );

    // History: 20 minutes of per-minute rows and their hour rollups, through the same recording as live cycles.
    let produced = series(
        &addr,
        "demo-rocketmq",
        "produce_messages",
        "topic orders",
        "",
    );
    assert!(produced.len() >= 15, "{produced:?}");
    assert!(
        produced.iter().all(|p| p["value"].as_f64().unwrap() > 0.0),
        "{produced:?}"
    );
    let from = produced[0]["minute_ms"].as_u64().unwrap() - 3_600_000;
    let hourly = series(
        &addr,
        "demo-rocketmq",
        "produce_messages",
        "topic orders",
        &format!("&resolution=hour&from={from}"),
    );
    assert!(!hourly.is_empty(), "hour rollups of the history");
    let lag = series(&addr, "demo-kafka", "backlog", "group clickstream-etl", "");
    assert!(lag.len() >= 15, "{lag:?}");
    // Kafka's collector reads no produce counters: its produced messages come from offset growth.
    let clicks = series(&addr, "demo-kafka", "produce_messages", "topic clicks", "");
    assert!(clicks.len() >= 15, "{clicks:?}");
    assert!(
        clicks.iter().all(|p| p["value"].as_f64().unwrap() > 0.0),
        "{clicks:?}"
    );
    // The simulated end-to-end probe: round trips per broker in history, as serve writes a running prober's.
    let rt = series(
        &addr,
        "demo-kafka",
        "probe_roundtrip_p50_ms",
        "broker 1",
        "",
    );
    assert!(rt.len() >= 15, "{rt:?}");
    assert!(
        rt.iter()
            .all(|p| (1.0..1_000.0).contains(&p["value"].as_f64().unwrap())),
        "{rt:?}"
    );
    let p50 = series(
        &addr,
        "demo-kafka",
        "produce_latency_p50_ms",
        "topic clicks",
        "",
    );
    let p99 = series(
        &addr,
        "demo-kafka",
        "produce_latency_p99_ms",
        "topic clicks",
        "",
    );
    assert!(p50.len() >= 20 && p50.len() == p99.len(), "{p50:?} {p99:?}");
    for (a, b) in p50.iter().zip(&p99) {
        assert!(a["value"].as_f64().unwrap() <= b["value"].as_f64().unwrap());
    }
    let metrics = poll_until("/metrics with the demo's values", DEADLINE, || {
        let (status, body) = mqwatch_testkit::http_get(&addr, "/metrics")?;
        (status == 200 && body.contains("mqwatch_group_backlog_messages{")).then_some(body)
    });
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("mqwatch_up{") && l.contains("demo-kafka") && l.ends_with(" 1")),
        "{metrics}"
    );

    // The faults: each appears through the real checks and goes away again.
    let firing = poll_until("a firing backlog alarm", DEADLINE, || {
        alarm(&addr, "backlog", "group billing", "firing")
    });
    let key = firing["key"].as_str().unwrap().to_string();
    assert!(key.starts_with("backlog/demo-rocketmq/"), "{key}");
    poll_until("the backlog alarm to resolve", DEADLINE, || {
        alarm(&addr, "backlog", &key, "resolved")
    });
    let below = poll_until("a ledger below its write quorum", DEADLINE, || {
        finding(&addr, "entries_below_write_quorum")
    });
    assert_eq!(below["cluster"], "demo-bookkeeper", "{below}");
    assert!(
        below["message"]
            .as_str()
            .unwrap()
            .contains("192.0.2.33:3181"),
        "{below}"
    );
    let down = poll_until("a broker down", DEADLINE, || finding(&addr, "broker_down"));
    assert_eq!(down["cluster"], "demo-kafka", "{down}");
    // While it is away, the probe's messages to it fail: the probe's produce_failure, and its view.
    let lost = poll_until(
        "the probe's produce_failure about broker 3",
        DEADLINE,
        || {
            get_json(&addr, "/api/v1/findings")?
                .as_array()?
                .iter()
                .find(|f| f["kind"] == "produce_failure" && f["evidence"]["source"] == "probe")
                .cloned()
        },
    );
    assert_eq!(lost["cluster"], "demo-kafka", "{lost}");
    assert_eq!(lost["evidence"]["broker"], "3", "{lost}");
    let view = poll_until(
        "the probe view to count broker 3's losses",
        DEADLINE,
        || {
            let v = get_json(&addr, "/api/v1/clusters/demo-kafka/probe?minutes=1")?;
            let b3 = v["brokers"]
                .as_array()?
                .iter()
                .find(|b| b["broker"]["name"] == "3")?
                .clone();
            (b3["lost"].as_u64() > Some(0)).then_some((v, b3))
        },
    );
    let (v, b3) = view;
    assert_eq!(
        (v["running"].clone(), v["simulated"].clone()),
        (true.into(), true.into()),
        "{v}"
    );
    assert_eq!(v["window_ms"], 60_000, "{v}");
    assert!(b3["send_failures"].as_u64() > Some(0), "{b3}");
    assert!(
        b3["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("192.0.2.23:9092")),
        "{b3}"
    );
    let healthy = v["brokers"].as_array().unwrap();
    assert_eq!(healthy.len(), 3, "{v}");
    assert!(
        healthy
            .iter()
            .filter(|b| b["broker"]["name"] != "3")
            .all(|b| b["lost"] == 0 && b["delivered"].as_u64() > Some(0)),
        "{v}"
    );
    let startup = poll_until("a broker stuck in startup", DEADLINE, || {
        finding(&addr, "startup_pending")
    });
    assert_eq!(startup["subject"]["node"]["name"], "3", "{startup}");
    // The injected fault is group notify's client. (At speed 30 the block threshold is 2 s, so on a loaded machine
    // a healthy group's client can also cross it between two late cycles; that one is real, just not the fault.)
    let blocked = poll_until("group notify's client blocked", DEADLINE, || {
        get_json(&addr, "/api/v1/findings")?
            .as_array()?
            .iter()
            .find(|f| f["kind"] == "client_blocked" && f["evidence"]["group"] == "notify")
            .cloned()
    });
    assert_eq!(blocked["severity"], "warning", "{blocked}");
    poll_until("the backlog alarm to fire again", DEADLINE, || {
        alarm(&addr, "backlog", &key, "firing")
    });

    let pid = demo.pid();
    demo.stop(Duration::from_secs(20));
    assert!(
        demo.log_tail(4096).contains("mqwatch: stopped"),
        "pid {pid:?}: {}",
        demo.log_tail(4096)
    );
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("mqwatch-demo-"))
        .collect();
    assert!(
        left.is_empty(),
        "the temporary store is removed at exit: {left:?}"
    );
}

#[test]
fn the_probe_view_answers_per_cluster_and_refuses_bad_windows() {
    let dir = tempfile::tempdir().unwrap();
    let (mut demo, addr) = start(dir.path(), &[]);
    let rmq = poll_until("the RocketMQ probe view", DEADLINE, || {
        get_json(&addr, "/api/v1/clusters/demo-rocketmq/probe")
    });
    assert_eq!(rmq["running"], true, "{rmq}");
    assert_eq!(rmq["topic"], "mqwatch-canary", "{rmq}");
    assert_eq!(rmq["window_ms"], 300_000, "default 5 minutes: {rmq}");
    let brokers: Vec<&str> = rmq["brokers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            assert!(b["delivered"].as_u64() > Some(0), "{b}");
            assert!(
                b["roundtrip_p50_ms"].as_f64() >= b["produce_p50_ms"].as_f64(),
                "{b}"
            );
            b["subject"].as_str().unwrap()
        })
        .collect();
    assert_eq!(brokers, ["broker broker-a:0", "broker broker-b:0"], "{rmq}");
    let bk = get_json(&addr, "/api/v1/clusters/demo-bookkeeper/probe").unwrap();
    assert_eq!(bk["running"], false, "no probe on BookKeeper: {bk}");
    assert_eq!(bk["brokers"], serde_json::json!([]), "{bk}");
    for (path, status) in [
        ("/api/v1/clusters/nope/probe", 404),
        ("/api/v1/clusters/demo-kafka/probe?minutes=0", 400),
        ("/api/v1/clusters/demo-kafka/probe?minutes=61", 400),
        ("/api/v1/clusters/demo-kafka/probe?minutes=x", 400),
    ] {
        let (got, body) = mqwatch_testkit::http_get(&addr, path).unwrap();
        assert_eq!(got, status, "{path}: {body}");
    }
    let nodes = get_json(&addr, "/api/v1/clusters/demo-bookkeeper/nodes").unwrap();
    let bookies = nodes.as_array().unwrap();
    assert_eq!(bookies.len(), 5, "{nodes}");
    assert!(bookies.iter().all(|b| b["role"] == "bookie"), "{nodes}");
    assert!(
        bookies.iter().all(|b| b["rack"].is_string()),
        "the rack map: {nodes}"
    );
    demo.stop(Duration::from_secs(20));
}

#[test]
fn bad_demo_arguments_stop_it_with_the_reason() {
    let out = Command::new(env!("CARGO_BIN_EXE_mqwatch"))
        .args(["demo", "--speed", "0", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--speed 0"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_mqwatch"))
        .args(["demo", "--backfill", "3 hours", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--backfill") && err.contains("3 hours"),
        "{err}"
    );
}
