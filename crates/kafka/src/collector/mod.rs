//! The Kafka collector: one cycle reads a whole cluster through mqwatch's Kafka client and returns a
//! [`ClusterSnapshot`] (engine Kafka). Order: Metadata from the bootstrap brokers, and fenced brokers from
//! DescribeCluster v2; every broker probed (its connection and API versions); then together: earliest and latest
//! offsets per leader (ListOffsets), topics' `min.insync.replicas` (DescribeConfigs), and groups (ListGroups,
//! OffsetFetch); then members (DescribeGroups, last, as some servers drop the connection on it); then time lag
//! (one Fetch per committed offset not yet cached, else interpolation).
//!
//! Every request has a timeout, requests run with bounded concurrency, and a broker that cannot be reached is
//! skipped for the rest of the cycle, so one dead or slow broker never stalls the others. Every bad answer becomes
//! a [`mqwatch_model::CollectorErrorRecord`]. It never judges: checks read the snapshot.

mod cluster;
mod cycle;
mod groups;
mod kip848;
mod metadata;
mod offsets;
mod record_times;
mod timelag;

pub use metadata::is_internal_topic;
pub use timelag::LagMemory;

use crate::client::{KafkaClient, code_name};
use cycle::Cycle;
use mqwatch_model::{
    ClusterSnapshot, Engine, LogRef, LogStatus, NodeRef, NodeRole, NodeStatus, ObservedNodeState,
    PartitionStatus,
};
use std::collections::BTreeMap;
use std::time::Instant;

/// A broker seen in an earlier cycle (kept in the state directory), so one that vanished is still reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownBroker {
    /// Broker id.
    pub id: i32,
    /// `host:port`.
    pub addr: String,
}

impl KnownBroker {
    /// The node this broker is: `broker <id>`.
    pub fn node(&self) -> NodeRef {
        NodeRef::new(NodeRole::Broker, self.id.to_string()).with_addr(&self.addr)
    }
}

/// What to collect: one Kafka cluster as config and state describe it.
#[derive(Debug, Clone)]
pub struct Target {
    /// mqwatch's name for the cluster.
    pub cluster: String,
    /// Bootstrap addresses (`host:port`), asked in turn for Metadata.
    pub bootstrap: Vec<String>,
    /// Broker ids config expects (`"1"`, `"2"`).
    pub expected_brokers: Vec<String>,
    /// Brokers seen in earlier cycles.
    pub known_brokers: Vec<KnownBroker>,
    /// Requests in flight at once.
    pub concurrency: usize,
}

impl Target {
    /// A target with only a name and bootstrap addresses, 8 requests in flight.
    pub fn new(cluster: impl Into<String>, bootstrap: Vec<String>) -> Self {
        Self {
            cluster: cluster.into(),
            bootstrap,
            expected_brokers: Vec::new(),
            known_brokers: Vec::new(),
            concurrency: 8,
        }
    }
}

/// A broker this cycle: where it is and what Metadata and config say of it.
struct Seat {
    id: i32,
    addr: String,
    /// Listed in Metadata (or DescribeCluster) now; `None` when no bootstrap broker answered.
    registered: Option<bool>,
    /// DescribeCluster v2 says it is fenced.
    fenced: bool,
    expected: bool,
}

