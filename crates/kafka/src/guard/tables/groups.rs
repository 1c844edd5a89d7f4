//! Group responses: FindCoordinator, ListGroups, OffsetFetch, OffsetCommit, DescribeGroups, ConsumerGroupDescribe (KIP-848), and the classic consumer protocol's member metadata and assignment blobs.
//! Tables only (see [`super`] for what they are and where they come from).

use super::{Field, Kind, Schema};

/// FindCoordinatorResponse.
pub(crate) static FIND_COORDINATOR: Schema = Schema {
    name: "FindCoordinatorResponse",
    fields: &[
        Field::new("throttle_time_ms", 1, 6, Kind::I32),
        Field::new(
            "coordinators",
            4,
            6,
            Kind::Array(&Kind::Struct(&FIND_COORDINATOR_COORDINATOR)),
        ),
        Field::new("error_code", 0, 3, Kind::I16),
        Field::new("error_message", 1, 3, Kind::Str),
        Field::new("node_id", 0, 3, Kind::I32),
        Field::new("host", 0, 3, Kind::Str),
        Field::new("port", 0, 3, Kind::I32),
    ],
    tagged: &[],
};

/// Coordinator.
pub(crate) static FIND_COORDINATOR_COORDINATOR: Schema = Schema {
    name: "Coordinator",
    fields: &[
        Field::new("key", 4, 6, Kind::Str),
        Field::new("node_id", 4, 6, Kind::I32),
        Field::new("host", 4, 6, Kind::Str),
        Field::new("port", 4, 6, Kind::I32),
        Field::new("error_code", 4, 6, Kind::I16),
        Field::new("error_message", 4, 6, Kind::Str),
    ],
    tagged: &[],
};

/// ListGroupsResponse.
pub(crate) static LIST_GROUPS: Schema = Schema {
    name: "ListGroupsResponse",
    fields: &[
        Field::new("throttle_time_ms", 1, 5, Kind::I32),
        Field::new("error_code", 0, 5, Kind::I16),
        Field::new(
            "groups",
            0,
            5,
            Kind::Array(&Kind::Struct(&LIST_GROUPS_LISTED_GROUP)),
        ),
    ],
    tagged: &[],
};

/// ListedGroup.
pub(crate) static LIST_GROUPS_LISTED_GROUP: Schema = Schema {
    name: "ListedGroup",
    fields: &[
        Field::new("group_id", 0, 5, Kind::Str),
        Field::new("protocol_type", 0, 5, Kind::Str),
        Field::new("group_state", 4, 5, Kind::Str),
        Field::new("group_type", 5, 5, Kind::Str),
    ],
    tagged: &[],
};

/// OffsetFetchResponse.
pub(crate) static OFFSET_FETCH: Schema = Schema {
    name: "OffsetFetchResponse",
    fields: &[
        Field::new("throttle_time_ms", 3, 10, Kind::I32),
        Field::new(
            "groups",
            8,
            10,
            Kind::Array(&Kind::Struct(&OFFSET_FETCH_OFFSET_FETCH_RESPONSE_GROUP)),
        ),
        Field::new(
            "topics",
            1,
            7,
            Kind::Array(&Kind::Struct(&OFFSET_FETCH_OFFSET_FETCH_RESPONSE_TOPIC)),
        ),
        Field::new("error_code", 2, 7, Kind::I16),
    ],
    tagged: &[],
};

/// OffsetFetchResponseTopic.
pub(crate) static OFFSET_FETCH_OFFSET_FETCH_RESPONSE_TOPIC: Schema = Schema {
    name: "OffsetFetchResponseTopic",
    fields: &[
        Field::new("name", 1, 7, Kind::Str),
        Field::new(
            "partitions",
            1,
            7,
            Kind::Array(&Kind::Struct(&OFFSET_FETCH_OFFSET_FETCH_RESPONSE_PARTITION)),
        ),
    ],
    tagged: &[],
};

/// OffsetFetchResponseGroup.
pub(crate) static OFFSET_FETCH_OFFSET_FETCH_RESPONSE_GROUP: Schema = Schema {
    name: "OffsetFetchResponseGroup",
    fields: &[
        Field::new("group_id", 8, 10, Kind::Str),
        Field::new(
            "topics",
            8,
            10,
            Kind::Array(&Kind::Struct(&OFFSET_FETCH_OFFSET_FETCH_RESPONSE_TOPICS)),
        ),
        Field::new("error_code", 8, 10, Kind::I16),
    ],
    tagged: &[],
};

/// OffsetFetchResponsePartition.
pub(crate) static OFFSET_FETCH_OFFSET_FETCH_RESPONSE_PARTITION: Schema = Schema {
    name: "OffsetFetchResponsePartition",
    fields: &[
        Field::new("partition_index", 1, 7, Kind::I32),
        Field::new("committed_offset", 1, 7, Kind::I64),
        Field::new("committed_leader_epoch", 5, 7, Kind::I32),
        Field::new("metadata", 1, 7, Kind::Str),
        Field::new("error_code", 1, 7, Kind::I16),
    ],
    tagged: &[],
};

