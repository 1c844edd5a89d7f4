//! Ledger metadata znode values (BookKeeper format versions 2 and 3, and anything else). Whatever decodes
//! re-encodes as version 3 and decodes equal.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mqwatch_bookkeeper::metadata::LedgerMetadata;
use mqwatch_bookkeeper::underreplication::UnderReplicatedMark;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = LedgerMetadata::decode(data) {
        let again = LedgerMetadata::decode(&m.encode_v3()).expect("v3 re-encoding decodes");
        assert_eq!(again, m);
        for i in 0..m.segments.len() {
            let _ = m.layout(0).segment_range(i);
        }
    }
    let _ = UnderReplicatedMark::decode(data);
});
