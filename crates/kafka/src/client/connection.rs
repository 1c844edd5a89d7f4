//! One connection to one broker (TCP, under TLS when configured, authenticated by SASL when configured). Frames are a 4-byte length and a body, bounded by the configured maximum;
//! responses are matched to requests by correlation id, and every response body passes the guard
//! ([`crate::guard`]) before kafka-protocol decodes it. A reader task dispatches responses and, the moment the
//! connection closes or sends a bad frame, fails every request in flight. Every call has a timeout. The broker's
//! API versions are read once, when the connection opens, before SASL authentication ([`super::sasl`]).

use super::error::{Api, ErrorKind};
use super::sasl::Failure;
use super::security::{ReadHalf, Security, WriteHalf};
use super::versions::BrokerVersions;
use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, RequestHeader, ResponseHeader,
};
use kafka_protocol::protocol::{Decodable, Encodable, HeaderVersion, Message, Request, StrBytes};
use std::collections::HashMap;
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

type Reply = oneshot::Sender<Result<Bytes, ErrorKind>>;

/// The ApiVersions version tried first.
const FIRST_API_VERSIONS: i16 = 3;

/// Kafka's UNSUPPORTED_VERSION.
const UNSUPPORTED_VERSION: i16 = 35;

#[derive(Default)]
struct Pending {
    waiting: HashMap<i32, Reply>,
    /// Set once the connection is dead; new calls fail with it at once.
    closed: Option<ErrorKind>,
}

impl Pending {
    fn close(&mut self, reason: ErrorKind) {
        if self.closed.is_none() {
            self.closed = Some(reason.clone());
        }
        for (_, tx) in self.waiting.drain() {
            let _ = tx.send(Err(reason.clone()));
        }
    }
}

/// A connection to one broker, with the API versions it offered.
pub struct BrokerConnection {
    writer: tokio::sync::Mutex<WriteHalf>,
    pending: Arc<Mutex<Pending>>,
    next_correlation: AtomicI32,
    reader: JoinHandle<()>,
    client_id: StrBytes,
    versions: BrokerVersions,
}

impl std::fmt::Debug for BrokerConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BrokerConnection")
            .field("closed", &self.is_closed())
            .field("versions", &self.versions)
            .finish_non_exhaustive()
    }
}

impl Drop for BrokerConnection {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl BrokerConnection {
    /// Connects within `timeout`, under TLS when `security` says so (with `tls`, the connector made from its
    /// settings), asks the broker's API versions, then authenticates when `security` has SASL (each step within
    /// `timeout`). Errors name the API and version that failed (ApiVersions for the connection and TLS).
    pub async fn open(
        addr: &str,
        client_id: &str,
        timeout: Duration,
        max_frame: usize,
        security: &Security,
        tls: Option<&tokio_rustls::TlsConnector>,
    ) -> Result<Self, Failure> {
        let api = Api(ApiVersionsRequest::KEY);
        let within =
            |what: &str| ErrorKind::Connect(format!("no {what} within {} ms", timeout.as_millis()));
        let stream = tokio::time::timeout(timeout, TcpStream::connect(addr))
            .await
            .map_err(|_| (api, None, within("connection")))?
            .map_err(|e| (api, None, ErrorKind::Connect(e.to_string())))?;
        let tls = security.tls.as_ref().zip(tls);
        let (rd, wr) = tokio::time::timeout(timeout, super::security::transport(stream, addr, tls))
            .await
            .map_err(|_| (api, None, within("TLS handshake")))?
            .map_err(|e| (api, None, ErrorKind::Tls(e)))?;
        let pending = Arc::new(Mutex::new(Pending::default()));
        let reader = tokio::spawn(read_loop(rd, pending.clone(), max_frame));
        let mut conn = Self {
            writer: tokio::sync::Mutex::new(wr),
            pending,
            next_correlation: AtomicI32::new(1),
            reader,
            client_id: StrBytes::from_string(client_id.to_string()),
            versions: BrokerVersions::default(),
        };
        conn.versions = conn
            .api_versions(timeout)
            .await
            .map_err(|(version, kind)| (api, version, kind))?;
        if let Some(sasl) = &security.sasl {
            super::sasl::authenticate(&conn, sasl, timeout).await?;
        }
        Ok(conn)
    }

    /// ApiVersions in v3 (the version every broker since Kafka 2.4 knows; v4 changes nothing mqwatch reads, and
    /// some Kafka-protocol servers mishandle versions they do not know); a broker that does not know v3 answers
    /// UNSUPPORTED_VERSION in v0 with its own range, and the request is sent again in the highest version both
    /// know.
    async fn api_versions(
        &self,
        timeout: Duration,
    ) -> Result<BrokerVersions, (Option<i16>, ErrorKind)> {
        let ours = super::versions::capped(ApiVersionsRequest::VERSIONS, Some(FIRST_API_VERSIONS));
        let request = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("mqwatch"))
            .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION")));
        let mut version = ours.max;
        for _ in 0..2 {
            let mut body = self
                .exchange(&request, version, timeout)
                .await
                .map_err(|e| (Some(version), e))?;
            let _header =
                ResponseHeader::decode(&mut body, ApiVersionsResponse::header_version(version))
                    .map_err(|e| (Some(version), ErrorKind::Decode(e.to_string())))?;
            let code = body.clone().try_get_i16().unwrap_or(0);
            if code == UNSUPPORTED_VERSION {
                let v0: ApiVersionsResponse =
                    crate::guard::decode(ApiVersionsRequest::KEY, 0, body)
                        .map_err(|e| (Some(version), ErrorKind::Decode(e)))?;
                let theirs = BrokerVersions::from_response(&v0);
                let common =
                    theirs
                        .pick(ApiVersionsRequest::KEY, ours)
                        .map_err(|(ours, theirs)| {
                            (Some(version), ErrorKind::Unsupported { ours, theirs })
                        })?;
                if common >= version {
                    break;
                }
                version = common;
                continue;
            }
            let response: ApiVersionsResponse =
                crate::guard::decode(ApiVersionsRequest::KEY, version, body)
                    .map_err(|e| (Some(version), ErrorKind::Decode(e)))?;
            if response.error_code != 0 {
                return Err((Some(version), ErrorKind::code(response.error_code, None)));
            }
            return Ok(BrokerVersions::from_response(&response));
        }
        Err((
            Some(version),
            ErrorKind::code(UNSUPPORTED_VERSION, Some("ApiVersions".into())),
        ))
    }

