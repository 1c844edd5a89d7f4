//! Traffic as the brokers count it (VIEW_BROKER_STATS_DATA, minute window): per topic produced messages and
//! bytes, per topic and group consumed messages and bytes and messages sent back for retry (SNDBCK_PUT_NUMS, which
//! the Rust broker never counts: it answers "no stats", which is no sample), per broker put and get counts.

use super::cycle::Cycle;
use super::nodes::KnownBroker;
use crate::client::AdminClient;
use mqwatch_model::{TrafficMetric, TrafficSample};

/// One stats item to read: on which master, which stats name and key, and what it means.
struct Item {
    master: KnownBroker,
    stats_name: &'static str,
    key: String,
    metric: TrafficMetric,
    topic: Option<String>,
    group: Option<String>,
}

/// Reads every stats item for `topics` (topic → masters) and `consumed` ((topic, group) → masters).
pub(crate) async fn collect(
    client: &AdminClient,
    cycle: &Cycle,
    topics: &[(String, Vec<KnownBroker>)],
    consumed: &[(String, String, Vec<KnownBroker>)],
    masters_with_cluster: &[(KnownBroker, String)],
    concurrency: usize,
) -> Vec<TrafficSample> {
    const TOPIC: &[(&str, TrafficMetric)] = &[
        ("TOPIC_PUT_NUMS", TrafficMetric::ProduceMessages),
        ("TOPIC_PUT_SIZE", TrafficMetric::ProduceBytes),
    ];
    const GROUP: &[(&str, TrafficMetric)] = &[
        ("GROUP_GET_NUMS", TrafficMetric::ConsumeMessages),
        ("GROUP_GET_SIZE", TrafficMetric::ConsumeBytes),
        ("SNDBCK_PUT_NUMS", TrafficMetric::SendBack),
    ];
    const BROKER: &[(&str, TrafficMetric)] = &[
        ("BROKER_PUT_NUMS", TrafficMetric::ProduceMessages),
        ("BROKER_GET_NUMS", TrafficMetric::ConsumeMessages),
    ];
    let mut items = Vec::new();
    let mut add = |masters: &[KnownBroker],
                   names: &[(&'static str, TrafficMetric)],
                   key: String,
                   topic: Option<&String>,
                   group: Option<&String>| {
        for m in masters {
            for &(stats_name, metric) in names {
                let (topic, group) = (topic.cloned(), group.cloned());
                items.push(Item {
                    master: m.clone(),
                    stats_name,
                    key: key.clone(),
                    metric,
                    topic,
                    group,
                });
            }
        }
    };
    for (topic, masters) in topics {
        add(masters, TOPIC, topic.clone(), Some(topic), None);
    }
    for (topic, group, masters) in consumed {
        add(
            masters,
            GROUP,
            format!("{topic}@{group}"),
            Some(topic),
            Some(group),
        );
    }
    for (m, cluster) in masters_with_cluster {
        add(std::slice::from_ref(m), BROKER, cluster.clone(), None, None);
    }
    let samples: Vec<Option<TrafficSample>> = super::cycle::bounded(
        items
            .into_iter()
            .map(|item| async move {
                let stats = cycle
                    .ask(
                        &item.master.addr,
                        client.broker_stats(&item.master.addr, item.stats_name, &item.key),
                    )
                    .await;
                let minute = stats.flatten()?.stats_minute;
                Some(TrafficSample {
                    metric: item.metric,
                    topic: item.topic,
                    group: item.group,
                    node: item.master.node(),
                    last_minute: minute.sum.max(0) as u64,
                    minute_avg: minute.avgpt,
                })
            })
            .collect::<Vec<_>>(),
        concurrency,
    )
    .await;
    samples.into_iter().flatten().collect()
}
