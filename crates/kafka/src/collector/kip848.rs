//! KIP-848 consumer groups (the "consumer" group type, Kafka 4.0): members and their assignments by
//! ConsumerGroupDescribe (API 69), asked of the group's coordinator when it offers the API, for the groups
//! ListGroups lists with type `consumer` and for those DescribeGroups answers GROUP_ID_NOT_FOUND (a group that
//! exists but is not classic: DescribeGroups cannot describe it). Members land in the same model the classic
//! path fills: client id, host, subscribed topics, and the topics of their current assignment.

use super::cycle::Cycle;
use crate::client::{KafkaClient, check_code};
use kafka_protocol::messages::{ConsumerGroupDescribeRequest, GroupId};
use kafka_protocol::protocol::StrBytes;
use mqwatch_model::ClientStatus;
use std::collections::{BTreeMap, BTreeSet};

/// The group type ListGroups (v5+) gives a KIP-848 consumer group.
pub(crate) const CONSUMER_TYPE: &str = "consumer";

/// Kafka's GROUP_ID_NOT_FOUND: DescribeGroups' answer for a group that is not classic.
pub(crate) const GROUP_ID_NOT_FOUND: i16 = 69;

/// One described group: name, members, the topics they subscribe to or hold.
pub(crate) type Described = (String, Vec<ClientStatus>, BTreeSet<String>);

/// Whether `addr` offers ConsumerGroupDescribe (its connection's API versions say so).
pub(crate) async fn offered(client: &KafkaClient, addr: &str) -> bool {
    client
        .version_for::<ConsumerGroupDescribeRequest>(addr, None)
        .await
        .is_ok()
}

/// ConsumerGroupDescribe for `groups` on their coordinator `addr`.
pub(crate) async fn describe(
    client: &KafkaClient,
    cycle: &Cycle,
    addr: &str,
    groups: &[String],
) -> Vec<Described> {
    let ids: Vec<GroupId> = groups
        .iter()
        .map(|g| GroupId(StrBytes::from_string(g.clone())))
        .collect();
    let answer = client
        .send::<ConsumerGroupDescribeRequest>(addr, None, |_| {
            ConsumerGroupDescribeRequest::default().with_group_ids(ids)
        })
        .await;
    let (version, r) = match answer {
        Ok(a) => a,
        Err(e) => {
            if e.is_unreachable() {
                client.forget(addr);
            }
            cycle.bad_answer(e);
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for g in r.groups {
        let name = g.group_id.0.to_string();
        let about = match &g.error_message {
            Some(m) if !m.is_empty() => format!("group {name}: {m}"),
            _ => format!("group {name}"),
        };
        if let Err(e) =
            check_code::<ConsumerGroupDescribeRequest>(addr, version, g.error_code, Some(about))
        {
            cycle.bad_answer(e);
            continue;
        }
        let mut topics = BTreeSet::new();
        let members = g
            .members
            .into_iter()
            .map(|m| {
                let mut subscriptions = BTreeMap::new();
                for t in &m.subscribed_topic_names {
                    topics.insert(t.0.to_string());
                    subscriptions.insert(t.0.to_string(), String::new());
                }
                for tp in &m.assignment.topic_partitions {
                    if !tp.topic_name.0.is_empty() {
                        topics.insert(tp.topic_name.0.to_string());
                    }
                }
                ClientStatus {
                    client_id: m.client_id.to_string(),
                    addr: m.client_host.to_string(),
                    subscriptions,
                    queues: Vec::new(),
                    error: None,
                }
            })
            .collect();
        out.push((name, members, topics));
    }
    out
}
