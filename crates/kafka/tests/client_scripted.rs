//! mqwatch's Kafka client against hand-scripted brokers in this file (NOT real servers: each test plays one
//! broker's side of the wire protocol with kafka-protocol's own types, byte for byte): ApiVersions fallback on
//! UNSUPPORTED_VERSION, the highest common version per API and degradation per API, responses matched by
//! correlation id when they come back out of order, frames over the limit, timeouts, and errors that name the
//! broker, the API and the version.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, BrokerId, ListGroupsRequest, MetadataRequest, MetadataResponse,
    RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Encodable, decode_request_header_from_buffer};
use mqwatch_kafka::client::{ClientConfig, ErrorKind, KafkaClient};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn read_request(s: &mut TcpStream) -> Option<(RequestHeader, Bytes)> {
    let len = s.read_i32().await.ok()?;
    let mut buf = BytesMut::zeroed(len as usize);
    s.read_exact(&mut buf).await.ok()?;
    let mut buf = buf.freeze();
    let header = decode_request_header_from_buffer(&mut buf).ok()?;
    Some((header, buf))
}

fn frame<M: Encodable>(h: &RequestHeader, body: &M, body_version: i16) -> Bytes {
    let api = ApiKey::try_from(h.request_api_key).unwrap();
    let mut out = BytesMut::new();
    out.put_i32(0);
    ResponseHeader::default()
        .with_correlation_id(h.correlation_id)
        .encode(&mut out, api.response_header_version(h.request_api_version))
        .unwrap();
    body.encode(&mut out, body_version).unwrap();
    let n = (out.len() - 4) as i32;
    out[..4].copy_from_slice(&n.to_be_bytes());
    out.freeze()
}

fn versions(keys: &[(ApiKey, i16, i16)]) -> ApiVersionsResponse {
    ApiVersionsResponse::default().with_api_keys(
        keys.iter()
            .map(|(k, min, max)| {
                ApiVersion::default()
                    .with_api_key(*k as i16)
                    .with_min_version(*min)
                    .with_max_version(*max)
            })
            .collect(),
    )
}

/// Answers ApiVersions the way an old broker does: UNSUPPORTED_VERSION in v0 for anything above v2.
async fn old_broker_handshake(s: &mut TcpStream, seen: &mut Vec<(i16, i16)>) {
    let offered = versions(&[(ApiKey::ApiVersions, 0, 2), (ApiKey::Metadata, 0, 9)]);
    loop {
        let (h, _) = read_request(s).await.unwrap();
        seen.push((h.request_api_key, h.request_api_version));
        assert_eq!(h.request_api_key, ApiKey::ApiVersions as i16);
        if h.request_api_version > 2 {
            let refusal = offered.clone().with_error_code(35);
            s.write_all(&frame(&h, &refusal, 0)).await.unwrap();
        } else {
            s.write_all(&frame(&h, &offered, h.request_api_version))
                .await
                .unwrap();
            return;
        }
    }
}

fn client(timeout_ms: u64, max_frame: usize) -> KafkaClient {
    KafkaClient::new(ClientConfig {
        request_timeout: Duration::from_millis(timeout_ms),
        connect_timeout: Duration::from_millis(timeout_ms),
        max_frame_bytes: max_frame,
        // Each scripted broker here accepts one connection.
        connections_per_broker: 1,
        ..ClientConfig::default()
    })
}

#[tokio::test]
async fn api_versions_falls_back_and_each_api_degrades_on_its_own() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut seen = Vec::new();
        old_broker_handshake(&mut s, &mut seen).await;
        let (h, _) = read_request(&mut s).await.unwrap();
        seen.push((h.request_api_key, h.request_api_version));
        let r = MetadataResponse::default().with_controller_id(BrokerId(7));
        s.write_all(&frame(&h, &r, h.request_api_version))
            .await
            .unwrap();
        // Anything more would be recorded; the connection stays open until the client goes.
        while let Some((h, _)) = read_request(&mut s).await {
            seen.push((h.request_api_key, h.request_api_version));
        }
        seen
    });
    let c = client(2_000, 1 << 20);
    let (version, r) = c
        .send::<MetadataRequest>(&addr, None, |_| {
            MetadataRequest::default().with_topics(None)
        })
        .await
        .unwrap();
    assert_eq!(version, 9, "highest version both offer");
    assert_eq!(r.controller_id.0, 7);
    // The broker does not offer ListGroups: that API fails, by name, without touching the others.
    let e = c
        .send::<ListGroupsRequest>(&addr, None, |_| ListGroupsRequest::default())
        .await
        .unwrap_err();
    assert!(
        matches!(e.kind, ErrorKind::Unsupported { theirs: None, .. }),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "{addr}: ListGroups (16): no common version: mqwatch speaks 0..5, the broker does not offer it"
        )
    );
    drop(c);
    let seen = server.await.unwrap();
    assert_eq!(
        seen,
        vec![(18, 3), (18, 2), (3, 9)],
        "ListGroups never sent"
    );
}

