//! mqwatch's Kafka client: one connection per broker, opened on first use and again after it closes, with the
//! broker's API versions read when it opens. [`KafkaClient::send`] picks, per API and per broker, the highest
//! version both sides support; the caller builds the request for that version. Every error names the broker, the
//! API and the version ([`KafkaError`]).
//!
//! Security ([`Security`]): TLS (rustls) and SASL PLAIN / SCRAM-SHA-256 / SCRAM-SHA-512, alone or together, on
//! every connection the client opens.

mod connection;
mod error;
mod fetch;
mod ops;
mod sasl;
pub mod scram;
mod security;
mod setup;
mod versions;

pub use connection::BrokerConnection;
pub use error::{Api, ErrorKind, KafkaError, code_name};
pub use fetch::{FetchAt, Fetched};
pub use ops::{CommittedOffset, FetchedRecord, OffsetSpec, ProducedBatch};
pub use security::{Mechanism, Sasl, Security, Tls};
pub use versions::{BrokerVersions, capped};

use kafka_protocol::protocol::Request;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Client settings.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    /// The client id sent in every request header.
    pub client_id: String,
    /// Deadline to open a connection (and to read the broker's API versions).
    pub connect_timeout: Duration,
    /// Deadline for one request.
    pub request_timeout: Duration,
    /// Largest response frame accepted; a larger one drops the connection.
    pub max_frame_bytes: usize,
    /// Encryption and authentication.
    pub security: Security,
    /// Connections kept to each broker, used in turn. A Kafka broker answers one connection's requests one at a
    /// time, in order; several let it work on a cycle's batches side by side (default 4).
    pub connections_per_broker: usize,
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            client_id: "mqwatch".into(),
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(10),
            max_frame_bytes: 64 * 1024 * 1024,
            security: Security::default(),
            connections_per_broker: 4,
        }
    }
}

/// One broker's connections ("lanes"), each opened on first use and again after it closes.
struct Slot {
    lanes: Vec<tokio::sync::Mutex<Option<Arc<BrokerConnection>>>>,
    next: std::sync::atomic::AtomicUsize,
}

impl Slot {
    fn new(lanes: usize) -> Self {
        Self {
            lanes: (0..lanes.max(1))
                .map(|_| tokio::sync::Mutex::new(None))
                .collect(),
            next: Default::default(),
        }
    }
}

/// A client of any number of brokers, by address. Cheap to share by reference; connections persist across
/// collection cycles.
pub struct KafkaClient {
    config: ClientConfig,
    slots: Mutex<HashMap<String, Arc<Slot>>>,
    /// The TLS connector made from the config once, when TLS is configured.
    tls: Option<tokio_rustls::TlsConnector>,
    /// Why no connection can be opened (the TLS settings cannot make a connector, or the caller's config was
    /// refused): every request fails with it.
    unusable: Option<ErrorKind>,
}

impl KafkaClient {
    /// A client with `config`; connects lazily.
    pub fn new(config: ClientConfig) -> Self {
        let (tls, unusable) = match config.security.tls.as_ref().map(Tls::connector) {
            None => (None, None),
            Some(Ok(connector)) => (Some(connector), None),
            Some(Err(e)) => (None, Some(ErrorKind::Tls(e))),
        };
        Self {
            config,
            slots: Mutex::new(HashMap::new()),
            tls,
            unusable,
        }
    }

    /// A client whose every request fails with `reason` (e.g. its security settings could not be read), so the
    /// failure shows as a collector error each cycle instead of a connection without the settings.
    pub fn refusing(mut self, reason: String) -> Self {
        self.unusable = Some(ErrorKind::Config(reason));
        self
    }

    /// Its settings.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// An open connection to `addr` (the broker's connections taken in turn), opening it (and reading its API
    /// versions, and authenticating) if it is not open or closed.
    pub async fn connection(&self, addr: &str) -> Result<Arc<BrokerConnection>, KafkaError> {
        let api = Api(kafka_protocol::messages::ApiVersionsRequest::KEY);
        let fail = |version, kind| KafkaError {
            broker: addr.to_string(),
            api,
            version,
            kind,
        };
        if let Some(kind) = &self.unusable {
            return Err(fail(None, kind.clone()));
        }
        let tls = self.tls.as_ref();
        let slot = {
            let mut slots = self
                .slots
                .lock()
                .map_err(|_| fail(None, ErrorKind::Closed("client state poisoned".into())))?;
            slots
                .entry(addr.to_string())
                .or_insert_with(|| Arc::new(Slot::new(self.config.connections_per_broker)))
                .clone()
        };
        let lane = slot.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % slot.lanes.len();
        let mut conn = slot.lanes[lane].lock().await;
        if let Some(c) = conn.as_ref().filter(|c| !c.is_closed()) {
            return Ok(c.clone());
        }
        *conn = None;
        let c = BrokerConnection::open(
            addr,
            &self.config.client_id,
            self.config.connect_timeout,
            self.config.max_frame_bytes,
            &self.config.security,
            tls,
        )
        .await
        .map_err(|(api, version, kind)| KafkaError {
            broker: addr.to_string(),
            api,
            version,
            kind,
        })?;
        let c = Arc::new(c);
        *conn = Some(c.clone());
        Ok(c)
    }

