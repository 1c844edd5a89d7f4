//! BookKeeper test support: a protocol-exact test bookie and writers for what a real cluster keeps in ZooKeeper.
//!
//! [`TestBookie`] is NOT a real bookie: no real bookie can be installed here (BookKeeper ships through Maven
//! only). It is an independent implementation of the two requests mqwatch sends, byte for byte as a BookKeeper
//! 4.18 bookie answers them: protocol v3 framing (i32 big-endian length + protobuf `Request` / `Response` with
//! BookKeeper's field numbers, defined here and not shared with the client under test), the header echoed
//! (version 3, operation, txnId), GET_LIST_OF_ENTRIES_OF_LEDGER answered with `availabilityOfEntriesOfLedger`
//! encoded by hand as the real serializer does (one sequence group per run, period 0), ENOLEDGER when it holds
//! nothing of a ledger, GET_BOOKIE_INFO answered with disk sizes, and EBADREQ for anything else. What it stores
//! can change while it runs, it can hang ([`TestBookie::silence`], [`TestBookie::resume`]) or go away ([`TestBookie::stop`]), and it
//! counts what it was asked.
//!
//! On the ZooKeeper side (a REAL ZooKeeper, see [`crate::zookeeper`]) it registers as real bookies do: an
//! ephemeral `<root>/available/<id>` (or `<root>/available/readonly/<id>`) in its own session, holding a
//! `BookieServiceInfoFormat`, and a persistent cookie `<root>/cookies/<id>` in BookKeeper's cookie text format.
//! [`init_cluster`] writes the znodes `initnewcluster` leaves behind (`LAYOUT`, `INSTANCEID`, …), [`put`] any
//! znode with its parents, and [`put_rack_map`] Pulsar's `/bookies` rack JSON.

use mqwatch_model::EntryRun;
use prost::Message;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use zookeeper_client::{Acls, Client, CreateMode, Error as ZkError};

/// Protocol v3 messages with BookKeeper's field numbers (`BookkeeperProtocol.proto`), proto2: every field optional
/// on the wire.
pub mod wire {
    /// `ProtocolVersion.VERSION_THREE`.
    pub const VERSION_THREE: i32 = 3;
    /// `OperationType.GET_BOOKIE_INFO`.
    pub const GET_BOOKIE_INFO: i32 = 8;
    /// `OperationType.GET_LIST_OF_ENTRIES_OF_LEDGER`.
    pub const GET_LIST_OF_ENTRIES_OF_LEDGER: i32 = 11;
    /// `StatusCode.EOK`.
    pub const EOK: i32 = 0;
    /// `StatusCode.ENOLEDGER`.
    pub const ENOLEDGER: i32 = 402;
    /// `StatusCode.EBADREQ`.
    pub const EBADREQ: i32 = 404;

