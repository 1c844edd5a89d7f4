//! The `/bookies` rack map (Pulsar's JSON, read from ZooKeeper). Never panics; an error names the znode.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mqwatch_bookkeeper::collector::parse_rack_map;

fuzz_target!(|data: &[u8]| {
    match parse_rack_map("/bookies", data) {
        Ok(racks) => assert!(racks.len() <= data.len()),
        Err(e) => assert_eq!(
            (e.request.as_str(), e.subject.as_str()),
            ("getData", "/bookies")
        ),
    }
});
