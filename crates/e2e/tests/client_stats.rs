//! Client statistics end to end. REAL: the RocketMQ name server and broker (`rocketmq-namesrv` /
//! `rocketmq-broker` 1.0.0, started by mqwatch-testkit on free ports, stopped by PID), the producer
//! (`rocketmq-client-rust` 1.0.0 in the `mqwatch-rmq-stats-producer` program, instrumented with
//! `mqwatch-client`'s RPC hook and reporter), and mqwatch's `serve` (run in-process on a free port, its HTTP
//! intake reached over loopback). The producer prints each send's latency as an independent recorder in the
//! same process saw it (exact values at the same two points as the hook); the percentiles mqwatch serves must
//! match those within the histogram's error. Killing the broker makes the producer's sends fail, which must
//! surface as a `produce_failure` finding.

use mqwatch_cli::config::Config;
use mqwatch_cli::state::StateDir;
use mqwatch_rocketmq::client::AdminClient;
use mqwatch_testkit::process::PeerProcess;
use mqwatch_testkit::rocketmq::{BrokerSpec, RocketMqCluster};
use mqwatch_testkit::{free_port, http_get, poll_until};
use std::process::Command;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(90);
const TOKEN: &str = "e2e-token";
const COUNT: usize = 300;

fn get_json(addr: &str, path: &str) -> Option<serde_json::Value> {
    let (status, body) = http_get(addr, path)?;
    (status == 200).then(|| serde_json::from_str(&body).ok())?
}

fn exact(sorted: &[u64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64
}

#[test]
fn hooked_producer_reports_reach_mqwatch_and_failures_raise_produce_failure() {
    let mut cluster = RocketMqCluster::start(&[BrokerSpec::master("broker-a")]);
    let broker_addr = cluster.brokers[0].addr.clone();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let admin = AdminClient::new(Duration::from_secs(5));
    for topic in ["stats-t", "stats-t-2"] {
        rt.block_on(admin.create_topic(&broker_addr, topic, 4))
            .unwrap();
    }

    // mqwatch serve, in-process, on a free port.
    let dir = tempfile::tempdir().unwrap();
    let config = Config::parse(&format!(
        "[server]\ntoken = \"{TOKEN}\"\n\n\
         [[cluster]]\nname = \"rmq\"\nengine = \"rocketmq\"\nname_servers = [\"{}\"]\n\
         interval = \"1s\"\ntimeout = \"2s\"\n",
        cluster.namesrv_addr
    ))
    .unwrap();
    let state = StateDir::resolve(Some(&dir.path().join("state")), None).unwrap();
    let addr = format!("127.0.0.1:{}", free_port());
    let listen = addr.clone();
    std::thread::spawn(move || mqwatch_cli::serve::run(config, Some(listen), state));
    poll_until("mqwatch serve to answer", DEADLINE, || {
        http_get(&addr, "/healthz").filter(|(s, _)| *s == 200)
    });

    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mqwatch-rmq-stats-producer"));
    cmd.args([
        cluster.namesrv_addr.as_str(),
        "stats-t",
        &COUNT.to_string(),
        &format!("http://{addr}"),
        TOKEN,
        "rmq",
    ]);
    let mut producer = PeerProcess::spawn("stats-producer", cmd, dir.path());
    let line = poll_until("the producer's measured latencies", DEADLINE, || {
        let log = producer.log_tail(1 << 20);
        let rest = log.split("MEASURED ").nth(1)?;
        rest.contains('\n')
            .then(|| rest.lines().next().unwrap().to_string())
    });
    let mut measured: Vec<u64> = line.split(',').map(|v| v.parse().unwrap()).collect();
    measured.sort_unstable();
    assert!(measured.len() >= COUNT, "{} sends measured", measured.len());

    let last = std::cell::RefCell::new(serde_json::Value::Null);
    let view = poll_until("every send in mqwatch's client view", DEADLINE, || {
        let v = get_json(&addr, "/api/v1/clusters/rmq/clients?minutes=10")?;
        if *last.borrow() != v {
            eprintln!("client view: {v}");
            *last.borrow_mut() = v.clone();
        }
        (v["topics"]["stats-t"]["sends"].as_u64()? == measured.len() as u64).then_some(v)
    });
    drop(last);
    let topic = &view["topics"]["stats-t"];
    assert_eq!(topic["failures"], 0, "{view}");
    assert!(
        view["brokers"][&broker_addr]["sends"].as_u64().unwrap() >= COUNT as u64,
        "{view}"
    );
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
        let got = topic["latency_ms"][name].as_f64().unwrap() * 1000.0;
        let want = exact(&measured, q);
        // The histogram's error (1/64) plus the microseconds between the two hooks' clock reads.
        assert!(
            (got - want).abs() <= want / 64.0 + 50.0,
            "{name}: mqwatch says {got} µs, measured {want} µs (all: {measured:?})"
        );
    }

    // The broker dies: the producer's sends to stats-t-2 fail.
    cluster.broker("broker-a", 0).process.kill();
    let start = std::time::Instant::now();
    let finding = loop {
        let found = get_json(&addr, "/api/v1/findings").and_then(|f| {
            f.as_array()?
                .iter()
                .find(|f| f["kind"] == "produce_failure" && f["subject"]["topic"] == "stats-t-2")
                .cloned()
        });
        if let Some(f) = found {
            break f;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "no produce_failure after {DEADLINE:?}; client view: {:?}\nfindings: {:?}\nproducer: {}",
            get_json(&addr, "/api/v1/clusters/rmq/clients?minutes=10"),
            get_json(&addr, "/api/v1/findings"),
            producer.log_tail(3000)
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        finding["evidence"]["failures"].as_u64().unwrap() >= 1,
        "{finding}"
    );
    producer.stop(Duration::from_secs(5));
}
