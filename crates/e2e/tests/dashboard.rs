//! The dashboard in a real browser. REAL: `mqwatch serve` as a process (the binary this workspace builds, started
//! and stopped by PID), the RocketMQ name server and broker 1.0.0 (mqwatch-testkit, free loopback ports), the
//! traffic (the `rocketmq-client-rust` producer and push consumer in `mqwatch-rmq-client`), Debian's headless
//! Chromium driven by playwright-core (`crates/web/browser-tests/dashboard.cjs`, npm packages pinned by
//! `crates/web/package-lock.json`, installed by `scripts/test`). Nothing is faked.
//!
//! It asserts what an operator sees: the charts draw data points (uPlot's data read from the page, the series'
//! colour found in the canvas pixels), a fault (a stopped consumer leaving a backlog) shows as an alarm, and
//! silencing it through the UI (token typed, "silence" clicked) marks it silenced and stores the silence. On the
//! demo also: acknowledging another alarm ("ack" clicked), the end-to-end probe panel and its round-trip chart,
//! and per engine only the panels that apply (BookKeeper: durability and bookies; no traffic, groups or probe).
//! Screenshots go to a kept temp directory (printed); with `MQWATCH_UPDATE_DOCS=1` the first one is copied to
//! `docs/dashboard.png`.

use mqwatch_testkit::process::PeerProcess;
use mqwatch_testkit::rocketmq::{BrokerSpec, RocketMqCluster};
use mqwatch_testkit::{browser, http_get, poll_until};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(90);
const TOKEN: &str = "dashboard-test-token";

/// One browser test at a time: each runs Chromium beside mqwatch (and a broker); on 2 cores two at once starve
/// the broker's consume-time reads. Order does not matter.
static ONE_BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The `mqwatch` binary of this build (beside the client program; `cargo test --workspace` builds both).
fn mqwatch_bin() -> PathBuf {
    let bin = Path::new(env!("CARGO_BIN_EXE_mqwatch-rmq-client")).with_file_name("mqwatch");
    assert!(
        bin.exists(),
        "{} is missing: build it first (cargo build -p mqwatch-cli; cargo test --workspace does)",
        bin.display()
    );
    bin
}

fn get_json(addr: &str, path: &str) -> Option<serde_json::Value> {
    let (status, body) = http_get(addr, path)?;
    (status == 200)
        .then(|| serde_json::from_str(&body).ok())
        .flatten()
}

/// Starts `mqwatch <args>` and returns it with the address it listens on.
fn start_mqwatch(args: &[&str], dir: &Path) -> (PeerProcess, String) {
    let mut cmd = Command::new(mqwatch_bin());
    cmd.args(args);
    let p = PeerProcess::spawn("mqwatch", cmd, dir);
    let addr = poll_until("mqwatch to listen", DEADLINE, || {
        let log = p.log_tail(8192);
        let rest = log.split("listening on http://").nth(1)?;
        Some(rest.split_whitespace().next()?.to_string())
    });
    (p, addr)
}

fn client(cluster: &RocketMqCluster) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_mqwatch-rmq-client"));
    c.arg(&cluster.namesrv_addr);
    c
}

fn produce(cluster: &RocketMqCluster, topic: &str, count: u64) {
    let out = client(cluster)
        .args(["produce", topic, &count.to_string(), "256"])
        .output()
        .expect("run mqwatch-rmq-client");
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("SENT"),
        "producer failed: {out:?}\n{}",
        cluster.logs()
    );
}

/// Screenshots directory, kept after the test.
fn screenshots() -> PathBuf {
    let dir = tempfile::Builder::new()
        .prefix("mqwatch-dashboard-")
        .tempdir()
        .unwrap()
        .keep();
    eprintln!("screenshots in {}", dir.display());
    dir
}

fn update_docs(shot: &Path) {
    if std::env::var_os("MQWATCH_UPDATE_DOCS").is_some() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::copy(shot, docs.join("dashboard.png")).unwrap();
    }
}

