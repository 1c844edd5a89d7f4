//! OFFSET_MOVED_EVENT: Java brokers write one message to this topic whenever a consumer pulls an offset outside
//! its queue's [min, max] (the Rust broker never does; mqwatch also compares offsets directly). Each cycle reads
//! the newest events of every queue of the topic on every master, without committing anything, and keeps those
//! stored within the look-back window.

use super::cycle::{Cycle, bounded};
use super::nodes::KnownBroker;
use super::topics::queue_log;
use crate::body::OffsetMovedEvent;
use crate::client::{AdminClient, AdminError, ErrorKind, RequestCode};
use crate::codec::parse_lenient_json;
use mqwatch_model::{GroupRef, OffsetMovedRecord};

/// The topic Java brokers write offset-moved events to.
pub(crate) const EVENT_TOPIC: &str = "OFFSET_MOVED_EVENT";
/// The group mqwatch reads it as: one every broker creates at start, and mqwatch commits nothing for it.
pub(crate) const READER_GROUP: &str = "TOOLS_CONSUMER";
/// Events older than this are not reported.
pub const EVENT_LOOKBACK_MS: u64 = 10 * 60 * 1000;
/// Newest events read per queue and cycle.
const PER_QUEUE: i64 = 32;

/// Reads recent events from every `(master, queue count)`.
pub(crate) async fn collect(
    client: &AdminClient,
    cycle: &Cycle,
    hosts: &[(KnownBroker, i32)],
    now_ms: u64,
    concurrency: usize,
) -> Vec<OffsetMovedRecord> {
    let jobs: Vec<_> = hosts
        .iter()
        .flat_map(|(m, queues)| (0..*queues).map(move |q| (m, q)))
        .map(|(m, q)| async move {
            let max = cycle
                .ask(&m.addr, client.max_offset(&m.addr, EVENT_TOPIC, q))
                .await?;
            let min = cycle
                .ask(&m.addr, client.min_offset(&m.addr, EVENT_TOPIC, q))
                .await?;
            let start = min.max(max - PER_QUEUE);
            if start >= max {
                return Some(Vec::new());
            }
            let pull = client.pull(
                &m.addr,
                READER_GROUP,
                EVENT_TOPIC,
                q,
                start,
                PER_QUEUE as i32,
            );
            let pulled = cycle.ask(&m.addr, pull).await?;
            let mut out = Vec::new();
            for msg in pulled.messages {
                let at_ms = msg.store_timestamp.max(0) as u64;
                if at_ms + EVENT_LOOKBACK_MS < now_ms {
                    continue;
                }
                let event = parse_lenient_json(&msg.body)
                    .map_err(|e| e.to_string())
                    .and_then(|v| OffsetMovedEvent::from_json(&v).map_err(|e| e.to_string()));
                match event {
                    Ok(e) => out.push(OffsetMovedRecord {
                        group: GroupRef::new(e.consumer_group),
                        log: queue_log(&e.message_queue),
                        requested: e.offset_request,
                        moved_to: e.offset_new,
                        at_ms,
                        node: m.node(),
                    }),
                    Err(reason) => cycle.record(
                        &m.addr,
                        AdminError {
                            node: m.addr.clone(),
                            request: RequestCode::PULL_MESSAGE,
                            kind: ErrorKind::Body(format!(
                                "{EVENT_TOPIC} message {}: {reason}",
                                msg.queue_offset
                            )),
                        },
                    ),
                }
            }
            Some(out)
        })
        .collect();
    bounded(jobs, concurrency)
        .await
        .into_iter()
        .flatten()
        .flatten()
        .collect()
}