/// OffsetFetchResponseTopics.
pub(crate) static OFFSET_FETCH_OFFSET_FETCH_RESPONSE_TOPICS: Schema = Schema {
    name: "OffsetFetchResponseTopics",
    fields: &[
        Field::new("topic_id", 10, 10, Kind::Uuid),
        Field::new("name", 8, 9, Kind::Str),
        Field::new(
            "partitions",
            8,
            10,
            Kind::Array(&Kind::Struct(
                &OFFSET_FETCH_OFFSET_FETCH_RESPONSE_PARTITIONS,
            )),
        ),
    ],
    tagged: &[],
};

/// OffsetFetchResponsePartitions.
pub(crate) static OFFSET_FETCH_OFFSET_FETCH_RESPONSE_PARTITIONS: Schema = Schema {
    name: "OffsetFetchResponsePartitions",
    fields: &[
        Field::new("partition_index", 8, 10, Kind::I32),
        Field::new("committed_offset", 8, 10, Kind::I64),
        Field::new("committed_leader_epoch", 8, 10, Kind::I32),
        Field::new("metadata", 8, 10, Kind::Str),
        Field::new("error_code", 8, 10, Kind::I16),
    ],
    tagged: &[],
};

/// OffsetCommitResponse.
pub(crate) static OFFSET_COMMIT: Schema = Schema {
    name: "OffsetCommitResponse",
    fields: &[
        Field::new("throttle_time_ms", 3, 10, Kind::I32),
        Field::new(
            "topics",
            2,
            10,
            Kind::Array(&Kind::Struct(&OFFSET_COMMIT_OFFSET_COMMIT_RESPONSE_TOPIC)),
        ),
    ],
    tagged: &[],
};

/// OffsetCommitResponseTopic.
pub(crate) static OFFSET_COMMIT_OFFSET_COMMIT_RESPONSE_TOPIC: Schema = Schema {
    name: "OffsetCommitResponseTopic",
    fields: &[
        Field::new("topic_id", 10, 10, Kind::Uuid),
        Field::new("name", 2, 9, Kind::Str),
        Field::new(
            "partitions",
            2,
            10,
            Kind::Array(&Kind::Struct(
                &OFFSET_COMMIT_OFFSET_COMMIT_RESPONSE_PARTITION,
            )),
        ),
    ],
    tagged: &[],
};

/// OffsetCommitResponsePartition.
pub(crate) static OFFSET_COMMIT_OFFSET_COMMIT_RESPONSE_PARTITION: Schema = Schema {
    name: "OffsetCommitResponsePartition",
    fields: &[
        Field::new("partition_index", 2, 10, Kind::I32),
        Field::new("error_code", 2, 10, Kind::I16),
    ],
    tagged: &[],
};

/// DescribeGroupsResponse.
pub(crate) static DESCRIBE_GROUPS: Schema = Schema {
    name: "DescribeGroupsResponse",
    fields: &[
        Field::new("throttle_time_ms", 1, 6, Kind::I32),
        Field::new(
            "groups",
            0,
            6,
            Kind::Array(&Kind::Struct(&DESCRIBE_GROUPS_DESCRIBED_GROUP)),
        ),
    ],
    tagged: &[],
};

/// DescribedGroup.
pub(crate) static DESCRIBE_GROUPS_DESCRIBED_GROUP: Schema = Schema {
    name: "DescribedGroup",
    fields: &[
        Field::new("error_code", 0, 6, Kind::I16),
        Field::new("error_message", 6, 6, Kind::Str),
        Field::new("group_id", 0, 6, Kind::Str),
        Field::new("group_state", 0, 6, Kind::Str),
        Field::new("protocol_type", 0, 6, Kind::Str),
        Field::new("protocol_data", 0, 6, Kind::Str),
        Field::new(
            "members",
            0,
            6,
            Kind::Array(&Kind::Struct(&DESCRIBE_GROUPS_DESCRIBED_GROUP_MEMBER)),
        ),
        Field::new("authorized_operations", 3, 6, Kind::I32),
    ],
    tagged: &[],
};

/// DescribedGroupMember.
pub(crate) static DESCRIBE_GROUPS_DESCRIBED_GROUP_MEMBER: Schema = Schema {
    name: "DescribedGroupMember",
    fields: &[
        Field::new("member_id", 0, 6, Kind::Str),
        Field::new("group_instance_id", 4, 6, Kind::Str),
        Field::new("client_id", 0, 6, Kind::Str),
        Field::new("client_host", 0, 6, Kind::Str),
        Field::new("member_metadata", 0, 6, Kind::Bytes),
        Field::new("member_assignment", 0, 6, Kind::Bytes),
    ],
    tagged: &[],
};

