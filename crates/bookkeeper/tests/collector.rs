//! The collector against a REAL ZooKeeper (Debian's 3.8, started by mqwatch-testkit on a free port, stopped by
//! PID) holding what a BookKeeper cluster writes, in BookKeeper's formats: `initnewcluster`'s znodes, ledger
//! metadata v3 (`LedgerMetadata::encode_v3`) at the real hierarchical and long-hierarchical paths, protobuf-text
//! under-replication marks, bookie registrations (ephemeral, each in the bookie's own session) and cookies, and
//! Pulsar's `/bookies` rack JSON. The bookies are NOT real bookies (none can be installed here): they are
//! mqwatch-testkit's `TestBookie`, an independent protocol-v3 implementation that answers byte for byte as a
//! BookKeeper 4.18 bookie and counts what it is asked. Nothing waits by sleeping: changes are polled with a
//! deadline, and "fast" is measured.

use futures::future::join_all;
use mqwatch_bookkeeper::collector::{CONNECTIONS_PER_BOOKIE, Collector, Target};
use mqwatch_bookkeeper::metadata::{DigestType, LedgerMetadata, LedgerState, Segment};
use mqwatch_bookkeeper::paths::{ledger_path, under_replication_path};
use mqwatch_bookkeeper::underreplication::UnderReplicatedMark;
use mqwatch_model::{BookieAnswer, EntryRun, NodeRole, UnderReplicationMark};
use mqwatch_testkit::bookkeeper::{
    TestBookie, connect, init_cluster, poll_until_async, put, put_rack_map,
};
use mqwatch_testkit::zookeeper::ZooKeeper;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use zookeeper_client::{Client, CreateMode};

const ROOT: &str = "/ledgers";

async fn zookeeper() -> (ZooKeeper, Client) {
    let zk = tokio::task::spawn_blocking(ZooKeeper::start)
        .await
        .expect("start ZooKeeper");
    let client = connect(&zk.addr).await;
    init_cluster(&client, ROOT).await;
    (zk, client)
}

fn metadata(
    state: LedgerState,
    last: Option<i64>,
    (e, wq, aq): (i32, i32, i32),
    segments: &[(i64, &[&str])],
) -> LedgerMetadata {
    LedgerMetadata {
        write_quorum: wq,
        ack_quorum: aq,
        ensemble_size: e,
        length: 4096,
        last_entry_id: last,
        state,
        segments: segments
            .iter()
            .map(|(first, ensemble)| Segment {
                first_entry_id: *first,
                ensemble: ensemble.iter().map(|b| b.to_string()).collect(),
            })
            .collect(),
        digest_type: Some(DigestType::Crc32c),
        ctime: Some(1_700_000_000_000),
        custom_metadata: Default::default(),
    }
}

async fn write_ledger(client: &Client, id: u64, m: &LedgerMetadata) {
    let path = ledger_path(ROOT, id as i64).unwrap();
    put(client, &path, &m.encode_v3(), CreateMode::Persistent).await;
}

/// What member `index` of the only segment of `m` must hold (the model's replica schedule).
fn share(m: &LedgerMetadata, id: u64, index: usize) -> Vec<EntryRun> {
    m.layout(id)
        .stripes(0, index)
        .map(|s| s.runs().collect())
        .unwrap_or_default()
}

fn target(zk: &ZooKeeper, timeout: Duration) -> Target {
    Target {
        timeout,
        ..Target::new("bk-test", &zk.addr)
    }
}

