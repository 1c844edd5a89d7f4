//! One RocketMQ collection cycle against the REAL name server and brokers (started by mqwatch-testkit), with an
//! estate the bench creates through mqwatch's admin client: 1 000 topics × 8 queues and 1 000 subscription groups,
//! each with committed offsets on one topic, over two masters. Target: ≤ 2 s per cycle on loopback.
//! Under `cargo test` (criterion's test mode, no `--bench`) the estate is 20 topics and 20 groups, run once.

use criterion::{Criterion, criterion_group, criterion_main};
use mqwatch_rocketmq::client::AdminClient;
use mqwatch_rocketmq::collector::{Target, collect};
use mqwatch_testkit::rocketmq::{BrokerSpec, RocketMqCluster};
use std::time::{Duration, Instant};

fn benchmarking() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn rss_kib(pid: Option<u32>, field: &str) -> u64 {
    let path = pid.map_or("/proc/self/status".to_string(), |p| {
        format!("/proc/{p}/status")
    });
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

fn cycle(c: &mut Criterion) {
    let (topics, groups) = if benchmarking() {
        (1_000, 1_000)
    } else {
        (20, 20)
    };
    let cluster = RocketMqCluster::start(&[
        BrokerSpec::master("broker-a"),
        BrokerSpec::master("broker-b"),
    ]);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let client = AdminClient::new(Duration::from_secs(10));
    let masters: Vec<String> = cluster.brokers.iter().map(|b| b.addr.clone()).collect();
    let setup = Instant::now();
    rt.block_on(async {
        for t in 0..topics {
            let broker = &masters[t % masters.len()];
            client
                .create_topic(broker, &format!("bench-topic-{t}"), 8)
                .await
                .unwrap();
        }
        for g in 0..groups {
            let broker = &masters[g % masters.len()];
            let group = format!("bench-group-{g}");
            client
                .create_subscription_group(broker, &group)
                .await
                .unwrap();
            let topic = format!("bench-topic-{}", g % topics);
            let host = &masters[(g % topics) % masters.len()];
            if host == broker {
                for q in 0..8 {
                    client
                        .update_consumer_offset(broker, &group, &topic, q, 0)
                        .await
                        .unwrap();
                }
            }
        }
    });
    eprintln!(
        "estate: {topics} topics x 8 queues, {groups} groups, created in {:?}",
        setup.elapsed()
    );
    let target = Target {
        cluster: "bench".into(),
        name_servers: vec![cluster.namesrv_addr.clone()],
        expected_brokers: vec![],
        known_brokers: vec![],
        concurrency: 32,
    };
    let mut last = None;
    let mut group = c.benchmark_group("rocketmq");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .warm_up_time(Duration::from_secs(2));
    group.bench_function(
        format!("collect_cycle_{topics}_topics_{groups}_groups"),
        |b| b.iter(|| last = Some(rt.block_on(collect(&client, &target, 0)))),
    );
    group.finish();
    let snapshot = last.expect("at least one cycle");
    assert_eq!(snapshot.logs.len(), topics * 8, "every queue read");
    assert!(snapshot.errors.is_empty(), "{:?}", snapshot.errors);
    let json = serde_json::to_vec(&snapshot).unwrap().len();
    eprintln!(
        "last cycle: {} ms, {} queues, {} groups; snapshot {} KiB as JSON; bench process RSS now {} KiB, peak {} KiB; \
         broker-a RSS {} KiB",
        snapshot.cycle_ms,
        snapshot.logs.len(),
        snapshot.groups.len(),
        json / 1024,
        rss_kib(None, "VmRSS:"),
        rss_kib(None, "VmHWM:"),
        rss_kib(cluster.brokers[0].process.pid(), "VmRSS:"),
    );
}

criterion_group!(benches, cycle);
criterion_main!(benches);