    /// `BKPacketHeader`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BkPacketHeader {
        /// 1 `version`.
        #[prost(int32, optional, tag = "1")]
        pub version: Option<i32>,
        /// 2 `operation`.
        #[prost(int32, optional, tag = "2")]
        pub operation: Option<i32>,
        /// 3 `txnId`.
        #[prost(uint64, optional, tag = "3")]
        pub txn_id: Option<u64>,
        /// 4 `priority`.
        #[prost(uint32, optional, tag = "4")]
        pub priority: Option<u32>,
    }

    /// `Request` (only the bodies the test bookie answers).
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BkRequest {
        /// 1 `header`.
        #[prost(message, optional, tag = "1")]
        pub header: Option<BkPacketHeader>,
        /// 105 `getBookieInfoRequest`.
        #[prost(message, optional, tag = "105")]
        pub get_bookie_info_request: Option<BookieInfoRequest>,
        /// 108 `getListOfEntriesOfLedgerRequest`.
        #[prost(message, optional, tag = "108")]
        pub get_list_of_entries_of_ledger_request: Option<EntriesOfLedgerRequest>,
    }

    /// `GetBookieInfoRequest`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BookieInfoRequest {
        /// 1 `requested` (flags: 1 total disk, 2 free disk).
        #[prost(int64, optional, tag = "1")]
        pub requested: Option<i64>,
    }

    /// `GetListOfEntriesOfLedgerRequest`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct EntriesOfLedgerRequest {
        /// 1 `ledgerId`.
        #[prost(int64, optional, tag = "1")]
        pub ledger_id: Option<i64>,
    }

    /// `Response`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BkResponse {
        /// 1 `header`.
        #[prost(message, optional, tag = "1")]
        pub header: Option<BkPacketHeader>,
        /// 2 `status`.
        #[prost(int32, optional, tag = "2")]
        pub status: Option<i32>,
        /// 105 `getBookieInfoResponse`.
        #[prost(message, optional, tag = "105")]
        pub get_bookie_info_response: Option<BookieInfoResponse>,
        /// 108 `getListOfEntriesOfLedgerResponse`.
        #[prost(message, optional, tag = "108")]
        pub get_list_of_entries_of_ledger_response: Option<EntriesOfLedgerResponse>,
    }

    /// `GetBookieInfoResponse`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BookieInfoResponse {
        /// 1 `status`.
        #[prost(int32, optional, tag = "1")]
        pub status: Option<i32>,
        /// 2 `totalDiskCapacity`.
        #[prost(int64, optional, tag = "2")]
        pub total_disk_capacity: Option<i64>,
        /// 3 `freeDiskSpace`.
        #[prost(int64, optional, tag = "3")]
        pub free_disk_space: Option<i64>,
    }

    /// `GetListOfEntriesOfLedgerResponse`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct EntriesOfLedgerResponse {
        /// 1 `status`.
        #[prost(int32, optional, tag = "1")]
        pub status: Option<i32>,
        /// 2 `ledgerId`.
        #[prost(int64, optional, tag = "2")]
        pub ledger_id: Option<i64>,
        /// 3 `availabilityOfEntriesOfLedger`.
        #[prost(bytes = "vec", optional, tag = "3")]
        pub availability_of_entries_of_ledger: Option<Vec<u8>>,
    }

    /// `BookieServiceInfoFormat` (`DataFormats.proto`): what a bookie writes into its registration znode.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct BookieServiceInfoFormat {
        /// 6 `endpoints`.
        #[prost(message, repeated, tag = "6")]
        pub endpoints: Vec<Endpoint>,
        /// 7 `properties`.
        #[prost(btree_map = "string, string", tag = "7")]
        pub properties: std::collections::BTreeMap<String, String>,
    }

    /// `BookieServiceInfoFormat.Endpoint`.
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Endpoint {
        /// 1 `id`.
        #[prost(string, optional, tag = "1")]
        pub id: Option<String>,
        /// 2 `port`.
        #[prost(int32, optional, tag = "2")]
        pub port: Option<i32>,
        /// 3 `host`.
        #[prost(string, optional, tag = "3")]
        pub host: Option<String>,
        /// 4 `protocol`.
        #[prost(string, optional, tag = "4")]
        pub protocol: Option<String>,
        /// 5 `auth`.
        #[prost(string, repeated, tag = "5")]
        pub auth: Vec<String>,
        /// 6 `extensions`.
        #[prost(string, repeated, tag = "6")]
        pub extensions: Vec<String>,
    }
}

use wire::{BkPacketHeader, BkRequest, BkResponse};

/// Total disk bytes the test bookie reports.
pub const TOTAL_DISK: i64 = 1 << 40;
/// Free disk bytes the test bookie reports.
pub const FREE_DISK: i64 = 1 << 39;
/// Largest request frame the test bookie reads (a larger length closes the connection, as a real bookie's
/// frame decoder would).
const MAX_REQUEST: usize = 1 << 20;

/// `availabilityOfEntriesOfLedger` as a BookKeeper 4.18 bookie serializes it: a 64-byte header (i32 version 0,
/// i32 group count, zeros), then one 24-byte group per run of consecutive entries (first = last = the run's
/// start, size = its length, period 0), all big-endian. `runs` are sorted and merged first (a real bookie
/// walks its sorted entry ids, so touching runs are one run); a run longer than `i32::MAX` becomes several groups.
pub fn encode_availability(runs: &[EntryRun]) -> Vec<u8> {
    let mut runs: Vec<EntryRun> = runs.iter().copied().filter(|r| !r.is_empty()).collect();
    runs.sort();
    let mut merged: Vec<EntryRun> = Vec::with_capacity(runs.len());
    for r in runs {
        match merged.last_mut() {
            Some(last) if r.start <= last.end_exclusive => {
                last.end_exclusive = last.end_exclusive.max(r.end_exclusive)
            }
            _ => merged.push(r),
        }
    }
    let mut groups: Vec<(i64, i32)> = Vec::with_capacity(merged.len());
    for r in merged {
        let mut start = r.start;
        while start < r.end_exclusive {
            let size = (r.end_exclusive - start).min(i64::from(i32::MAX));
            groups.push((start, size as i32));
            start += size;
        }
    }
    let mut out = vec![0u8; 64];
    out[0..4].copy_from_slice(&0i32.to_be_bytes());
    out[4..8].copy_from_slice(&(groups.len() as i32).to_be_bytes());
    for (start, size) in groups {
        out.extend_from_slice(&start.to_be_bytes());
        out.extend_from_slice(&start.to_be_bytes());
        out.extend_from_slice(&size.to_be_bytes());
        out.extend_from_slice(&0i32.to_be_bytes());
    }
    out
}

