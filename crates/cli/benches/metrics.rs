//! `/metrics` rendering at 100 000 series while a collector is hung.
//!
//! The estate: one RocketMQ cluster of 20 000 queues (1 000 topics × 4 brokers × 5 queues) read by three groups
//! each, rendered at `metrics_detail = "partition"`: 20 000 `mqwatch_log_latest_offset`, 20 000
//! `mqwatch_log_retained_messages` and 60 000 `mqwatch_partition_backlog_messages` series, plus the default
//! families (asserted: at least 100 000 sample lines). The same estate at the default detail is timed next to it.
//!
//! While it is timed, a second cluster's collection is hung for real: `run::cycle` (what `serve` runs per cluster)
//! against a TCP listener that accepts connections and never answers, as its name server, with a one-hour
//! timeout, on a runtime of its own. Rendering reads only the latest finished cycles, so it neither waits for nor
//! contends with that collection (the benchmark asserts the collection is still in flight at the end).

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use mqwatch_cli::config::ClusterConfig;
use mqwatch_cli::run::{Collectors, CycleResult, Lifecycle, cycle};
use mqwatch_cli::serve::metrics::{MetricsDetail, render};
use mqwatch_cli::state::StateDir;
use mqwatch_model::{
    ClusterSnapshot, GroupPosition, GroupRef, GroupStatus, LogRef, LogStatus, NodeRef, NodeRole,
    NodeStatus, Span,
};
use mqwatch_state::ClusterState;
use mqwatch_stats::lifecycle::LifecycleMetrics;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

const TOPICS: usize = 1_000;
const BROKERS: usize = 4;
const QUEUES: i32 = 5;
const GROUPS: usize = 3;

fn estate() -> BTreeMap<String, CycleResult> {
    let mut logs = Vec::new();
    for t in 0..TOPICS {
        for b in 0..BROKERS {
            for q in 0..QUEUES {
                logs.push(LogStatus {
                    log: LogRef::Queue {
                        topic: format!("topic-{t:04}"),
                        broker: format!("broker-{b}"),
                        queue_id: q,
                    },
                    earliest: 1_000,
                    latest: 1_000_000 + (t as i64) * 7 + i64::from(q),
                });
            }
        }
    }
    let groups = (0..GROUPS)
        .map(|g| GroupStatus {
            group: GroupRef::new(format!("group-{g}")),
            positions: logs
                .iter()
                .map(|l| GroupPosition {
                    log: l.log.clone(),
                    earliest: l.earliest,
                    latest: l.latest,
                    committed: Some(l.latest - 10 * g as i64),
                    oldest_unconsumed_age_ms: None,
                    age_source: None,
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    let nodes = (0..BROKERS)
        .map(|b| NodeStatus {
            node: NodeRef::new(NodeRole::Broker, format!("broker-{b}:0")),
            registration: None,
            expected: false,
            answered: true,
            error: None,
            last_answer_ms: None,
            replica_of: None,
            store_max_offset: None,
        })
        .collect();
    let snapshot = ClusterSnapshot {
        cluster: "big".into(),
        taken_at_ms: 1_700_000_000_000,
        cycle_ms: 1_234,
        nodes,
        logs,
        groups,
        ..Default::default()
    };
    let result = CycleResult {
        snapshot,
        findings: Vec::new(),
        lifecycle: Lifecycle {
            metrics: LifecycleMetrics {
                longest_pending_startup: None,
                in_startup: 0,
                longest_pending_controlled_shutdown: None,
                in_controlled_shutdown: 0,
                fenced: 0,
                active: BROKERS,
                registered: BROKERS,
                degraded: false,
            },
            nodes: Vec::new(),
        },
        ledgers: None,
        lag_status: Vec::new(),
        produced_from_offsets: Default::default(),
    };
    BTreeMap::from([("big".to_string(), result)])
}

/// Starts a collection of cluster `hung` that hangs: its name server accepts and never answers. Returns a flag
/// set when the collection ends (it must not, while the benchmark runs).
fn hung_collection() -> Arc<AtomicBool> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            held.push(conn); // accepted, never answered
        }
    });
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    std::thread::spawn(move || {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut config = ClusterConfig::rocketmq(&addr);
        config.name = "hung".into();
        config.timeout = Span::from_secs(3_600);
        let collectors = Collectors::new(&config);
        let state = StateDir::resolve(Some(dir.path()), None).expect("state dir");
        let mut memory = ClusterState::new();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let _ = rt.block_on(cycle(
            &config,
            &collectors,
            &Default::default(),
            &state,
            &mut memory,
            &|_, _| {},
            1_700_000_000_000,
        ));
        flag.store(true, Ordering::SeqCst);
    });
    done
}

fn metrics(c: &mut Criterion) {
    let latest = estate();
    let fine = render(&latest, MetricsDetail::Partition);
    let samples = fine.lines().filter(|l| !l.starts_with('#')).count();
    assert!(samples >= 100_000, "{samples} series");
    let coarse = render(&latest, MetricsDetail::Group);
    assert!(coarse.lines().count() < 100, "{coarse}");
    let finished = hung_collection();

    let mut g = c.benchmark_group("metrics_render");
    g.throughput(Throughput::Elements(samples as u64));
    g.bench_function("100k_series_partition_detail_collector_hung", |b| {
        b.iter(|| black_box(render(black_box(&latest), MetricsDetail::Partition)))
    });
    g.bench_function("same_estate_default_detail", |b| {
        b.iter(|| black_box(render(black_box(&latest), MetricsDetail::Group)))
    });
    g.finish();
    assert!(
        !finished.load(Ordering::SeqCst),
        "the hung collection ended: the benchmark did not run beside a hung collector"
    );
}

criterion_group!(benches, metrics);
criterion_main!(benches);
