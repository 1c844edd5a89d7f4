//! `/metrics` scraped by a REAL Prometheus (Debian's, started by mqwatch-testkit on a free port, stopped by PID):
//! `mqwatch serve` watches a BookKeeper cluster whose ZooKeeper port nothing listens on, and the values it
//! exposes (`mqwatch_up` 0, a `collector_error` in `mqwatch_findings`) are read back through Prometheus's query
//! API.

mod common;

use common::{request, start_serve};
use mqwatch_testkit::prometheus::Prometheus;
use mqwatch_testkit::{free_port, poll_until};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

#[test]
fn prometheus_scrapes_metrics_and_reads_a_value_back() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    std::fs::write(
        &config,
        format!(
            "[[cluster]]\nname = \"bk\"\nengine = \"bookkeeper\"\nzookeeper = \"127.0.0.1:{}\"\n\
             interval = \"1s\"\ntimeout = \"1s\"\n",
            free_port()
        ),
    )
    .unwrap();
    let (mut serve, addr) = start_serve("serve", &config, &dir.path().join("state"), dir.path());

    // The exposition itself, once a cycle finished.
    let text = poll_until("a cycle in /metrics", DEADLINE, || {
        let (status, body) = request(&addr, "GET", "/metrics", &[], None)?;
        (status == 200 && body.contains("mqwatch_up{")).then_some(body)
    });
    assert!(text.contains("# TYPE mqwatch_findings gauge"), "{text}");
    assert!(text.contains(r#"mqwatch_up{cluster="bk"} 0"#), "{text}");

    let prometheus = Prometheus::start(&addr);
    let errors = poll_until(
        "Prometheus to have scraped a collector_error",
        DEADLINE,
        || prometheus.value(r#"sum(mqwatch_findings{cluster="bk",kind="collector_error"})"#),
    );
    assert!(errors >= 1.0, "{errors}");
    let up = poll_until("mqwatch_up in Prometheus", DEADLINE, || {
        prometheus.value(r#"mqwatch_up{cluster="bk",job="mqwatch"}"#)
    });
    assert_eq!(up, 0.0);
    let scrape = prometheus.value(r#"up{job="mqwatch"}"#);
    assert_eq!(scrape, Some(1.0), "the scrape itself succeeded");
    serve.stop(Duration::from_secs(10));
}
