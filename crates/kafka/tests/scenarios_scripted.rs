//! Multi-broker scenarios against a scripted Kafka cluster (tests/scripted: protocol-exact, NOT real servers:
//! every request and response is kafka-protocol's own type on a real TCP connection, answered from a script the
//! test swaps between cycles). What is real: mqwatch's client and collector, and the pure checks run on each
//! snapshot as a cycle runs them (`mqwatch_checks::run_all` against the previous snapshot, then the lifecycle
//! checks over the lifecycle tracker `mqwatch_state::ClusterState` feeds). Time is the injected `now`, never
//! slept. Scenarios: ISR shrink, offline partition, fenced broker in startup for long (and fenced after serving),
//! broker gone, replicas on one rack, leader move, a broker answering with an impossible array count; the KIP-848
//! group is in kip848_scripted.rs.

mod scripted;

use mqwatch_checks::Thresholds;
use mqwatch_kafka::client::{ClientConfig, KafkaClient};
use mqwatch_kafka::collector::{KnownBroker, LagMemory, Target, collect};
use mqwatch_model::{ClusterSnapshot, Engine, Finding, FindingKind, LogRef, ObservedNodeState};
use mqwatch_state::ClusterState;
use scripted::{Part, Script, ScriptedBroker, Shared};
use std::collections::BTreeMap;
use std::time::Duration;

const MIN: u64 = 60_000;

struct Harness {
    shared: Shared,
    brokers: BTreeMap<i32, ScriptedBroker>,
    addrs: BTreeMap<i32, String>,
    client: KafkaClient,
    target: Target,
    memory: LagMemory,
    state: ClusterState,
    thresholds: Thresholds,
    previous: Option<ClusterSnapshot>,
}

fn part(topic: &'static str, index: i32, leader: i32, replicas: &[i32], isr: &[i32]) -> Part {
    Part {
        topic,
        index,
        leader,
        replicas: replicas.to_vec(),
        isr: isr.to_vec(),
        earliest: 0,
        latest: 100,
        leader_epoch: 0,
    }
}

impl Harness {
    /// Brokers 1..=n on racks a, b, c, …; topic `orders` with n partitions, replicas on every broker, led by
    /// broker i+1, min.insync.replicas 2; group g1 committed at 90 everywhere. `extra` more broker ports are
    /// bound (for brokers that join later).
    async fn start(n: i32, extra: i32) -> Self {
        let mut addrs = BTreeMap::new();
        let mut listeners = Vec::new();
        for id in 1..=n + extra {
            let (l, a) = scripted::listener().await;
            addrs.insert(id, a);
            listeners.push((id, l));
        }
        let all: Vec<i32> = (1..=n).collect();
        let script = Script {
            brokers: addrs
                .clone()
                .into_iter()
                .filter(|(id, _)| *id <= n)
                .collect(),
            racks: (1..=n + extra)
                .map(|id| (id, format!("rack-{}", (b'a' + id as u8 - 1) as char)))
                .collect(),
            partitions: (0..n)
                .map(|i| part("orders", i, i + 1, &all, &all))
                .collect(),
            commits: BTreeMap::from([(
                "g1".to_string(),
                (0..n).map(|i| ("orders", i, 90)).collect(),
            )]),
            offset_fetch_max: 8,
            admin_apis: true,
            min_isr: BTreeMap::from([("orders", 2)]),
            list_groups_max: 5,
            ..Default::default()
        };
        let shared = scripted::shared(script);
        let brokers = listeners
            .into_iter()
            .map(|(id, l)| (id, scripted::serve_shared(id, l, shared.clone())))
            .collect();
        let client = KafkaClient::new(ClientConfig {
            connect_timeout: Duration::from_millis(500),
            request_timeout: Duration::from_millis(500),
            ..ClientConfig::default()
        });
        let target = Target::new("scripted", vec![addrs[&1].clone()]);
        Self {
            shared,
            brokers,
            addrs,
            client,
            target,
            memory: LagMemory::new(),
            state: ClusterState::new(),
            thresholds: Thresholds::default(),
            previous: None,
        }
    }

