//! Cluster-level responses: ApiVersions, Metadata, DescribeCluster, DescribeConfigs.
//! Tables only (see [`super`] for what they are and where they come from).

use super::{Field, Kind, Schema, Tagged};

/// ApiVersionsResponse.
pub(crate) static API_VERSIONS: Schema = Schema {
    name: "ApiVersionsResponse",
    fields: &[
        Field::new("error_code", 0, 4, Kind::I16),
        Field::new(
            "api_keys",
            0,
            4,
            Kind::Array(&Kind::Struct(&API_VERSIONS_API_VERSION)),
        ),
        Field::new("throttle_time_ms", 1, 4, Kind::I32),
    ],
    tagged: &[
        Tagged::new(
            0,
            "supported_features",
            3,
            4,
            Kind::Array(&Kind::Struct(&API_VERSIONS_SUPPORTED_FEATURE_KEY)),
        ),
        Tagged::new(1, "finalized_features_epoch", 3, 4, Kind::I64),
        Tagged::new(
            2,
            "finalized_features",
            3,
            4,
            Kind::Array(&Kind::Struct(&API_VERSIONS_FINALIZED_FEATURE_KEY)),
        ),
        Tagged::new(3, "zk_migration_ready", 3, 4, Kind::Bool),
    ],
};

/// ApiVersion.
pub(crate) static API_VERSIONS_API_VERSION: Schema = Schema {
    name: "ApiVersion",
    fields: &[
        Field::new("api_key", 0, 4, Kind::I16),
        Field::new("min_version", 0, 4, Kind::I16),
        Field::new("max_version", 0, 4, Kind::I16),
    ],
    tagged: &[],
};

/// SupportedFeatureKey.
pub(crate) static API_VERSIONS_SUPPORTED_FEATURE_KEY: Schema = Schema {
    name: "SupportedFeatureKey",
    fields: &[
        Field::new("name", 3, 4, Kind::Str),
        Field::new("min_version", 3, 4, Kind::I16),
        Field::new("max_version", 3, 4, Kind::I16),
    ],
    tagged: &[],
};

/// FinalizedFeatureKey.
pub(crate) static API_VERSIONS_FINALIZED_FEATURE_KEY: Schema = Schema {
    name: "FinalizedFeatureKey",
    fields: &[
        Field::new("name", 3, 4, Kind::Str),
        Field::new("max_version_level", 3, 4, Kind::I16),
        Field::new("min_version_level", 3, 4, Kind::I16),
    ],
    tagged: &[],
};

/// MetadataResponse.
pub(crate) static METADATA: Schema = Schema {
    name: "MetadataResponse",
    fields: &[
        Field::new("throttle_time_ms", 3, 13, Kind::I32),
        Field::new(
            "brokers",
            0,
            13,
            Kind::Array(&Kind::Struct(&METADATA_METADATA_RESPONSE_BROKER)),
        ),
        Field::new("cluster_id", 2, 13, Kind::Str),
        Field::new("controller_id", 1, 13, Kind::I32),
        Field::new(
            "topics",
            0,
            13,
            Kind::Array(&Kind::Struct(&METADATA_METADATA_RESPONSE_TOPIC)),
        ),
        Field::new("error_code", 13, 13, Kind::I16),
        Field::new("cluster_authorized_operations", 8, 10, Kind::I32),
    ],
    tagged: &[],
};

/// MetadataResponseBroker.
pub(crate) static METADATA_METADATA_RESPONSE_BROKER: Schema = Schema {
    name: "MetadataResponseBroker",
    fields: &[
        Field::new("node_id", 0, 13, Kind::I32),
        Field::new("host", 0, 13, Kind::Str),
        Field::new("port", 0, 13, Kind::I32),
        Field::new("rack", 1, 13, Kind::Str),
    ],
    tagged: &[],
};

/// MetadataResponseTopic.
pub(crate) static METADATA_METADATA_RESPONSE_TOPIC: Schema = Schema {
    name: "MetadataResponseTopic",
    fields: &[
        Field::new("error_code", 0, 13, Kind::I16),
        Field::new("name", 0, 13, Kind::Str),
        Field::new("topic_id", 10, 13, Kind::Uuid),
        Field::new("is_internal", 1, 13, Kind::Bool),
        Field::new(
            "partitions",
            0,
            13,
            Kind::Array(&Kind::Struct(&METADATA_METADATA_RESPONSE_PARTITION)),
        ),
        Field::new("topic_authorized_operations", 8, 13, Kind::I32),
    ],
    tagged: &[],
};

