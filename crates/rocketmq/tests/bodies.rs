//! Response bodies in both spellings mqwatch meets: Java RocketMQ's camelCase (with fastjson's bare object keys)
//! and the Rust broker's snake_case (QUERY_CONSUME_TIME_SPAN and GET_ALL_PRODUCER_INFO), read the same way.

use mqwatch_rocketmq::body::{
    self, ClusterInfo, ConsumeStats, ConsumerRunningInfo, MessageQueue, OffsetMovedEvent,
};
use mqwatch_rocketmq::codec::parse_lenient_json;

fn mq(topic: &str, broker: &str, id: i32) -> MessageQueue {
    MessageQueue {
        topic: topic.into(),
        broker_name: broker.into(),
        queue_id: id,
    }
}

#[test]
fn consume_time_spans_in_java_and_rust_spelling() {
    let java = br#"{"consumeTimeSpanSet":[{"messageQueue":{"brokerName":"b","queueId":1,"topic":"t"},"minTimeStamp":1,"maxTimeStamp":9,"consumeTimeStamp":5,"delayTime":700}]}"#;
    let rust = br#"{"consume_time_span_set":[{"message_queue":{"broker_name":"b","queue_id":1,"topic":"t"},"min_time_stamp":1,"max_time_stamp":9,"consume_time_stamp":5,"delay_time":700}]}"#;
    for bytes in [&java[..], &rust[..]] {
        let spans = body::consume_time_spans(&parse_lenient_json(bytes).unwrap()).unwrap();
        assert_eq!(spans.len(), 1);
        assert_eq!(spans[0].message_queue, mq("t", "b", 1));
        assert_eq!((spans[0].consume_time_stamp, spans[0].delay_time), (5, 700));
    }
}

#[test]
fn consume_stats_with_bare_queue_keys() {
    let java = br#"{"consumeTps":1.5,"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"t"}:{"brokerOffset":10,"consumerOffset":4,"lastTimestamp":123}}}"#;
    let stats = ConsumeStats::from_json(&parse_lenient_json(java).unwrap()).unwrap();
    let q = stats.queues[&mq("t", "broker-a", 0)];
    assert_eq!(
        (q.broker_offset, q.consumer_offset, q.last_timestamp),
        (10, 4, 123)
    );
    assert_eq!(stats.consume_tps, 1.5);
}

#[test]
fn cluster_info_with_bare_integer_broker_ids() {
    let java = br#"{"brokerAddrTable":{"broker-a":{"cluster":"C","brokerName":"broker-a","brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"}}},"clusterAddrTable":{"C":["broker-a"]}}"#;
    let info = ClusterInfo::from_json(&parse_lenient_json(java).unwrap()).unwrap();
    let b = &info.brokers["broker-a"];
    assert_eq!(b.addrs[&0], "10.0.0.1:10911");
    assert_eq!(b.addrs[&1], "10.0.0.2:10911");
    assert_eq!(info.clusters["C"], vec!["broker-a".to_string()]);
}

#[test]
fn running_info_queues_and_subscriptions() {
    let java = br#"{"properties":{"consumeType":"CONSUME_PASSIVELY","PROP_CONSUMER_START_TIMESTAMP":1},"subscriptionSet":[{"topic":"t","subString":"tagA"}],"mqTable":{{"brokerName":"b","queueId":2,"topic":"t"}:{"commitOffset":7,"cachedMsgCount":150,"lastPullTimestamp":100,"lastConsumeTimestamp":90}}}"#;
    let info = ConsumerRunningInfo::from_json(&parse_lenient_json(java).unwrap()).unwrap();
    let pq = info.queues[&mq("t", "b", 2)];
    assert_eq!((pq.cached_msg_count, pq.last_consume_timestamp), (150, 90));
    assert_eq!(info.subscriptions["t"], "tagA");
    assert_eq!(info.properties["PROP_CONSUMER_START_TIMESTAMP"], "1");
}

#[test]
fn offset_moved_event_and_shape_errors_name_the_body() {
    let e = br#"{"consumerGroup":"g","messageQueue":{"brokerName":"b","queueId":0,"topic":"t"},"offsetRequest":99,"offsetNew":10}"#;
    let ev = OffsetMovedEvent::from_json(&parse_lenient_json(e).unwrap()).unwrap();
    assert_eq!(
        (ev.consumer_group.as_str(), ev.offset_request, ev.offset_new),
        ("g", 99, 10)
    );
    let bad = ConsumeStats::from_json(
        &parse_lenient_json(br#"{"offsetTable":{"not a queue":{}}}"#).unwrap(),
    );
    let msg = bad.unwrap_err().to_string();
    assert!(
        msg.contains("GET_CONSUME_STATS body") && msg.contains("not a queue"),
        "{msg}"
    );
}