/// Reads the whole cluster once. `memory` is this cluster's (time-lag samples and record timestamps from earlier
/// cycles); keep one per cluster across cycles.
pub async fn collect(
    client: &KafkaClient,
    target: &Target,
    memory: &LagMemory,
    now_ms: u64,
) -> ClusterSnapshot {
    let started = Instant::now();
    let cycle = Cycle::default();
    let meta = metadata::read(client, &cycle, &target.bootstrap).await;
    let registered = match &meta {
        Some(m) => cluster::brokers(client, &cycle, &m.answered_by).await,
        None => None,
    };

    let seats = seats(meta.as_ref(), registered.as_ref(), target);
    for s in &seats {
        if !s.addr.is_empty() {
            cycle.name(
                &s.addr,
                NodeRef::new(NodeRole::Broker, s.id.to_string()).with_addr(&s.addr),
            );
        }
    }
    let nodes: Vec<NodeStatus> = cycle::bounded(
        seats
            .iter()
            .map(|s| probe(client, &cycle, s, now_ms))
            .collect::<Vec<_>>(),
        target.concurrency,
    )
    .await;
    let mut nodes = nodes;
    nodes.sort_by(|a, b| a.node.cmp(&b.node));

    let Some(meta) = meta else {
        return ClusterSnapshot {
            cluster: target.cluster.clone(),
            engine: Some(Engine::Kafka),
            taken_at_ms: now_ms,
            cycle_ms: started.elapsed().as_millis() as u64,
            nodes,
            errors: cycle.take_errors(),
            ..Default::default()
        };
    };

    let mut topics: Vec<String> = meta.partitions.iter().map(|p| p.topic.clone()).collect();
    topics.dedup();
    let coordinators: Vec<String> = nodes
        .iter()
        .filter(|n| n.answered && n.registration == Some(ObservedNodeState::Active))
        .filter_map(|n| n.node.addr.clone())
        .collect();
    // Offsets and groups need nothing of each other: read together.
    let (ranges, mut found) = tokio::join!(
        offsets::collect(client, &cycle, &meta, target.concurrency, &memory.earliest),
        groups::read(client, &cycle, &coordinators, target.concurrency),
    );
    // Asked after those: some servers (tansu 0.6) reset the connection on DescribeConfigs, which would take the
    // requests in flight beside it down too.
    let min_isr = cluster::min_insync_replicas(client, &cycle, &meta.answered_by, &topics).await;
    groups::describe_all(client, &cycle, &mut found, target.concurrency).await;
    let mut groups = groups::statuses(found, &meta, &ranges);
    memory.sample(&ranges, now_ms);
    timelag::fill(
        client,
        &cycle,
        &meta,
        memory,
        &mut groups,
        now_ms,
        target.concurrency,
    )
    .await;

    let logs = ranges
        .iter()
        .map(|((topic, partition), (earliest, latest))| LogStatus {
            log: LogRef::Partition {
                topic: topic.clone(),
                partition: *partition,
            },
            earliest: *earliest,
            latest: *latest,
        })
        .collect();
    let partitions = meta
        .partitions
        .iter()
        .map(|p| PartitionStatus {
            log: LogRef::Partition {
                topic: p.topic.clone(),
                partition: p.index,
            },
            leader: (p.leader >= 0).then(|| p.leader.to_string()),
            leader_epoch: (p.leader_epoch >= 0).then_some(p.leader_epoch),
            replicas: p.replicas.iter().map(i32::to_string).collect(),
            isr: p.isr.iter().map(i32::to_string).collect(),
            offline_replicas: p.offline.iter().map(i32::to_string).collect(),
            min_insync_replicas: min_isr.get(&p.topic).copied(),
            error: (p.error_code != 0).then(|| code_name(p.error_code)),
        })
        .collect();
    let mut racks: BTreeMap<String, String> = registered
        .iter()
        .flatten()
        .filter_map(|(id, b)| b.rack.clone().map(|r| (id.to_string(), r)))
        .collect();
    racks.extend(
        meta.brokers
            .iter()
            .filter_map(|(id, b)| b.rack.clone().map(|r| (id.to_string(), r))),
    );
    ClusterSnapshot {
        cluster: target.cluster.clone(),
        engine: Some(Engine::Kafka),
        taken_at_ms: now_ms,
        cycle_ms: started.elapsed().as_millis() as u64,
        nodes,
        logs,
        groups,
        traffic: Vec::new(),
        errors: cycle.take_errors(),
        offset_moved: Vec::new(),
        partitions,
        racks,
    }
}

/// Brokers in Metadata, fenced ones DescribeCluster adds, then known and expected ones that are not registered
/// (or whose registration is unknown because no bootstrap broker answered).
fn seats(
    meta: Option<&metadata::Metadata>,
    registered: Option<&BTreeMap<i32, cluster::Registered>>,
    target: &Target,
) -> Vec<Seat> {
    let mut seats: BTreeMap<i32, Seat> = BTreeMap::new();
    for (id, b) in meta.map(|m| &m.brokers).into_iter().flatten() {
        seats.insert(
            *id,
            Seat {
                id: *id,
                addr: b.addr.clone(),
                registered: Some(true),
                fenced: false,
                expected: false,
            },
        );
    }
    for (id, r) in registered.into_iter().flatten() {
        let seat = seats.entry(*id).or_insert_with(|| Seat {
            id: *id,
            addr: r.addr.clone(),
            registered: Some(true),
            fenced: false,
            expected: false,
        });
        seat.fenced = r.fenced == Some(true);
    }
    let registry = meta.map(|_| false);
    for k in &target.known_brokers {
        seats.entry(k.id).or_insert_with(|| Seat {
            id: k.id,
            addr: k.addr.clone(),
            registered: registry,
            fenced: false,
            expected: false,
        });
    }
    for e in &target.expected_brokers {
        let Ok(id) = e.trim().parse::<i32>() else {
            continue;
        };
        seats
            .entry(id)
            .or_insert_with(|| Seat {
                id,
                addr: String::new(),
                registered: registry,
                fenced: false,
                expected: false,
            })
            .expected = true;
    }
    seats.into_values().collect()
}

/// The broker's liveness probe: one ApiVersions exchange on its connection ([`KafkaClient::ping`]).
async fn probe(client: &KafkaClient, cycle: &Cycle, seat: &Seat, now_ms: u64) -> NodeStatus {
    let node = NodeRef::new(NodeRole::Broker, seat.id.to_string());
    let node = if seat.addr.is_empty() {
        node
    } else {
        node.with_addr(&seat.addr)
    };
    let answered = if seat.addr.is_empty() {
        false
    } else {
        // A broker that refused our TLS or credentials answered: it is up (the refusal is a collector error).
        cycle
            .ask(&seat.addr, client.ping(&seat.addr))
            .await
            .is_some()
            || cycle.refused(&seat.addr) == Some(true)
    };
    let error = match (answered, seat.addr.is_empty()) {
        (true, _) => None,
        (false, true) => {
            Some("expected by config but never seen in metadata: no address to probe".to_string())
        }
        (false, false) => Some(
            cycle
                .failure(&seat.addr)
                .unwrap_or_else(|| "answered badly".into()),
        ),
    };
    NodeStatus {
        node,
        registration: seat.registered.map(|r| match (r, seat.fenced) {
            (false, _) => ObservedNodeState::Unregistered,
            (true, true) => ObservedNodeState::Fenced,
            (true, false) => ObservedNodeState::Active,
        }),
        expected: seat.expected,
        answered,
        error,
        last_answer_ms: answered.then_some(now_ms),
        replica_of: None,
        store_max_offset: None,
    }
}
