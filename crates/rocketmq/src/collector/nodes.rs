//! Nodes: name servers (asked for the cluster's brokers, which doubles as their liveness probe) and brokers
//! (registered now, seen before, or expected by config), each probed with GET_BROKER_RUNTIME_INFO.

use super::Target;
use super::cycle::Cycle;
use crate::body::ClusterInfo;
use crate::client::AdminClient;
use mqwatch_model::{NodeRef, NodeRole, NodeStatus, ObservedNodeState};
use std::collections::BTreeMap;

/// A broker process: name, id (0 = master) and address.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KnownBroker {
    /// Broker name.
    pub name: String,
    /// Broker id.
    pub id: i64,
    /// Address.
    pub addr: String,
}

impl KnownBroker {
    /// The node this broker is: `broker <name>:<id>`.
    pub fn node(&self) -> NodeRef {
        NodeRef::new(NodeRole::Broker, format!("{}:{}", self.name, self.id)).with_addr(&self.addr)
    }
}

/// A broker this cycle: where it is and what the registry and config say of it.
#[derive(Debug, Clone)]
pub(crate) struct BrokerSeat {
    pub broker: KnownBroker,
    /// Registered with the name server now; `None` when no name server answered.
    pub registered: Option<bool>,
    pub expected: bool,
}

/// Asks every name server for the cluster info; returns their statuses and the first answer.
pub(crate) async fn name_servers(
    client: &AdminClient,
    cycle: &Cycle,
    target: &Target,
    now_ms: u64,
) -> (Vec<NodeStatus>, Option<ClusterInfo>) {
    let answers = futures::future::join_all(target.name_servers.iter().map(|ns| async move {
        let node = NodeRef::new(NodeRole::NameServer, ns.as_str()).with_addr(ns.as_str());
        cycle.name(ns, node);
        (ns, client.cluster_info(ns).await)
    }))
    .await;
    let mut statuses = Vec::new();
    let mut info = None;
    for (ns, answer) in answers {
        let node = NodeRef::new(NodeRole::NameServer, ns.as_str()).with_addr(ns.as_str());
        let (answered, error) = match answer {
            Ok(i) => {
                info.get_or_insert(i);
                (true, None)
            }
            Err(e) if e.is_unreachable() => (false, Some(format!("{}: {}", e.request, e.kind))),
            Err(e) => {
                // It answered, badly: a collector error, not a dead name server.
                cycle.record(ns, e);
                (true, None)
            }
        };
        statuses.push(NodeStatus {
            node,
            registration: None,
            expected: true,
            answered,
            error,
            last_answer_ms: answered.then_some(now_ms),
            replica_of: None,
            store_max_offset: None,
        });
    }
    (statuses, info)
}

/// Registered brokers, then known and expected ones that are not registered now (or whose registration is
/// unknown because no name server answered).
pub(crate) fn seats(info: Option<&ClusterInfo>, target: &Target) -> Vec<BrokerSeat> {
    let mut seats: BTreeMap<(String, i64), BrokerSeat> = BTreeMap::new();
    for (name, data) in info.map(|i| &i.brokers).into_iter().flatten() {
        for (id, addr) in &data.addrs {
            let broker = KnownBroker {
                name: name.clone(),
                id: *id,
                addr: addr.clone(),
            };
            seats.insert(
                (name.clone(), *id),
                BrokerSeat {
                    broker,
                    registered: Some(true),
                    expected: false,
                },
            );
        }
    }
    // Without a name server's answer nobody knows who is registered: known brokers are still probed.
    let registry = info.map(|_| false);
    for k in &target.known_brokers {
        seats
            .entry((k.name.clone(), k.id))
            .or_insert_with(|| BrokerSeat {
                broker: k.clone(),
                registered: registry,
                expected: false,
            });
    }
    for e in &target.expected_brokers {
        let (name, id) = match e.rsplit_once(':') {
            Some((n, id)) if id.parse::<i64>().is_ok() => (n.to_string(), id.parse().unwrap_or(0)),
            _ => (e.clone(), 0),
        };
        let seat = seats.entry((name.clone(), id)).or_insert_with(|| {
            let addr = target
                .known_brokers
                .iter()
                .find(|k| k.name == name && k.id == id)
                .map(|k| k.addr.clone())
                .unwrap_or_default();
            BrokerSeat {
                broker: KnownBroker { name, id, addr },
                registered: registry,
                expected: false,
            }
        });
        seat.expected = true;
    }
    seats.into_values().collect()
}

