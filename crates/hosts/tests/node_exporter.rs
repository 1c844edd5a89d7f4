//! Against a real node_exporter (Debian's `prometheus-node-exporter`, started by testkit on a free port): the
//! collector reads this machine's real figures, rates come from two looks, a threshold set below the current
//! value raises `host_threshold`, and a stopped exporter is an error naming the host.

use mqwatch_checks::hosts::{HostThresholds, check};
use mqwatch_hosts::{HostCollector, HostReading};
use mqwatch_model::{Engine, FindingKind};
use mqwatch_testkit::node_exporter::NodeExporter;
use std::time::Duration;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn reads_a_real_node_exporter_and_judges_thresholds() {
    let mut exporter = NodeExporter::start();
    let rt = runtime();
    let collector = HostCollector::new(Duration::from_secs(10));
    let hosts = vec![exporter.addr.clone()];
    let readings = rt.block_on(collector.collect(&hosts));
    let HostReading::Sample(s) = &readings[0] else {
        panic!("{readings:?}")
    };
    let cpus = std::thread::available_parallelism().unwrap().get() as u32;
    assert!(s.cpus >= 1 && s.cpus >= cpus.min(1), "{s:?}");
    let mem = s.memory_percent.expect("memory");
    assert!(mem > 0.0 && mem < 100.0, "{s:?}");
    let disk = s.disk_percent.expect("disk usage");
    assert!(disk > 0.0 && disk <= 100.0, "{s:?}");
    assert!(s.load1.is_some() && s.tcp_connections.is_some(), "{s:?}");
    let cpu = s
        .cpu_percent
        .expect("the first look takes two scrapes, so CPU has a rate");
    assert!((0.0..=100.0).contains(&cpu), "{s:?}");
    assert!(
        s.net_in_bytes_per_sec.is_some() || s.net_out_bytes_per_sec.is_none(),
        "{s:?}"
    );

    // Thresholds above anything this machine can show: quiet.
    let quiet = HostThresholds {
        cpu_percent: 101.0,
        memory_percent: 101.0,
        load_percent_of_cpus: 1e9,
        disk_percent: 101.0,
        io_busy_percent: 101.0,
        iops: 1e12,
        tcp_connections: 1e12,
        tcp_time_wait: 1e12,
    };
    assert!(check("c", Engine::Rocketmq, std::slice::from_ref(s), &quiet, 1).is_empty());

    // A memory threshold below the current value raises host_threshold on this host.
    let low = HostThresholds {
        memory_percent: mem / 2.0,
        ..quiet.clone()
    };
    let second = rt.block_on(collector.collect(&hosts));
    let HostReading::Sample(s2) = &second[0] else {
        panic!("{second:?}")
    };
    let f = check("c", Engine::Rocketmq, std::slice::from_ref(s2), &low, 1);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].kind, FindingKind::HostThreshold);
    assert_eq!(f[0].subject.to_string(), format!("host {}", exporter.addr));
    assert!(f[0].evidence.get("memory_percent").is_some(), "{f:?}");

    exporter.process.stop(Duration::from_secs(5));
    let gone = rt.block_on(collector.collect(&hosts));
    let HostReading::Error(e) = &gone[0] else {
        panic!("{gone:?}")
    };
    assert!(e.to_string().contains(&exporter.addr), "{e}");
}
