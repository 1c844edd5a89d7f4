//! `mqwatch serve` with `[cluster.probe]` on, as a process, against a real tansu broker (Kafka protocol, started
//! by testkit on a free port, stopped by its PID): the probe's round-trip latency reaches the series API
//! (`probe_roundtrip_p99_ms`, subject `broker 111`) and the probe view (`/api/v1/clusters/k/probe`), and once
//! tansu is stopped the findings API shows a `produce_failure` about that broker and the view its losses. Also:
//! the config key's defaults and its errors.

mod common;

use common::{get_json, start_serve};
use mqwatch_cli::config::Config;
use mqwatch_testkit::poll_until;
use mqwatch_testkit::tansu::Tansu;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

#[test]
fn probe_key_is_off_by_default_and_checked() {
    let base = "[[cluster]]\nname = \"k\"\nengine = \"kafka\"\nbootstrap = [\"127.0.0.1:9092\"]\n";
    let c = Config::parse(base).unwrap();
    assert!(!c.clusters[0].probe.enabled);
    assert_eq!(c.clusters[0].probe.topic, "mqwatch-canary");
    let on = Config::parse(&format!(
        "{base}\n[cluster.probe]\nenabled = true\ntopic = \"canary\"\ninterval = \"5s\"\nsla = \"20s\"\n"
    ))
    .unwrap();
    let p = &on.clusters[0].probe;
    assert!(p.enabled);
    assert_eq!(
        (p.topic.as_str(), p.interval.as_millis(), p.sla.as_millis()),
        ("canary", 5_000, 20_000)
    );
    let bad = Config::parse(&format!(
        "{base}\n[cluster.probe]\nenabled = true\ninterval = \"10ms\"\n"
    ))
    .unwrap_err();
    assert!(
        format!("{bad:#}").contains("cluster[0] (k): probe.interval"),
        "{bad:#}"
    );
    let typo = Config::parse(&format!("{base}\n[cluster.probe]\nenable = true\n")).unwrap_err();
    assert!(format!("{typo:#}").contains("enable"), "{typo:#}");
}

#[test]
fn serve_probes_tansu_and_reports_a_stopped_broker() {
    let mut tansu = Tansu::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    std::fs::write(
        &config,
        format!(
            "[[cluster]]\nname = \"k\"\nengine = \"kafka\"\nbootstrap = [\"{}\"]\n\
             interval = \"1s\"\ntimeout = \"1s\"\n\n\
             [cluster.probe]\nenabled = true\ninterval = \"200ms\"\nsla = \"2s\"\n",
            tansu.addr
        ),
    )
    .unwrap();
    let (_serve, addr) = start_serve(
        "serve-probe",
        &config,
        &dir.path().join("state"),
        dir.path(),
    );

    let rt = poll_until("probe_roundtrip_p99_ms in the series API", DEADLINE, || {
        let rows = get_json(
            &addr,
            "/api/v1/clusters/k/series?metric=probe_roundtrip_p99_ms&subject=broker%20111",
        )?;
        rows.as_array()?.iter().find_map(|r| r["value"].as_f64())
    });
    assert!(rt > 0.0 && rt < 2_000.0, "round trip {rt} ms");
    // The probe view: the running prober's results per broker.
    let view = get_json(&addr, "/api/v1/clusters/k/probe?minutes=1").unwrap();
    assert_eq!(view["running"], true, "{view}");
    assert_eq!(view["simulated"], false, "{view}");
    assert_eq!(view["interval_ms"], 200, "{view}");
    let b = &view["brokers"][0];
    assert_eq!(b["subject"], "broker 111", "{view}");
    assert!(b["delivered"].as_u64() > Some(0), "{view}");
    assert_eq!(b["lost"], 0, "{view}");
    assert!(b["roundtrip_p50_ms"].as_f64() > Some(0.0), "{view}");
    let findings = get_json(&addr, "/api/v1/findings").unwrap();
    assert!(
        !findings.to_string().contains("produce_failure"),
        "healthy: {findings}"
    );

    tansu.process.stop(Duration::from_secs(10));
    let f = poll_until("produce_failure about broker 111", DEADLINE, || {
        get_json(&addr, "/api/v1/findings")?
            .as_array()?
            .iter()
            .find(|f| f["kind"] == "produce_failure" && f["subject"].to_string().contains("111"))
            .cloned()
    });
    assert!(f["evidence"]["lost"].as_u64().unwrap_or(0) >= 1, "{f}");
    assert_eq!(f["evidence"]["source"], "probe", "{f}");
    let view = get_json(&addr, "/api/v1/clusters/k/probe?minutes=1").unwrap();
    let b = &view["brokers"][0];
    assert!(b["lost"].as_u64() >= Some(1), "{view}");
    assert!(b["last_error"].is_string(), "{view}");
}
