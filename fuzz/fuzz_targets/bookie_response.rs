//! A bookie's protocol-v3 response frame body, and the availability bytes inside it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mqwatch_bookkeeper::availability::decode_with_limit;
use mqwatch_bookkeeper::bookie::wire::Response;
use prost::Message;

fuzz_target!(|data: &[u8]| {
    if let Ok(resp) = Response::decode(data) {
        let bytes = resp
            .get_list_of_entries_of_ledger
            .and_then(|b| b.availability_of_entries_of_ledger)
            .unwrap_or_default();
        let _ = decode_with_limit(&bytes, 100_000);
    }
});
