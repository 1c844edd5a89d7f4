//! The RocketMQ collector: one cycle reads a whole cluster through mqwatch's admin client and returns a
//! [`ClusterSnapshot`]. Every request has a timeout, requests run with bounded concurrency, and a node that fails
//! once is skipped for the rest of the cycle, so one dead or slow broker never stalls the cycle. It never judges:
//! checks read the snapshot.

mod cycle;
mod groups;
mod names;
mod nodes;
mod offset_moved;
mod topics;
mod traffic;

pub use names::{is_system_group, is_system_topic};
pub use nodes::KnownBroker;
pub use offset_moved::EVENT_LOOKBACK_MS;

use crate::client::AdminClient;
use cycle::Cycle;
use mqwatch_model::{ClusterSnapshot, Engine, ObservedNodeState};
use std::time::Instant;

/// What to collect: one RocketMQ cluster as config and state describe it.
#[derive(Debug, Clone)]
pub struct Target {
    /// mqwatch's name for the cluster.
    pub cluster: String,
    /// Name server addresses.
    pub name_servers: Vec<String>,
    /// Brokers config expects: `broker-a` (its master) or `broker-a:1`.
    pub expected_brokers: Vec<String>,
    /// Brokers seen in earlier cycles (kept in the state directory), so one that vanished is still reported.
    pub known_brokers: Vec<KnownBroker>,
    /// Requests in flight at once.
    pub concurrency: usize,
}

/// Reads the whole cluster once.
pub async fn collect(client: &AdminClient, target: &Target, now_ms: u64) -> ClusterSnapshot {
    let started = Instant::now();
    let cycle = Cycle::default();
    let (mut nodes, info) = nodes::name_servers(client, &cycle, target, now_ms).await;
    let seats = nodes::seats(info.as_ref(), target);
    let probed = nodes::probe(client, &cycle, seats, now_ms, target.concurrency).await;

    let masters: Vec<KnownBroker> = probed
        .iter()
        .filter(|p| p.seat.broker.id == 0 && p.status.answered)
        .filter(|p| p.status.registration != Some(ObservedNodeState::Unregistered))
        .map(|p| p.seat.broker.clone())
        .collect();
    let mut system_names: Vec<String> = info
        .iter()
        .flat_map(|i| i.clusters.keys().cloned())
        .collect();
    system_names.extend(info.iter().flat_map(|i| i.brokers.keys().cloned()));

    let topics = topics::collect(client, &cycle, &masters, &system_names, target.concurrency).await;
    let groups = groups::collect(client, &cycle, &masters, &topics, target.concurrency).await;
    let offset_moved = offset_moved::collect(
        client,
        &cycle,
        &topics.event_queues,
        now_ms,
        target.concurrency,
    )
    .await;

    let topic_hosts: Vec<(String, Vec<KnownBroker>)> = topics
        .hosts
        .iter()
        .map(|(t, m)| (t.clone(), m.clone()))
        .collect();
    let mut consumed = Vec::new();
    for g in &groups {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for p in &g.positions {
            if let mqwatch_model::LogRef::Queue { topic, .. } = &p.log {
                let pair = (topic.clone(), g.group.name.clone());
                if !pairs.contains(&pair) {
                    pairs.push(pair);
                }
            }
        }
        for (topic, group) in pairs {
            let hosts = topics.hosts.get(&topic).cloned().unwrap_or_default();
            consumed.push((topic, group, hosts));
        }
    }
    let cluster_of = |m: &KnownBroker| {
        info.as_ref()
            .and_then(|i| i.brokers.get(&m.name))
            .map(|b| b.cluster.clone())
            .unwrap_or_default()
    };
    let masters_with_cluster: Vec<(KnownBroker, String)> = masters
        .iter()
        .map(|m| (m.clone(), cluster_of(m)))
        .filter(|(_, c)| !c.is_empty())
        .collect();
    let traffic = traffic::collect(
        client,
        &cycle,
        &topic_hosts,
        &consumed,
        &masters_with_cluster,
        target.concurrency,
    )
    .await;

    let mut groups = groups;
    for g in &mut groups {
        let sent_back = traffic.iter().filter(|t| {
            t.metric == mqwatch_model::TrafficMetric::SendBack
                && t.group.as_deref() == Some(g.group.name.as_str())
        });
        g.send_back_last_minute = sent_back.map(|t| t.last_minute).reduce(|a, b| a + b);
    }
    nodes.extend(probed.into_iter().map(|p| p.status));
    ClusterSnapshot {
        cluster: target.cluster.clone(),
        engine: Some(Engine::Rocketmq),
        taken_at_ms: now_ms,
        cycle_ms: started.elapsed().as_millis() as u64,
        nodes,
        logs: topics.logs(),
        groups,
        traffic,
        errors: cycle.take_errors(),
        offset_moved,
        ..Default::default()
    }
}
