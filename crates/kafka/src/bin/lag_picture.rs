//! mqwatch's side of the Kafka lag benchmark (`benches/lag_cycle.rs`) as its own lean process (a benchmark tool,
//! not part of the product): the collector
//! (`mqwatch_kafka::collector::collect`, the whole cycle `serve` runs) on a single-threaded tokio runtime, and
//! nothing else linked, so its resident memory is the collection's, not a test harness's.
//!
//! Usage: `lag_picture BOOTSTRAP`. One lag picture per stdin line `cycle`, answered with one JSON line
//! `{"seconds": .., "cpu_seconds": .., "lag": {group: total}}` (groups with a commit; total offset lag); at end of
//! input `{"rss_peak_kib": <VmHWM>}`. The same protocol as the baseline script `benches/baseline/lag_baseline.py`.
//! `MQWATCH_LAG_LANES` sets the connections per broker (default: the client's).

use mqwatch_kafka::client::{ClientConfig, KafkaClient};
use mqwatch_kafka::collector::{LagMemory, Target, collect};
use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::time::Instant;

/// A `/proc/self/status` field in KiB.
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// CPU time this (single-threaded) process has run, from `/proc/self/schedstat` (nanoseconds).
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0.0, |ns| ns as f64 / 1e9)
}

/// JSON string literal of a group name.
fn quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn main() {
    let Some(bootstrap) = std::env::args().nth(1) else {
        eprintln!("usage: lag_picture BOOTSTRAP");
        std::process::exit(2);
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut config = ClientConfig::default();
    if let Some(n) = std::env::var("MQWATCH_LAG_LANES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        config.connections_per_broker = n;
    }
    let client = KafkaClient::new(config);
    let memory = LagMemory::new();
    let mut target = Target::new("bench", vec![bootstrap]);
    target.concurrency = 32;
    let stdout = std::io::stdout();
    for line in std::io::stdin().lock().lines() {
        if line.map(|l| l.trim() != "cycle").unwrap_or(true) {
            continue;
        }
        let (start, cpu) = (Instant::now(), cpu_seconds());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let snapshot = rt.block_on(collect(&client, &target, &memory, now));
        let lag: BTreeMap<&str, i64> = snapshot
            .groups
            .iter()
            .filter(|g| g.positions.iter().any(|p| p.committed.is_some()))
            .map(|g| {
                let total = g.positions.iter().filter_map(|p| p.lag()).sum();
                (g.group.name.as_str(), total)
            })
            .collect();
        let (seconds, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
        let groups: Vec<String> = lag
            .iter()
            .map(|(g, l)| format!("{}:{l}", quoted(g)))
            .collect();
        let _ = writeln!(
            stdout.lock(),
            "{{\"seconds\":{seconds},\"cpu_seconds\":{cpu},\"lag\":{{{}}}}}",
            groups.join(",")
        );
    }
    let _ = writeln!(
        stdout.lock(),
        "{{\"rss_peak_kib\":{}}}",
        status_kib("VmHWM:")
    );
}