/// What the test bookie holds and how it behaves; shared with its connection tasks.
#[derive(Default)]
struct Shared {
    ledgers: Mutex<BTreeMap<u64, Vec<EntryRun>>>,
    silent: AtomicBool,
    /// While true, entry-list requests wait (unanswered, uncounted) until it turns false.
    hold: Option<tokio::sync::watch::Sender<bool>>,
    waiting: AtomicU64,
    connections: AtomicU64,
    info_asked: AtomicU64,
    asked: Mutex<BTreeMap<u64, u64>>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

/// A protocol-exact test bookie on `127.0.0.1:<free port>` (not a real bookie: see the module doc). Dropping it
/// aborts its tasks and closes its ZooKeeper session (its registration goes away with the session).
pub struct TestBookie {
    addr: String,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
    session: Option<Registration>,
}

/// A bookie's registration: its own ZooKeeper session and the ephemeral znode it holds.
struct Registration {
    client: Client,
    path: String,
}

impl TestBookie {
    /// Starts serving `ledgers` (ledger id → the entries held, as runs) on a free loopback port.
    pub async fn start(ledgers: impl IntoIterator<Item = (u64, Vec<EntryRun>)>) -> TestBookie {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local address").to_string();
        let shared = Arc::new(Shared {
            ledgers: Mutex::new(ledgers.into_iter().collect()),
            hold: Some(tokio::sync::watch::Sender::new(false)),
            ..Default::default()
        });
        let s = shared.clone();
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                s.connections.fetch_add(1, Ordering::SeqCst);
                let task = tokio::spawn(serve(stream, s.clone()));
                let mut tasks = s.tasks.lock().expect("tasks");
                tasks.retain(|t| !t.is_finished());
                tasks.push(task);
            }
        });
        TestBookie {
            addr,
            shared,
            accept: Some(accept),
            session: None,
        }
    }

    /// `127.0.0.1:<port>`: the address clients connect to, and the usual bookie id.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// From now on holds `runs` of `ledger` (an empty list: the ledger exists with no entries).
    pub fn set(&self, ledger: u64, runs: Vec<EntryRun>) {
        self.shared
            .ledgers
            .lock()
            .expect("ledgers")
            .insert(ledger, runs);
    }

    /// From now on holds nothing of `ledger` (answers ENOLEDGER).
    pub fn remove(&self, ledger: u64) {
        self.shared.ledgers.lock().expect("ledgers").remove(&ledger);
    }

    /// Hangs: keeps accepting connections and reading requests (still counted) but never answers again.
    pub fn silence(&self) {
        self.shared.silent.store(true, Ordering::SeqCst);
    }

    /// Holds every GET_LIST_OF_ENTRIES_OF_LEDGER request from now on until [`Self::release`]: each waits, then is
    /// answered from what the bookie holds at release (GET_BOOKIE_INFO is answered as usual). Lets a test change the cluster between a request and its answer.
    pub fn hold(&self) {
        if let Some(h) = &self.shared.hold {
            h.send_replace(true);
        }
    }

    /// Answers the held requests and stops holding.
    pub fn release(&self) {
        if let Some(h) = &self.shared.hold {
            h.send_replace(false);
        }
    }

    /// Requests that arrived while held (answered since or not).
    pub fn held(&self) -> u64 {
        self.shared.waiting.load(Ordering::SeqCst)
    }

    /// Answers again (a hung bookie that recovered): requests read while silent stay unanswered, later ones are
    /// answered.
    pub fn resume(&self) {
        self.shared.silent.store(false, Ordering::SeqCst);
    }

    /// Closes the listener and every connection; the port refuses connections once this returns. The ZooKeeper
    /// registration stays (as a crashed bookie's does until its session expires): see [`Self::deregister`].
    pub async fn stop(&mut self) {
        if let Some(accept) = self.accept.take() {
            accept.abort();
            let _ = accept.await;
        }
        let tasks = std::mem::take(&mut *self.shared.tasks.lock().expect("tasks"));
        for t in &tasks {
            t.abort();
        }
        for t in tasks {
            let _ = t.await;
        }
    }

    /// GET_LIST_OF_ENTRIES_OF_LEDGER requests received for `ledger` (answered or not).
    pub fn asked(&self, ledger: u64) -> u64 {
        self.shared
            .asked
            .lock()
            .expect("asked")
            .get(&ledger)
            .copied()
            .unwrap_or(0)
    }

    /// GET_LIST_OF_ENTRIES_OF_LEDGER requests received, all ledgers.
    pub fn asked_total(&self) -> u64 {
        self.shared.asked.lock().expect("asked").values().sum()
    }

    /// GET_BOOKIE_INFO requests received.
    pub fn info_asked(&self) -> u64 {
        self.shared.info_asked.load(Ordering::SeqCst)
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> u64 {
        self.shared.connections.load(Ordering::SeqCst)
    }

    /// Registers as bookie `bookie_id` in the cluster at `zk_addr` under `root` (e.g. `/ledgers`), as a real
    /// bookie does at start: the cookie `<root>/cookies/<id>` (persistent, written if absent) and, in a new
    /// ZooKeeper session of its own, the ephemeral `<root>/available/<id>` or, when `read_only`,
    /// `<root>/available/readonly/<id>`, holding a `BookieServiceInfoFormat` with this bookie's RPC endpoint.
    /// Panics naming the path when ZooKeeper refuses.
    pub async fn register(&mut self, zk_addr: &str, root: &str, bookie_id: &str, read_only: bool) {
        let root = root.trim_end_matches('/');
        let client = connect(zk_addr).await;
        let cookie = format!("{root}/cookies/{bookie_id}");
        if client.check_stat(&cookie).await.ok().flatten().is_none() {
            let text = cookie_text(
                bookie_id,
                "/bk/journal",
                &["/bk/ledgers"],
                Some(INSTANCE_ID),
            );
            put(&client, &cookie, text.as_bytes(), CreateMode::Persistent).await;
        }
        let path = if read_only {
            format!("{root}/available/readonly/{bookie_id}")
        } else {
            format!("{root}/available/{bookie_id}")
        };
        let (host, port) = self.addr.rsplit_once(':').expect("host:port");
        let info = wire::BookieServiceInfoFormat {
            endpoints: vec![wire::Endpoint {
                id: Some("bookie".into()),
                port: port.parse().ok(),
                host: Some(host.into()),
                protocol: Some("bookie-rpc".into()),
                auth: Vec::new(),
                extensions: Vec::new(),
            }],
            properties: BTreeMap::new(),
        };
        put(&client, &path, &info.encode_to_vec(), CreateMode::Ephemeral).await;
        self.session = Some(Registration { client, path });
    }

    /// Deletes the registration znode and closes the bookie's ZooKeeper session (the cookie stays, as it does
    /// for a real bookie that left). No-op when not registered.
    pub async fn deregister(&mut self) {
        if let Some(r) = self.session.take() {
            match r.client.delete(&r.path, None).await {
                Ok(()) | Err(ZkError::NoNode) => {}
                Err(e) => panic!("delete {}: {e}", r.path),
            }
        }
    }
}