fn r(start: i64, end_exclusive: i64) -> EntryRun {
    EntryRun::new(start, end_exclusive)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registry_lists_writable_read_only_and_cookie_only_bookies_with_racks() {
    let (zk, client) = zookeeper().await;
    let mut writable = TestBookie::start([]).await;
    let mut read_only = TestBookie::start([]).await;
    let mut left = TestBookie::start([]).await;
    let mut dropped = TestBookie::start([]).await;
    let (w, ro, l, d) = (
        writable.addr().to_string(),
        read_only.addr().to_string(),
        left.addr().to_string(),
        dropped.addr().to_string(),
    );
    writable.register(&zk.addr, ROOT, &w, false).await;
    read_only.register(&zk.addr, ROOT, &ro, true).await;
    left.register(&zk.addr, ROOT, &l, false).await;
    dropped.register(&zk.addr, ROOT, &d, false).await;
    left.deregister().await;
    put_rack_map(
        &client,
        "/bookies",
        &[(w.as_str(), "/r1/a"), (ro.as_str(), "/r1/b")],
    )
    .await;

    let mut t = target(&zk, Duration::from_secs(10));
    t.racks.insert(ro.clone(), "/r2/override".into());
    let collector = Collector::connect(&t).await.unwrap();
    let registry = collector.registry().await.unwrap();
    let mut expected_writable = vec![w.clone(), d.clone()];
    expected_writable.sort();
    assert_eq!(registry.writable, expected_writable);
    assert_eq!(registry.read_only, vec![ro.clone()]);
    let mut all = vec![w.clone(), ro.clone(), l.clone(), d.clone()];
    all.sort();
    assert_eq!(registry.cookies, all, "a bookie that left keeps its cookie");
    assert_eq!(
        registry.racks,
        BTreeMap::from([
            (w.clone(), "/r1/a".into()),
            (ro.clone(), "/r2/override".into())
        ]),
        "config racks override the /bookies map"
    );
    let cookie = client
        .get_data(&format!("{ROOT}/cookies/{w}"))
        .await
        .unwrap()
        .0;
    assert!(
        cookie.starts_with(format!("4\nbookieHost: \"{w}\"\n").as_bytes()),
        "{}",
        String::from_utf8_lossy(&cookie)
    );

    // A bookie whose process is gone loses its registration with its session.
    drop(dropped);
    poll_until_async(
        "the dropped bookie's registration to go",
        Duration::from_secs(30),
        || async {
            let r = collector.registry().await.unwrap();
            (r.writable == vec![w.clone()]).then_some(())
        },
    )
    .await;

    put(
        &client,
        "/bookies",
        b"{\"default\": [",
        CreateMode::Persistent,
    )
    .await;
    let e = collector.registry().await.unwrap_err();
    assert_eq!(
        (e.request.as_str(), e.subject.as_str()),
        ("getData", "/bookies"),
        "{e}"
    );
    assert!(e.to_string().contains("rack map"), "{e}");
    drop(collector);
    drop(zk);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn observes_ledgers_asking_only_the_bookies_with_a_share() {
    let (zk, client) = zookeeper().await;
    let (b1, b2, b3) = (
        TestBookie::start([]).await,
        TestBookie::start([]).await,
        TestBookie::start([]).await,
    );
    let (a1, a2, a3) = (
        b1.addr().to_string(),
        b2.addr().to_string(),
        b3.addr().to_string(),
    );
    let ensemble: &[&str] = &[&a1, &a2, &a3];
    let closed = |last: i64| metadata(LedgerState::Closed, Some(last), (3, 2, 2), &[(0, ensemble)]);

    // Ledger 1: entries 0..=9 over E 3, WQ 2; every bookie holds its share.
    let healthy = closed(9);
    write_ledger(&client, 1, &healthy).await;
    assert_eq!(
        share(&healthy, 1, 0),
        vec![r(0, 1), r(2, 4), r(5, 7), r(8, 10)],
        "bookie 0 of 3 with WQ 2 holds e mod 3 in {{0, 2}}"
    );
    // Ledger 2: one entry, so the third bookie has no share. Ledger 3: the second bookie holds nothing.
    let one_entry = closed(0);
    write_ledger(&client, 2, &one_entry).await;
    let lost = closed(5);
    write_ledger(&client, 3, &lost).await;
    // Ledgers at the path boundary: 2^31 - 2 is the last hierarchical id, 2^31 - 1 the first long one.
    let (short_max, long_min) = ((1u64 << 31) - 2, (1u64 << 31) - 1);
    write_ledger(&client, short_max, &closed(2)).await;
    write_ledger(&client, long_min, &closed(2)).await;
    for (i, b) in [&b1, &b2, &b3].into_iter().enumerate() {
        for (id, m) in [
            (1, &healthy),
            (2, &one_entry),
            (short_max, &closed(2)),
            (long_min, &closed(2)),
        ] {
            b.set(id, share(m, id, i));
        }
        if i != 1 {
            b.set(3, share(&lost, 3, i));
        }
    }
    assert!(
        ledger_path(ROOT, short_max as i64)
            .unwrap()
            .ends_with("/21/4748/L3646")
    );
    assert!(
        ledger_path(ROOT, long_min as i64)
            .unwrap()
            .ends_with("/000/0000/0021/4748/L3647")
    );
    // Ledger 4 is open, 5 closed but empty, 6 marked under-replicated: no bookie is asked about them.
    write_ledger(
        &client,
        4,
        &metadata(LedgerState::Open, None, (3, 2, 2), &[(0, ensemble)]),
    )
    .await;
    write_ledger(&client, 5, &closed(-1)).await;
    write_ledger(&client, 6, &closed(9)).await;
    let mark = UnderReplicatedMark {
        replicas: vec![a3.clone()],
        ctime_ms: Some(1_700_000_100_000),
    };
    put(
        &client,
        &under_replication_path(ROOT, 6),
        mark.encode_text().as_bytes(),
        CreateMode::Persistent,
    )
    .await;
    // Ledger 7's znode is not ledger metadata. Ledger 8 names a bookie by an id that is not host:port.
    let corrupt = ledger_path(ROOT, 7).unwrap();
    put(
        &client,
        &corrupt,
        b"BookieMetadataFormatVersion\t3\n\xff\xff",
        CreateMode::Persistent,
    )
    .await;
    write_ledger(
        &client,
        8,
        &metadata(
            LedgerState::Closed,
            Some(1),
            (2, 2, 2),
            &[(0, &["bookie-zero", a1.as_str()])],
        ),
    )
    .await;
    b1.set(8, vec![r(0, 2)]);

    let collector = Collector::connect(&target(&zk, Duration::from_secs(10)))
        .await
        .unwrap();
    assert_eq!(
        collector.ledger_ids().await.unwrap(),
        vec![1, 2, 3, 4, 5, 6, 7, 8, short_max, long_min]
    );

    let o = collector.observe(1).await.unwrap().unwrap();
    assert_eq!(o.layout, healthy.layout(1));
    assert_eq!((o.metadata_version, &o.mark), (0, &None));
    let expected: BTreeMap<String, BookieAnswer> = [&a1, &a2, &a3]
        .into_iter()
        .enumerate()
        .map(|(i, a)| {
            (
                a.clone(),
                BookieAnswer::Entries {
                    runs: share(&healthy, 1, i),
                },
            )
        })
        .collect();
    assert_eq!(o.answers, expected);

    let o = collector.observe(2).await.unwrap().unwrap();
    let mut shared = vec![&a1, &a2];
    shared.sort();
    assert_eq!(o.answers.keys().collect::<Vec<_>>(), shared);
    assert_eq!(
        (b1.asked(2), b2.asked(2), b3.asked(2)),
        (1, 1, 0),
        "no share, not asked"
    );

    let o = collector.observe(3).await.unwrap().unwrap();
    assert_eq!(o.answers[&a2], BookieAnswer::NoLedger);
    assert_eq!(
        o.answers[&a1],
        BookieAnswer::Entries {
            runs: share(&lost, 3, 0)
        }
    );

    for id in [short_max, long_min] {
        let o = collector.observe(id).await.unwrap().unwrap();
        assert_eq!(o.layout.id, id);
        assert_eq!(o.answers.len(), 3, "ledger {id}");
        assert!(
            o.answers
                .values()
                .all(|a| matches!(a, BookieAnswer::Entries { runs } if !runs.is_empty())),
            "ledger {id}: {:?}",
            o.answers
        );
    }

    for id in [4, 5, 6] {
        let o = collector.observe(id).await.unwrap().unwrap();
        assert!(o.answers.is_empty(), "ledger {id}: {:?}", o.answers);
        assert_eq!(
            [&b1, &b2, &b3].map(|b| b.asked(id)),
            [0, 0, 0],
            "ledger {id}"
        );
    }
    assert_eq!(
        collector.observe(4).await.unwrap().unwrap().layout.state,
        LedgerState::Open
    );
    assert_eq!(
        collector.observe(6).await.unwrap().unwrap().mark,
        Some(UnderReplicationMark {
            replicas: vec![a3.clone()],
            marked_at_ms: Some(1_700_000_100_000),
        })
    );

    let e = collector.observe(7).await.unwrap_err();
    assert_eq!(
        (e.request.as_str(), e.subject.as_str()),
        ("getData", corrupt.as_str()),
        "{e}"
    );
    assert!(e.to_string().contains(&corrupt), "{e}");
    assert_eq!(e.record().node, None);

    let o = collector.observe(8).await.unwrap().unwrap();
    match &o.answers["bookie-zero"] {
        BookieAnswer::Unreachable { reason } => assert!(reason.contains("host:port"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        o.answers[&a1],
        BookieAnswer::Entries {
            runs: vec![r(0, 2)]
        }
    );

    assert!(collector.observe(99).await.unwrap().is_none());
    assert_eq!(collector.metadata_version(99).await.unwrap(), None);
    assert!(collector.unreachable().is_empty());

    // A rewrite (as the auditor's re-read must notice) moves the znode version.
    assert_eq!(collector.metadata_version(1).await.unwrap(), Some(0));
    write_ledger(&client, 1, &healthy).await;
    assert_eq!(collector.metadata_version(1).await.unwrap(), Some(1));
    assert_eq!(
        collector
            .observe(1)
            .await
            .unwrap()
            .unwrap()
            .metadata_version,
        1
    );

    // One connection per bookie served every sequential request; concurrent ones open at most the cap.
    assert_eq!([&b1, &b2, &b3].map(|b| b.connections()), [1, 1, 1]);
    let all = join_all((0..3 * CONNECTIONS_PER_BOOKIE).map(|_| collector.observe(1))).await;
    assert!(
        all.iter()
            .all(|o| o.as_ref().unwrap().as_ref().unwrap().answers == expected)
    );
    for b in [&b1, &b2, &b3] {
        assert!(
            b.connections() as usize <= CONNECTIONS_PER_BOOKIE,
            "{}",
            b.connections()
        );
    }
    drop(collector);
    drop(zk);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_bookie_is_remembered_until_a_probe_finds_it_answering() {
    let (zk, client) = zookeeper().await;
    let live = TestBookie::start([]).await;
    let mut gone = TestBookie::start([]).await;
    let hung = TestBookie::start([]).await;
    let (al, ag, ah) = (
        live.addr().to_string(),
        gone.addr().to_string(),
        hung.addr().to_string(),
    );
    // Ledgers 1 and 2 on {live, gone}, 3 and 4 on {live, hung}: E = WQ = 2, entries 0..=3.
    for (id, other) in [(1, &ag), (2, &ag), (3, &ah), (4, &ah)] {
        let m = metadata(
            LedgerState::Closed,
            Some(3),
            (2, 2, 2),
            &[(0, &[al.as_str(), other.as_str()])],
        );
        write_ledger(&client, id, &m).await;
        for b in [&live, &gone, &hung] {
            b.set(id, vec![r(0, 4)]);
        }
    }
    let timeout = Duration::from_secs(2);
    let collector = Collector::connect(&target(&zk, timeout)).await.unwrap();

    gone.stop().await;
    let o = collector.observe(1).await.unwrap().unwrap();
    assert_eq!(
        o.answers[&al],
        BookieAnswer::Entries {
            runs: vec![r(0, 4)]
        }
    );
    match &o.answers[&ag] {
        BookieAnswer::Unreachable { reason } => assert!(reason.contains(&ag), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(collector.unreachable().contains_key(&ag));
    match &collector.observe(2).await.unwrap().unwrap().answers[&ag] {
        BookieAnswer::Unreachable { reason } => assert!(reason.contains("remembered"), "{reason}"),
        other => panic!("{other:?}"),
    }

    // A hung bookie costs one timeout, then its later ledgers are answered at once without asking it.
    hung.silence();
    let started = Instant::now();
    let o = collector.observe(3).await.unwrap().unwrap();
    assert!(
        matches!(o.answers[&ah], BookieAnswer::Unreachable { .. }),
        "{:?}",
        o.answers
    );
    assert!(started.elapsed() >= timeout);
    poll_until_async(
        "the hung bookie to have read the request",
        timeout,
        || async { (hung.asked(3) == 1).then_some(()) },
    )
    .await;
    let started = Instant::now();
    let o = collector.observe(4).await.unwrap().unwrap();
    let elapsed = started.elapsed();
    assert!(
        elapsed < timeout / 2,
        "remembered answers must not wait: {elapsed:?}"
    );
    assert!(
        matches!(o.answers[&ah], BookieAnswer::Unreachable { .. }),
        "{:?}",
        o.answers
    );
    assert_eq!(
        o.answers[&al],
        BookieAnswer::Entries {
            runs: vec![r(0, 4)]
        }
    );
    assert_eq!(hung.asked(4), 0);

    let e = collector.probe(&ah).await.unwrap_err();
    assert!(
        e.to_string().contains("GET_BOOKIE_INFO") && e.to_string().contains(&ah),
        "{e}"
    );
    let node = e.record().node.unwrap();
    assert_eq!(
        (node.role, node.name.as_str()),
        (NodeRole::Bookie, ah.as_str())
    );
    assert!(collector.unreachable().contains_key(&ah));

    // It recovers: a probe finds it answering, and it is asked again.
    hung.resume();
    collector.probe(&ah).await.unwrap();
    assert!(!collector.unreachable().contains_key(&ah));
    let o = collector.observe(4).await.unwrap().unwrap();
    assert_eq!(
        o.answers[&ah],
        BookieAnswer::Entries {
            runs: vec![r(0, 4)]
        }
    );
    assert_eq!(hung.asked(4), 1);

    assert!(collector.probe(&ag).await.is_err());
    assert_eq!(
        collector.unreachable().keys().collect::<Vec<_>>(),
        vec![&ag]
    );
    drop(collector);
    drop(zk);
}
