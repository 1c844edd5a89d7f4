//! Client latency reports: the histogram wire form. Whatever decodes must re-encode to the same bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mqwatch_stats::histogram::Snapshot;

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = Snapshot::decode(data) {
        assert_eq!(s.encode(), data);
        let _ = s.summary();
    }
});
