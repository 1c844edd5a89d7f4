//! RocketMQ response bodies: lenient JSON, then every typed body reader over the parsed value.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mqwatch_rocketmq::body;
use mqwatch_rocketmq::codec::parse_lenient_json;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = parse_lenient_json(data) {
        let _ = body::ClusterInfo::from_json(&v);
        let _ = body::ConsumeStats::from_json(&v);
        let _ = body::ConsumerConnection::from_json(&v);
        let _ = body::ConsumerRunningInfo::from_json(&v);
        let _ = body::BrokerStatsData::from_json(&v);
        let _ = body::topic_stats(&v);
        let _ = body::topic_configs(&v);
        let _ = body::consume_time_spans(&v);
        let _ = body::runtime_info(&v);
        let _ = body::topic_list(&v);
        let _ = body::subscription_groups(&v);
        let _ = body::OffsetMovedEvent::from_json(&v);
    }
});
