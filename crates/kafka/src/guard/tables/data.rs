//! Data-path responses: ListOffsets, Fetch (records as opaque bytes, read by `guard::records`), and the Produce and CreateTopics answers tests rely on.
//! Tables only (see [`super`] for what they are and where they come from).

use super::{Field, Kind, Schema, Tagged};

/// ListOffsetsResponse.
pub(crate) static LIST_OFFSETS: Schema = Schema {
    name: "ListOffsetsResponse",
    fields: &[
        Field::new("throttle_time_ms", 2, 10, Kind::I32),
        Field::new(
            "topics",
            1,
            10,
            Kind::Array(&Kind::Struct(&LIST_OFFSETS_LIST_OFFSETS_TOPIC_RESPONSE)),
        ),
    ],
    tagged: &[],
};

/// ListOffsetsTopicResponse.
pub(crate) static LIST_OFFSETS_LIST_OFFSETS_TOPIC_RESPONSE: Schema = Schema {
    name: "ListOffsetsTopicResponse",
    fields: &[
        Field::new("name", 1, 10, Kind::Str),
        Field::new(
            "partitions",
            1,
            10,
            Kind::Array(&Kind::Struct(&LIST_OFFSETS_LIST_OFFSETS_PARTITION_RESPONSE)),
        ),
    ],
    tagged: &[],
};

/// ListOffsetsPartitionResponse.
pub(crate) static LIST_OFFSETS_LIST_OFFSETS_PARTITION_RESPONSE: Schema = Schema {
    name: "ListOffsetsPartitionResponse",
    fields: &[
        Field::new("partition_index", 1, 10, Kind::I32),
        Field::new("error_code", 1, 10, Kind::I16),
        Field::new("timestamp", 1, 10, Kind::I64),
        Field::new("offset", 1, 10, Kind::I64),
        Field::new("leader_epoch", 4, 10, Kind::I32),
    ],
    tagged: &[],
};

/// FetchResponse.
pub(crate) static FETCH: Schema = Schema {
    name: "FetchResponse",
    fields: &[
        Field::new("throttle_time_ms", 4, 18, Kind::I32),
        Field::new("error_code", 7, 18, Kind::I16),
        Field::new("session_id", 7, 18, Kind::I32),
        Field::new(
            "responses",
            4,
            18,
            Kind::Array(&Kind::Struct(&FETCH_FETCHABLE_TOPIC_RESPONSE)),
        ),
    ],
    tagged: &[Tagged::new(
        0,
        "node_endpoints",
        16,
        18,
        Kind::Array(&Kind::Struct(&FETCH_NODE_ENDPOINT)),
    )],
};

/// FetchableTopicResponse.
pub(crate) static FETCH_FETCHABLE_TOPIC_RESPONSE: Schema = Schema {
    name: "FetchableTopicResponse",
    fields: &[
        Field::new("topic_id", 13, 18, Kind::Uuid),
        Field::new("topic", 4, 12, Kind::Str),
        Field::new(
            "partitions",
            4,
            18,
            Kind::Array(&Kind::Struct(&FETCH_PARTITION_DATA)),
        ),
    ],
    tagged: &[],
};

/// NodeEndpoint.
pub(crate) static FETCH_NODE_ENDPOINT: Schema = Schema {
    name: "NodeEndpoint",
    fields: &[
        Field::new("node_id", 16, 18, Kind::I32),
        Field::new("host", 16, 18, Kind::Str),
        Field::new("port", 16, 18, Kind::I32),
        Field::new("rack", 16, 18, Kind::Str),
    ],
    tagged: &[],
};

/// PartitionData.
pub(crate) static FETCH_PARTITION_DATA: Schema = Schema {
    name: "PartitionData",
    fields: &[
        Field::new("partition_index", 4, 18, Kind::I32),
        Field::new("error_code", 4, 18, Kind::I16),
        Field::new("high_watermark", 4, 18, Kind::I64),
        Field::new("last_stable_offset", 4, 18, Kind::I64),
        Field::new("log_start_offset", 5, 18, Kind::I64),
        Field::new(
            "aborted_transactions",
            4,
            18,
            Kind::Array(&Kind::Struct(&FETCH_ABORTED_TRANSACTION)),
        ),
        Field::new("preferred_read_replica", 11, 18, Kind::I32),
        Field::new("records", 4, 18, Kind::Bytes),
    ],
    tagged: &[
        Tagged::new(
            0,
            "diverging_epoch",
            12,
            18,
            Kind::Struct(&FETCH_EPOCH_END_OFFSET),
        ),
        Tagged::new(
            1,
            "current_leader",
            12,
            18,
            Kind::Struct(&FETCH_LEADER_ID_AND_EPOCH),
        ),
        Tagged::new(2, "snapshot_id", 12, 18, Kind::Struct(&FETCH_SNAPSHOT_ID)),
    ],
};

/// AbortedTransaction.
pub(crate) static FETCH_ABORTED_TRANSACTION: Schema = Schema {
    name: "AbortedTransaction",
    fields: &[
        Field::new("producer_id", 4, 18, Kind::I64),
        Field::new("first_offset", 4, 18, Kind::I64),
    ],
    tagged: &[],
};

/// EpochEndOffset.
pub(crate) static FETCH_EPOCH_END_OFFSET: Schema = Schema {
    name: "EpochEndOffset",
    fields: &[
        Field::new("epoch", 12, 18, Kind::I32),
        Field::new("end_offset", 12, 18, Kind::I64),
    ],
    tagged: &[],
};

/// LeaderIdAndEpoch.
pub(crate) static FETCH_LEADER_ID_AND_EPOCH: Schema = Schema {
    name: "LeaderIdAndEpoch",
    fields: &[
        Field::new("leader_id", 12, 18, Kind::I32),
        Field::new("leader_epoch", 12, 18, Kind::I32),
    ],
    tagged: &[],
};

