//! Consumer groups: ListGroups asked of every broker (a broker lists the groups it coordinates, so the broker
//! that listed a group is the one to ask about it), committed offsets by OffsetFetch batched per coordinator, and
//! members batched per coordinator, asked once offsets are read: DescribeGroups for classic groups,
//! ConsumerGroupDescribe for KIP-848 ones ([`super::kip848`]). Some servers fail DescribeGroups (tansu 0.6 on
//! sqlite drops the connection), which becomes a `collector_error` while the offsets already read stay.
//!
//! A group's positions cover every partition of every topic it committed on or is assigned, with `committed`
//! `None` on partitions without a commit ("unknown" lag, never 0 or -1).

use super::cycle::{Cycle, bounded};
use super::kip848::{self, Described};
use super::metadata::Metadata;
use super::offsets::Ranges;
use crate::client::{KafkaClient, check_code};
use kafka_protocol::messages::{DescribeGroupsRequest, GroupId, ListGroupsRequest};
use kafka_protocol::protocol::StrBytes;
use mqwatch_model::{ClientStatus, GroupPosition, GroupRef, GroupStatus, LogRef, MessageModel};
use std::collections::{BTreeMap, BTreeSet};

/// Groups per OffsetFetch / DescribeGroups request.
pub(crate) const BATCH: usize = 100;

/// What one cycle learned of one group.
#[derive(Debug, Default)]
pub(crate) struct Seen {
    /// `(topic, partition)` → committed offset (`None`: no commit).
    commits: BTreeMap<(String, i32), Option<i64>>,
    /// Members, when DescribeGroups answered.
    members: Vec<ClientStatus>,
    /// Topics members are assigned or subscribe to.
    member_topics: BTreeSet<String>,
}

/// The groups one cycle found: by coordinator, and what was learned of each.
#[derive(Debug, Default)]
pub(crate) struct Groups {
    /// Coordinator address → the groups it listed.
    listed: Vec<(String, Vec<String>)>,
    /// Group → its type as ListGroups v5+ gives it (`classic`, `consumer`, …).
    types: BTreeMap<String, String>,
    /// Group → what was learned.
    seen: BTreeMap<String, Seen>,
}

/// Lists every group coordinated by the answering brokers and reads their committed offsets (needs no offsets:
/// runs alongside ListOffsets).
pub(crate) async fn read(
    client: &KafkaClient,
    cycle: &Cycle,
    coordinators: &[String],
    concurrency: usize,
) -> Groups {
    let listed = bounded(
        coordinators
            .iter()
            .map(|addr| async move {
                let answer = cycle
                    .ask(
                        addr,
                        client.send::<ListGroupsRequest>(addr, None, |_| {
                            ListGroupsRequest::default()
                        }),
                    )
                    .await;
                let groups = answer.and_then(|(version, r)| {
                    match check_code::<ListGroupsRequest>(addr, version, r.error_code, None) {
                        Ok(()) => Some(
                            r.groups
                                .into_iter()
                                .map(|g| (g.group_id.0.to_string(), g.group_type.to_string()))
                                .collect::<Vec<_>>(),
                        ),
                        Err(e) => {
                            cycle.bad_answer(e);
                            None
                        }
                    }
                });
                (addr.clone(), groups.unwrap_or_default())
            })
            .collect::<Vec<_>>(),
        concurrency,
    )
    .await;

    let mut types = BTreeMap::new();
    let listed: Vec<(String, Vec<String>)> = listed
        .into_iter()
        .map(|(addr, groups)| {
            let names = groups
                .into_iter()
                .map(|(name, kind)| {
                    if !kind.is_empty() {
                        types.insert(name.clone(), kind);
                    }
                    name
                })
                .collect();
            (addr, names)
        })
        .collect();
    let mut seen: BTreeMap<String, Seen> = BTreeMap::new();
    let mut jobs = Vec::new();
    for (addr, groups) in &listed {
        for g in groups {
            seen.entry(g.clone()).or_default();
        }
        for chunk in groups.chunks(BATCH) {
            jobs.push(async move {
                (
                    addr.as_str(),
                    cycle.ask(addr, client.offset_fetch(addr, chunk)).await,
                )
            });
        }
    }
    for (_, answer) in bounded(jobs, concurrency).await {
        for (group, result) in answer.into_iter().flatten() {
            match result {
                Ok(offsets) => {
                    let s = seen.entry(group).or_default();
                    for o in offsets {
                        if let Some(e) = o.error {
                            cycle.bad_answer(e);
                            continue;
                        }
                        s.commits.insert((o.topic, o.partition), o.offset);
                    }
                }
                Err(e) => cycle.bad_answer(e),
            }
        }
    }

    Groups {
        listed,
        types,
        seen,
    }
}

