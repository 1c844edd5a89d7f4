//! Store throughput on both backends: per-minute rows written per second, batched as `serve` writes them (one
//! `insert_minutes` call per cluster cycle; here 1 000 rows per call, each call a new minute, so every row is an
//! insert into a growing table), and reading a day of minute rows back (one series: 1 440 rows; every subject of
//! a metric: 1 440 × 100 rows).
//!
//! SQLite: a file in a temporary directory (WAL, `synchronous = FULL`: every batch is on disk when the call
//! returns). PostgreSQL: a fresh database on the server at `MQWATCH_TEST_POSTGRES` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`), dropped at the end; the benchmark fails when it does not answer.
//! Under `cargo test` (criterion's test mode, an unoptimised build) the day is 10 subjects instead of 100.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use mqwatch_store::{DAY_MS, MINUTE_MS, SeriesPoint, SeriesQuery, Store, StoreUrl};
use std::hint::black_box;

const BATCH: usize = 1_000;
const T0: u64 = 1_700_000_000_000 - 1_700_000_000_000 % DAY_MS;

fn full() -> bool {
    std::env::args().any(|a| a == "--bench")
}

fn subjects() -> usize {
    if full() { 100 } else { 10 }
}

fn admin_url() -> String {
    std::env::var("MQWATCH_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

async fn admin(statement: &str) {
    let (client, conn) = tokio_postgres::connect(&admin_url(), tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| panic!("PostgreSQL at {} does not answer: {e}", admin_url()));
    tokio::spawn(conn);
    client
        .batch_execute(statement)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
}

/// A batch of `BATCH` rows at minute `m`: one cluster, 10 metrics × 100 subjects.
fn batch(m: u64) -> Vec<SeriesPoint> {
    (0..BATCH)
        .map(|i| {
            SeriesPoint::new(
                "bench",
                format!("metric_{}", i / 100),
                format!("group g{}", i % 100),
                T0 + m * MINUTE_MS,
                (m * 7 + i as u64) as f64,
            )
        })
        .collect()
}

fn bench_backend(c: &mut Criterion, rt: &tokio::runtime::Runtime, name: &str, url: &StoreUrl) {
    let store = rt.block_on(Store::open(url)).expect("open the store");
    // A day of one metric for `subjects()` subjects, written the way serve does (one batch per minute).
    let n = subjects();
    rt.block_on(async {
        for m in 0..1_440u64 {
            let rows: Vec<SeriesPoint> = (0..n)
                .map(|s| {
                    SeriesPoint::new(
                        "day",
                        "backlog",
                        format!("group g{s}"),
                        T0 + m * MINUTE_MS,
                        m as f64,
                    )
                })
                .collect();
            store.insert_minutes(&rows).await.unwrap();
        }
    });

    let mut g = c.benchmark_group("store_insert_minutes");
    g.throughput(Throughput::Elements(BATCH as u64));
    let mut minute = 0u64;
    g.bench_function(BenchmarkId::new(name, "batch_1000"), |b| {
        b.iter(|| {
            minute += 1;
            rt.block_on(store.insert_minutes(&batch(minute))).unwrap()
        })
    });
    g.finish();

    let mut g = c.benchmark_group("store_read_day");
    let query = |subject: Option<String>| SeriesQuery {
        cluster: "day".into(),
        metric: "backlog".into(),
        subject,
        from_ms: T0,
        to_ms: T0 + DAY_MS,
    };
    let one = query(Some("group g1".into()));
    let all = query(None);
    assert_eq!(rt.block_on(store.minutes(&one)).unwrap().len(), 1_440);
    assert_eq!(rt.block_on(store.minutes(&all)).unwrap().len(), 1_440 * n);
    g.throughput(Throughput::Elements(1_440));
    g.bench_function(BenchmarkId::new(name, "one_series"), |b| {
        b.iter(|| black_box(rt.block_on(store.minutes(&one)).unwrap()))
    });
    g.throughput(Throughput::Elements(1_440 * n as u64));
    g.bench_function(BenchmarkId::new(name, format!("{n}_series")), |b| {
        b.iter(|| black_box(rt.block_on(store.minutes(&all)).unwrap()))
    });
    g.finish();
}

fn throughput(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    bench_backend(
        c,
        &rt,
        "sqlite",
        &StoreUrl::Sqlite(dir.path().join("bench.db")),
    );

    let db = format!("mqwatch_bench_{}", std::process::id());
    rt.block_on(admin(&format!("CREATE DATABASE {db}")));
    let base = admin_url();
    let url: StoreUrl = format!("{}/{db}", &base[..base.rfind('/').unwrap()])
        .parse()
        .unwrap();
    bench_backend(c, &rt, "postgres", &url);
    rt.block_on(admin(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")));
}

criterion_group!(benches, throughput);
criterion_main!(benches);
