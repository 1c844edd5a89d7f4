//! The admin client against fake nodes. NOT a real RocketMQ server: each test runs a tiny TCP server in test code
//! that speaks the remoting frame (via mqwatch's own codec) and misbehaves on purpose — answers out of order,
//! refuses, hangs up mid-request, sends garbage, or stays silent — to prove the client's failure handling.
//! Behaviour against the real name server and brokers is tested in the RocketMQ end-to-end tests.

use mqwatch_rocketmq::client::{AdminClient, ErrorKind, RequestCode};
use mqwatch_rocketmq::codec::{FLAG_RESPONSE, Frame, SerializeType, decode_frame, encode_frame};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn listen() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap().to_string();
    (l, addr)
}

/// Reads frames until `n` requests have arrived.
async fn read_requests(s: &mut TcpStream, n: usize) -> Vec<Frame> {
    let mut buf = Vec::new();
    let mut out = Vec::new();
    while out.len() < n {
        while let Some((f, used)) = decode_frame(&buf).unwrap() {
            buf.drain(..used);
            out.push(f);
        }
        if out.len() >= n {
            break;
        }
        let mut chunk = [0u8; 4096];
        let k = s.read(&mut chunk).await.unwrap();
        assert!(k > 0, "client hung up");
        buf.extend_from_slice(&chunk[..k]);
    }
    out
}

fn reply(req: &Frame, code: i32, remark: Option<&str>, body: &[u8]) -> Vec<u8> {
    let mut header = req.header.clone();
    header.code = code;
    header.flag = FLAG_RESPONSE;
    header.remark = remark.map(str::to_string);
    header.ext_fields.clear();
    encode_frame(&Frame {
        header,
        serialize: SerializeType::Json,
        body: body.to_vec(),
    })
}

#[tokio::test]
async fn responses_are_matched_by_opaque_even_out_of_order() {
    let (l, addr) = listen().await;
    let server = tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let reqs = read_requests(&mut s, 2).await;
        for r in reqs.iter().rev() {
            let topic = r
                .header
                .ext_fields
                .get("topic")
                .cloned()
                .unwrap_or_default();
            let body = format!("{{\"topic\":\"{topic}\"}}");
            s.write_all(&reply(r, 0, None, body.as_bytes()))
                .await
                .unwrap();
        }
        s
    });
    let client = AdminClient::new(Duration::from_secs(10));
    let (ext_a, ext_b) = ([("topic", "a".to_string())], [("topic", "b".to_string())]);
    let a = client.request_json(&addr, RequestCode::GET_TOPIC_STATS_INFO, &ext_a);
    let b = client.request_json(&addr, RequestCode::GET_TOPIC_STATS_INFO, &ext_b);
    let (a, b) = tokio::join!(a, b);
    assert_eq!(a.unwrap()["topic"], "a");
    assert_eq!(b.unwrap()["topic"], "b");
    drop(server.await.unwrap());
}

#[tokio::test]
async fn a_refusal_names_node_request_code_and_remark() {
    let (l, addr) = listen().await;
    tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let r = read_requests(&mut s, 1).await.remove(0);
        s.write_all(&reply(&r, 1, Some("No stats data"), b""))
            .await
            .unwrap();
        let _ = s.read(&mut [0u8; 16]).await;
    });
    let client = AdminClient::new(Duration::from_secs(10));
    let err = client
        .request_json(
            &addr,
            RequestCode::VIEW_BROKER_STATS_DATA,
            &[("statsName", "TOPIC_PUT_NUMS".into())],
        )
        .await
        .unwrap_err();
    assert_eq!(err.response_code(), Some(1));
    assert_eq!(
        err.to_string(),
        format!("{addr}: VIEW_BROKER_STATS_DATA (315): response code 1: No stats data")
    );
}

#[tokio::test]
async fn a_node_that_hangs_up_fails_the_request_at_once_not_at_the_timeout() {
    let (l, addr) = listen().await;
    tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        read_requests(&mut s, 1).await;
        drop(s); // dies mid-request
    });
    // A timeout far beyond the test's own run time: only an immediate failure lets the test finish as Closed.
    let client = AdminClient::new(Duration::from_secs(600));
    let err = client
        .request_json(&addr, RequestCode::GET_CONSUME_STATS, &[])
        .await
        .unwrap_err();
    assert!(matches!(err.kind, ErrorKind::Closed(_)), "{err}");
    assert!(err.to_string().contains("GET_CONSUME_STATS (208)"), "{err}");
}

#[tokio::test]
async fn a_malformed_frame_is_an_error_and_the_next_call_reconnects() {
    let (l, addr) = listen().await;
    tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        read_requests(&mut s, 1).await;
        s.write_all(&[0, 0, 0, 8, 9, 0, 0, 0, 0, 0, 0, 0])
            .await
            .unwrap(); // serialisation type 9
        let _ = s.read(&mut [0u8; 16]).await;
        let (mut s, _) = l.accept().await.unwrap();
        let r = read_requests(&mut s, 1).await.remove(0);
        s.write_all(&reply(&r, 0, None, b"{\"ok\":true}"))
            .await
            .unwrap();
        let _ = s.read(&mut [0u8; 16]).await;
    });
    let client = AdminClient::new(Duration::from_secs(600));
    let err = client
        .request_json(&addr, RequestCode::GET_BROKER_RUNTIME_INFO, &[])
        .await
        .unwrap_err();
    assert!(matches!(err.kind, ErrorKind::Frame(_)), "{err}");
    let ok = client
        .request_json(&addr, RequestCode::GET_BROKER_RUNTIME_INFO, &[])
        .await
        .unwrap();
    assert_eq!(ok["ok"], true);
}

#[tokio::test]
async fn a_silent_node_times_out() {
    let (l, addr) = listen().await;
    tokio::spawn(async move {
        let (mut s, _) = l.accept().await.unwrap();
        let _ = s.read_to_end(&mut Vec::new()).await;
    });
    let client = AdminClient::new(Duration::from_millis(200));
    let err = client
        .request_json(&addr, RequestCode::GET_BROKER_CLUSTER_INFO, &[])
        .await
        .unwrap_err();
    assert_eq!(err.kind, ErrorKind::Timeout(200));
}

#[tokio::test]
async fn a_closed_port_is_a_connect_error() {
    let (l, addr) = listen().await;
    drop(l);
    let client = AdminClient::new(Duration::from_secs(5));
    let err = client
        .request_json(&addr, RequestCode::GET_BROKER_CLUSTER_INFO, &[])
        .await
        .unwrap_err();
    assert!(matches!(err.kind, ErrorKind::Connect(_)), "{err}");
}