/// MetadataResponsePartition.
pub(crate) static METADATA_METADATA_RESPONSE_PARTITION: Schema = Schema {
    name: "MetadataResponsePartition",
    fields: &[
        Field::new("error_code", 0, 13, Kind::I16),
        Field::new("partition_index", 0, 13, Kind::I32),
        Field::new("leader_id", 0, 13, Kind::I32),
        Field::new("leader_epoch", 7, 13, Kind::I32),
        Field::new("replica_nodes", 0, 13, Kind::Array(&Kind::I32)),
        Field::new("isr_nodes", 0, 13, Kind::Array(&Kind::I32)),
        Field::new("offline_replicas", 5, 13, Kind::Array(&Kind::I32)),
    ],
    tagged: &[],
};

/// DescribeClusterResponse.
pub(crate) static DESCRIBE_CLUSTER: Schema = Schema {
    name: "DescribeClusterResponse",
    fields: &[
        Field::new("throttle_time_ms", 0, 2, Kind::I32),
        Field::new("error_code", 0, 2, Kind::I16),
        Field::new("error_message", 0, 2, Kind::Str),
        Field::new("endpoint_type", 1, 2, Kind::I8),
        Field::new("cluster_id", 0, 2, Kind::Str),
        Field::new("controller_id", 0, 2, Kind::I32),
        Field::new(
            "brokers",
            0,
            2,
            Kind::Array(&Kind::Struct(&DESCRIBE_CLUSTER_DESCRIBE_CLUSTER_BROKER)),
        ),
        Field::new("cluster_authorized_operations", 0, 2, Kind::I32),
    ],
    tagged: &[],
};

/// DescribeClusterBroker.
pub(crate) static DESCRIBE_CLUSTER_DESCRIBE_CLUSTER_BROKER: Schema = Schema {
    name: "DescribeClusterBroker",
    fields: &[
        Field::new("broker_id", 0, 2, Kind::I32),
        Field::new("host", 0, 2, Kind::Str),
        Field::new("port", 0, 2, Kind::I32),
        Field::new("rack", 0, 2, Kind::Str),
        Field::new("is_fenced", 2, 2, Kind::Bool),
    ],
    tagged: &[],
};

/// DescribeConfigsResponse.
pub(crate) static DESCRIBE_CONFIGS: Schema = Schema {
    name: "DescribeConfigsResponse",
    fields: &[
        Field::new("throttle_time_ms", 1, 4, Kind::I32),
        Field::new(
            "results",
            1,
            4,
            Kind::Array(&Kind::Struct(&DESCRIBE_CONFIGS_DESCRIBE_CONFIGS_RESULT)),
        ),
    ],
    tagged: &[],
};

/// DescribeConfigsResult.
pub(crate) static DESCRIBE_CONFIGS_DESCRIBE_CONFIGS_RESULT: Schema = Schema {
    name: "DescribeConfigsResult",
    fields: &[
        Field::new("error_code", 1, 4, Kind::I16),
        Field::new("error_message", 1, 4, Kind::Str),
        Field::new("resource_type", 1, 4, Kind::I8),
        Field::new("resource_name", 1, 4, Kind::Str),
        Field::new(
            "configs",
            1,
            4,
            Kind::Array(&Kind::Struct(
                &DESCRIBE_CONFIGS_DESCRIBE_CONFIGS_RESOURCE_RESULT,
            )),
        ),
    ],
    tagged: &[],
};

/// DescribeConfigsResourceResult.
pub(crate) static DESCRIBE_CONFIGS_DESCRIBE_CONFIGS_RESOURCE_RESULT: Schema = Schema {
    name: "DescribeConfigsResourceResult",
    fields: &[
        Field::new("name", 1, 4, Kind::Str),
        Field::new("value", 1, 4, Kind::Str),
        Field::new("read_only", 1, 4, Kind::Bool),
        Field::new("config_source", 1, 4, Kind::I8),
        Field::new("is_sensitive", 1, 4, Kind::Bool),
        Field::new(
            "synonyms",
            1,
            4,
            Kind::Array(&Kind::Struct(&DESCRIBE_CONFIGS_DESCRIBE_CONFIGS_SYNONYM)),
        ),
        Field::new("config_type", 3, 4, Kind::I8),
        Field::new("documentation", 3, 4, Kind::Str),
    ],
    tagged: &[],
};

/// DescribeConfigsSynonym.
pub(crate) static DESCRIBE_CONFIGS_DESCRIBE_CONFIGS_SYNONYM: Schema = Schema {
    name: "DescribeConfigsSynonym",
    fields: &[
        Field::new("name", 1, 4, Kind::Str),
        Field::new("value", 1, 4, Kind::Str),
        Field::new("source", 1, 4, Kind::I8),
    ],
    tagged: &[],
};
