//! A bookie's `availabilityOfEntriesOfLedger`. Whatever decodes is sorted and merged, and re-encodes (bookie
//! style and periodic) to the same runs.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mqwatch_bookkeeper::availability::{decode_with_limit, encode_bookie_style, encode_periodic};

fuzz_target!(|data: &[u8]| {
    if let Ok(runs) = decode_with_limit(data, 100_000) {
        assert!(runs.iter().all(|r| r.start < r.end_exclusive));
        assert!(runs.windows(2).all(|w| w[0].end_exclusive < w[1].start));
        assert_eq!(
            decode_with_limit(&encode_bookie_style(&runs), u64::MAX).unwrap(),
            runs
        );
        assert_eq!(
            decode_with_limit(&encode_periodic(&runs), u64::MAX).unwrap(),
            runs
        );
    }
});
