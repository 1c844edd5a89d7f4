//! A Kafka response body as mqwatch's client handles it: the first byte picks one of the APIs the response
//! guard covers, the second a version in its range, the rest is the body (after the response header). Guard,
//! kafka-protocol's decoder, then the bytes inside (Fetch record batches, DescribeGroups member blobs). Run with
//! a malloc limit: a count the guard let through would make the decoder reserve past it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mqwatch_kafka::guard;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let apis: Vec<_> = guard::apis().collect();
    let (key, range) = apis[data[0] as usize % apis.len()];
    let span = (range.max - range.min + 1) as usize;
    let version = range.min + (data[1] as usize % span) as i16;
    let _ = guard::decode_any(key, version, &data[2..]);
});