    /// The API versions the broker offered.
    pub fn versions(&self) -> &BrokerVersions {
        &self.versions
    }

    /// Whether the connection has closed (a new one is needed).
    pub fn is_closed(&self) -> bool {
        self.pending
            .lock()
            .map(|p| p.closed.is_some())
            .unwrap_or(true)
    }

    /// Sends `request` in `version` and decodes its response, within `timeout`.
    pub async fn call<R: Request>(
        &self,
        request: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<R::Response, ErrorKind> {
        let mut body = self.exchange(request, version, timeout).await?;
        ResponseHeader::decode(&mut body, R::Response::header_version(version))
            .map_err(|e| ErrorKind::Decode(format!("response header: {e}")))?;
        crate::guard::decode(R::KEY, version, body).map_err(ErrorKind::Decode)
    }

    /// Sends one request and returns the response frame (header and body, without the length).
    async fn exchange<R: Request>(
        &self,
        request: &R,
        version: i16,
        timeout: Duration,
    ) -> Result<Bytes, ErrorKind> {
        let correlation = self.next_correlation.fetch_add(1, Ordering::Relaxed);
        let frame = self.encode(request, version, correlation)?;
        let (tx, rx) = oneshot::channel();
        {
            let mut p = self
                .pending
                .lock()
                .map_err(|_| ErrorKind::Closed("connection state poisoned".into()))?;
            if let Some(reason) = &p.closed {
                return Err(reason.clone());
            }
            p.waiting.insert(correlation, tx);
        }
        let exchange = async {
            {
                let mut w = self.writer.lock().await;
                if let Err(e) = w.write_all(&frame).await {
                    let reason = ErrorKind::Closed(format!("write failed: {e}"));
                    if let Ok(mut p) = self.pending.lock() {
                        p.close(reason.clone());
                    }
                    return Err(reason);
                }
            }
            rx.await
                .unwrap_or_else(|_| Err(ErrorKind::Closed("connection reader stopped".into())))
        };
        let result = tokio::time::timeout(timeout, exchange)
            .await
            .unwrap_or(Err(ErrorKind::Timeout(timeout.as_millis() as u64)));
        if result.is_err()
            && let Ok(mut p) = self.pending.lock()
        {
            p.waiting.remove(&correlation);
        }
        result
    }

    fn encode<R: Request>(
        &self,
        request: &R,
        version: i16,
        correlation: i32,
    ) -> Result<Bytes, ErrorKind> {
        let header = RequestHeader::default()
            .with_request_api_key(R::KEY)
            .with_request_api_version(version)
            .with_correlation_id(correlation)
            .with_client_id(Some(self.client_id.clone()));
        let mut buf = BytesMut::with_capacity(256);
        buf.put_i32(0);
        header
            .encode(&mut buf, R::header_version(version))
            .map_err(|e| ErrorKind::Encode(format!("header: {e}")))?;
        request
            .encode(&mut buf, version)
            .map_err(|e| ErrorKind::Encode(e.to_string()))?;
        let len = i32::try_from(buf.len() - 4)
            .map_err(|_| ErrorKind::Encode(format!("request of {} bytes", buf.len())))?;
        buf[..4].copy_from_slice(&len.to_be_bytes());
        Ok(buf.freeze())
    }
}

async fn read_loop(mut rd: ReadHalf, pending: Arc<Mutex<Pending>>, max_frame: usize) {
    let reason = loop {
        let len = match rd.read_i32().await {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                break ErrorKind::Closed("closed by the broker".into());
            }
            Err(e) => break ErrorKind::Closed(e.to_string()),
        };
        if len < 4 || len as usize > max_frame {
            break ErrorKind::Frame(format!("frame length {len} outside 4..={max_frame} bytes"));
        }
        let mut frame = BytesMut::zeroed(len as usize);
        if let Err(e) = rd.read_exact(&mut frame).await {
            break ErrorKind::Frame(format!("frame of {len} bytes cut short: {e}"));
        }
        let frame = frame.freeze();
        let correlation = frame.clone().get_i32();
        let reply = pending
            .lock()
            .ok()
            .and_then(|mut p| p.waiting.remove(&correlation));
        if let Some(tx) = reply {
            let _ = tx.send(Ok(frame));
        }
        // A correlation id nobody waits for is the answer to a request that timed out: dropped.
    };
    if let Ok(mut p) = pending.lock() {
        p.close(reason);
    }
}
