//! The metadata reader against a REAL ZooKeeper (Debian's 3.8, started by mqwatch-testkit on a free port, stopped
//! by PID). The test writes what a BookKeeper cluster writes, in BookKeeper's own formats: bookie registrations
//! (ephemeral) and cookies, ledger metadata v3 in both path layouts, an under-replication mark in protobuf text,
//! and the non-ledger znodes a real root holds; then reads it all back through `MetadataReader`.

use mqwatch_bookkeeper::metadata::{DigestType, LedgerMetadata, LedgerState, Segment};
use mqwatch_bookkeeper::paths::{ledger_path, under_replication_path};
use mqwatch_bookkeeper::underreplication::UnderReplicatedMark;
use mqwatch_bookkeeper::zk::{MetadataReader, ZkError};
use mqwatch_testkit::bookkeeper::put;
use mqwatch_testkit::zookeeper::ZooKeeper;
use std::time::Duration;
use zookeeper_client::CreateMode;

fn ledger(last: i64, ensembles: &[(i64, [&str; 3])]) -> LedgerMetadata {
    LedgerMetadata {
        write_quorum: 2,
        ack_quorum: 2,
        ensemble_size: 3,
        length: 1024,
        last_entry_id: Some(last),
        state: LedgerState::Closed,
        segments: ensembles
            .iter()
            .map(|(first, e)| Segment {
                first_entry_id: *first,
                ensemble: e.iter().map(|s| s.to_string()).collect(),
            })
            .collect(),
        digest_type: Some(DigestType::Crc32c),
        ctime: Some(1_700_000_000_000),
        custom_metadata: Default::default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_bookies_ledgers_and_marks_written_in_bookkeepers_formats() {
    let zk = ZooKeeper::start();
    let reader = MetadataReader::connect(&zk.addr, "/ledgers", Duration::from_secs(10))
        .await
        .unwrap();
    let c = reader.client();
    let (b1, b2, b3, b4) = (
        "10.0.0.1:3181",
        "10.0.0.2:3181",
        "10.0.0.3:3181",
        "10.0.0.4:3181",
    );
    for b in [b1, b2, b3, b4] {
        put(
            c,
            &format!("/ledgers/cookies/{b}"),
            b"cookie",
            CreateMode::Persistent,
        )
        .await;
    }
    for b in [b1, b2] {
        put(
            c,
            &format!("/ledgers/available/{b}"),
            b"",
            CreateMode::Ephemeral,
        )
        .await;
    }
    put(
        c,
        &format!("/ledgers/available/readonly/{b3}"),
        b"",
        CreateMode::Ephemeral,
    )
    .await;
    put(
        c,
        "/ledgers/LAYOUT",
        b"2\norg.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory:1",
        CreateMode::Persistent,
    )
    .await;
    put(c, "/ledgers/INSTANCEID", b"abc", CreateMode::Persistent).await;
    put(
        c,
        "/ledgers/idgen/ID-0000000001",
        b"",
        CreateMode::Persistent,
    )
    .await;

    let short = ledger(9, &[(0, [b1, b2, b3]), (5, [b1, b2, b4])]);
    let long = ledger(3, &[(0, [b2, b3, b4])]);
    let long_id = 2_147_483_648;
    put(
        c,
        &ledger_path("/ledgers", 1).unwrap(),
        &short.encode_v3(),
        CreateMode::Persistent,
    )
    .await;
    put(
        c,
        &ledger_path("/ledgers", long_id).unwrap(),
        &long.encode_v3(),
        CreateMode::Persistent,
    )
    .await;
    put(
        c,
        &ledger_path("/ledgers", 7).unwrap(),
        b"BookieMetadataFormatVersion\t1\nquorum 2",
        CreateMode::Persistent,
    )
    .await;
    let mark = UnderReplicatedMark {
        replicas: vec![b4.into()],
        ctime_ms: Some(1_700_000_100_000),
    };
    put(
        c,
        &under_replication_path("/ledgers", 1),
        mark.encode_text().as_bytes(),
        CreateMode::Persistent,
    )
    .await;

    let bookies = reader.bookies().await.unwrap();
    assert_eq!(bookies.writable, vec![b1.to_string(), b2.to_string()]);
    assert_eq!(bookies.read_only, vec![b3.to_string()]);
    assert_eq!(bookies.cookies.len(), 4);

    assert_eq!(reader.ledger_ids().await.unwrap(), vec![1, 7, long_id]);
    let (got, version) = reader.ledger(1).await.unwrap().unwrap();
    assert_eq!((got, version), (short, 0));
    assert_eq!(reader.ledger(long_id).await.unwrap().unwrap().0, long);
    assert!(reader.ledger(5).await.unwrap().is_none());
    match reader.ledger(7).await {
        Err(e @ ZkError::Metadata { .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("/ledgers/00/0000/L0007") && text.contains('1'),
                "{text}"
            );
        }
        other => panic!("a v1 ledger must be a named error: {other:?}"),
    }
    assert_eq!(reader.under_replication_mark(1).await.unwrap(), Some(mark));
    assert_eq!(reader.under_replication_mark(long_id).await.unwrap(), None);
}

#[tokio::test]
async fn no_zookeeper_is_a_connect_error_naming_the_address() {
    let addr = format!("127.0.0.1:{}", mqwatch_testkit::free_port());
    let err = MetadataReader::connect(&addr, "/ledgers", Duration::from_secs(2))
        .await
        .err()
        .expect("no server");
    assert!(
        matches!(err, ZkError::Connect { .. }) && err.to_string().contains(&addr),
        "{err}"
    );
}