impl Drop for TestBookie {
    fn drop(&mut self) {
        if let Some(a) = self.accept.take() {
            a.abort();
        }
        if let Ok(mut tasks) = self.shared.tasks.lock() {
            for t in tasks.drain(..) {
                t.abort();
            }
        }
    }
}

/// One connection: read frames, answer each (unless silenced), until EOF or a bad frame.
async fn serve(mut stream: TcpStream, shared: Arc<Shared>) {
    loop {
        let mut len = [0u8; 4];
        if stream.read_exact(&mut len).await.is_err() {
            return;
        }
        let Some(len) = usize::try_from(i32::from_be_bytes(len))
            .ok()
            .filter(|&l| l <= MAX_REQUEST)
        else {
            return;
        };
        let mut buf = vec![0u8; len];
        if stream.read_exact(&mut buf).await.is_err() {
            return;
        }
        let Ok(request) = BkRequest::decode(buf.as_slice()) else {
            return;
        };
        let lists = request.header.as_ref().and_then(|h| h.operation)
            == Some(wire::GET_LIST_OF_ENTRIES_OF_LEDGER);
        if let Some(hold) = shared.hold.as_ref().filter(|_| lists) {
            let mut rx = hold.subscribe();
            if *rx.borrow_and_update() {
                shared.waiting.fetch_add(1, Ordering::SeqCst);
                if rx.wait_for(|held| !*held).await.is_err() {
                    return;
                }
            }
        }
        let response = answer(&request, &shared);
        if shared.silent.load(Ordering::SeqCst) {
            continue;
        }
        let body = response.encode_to_vec();
        let mut frame = (body.len() as i32).to_be_bytes().to_vec();
        frame.extend_from_slice(&body);
        if stream.write_all(&frame).await.is_err() {
            return;
        }
    }
}