    /// Changes the script every broker answers from.
    fn change(&self, f: impl FnOnce(&mut Script)) {
        let mut s = (**self.shared.read().unwrap()).clone();
        f(&mut s);
        scripted::set(&self.shared, s);
    }

    /// One cycle at `now`: collect, then judge as `mqwatch check` does; brokers seen are remembered as the state
    /// directory remembers them.
    async fn cycle(&mut self, now: u64) -> (ClusterSnapshot, Vec<Finding>) {
        let s = collect(&self.client, &self.target, &self.memory, now).await;
        self.state.observe(&s);
        let mut f = mqwatch_checks::run_all(&s, self.previous.as_ref(), &self.thresholds, now);
        f.extend(mqwatch_checks::lifecycle::check(
            "scripted",
            Engine::Kafka,
            &self.state.lifecycle,
            &self.thresholds.lifecycle,
            now,
        ));
        for n in &s.nodes {
            let registered = matches!(
                n.registration,
                Some(ObservedNodeState::Active | ObservedNodeState::Fenced)
            );
            let id: i32 = n.node.name.parse().unwrap();
            if registered && !self.target.known_brokers.iter().any(|k| k.id == id) {
                self.target.known_brokers.push(KnownBroker {
                    id,
                    addr: n.node.addr.clone().unwrap(),
                });
            }
        }
        self.previous = Some(s.clone());
        (s, f)
    }
}

/// `(kind, subject)` of every finding, sorted.
fn kinds(f: &[Finding]) -> Vec<(FindingKind, String)> {
    let mut v: Vec<(FindingKind, String)> =
        f.iter().map(|f| (f.kind, f.subject.to_string())).collect();
    v.sort();
    v
}

fn p(topic: &str, i: i32) -> String {
    LogRef::Partition {
        topic: topic.into(),
        partition: i,
    }
    .to_string()
}

fn partition<'a>(
    s: &'a ClusterSnapshot,
    topic: &str,
    i: i32,
) -> &'a mqwatch_model::PartitionStatus {
    s.partitions
        .iter()
        .find(|x| x.log.to_string() == p(topic, i))
        .unwrap()
}

#[tokio::test]
async fn isr_shrink_is_under_replicated_then_under_min_isr_then_heals() {
    let mut h = Harness::start(3, 0).await;
    let (s, f) = h.cycle(MIN).await;
    assert!(kinds(&f).is_empty(), "healthy: {:#?}", kinds(&f));
    assert_eq!(s.logs.len(), 3);

    h.change(|s| s.partitions[1].isr = vec![2, 3]);
    let (s, f) = h.cycle(2 * MIN).await;
    assert_eq!(partition(&s, "orders", 1).out_of_sync(), vec!["1"]);
    assert_eq!(
        kinds(&f),
        vec![(FindingKind::UnderReplicatedPartition, p("orders", 1))]
    );

    h.change(|s| s.partitions[1].isr = vec![2]);
    let (_, f) = h.cycle(3 * MIN).await;
    assert_eq!(
        kinds(&f),
        vec![
            (FindingKind::UnderReplicatedPartition, p("orders", 1)),
            (FindingKind::UnderMinIsr, p("orders", 1)),
        ]
    );

    h.change(|s| s.partitions[1].isr = vec![1, 2, 3]);
    let (_, f) = h.cycle(4 * MIN).await;
    assert!(kinds(&f).is_empty(), "{:#?}", kinds(&f));
}

#[tokio::test]
async fn offline_partition_is_critical_and_the_rest_is_still_read() {
    let mut h = Harness::start(3, 0).await;
    h.change(|s| {
        s.partitions[2].leader = -1;
        s.partitions[2].isr = vec![];
    });
    let (s, f) = h.cycle(MIN).await;
    assert!(partition(&s, "orders", 2).is_offline());
    let ranges: Vec<String> = s.logs.iter().map(|l| l.log.to_string()).collect();
    assert_eq!(
        ranges,
        vec![p("orders", 0), p("orders", 1)],
        "no leader, no range"
    );
    assert_eq!(
        kinds(&f),
        vec![(FindingKind::OfflinePartition, p("orders", 2))]
    );
    let offline = f
        .iter()
        .find(|x| x.kind == FindingKind::OfflinePartition)
        .unwrap();
    assert_eq!(offline.severity, mqwatch_model::Severity::Critical);
    assert!(s.errors.is_empty(), "{:#?}", s.errors);
}

