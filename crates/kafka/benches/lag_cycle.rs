//! Kafka lag collection, side by side in one run against the same REAL tansu 0.6.0 broker (started by
//! mqwatch-testkit, sqlite storage): mqwatch's collector vs the BASELINE the spec names, the short lag script an
//! operator would write with confluent-kafka (Python, librdkafka bundled; `benches/baseline/lag_baseline.py`, run
//! with the venv `scripts/test` makes under `$HOME/.cache/mqwatch/venv`).
//!
//! Estate (made here with mqwatch's client): `TOPICS` topics × `PARTITIONS` partitions with records in each, and
//! `GROUPS` groups each committing on every partition of one topic. Both sides run as their own processes (mqwatch's
//! is the crate's `lag_picture` binary: the collector alone), driven over stdin/stdout one lag picture per line, so each
//! side's peak resident memory and CPU time are its own. Measured: a cold one-shot (spawn to first complete picture), steady-state
//! cycles (criterion, same warm process), peak RSS; and every picture of both sides is checked equal (total lag
//! per group) so speed is never bought with a wrong answer.
//!
//! Under `cargo test` (criterion's test mode) the estate is 4 × 5 partitions and 10 groups, each side run once.
//! Skips (saying so) when tansu or the venv is missing; `scripts/test` installs both.

use bytes::Bytes;
use criterion::{Criterion, criterion_group};
use futures::StreamExt;
use mqwatch_kafka::client::{ClientConfig, KafkaClient};
use mqwatch_testkit::retry_until_ok;
use mqwatch_testkit::tansu::{self, Tansu};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

fn benchmarking() -> bool {
    std::env::args().any(|a| a == "--bench")
}

/// (topics, partitions per topic, groups); `MQWATCH_LAG_BENCH_ESTATE=topics,partitions,groups` overrides.
fn estate() -> (usize, i32, usize) {
    if let Some(v) = std::env::var("MQWATCH_LAG_BENCH_ESTATE")
        .ok()
        .and_then(|v| {
            let n: Vec<usize> = v.split(',').filter_map(|x| x.trim().parse().ok()).collect();
            (n.len() == 3).then(|| (n[0], n[1] as i32, n[2]))
        })
    {
        return v;
    }
    if benchmarking() {
        (100, 20, 200)
    } else {
        (4, 5, 10)
    }
}

fn venv_python() -> PathBuf {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_default();
    home.join(".cache/mqwatch/venv/bin/python")
}

fn baseline_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("benches/baseline/lag_baseline.py")
}

/// mqwatch's side: the `lag_picture` binary of this crate (the collector alone on a single-threaded runtime),
/// which cargo builds for this benchmark.
fn mqwatch_side() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_lag_picture"))
}

/// One side's process, driven one picture at a time.
struct Side {
    name: &'static str,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Side {
    fn spawn(name: &'static str, mut cmd: Command) -> Self {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: cannot start: {e}"));
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Side {
            name,
            child,
            stdin,
            stdout,
        }
    }

    fn mqwatch(bootstrap: &str) -> Self {
        let mut cmd = Command::new(mqwatch_side());
        cmd.arg(bootstrap);
        Side::spawn("mqwatch", cmd)
    }

    fn baseline(bootstrap: &str) -> Self {
        let mut cmd = Command::new(venv_python());
        cmd.arg(baseline_script()).arg(bootstrap);
        Side::spawn("baseline (confluent-kafka/librdkafka script)", cmd)
    }

    fn read(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("read");
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("{}: not JSON ({e}): {line:?}", self.name))
    }

    /// One lag picture: (seconds and CPU seconds the side measured, total lag per group).
    fn picture(&mut self) -> (f64, f64, BTreeMap<String, i64>) {
        let stdin = self.stdin.as_mut().expect("open");
        writeln!(stdin, "cycle").expect("write");
        stdin.flush().expect("flush");
        let v = self.read();
        let lag = serde_json::from_value(v["lag"].clone())
            .unwrap_or_else(|e| panic!("{}: {e}: {v}", self.name));
        (
            v["seconds"].as_f64().unwrap_or_default(),
            v["cpu_seconds"].as_f64().unwrap_or_default(),
            lag,
        )
    }

    /// Ends the process; its peak RSS in KiB.
    fn finish(mut self) -> u64 {
        drop(self.stdin.take());
        let v = self.read();
        let _ = self.child.wait();
        v["rss_peak_kib"].as_u64().unwrap_or_default()
    }
}