/// The response a 4.18 bookie sends to `request` (and the request counted).
fn answer(request: &BkRequest, shared: &Shared) -> BkResponse {
    let asked = request.header.clone().unwrap_or_default();
    let operation = asked.operation.unwrap_or(0);
    let header = Some(BkPacketHeader {
        version: Some(wire::VERSION_THREE),
        operation: Some(operation),
        txn_id: asked.txn_id,
        priority: None,
    });
    match (
        operation,
        &request.get_list_of_entries_of_ledger_request,
        &request.get_bookie_info_request,
    ) {
        (wire::GET_LIST_OF_ENTRIES_OF_LEDGER, Some(r), _) => {
            let id = r.ledger_id.unwrap_or(-1);
            let held = u64::try_from(id).ok().and_then(|id| {
                *shared.asked.lock().expect("asked").entry(id).or_default() += 1;
                shared.ledgers.lock().expect("ledgers").get(&id).cloned()
            });
            let (status, bytes) = match held {
                Some(runs) => (wire::EOK, Some(encode_availability(&runs))),
                None => (wire::ENOLEDGER, None),
            };
            BkResponse {
                header,
                status: Some(status),
                get_list_of_entries_of_ledger_response: Some(wire::EntriesOfLedgerResponse {
                    status: Some(status),
                    ledger_id: Some(id),
                    availability_of_entries_of_ledger: bytes,
                }),
                ..Default::default()
            }
        }
        (wire::GET_BOOKIE_INFO, _, Some(_)) => {
            shared.info_asked.fetch_add(1, Ordering::SeqCst);
            BkResponse {
                header,
                status: Some(wire::EOK),
                get_bookie_info_response: Some(wire::BookieInfoResponse {
                    status: Some(wire::EOK),
                    total_disk_capacity: Some(TOTAL_DISK),
                    free_disk_space: Some(FREE_DISK),
                }),
                ..Default::default()
            }
        }
        _ => BkResponse {
            header,
            status: Some(wire::EBADREQ),
            ..Default::default()
        },
    }
}

/// The instance id [`init_cluster`] writes and test cookies carry.
pub const INSTANCE_ID: &str = "7f6a5d2e-3c41-4b8e-9d0a-1e2f3a4b5c6d";

/// The `LAYOUT` a cluster with the hierarchical ledger manager has (layout format 2, manager version 1).
pub const HIERARCHICAL_LAYOUT: &str =
    "2\norg.apache.bookkeeper.meta.HierarchicalLedgerManagerFactory:1";

/// A bookie cookie as BookKeeper writes it to `<root>/cookies/<id>` (`Cookie.toString`, layout version 4): the
/// line `4`, then `CookieFormat` in protobuf text format. `journalDir` is the journal dirs joined by `,`;
/// `ledgerDirs` is their count, then each dir, tab-separated (the tab escaped by the text printer).
pub fn cookie_text(
    bookie_id: &str,
    journal_dir: &str,
    ledger_dirs: &[&str],
    instance_id: Option<&str>,
) -> String {
    let mut ledger = ledger_dirs.len().to_string();
    for d in ledger_dirs {
        ledger.push('\t');
        ledger.push_str(d);
    }
    let mut out = format!(
        "4\nbookieHost: \"{}\"\njournalDir: \"{}\"\nledgerDirs: \"{}\"\n",
        text_escape(bookie_id),
        text_escape(journal_dir),
        text_escape(&ledger)
    );
    if let Some(i) = instance_id {
        out.push_str(&format!("instanceId: \"{}\"\n", text_escape(i)));
    }
    out
}