#[tokio::test]
async fn responses_are_matched_by_correlation_id_out_of_order() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        old_broker_handshake(&mut s, &mut Vec::new()).await;
        let (h1, _) = read_request(&mut s).await.unwrap();
        let (h2, _) = read_request(&mut s).await.unwrap();
        // Answer the second first; each answer carries its request's correlation id as controller id.
        for h in [h2, h1] {
            let r = MetadataResponse::default().with_controller_id(BrokerId(h.correlation_id));
            s.write_all(&frame(&h, &r, h.request_api_version))
                .await
                .unwrap();
        }
        let _ = read_request(&mut s).await;
    });
    let c = client(2_000, 1 << 20);
    let conn = c.connection(&addr).await.unwrap();
    let ask = || {
        let conn = conn.clone();
        async move {
            conn.call(&MetadataRequest::default(), 9, Duration::from_secs(2))
                .await
                .unwrap()
                .controller_id
                .0
        }
    };
    let (a, b) = tokio::join!(ask(), ask());
    assert_ne!(a, b);
    assert!(a > 0 && b > 0);
}

#[tokio::test]
async fn an_oversized_frame_drops_the_connection_and_names_the_request() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        old_broker_handshake(&mut s, &mut Vec::new()).await;
        let _ = read_request(&mut s).await.unwrap();
        s.write_all(&(100 * 1024 * 1024i32).to_be_bytes())
            .await
            .unwrap();
        let _ = read_request(&mut s).await;
    });
    let c = client(2_000, 64 * 1024);
    let e = c
        .send::<MetadataRequest>(&addr, None, |_| MetadataRequest::default())
        .await
        .unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Frame(_)), "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "{addr}: Metadata (3) v9: bad frame: frame length 104857600"
        )),
        "{text}"
    );
    assert!(!e.is_unreachable(), "a bad frame is a bad answer");
    assert!(
        c.connection(&addr).await.is_err(),
        "closed; the scripted broker accepts no second connection"
    );
}

#[tokio::test]
async fn a_silent_broker_times_out_and_counts_as_unreachable() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        old_broker_handshake(&mut s, &mut Vec::new()).await;
        while read_request(&mut s).await.is_some() {}
    });
    let c = client(300, 1 << 20);
    let e = c
        .send::<MetadataRequest>(&addr, None, |_| MetadataRequest::default())
        .await
        .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Timeout(300));
    assert!(e.is_unreachable());
    assert_eq!(
        e.to_string(),
        format!("{addr}: Metadata (3) v9: no answer within 300 ms")
    );
}

#[tokio::test]
async fn nothing_listening_is_a_connect_error_of_the_request() {
    let addr = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    let e = client(500, 1 << 20)
        .send::<MetadataRequest>(&addr, None, |_| MetadataRequest::default())
        .await
        .unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Connect(_)), "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("{addr}: Metadata (3): cannot connect")),
        "{e}"
    );
}

#[tokio::test]
async fn tls_to_a_listener_that_does_not_speak_it_is_a_tls_error_of_the_request() {
    // Test code: a listener answering the TLS ClientHello with plain text, as a non-TLS port would.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        if let Ok((mut s, _)) = listener.accept() {
            let mut buf = [0u8; 512];
            let _ = s.read(&mut buf);
            let _ = s.write_all(b"HTTP/1.0 400 Bad Request\r\n\r\n");
            let _ = s.read(&mut buf);
        }
    });
    let c = KafkaClient::new(ClientConfig {
        security: mqwatch_kafka::Security {
            tls: Some(mqwatch_kafka::client::Tls::default()),
            sasl: None,
        },
        connect_timeout: std::time::Duration::from_secs(5),
        ..ClientConfig::default()
    });
    let e = c
        .send::<MetadataRequest>(&addr, None, |_| MetadataRequest::default())
        .await
        .unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Tls(_)), "{e}");
    assert!(
        e.to_string().starts_with(&format!("{addr}: Metadata (3)")),
        "{e}"
    );
}

