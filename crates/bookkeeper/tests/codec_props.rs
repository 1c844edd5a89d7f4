//! Property tests of the BookKeeper codecs: metadata round-trips through v3 and v2 text, availability runs
//! round-trip through both encodings and match the naive entry set, paths round-trip, and no decoder panics.

use std::collections::{BTreeMap, BTreeSet};

use mqwatch_bookkeeper::availability::{self, EntryRun};
use mqwatch_bookkeeper::metadata::{DigestType, LedgerMetadata, LedgerState, Segment};
use mqwatch_bookkeeper::paths;
use mqwatch_bookkeeper::textformat::escape;
use mqwatch_bookkeeper::underreplication::UnderReplicatedMark;
use proptest::prelude::*;

fn metadata() -> impl Strategy<Value = LedgerMetadata> {
    let segment = (
        any::<i64>(),
        proptest::collection::vec("[ -~é日]{0,12}", 0..5),
    )
        .prop_map(|(first_entry_id, ensemble)| Segment {
            first_entry_id,
            ensemble,
        });
    (
        (
            any::<i32>(),
            any::<i32>(),
            any::<i32>(),
            any::<i64>(),
            proptest::option::of(any::<i64>()),
        ),
        prop_oneof![
            Just(LedgerState::Open),
            Just(LedgerState::InRecovery),
            Just(LedgerState::Closed)
        ],
        proptest::collection::vec(segment, 0..4),
        proptest::option::of(prop_oneof![
            Just(DigestType::Crc32),
            Just(DigestType::Hmac),
            Just(DigestType::Crc32c),
            Just(DigestType::Dummy)
        ]),
        proptest::option::of(any::<i64>()),
        proptest::collection::btree_map(
            "[ -~]{0,10}",
            proptest::collection::vec(any::<u8>(), 0..10),
            0..3,
        ),
    )
        .prop_map(
            |((wq, aq, e, length, last), state, segments, digest_type, ctime, custom_metadata)| {
                LedgerMetadata {
                    write_quorum: wq,
                    ack_quorum: aq,
                    ensemble_size: e,
                    length,
                    last_entry_id: last,
                    state,
                    segments,
                    digest_type,
                    ctime,
                    custom_metadata,
                }
            },
        )
}

/// Version 2 as Java's `TextFormat.printToString` lays it out.
fn to_v2_text(m: &LedgerMetadata) -> Vec<u8> {
    let mut t = String::from("BookieMetadataFormatVersion\t2\n");
    t += &format!(
        "quorumSize: {}\nensembleSize: {}\nlength: {}\n",
        m.write_quorum, m.ensemble_size, m.length
    );
    if let Some(l) = m.last_entry_id {
        t += &format!("lastEntryId: {l}\n");
    }
    t += &format!(
        "state: {}\n",
        mqwatch_bookkeeper::metadata::state_proto_name(m.state)
    );
    for s in &m.segments {
        t += "segment {\n";
        for b in &s.ensemble {
            t += &format!("  ensembleMember: \"{}\"\n", escape(b.as_bytes()));
        }
        t += &format!("  firstEntryId: {}\n}}\n", s.first_entry_id);
    }
    if let Some(d) = m.digest_type {
        t += &format!("digestType: {}\n", d.proto_name());
    }
    t += "password: \"\"\n";
    t += &format!("ackQuorumSize: {}\n", m.ack_quorum);
    if let Some(c) = m.ctime {
        t += &format!("ctime: {c}\n");
    }
    for (k, v) in &m.custom_metadata {
        t += &format!(
            "customMetadata {{\n  key: \"{}\"\n  value: \"{}\"\n}}\n",
            escape(k.as_bytes()),
            escape(v)
        );
    }
    t.into_bytes()
}

fn runs() -> impl Strategy<Value = Vec<EntryRun>> {
    proptest::collection::vec((0i64..1_000, 1i64..20), 0..30).prop_map(|v| {
        v.into_iter()
            .map(|(start, len)| EntryRun {
                start,
                end_exclusive: start + len,
            })
            .collect()
    })
}

fn entries(runs: &[EntryRun]) -> BTreeSet<i64> {
    runs.iter().flat_map(|r| r.start..r.end_exclusive).collect()
}

