//! A client report posted to `POST /api/v1/client-reports`: any bytes decode to a report or an error, never a
//! panic; a report that decodes re-encodes and decodes to the same thing.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mqwatch_client::Report;

fuzz_target!(|data: &[u8]| {
    if let Ok((report, latencies)) = Report::from_json(data) {
        assert_eq!(report.entries.len(), latencies.len());
        let (again, _) = Report::from_json(&report.to_json()).expect("re-encoded report decodes");
        assert_eq!(again, report);
    }
});
