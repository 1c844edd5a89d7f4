//! The scripted broker's other answers: Fetch (one record at the asked offset, timestamp from the script),
//! DescribeCluster (fenced brokers included) and DescribeConfigs (`min.insync.replicas`).

use super::{Script, s};
use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::*;

pub(super) fn fetch(script: &Script, r: &FetchRequest) -> FetchResponse {
    use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
    use kafka_protocol::records::{
        Compression, Record, RecordBatchEncoder, RecordEncodeOptions, TimestampType,
    };
    let asked: usize = r.topics.iter().map(|t| t.partitions.len()).sum();
    FetchResponse::default().with_responses(
        r.topics
            .iter()
            .map(|t| {
                FetchableTopicResponse::default()
                    .with_topic(t.topic.clone())
                    .with_partitions(
                        t.partitions
                            .iter()
                            .map(|fp| {
                                let offset = fp.fetch_offset;
                                let left_out = asked > 1
                                    && script.fetch_left_out.iter().any(|(t2, p)| {
                                        t.topic.as_str() == *t2 && fp.partition == *p
                                    });
                                if left_out {
                                    return PartitionData::default()
                                        .with_partition_index(fp.partition)
                                        .with_high_watermark(offset + 1)
                                        .with_records(Some(Bytes::new()));
                                }
                                let record = Record {
                                    transactional: false,
                                    control: false,
                                    delete_horizon: false,
                                    partition_leader_epoch: 0,
                                    producer_id: -1,
                                    producer_epoch: -1,
                                    timestamp_type: TimestampType::Creation,
                                    offset,
                                    sequence: -1,
                                    timestamp: script.fetch_base_ms + 1000 * offset,
                                    key: None,
                                    value: Some(Bytes::from_static(b"v")),
                                    headers: Default::default(),
                                };
                                let mut batch = BytesMut::new();
                                RecordBatchEncoder::encode(
                                    &mut batch,
                                    [&record],
                                    &RecordEncodeOptions {
                                        version: 2,
                                        compression: Compression::None,
                                    },
                                )
                                .unwrap();
                                PartitionData::default()
                                    .with_partition_index(fp.partition)
                                    .with_high_watermark(offset + 1)
                                    .with_records(Some(batch.freeze()))
                            })
                            .collect(),
                    )
            })
            .collect(),
    )
}

pub(super) fn describe_cluster(script: &Script) -> DescribeClusterResponse {
    use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
    let broker = |id: i32, addr: &str, fenced: bool| {
        let (host, port) = addr.rsplit_once(':').unwrap();
        DescribeClusterBroker::default()
            .with_broker_id(BrokerId(id))
            .with_host(s(host))
            .with_port(port.parse().unwrap())
            .with_rack(script.racks.get(&id).map(|r| s(r)))
            .with_is_fenced(fenced)
    };
    let mut brokers: Vec<_> = script
        .brokers
        .iter()
        .map(|(id, a)| broker(*id, a, false))
        .collect();
    brokers.extend(script.fenced.iter().map(|(id, a)| broker(*id, a, true)));
    DescribeClusterResponse::default()
        .with_cluster_id(s("scripted"))
        .with_controller_id(BrokerId(*script.brokers.keys().next().unwrap()))
        .with_brokers(brokers)
}

pub(super) fn describe_configs(
    script: &Script,
    r: &DescribeConfigsRequest,
) -> DescribeConfigsResponse {
    use kafka_protocol::messages::describe_configs_response::{
        DescribeConfigsResourceResult, DescribeConfigsResult,
    };
    DescribeConfigsResponse::default().with_results(
        r.resources
            .iter()
            .map(|res| {
                let value = script.min_isr.get(res.resource_name.as_str());
                DescribeConfigsResult::default()
                    .with_resource_type(res.resource_type)
                    .with_resource_name(res.resource_name.clone())
                    .with_configs(
                        value
                            .map(|v| {
                                vec![
                                    DescribeConfigsResourceResult::default()
                                        .with_name(s("min.insync.replicas"))
                                        .with_value(Some(s(&v.to_string()))),
                                ]
                            })
                            .unwrap_or_default(),
                    )
            })
            .collect(),
    )
}