fn mutate(mut bytes: Vec<u8>, flips: &[(prop::sample::Index, u8)]) -> Vec<u8> {
    if !bytes.is_empty() {
        for (i, b) in flips {
            let i = i.index(bytes.len());
            bytes[i] ^= b;
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn metadata_v3_round_trips(m in metadata()) {
        prop_assert_eq!(LedgerMetadata::decode(&m.encode_v3()).unwrap(), m);
    }

    #[test]
    fn metadata_v2_text_decodes_equal(m in metadata()) {
        prop_assert_eq!(LedgerMetadata::decode(&to_v2_text(&m)).unwrap(), m);
    }

    #[test]
    fn availability_round_trips_both_encodings(rs in runs()) {
        let merged = availability::merge(rs.clone());
        let naive = entries(&rs);
        prop_assert_eq!(entries(&merged), naive.clone());
        prop_assert!(merged.windows(2).all(|w| w[0].end_exclusive < w[1].start));
        for bytes in [availability::encode_bookie_style(&rs), availability::encode_periodic(&rs)] {
            let decoded = availability::decode(&bytes).unwrap();
            prop_assert_eq!(&decoded, &merged);
            prop_assert_eq!(entries(&decoded), naive.clone());
        }
    }

    #[test]
    fn availability_round_trips_far_apart_runs(starts in proptest::collection::vec(any::<i64>(), 0..10), len in 1i64..1000) {
        let rs: Vec<EntryRun> = starts.iter().map(|&s| EntryRun { start: s.min(i64::MAX - len), end_exclusive: s.min(i64::MAX - len) + len }).collect();
        let merged = availability::merge(rs.clone());
        prop_assert_eq!(availability::decode(&availability::encode_bookie_style(&rs)).unwrap(), merged.clone());
        prop_assert_eq!(availability::decode(&availability::encode_periodic(&rs)).unwrap(), merged);
    }

    #[test]
    fn periodic_groups_equal_naive_expansion(first in 0i64..1000, n in 1i64..50, size in 1i32..6, period in 1i32..10) {
        let last = first + (n - 1) * i64::from(period);
        let g = availability::SequenceGroup {
            first_sequence_start: first, last_sequence_start: last, sequence_size: size, sequence_period: period,
        };
        let decoded = availability::decode(&availability::encode_groups(&[g])).unwrap();
        let naive: BTreeSet<i64> =
            (0..n).flat_map(|k| { let s = first + k * i64::from(period); s..s + i64::from(size) }).collect();
        prop_assert_eq!(entries(&decoded), naive);
    }

    #[test]
    fn ledger_paths_round_trip(id in prop_oneof![0i64..100_000, 0i64..i64::from(i32::MAX), any::<i64>().prop_map(i64::abs), 2147483600i64..2147483700]) {
        let id = id.max(0);
        let p = paths::ledger_path("/ledgers", id).unwrap();
        prop_assert_eq!(paths::ledger_id("/ledgers", &p), Some(id));
        prop_assert_eq!(paths::ledger_id("/ledgers/", &p), Some(id));
        let ur = paths::under_replication_path("/ledgers", id);
        prop_assert_eq!(paths::under_replication_ledger_id("/ledgers", &ur), Some(id));
        prop_assert_eq!(paths::ledger_id("/ledgers", &ur), None);
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = LedgerMetadata::decode(&bytes);
        let _ = LedgerMetadata::decode(&[&b"BookieMetadataFormatVersion\t3\n"[..], &bytes].concat());
        let _ = LedgerMetadata::decode(&[&b"BookieMetadataFormatVersion\t2\n"[..], &bytes].concat());
        let _ = UnderReplicatedMark::decode(&bytes);
        let _ = availability::decode(&bytes);
        let mut with_header = vec![0u8; 64];
        with_header[7] = (bytes.len() / 24) as u8;
        with_header.extend_from_slice(&bytes[..bytes.len() / 24 * 24]);
        let _ = availability::decode(&with_header);
        let s = String::from_utf8_lossy(&bytes);
        let _ = paths::ledger_id("/ledgers", &s);
        let _ = paths::under_replication_ledger_id("/ledgers", &s);
    }

    #[test]
    fn mutated_encodings_never_panic(
        m in metadata(), rs in runs(),
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let _ = LedgerMetadata::decode(&mutate(m.encode_v3(), &flips));
        let _ = LedgerMetadata::decode(&mutate(to_v2_text(&m), &flips));
        let _ = availability::decode(&mutate(availability::encode_bookie_style(&rs), &flips));
        let _ = availability::decode(&mutate(availability::encode_periodic(&rs), &flips));
        let mark = UnderReplicatedMark { replicas: vec!["a:1".into(), "b:2".into()], ctime_ms: Some(5) };
        let _ = UnderReplicatedMark::decode(&mutate(mark.encode_text().into_bytes(), &flips));
    }
}

#[test]
fn minimal_open_ledger_round_trips() {
    let m = LedgerMetadata {
        write_quorum: 1,
        ack_quorum: 1,
        ensemble_size: 1,
        length: 0,
        last_entry_id: None,
        state: LedgerState::Open,
        segments: vec![],
        digest_type: None,
        ctime: None,
        custom_metadata: BTreeMap::new(),
    };
    assert_eq!(LedgerMetadata::decode(&m.encode_v3()).unwrap(), m);
}