/// Escapes a string as protobuf's text printer does (C-style escapes, other bytes below 0x20 and from 0x7f on in
/// octal).
fn text_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for &b in s.as_bytes() {
        match b {
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}

/// A new ZooKeeper session with `zk_addr` (10 s session timeout). Panics naming the address when none opens.
pub async fn connect(zk_addr: &str) -> Client {
    Client::connector()
        .with_session_timeout(Duration::from_secs(10))
        .connect(zk_addr)
        .await
        .unwrap_or_else(|e| panic!("ZooKeeper {zk_addr}: {e}"))
}

/// Writes `data` at `path` with `mode`, creating missing parents (persistent, empty); an existing znode at
/// `path` gets the new data (its version goes up). Panics naming the path when ZooKeeper refuses.
pub async fn put(client: &Client, path: &str, data: &[u8], mode: CreateMode) {
    let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    let mut at = String::new();
    for (i, part) in parts.iter().enumerate() {
        at.push('/');
        at.push_str(part);
        let last = i + 1 == parts.len();
        let (bytes, m) = if last {
            (data, mode)
        } else {
            (&b""[..], CreateMode::Persistent)
        };
        match client
            .create(&at, bytes, &m.with_acls(Acls::anyone_all()))
            .await
        {
            Ok(_) => {}
            Err(ZkError::NodeExists) if last => {
                if let Err(e) = client.set_data(&at, data, None).await {
                    panic!("setData {at}: {e}");
                }
            }
            Err(ZkError::NodeExists) => {}
            Err(e) => panic!("create {at}: {e}"),
        }
    }
}

/// Writes what `bookkeeper shell initnewcluster` leaves under `root`: the root, `available`,
/// `available/readonly`, `cookies`, `INSTANCEID` ([`INSTANCE_ID`]) and `LAYOUT` ([`HIERARCHICAL_LAYOUT`]).
pub async fn init_cluster(client: &Client, root: &str) {
    let root = root.trim_end_matches('/');
    for dir in ["available/readonly", "cookies"] {
        put(
            client,
            &format!("{root}/{dir}"),
            b"",
            CreateMode::Persistent,
        )
        .await;
    }
    put(
        client,
        &format!("{root}/INSTANCEID"),
        INSTANCE_ID.as_bytes(),
        CreateMode::Persistent,
    )
    .await;
    put(
        client,
        &format!("{root}/LAYOUT"),
        HIERARCHICAL_LAYOUT.as_bytes(),
        CreateMode::Persistent,
    )
    .await;
}

/// Pulsar's rack map JSON: one group `default`, each bookie (`host:port`) with its rack and its host name (the
/// id's host part): `{"default": {"host:port": {"rack": "/region/rack", "hostname": "host"}}}`.
pub fn rack_map_json(racks: &[(&str, &str)]) -> String {
    let group: serde_json::Map<String, serde_json::Value> = racks
        .iter()
        .map(|(bookie, rack)| {
            let host = bookie.rsplit_once(':').map_or(*bookie, |(h, _)| h);
            (
                bookie.to_string(),
                serde_json::json!({ "rack": rack, "hostname": host }),
            )
        })
        .collect();
    serde_json::json!({ "default": group }).to_string()
}

/// Writes [`rack_map_json`] of `racks` to `path` (Pulsar keeps it at `/bookies`).
pub async fn put_rack_map(client: &Client, path: &str, racks: &[(&str, &str)]) {
    put(
        client,
        path,
        rack_map_json(racks).as_bytes(),
        CreateMode::Persistent,
    )
    .await;
}

/// Awaits `probe` until it returns `Some`, or panics with `what` after `deadline`. Polls every 20 ms (the async
/// twin of [`crate::poll_until`], for tests whose checks are async).
pub async fn poll_until_async<T, F, Fut>(what: &str, deadline: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn availability_is_one_group_per_run_with_period_zero() {
        // Entries 1, 2, 4, 5: two runs, given out of order and split.
        let bytes = encode_availability(&[
            EntryRun::new(4, 6),
            EntryRun::new(1, 2),
            EntryRun::new(2, 3),
        ]);
        let mut expected = vec![0u8; 64];
        expected[7] = 2;
        for (start, size) in [(1i64, 2i32), (4, 2)] {
            expected.extend_from_slice(&start.to_be_bytes());
            expected.extend_from_slice(&start.to_be_bytes());
            expected.extend_from_slice(&size.to_be_bytes());
            expected.extend_from_slice(&[0, 0, 0, 0]);
        }
        assert_eq!(bytes, expected);
        assert_eq!(encode_availability(&[]), vec![0u8; 64]);
    }

    #[test]
    fn cookie_is_version_4_then_protobuf_text() {
        assert_eq!(
            cookie_text("10.0.0.1:3181", "/j", &["/l1", "/l2"], Some("abc")),
            "4\nbookieHost: \"10.0.0.1:3181\"\njournalDir: \"/j\"\nledgerDirs: \"2\\t/l1\\t/l2\"\n\
             instanceId: \"abc\"\n"
        );
    }

    #[test]
    fn rack_map_is_pulsars_shape() {
        let v: serde_json::Value =
            serde_json::from_str(&rack_map_json(&[("10.0.0.1:3181", "/r1/a")])).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"default": {"10.0.0.1:3181": {"rack": "/r1/a", "hostname": "10.0.0.1"}}})
        );
    }

    #[tokio::test]
    async fn answers_echo_the_header_and_hold_what_was_set() {
        let mut b = TestBookie::start([(5, vec![EntryRun::new(0, 3)])]).await;
        let mut s = TcpStream::connect(b.addr()).await.unwrap();
        let ask = |op: i32, txn: u64, ledger: Option<i64>| BkRequest {
            header: Some(BkPacketHeader {
                version: Some(3),
                operation: Some(op),
                txn_id: Some(txn),
                priority: Some(0),
            }),
            get_bookie_info_request: (op == wire::GET_BOOKIE_INFO)
                .then_some(wire::BookieInfoRequest { requested: Some(3) }),
            get_list_of_entries_of_ledger_request: ledger
                .map(|l| wire::EntriesOfLedgerRequest { ledger_id: Some(l) }),
        };
        async fn call(s: &mut TcpStream, r: BkRequest) -> BkResponse {
            let body = r.encode_to_vec();
            s.write_all(&(body.len() as i32).to_be_bytes())
                .await
                .unwrap();
            s.write_all(&body).await.unwrap();
            let mut len = [0u8; 4];
            s.read_exact(&mut len).await.unwrap();
            let mut buf = vec![0u8; i32::from_be_bytes(len) as usize];
            s.read_exact(&mut buf).await.unwrap();
            BkResponse::decode(buf.as_slice()).unwrap()
        }
        let r = call(&mut s, ask(11, 7, Some(5))).await;
        let h = r.header.unwrap();
        assert_eq!(
            (h.version, h.operation, h.txn_id),
            (Some(3), Some(11), Some(7))
        );
        let body = r.get_list_of_entries_of_ledger_response.unwrap();
        assert_eq!(
            (r.status, body.status, body.ledger_id),
            (Some(0), Some(0), Some(5))
        );
        assert_eq!(
            body.availability_of_entries_of_ledger.unwrap(),
            encode_availability(&[EntryRun::new(0, 3)])
        );
        b.remove(5);
        let r = call(&mut s, ask(11, 8, Some(5))).await;
        assert_eq!(r.status, Some(wire::ENOLEDGER));
        let r = call(&mut s, ask(8, 9, None)).await;
        assert_eq!(
            r.get_bookie_info_response.unwrap().total_disk_capacity,
            Some(TOTAL_DISK)
        );
        assert_eq!(
            call(&mut s, ask(1, 10, None)).await.status,
            Some(wire::EBADREQ)
        );
        assert_eq!((b.asked(5), b.info_asked(), b.connections()), (2, 1, 1));
        b.stop().await;
        assert!(TcpStream::connect(b.addr()).await.is_err());
        let mut eof = [0u8; 1];
        assert_eq!(s.read(&mut eof).await.unwrap_or(0), 0, "connections closed");
    }
}
