//! `mqwatch serve` with client reports and hosts, as processes: a real `mqwatch-client` reporter posts to the
//! intake over HTTP; the merged percentiles match the exact ones of the recorded latencies within the
//! histogram's error; failed sends become `produce_failure`; a real node_exporter (Debian's, started by testkit)
//! is read every cycle and a memory threshold below the machine's value raises `host_threshold`. The cluster
//! itself (Kafka) points at a port nothing listens on: it only has to exist.

mod common;

use common::{get_json, request, start_serve};
use mqwatch_client::{ErrorKind, Outcome, ProducerStats, Reporter, ReporterConfig};
use mqwatch_testkit::node_exporter::NodeExporter;
use mqwatch_testkit::{free_port, poll_until};
use std::sync::Arc;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);
const TOKEN: &str = "t0ken";

fn finding(addr: &str, kind: &str, subject: &str) -> Option<serde_json::Value> {
    get_json(addr, "/api/v1/findings")?
        .as_array()?
        .iter()
        .find(|f| f["kind"] == kind && f["subject"].to_string().contains(subject))
        .cloned()
}

/// The exact nearest-rank percentile of sorted values.
fn exact(sorted: &[u64], q: f64) -> f64 {
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1] as f64
}

#[test]
fn client_reports_and_hosts_reach_serve() {
    let exporter = NodeExporter::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\ntoken = \"{TOKEN}\"\n\n\
             [[cluster]]\nname = \"k\"\nengine = \"kafka\"\nbootstrap = [\"127.0.0.1:{}\"]\n\
             interval = \"1s\"\ntimeout = \"1s\"\nhosts = [\"{}\"]\n\n\
             [thresholds.host]\nmemory_percent = 0.01\n\n\
             [thresholds.produce_failure]\nfailures = 3\n",
            free_port(),
            exporter.addr
        ),
    )
    .unwrap();
    let (_serve, addr) = start_serve(
        "serve-clients",
        &config,
        &dir.path().join("state"),
        dir.path(),
    );

    // Without the token the intake refuses.
    let (status, _) = request(&addr, "POST", "/api/v1/client-reports", &[], Some("{}")).unwrap();
    assert_eq!(status, 401);

    let stats = Arc::new(ProducerStats::new());
    let mut rc = ReporterConfig::new(format!("http://{addr}"));
    rc.token = Some(TOKEN.into());
    rc.cluster = Some("k".into());
    rc.client_id = Some("app@1".into());
    rc.interval = Duration::from_millis(200);
    let reporter = Reporter::start(stats.clone(), rc).unwrap();

    // 1 000 sends between 0.3 ms and 60 ms over two brokers, and two failures (below the threshold of 3).
    let mut latencies_us: Vec<u64> = (0..1000u64)
        .map(|i| 300 + (i * i * 7919) % 59_700)
        .collect();
    for (i, us) in latencies_us.iter().enumerate() {
        let broker = if i % 2 == 0 { "b1" } else { "b2" };
        stats.record("orders", broker, Duration::from_micros(*us), Outcome::Sent);
    }
    for _ in 0..2 {
        stats.record(
            "orders",
            "b2",
            Duration::ZERO,
            Outcome::Failed(ErrorKind::Timeout),
        );
    }
    latencies_us.sort_unstable();
    let view = poll_until("1 000 sends in the client view", DEADLINE, || {
        let v = get_json(&addr, "/api/v1/clusters/k/clients?minutes=5")?;
        (v["topics"]["orders"]["sends"] == 1000).then_some(v)
    });
    let topic = &view["topics"]["orders"];
    assert_eq!(topic["failures"], 2, "{view}");
    assert_eq!(view["brokers"]["b1"]["sends"], 500, "{view}");
    assert_eq!(view["clients"]["app@1"]["sends"], 1000, "{view}");
    for (name, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
        let got = topic["latency_ms"][name].as_f64().unwrap() * 1000.0;
        let want = exact(&latencies_us, q);
        assert!(
            (got - want).abs() <= want / 64.0 + 1.0,
            "{name}: reported {got} µs, exact {want} µs"
        );
    }
    let max = topic["latency_ms"]["max"].as_f64().unwrap() * 1000.0;
    assert!(
        (max - *latencies_us.last().unwrap() as f64).abs() < 1.0,
        "{max}"
    );
    let rows = poll_until("p99 series rows", DEADLINE, || {
        let v = get_json(
            &addr,
            "/api/v1/clusters/k/series?metric=produce_latency_p99_ms&subject=topic%20orders",
        )?;
        (!v.as_array()?.is_empty()).then_some(v)
    });
    assert!(rows[0]["value"].as_f64().unwrap() > 0.0, "{rows}");
    assert!(finding(&addr, "produce_failure", "orders").is_none());

    // A third failure crosses the threshold.
    stats.record(
        "orders",
        "b2",
        Duration::ZERO,
        Outcome::Failed(ErrorKind::Network),
    );
    let f = poll_until("a produce_failure finding", DEADLINE, || {
        finding(&addr, "produce_failure", "orders")
    });
    assert_eq!(f["evidence"]["failures"], 3, "{f}");
    assert_eq!(f["evidence"]["clients"][0], "app@1", "{f}");

    // The host: read every cycle, over the (tiny) memory threshold.
    let hosts = poll_until("a host reading", DEADLINE, || {
        let v = get_json(&addr, "/api/v1/clusters/k/hosts")?;
        v.as_array()?
            .first()?
            .get("sample")?
            .get("memory_percent")?;
        Some(v)
    });
    assert_eq!(hosts[0]["host"], exporter.addr.as_str(), "{hosts}");
    let h = poll_until("a host_threshold finding", DEADLINE, || {
        finding(&addr, "host_threshold", &exporter.addr)
    });
    assert!(
        h["evidence"]["memory_percent"].as_f64().unwrap() > 0.01,
        "{h}"
    );
    let status = reporter.stop();
    assert!(status.sent >= 1 && status.dropped == 0, "{status:?}");
}