/// A broker's status plus the runtime table it answered with.
pub(crate) struct Probed {
    pub seat: BrokerSeat,
    pub status: NodeStatus,
}

/// Probes every broker with an address (bounded concurrency).
pub(crate) async fn probe(
    client: &AdminClient,
    cycle: &Cycle,
    seats: Vec<BrokerSeat>,
    now_ms: u64,
    concurrency: usize,
) -> Vec<Probed> {
    let jobs: Vec<_> = seats
        .into_iter()
        .map(|seat| async move {
            let node = seat.broker.node();
            cycle.name(&seat.broker.addr, node.clone());
            let runtime = if seat.broker.addr.is_empty() {
                None
            } else {
                cycle
                    .ask(&seat.broker.addr, client.runtime_info(&seat.broker.addr))
                    .await
            };
            let error = match (&runtime, seat.broker.addr.is_empty()) {
                (Some(_), _) => None,
                (None, true) => Some(
                    "expected by config but never seen registered: no address to probe".to_string(),
                ),
                (None, false) => Some(
                    cycle
                        .failure(&seat.broker.addr)
                        .unwrap_or_else(|| "answered badly".into()),
                ),
            };
            let registration = seat
                .registered
                .map(|r| registration(r, seat.broker.id, runtime.as_ref()));
            let store_max_offset = runtime
                .as_ref()
                .and_then(|t| t.get("commitLogMaxOffset"))
                .and_then(|v| v.parse().ok());
            let replica_of = (seat.broker.id != 0).then(|| {
                KnownBroker {
                    name: seat.broker.name.clone(),
                    id: 0,
                    addr: String::new(),
                }
                .node()
            });
            let status = NodeStatus {
                node: node.clone(),
                registration,
                expected: seat.expected,
                answered: runtime.is_some(),
                error,
                last_answer_ms: runtime.is_some().then_some(now_ms),
                replica_of,
                store_max_offset,
            };
            Probed { seat, status }
        })
        .collect();
    super::cycle::bounded(jobs, concurrency).await
}

/// A broker's lifecycle state from its registration and runtime table: shutting down (`brokerShutdown`), a master
/// not ready to take writes (`brokerReady` false: starting, or its store not writable) or a registered broker that
/// does not answer at all (as Kafka fences a broker that stops heartbeating), else serving. A slave's store is
/// read-only by design, so readiness does not apply to it.
pub(crate) fn registration(
    registered: bool,
    broker_id: i64,
    runtime: Option<&BTreeMap<String, String>>,
) -> ObservedNodeState {
    let flag =
        |key: &str, value: &str| runtime.and_then(|t| t.get(key)).is_some_and(|v| v == value);
    if !registered {
        ObservedNodeState::Unregistered
    } else if runtime.is_none() {
        ObservedNodeState::Fenced
    } else if flag("brokerShutdown", "true") {
        ObservedNodeState::ControlledShutdown
    } else if broker_id == 0 && flag("brokerReady", "false") {
        ObservedNodeState::Fenced
    } else {
        ObservedNodeState::Active
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn runtime_flags_map_to_lifecycle_states() {
        let ready = table(&[("brokerReady", "true"), ("brokerShutdown", "false")]);
        let starting = table(&[("brokerReady", "false"), ("brokerShutdown", "false")]);
        let stopping = table(&[("brokerReady", "false"), ("brokerShutdown", "true")]);
        assert_eq!(
            registration(true, 0, Some(&ready)),
            ObservedNodeState::Active
        );
        assert_eq!(
            registration(true, 0, Some(&starting)),
            ObservedNodeState::Fenced
        );
        assert_eq!(
            registration(true, 1, Some(&starting)),
            ObservedNodeState::Active,
            "slaves are read-only"
        );
        assert_eq!(
            registration(true, 0, Some(&stopping)),
            ObservedNodeState::ControlledShutdown
        );
        assert_eq!(
            registration(false, 0, Some(&ready)),
            ObservedNodeState::Unregistered
        );
        assert_eq!(
            registration(true, 0, None),
            ObservedNodeState::Fenced,
            "registered but silent"
        );
    }
}
