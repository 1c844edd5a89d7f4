//! An under-replication mark znode's value (protobuf text of `UnderreplicatedLedgerFormat`). Never panics;
//! whatever decodes re-encodes as BookKeeper's text printer would and decodes equal.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mqwatch_bookkeeper::underreplication::UnderReplicatedMark;

fuzz_target!(|data: &[u8]| {
    if let Ok(mark) = UnderReplicatedMark::decode(data) {
        let again = UnderReplicatedMark::decode(mark.encode_text().as_bytes())
            .expect("the printed text decodes");
        assert_eq!(again, mark);
    }
});
