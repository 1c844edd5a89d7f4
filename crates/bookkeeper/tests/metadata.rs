//! Ledger metadata examples: v3 round trip, v2 text as BookKeeper prints it, defaults, segment ranges, and
//! the errors for other versions and corrupt bytes.

use std::collections::BTreeMap;

use mqwatch_bookkeeper::metadata::{
    DigestType, LedgerMetadata, LedgerState, MetadataError, Segment,
};

fn closed() -> LedgerMetadata {
    LedgerMetadata {
        write_quorum: 2,
        ack_quorum: 2,
        ensemble_size: 3,
        length: 1024,
        last_entry_id: Some(9),
        state: LedgerState::Closed,
        segments: vec![
            Segment {
                first_entry_id: 0,
                ensemble: vec!["a:1".into(), "b:1".into(), "c:1".into()],
            },
            Segment {
                first_entry_id: 5,
                ensemble: vec!["a:1".into(), "d:1".into(), "c:1".into()],
            },
            Segment {
                first_entry_id: 10,
                ensemble: vec!["a:1".into(), "d:1".into(), "e:1".into()],
            },
        ],
        digest_type: Some(DigestType::Crc32c),
        ctime: Some(1_700_000_000_000),
        custom_metadata: BTreeMap::from([("app".to_string(), b"pulsar\n\xff".to_vec())]),
    }
}

#[test]
fn v3_round_trip_and_header() {
    let m = closed();
    let bytes = m.encode_v3();
    assert!(bytes.starts_with(b"BookieMetadataFormatVersion\t3\n"));
    assert_eq!(LedgerMetadata::decode(&bytes).unwrap(), m);
}

#[test]
fn v2_text_as_bookkeeper_prints_it() {
    let text = b"BookieMetadataFormatVersion\t2\nquorumSize: 2\nensembleSize: 3\nlength: 1024\nlastEntryId: 9\nstate: CLOSED\nsegment {\n  ensembleMember: \"a:1\"\n  ensembleMember: \"b:1\"\n  ensembleMember: \"c:1\"\n  firstEntryId: 0\n}\nsegment {\n  ensembleMember: \"a:1\"\n  ensembleMember: \"d:1\"\n  ensembleMember: \"c:1\"\n  firstEntryId: 5\n}\nsegment {\n  ensembleMember: \"a:1\"\n  ensembleMember: \"d:1\"\n  ensembleMember: \"e:1\"\n  firstEntryId: 10\n}\ndigestType: CRC32C\npassword: \"\"\nackQuorumSize: 2\nctime: 1700000000000\ncustomMetadata {\n  key: \"app\"\n  value: \"pulsar\\n\\377\"\n}\n";
    assert_eq!(LedgerMetadata::decode(text).unwrap(), closed());
}

#[test]
fn ack_quorum_defaults_to_write_quorum_and_state_to_open() {
    let m = LedgerMetadata::decode(
        b"BookieMetadataFormatVersion\t2\nquorumSize: 3 ensembleSize: 3 length: 0",
    )
    .unwrap();
    assert_eq!(
        (m.write_quorum, m.ack_quorum, m.state),
        (3, 3, LedgerState::Open)
    );
    assert!(!m.layout(1).is_closed_and_non_empty());
}

#[test]
fn segment_ranges() {
    let m = closed();
    assert_eq!(m.layout(1).segment_range(0), Some(0..=4));
    assert_eq!(m.layout(1).segment_range(1), Some(5..=9));
    assert!(m.layout(1).segment_range(2).unwrap().is_empty());
    assert_eq!(m.layout(1).segment_range(3), None);
    assert!(m.layout(1).is_closed_and_non_empty());
    let empty = LedgerMetadata {
        last_entry_id: Some(-1),
        ..closed()
    };
    assert!(!empty.layout(1).is_closed_and_non_empty());
}

#[test]
fn rejects_other_versions_and_corruption() {
    let e = LedgerMetadata::decode(b"BookieMetadataFormatVersion\t1\n3\n").unwrap_err();
    assert_eq!(e, MetadataError::UnsupportedVersion("1".into()));
    assert!(e.to_string().contains("version 1"));
    assert_eq!(
        LedgerMetadata::decode(b"garbage"),
        Err(MetadataError::NoHeader)
    );
    assert_eq!(
        LedgerMetadata::decode(b"BookieMetadataFormatVersion\t3"),
        Err(MetadataError::NoHeader)
    );
    let mut v3 = closed().encode_v3();
    v3.truncate(v3.len() - 3);
    assert!(matches!(
        LedgerMetadata::decode(&v3),
        Err(MetadataError::Protobuf(_))
    ));
    let v2 = |body: &str| {
        LedgerMetadata::decode(format!("BookieMetadataFormatVersion\t2\n{body}").as_bytes())
    };
    assert_eq!(
        v2("ensembleSize: 3 length: 0"),
        Err(MetadataError::Missing("quorumSize"))
    );
    assert!(matches!(
        v2("quorumSize: 3 ensembleSize: 3 length: 0 state: GONE"),
        Err(MetadataError::Text(_))
    ));
    assert_eq!(
        v2("quorumSize: 3 ensembleSize: 3 length: 0 state: 9"),
        Err(MetadataError::UnknownEnum {
            field: "state",
            value: 9
        })
    );
    assert!(matches!(
        v2("quorumSize: 99999999999 ensembleSize: 3 length: 0"),
        Err(MetadataError::Text(_))
    ));
    assert!(matches!(
        v2("quorumSize: 3 segment { firstEntryId: 0"),
        Err(MetadataError::Text(_))
    ));
}