/// Plays a broker that enables only `enabled` SASL mechanisms: ApiVersions, SaslHandshake, then (when the
/// mechanism is enabled) one SaslAuthenticate whose bytes it returns, accepting them, then one Metadata.
async fn sasl_broker(listener: TcpListener, enabled: &'static str) -> Option<Bytes> {
    use kafka_protocol::messages::{
        SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
        SaslHandshakeResponse,
    };
    use kafka_protocol::protocol::{Decodable, StrBytes};
    let (mut s, _) = listener.accept().await.unwrap();
    let (h, _) = read_request(&mut s).await.unwrap();
    let offered = versions(&[
        (ApiKey::ApiVersions, 0, 3),
        (ApiKey::Metadata, 0, 12),
        (ApiKey::SaslHandshake, 0, 1),
        (ApiKey::SaslAuthenticate, 0, 2),
    ]);
    s.write_all(&frame(&h, &offered, h.request_api_version))
        .await
        .unwrap();
    let (h, mut body) = read_request(&mut s).await.unwrap();
    assert_eq!(
        (h.request_api_key, h.request_api_version),
        (ApiKey::SaslHandshake as i16, 1)
    );
    let asked = SaslHandshakeRequest::decode(&mut body, 1)
        .unwrap()
        .mechanism;
    let enabled_list = vec![StrBytes::from_static_str(enabled)];
    if asked.as_str() != enabled {
        let r = SaslHandshakeResponse::default()
            .with_error_code(33)
            .with_mechanisms(enabled_list);
        s.write_all(&frame(&h, &r, 1)).await.unwrap();
        return None;
    }
    let r = SaslHandshakeResponse::default().with_mechanisms(enabled_list);
    s.write_all(&frame(&h, &r, 1)).await.unwrap();
    let (h, mut body) = read_request(&mut s).await.unwrap();
    assert_eq!(h.request_api_key, ApiKey::SaslAuthenticate as i16);
    let v = h.request_api_version;
    let auth = SaslAuthenticateRequest::decode(&mut body, v)
        .unwrap()
        .auth_bytes;
    s.write_all(&frame(&h, &SaslAuthenticateResponse::default(), v))
        .await
        .unwrap();
    let (h, _) = read_request(&mut s).await.unwrap();
    assert_eq!(h.request_api_key, ApiKey::Metadata as i16);
    s.write_all(&frame(
        &h,
        &MetadataResponse::default(),
        h.request_api_version,
    ))
    .await
    .unwrap();
    Some(auth)
}

fn sasl_client(mechanism: mqwatch_kafka::client::Mechanism) -> KafkaClient {
    KafkaClient::new(ClientConfig {
        security: mqwatch_kafka::Security {
            tls: None,
            sasl: Some(mqwatch_kafka::client::Sasl {
                mechanism,
                username: "mqwatch".into(),
                password: "pw".into(),
            }),
        },
        connect_timeout: Duration::from_secs(5),
        connections_per_broker: 1,
        ..ClientConfig::default()
    })
}

#[tokio::test]
async fn sasl_plain_sends_the_rfc_4616_message_in_sasl_authenticate() {
    // Scripted broker (test code): tansu 0.6 is built without PLAIN, so PLAIN's bytes are checked here.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = tokio::spawn(sasl_broker(listener, "PLAIN"));
    sasl_client(mqwatch_kafka::client::Mechanism::Plain)
        .send::<MetadataRequest>(&addr, None, |_| MetadataRequest::default())
        .await
        .unwrap();
    assert_eq!(
        server.await.unwrap().as_deref(),
        Some(&b"\0mqwatch\0pw"[..])
    );
}

#[tokio::test]
async fn a_mechanism_the_broker_does_not_enable_is_an_authentication_error_naming_what_it_offers() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let server = tokio::spawn(sasl_broker(listener, "SCRAM-SHA-512"));
    let e = sasl_client(mqwatch_kafka::client::Mechanism::Plain)
        .send::<MetadataRequest>(&addr, None, |_| MetadataRequest::default())
        .await
        .unwrap_err();
    assert!(matches!(e.kind, ErrorKind::Authentication(_)), "{e}");
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("{addr}: SaslHandshake (17) v1"))
            && text.contains("does not enable PLAIN")
            && text.contains("offers SCRAM-SHA-512"),
        "{text}"
    );
    assert_eq!(server.await.unwrap(), None);
}