    /// The version of `R` this client would send to `addr`: the highest in both kafka-protocol's range (lowered
    /// to `cap`, the highest version whose request shape the caller builds) and the broker's.
    pub async fn version_for<R: Request>(
        &self,
        addr: &str,
        cap: Option<i16>,
    ) -> Result<i16, KafkaError> {
        let conn = self.connection(addr).await?;
        pick::<R>(addr, conn.versions(), cap)
    }

    /// Sends the request `build` makes for the negotiated version to `addr`; returns that version and the
    /// response. Top-level error codes are the caller's to read (their place differs per API).
    pub async fn send<R: Request>(
        &self,
        addr: &str,
        cap: Option<i16>,
        build: impl FnOnce(i16) -> R,
    ) -> Result<(i16, R::Response), KafkaError> {
        let conn = match self.connection(addr).await {
            Ok(c) => c,
            Err(mut e) if e.api.0 != R::KEY && e.version.is_none() => {
                // Could not even connect: name the request that wanted the connection.
                e.api = Api(R::KEY);
                return Err(e);
            }
            Err(e) => return Err(e),
        };
        let version = pick::<R>(addr, conn.versions(), cap)?;
        let request = build(version);
        conn.call(&request, version, self.config.request_timeout)
            .await
            .map(|r| (version, r))
            .map_err(|kind| KafkaError {
                broker: addr.to_string(),
                api: Api(R::KEY),
                version: Some(version),
                kind,
            })
    }

    /// A liveness probe: one ApiVersions exchange with `addr` on one of its connections (opened if needed). A
    /// connection found closed by the exchange is tried again on the next one, at most once per connection and
    /// once more (which opens a new one), so a broker that died since the last request is reported unreachable
    /// (refused, or no answer in time), not answered from a stale connection.
    pub async fn ping(&self, addr: &str) -> Result<(), KafkaError> {
        let once = || async {
            let (version, r) = self
                .send::<kafka_protocol::messages::ApiVersionsRequest>(addr, Some(3), |_| {
                    kafka_protocol::messages::ApiVersionsRequest::default()
                })
                .await?;
            check_code::<kafka_protocol::messages::ApiVersionsRequest>(
                addr,
                version,
                r.error_code,
                None,
            )
        };
        let mut tries = self.config.connections_per_broker.max(1);
        loop {
            match once().await {
                Err(e) if matches!(e.kind, ErrorKind::Closed(_)) && tries > 0 => tries -= 1,
                other => return other,
            }
        }
    }

    /// Drops the connection to `addr`, if any (the next request opens a new one).
    pub fn forget(&self, addr: &str) {
        if let Ok(mut slots) = self.slots.lock() {
            slots.remove(addr);
        }
    }
}

fn pick<R: Request>(
    addr: &str,
    versions: &BrokerVersions,
    cap: Option<i16>,
) -> Result<i16, KafkaError> {
    versions
        .pick(R::KEY, ours::<R>(cap))
        .map_err(|(ours, theirs)| KafkaError {
            broker: addr.to_string(),
            api: Api(R::KEY),
            version: None,
            kind: ErrorKind::Unsupported { ours, theirs },
        })
}

/// The versions of `R` mqwatch sends: kafka-protocol's range, within what the response guard covers
/// ([`crate::guard::versions`]; an API it does not cover has none), lowered to `cap` when given.
pub fn ours<R: Request>(cap: Option<i16>) -> kafka_protocol::protocol::VersionRange {
    let covered = crate::guard::versions(R::KEY)
        .unwrap_or(kafka_protocol::protocol::VersionRange { min: 0, max: -1 });
    capped(R::VERSIONS.intersect(&covered), cap)
}

/// A Kafka error code as a [`KafkaError`] of `R` sent to `addr` in `version`, or `Ok` for code 0.
pub fn check_code<R: Request>(
    addr: &str,
    version: i16,
    code: i16,
    about: Option<String>,
) -> Result<(), KafkaError> {
    if code == 0 {
        return Ok(());
    }
    Err(KafkaError {
        broker: addr.to_string(),
        api: Api(R::KEY),
        version: Some(version),
        kind: ErrorKind::code(code, about),
    })
}