#[test]
fn dashboard_against_real_rocketmq_shows_traffic_backlog_and_silences_an_alarm() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let cluster = RocketMqCluster::start(&[BrokerSpec::master("broker-a")]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let admin = mqwatch_rocketmq::client::AdminClient::new(Duration::from_secs(5));
    let broker = cluster.brokers[0].addr.clone();
    rt.block_on(admin.create_topic(&broker, "orders", 4))
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\ntoken = \"{TOKEN}\"\n\n[[cluster]]\nname = \"orders-rmq\"\nengine = \"rocketmq\"\n\
             name_servers = [\"{}\"]\ninterval = \"1s\"\ntimeout = \"3s\"\n\n\
             [thresholds.backlog]\ncount = 10\nage = \"1s\"\n\n[alerts]\nfor = \"2s\"\n",
            cluster.namesrv_addr
        ),
    )
    .unwrap();
    let state = dir.path().join("state");
    let (mut serve, addr) = start_mqwatch(
        &[
            "serve",
            "--config",
            config.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
            "--state-dir",
            state.to_str().unwrap(),
        ],
        dir.path(),
    );

    // Traffic, a consumer that commits it, then the consumer freezes and a backlog builds: the fault.
    let consumer = PeerProcess::spawn(
        "consumer-orders-g",
        {
            let mut c = client(&cluster);
            c.args(["consume", "orders", "orders-g", "ok"]);
            c
        },
        dir.path(),
    );
    poll_until("the consumer to start", DEADLINE, || {
        consumer.log_tail(4096).contains("READY").then_some(())
    });
    produce(&cluster, "orders", 300);
    // Wait for the commits themselves: offsets on the broker covering the 300 messages. (A cycle read before the
    // messages arrived shows empty queues at "committed 0", which says nothing of the consumer; frozen before its
    // first commit, the group has no offsets on the broker, and once the broker drops the frozen consumer's
    // connection its consume stats have no queue to show a backlog on.)
    poll_until("the group to commit all 300 messages", DEADLINE, || {
        let c = get_json(&addr, "/api/v1/clusters/orders-rmq")?;
        let g = c["snapshot"]["groups"]
            .as_array()?
            .iter()
            .find(|g| g["group"]["name"] == "orders-g")?
            .clone();
        let orders: Vec<&serde_json::Value> = g["positions"]
            .as_array()?
            .iter()
            .filter(|p| p["log"]["topic"] == "orders")
            .collect();
        let committed: i64 = orders.iter().filter_map(|p| p["committed"].as_i64()).sum();
        let caught_up = orders
            .iter()
            .all(|p| p["committed"].as_i64() == p["latest"].as_i64());
        (orders.len() == 4 && caught_up && committed >= 300).then_some(())
    });
    // The consumer freezes (SIGSTOP) and consumes nothing more. Its committed offsets stay on the broker, so its
    // queues stay in consume stats, also once the broker drops the frozen consumer's connection (it does within
    // seconds, when a GET_CONSUMER_RUNNING_INFO relayed to it goes unanswered) and the group is offline.
    consumer.pause();
    produce(&cluster, "orders", 50);
    // The alarm fires once the backlog finding has lasted `[alerts] for` (2 s here; backlog's default is 5 min).
    // Under a loaded machine the broker's consume-time span can lag; wait longer, and say what was seen.
    let start = std::time::Instant::now();
    loop {
        let o = get_json(&addr, "/api/v1/overview").unwrap_or_default();
        let firing = o["alarms"].as_array().is_some_and(|a| {
            a.iter()
                .any(|a| a["kind"] == "backlog" && a["state"] == "firing")
        });
        if firing {
            break;
        }
        assert!(
            start.elapsed() < 2 * DEADLINE,
            "no backlog alarm after {:?}; overview {o}\ngroups {:?}\nnodes {:?}\nerrors {:?}\nmqwatch log: {}",
            2 * DEADLINE,
            get_json(&addr, "/api/v1/clusters/orders-rmq/groups"),
            get_json(&addr, "/api/v1/clusters/orders-rmq/nodes"),
            get_json(&addr, "/api/v1/clusters/orders-rmq").map(|c| c["snapshot"]["errors"].clone()),
            serve.log_tail(3000)
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    let out = screenshots();
    let result = browser::run_script(
        "dashboard.cjs",
        &serde_json::json!({
            "url": format!("http://{addr}/"),
            "out": out,
            "name": "rocketmq",
            "charts": ["chart-traffic", "chart-backlog", "chart-age"],
            "alarmKind": "backlog",
            "token": TOKEN,
            "simulated": false,
            "deadlineMs": 90_000,
        }),
        Duration::from_secs(300),
    );
    for chart in ["chart-traffic", "chart-backlog", "chart-age"] {
        let c = &result["charts"][chart];
        assert!(c["points"].as_u64() > Some(0), "{chart}: {result}");
        assert!(
            c["coloured"].as_u64() > Some(0),
            "{chart} drew its series: {result}"
        );
    }
    assert!(
        result["estate"]
            .as_str()
            .unwrap_or_default()
            .contains("orders-rmq"),
        "{result}"
    );
    assert_eq!(result["alarm"]["subject"], "group orders-g", "{result}");
    let badge = result["silenced"]["badge"].as_str().unwrap_or_default();
    assert!(badge.starts_with("silenced #"), "{result}");

    // The silence the UI made is stored and covers exactly that alarm.
    let silences = get_json(&addr, "/api/v1/silences").expect("silences");
    let s = &silences[0];
    assert_eq!(s["matcher"]["kind"], "backlog", "{silences}");
    assert_eq!(s["matcher"]["cluster"], "orders-rmq", "{silences}");
    assert_eq!(s["matcher"]["subject"], "group orders-g", "{silences}");
    assert_eq!(s["created_by"], "dashboard", "{silences}");
    assert_eq!(format!("silenced #{}", s["id"]), badge, "{silences}");
    assert!(out.join("rocketmq.png").exists() && out.join("rocketmq-silenced.png").exists());

    assert!(
        serve.is_running(),
        "mqwatch exited: {}",
        serve.log_tail(2000)
    );
    serve.stop(Duration::from_secs(10));
}

#[test]
fn dashboard_against_the_demo_labels_it_simulated_draws_every_chart_silences_and_acks_alarms() {
    let _one = ONE_BROWSER.lock().unwrap_or_else(|p| p.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let (mut demo, addr) = start_mqwatch(
        &[
            "demo",
            "--listen",
            "127.0.0.1:0",
            "--token",
            TOKEN,
            "--state-dir",
            state.to_str().unwrap(),
        ],
        dir.path(),
    );
    let out = screenshots();
    let charts = [
        "chart-traffic",
        "chart-latency",
        "chart-backlog",
        "chart-age",
        "chart-probe",
    ];
    let result = browser::run_script(
        "dashboard.cjs",
        &serde_json::json!({
            "url": format!("http://{addr}/#cluster=demo-rocketmq"),
            "out": out,
            "name": "demo",
            "charts": charts,
            "alarmKind": "*",
            "ack": true,
            "probe": true,
            "token": TOKEN,
            "simulated": true,
            // Then each other cluster: only the panels that apply to its engine, and their data.
            "clusters": [
                {
                    "name": "demo-kafka",
                    "visible": ["panel-traffic", "panel-groups", "panel-probe", "panel-durability",
                                "panel-nodes"],
                    "charts": ["chart-traffic", "chart-probe"],
                    "nodes": 3,
                },
                {
                    "name": "demo-bookkeeper",
                    "visible": ["panel-durability", "panel-nodes"],
                    "hidden": ["panel-traffic", "panel-ranking", "panel-groups", "panel-probe"],
                    "nodes": 5,
                },
                {
                    "name": "demo-rocketmq",
                    "visible": ["panel-traffic", "panel-groups", "panel-probe", "panel-nodes"],
                    "hidden": ["panel-durability"],
                    "nodes": 6,
                },
            ],
            "deadlineMs": 90_000,
        }),
        Duration::from_secs(300),
    );
    for chart in charts {
        let c = &result["charts"][chart];
        assert!(c["points"].as_u64() > Some(0), "{chart}: {result}");
        assert!(
            c["coloured"].as_u64() > Some(0),
            "{chart} drew its series: {result}"
        );
    }
    assert_eq!(result["simulatedLabel"], true, "{result}");
    let badge = result["silenced"]["badge"].as_str().unwrap_or_default();
    let silences = get_json(&addr, "/api/v1/silences").expect("silences");
    let stored = |badge: &str, prefix: &str| {
        silences
            .as_array()
            .unwrap()
            .iter()
            .find(|s| format!("{prefix} #{}", s["id"]) == badge)
            .cloned()
            .unwrap_or_else(|| panic!("the UI's {badge:?} is not stored: {silences}"))
    };
    let made = stored(badge, "silenced");
    assert_eq!(
        made["matcher"]["kind"], result["alarm"]["kind"],
        "{silences}"
    );
    assert_eq!(
        made["matcher"]["subject"], result["alarm"]["subject"],
        "{silences}"
    );

    // The acknowledgement: the server's silence of exactly the other alarm's key, for 24 h.
    let acked = stored(
        result["acked"]["badge"].as_str().unwrap_or_default(),
        "acknowledged",
    );
    let other = &result["ackAlarm"];
    assert_ne!(other["key"], result["alarm"]["key"], "{result}");
    assert_eq!(acked["matcher"]["kind"], other["kind"], "{silences}");
    assert_eq!(acked["matcher"]["cluster"], other["cluster"], "{silences}");
    assert_eq!(acked["matcher"]["subject"], other["subject"], "{silences}");
    assert_eq!(acked["created_by"], "dashboard", "{silences}");
    let comment = acked["comment"].as_str().unwrap_or_default();
    assert_eq!(
        comment,
        format!("acknowledged {}", other["key"].as_str().unwrap()),
        "{silences}"
    );
    let lasts = acked["expires_ms"].as_u64().unwrap() - acked["created_ms"].as_u64().unwrap();
    assert_eq!(lasts, 24 * 3_600_000, "{acked}");

    // The probe panel lists both masters with delivered messages, as the API does.
    let rows = result["probe"]["rows"].as_array().expect("probe rows");
    let brokers: Vec<&str> = rows.iter().filter_map(|r| r["broker"].as_str()).collect();
    assert_eq!(brokers, ["broker-a:0", "broker-b:0"], "{result}");
    assert!(
        rows.iter().all(|r| r["delivered"].as_u64() > Some(0)),
        "{result}"
    );
    let api = get_json(&addr, "/api/v1/clusters/demo-rocketmq/probe").expect("probe view");
    assert_eq!(api["running"], true, "{api}");
    assert_eq!(api["simulated"], true, "{api}");
    assert_eq!(api["brokers"][0]["subject"], "broker broker-a:0", "{api}");

    // Each engine shows its own panels, with data.
    let kafka = &result["clusters"]["demo-kafka"];
    for chart in ["chart-traffic", "chart-probe"] {
        assert!(
            kafka["charts"][chart]["coloured"].as_u64() > Some(0),
            "demo-kafka {chart}: {result}"
        );
    }
    assert_eq!(
        result["clusters"]["demo-bookkeeper"]["title"], "Bookies",
        "{result}"
    );
    update_docs(&out.join("demo.png"));
    demo.stop(Duration::from_secs(10));
}
