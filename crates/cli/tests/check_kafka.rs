//! `mqwatch check --kafka` end to end: the real `mqwatch` binary against a REAL tansu 0.6.0 broker (sqlite storage,
//! started by mqwatch-testkit on a free port, stopped by PID), with records produced and offsets committed by
//! mqwatch's own Kafka client. Asserts the JSON a script would read: the partitions' offsets, the group's lag, and
//! tansu's known-broken DescribeGroups as a `collector_error` while the cycle goes on.
//!
//! Skips (saying so) only when the tansu binary is not installed; `scripts/test` installs it.

use bytes::Bytes;
use mqwatch_kafka::client::{ClientConfig, KafkaClient};
use mqwatch_testkit::retry_until_ok;
use mqwatch_testkit::tansu::{self, Tansu};
use serde_json::Value;
use std::process::Command;
use std::time::Duration;

#[test]
fn check_kafka_reports_offsets_lag_and_the_broken_api() {
    if tansu::missing() {
        return;
    }
    let broker = Tansu::start();
    let addr = broker.addr.clone();
    let rt = mqwatch_testkit::runtime();
    rt.block_on(async {
        let client = KafkaClient::new(ClientConfig::default());
        let long = Duration::from_secs(20);
        retry_until_ok("create topic", long, || {
            client.create_topic(&addr, "orders", 2, 1)
        })
        .await;
        let records: Vec<Bytes> = (0..5).map(|i| Bytes::from(format!("r{i}"))).collect();
        retry_until_ok("produce", long, || {
            client.produce(&addr, "orders", 0, &records, 1_700_000_000_000)
        })
        .await;
        let coordinator =
            retry_until_ok("coordinator", long, || client.find_coordinator(&addr, "g1")).await;
        let commits = [("orders".to_string(), 0, 2)];
        retry_until_ok("commit", long, || {
            client.commit_offsets(&coordinator, "g1", &commits)
        })
        .await;
    });

    let state = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mqwatch"))
        .args(["check", "--kafka", &addr, "--json", "--state-dir"])
        .arg(state.path())
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(1), "warnings only: {doc:#}");
    let c = &doc["clusters"][0];
    assert_eq!(c["snapshot"]["engine"], "kafka");
    let logs = c["snapshot"]["logs"].as_array().unwrap();
    let p0 = logs
        .iter()
        .find(|l| l["log"]["topic"] == "orders" && l["log"]["partition"] == 0)
        .unwrap_or_else(|| panic!("orders-0 missing: {doc:#}"));
    assert_eq!(
        (p0["earliest"].as_i64(), p0["latest"].as_i64()),
        (Some(0), Some(5))
    );
    let g1 = c["snapshot"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"]["name"] == "g1")
        .unwrap_or_else(|| panic!("g1 missing: {doc:#}"));
    let pos = g1["positions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["log"]["partition"] == 0)
        .unwrap();
    assert_eq!(
        (pos["committed"].as_i64(), pos["latest"].as_i64()),
        (Some(2), Some(5))
    );
    let findings = c["findings"].as_array().unwrap();
    let error = findings
        .iter()
        .find(|f| f["kind"] == "collector_error")
        .unwrap_or_else(|| panic!("tansu's DescribeGroups should be a collector_error: {doc:#}"));
    let requests: Vec<&str> = error["evidence"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["request"].as_str().unwrap())
        .collect();
    assert!(
        requests.iter().any(|r| r.starts_with("DescribeGroups")),
        "{error}"
    );
    // One broker: every partition has one replica, below the default factor of 2.
    assert!(
        findings
            .iter()
            .any(|f| f["kind"] == "replication_factor_low"),
        "{doc:#}"
    );
}

/// SASL_SSL through the config file: a REAL tansu requiring SCRAM-SHA-512 behind a TLS front (TEST CODE: tansu 0.6
/// has no TLS listener; see `testkit::tls`). The right password gives the full picture; a wrong one is a
/// `collector_error` naming SaslAuthenticate, and the broker is not reported down (it answered).
#[test]
fn check_through_config_with_tls_and_scram() {
    use mqwatch_kafka::client::{Mechanism, Sasl, Security, Tls};
    use mqwatch_testkit::tansu::TansuOptions;
    use mqwatch_testkit::tls::{TestCa, TlsFront};
    if tansu::missing() {
        return;
    }
    let ca = TestCa::new("mqwatch test CA");
    let front = format!("127.0.0.1:{}", mqwatch_testkit::free_port());
    let broker = Tansu::start_with(&TansuOptions {
        authentication: true,
        scram_users: vec![("ops".into(), "ops-secret".into(), "scram512".into())],
        advertised: Some(front.clone()),
    });
    let _tls = TlsFront::start(&front, &broker.addr, &ca);
    let security = Security {
        tls: Some(Tls {
            ca_file: Some(ca.ca_file.display().to_string()),
            server_name: None,
        }),
        sasl: Some(Sasl {
            mechanism: Mechanism::ScramSha512,
            username: "ops".into(),
            password: "ops-secret".into(),
        }),
    };
    let rt = mqwatch_testkit::runtime();
    rt.block_on(async {
        let client = KafkaClient::new(ClientConfig {
            security,
            ..ClientConfig::default()
        });
        let long = Duration::from_secs(20);
        retry_until_ok("create topic", long, || {
            client.create_topic(&front, "orders", 1, 1)
        })
        .await;
        let records: Vec<Bytes> = (0..4).map(|i| Bytes::from(format!("r{i}"))).collect();
        retry_until_ok("produce", long, || {
            client.produce(&front, "orders", 0, &records, 1_700_000_000_000)
        })
        .await;
    });

    let dir = tempfile::tempdir().unwrap();
    let check = |password: &str| -> (Option<i32>, Value) {
        let pw = dir.path().join("password");
        std::fs::write(&pw, format!("{password}\n")).unwrap();
        let config = dir.path().join("mqwatch.toml");
        std::fs::write(
            &config,
            format!(
                "[[cluster]]\nname = \"secured\"\nengine = \"kafka\"\nbootstrap = [\"{front}\"]\n\
                 [cluster.tls]\nca_file = \"{}\"\n\
                 [cluster.sasl]\nmechanism = \"SCRAM-SHA-512\"\nusername = \"ops\"\npassword_file = \"{}\"\n",
                ca.ca_file.display(),
                pw.display()
            ),
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_mqwatch"))
            .args(["check", "--json", "--config"])
            .arg(&config)
            .arg("--state-dir")
            .arg(dir.path().join("state"))
            .output()
            .unwrap();
        let doc: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        (out.status.code(), doc)
    };

    let (_, doc) = check("ops-secret");
    let c = &doc["clusters"][0];
    let logs = c["snapshot"]["logs"].as_array().unwrap();
    assert!(
        logs.iter()
            .any(|l| l["log"]["topic"] == "orders" && l["latest"] == 4),
        "{doc:#}"
    );
    let text = doc.to_string();
    assert!(
        !text.contains("authentication failed") && !text.contains("TLS:"),
        "{doc:#}"
    );

    let (_, doc) = check("wrong");
    let findings = doc["clusters"][0]["findings"].as_array().unwrap();
    let error = findings
        .iter()
        .find(|f| f["kind"] == "collector_error")
        .unwrap_or_else(|| panic!("a refused password should be a collector_error: {doc:#}"));
    assert!(
        error.to_string().contains("SaslAuthenticate (36)")
            && error.to_string().contains("authentication failed"),
        "{error}"
    );
    assert!(
        !findings.iter().any(|f| f["kind"] == "broker_down"),
        "a broker that refused the password answered: {doc:#}"
    );
}
