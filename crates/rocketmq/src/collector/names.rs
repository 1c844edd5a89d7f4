//! Which topics and groups are RocketMQ's own (skipped by the collector), and the retry / dead-letter naming.

/// Prefix of a group's retry topic.
pub const RETRY_PREFIX: &str = "%RETRY%";
/// Prefix of a group's dead-letter topic.
pub const DLQ_PREFIX: &str = "%DLQ%";

const SYSTEM_TOPICS: &[&str] = &[
    "TBW102",
    "SCHEDULE_TOPIC_XXXX",
    "OFFSET_MOVED_EVENT",
    "SELF_TEST_TOPIC",
    "BenchmarkTest",
    "DefaultHeartBeatSyncerTopic",
    "TRANS_CHECK_MAX_TIME_TOPIC",
    "TRANS_HALF_TOPIC",
    "TRANS_OP_HALF_TOPIC",
];

const SYSTEM_GROUPS: &[&str] = &[
    "TOOLS_CONSUMER",
    "FILTERSRV_CONSUMER",
    "__MONITOR_CONSUMER",
    "CLIENT_INNER_PRODUCER",
    "SELF_TEST_P_GROUP",
    "SELF_TEST_C_GROUP",
    "CID_ONS-HTTP-PROXY",
    "CID_ONSAPI_PERMISSION",
    "CID_ONSAPI_OWNER",
    "CID_ONSAPI_PULL",
    "CID_SYS_RMQ_TRANS",
];

/// Whether `topic` is a system topic on a cluster with these cluster and broker names. Retry and dead-letter
/// topics count as system topics here; the collector reads them apart.
pub fn is_system_topic(topic: &str, cluster_and_broker_names: &[String]) -> bool {
    SYSTEM_TOPICS.contains(&topic)
        || topic.starts_with("RMQ_SYS_")
        || topic.starts_with("rmq_sys_")
        || topic.starts_with(RETRY_PREFIX)
        || topic.starts_with(DLQ_PREFIX)
        || topic.ends_with("_REPLY_TOPIC")
        || cluster_and_broker_names.iter().any(|n| n == topic)
}

/// Whether `group` is one of RocketMQ's own groups.
pub fn is_system_group(group: &str) -> bool {
    SYSTEM_GROUPS.contains(&group) || group.starts_with("CID_RMQ_SYS_")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_topics_and_groups_are_recognised() {
        let names = vec!["DefaultCluster".to_string(), "broker-a".to_string()];
        for t in [
            "TBW102",
            "RMQ_SYS_TRACE_TOPIC",
            "rmq_sys_x",
            "%RETRY%g",
            "%DLQ%g",
            "broker-a_REPLY_TOPIC",
            "broker-a",
        ] {
            assert!(is_system_topic(t, &names), "{t}");
        }
        assert!(!is_system_topic("orders", &names));
        assert!(is_system_group("TOOLS_CONSUMER") && is_system_group("CID_RMQ_SYS_TRANS"));
        assert!(!is_system_group("orders-consumer"));
    }
}
