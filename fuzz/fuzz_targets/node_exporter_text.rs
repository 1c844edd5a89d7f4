//! A node_exporter's `/metrics` answer: any text parses to counters or an error, never a panic, and a sample
//! from two such looks never panics either.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mqwatch_hosts::{Counters, sample};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(c) = Counters::parse(&text, 1_000) {
        let later = Counters { at_ms: 2_000, ..c.clone() };
        let _ = sample("h:9100", Some(&c), &later);
    }
});
