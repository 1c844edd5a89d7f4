//! Consumer groups: subscription groups per master (GET_ALL_SUBSCRIPTIONGROUP_CONFIG), positions per queue
//! (GET_CONSUME_STATS asked of each master directly, so a group with no online consumer is still read), "no
//! commit" told apart from offset 0 (QUERY_CONSUMER_OFFSET, asked where the queue holds messages: on an empty
//! queue both read as committed 0, with nothing behind either way), the age of the first unconsumed message
//! (QUERY_CONSUME_TIME_SPAN), online members (GET_CONSUMER_CONNECTION_LIST) and what each says of itself
//! (GET_CONSUMER_RUNNING_INFO).
//!
//! The message model is the one the online consumers registered; a group with none online is taken as
//! clustering (RocketMQ's default, and the only model whose offsets the broker keeps). The subscription group's
//! `consumeBroadcastEnable` says whether broadcast consumption is *allowed* (true by default, on every
//! auto-created group), not how the group consumes, so it is not read as the model.

use super::cycle::Cycle;
use super::names::is_system_group;
use super::nodes::KnownBroker;
use super::topics::{Topics, queue_log};
use crate::body::{ConsumerConnection, MessageQueue, QueueConsumeStats};
use crate::client::AdminClient;
use mqwatch_model::{
    ClientQueue, ClientStatus, GroupPosition, GroupRef, GroupStatus, MessageModel,
};
use std::collections::{BTreeMap, BTreeSet};

/// Reads every non-system group on `masters`.
pub(crate) async fn collect(
    client: &AdminClient,
    cycle: &Cycle,
    masters: &[KnownBroker],
    topics: &Topics,
    concurrency: usize,
) -> Vec<GroupStatus> {
    let tables = futures::future::join_all(masters.iter().map(|m| async move {
        (
            m,
            cycle
                .ask(&m.addr, client.subscription_groups(&m.addr))
                .await
                .unwrap_or_default(),
        )
    }))
    .await;
    let mut groups: BTreeMap<String, Vec<KnownBroker>> = BTreeMap::new();
    for (m, table) in tables {
        for name in table.into_keys().filter(|g| !is_system_group(g)) {
            groups.entry(name).or_default().push(m.clone());
        }
    }
    super::cycle::bounded(
        groups
            .into_iter()
            .map(|(name, hosts)| async move {
                one_group(client, cycle, &name, &hosts, topics, concurrency).await
            })
            .collect::<Vec<_>>(),
        concurrency,
    )
    .await
}

