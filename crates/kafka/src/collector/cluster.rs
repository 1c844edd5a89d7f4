//! What Metadata does not say: which brokers are fenced (DescribeCluster v2 with fenced brokers included, Kafka
//! 4.0, KIP-1073; older brokers say nothing, which is not an error) and each topic's `min.insync.replicas`
//! (DescribeConfigs on topics, batched). An API the broker does not offer is skipped; a bad answer is recorded.

use super::cycle::Cycle;
use crate::client::{ErrorKind, KafkaClient, check_code};
use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
use kafka_protocol::messages::{DescribeClusterRequest, DescribeConfigsRequest};
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeMap;

/// Topics per DescribeConfigs request.
const BATCH: usize = 200;

/// DescribeConfigs resource type of a topic.
const TOPIC: i8 = 2;

/// A broker as DescribeCluster lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Registered {
    pub addr: String,
    pub rack: Option<String>,
    /// `None` below DescribeCluster v2 (no fenced flag).
    pub fenced: Option<bool>,
}

/// Registered brokers (fenced ones included where the broker can say), asked of `addr`. `None` when the broker
/// does not offer DescribeCluster or answered badly.
pub(crate) async fn brokers(
    client: &KafkaClient,
    cycle: &Cycle,
    addr: &str,
) -> Option<BTreeMap<i32, Registered>> {
    let answer = client
        .send::<DescribeClusterRequest>(addr, None, |v| {
            let r = DescribeClusterRequest::default();
            let r = if v >= 1 { r.with_endpoint_type(1) } else { r };
            if v >= 2 {
                r.with_include_fenced_brokers(true)
            } else {
                r
            }
        })
        .await;
    let (version, r) = match answer {
        Ok(a) => a,
        Err(e) if matches!(e.kind, ErrorKind::Unsupported { .. }) => return None,
        Err(e) => {
            cycle.record(e);
            return None;
        }
    };
    if let Err(e) = check_code::<DescribeClusterRequest>(addr, version, r.error_code, None) {
        cycle.bad_answer(e);
        return None;
    }
    Some(
        r.brokers
            .into_iter()
            .map(|b| {
                (
                    b.broker_id.0,
                    Registered {
                        addr: format!("{}:{}", b.host, b.port),
                        rack: b.rack.map(|r| r.to_string()),
                        fenced: (version >= 2).then_some(b.is_fenced),
                    },
                )
            })
            .collect(),
    )
}

/// Topic → `min.insync.replicas`, asked of `addr`, for the topics whose config has it.
pub(crate) async fn min_insync_replicas(
    client: &KafkaClient,
    cycle: &Cycle,
    addr: &str,
    topics: &[String],
) -> BTreeMap<String, i32> {
    let mut out = BTreeMap::new();
    for chunk in topics.chunks(BATCH) {
        let answer = client
            .send::<DescribeConfigsRequest>(addr, Some(2), |_| {
                DescribeConfigsRequest::default().with_resources(
                    chunk
                        .iter()
                        .map(|t| {
                            DescribeConfigsResource::default()
                                .with_resource_type(TOPIC)
                                .with_resource_name(StrBytes::from_string(t.clone()))
                                .with_configuration_keys(Some(vec![StrBytes::from_static_str(
                                    "min.insync.replicas",
                                )]))
                        })
                        .collect(),
                )
            })
            .await;
        let (version, r) = match answer {
            Ok(a) => a,
            Err(e) if matches!(e.kind, ErrorKind::Unsupported { .. }) => return out,
            Err(e) => {
                cycle.record(e);
                return out;
            }
        };
        for res in r.results {
            let topic = res.resource_name.to_string();
            if let Err(e) = check_code::<DescribeConfigsRequest>(
                addr,
                version,
                res.error_code,
                Some(format!("topic {topic}")),
            ) {
                cycle.bad_answer(e);
                continue;
            }
            let value = res
                .configs
                .iter()
                .find(|c| c.name.as_str() == "min.insync.replicas")
                .and_then(|c| c.value.as_ref())
                .and_then(|v| v.parse::<i32>().ok());
            if let Some(v) = value {
                out.insert(topic, v);
            }
        }
    }
    out
}
