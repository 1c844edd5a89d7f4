//! node_exporter's metrics as mqwatch reads them: the parsed exposition reduced to [`Counters`] (cumulative
//! counters and gauges of one look), and [`sample`], the rates between two looks.
//!
//! Metrics read (node_exporter 1.x names): `node_cpu_seconds_total{cpu,mode}`, `node_memory_MemTotal_bytes`,
//! `node_memory_MemAvailable_bytes`, `node_load1`, `node_filesystem_{size,avail}_bytes{mountpoint,fstype}`
//! (pseudo filesystems left out), `node_disk_io_time_seconds_total{device}`,
//! `node_disk_{reads,writes}_completed_total`, `node_network_{receive,transmit}_bytes_total{device}` (loopback
//! left out), `node_netstat_Tcp_CurrEstab`, `node_sockstat_TCP_tw`. A metric a node_exporter does not expose
//! leaves its measure empty.

use mqwatch_checks::hosts::HostSample;
use prometheus_parse::{Scrape, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Filesystems that hold no data of a broker.
const PSEUDO_FS: [&str; 10] = [
    "tmpfs",
    "devtmpfs",
    "squashfs",
    "ramfs",
    "nsfs",
    "autofs",
    "proc",
    "sysfs",
    "fuse.lxcfs",
    "cgroup2",
];

/// One look at one host: cumulative counters and gauges.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counters {
    /// When it was read (ms since the Unix epoch).
    pub at_ms: u64,
    /// CPU seconds in every mode, all CPUs.
    pub cpu_total: f64,
    /// CPU seconds idle or waiting for IO, all CPUs.
    pub cpu_idle: f64,
    /// Distinct CPUs.
    pub cpus: u32,
    /// Memory total and available, bytes.
    pub mem_total: Option<f64>,
    /// Memory available, bytes.
    pub mem_available: Option<f64>,
    /// Load1.
    pub load1: Option<f64>,
    /// Per mount point: (size, free, available to non-root) bytes.
    pub filesystems: BTreeMap<String, (f64, f64, f64)>,
    /// Per disk: seconds spent doing IO.
    pub disk_io_seconds: BTreeMap<String, f64>,
    /// Reads plus writes completed, all disks.
    pub disk_ops: Option<f64>,
    /// Bytes received, all interfaces but loopback.
    pub net_rx: Option<f64>,
    /// Bytes sent, all interfaces but loopback.
    pub net_tx: Option<f64>,
    /// Established TCP connections.
    pub tcp_established: Option<f64>,
    /// TIME_WAIT sockets.
    pub tcp_time_wait: Option<f64>,
}

fn value(v: &Value) -> Option<f64> {
    match v {
        Value::Counter(x) | Value::Gauge(x) | Value::Untyped(x) => {
            Some(*x).filter(|x| x.is_finite())
        }
        _ => None,
    }
}

fn add(slot: &mut Option<f64>, v: f64) {
    *slot = Some(slot.unwrap_or(0.0) + v);
}

impl Counters {
    /// Reads the exposition `text` taken at `at_ms`. Lines the parser cannot read are skipped by it; only an
    /// unreadable stream is an error.
    pub fn parse(text: &str, at_ms: u64) -> Result<Self, String> {
        let lines = text.lines().map(|l| Ok(l.to_string()));
        let scrape = Scrape::parse(lines).map_err(|e| format!("exposition format: {e}"))?;
        let mut c = Counters {
            at_ms,
            ..Default::default()
        };
        let mut cpus = BTreeSet::new();
        let mut fs_size = BTreeMap::new();
        let mut fs_avail = BTreeMap::new();
        let mut fs_free = BTreeMap::new();
        for s in &scrape.samples {
            let Some(v) = value(&s.value) else { continue };
            let label = |k: &str| s.labels.get(k).unwrap_or("");
            match s.metric.as_str() {
                "node_cpu_seconds_total" => {
                    cpus.insert(label("cpu").to_string());
                    c.cpu_total += v;
                    if matches!(label("mode"), "idle" | "iowait") {
                        c.cpu_idle += v;
                    }
                }
                "node_memory_MemTotal_bytes" => c.mem_total = Some(v),
                "node_memory_MemAvailable_bytes" => c.mem_available = Some(v),
                "node_load1" => c.load1 = Some(v),
                "node_filesystem_size_bytes"
                | "node_filesystem_avail_bytes"
                | "node_filesystem_free_bytes"
                    if !PSEUDO_FS.contains(&label("fstype")) =>
                {
                    let map = match s.metric.as_str() {
                        "node_filesystem_size_bytes" => &mut fs_size,
                        "node_filesystem_avail_bytes" => &mut fs_avail,
                        _ => &mut fs_free,
                    };
                    map.insert(label("mountpoint").to_string(), v);
                }
                "node_disk_io_time_seconds_total" => {
                    c.disk_io_seconds.insert(label("device").to_string(), v);
                }
                "node_disk_reads_completed_total" | "node_disk_writes_completed_total" => {
                    add(&mut c.disk_ops, v)
                }
                "node_network_receive_bytes_total" if label("device") != "lo" => {
                    add(&mut c.net_rx, v)
                }
                "node_network_transmit_bytes_total" if label("device") != "lo" => {
                    add(&mut c.net_tx, v)
                }
                "node_netstat_Tcp_CurrEstab" => c.tcp_established = Some(v),
                "node_sockstat_TCP_tw" => c.tcp_time_wait = Some(v),
                _ => {}
            }
        }
        c.cpus = cpus.len() as u32;
        for (mount, size) in fs_size {
            if let Some(avail) = fs_avail.get(&mount)
                && size > 0.0
            {
                let free = fs_free.get(&mount).copied().unwrap_or(*avail);
                c.filesystems.insert(mount, (size, free, *avail));
            }
        }
        Ok(c)
    }
}

