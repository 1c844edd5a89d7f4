//! Hostile answers through mqwatch's real Kafka client: a hand-scripted broker in this file (NOT a real server;
//! it speaks the wire protocol with kafka-protocol's own types, then sends crafted bodies) answers with counts
//! no frame could hold. Before the response guard, kafka-protocol 0.18 reserved `Vec::with_capacity(count)` for
//! them, and an allocation that fails aborts the process. Now each is an error naming the broker, the API, the
//! version and the field, the connection stays usable, and the process lives.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::api_versions_response::ApiVersion;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, MetadataRequest, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Encodable, decode_request_header_from_buffer};
use mqwatch_kafka::client::{ClientConfig, ErrorKind, KafkaClient};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The 8-byte payload: an array count of 0x033c0c00 and four bytes.
const LIE: [u8; 8] = [0x03, 0x3c, 0x0c, 0x00, 0, 0, 0, 0];

async fn read_request(s: &mut TcpStream) -> Option<RequestHeader> {
    let len = s.read_i32().await.ok()?;
    let mut buf = BytesMut::zeroed(len as usize);
    s.read_exact(&mut buf).await.ok()?;
    decode_request_header_from_buffer(&mut buf.freeze()).ok()
}

/// A response frame: the header for `h`, then `body` as given.
fn frame(h: &RequestHeader, body: &[u8]) -> Bytes {
    let api = ApiKey::try_from(h.request_api_key).unwrap();
    let mut out = BytesMut::new();
    out.put_i32(0);
    ResponseHeader::default()
        .with_correlation_id(h.correlation_id)
        .encode(&mut out, api.response_header_version(h.request_api_version))
        .unwrap();
    out.extend_from_slice(body);
    let n = (out.len() - 4) as i32;
    out[..4].copy_from_slice(&n.to_be_bytes());
    out.freeze()
}

fn api_versions(h: &RequestHeader, lie: bool) -> Bytes {
    if lie {
        // error code 0, then (v3, compact) an api_keys varint of 2^28 + 1 (count 2^28) in five bytes.
        return frame(h, &[0, 0, 0x81, 0x80, 0x80, 0x80, 0x01, 0, 0, 0, 0]);
    }
    let keys = [(ApiKey::ApiVersions, 0, 3), (ApiKey::Metadata, 0, 0)];
    let r = ApiVersionsResponse::default().with_api_keys(
        keys.iter()
            .map(|(k, min, max)| {
                ApiVersion::default()
                    .with_api_key(*k as i16)
                    .with_min_version(*min)
                    .with_max_version(*max)
            })
            .collect(),
    );
    let mut body = BytesMut::new();
    r.encode(&mut body, h.request_api_version).unwrap();
    frame(h, &body)
}

/// Serves one connection: ApiVersions (lying when `lie_in_versions`), then Metadata v0 answered with [`LIE`]
/// first and with an empty, valid answer after.
async fn hostile(listener: TcpListener, lie_in_versions: bool) {
    while let Ok((mut s, _)) = listener.accept().await {
        let mut metadata_answers = 0;
        while let Some(h) = read_request(&mut s).await {
            let out = match ApiKey::try_from(h.request_api_key).unwrap() {
                ApiKey::ApiVersions => api_versions(&h, lie_in_versions),
                ApiKey::Metadata => {
                    metadata_answers += 1;
                    if metadata_answers == 1 {
                        frame(&h, &LIE)
                    } else {
                        frame(&h, &[0, 0, 0, 0, 0, 0, 0, 0])
                    }
                }
                _ => return,
            };
            if s.write_all(&out).await.is_err() {
                break;
            }
        }
    }
}

#[tokio::test]
async fn a_count_no_frame_can_hold_is_an_error_naming_broker_api_version_and_field() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(hostile(listener, false));
    // The scripted broker accepts one connection: one per broker here.
    let client = KafkaClient::new(ClientConfig {
        connections_per_broker: 1,
        ..ClientConfig::default()
    });
    let e = client
        .send::<MetadataRequest>(&addr, None, |_| MetadataRequest::default())
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{addr}: Metadata (3) v0: undecodable response: brokers: declares 54266880 elements, only 4 bytes left"
        )
    );
    assert!(matches!(e.kind, ErrorKind::Decode(_)));
    // The process is alive and the same connection answers the next request.
    let (v, r) = client
        .send::<MetadataRequest>(&addr, None, |_| MetadataRequest::default())
        .await
        .unwrap();
    assert_eq!((v, r.brokers.len(), r.topics.len()), (0, 0, 0));
}

#[tokio::test]
async fn a_lying_api_versions_answer_fails_the_connection_naming_api_versions() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    tokio::spawn(hostile(listener, true));
    let client = KafkaClient::new(ClientConfig::default());
    let e = client.connection(&addr).await.unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with(&format!("{addr}: ApiVersions (18) v3: undecodable response: api_keys: declares 268435456 elements")),
        "{text}"
    );
}
