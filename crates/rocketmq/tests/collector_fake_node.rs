//! The collector against a fake name server. NOT a real RocketMQ server: a TCP socket in test code that answers
//! every request with a malformed frame. It proves bytes from the network become a `collector_error` finding
//! naming the node and request — never a panic, never a dead name server. Real-peer behaviour is in crates/e2e.

use mqwatch_model::FindingKind;
use mqwatch_rocketmq::client::AdminClient;
use mqwatch_rocketmq::collector::{Target, collect};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[tokio::test]
async fn a_malformed_frame_is_a_collector_error_not_a_panic() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = [0u8; 1024];
                if s.read(&mut buf).await.unwrap_or(0) > 0 {
                    // Length 8, header type byte 7: no such serialisation.
                    let _ = s.write_all(&[0, 0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0]).await;
                }
                let _ = s.read(&mut buf).await;
            });
        }
    });
    let target = Target {
        cluster: "fake".into(),
        name_servers: vec![addr.clone()],
        expected_brokers: vec![],
        known_brokers: vec![],
        concurrency: 4,
    };
    let client = AdminClient::new(Duration::from_secs(5));
    let snapshot = collect(&client, &target, 1_000).await;
    assert!(
        snapshot.nodes[0].answered,
        "it answered, badly: {:?}",
        snapshot.nodes
    );
    let findings = mqwatch_checks::run_all(&snapshot, None, &Default::default(), 1_000);
    let kinds: Vec<FindingKind> = findings.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, vec![FindingKind::CollectorError], "{findings:?}");
    assert!(
        findings[0]
            .message
            .contains("GET_BROKER_CLUSTER_INFO (106)"),
        "{}",
        findings[0].message
    );
    assert!(
        findings[0]
            .message
            .contains("unknown header serialisation type 7"),
        "{}",
        findings[0].message
    );
    assert!(
        findings[0].subject.to_string().contains(&addr),
        "{}",
        findings[0].subject
    );
}