/// The sample of `host` from its latest look `cur` and, for rates, the look before (`prev`, same host).
pub fn sample(host: &str, prev: Option<&Counters>, cur: &Counters) -> HostSample {
    let mut s = HostSample {
        host: host.to_string(),
        at_ms: cur.at_ms,
        cpus: cur.cpus,
        load1: cur.load1,
        tcp_connections: cur.tcp_established,
        tcp_time_wait: cur.tcp_time_wait,
        ..Default::default()
    };
    if let (Some(total), Some(avail)) = (cur.mem_total, cur.mem_available)
        && total > 0.0
    {
        s.memory_percent = percent(100.0 * (total - avail) / total);
    }
    if let Some((mount, fs)) = cur
        .filesystems
        .iter()
        .max_by(|a, b| used(a.1).total_cmp(&used(b.1)))
    {
        s.disk_percent = Some(used(fs));
        s.disk_mount = Some(mount.clone());
    }
    let Some(prev) = prev.filter(|p| p.at_ms < cur.at_ms) else {
        return s;
    };
    let secs = (cur.at_ms - prev.at_ms) as f64 / 1000.0;
    let rate = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b >= a => Some((b - a) / secs),
        _ => None,
    };
    let cpu_delta = cur.cpu_total - prev.cpu_total;
    if cpu_delta > 0.0 {
        let idle = (cur.cpu_idle - prev.cpu_idle).clamp(0.0, cpu_delta);
        s.cpu_percent = percent(100.0 * (cpu_delta - idle) / cpu_delta);
    }
    if let Some((device, busy)) = cur
        .disk_io_seconds
        .iter()
        .filter_map(|(d, v)| {
            let before = prev.disk_io_seconds.get(d)?;
            (v >= before).then(|| (d, (100.0 * (v - before) / secs).clamp(0.0, 100.0)))
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
    {
        s.io_busy_percent = Some(busy);
        s.io_busy_device = Some(device.clone());
    }
    s.iops = rate(prev.disk_ops, cur.disk_ops);
    s.net_in_bytes_per_sec = rate(prev.net_rx, cur.net_rx);
    s.net_out_bytes_per_sec = rate(prev.net_tx, cur.net_tx);
    s
}

/// Usage as `df` shows it: used / (used + available to non-root), so root's reserved blocks count as full.
/// A percentage within [0, 100], or none when the counters made it NaN (infinite or absurd values): rounding can
/// put a ratio of equal counters a hair above 100.
fn percent(v: f64) -> Option<f64> {
    (!v.is_nan()).then(|| v.clamp(0.0, 100.0))
}

fn used((size, free, avail): &(f64, f64, f64)) -> f64 {
    let (used, avail) = ((size - free).max(0.0), avail.max(0.0));
    if used + avail > 0.0 {
        100.0 * used / (used + avail)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOOK_1: &str = r#"# HELP node_cpu_seconds_total Seconds the CPUs spent in each mode.
# TYPE node_cpu_seconds_total counter
node_cpu_seconds_total{cpu="0",mode="idle"} 100
node_cpu_seconds_total{cpu="0",mode="user"} 50
node_cpu_seconds_total{cpu="1",mode="idle"} 100
node_cpu_seconds_total{cpu="1",mode="iowait"} 10
node_cpu_seconds_total{cpu="1",mode="system"} 40
# TYPE node_memory_MemTotal_bytes gauge
node_memory_MemTotal_bytes 1000
node_memory_MemAvailable_bytes 250
node_load1 1.5
node_filesystem_size_bytes{device="/dev/vda1",fstype="ext4",mountpoint="/"} 1000
node_filesystem_avail_bytes{device="/dev/vda1",fstype="ext4",mountpoint="/"} 100
node_filesystem_free_bytes{device="/dev/vda1",fstype="ext4",mountpoint="/"} 150
node_filesystem_size_bytes{device="tmpfs",fstype="tmpfs",mountpoint="/run"} 10
node_filesystem_avail_bytes{device="tmpfs",fstype="tmpfs",mountpoint="/run"} 0
node_disk_io_time_seconds_total{device="vda"} 10
node_disk_reads_completed_total{device="vda"} 1000
node_disk_writes_completed_total{device="vda"} 500
node_network_receive_bytes_total{device="eth0"} 10000
node_network_receive_bytes_total{device="lo"} 999999
node_network_transmit_bytes_total{device="eth0"} 20000
node_netstat_Tcp_CurrEstab 42
node_sockstat_TCP_tw 7
"#;

    fn look_2() -> String {
        LOOK_1
            .replace(
                "cpu=\"0\",mode=\"idle\"} 100",
                "cpu=\"0\",mode=\"idle\"} 105",
            )
            .replace("mode=\"user\"} 50", "mode=\"user\"} 65")
            .replace(
                "io_time_seconds_total{device=\"vda\"} 10",
                "io_time_seconds_total{device=\"vda\"} 15",
            )
            .replace(
                "reads_completed_total{device=\"vda\"} 1000",
                "reads_completed_total{device=\"vda\"} 1600",
            )
            .replace(
                "receive_bytes_total{device=\"eth0\"} 10000",
                "receive_bytes_total{device=\"eth0\"} 30000",
            )
    }

    #[test]
    fn reads_gauges_from_one_look() {
        let c = Counters::parse(LOOK_1, 1_000).unwrap();
        assert_eq!(c.cpus, 2);
        let s = sample("h:9100", None, &c);
        assert_eq!(s.memory_percent, Some(75.0));
        // As df: used 850 of (used 850 + available 100); root's reserve (50) counts as full.
        assert!(
            (s.disk_percent.unwrap() - 100.0 * 850.0 / 950.0).abs() < 1e-9,
            "{s:?}"
        );
        assert_eq!(s.disk_mount.as_deref(), Some("/"));
        assert_eq!(
            (s.load1, s.tcp_connections, s.tcp_time_wait),
            (Some(1.5), Some(42.0), Some(7.0))
        );
        assert_eq!(s.cpu_percent, None, "a rate needs two looks");
    }

    #[test]
    fn rates_come_from_two_looks() {
        let a = Counters::parse(LOOK_1, 1_000).unwrap();
        let b = Counters::parse(&look_2(), 11_000).unwrap();
        let s = sample("h:9100", Some(&a), &b);
        // 20 CPU seconds passed, 5 of them idle.
        assert_eq!(s.cpu_percent, Some(75.0));
        assert_eq!(
            (s.io_busy_percent, s.io_busy_device.as_deref()),
            (Some(50.0), Some("vda"))
        );
        assert_eq!(s.iops, Some(60.0));
        assert_eq!(
            (s.net_in_bytes_per_sec, s.net_out_bytes_per_sec),
            (Some(2000.0), Some(0.0))
        );
    }

    #[test]
    fn counters_that_went_back_give_no_rate() {
        let a = Counters::parse(&look_2(), 1_000).unwrap();
        let b = Counters::parse(LOOK_1, 2_000).unwrap();
        let s = sample("h", Some(&a), &b);
        assert_eq!((s.iops, s.io_busy_percent), (None, None));
    }

    #[test]
    fn garbage_never_panics() {
        for text in [
            "",
            "{{{",
            "node_load1 abc",
            "node_load1{x=\"} 1",
            "# TYPE x histogram\nx_bucket{le=\"1\"} 1",
        ] {
            let _ = Counters::parse(text, 0);
        }
    }
}