/// SnapshotId.
pub(crate) static FETCH_SNAPSHOT_ID: Schema = Schema {
    name: "SnapshotId",
    fields: &[
        Field::new("end_offset", 4, 18, Kind::I64),
        Field::new("epoch", 4, 18, Kind::I32),
    ],
    tagged: &[],
};

/// ProduceResponse.
pub(crate) static PRODUCE: Schema = Schema {
    name: "ProduceResponse",
    fields: &[
        Field::new(
            "responses",
            3,
            13,
            Kind::Array(&Kind::Struct(&PRODUCE_TOPIC_PRODUCE_RESPONSE)),
        ),
        Field::new("throttle_time_ms", 3, 13, Kind::I32),
    ],
    tagged: &[Tagged::new(
        0,
        "node_endpoints",
        10,
        13,
        Kind::Array(&Kind::Struct(&PRODUCE_NODE_ENDPOINT)),
    )],
};

/// TopicProduceResponse.
pub(crate) static PRODUCE_TOPIC_PRODUCE_RESPONSE: Schema = Schema {
    name: "TopicProduceResponse",
    fields: &[
        Field::new("topic_id", 13, 13, Kind::Uuid),
        Field::new("name", 3, 12, Kind::Str),
        Field::new(
            "partition_responses",
            3,
            13,
            Kind::Array(&Kind::Struct(&PRODUCE_PARTITION_PRODUCE_RESPONSE)),
        ),
    ],
    tagged: &[],
};

/// NodeEndpoint.
pub(crate) static PRODUCE_NODE_ENDPOINT: Schema = Schema {
    name: "NodeEndpoint",
    fields: &[
        Field::new("node_id", 10, 13, Kind::I32),
        Field::new("host", 10, 13, Kind::Str),
        Field::new("port", 10, 13, Kind::I32),
        Field::new("rack", 10, 13, Kind::Str),
    ],
    tagged: &[],
};

/// PartitionProduceResponse.
pub(crate) static PRODUCE_PARTITION_PRODUCE_RESPONSE: Schema = Schema {
    name: "PartitionProduceResponse",
    fields: &[
        Field::new("index", 3, 13, Kind::I32),
        Field::new("error_code", 3, 13, Kind::I16),
        Field::new("base_offset", 3, 13, Kind::I64),
        Field::new("log_append_time_ms", 3, 13, Kind::I64),
        Field::new("log_start_offset", 5, 13, Kind::I64),
        Field::new(
            "record_errors",
            8,
            13,
            Kind::Array(&Kind::Struct(&PRODUCE_BATCH_INDEX_AND_ERROR_MESSAGE)),
        ),
        Field::new("error_message", 8, 13, Kind::Str),
    ],
    tagged: &[Tagged::new(
        0,
        "current_leader",
        10,
        13,
        Kind::Struct(&PRODUCE_LEADER_ID_AND_EPOCH),
    )],
};

/// BatchIndexAndErrorMessage.
pub(crate) static PRODUCE_BATCH_INDEX_AND_ERROR_MESSAGE: Schema = Schema {
    name: "BatchIndexAndErrorMessage",
    fields: &[
        Field::new("batch_index", 8, 13, Kind::I32),
        Field::new("batch_index_error_message", 8, 13, Kind::Str),
    ],
    tagged: &[],
};

/// LeaderIdAndEpoch.
pub(crate) static PRODUCE_LEADER_ID_AND_EPOCH: Schema = Schema {
    name: "LeaderIdAndEpoch",
    fields: &[
        Field::new("leader_id", 10, 13, Kind::I32),
        Field::new("leader_epoch", 10, 13, Kind::I32),
    ],
    tagged: &[],
};

/// CreateTopicsResponse.
pub(crate) static CREATE_TOPICS: Schema = Schema {
    name: "CreateTopicsResponse",
    fields: &[
        Field::new("throttle_time_ms", 2, 7, Kind::I32),
        Field::new(
            "topics",
            2,
            7,
            Kind::Array(&Kind::Struct(&CREATE_TOPICS_CREATABLE_TOPIC_RESULT)),
        ),
    ],
    tagged: &[],
};

/// CreatableTopicResult.
pub(crate) static CREATE_TOPICS_CREATABLE_TOPIC_RESULT: Schema = Schema {
    name: "CreatableTopicResult",
    fields: &[
        Field::new("name", 2, 7, Kind::Str),
        Field::new("topic_id", 7, 7, Kind::Uuid),
        Field::new("error_code", 2, 7, Kind::I16),
        Field::new("error_message", 2, 7, Kind::Str),
        Field::new("num_partitions", 5, 7, Kind::I32),
        Field::new("replication_factor", 5, 7, Kind::I16),
        Field::new(
            "configs",
            5,
            7,
            Kind::Array(&Kind::Struct(&CREATE_TOPICS_CREATABLE_TOPIC_CONFIGS)),
        ),
    ],
    tagged: &[Tagged::new(0, "topic_config_error_code", 5, 7, Kind::I16)],
};

/// CreatableTopicConfigs.
pub(crate) static CREATE_TOPICS_CREATABLE_TOPIC_CONFIGS: Schema = Schema {
    name: "CreatableTopicConfigs",
    fields: &[
        Field::new("name", 5, 7, Kind::Str),
        Field::new("value", 5, 7, Kind::Str),
        Field::new("read_only", 5, 7, Kind::Bool),
        Field::new("config_source", 5, 7, Kind::I8),
        Field::new("is_sensitive", 5, 7, Kind::Bool),
    ],
    tagged: &[],
};
