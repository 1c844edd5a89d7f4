//! The collector against fake nodes. NOT real RocketMQ servers: TCP sockets in test code that speak the remoting
//! frame. One answers every request with a malformed frame (bytes from the network must become a
//! `collector_error` naming the node and request, never a panic); one plays a Java broker that wrote
//! OFFSET_MOVED_EVENT messages, which no real peer here can do. Real-peer behaviour is tested in crates/e2e.

use mqwatch_model::FindingKind;
use mqwatch_rocketmq::client::AdminClient;
use mqwatch_rocketmq::codec::{FLAG_RESPONSE, Frame, SerializeType, decode_frame, encode_frame};
use mqwatch_rocketmq::collector::{EVENT_LOOKBACK_MS, Target, collect};
use mqwatch_rocketmq::message::StoredMessage;
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

/// A fake node that answers every frame with `answer(request) -> (code, ext fields, body)`.
async fn fake_node(
    answer: impl Fn(&Frame) -> (i32, Vec<(&'static str, String)>, Vec<u8>) + Send + Sync + 'static,
) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let answer = std::sync::Arc::new(answer);
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let answer = answer.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    while let Ok(Some((req, used))) = decode_frame(&buf) {
                        buf.drain(..used);
                        let (code, ext, body) = answer(&req);
                        let mut header = req.header.clone();
                        header.code = code;
                        header.flag = FLAG_RESPONSE;
                        header.ext_fields =
                            ext.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                        let frame = Frame {
                            header,
                            serialize: SerializeType::Json,
                            body,
                        };
                        if s.write_all(&encode_frame(&frame)).await.is_err() {
                            return;
                        }
                    }
                    match s.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
            });
        }
    });
    addr
}

/// OFFSET_MOVED_EVENT against a fake broker. NOT a real broker: the Rust broker never writes this topic and
/// clients may not send to it, so a protocol-exact fake (name server and broker on one socket, speaking the real
/// frame, the fastjson bare-key cluster info, and PULL_MESSAGE with records in RocketMQ's store layout) stands
/// in for a Java broker that wrote three events: two recent ones and one older than the look-back window.
#[tokio::test]
async fn offset_moved_events_from_a_java_style_broker_become_offset_out_of_range() {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let event = |group: &str, q: i32, req: i64, at: i64, offset: i64| {
        StoredMessage {
        queue_id: 0,
        queue_offset: offset,
        sys_flag: 0,
        born_timestamp: at,
        store_timestamp: at,
        topic: "OFFSET_MOVED_EVENT".into(),
        body: format!(
            r#"{{"consumerGroup":"{group}","messageQueue":{{"brokerName":"broker-a","queueId":{q},"topic":"orders"}},"offsetRequest":{req},"offsetNew":10}}"#
        )
        .into_bytes(),
        properties: String::new(),
    }
    };
    let old = now - 2 * EVENT_LOOKBACK_MS as i64;
    let mut pull_body = event("g-old", 0, 500, old, 0).encode();
    pull_body.extend(event("g1", 2, 900, now - 1_000, 1).encode());
    pull_body.extend(event("g1", 3, -5, now - 500, 2).encode());
    let addr_cell = std::sync::Arc::new(std::sync::OnceLock::<String>::new());
    let cell = addr_cell.clone();
    let addr = fake_node(move |req| {
        let addr = cell.get().cloned().unwrap_or_default();
        match req.header.code {
            106 => {
                let body = format!(
                    r#"{{"brokerAddrTable":{{"broker-a":{{"cluster":"C","brokerName":"broker-a","brokerAddrs":{{0:"{addr}"}}}}}},"clusterAddrTable":{{"C":["broker-a"]}}}}"#
                );
                (0, vec![], body.into_bytes())
            }
            28 => (0, vec![], br#"{"table":{"brokerReady":"true","brokerShutdown":"false"}}"#.to_vec()),
            21 => (0, vec![], br#"{"topicConfigTable":{"OFFSET_MOVED_EVENT":{"readQueueNums":1,"writeQueueNums":1,"perm":6}}}"#.to_vec()),
            30 => (0, vec![("offset", "3".to_string())], vec![]),
            31 => (0, vec![("offset", "0".to_string())], vec![]),
            11 => {
                assert_eq!(req.header.ext_fields["consumerGroup"], "TOOLS_CONSUMER");
                assert_eq!(req.header.ext_fields["commitOffset"], "0");
                (0, vec![("nextBeginOffset", "3".to_string())], pull_body.clone())
            }
            _ => (0, vec![], b"{}".to_vec()),
        }
    })
    .await;
    addr_cell.set(addr.clone()).unwrap();
    let target = Target {
        cluster: "java-like".into(),
        name_servers: vec![addr.clone()],
        expected_brokers: vec![],
        known_brokers: vec![],
        concurrency: 4,
    };
    let client = AdminClient::new(Duration::from_secs(5));
    let snapshot = collect(&client, &target, now as u64).await;
    assert!(snapshot.errors.is_empty(), "{:?}", snapshot.errors);
    assert_eq!(
        snapshot.offset_moved.len(),
        2,
        "the old event is outside the look-back: {:?}",
        snapshot.offset_moved
    );
    let findings = mqwatch_checks::offsets::check(&snapshot, now as u64);
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0].kind, FindingKind::OffsetOutOfRange);
    assert_eq!(findings[0].subject.to_string(), "group g1");
    let logs = findings[0]
        .evidence
        .get("logs")
        .unwrap()
        .as_array()
        .unwrap();
    let requested: Vec<i64> = logs
        .iter()
        .map(|l| l["requested"].as_i64().unwrap())
        .collect();
    assert_eq!(requested, vec![900, -5]);
    assert_eq!(logs[0]["log"], "queue orders@broker-a#2");
}