#[tokio::test]
async fn fenced_broker_in_startup_for_long_then_joins_and_a_serving_broker_fenced() {
    // Broker 4 registers fenced (DescribeCluster v2 lists it, Metadata does not) and stays so.
    let mut h = Harness::start(3, 1).await;
    let a4 = h.addrs[&4].clone();
    h.change(|s| {
        s.fenced.insert(4, a4.clone());
    });
    let (s, f) = h.cycle(MIN).await;
    let n4 = s.nodes.iter().find(|n| n.node.name == "4").unwrap();
    assert_eq!(n4.registration, Some(ObservedNodeState::Fenced));
    assert!(n4.answered);
    assert!(
        kinds(&f).is_empty(),
        "in startup, not for long yet: {:#?}",
        kinds(&f)
    );
    let (_, f) = h.cycle(5 * MIN).await;
    assert!(kinds(&f).is_empty(), "4 min, threshold 5: {:#?}", kinds(&f));
    let (_, f) = h.cycle(6 * MIN + 1).await;
    assert_eq!(
        kinds(&f),
        vec![(FindingKind::StartupPending, "broker 4".into())]
    );
    let m = h.state.lifecycle.metrics(6 * MIN + 1);
    assert_eq!(m.in_startup, 1);
    let longest = m.longest_pending_startup.unwrap();
    assert_eq!(
        (longest.node.name.as_str(), longest.pending_ms),
        ("4", 5 * MIN + 1)
    );

    // Broker 4 unfenced (in Metadata now); broker 3, which served, fenced.
    let a3 = h.addrs[&3].clone();
    h.change(|s| {
        s.fenced.clear();
        s.brokers.insert(4, a4.clone());
        s.brokers.remove(&3);
        s.fenced.insert(3, a3.clone());
    });
    let (s, f) = h.cycle(7 * MIN).await;
    let state = |id: &str| {
        s.nodes
            .iter()
            .find(|n| n.node.name == id)
            .unwrap()
            .registration
    };
    assert_eq!(state("4"), Some(ObservedNodeState::Active));
    assert_eq!(state("3"), Some(ObservedNodeState::Fenced));
    assert_eq!(
        kinds(&f),
        vec![(FindingKind::NodeFenced, "broker 3".into())]
    );
    let m = h.state.lifecycle.metrics(7 * MIN);
    assert_eq!(m.in_startup, 0);
    assert_eq!(m.fenced, 1);
    assert!(m.degraded);
}

#[tokio::test]
async fn broker_gone_is_broker_down_and_costs_one_cycle_no_stall() {
    let mut h = Harness::start(3, 0).await;
    let (_, f) = h.cycle(MIN).await;
    assert!(kinds(&f).is_empty(), "{:#?}", kinds(&f));
    // Broker 3 dies: its port refuses, its connections close, its registration goes; leadership moves to 1.
    h.brokers[&3].stop();
    h.change(|s| {
        s.gone.insert(3);
        s.brokers.remove(&3);
        s.partitions[2].leader = 1;
        s.partitions[2].leader_epoch = 1;
        for p in &mut s.partitions {
            p.isr.retain(|b| *b != 3);
        }
    });
    let started = std::time::Instant::now();
    let (s, f) = h.cycle(2 * MIN).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    let n3 = s.nodes.iter().find(|n| n.node.name == "3").unwrap();
    assert_eq!(n3.registration, Some(ObservedNodeState::Unregistered));
    assert!(!n3.answered);
    assert_eq!(s.logs.len(), 3, "every partition still has a range");
    let got = kinds(&f);
    assert!(
        got.contains(&(FindingKind::BrokerDown, "broker 3".into())),
        "{got:#?}"
    );
    let under: Vec<&(FindingKind, String)> = got
        .iter()
        .filter(|(k, _)| *k == FindingKind::UnderReplicatedPartition)
        .collect();
    assert_eq!(under.len(), 3, "{got:#?}");
}