async fn one_group(
    client: &AdminClient,
    cycle: &Cycle,
    name: &str,
    hosts: &[KnownBroker],
    topics: &Topics,
    concurrency: usize,
) -> GroupStatus {
    let mut stats: BTreeMap<MessageQueue, (KnownBroker, QueueConsumeStats)> = BTreeMap::new();
    for m in hosts {
        if let Some(s) = cycle
            .ask(&m.addr, client.consume_stats(&m.addr, name, None))
            .await
        {
            stats.extend(s.queues.into_iter().map(|(mq, q)| (mq, (m.clone(), q))));
        }
    }
    let mut connection: Option<ConsumerConnection> = None;
    for m in hosts {
        if let Some(c) = cycle
            .ask(&m.addr, client.consumer_connections(&m.addr, name))
            .await
        {
            connection = c;
            break;
        }
    }
    if let Some(conn) = &connection {
        let known: BTreeSet<&str> = stats.keys().map(|mq| mq.topic.as_str()).collect();
        let missing: Vec<String> = conn
            .subscriptions
            .keys()
            .filter(|t| !known.contains(t.as_str()))
            .cloned()
            .collect();
        for topic in missing {
            for m in topics.hosts.get(&topic).into_iter().flatten() {
                if let Some(s) = cycle
                    .ask(&m.addr, client.consume_stats(&m.addr, name, Some(&topic)))
                    .await
                {
                    stats.extend(s.queues.into_iter().map(|(mq, q)| (mq, (m.clone(), q))));
                }
            }
        }
    }

    let mut positions = Vec::new();
    let mut behind: BTreeSet<(String, String)> = BTreeSet::new();
    for (mq, (m, q)) in &stats {
        if !topics.hosts.contains_key(&mq.topic) {
            continue;
        }
        let range = topics.ranges.get(mq).copied().unwrap_or_default();
        let committed = if q.consumer_offset == 0 && q.broker_offset > 0 {
            cycle
                .ask(
                    &m.addr,
                    client.committed_offset(&m.addr, name, &mq.topic, mq.queue_id),
                )
                .await
                .flatten()
        } else {
            Some(q.consumer_offset)
        };
        if committed.is_some_and(|c| c < q.broker_offset) {
            behind.insert((m.addr.clone(), mq.topic.clone()));
        }
        positions.push(GroupPosition {
            log: queue_log(mq),
            earliest: range.min_offset,
            latest: q.broker_offset.max(range.max_offset),
            committed,
            oldest_unconsumed_age_ms: None,
            age_source: None,
        });
    }

    let spans: Vec<_> = super::cycle::bounded(
        behind
            .into_iter()
            .map(|(addr, topic)| async move {
                cycle
                    .ask(&addr, client.consume_time_spans(&addr, &topic, name))
                    .await
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>(),
        concurrency,
    )
    .await;
    for span in spans.into_iter().flatten() {
        let log = queue_log(&span.message_queue);
        if let Some(p) = positions
            .iter_mut()
            .find(|p| p.log == log && p.lag().unwrap_or(0) > 0)
        {
            p.oldest_unconsumed_age_ms = Some(span.delay_time.max(0) as u64);
            p.age_source = Some(mqwatch_model::AgeSource::Broker);
        }
    }

    let clients = match &connection {
        Some(conn) => clients(client, name, conn, hosts, concurrency).await,
        None => Vec::new(),
    };
    let model = model(connection.as_ref().map(|c| c.message_model.as_str()));
    GroupStatus {
        group: GroupRef::new(name),
        model,
        clients,
        positions,
        retry_total: topics.retry_totals.get(name).copied(),
        dead_letter_total: topics.dead_letter_totals.get(name).copied(),
        send_back_last_minute: None,
    }
}

/// The group's model from what its online consumers registered (`None`: none online → clustering).
fn model(registered: Option<&str>) -> MessageModel {
    match registered {
        Some("BROADCASTING") => MessageModel::Broadcasting,
        _ => MessageModel::Clustering,
    }
}

/// Running info of every online client. Asked through a broker, answered by the client: a client that does not
/// answer is the client's problem, not the broker's, so it is not marked against the broker.
async fn clients(
    client: &AdminClient,
    group: &str,
    conn: &ConsumerConnection,
    hosts: &[KnownBroker],
    concurrency: usize,
) -> Vec<ClientStatus> {
    let Some(broker) = hosts.first() else {
        return Vec::new();
    };
    let subscriptions: BTreeMap<String, String> = conn
        .subscriptions
        .iter()
        .filter(|(t, _)| !t.starts_with(super::names::RETRY_PREFIX))
        .map(|(t, s)| (t.clone(), s.sub_string.clone()))
        .collect();
    let subscriptions = &subscriptions;
    super::cycle::bounded(
        conn.connections
            .iter()
            .map(|c| async move {
                let info = client
                    .consumer_running_info(&broker.addr, group, &c.client_id)
                    .await;
                let (queues, own, error) = match info {
                    Ok(info) => {
                        let own: BTreeMap<String, String> = info
                            .subscriptions
                            .iter()
                            .filter(|(t, _)| !t.starts_with(super::names::RETRY_PREFIX))
                            .map(|(t, e)| (t.clone(), e.clone()))
                            .collect();
                        let queues = info
                            .queues
                            .iter()
                            .map(|(mq, pq)| ClientQueue {
                                log: queue_log(mq),
                                cached_messages: pq.cached_msg_count,
                                last_consume_ms: pq.last_consume_timestamp.max(0) as u64,
                                last_pull_ms: pq.last_pull_timestamp.max(0) as u64,
                            })
                            .collect();
                        (queues, Some(own).filter(|o| !o.is_empty()), None)
                    }
                    Err(e) => (Vec::new(), None, Some(e.to_string())),
                };
                ClientStatus {
                    client_id: c.client_id.clone(),
                    addr: c.client_addr.clone(),
                    subscriptions: own.unwrap_or_else(|| subscriptions.clone()),
                    queues,
                    error,
                }
            })
            .collect::<Vec<_>>(),
        concurrency,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_is_what_online_consumers_registered_else_clustering() {
        assert_eq!(model(Some("BROADCASTING")), MessageModel::Broadcasting);
        assert_eq!(model(Some("CLUSTERING")), MessageModel::Clustering);
        assert_eq!(
            model(None),
            MessageModel::Clustering,
            "offline: not broadcast"
        );
    }
}
