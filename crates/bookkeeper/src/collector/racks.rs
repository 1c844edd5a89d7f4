//! The rack map Pulsar deployments keep in ZooKeeper at `/bookies` (next to the ledgers root): JSON grouped by
//! rack group, `{"default": {"host:port": {"rack": "/region/rack", "hostname": "host"}}}`. It owns reading that
//! JSON into bookie id → rack; bytes that are not that JSON are an error naming the znode, never a panic.

use super::CollectError;
use serde::Deserialize;
use std::collections::BTreeMap;

/// One bookie's entry; other fields (`hostname`, …) are ignored.
#[derive(Deserialize)]
struct BookieInfo {
    #[serde(default)]
    rack: Option<String>,
}

/// Where the rack map of the cluster whose ledgers root is `root` lives: `<root>/../bookies` (`/ledgers` →
/// `/bookies`, `/pulsar/ledgers` → `/pulsar/bookies`).
pub fn rack_map_path(root: &str) -> String {
    let root = root.trim_end_matches('/');
    let parent = root.rsplit_once('/').map_or("", |(p, _)| p);
    format!("{parent}/bookies")
}

/// Reads the rack map stored at `path` (named in the error): bookie id → rack. Empty bytes are an empty map;
/// a bookie without a rack (absent or `null`) is left out; a bookie listed in several groups keeps the rack of
/// the first group in name order.
pub fn parse_rack_map(path: &str, bytes: &[u8]) -> Result<BTreeMap<String, String>, CollectError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(BTreeMap::new());
    }
    let groups: BTreeMap<String, BTreeMap<String, BookieInfo>> = serde_json::from_slice(bytes)
        .map_err(|e| CollectError {
            request: "getData".into(),
            subject: path.into(),
            bookie: None,
            error: format!(
                "rack map is not JSON of the shape {{group: {{bookie: {{\"rack\": …}}}}}}: {e}"
            ),
        })?;
    let mut racks = BTreeMap::new();
    for bookies in groups.into_values() {
        for (bookie, info) in bookies {
            if let Some(rack) = info.rack {
                racks.entry(bookie).or_insert(rack);
            }
        }
    }
    Ok(racks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_sit_beside_the_root() {
        assert_eq!(rack_map_path("/ledgers"), "/bookies");
        assert_eq!(rack_map_path("/ledgers/"), "/bookies");
        assert_eq!(rack_map_path("/pulsar/ledgers"), "/pulsar/bookies");
    }

    #[test]
    fn reads_pulsars_json() {
        let json = br#"{"default": {"10.0.0.1:3181": {"rack": "/r1/a", "hostname": "10.0.0.1"},
                        "10.0.0.2:3181": {"hostname": "10.0.0.2"}},
                       "other": {"10.0.0.1:3181": {"rack": "/r9/z"}, "10.0.0.3:3181": {"rack": "/r2/b", "x": 1}}}"#;
        let racks = parse_rack_map("/bookies", json).unwrap();
        assert_eq!(
            racks,
            BTreeMap::from([
                ("10.0.0.1:3181".to_string(), "/r1/a".to_string()),
                ("10.0.0.3:3181".to_string(), "/r2/b".to_string()),
            ])
        );
        assert!(parse_rack_map("/bookies", b"").unwrap().is_empty());
        assert!(parse_rack_map("/bookies", b"{}").unwrap().is_empty());
    }

    #[test]
    fn bad_json_is_an_error_naming_the_path() {
        for bad in [
            &b"{"[..],
            b"[]",
            b"{\"default\": 3}",
            b"{\"default\": {\"h:1\": {\"rack\": 5}}}",
            b"\xff",
            &[b'['; 10_000][..],
        ] {
            let e = parse_rack_map("/pulsar/bookies", bad).unwrap_err();
            assert!(
                e.to_string()
                    .starts_with("getData /pulsar/bookies: rack map"),
                "{e}"
            );
        }
    }
}
