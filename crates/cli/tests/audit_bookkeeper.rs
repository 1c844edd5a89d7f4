//! `mqwatch audit bookkeeper` and `mqwatch check --zk`, end to end: the real `mqwatch` binary against a REAL
//! ZooKeeper (Debian's 3.8, started by mqwatch-testkit on a free port, stopped by PID) that holds what a
//! BookKeeper cluster writes, in BookKeeper's formats (ledger metadata v3 at the real paths, protobuf-text
//! under-replication marks, Pulsar's `/bookies` rack JSON, bookie registrations and cookies). The bookies are NOT
//! real (none can be installed here): they are mqwatch-testkit's `TestBookie`, an independent protocol-v3 server
//! answering GET_LIST_OF_ENTRIES_OF_LEDGER and GET_BOOKIE_INFO byte for byte as a BookKeeper 4.18 bookie, whose
//! stored entries each test controls. Nothing waits by sleeping: the binary runs to its end, or the test polls.

use mqwatch_bookkeeper::metadata::{DigestType, LedgerMetadata, LedgerState, Segment};
use mqwatch_bookkeeper::paths::{ledger_path, under_replication_path};
use mqwatch_bookkeeper::underreplication::UnderReplicatedMark;
use mqwatch_model::EntryRun;
use mqwatch_testkit::bookkeeper::{
    TestBookie, connect, init_cluster, poll_until_async, put, put_rack_map,
};
use mqwatch_testkit::zookeeper::ZooKeeper;
use serde_json::Value;
use std::process::{Command, Output};
use std::time::Duration;
use zookeeper_client::{Client, CreateMode};

const ROOT: &str = "/ledgers";
const LAST: i64 = 9;

struct Cluster {
    zk: ZooKeeper,
    client: Client,
    bookies: Vec<TestBookie>,
    state: tempfile::TempDir,
}

impl Cluster {
    /// ZooKeeper with an initialised root and `n` registered bookies holding nothing yet.
    async fn start(n: usize) -> Cluster {
        let zk = tokio::task::spawn_blocking(ZooKeeper::start)
            .await
            .expect("start ZooKeeper");
        let client = connect(&zk.addr).await;
        init_cluster(&client, ROOT).await;
        let mut bookies = Vec::new();
        for _ in 0..n {
            let mut b = TestBookie::start([]).await;
            let id = b.addr().to_string();
            b.register(&zk.addr, ROOT, &id, false).await;
            bookies.push(b);
        }
        Cluster {
            zk,
            client,
            bookies,
            state: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn id(&self, i: usize) -> String {
        self.bookies[i].addr().to_string()
    }

    /// Writes closed ledger `id` (entries 0..=LAST, one segment on `ensemble`, quorums `wq`/`aq`) and lets every
    /// ensemble member hold all its entries except `lost` (bookie index → lost runs).
    async fn ledger(
        &self,
        id: u64,
        ensemble: &[usize],
        (wq, aq): (i32, i32),
        lost: &[(usize, EntryRun)],
    ) {
        let meta = metadata(
            LedgerState::Closed,
            Some(LAST),
            ensemble.iter().map(|&i| self.id(i)).collect(),
            (wq, aq),
        );
        self.write(id, &meta).await;
        let e = ensemble.len() as i64;
        for (pos, &b) in ensemble.iter().enumerate() {
            // Bookie at ensemble position `pos` holds entry x iff (pos - x) mod E < WQ.
            let mut runs: Vec<EntryRun> = (0..=LAST)
                .filter(|x| (pos as i64 - x).rem_euclid(e) < i64::from(wq))
                .filter(|x| {
                    !lost
                        .iter()
                        .any(|(l, r)| *l == b && r.start <= *x && *x < r.end_exclusive)
                })
                .map(|x| EntryRun::new(x, x + 1))
                .collect();
            runs.dedup();
            self.bookies[b].set(id, runs);
        }
    }

    async fn write(&self, id: u64, meta: &LedgerMetadata) {
        let path = ledger_path(ROOT, id as i64).expect("ledger path");
        put(
            &self.client,
            &path,
            &meta.encode_v3(),
            CreateMode::Persistent,
        )
        .await;
    }

    fn mqwatch(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_mqwatch"));
        c.args(args).args([
            "--state-dir",
            self.state.path().to_str().expect("utf-8 path"),
        ]);
        c
    }

    /// `mqwatch audit bookkeeper --json` with quick re-probes, run to its end off the async runtime.
    async fn audit(&self, extra: &[&str]) -> (Option<i32>, Value) {
        let mut args = vec![
            "audit",
            "bookkeeper",
            "--zk",
            &self.zk.addr,
            "--json",
            "--rechecks",
            "2",
            "--recheck-delay",
            "200ms",
            "--timeout",
            "5s",
        ];
        args.extend_from_slice(extra);
        let cmd = self.mqwatch(&args);
        run(cmd).await
    }
}

async fn run(mut cmd: Command) -> (Option<i32>, Value) {
    let out: Output = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run mqwatch");
    parse(out)
}

fn parse(out: Output) -> (Option<i32>, Value) {
    let doc = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), doc)
}

