//! The scripted broker's group answers: ListGroups (with group types from v5), DescribeGroups (classic members
//! with consumer-protocol blobs; KIP-848 groups refused as Kafka refuses them), ConsumerGroupDescribe and
//! OffsetFetch (one group per request before v8, batched after).

use super::{Script, s};
use bytes::{BufMut, BytesMut};
use kafka_protocol::messages::list_groups_response::ListedGroup;
use kafka_protocol::messages::offset_fetch_response::{
    OffsetFetchResponseGroup, OffsetFetchResponsePartition, OffsetFetchResponsePartitions,
    OffsetFetchResponseTopic, OffsetFetchResponseTopics,
};
use kafka_protocol::messages::*;
use kafka_protocol::protocol::Encodable;
use std::collections::BTreeMap;

pub(super) fn list_groups(script: &Script) -> ListGroupsResponse {
    ListGroupsResponse::default().with_groups(
        script
            .groups()
            .iter()
            .map(|g| {
                ListedGroup::default()
                    .with_group_id(GroupId(s(g)))
                    .with_protocol_type(s("consumer"))
                    .with_group_type(s(script.group_type(g)))
            })
            .collect(),
    )
}

/// Classic groups with their members (subscription and assignment blobs in consumer-protocol v1); KIP-848 groups
/// answered as Kafka answers them: GROUP_ID_NOT_FOUND, "not a classic group".
pub(super) fn describe_groups(
    script: &Script,
    r: &DescribeGroupsRequest,
) -> DescribeGroupsResponse {
    use kafka_protocol::messages::consumer_protocol_assignment::TopicPartition;
    use kafka_protocol::messages::describe_groups_response::{
        DescribedGroup, DescribedGroupMember,
    };
    let blob = |version: i16, m: &dyn Fn(&mut BytesMut)| {
        let mut b = BytesMut::new();
        b.put_i16(version);
        m(&mut b);
        b.freeze()
    };
    DescribeGroupsResponse::default().with_groups(
        r.groups
            .iter()
            .map(|g| {
                let name = g.0.as_str();
                let base = DescribedGroup::default().with_group_id(g.clone());
                if script.group_type(name) == "consumer" {
                    return base.with_error_code(69).with_error_message(Some(s(&format!(
                        "Group {name} is not a classic group."
                    ))));
                }
                let members = script.members.get(name).cloned().unwrap_or_default();
                base.with_group_state(s("Stable"))
                    .with_protocol_type(s("consumer"))
                    .with_protocol_data(s("range"))
                    .with_members(
                        members
                            .iter()
                            .enumerate()
                            .map(|(i, m)| {
                                let sub = ConsumerProtocolSubscription::default()
                                    .with_topics(m.subscribed.iter().map(|t| s(t)).collect());
                                let asg = ConsumerProtocolAssignment::default()
                                    .with_assigned_partitions(
                                        m.assigned
                                            .iter()
                                            .map(|(t, ps)| {
                                                TopicPartition::default()
                                                    .with_topic(TopicName(s(t)))
                                                    .with_partitions(ps.clone())
                                            })
                                            .collect(),
                                    );
                                DescribedGroupMember::default()
                                    .with_member_id(s(&format!("member-{i}")))
                                    .with_client_id(s(m.client_id))
                                    .with_client_host(s(m.host))
                                    .with_member_metadata(blob(1, &|b| sub.encode(b, 1).unwrap()))
                                    .with_member_assignment(blob(1, &|b| asg.encode(b, 1).unwrap()))
                            })
                            .collect(),
                    )
            })
            .collect(),
    )
}

/// KIP-848 groups with their members and current assignments; classic or unknown groups GROUP_ID_NOT_FOUND.
pub(super) fn consumer_group_describe(
    script: &Script,
    r: &ConsumerGroupDescribeRequest,
) -> ConsumerGroupDescribeResponse {
    use kafka_protocol::messages::consumer_group_describe_response::{
        Assignment, DescribedGroup, Member, TopicPartitions,
    };
    ConsumerGroupDescribeResponse::default().with_groups(
        r.group_ids
            .iter()
            .map(|g| {
                let name = g.0.as_str();
                let base = DescribedGroup::default().with_group_id(g.clone());
                if script.group_type(name) != "consumer" {
                    return base.with_error_code(69);
                }
                let members = script.members.get(name).cloned().unwrap_or_default();
                base.with_group_state(s("Stable"))
                    .with_group_epoch(3)
                    .with_assignment_epoch(3)
                    .with_assignor_name(s("uniform"))
                    .with_members(
                        members
                            .iter()
                            .enumerate()
                            .map(|(i, m)| {
                                let assignment = Assignment::default().with_topic_partitions(
                                    m.assigned
                                        .iter()
                                        .map(|(t, ps)| {
                                            TopicPartitions::default()
                                                .with_topic_name(TopicName(s(t)))
                                                .with_partitions(ps.clone())
                                        })
                                        .collect(),
                                );
                                Member::default()
                                    .with_member_id(s(&format!("member-{i}")))
                                    .with_member_epoch(3)
                                    .with_client_id(s(m.client_id))
                                    .with_client_host(s(m.host))
                                    .with_subscribed_topic_names(
                                        m.subscribed.iter().map(|t| TopicName(s(t))).collect(),
                                    )
                                    .with_assignment(assignment.clone())
                                    .with_target_assignment(assignment)
                            })
                            .collect(),
                    )
            })
            .collect(),
    )
}

pub(super) fn offset_fetch(
    script: &Script,
    r: &OffsetFetchRequest,
    version: i16,
) -> OffsetFetchResponse {
    let by_topic = |group: &str| {
        let mut topics: BTreeMap<&str, Vec<(i32, i64)>> = BTreeMap::new();
        for (t, p, o) in script.commits.get(group).into_iter().flatten() {
            topics.entry(t).or_default().push((*p, *o));
        }
        topics
    };
    if version >= 8 {
        return OffsetFetchResponse::default().with_groups(
            r.groups
                .iter()
                .map(|g| {
                    OffsetFetchResponseGroup::default()
                        .with_group_id(g.group_id.clone())
                        .with_topics(
                            by_topic(g.group_id.0.as_str())
                                .into_iter()
                                .map(|(t, ps)| {
                                    OffsetFetchResponseTopics::default()
                                        .with_name(TopicName(s(t)))
                                        .with_partitions(
                                            ps.into_iter()
                                                .map(|(p, o)| {
                                                    OffsetFetchResponsePartitions::default()
                                                        .with_partition_index(p)
                                                        .with_committed_offset(o)
                                                })
                                                .collect(),
                                        )
                                })
                                .collect(),
                        )
                })
                .collect(),
        );
    }
    OffsetFetchResponse::default().with_topics(
        by_topic(r.group_id.0.as_str())
            .into_iter()
            .map(|(t, ps)| {
                OffsetFetchResponseTopic::default()
                    .with_name(TopicName(s(t)))
                    .with_partitions(
                        ps.into_iter()
                            .map(|(p, o)| {
                                OffsetFetchResponsePartition::default()
                                    .with_partition_index(p)
                                    .with_committed_offset(o)
                            })
                            .collect(),
                    )
            })
            .collect(),
    )
}
