//! Property: whatever text a node_exporter (or anything listening on its port) answers, parsing it and sampling
//! two looks never panics, and every percentage that comes out is within [0, 100].

use mqwatch_hosts::{Counters, sample};
use proptest::prelude::*;

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        (
            prop::sample::select(vec![
                "node_cpu_seconds_total",
                "node_memory_MemTotal_bytes",
                "node_memory_MemAvailable_bytes",
                "node_filesystem_size_bytes",
                "node_filesystem_avail_bytes",
                "node_filesystem_free_bytes",
                "node_disk_io_time_seconds_total",
                "node_load1",
            ]),
            "[a-z=\",{} ]{0,12}",
            prop::num::f64::ANY,
        )
            .prop_map(|(m, labels, v)| format!("{m}{labels} {v}")),
    ]
}

proptest! {
    #[test]
    fn parsing_and_sampling_never_panic(a in prop::collection::vec(line(), 0..20), b in prop::collection::vec(line(), 0..20)) {
        let first = Counters::parse(&a.join("\n"), 1_000);
        let second = Counters::parse(&b.join("\n"), 2_000);
        if let (Ok(x), Ok(y)) = (first, second) {
            let s = sample("h", Some(&x), &y);
            for p in [s.cpu_percent, s.memory_percent, s.disk_percent, s.io_busy_percent].into_iter().flatten() {
                prop_assert!((0.0..=100.0).contains(&p), "{p} in {s:?}");
            }
        }
    }
}