/// Makes the estate; returns the expected total lag per group.
fn make_estate(addr: &str) -> BTreeMap<String, i64> {
    let (topics, partitions, groups) = estate();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let started = Instant::now();
    let expected = rt.block_on(async {
        let client = KafkaClient::new(ClientConfig::default());
        let long = Duration::from_secs(60);
        for t in 0..topics {
            let name = format!("bench-{t}");
            retry_until_ok("create topic", long, || {
                client.create_topic(addr, &name, partitions, 1)
            })
            .await;
        }
        eprintln!(
            "topics: {topics} x {partitions} created in {:?}",
            started.elapsed()
        );
        let produce = (0..topics).flat_map(|t| (0..partitions).map(move |p| (t, p)));
        let client = &client;
        futures::stream::iter(produce)
            .for_each_concurrent(16, |(t, p)| async move {
                let records: Vec<Bytes> = (0..(3 + p as usize % 5))
                    .map(|i| Bytes::from(format!("r{i}")))
                    .collect();
                let topic = format!("bench-{t}");
                retry_until_ok("produce", long, || {
                    client.produce(addr, &topic, p, &records, 1_700_000_000_000)
                })
                .await;
            })
            .await;
        eprintln!("records produced after {:?}", started.elapsed());
        let mut expected = BTreeMap::new();
        for g in 0..groups {
            let group = format!("bench-group-{g}");
            let topic = format!("bench-{}", g % topics);
            // Group g is `g % 3` behind on every partition of its topic.
            let behind = (g % 3) as i64;
            let offsets: Vec<(String, i32, i64)> = (0..partitions)
                .map(|p| (topic.clone(), p, (3 + p as i64 % 5) - behind))
                .collect();
            let coordinator = retry_until_ok("coordinator", long, || {
                client.find_coordinator(addr, &group)
            })
            .await;
            retry_until_ok("commit", long, || {
                client.commit_offsets(&coordinator, &group, &offsets)
            })
            .await;
            expected.insert(group, behind * i64::from(partitions));
        }
        expected
    });
    eprintln!(
        "estate: {topics} topics x {partitions} partitions, {groups} groups, made in {:?}",
        started.elapsed()
    );
    expected
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn lag_cycle(c: &mut Criterion) {
    if tansu::binary().is_none() || !venv_python().is_file() {
        eprintln!(
            "SKIPPED: needs tansu {} at {} and the baseline venv at {} (./scripts/test installs both)",
            tansu::VERSION,
            tansu::binary_path().display(),
            venv_python().display()
        );
        return;
    }

    let broker = Tansu::start();
    let addr = broker.addr.clone();
    let expected = make_estate(&addr);
    if std::env::var_os("MQWATCH_LAG_BENCH_HOLD").is_some() {
        // For profiling: the estate stays up until stdin closes; run `lag_picture <addr>` against it.
        eprintln!("holding the estate at {addr}; close stdin to stop");
        let _ = std::io::stdin().lock().lines().count();
        return;
    }

    // Cold one-shot: spawn to the first complete picture, a fresh process each time.
    let runs = if benchmarking() { 5 } else { 1 };
    let mut cold: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for _ in 0..runs {
        for spawn in [Side::mqwatch, Side::baseline] {
            let started = Instant::now();
            let mut side = spawn(&addr);
            let (_, _, lag) = side.picture();
            let wall = started.elapsed().as_secs_f64();
            assert_eq!(lag, expected, "{}: wrong lag picture", side.name);
            cold.entry(side.name).or_default().push(wall);
            side.finish();
        }
    }

    // Steady state: the same warm process, one picture per iteration.
    let mut sides = [Side::mqwatch(&addr), Side::baseline(&addr)];
    let mut group = c.benchmark_group("kafka_lag");
    if benchmarking() {
        group
            .sample_size(10)
            .measurement_time(Duration::from_secs(15))
            .warm_up_time(Duration::from_secs(2));
    }
    let mut measured: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    let mut cpu: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for side in &mut sides {
        let name = side.name;
        let label = if name == "mqwatch" {
            "mqwatch_collect_cycle"
        } else {
            "baseline_confluent_kafka_script_cycle"
        };
        let seconds = measured.entry(name).or_default();
        let cpu_seconds = cpu.entry(name).or_default();
        group.bench_function(label, |b| {
            b.iter(|| {
                let (s, c, lag) = side.picture();
                assert_eq!(lag, expected, "{name}: wrong lag picture");
                seconds.push(s);
                cpu_seconds.push(c);
            })
        });
    }
    group.finish();
    let [mq, base] = sides;
    let (mq_rss, base_rss) = (mq.finish(), base.finish());
    let (topics, partitions, groups) = estate();
    eprintln!(
        "kafka lag, {} partitions, {groups} groups, against tansu {}:",
        topics * partitions as usize,
        tansu::VERSION
    );
    for (name, rss) in [
        ("mqwatch", mq_rss),
        ("baseline (confluent-kafka/librdkafka script)", base_rss),
    ] {
        eprintln!(
            "  {name}: cold one-shot median {:.3} s (spawn to first picture), steady cycle median {:.4} s \
             (as the side measured it; its own CPU {:.4} s), peak RSS {} KiB",
            median(cold[name].clone()),
            median(measured[name].clone()),
            median(cpu[name].clone()),
            rss
        );
    }
}

criterion_group!(benches, lag_cycle);

fn main() {
    benches();
    Criterion::default().configure_from_args().final_summary();
}