#[tokio::test]
async fn replicas_on_one_rack_are_a_placement_violation() {
    let mut h = Harness::start(3, 0).await;
    h.thresholds.replication.min_racks = 2;
    h.change(|s| {
        s.racks.insert(2, "rack-a".into());
        s.partitions.push(part("payments", 0, 1, &[1, 2], &[1, 2]));
    });
    let (s, f) = h.cycle(MIN).await;
    assert_eq!(s.racks["2"], "rack-a");
    assert_eq!(
        kinds(&f),
        vec![(FindingKind::PlacementViolation, p("payments", 0))]
    );
    let ev = &f[0].evidence;
    assert_eq!(ev.get("racks").unwrap(), &serde_json::json!(["rack-a"]));
}

#[tokio::test]
async fn leader_move_reads_offsets_from_the_new_leader_without_findings() {
    let mut h = Harness::start(3, 0).await;
    let (s, _) = h.cycle(MIN).await;
    assert_eq!(partition(&s, "orders", 0).leader.as_deref(), Some("1"));
    h.change(|s| {
        s.partitions[0].leader = 2;
        s.partitions[0].leader_epoch = 1;
        s.partitions[0].latest = 150;
    });
    let (s, f) = h.cycle(2 * MIN).await;
    let p0 = partition(&s, "orders", 0);
    assert_eq!(
        (p0.leader.as_deref(), p0.leader_epoch),
        (Some("2"), Some(1))
    );
    let range = s
        .logs
        .iter()
        .find(|l| l.log.to_string() == p("orders", 0))
        .unwrap();
    assert_eq!(range.latest, 150, "asked of the new leader");
    assert!(s.errors.is_empty(), "{:#?}", s.errors);
    assert!(kinds(&f).is_empty(), "{:#?}", kinds(&f));
    // Broker 2 was asked both ends of its own partitions in the first cycle and the latest offsets (now including
    // orders-0) in the second; earliest offsets come from the collector's cache between full reads.
    let seen = h.brokers[&2].seen.lock().unwrap().clone();
    assert!(
        seen.iter().filter(|(k, _)| *k == 2).count() >= 3,
        "{seen:?}"
    );
}

#[tokio::test]
async fn an_impossible_count_from_one_broker_is_a_collector_error_and_the_cycle_goes_on() {
    let mut h = Harness::start(3, 0).await;
    // Broker 2 answers ListOffsets (for the partition it leads) with a count of 0x033c0c00 in eight bytes: the
    // answer kafka-protocol 0.18 would have reserved 54 million partitions for, aborting the process.
    h.change(|s| {
        s.lie.insert((2, 2));
    });
    let (s, f) = h.cycle(MIN).await;
    let ranges: Vec<String> = s.logs.iter().map(|l| l.log.to_string()).collect();
    assert_eq!(ranges, vec![p("orders", 0), p("orders", 2)]);
    assert!(!s.errors.is_empty());
    for e in &s.errors {
        assert_eq!(e.node.as_ref().map(|n| n.name.as_str()), Some("2"), "{e:?}");
        assert!(e.request.starts_with("ListOffsets (2) v"), "{e:?}");
        assert!(
            e.error
                .contains("topics: declares 54266880 elements, only 4 bytes left")
                || e.error.contains("declares 54266880 elements"),
            "{e:?}"
        );
    }
    assert_eq!(
        kinds(&f),
        vec![(FindingKind::CollectorError, "broker 2".into())]
    );
    // The next cycle, with the broker honest again, is whole.
    h.change(|s| s.lie.clear());
    let (s, f) = h.cycle(2 * MIN).await;
    assert_eq!(s.logs.len(), 3);
    assert!(kinds(&f).is_empty(), "{:#?}", kinds(&f));
}