fn metadata(
    state: LedgerState,
    last: Option<i64>,
    ensemble: Vec<String>,
    (wq, aq): (i32, i32),
) -> LedgerMetadata {
    LedgerMetadata {
        write_quorum: wq,
        ack_quorum: aq,
        ensemble_size: ensemble.len() as i32,
        length: 4096,
        last_entry_id: last,
        state,
        segments: vec![Segment {
            first_entry_id: 0,
            ensemble,
        }],
        digest_type: Some(DigestType::Crc32c),
        ctime: Some(1_700_000_000_000),
        custom_metadata: Default::default(),
    }
}

fn ledgers(doc: &Value) -> &Value {
    &doc["clusters"][0]["ledgers"]
}

/// The violations of ledger `id`: (kind, the JSON record).
fn violations_of(doc: &Value, id: u64) -> Vec<(String, Value)> {
    ledgers(doc)["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .filter(|v| v["ledger"] == id)
        .map(|v| (v["kind"].as_str().expect("kind").to_string(), v.clone()))
        .collect()
}

fn finding_kinds(doc: &Value) -> Vec<String> {
    let mut k: Vec<String> = doc["clusters"][0]["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["kind"].as_str().expect("kind").to_string())
        .collect();
    k.sort();
    k
}

fn run_json(start: i64, end_exclusive: i64) -> Value {
    serde_json::json!({ "start": start, "end_exclusive": end_exclusive })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_healthy_cluster_has_no_violation_and_exits_0() {
    let c = Cluster::start(3).await;
    c.ledger(1, &[0, 1, 2], (2, 2), &[]).await;
    c.ledger(2, &[2, 0, 1], (3, 2), &[]).await;
    let (code, doc) = c.audit(&[]).await;
    assert_eq!(code, Some(0), "{doc:#}");
    let counts = &ledgers(&doc)["counts"];
    assert_eq!(counts["ledgers"], 2);
    assert_eq!(counts["healthy"], 2, "{counts}");
    assert_eq!(finding_kinds(&doc), Vec::<String>::new());
    let nodes = doc["clusters"][0]["snapshot"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 3);
    assert!(
        nodes
            .iter()
            .all(|n| n["registration"] == "active" && n["answered"] == true)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_kind_of_ledger_is_classified_with_its_missing_ranges() {
    let c = Cluster::start(4).await;
    // Racks: bookies 0 and 1 on rack A, 2 and 3 on rack B.
    let racks = [
        (c.id(0), "/r/a"),
        (c.id(1), "/r/a"),
        (c.id(2), "/r/b"),
        (c.id(3), "/r/b"),
    ];
    let racks: Vec<(&str, &str)> = racks.iter().map(|(b, r)| (b.as_str(), *r)).collect();
    put_rack_map(&c.client, "/bookies", &racks).await;
    // 10: healthy. 11: bookie 1 lost 3..=5 → below write quorum. 12: all three lost 7..=8 → no replica.
    // 13: two of three lost 0..=1 → below ack quorum. 14: ensemble on rack A only → placement.
    c.ledger(10, &[0, 1, 2], (3, 2), &[]).await;
    c.ledger(11, &[0, 1, 2], (3, 2), &[(1, EntryRun::new(3, 6))])
        .await;
    let gone = EntryRun::new(7, 9);
    c.ledger(12, &[0, 1, 2], (3, 2), &[(0, gone), (1, gone), (2, gone)])
        .await;
    let two = EntryRun::new(0, 2);
    c.ledger(13, &[0, 2, 3], (3, 2), &[(0, two), (3, two)])
        .await;
    c.ledger(14, &[0, 1], (2, 2), &[]).await;
    // 15: open → skipped. 16: marked two hours ago → stuck with --grace 1h. 17: corrupt metadata.
    let open = metadata(LedgerState::Open, None, vec![c.id(0), c.id(2)], (2, 2));
    c.write(15, &open).await;
    c.ledger(16, &[0, 1, 2], (3, 2), &[(2, EntryRun::new(0, 10))])
        .await;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let mark = UnderReplicatedMark {
        replicas: vec![c.id(2)],
        ctime_ms: Some(now_ms - 2 * 3_600_000),
    };
    put(
        &c.client,
        &under_replication_path(ROOT, 16),
        mark.encode_text().as_bytes(),
        CreateMode::Persistent,
    )
    .await;
    let corrupt = ledger_path(ROOT, 17).unwrap();
    put(
        &c.client,
        &corrupt,
        b"BookieMetadataFormatVersion\t3\n\xff\xff",
        CreateMode::Persistent,
    )
    .await;

    let (code, doc) = c.audit(&["--grace", "1h"]).await;
    assert_eq!(code, Some(2), "no replica is critical: {doc:#}");
    assert!(violations_of(&doc, 10).is_empty(), "{doc:#}");

    let v11 = violations_of(&doc, 11);
    assert_eq!(v11.len(), 1, "{v11:?}");
    assert_eq!(v11[0].0, "entries_below_write_quorum");
    assert_eq!(v11[0].1["copies"], 2);
    assert_eq!(
        v11[0].1["worst_entries"],
        serde_json::json!([run_json(3, 6)])
    );
    assert_eq!(
        v11[0].1["missing"],
        serde_json::json!({ c.id(1): [run_json(3, 6)] })
    );

    let v12 = violations_of(&doc, 12);
    assert_eq!(v12[0].0, "entries_no_replica", "{v12:?}");
    assert_eq!(v12[0].1["copies"], 0);
    assert_eq!(
        v12[0].1["worst_entries"],
        serde_json::json!([run_json(7, 9)])
    );
    for b in [0, 1, 2] {
        assert_eq!(
            v12[0].1["missing"][c.id(b)],
            serde_json::json!([run_json(7, 9)])
        );
    }

    let v13 = violations_of(&doc, 13);
    assert_eq!(v13[0].0, "entries_below_ack_quorum", "{v13:?}");
    assert_eq!(v13[0].1["copies"], 1);

    let v14 = violations_of(&doc, 14);
    assert_eq!(v14.len(), 1, "{v14:?}");
    assert_eq!(v14[0].0, "placement_violation");
    assert!(
        v14[0].1["detail"].as_str().unwrap().contains("/r/a"),
        "{v14:?}"
    );

    let v16 = violations_of(&doc, 16);
    assert_eq!(v16.len(), 1, "{v16:?}");
    assert_eq!(v16[0].0, "under_replication_stuck");

    let counts = &ledgers(&doc)["counts"];
    assert_eq!(counts["skipped_open"], 1, "{counts}");
    assert_eq!(counts["healthy"], 1, "{counts}");
    assert_eq!(counts["entries_no_replica"], 1);
    assert_eq!(counts["entries_below_ack_quorum"], 1);
    assert_eq!(counts["entries_below_write_quorum"], 1);
    assert_eq!(counts["placement_violation"], 1);
    assert_eq!(counts["under_replication_stuck"], 1);

    // The corrupt znode is a collector_error naming its path; the other ledgers were still audited.
    let findings = doc["clusters"][0]["findings"].as_array().unwrap();
    let error = findings
        .iter()
        .find(|f| f["kind"] == "collector_error")
        .unwrap_or_else(|| panic!("no collector_error: {doc:#}"));
    assert!(
        error["message"].as_str().unwrap().contains(&corrupt),
        "{error}"
    );
    for kind in [
        "entries_below_write_quorum",
        "entries_no_replica",
        "entries_below_ack_quorum",
        "placement_violation",
        "under_replication_stuck",
    ] {
        assert!(
            finding_kinds(&doc).iter().any(|k| k == kind),
            "{kind} missing"
        );
    }

    // Without --grace the marked ledger is skipped, as BookKeeper does by default.
    let (_, doc) = c.audit(&[]).await;
    assert!(violations_of(&doc, 16).is_empty());
    assert_eq!(ledgers(&doc)["counts"]["skipped_marked"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_but_registered_bookie_is_unreachable_and_its_ledgers_are_not_data_loss() {
    let mut c = Cluster::start(3).await;
    c.ledger(20, &[0, 1, 2], (3, 2), &[]).await;
    c.ledger(21, &[0, 1, 2], (2, 2), &[]).await;
    c.bookies[2].stop().await; // its registration stays, as a crashed bookie's does until its session expires
    let (code, doc) = c.audit(&[]).await;
    assert_eq!(code, Some(2), "bookie_unreachable is critical: {doc:#}");
    assert_eq!(finding_kinds(&doc), vec!["bookie_unreachable".to_string()]);
    let l = ledgers(&doc);
    assert_eq!(l["counts"]["unavailable"], 2, "{l}");
    assert_eq!(l["counts"]["entries_no_replica"], 0);
    assert_eq!(l["counts"]["entries_below_write_quorum"], 0, "{l}");
    assert_eq!(l["unavailable"]["20"], serde_json::json!([c.id(2)]));
    let node = doc["clusters"][0]["snapshot"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["node"]["name"] == c.id(2))
        .cloned()
        .unwrap();
    assert_eq!(node["answered"], false);
    assert_eq!(
        node["registration"], "fenced",
        "registered but silent: {node}"
    );
    // The probes: one at the start of the pass and one per recheck, all refused.
    let lifecycle = &doc["clusters"][0]["lifecycle"]["nodes"];
    assert!(
        lifecycle
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["node"]["name"] == c.id(2))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_changed_between_read_and_report_is_redone_not_reported() {
    let c = Cluster::start(4).await;
    // Ledger 30's bookie 1 lost everything; while the audit waits for bookie 1's answer, the ledger is
    // re-replicated: its metadata now names bookie 3 (which holds the entries) instead.
    c.ledger(30, &[0, 1, 2], (3, 2), &[(1, EntryRun::new(0, 10))])
        .await;
    c.bookies[3].set(30, vec![EntryRun::new(0, 10)]);
    c.bookies[1].hold();
    let mut cmd = c.mqwatch(&[
        "audit",
        "bookkeeper",
        "--zk",
        &c.zk.addr,
        "--json",
        "--timeout",
        "20s",
    ]);
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn mqwatch");
    let held = &c.bookies[1];
    poll_until_async(
        "mqwatch to ask bookie 1",
        Duration::from_secs(20),
        || async { (held.held() >= 1).then_some(()) },
    )
    .await;
    let replaced = metadata(
        LedgerState::Closed,
        Some(LAST),
        vec![c.id(0), c.id(3), c.id(2)],
        (3, 2),
    );
    c.write(30, &replaced).await;
    c.bookies[1].release();
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    let (code, doc) = parse(out);
    assert_eq!(code, Some(0), "no false report: {doc:#}");
    assert!(violations_of(&doc, 30).is_empty(), "{doc:#}");
    assert_eq!(ledgers(&doc)["redone"], 1, "{doc:#}");
    assert_eq!(ledgers(&doc)["counts"]["healthy"], 1);
    assert!(
        c.bookies[3].asked(30) >= 1,
        "the redo asked the new ensemble"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_zk_runs_the_audit_inside_the_common_cycle() {
    let c = Cluster::start(3).await;
    c.ledger(40, &[0, 1, 2], (3, 2), &[(0, EntryRun::new(5, 6))])
        .await;
    let cmd = c.mqwatch(&["check", "--zk", &c.zk.addr, "--json"]);
    let (code, doc) = run(cmd).await;
    assert_eq!(code, Some(1), "below write quorum is a warning: {doc:#}");
    assert_eq!(
        finding_kinds(&doc),
        vec!["entries_below_write_quorum".to_string()]
    );
    assert_eq!(doc["clusters"][0]["snapshot"]["engine"], "bookkeeper");

    // Text output names the counts and the violation.
    let out = c
        .mqwatch(&["check", "--zk", &c.zk.addr])
        .output()
        .expect("run mqwatch");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 below write quorum"), "{text}");
    assert!(text.contains("ledger 40"), "{text}");
}

#[test]
fn an_unreachable_zookeeper_exits_3_naming_it() {
    let state = tempfile::tempdir().unwrap();
    let zk = format!("127.0.0.1:{}", mqwatch_testkit::free_port());
    let out = Command::new(env!("CARGO_BIN_EXE_mqwatch"))
        .args([
            "audit",
            "bookkeeper",
            "--zk",
            &zk,
            "--timeout",
            "2s",
            "--json",
        ])
        .args(["--state-dir", state.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    let (_, doc) = parse(out);
    let f = &doc["clusters"][0]["findings"][0];
    assert_eq!(f["kind"], "collector_error");
    assert!(f["message"].as_str().unwrap().contains(&zk), "{f}");
}

#[test]
fn a_bad_grace_exits_3_naming_the_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_mqwatch"))
        .args([
            "audit",
            "bookkeeper",
            "--zk",
            "127.0.0.1:1",
            "--grace",
            "5 minutes",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--grace"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bookie_registrations_feed_the_lifecycle() {
    let mut c = Cluster::start(2).await;
    // Bookie 1 moves to read-only; a third bookie joins and leaves (its cookie stays).
    c.bookies[1].deregister().await;
    let id1 = c.id(1);
    c.bookies[1].register(&c.zk.addr, ROOT, &id1, true).await;
    let mut gone = TestBookie::start([]).await;
    let gone_id = gone.addr().to_string();
    gone.register(&c.zk.addr, ROOT, &gone_id, false).await;
    gone.deregister().await;
    gone.stop().await;
    c.ledger(50, &[0, 1], (2, 2), &[]).await;

    let (code, doc) = c.audit(&[]).await;
    assert_eq!(code, Some(2), "a lost bookie is critical: {doc:#}");
    let nodes = doc["clusters"][0]["snapshot"]["nodes"].as_array().unwrap();
    let state = |id: &str| {
        nodes
            .iter()
            .find(|n| n["node"]["name"] == id)
            .map(|n| n["registration"].as_str().unwrap().to_string())
    };
    assert_eq!(state(&c.id(0)).as_deref(), Some("active"));
    assert_eq!(state(&id1).as_deref(), Some("read_only"));
    assert_eq!(
        state(&gone_id).as_deref(),
        Some("unregistered"),
        "cookie only"
    );
    assert_eq!(
        ledgers(&doc)["counts"]["healthy"],
        1,
        "a read-only bookie still serves reads"
    );
    let findings = doc["clusters"][0]["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 1, "{findings:?}");
    assert_eq!(findings[0]["kind"], "bookie_unreachable");
    assert_eq!(findings[0]["subject"]["node"]["name"], gone_id.as_str());
    let rows = doc["clusters"][0]["lifecycle"]["nodes"].as_array().unwrap();
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r["node"]["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&c.id(0).as_str()) && names.contains(&id1.as_str()),
        "{rows:?}"
    );
}