/// Members of every listed group, batched per coordinator: DescribeGroups for classic groups,
/// ConsumerGroupDescribe for KIP-848 ones (see [`kip848`]). Asked after every other request of the cycle
/// to the same brokers is answered: a server that drops the connection on it (tansu) must not take other
/// requests in flight on that connection down with it.
pub(crate) async fn describe_all(
    client: &KafkaClient,
    cycle: &Cycle,
    groups: &mut Groups,
    concurrency: usize,
) {
    // Per coordinator: whether it offers ConsumerGroupDescribe, and its groups split by how to describe them.
    // A coordinator that failed this cycle is not asked again (its API versions are only read when reachable).
    let offered = futures::future::join_all(groups.listed.iter().map(|(addr, _)| async move {
        cycle.failure(addr).is_none() && kip848::offered(client, addr).await
    }))
    .await;
    let mut plan = Vec::new();
    for ((addr, names), modern_api) in groups.listed.iter().zip(offered) {
        let (modern, classic): (Vec<String>, Vec<String>) = names.iter().cloned().partition(|n| {
            modern_api && groups.types.get(n).map(String::as_str) == Some(kip848::CONSUMER_TYPE)
        });
        plan.push((addr.as_str(), modern_api, modern, classic));
    }
    let mut jobs = Vec::new();
    for (addr, modern_api, _, classic) in &plan {
        for chunk in classic.chunks(BATCH) {
            jobs.push(async move {
                let (described, not_classic) =
                    describe(client, cycle, addr, chunk, *modern_api).await;
                // A group DescribeGroups says is not there but ListGroups listed: a KIP-848 group.
                let mut described = described;
                for chunk in not_classic.chunks(BATCH) {
                    described.extend(kip848::describe(client, cycle, addr, chunk).await);
                }
                described
            });
        }
    }
    let mut modern_jobs = Vec::new();
    for (addr, _, modern, _) in &plan {
        for chunk in modern.chunks(BATCH) {
            modern_jobs.push(kip848::describe(client, cycle, addr, chunk));
        }
    }
    let (classic, modern) = tokio::join!(
        bounded(jobs, concurrency),
        bounded(modern_jobs, concurrency)
    );
    for described in classic.into_iter().chain(modern) {
        for (group, members, topics) in described {
            let s = groups.seen.entry(group).or_default();
            s.members = members;
            s.member_topics = topics;
        }
    }
}

/// Every group's status: its positions on the partitions of the topics it consumes, judged by `ranges`.
pub(crate) fn statuses(groups: Groups, meta: &Metadata, ranges: &Ranges) -> Vec<GroupStatus> {
    groups
        .seen
        .into_iter()
        .map(|(name, s)| status(name, s, meta, ranges))
        .collect()
}

/// DescribeGroups for `groups` on their coordinator: per group, its members and the topics they hold; and the
/// groups it answered GROUP_ID_NOT_FOUND for when `modern_api` (the coordinator offers ConsumerGroupDescribe:
/// they are KIP-848 groups, asked again there, not errors).
async fn describe(
    client: &KafkaClient,
    cycle: &Cycle,
    addr: &str,
    groups: &[String],
    modern_api: bool,
) -> (Vec<Described>, Vec<String>) {
    let ids: Vec<GroupId> = groups
        .iter()
        .map(|g| GroupId(StrBytes::from_string(g.clone())))
        .collect();
    // Asked even of a broker that failed a request before: a broker that drops DescribeGroups only is still up.
    let answer = client
        .send::<DescribeGroupsRequest>(addr, None, |_| {
            DescribeGroupsRequest::default().with_groups(ids)
        })
        .await;
    let (version, r) = match answer {
        Ok(a) => a,
        Err(e) => {
            // A broker that answered OffsetFetch a moment ago is up: whatever DescribeGroups did is a bad answer
            // of that API. A hung request would hold up the ones behind it on the connection: drop it.
            if e.is_unreachable() {
                client.forget(addr);
            }
            cycle.bad_answer(e);
            return (Vec::new(), Vec::new());
        }
    };
    let mut out = Vec::new();
    let mut not_classic = Vec::new();
    for g in r.groups {
        let name = g.group_id.0.to_string();
        if modern_api && g.error_code == kip848::GROUP_ID_NOT_FOUND {
            not_classic.push(name);
            continue;
        }
        if let Err(e) = check_code::<DescribeGroupsRequest>(
            addr,
            version,
            g.error_code,
            Some(format!("group {name}")),
        ) {
            cycle.bad_answer(e);
            continue;
        }
        let mut topics = BTreeSet::new();
        let members = g
            .members
            .into_iter()
            .map(|m| {
                let mut subscriptions = BTreeMap::new();
                if let Some(sub) = crate::guard::subscription(&m.member_metadata) {
                    for t in sub.topics {
                        topics.insert(t.to_string());
                        subscriptions.insert(t.to_string(), String::new());
                    }
                }
                if let Some(a) = crate::guard::assignment(&m.member_assignment) {
                    for tp in a.assigned_partitions {
                        topics.insert(tp.topic.0.to_string());
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
    (out, not_classic)
}

fn status(name: String, s: Seen, meta: &Metadata, ranges: &Ranges) -> GroupStatus {
    let mut topics: BTreeSet<String> = s.commits.keys().map(|(t, _)| t.clone()).collect();
    topics.extend(s.member_topics);
    // Sized up front: hundreds of groups × their partitions are most of a cycle's memory.
    let mut positions =
        Vec::with_capacity(topics.iter().map(|t| meta.partitions_of(t).count()).sum());
    for topic in &topics {
        for p in meta.partitions_of(topic) {
            let key = (p.topic.clone(), p.index);
            let Some(&(earliest, latest)) = ranges.get(&key) else {
                continue; // its leader did not answer: no range to judge a position by
            };
            positions.push(GroupPosition {
                log: LogRef::Partition {
                    topic: p.topic.clone(),
                    partition: p.index,
                },
                earliest,
                latest,
                committed: s.commits.get(&key).copied().flatten(),
                oldest_unconsumed_age_ms: None,
                age_source: None,
            });
        }
    }
    GroupStatus {
        group: GroupRef::new(name),
        model: MessageModel::Clustering,
        clients: s.members,
        positions,
        ..Default::default()
    }
}
