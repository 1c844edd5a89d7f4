//! The client's cost on the send path and on the wire: time per recorded send (via `record` by topic and
//! broker, and via a kept `Slot`) against the same loop with no statistics (the RocketMQ hook itself:
//! `benches/rocketmq_hook.rs`), and the size of one report of
//! 100 topics × 4 brokers with a minute of sends (printed, since it is a size, not a time).

use criterion::{Criterion, criterion_group, criterion_main};
use mqwatch_client::{Outcome, PAYLOAD_VERSION, ProducerStats, Report, Samplers};
use std::hint::black_box;
use std::time::Duration;

fn topics() -> Vec<String> {
    (0..100).map(|i| format!("topic-{i:03}")).collect()
}

const BROKERS: [&str; 4] = ["broker-a", "broker-b", "broker-c", "broker-d"];

fn record(c: &mut Criterion) {
    let topics = topics();
    let stats = ProducerStats::new();
    let mut g = c.benchmark_group("send");
    let mut i = 0usize;
    g.bench_function("no hook", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            black_box((
                &topics[i % 100],
                BROKERS[i % 4],
                Duration::from_micros(i as u64 % 5000),
            ))
        })
    });
    g.bench_function("record by topic and broker", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            stats.record(
                black_box(&topics[i % 100]),
                black_box(BROKERS[i % 4]),
                Duration::from_micros(i as u64 % 5000),
                Outcome::Sent,
            )
        })
    });
    let slot = stats.slot("topic-000", "broker-a");
    g.bench_function("record through a kept slot", |b| {
        b.iter(|| {
            i = i.wrapping_add(1);
            slot.record(
                black_box(Duration::from_micros(i as u64 % 5000)),
                Outcome::Sent,
            )
        })
    });
    g.finish();
}

/// One minute of 100 topics × 4 brokers, `per_key` sends each with latencies spread over 0.2-20 ms.
fn minute_report(per_key: u64) -> Vec<u8> {
    let stats = ProducerStats::new();
    for t in topics() {
        for b in BROKERS {
            for k in 0..per_key {
                let us = 200 + (k * 7919) % 19_800;
                stats.record(&t, b, Duration::from_micros(us), Outcome::Sent);
            }
        }
    }
    let entries = stats.report_since(&mut Samplers::default(), 0, 60_000);
    Report {
        version: PAYLOAD_VERSION,
        client_id: "app-host-01@12345".into(),
        address: "10.1.2.3".into(),
        cluster: Some("orders-rmq".into()),
        start_ms: 1_764_460_800_000,
        end_ms: 1_764_460_860_000,
        dropped_reports: 0,
        entries,
    }
    .to_json()
}

fn payload(c: &mut Criterion) {
    for per_key in [10, 600, 6_000] {
        let bytes = minute_report(per_key);
        println!(
            "report payload, 100 topics x 4 brokers, {per_key} sends per pair: {} bytes",
            bytes.len()
        );
    }
    c.bench_function("build and encode a 400-entry report", |b| {
        b.iter(|| black_box(minute_report(10).len()))
    });
}

criterion_group!(benches, record, payload);
criterion_main!(benches);
