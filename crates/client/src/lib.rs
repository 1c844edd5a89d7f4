//! mqwatch-client: the library producer applications link so mqwatch sees what their clients see.
//!
//! What it owns: per-minute producer statistics — a latency histogram (`mqwatch_stats::histogram`) and
//! success / failure counts by [`ErrorKind`] per (topic, broker) — recorded in O(1) without locks on the send
//! path ([`ProducerStats`]); the compact report those statistics become each interval ([`Report`]); and the
//! background [`Reporter`] that posts reports to mqwatch's intake (`POST /api/v1/client-reports`, bearer token),
//! keeping a bounded number of unsent reports while mqwatch is down and dropping the oldest (counted), never
//! blocking the application.
//!
//! Any client library can call [`ProducerStats::record`] after a send (a Kafka client from its delivery
//! callback, for instance). With the `rocketmq` feature, [`rocketmq::StatsHook`] is a ready-made
//! `SendMessageHook` for `rocketmq-client-rust`, as MQCloud hooks Java's producer.
//!
//! What it is not: no async runtime, no HTTP library (one plain HTTP/1.1 POST per report over `std::net`), no
//! alarms (mqwatch judges the reports).
//!
//! ```
//! use mqwatch_client::{ErrorKind, Outcome, ProducerStats};
//! use std::time::Duration;
//!
//! let stats = ProducerStats::new();
//! stats.record("orders", "broker-a", Duration::from_micros(850), Outcome::Sent);
//! stats.record("orders", "broker-a", Duration::from_millis(3000), Outcome::Failed(ErrorKind::Timeout));
//! let report = stats.report_since(&mut Default::default(), 0, 60_000);
//! assert_eq!(report[0].success, 1);
//! ```

mod http;
mod outbox;
mod report;
mod reporter;
#[cfg(feature = "rocketmq")]
pub mod rocketmq;
mod stats;

pub use http::{Endpoint, PostError};
pub use outbox::{FlushOutcome, Outbox};
pub use report::{Entry, PAYLOAD_VERSION, Report, ReportError};
pub use reporter::{Reporter, ReporterConfig, ReporterStatus};
pub use stats::{ErrorKind, Outcome, ProducerStats, Samplers, Slot};