/// ConsumerGroupDescribeResponse.
pub(crate) static CONSUMER_GROUP_DESCRIBE: Schema = Schema {
    name: "ConsumerGroupDescribeResponse",
    fields: &[
        Field::new("throttle_time_ms", 0, 1, Kind::I32),
        Field::new(
            "groups",
            0,
            1,
            Kind::Array(&Kind::Struct(&CONSUMER_GROUP_DESCRIBE_DESCRIBED_GROUP)),
        ),
    ],
    tagged: &[],
};

/// DescribedGroup.
pub(crate) static CONSUMER_GROUP_DESCRIBE_DESCRIBED_GROUP: Schema = Schema {
    name: "DescribedGroup",
    fields: &[
        Field::new("error_code", 0, 1, Kind::I16),
        Field::new("error_message", 0, 1, Kind::Str),
        Field::new("group_id", 0, 1, Kind::Str),
        Field::new("group_state", 0, 1, Kind::Str),
        Field::new("group_epoch", 0, 1, Kind::I32),
        Field::new("assignment_epoch", 0, 1, Kind::I32),
        Field::new("assignor_name", 0, 1, Kind::Str),
        Field::new(
            "members",
            0,
            1,
            Kind::Array(&Kind::Struct(&CONSUMER_GROUP_DESCRIBE_MEMBER)),
        ),
        Field::new("authorized_operations", 0, 1, Kind::I32),
    ],
    tagged: &[],
};

/// Member.
pub(crate) static CONSUMER_GROUP_DESCRIBE_MEMBER: Schema = Schema {
    name: "Member",
    fields: &[
        Field::new("member_id", 0, 1, Kind::Str),
        Field::new("instance_id", 0, 1, Kind::Str),
        Field::new("rack_id", 0, 1, Kind::Str),
        Field::new("member_epoch", 0, 1, Kind::I32),
        Field::new("client_id", 0, 1, Kind::Str),
        Field::new("client_host", 0, 1, Kind::Str),
        Field::new("subscribed_topic_names", 0, 1, Kind::Array(&Kind::Str)),
        Field::new("subscribed_topic_regex", 0, 1, Kind::Str),
        Field::new(
            "assignment",
            0,
            1,
            Kind::Struct(&CONSUMER_GROUP_DESCRIBE_ASSIGNMENT),
        ),
        Field::new(
            "target_assignment",
            0,
            1,
            Kind::Struct(&CONSUMER_GROUP_DESCRIBE_ASSIGNMENT),
        ),
        Field::new("member_type", 1, 1, Kind::I8),
    ],
    tagged: &[],
};

/// Assignment.
pub(crate) static CONSUMER_GROUP_DESCRIBE_ASSIGNMENT: Schema = Schema {
    name: "Assignment",
    fields: &[Field::new(
        "topic_partitions",
        0,
        1,
        Kind::Array(&Kind::Struct(&CONSUMER_GROUP_DESCRIBE_TOPIC_PARTITIONS)),
    )],
    tagged: &[],
};

/// TopicPartitions.
pub(crate) static CONSUMER_GROUP_DESCRIBE_TOPIC_PARTITIONS: Schema = Schema {
    name: "TopicPartitions",
    fields: &[
        Field::new("topic_id", 0, 1, Kind::Uuid),
        Field::new("topic_name", 0, 1, Kind::Str),
        Field::new("partitions", 0, 1, Kind::Array(&Kind::I32)),
    ],
    tagged: &[],
};

/// ConsumerProtocolSubscription.
pub(crate) static SUBSCRIPTION: Schema = Schema {
    name: "ConsumerProtocolSubscription",
    fields: &[
        Field::new("topics", 0, 3, Kind::Array(&Kind::Str)),
        Field::new("user_data", 0, 3, Kind::Bytes),
        Field::new(
            "owned_partitions",
            1,
            3,
            Kind::Array(&Kind::Struct(&SUBSCRIPTION_TOPIC_PARTITION)),
        ),
        Field::new("generation_id", 2, 3, Kind::I32),
        Field::new("rack_id", 3, 3, Kind::Str),
    ],
    tagged: &[],
};

/// TopicPartition.
pub(crate) static SUBSCRIPTION_TOPIC_PARTITION: Schema = Schema {
    name: "TopicPartition",
    fields: &[
        Field::new("topic", 1, 3, Kind::Str),
        Field::new("partitions", 1, 3, Kind::Array(&Kind::I32)),
    ],
    tagged: &[],
};

/// ConsumerProtocolAssignment.
pub(crate) static ASSIGNMENT: Schema = Schema {
    name: "ConsumerProtocolAssignment",
    fields: &[
        Field::new(
            "assigned_partitions",
            0,
            3,
            Kind::Array(&Kind::Struct(&ASSIGNMENT_TOPIC_PARTITION)),
        ),
        Field::new("user_data", 0, 3, Kind::Bytes),
    ],
    tagged: &[],
};

/// TopicPartition.
pub(crate) static ASSIGNMENT_TOPIC_PARTITION: Schema = Schema {
    name: "TopicPartition",
    fields: &[
        Field::new("topic", 0, 3, Kind::Str),
        Field::new("partitions", 0, 3, Kind::Array(&Kind::I32)),
    ],
    tagged: &[],
};
