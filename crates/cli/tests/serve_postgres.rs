//! `mqwatch serve` on PostgreSQL, two instances sharing one store: each notification reaches the webhook once.
//!
//! REAL: two `mqwatch serve` processes, PostgreSQL on 127.0.0.1:5432 (a fresh database per test, dropped after;
//! `MQWATCH_TEST_POSTGRES` overrides the admin URL), a ZooKeeper (Debian's, started by mqwatch-testkit, stopped
//! by PID) holding an empty BookKeeper root, and the webhook receiver (axum, in the test). The ZooKeeper is frozen
//! (SIGSTOP) so both instances see `collector_error` every second, then thawed (SIGCONT) so both see it end.
//!
//! Both instances evaluate the same cluster's alarms every second and both drain the outbox: the alarm cycle runs
//! under a PostgreSQL advisory lock (one instance sees the other's firing alarm and does not notify again) and
//! outbox rows are claimed with `FOR UPDATE SKIP LOCKED` (one row, one sender).

mod common;

use common::{Receiver, get_json, start_serve};
use mqwatch_testkit::bookkeeper::{connect, init_cluster};
use mqwatch_testkit::poll_until;
use mqwatch_testkit::zookeeper::ZooKeeper;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(90);

fn admin_url() -> String {
    std::env::var("MQWATCH_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

/// Runs one statement as the admin user.
fn admin(statement: &str) {
    let url = admin_url();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap_or_else(|e| {
                panic!("PostgreSQL at {url} does not answer ({e}); scripts/test starts it")
            });
        tokio::spawn(conn);
        client
            .batch_execute(statement)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    });
}

/// A fresh database, dropped on drop.
struct Db {
    name: String,
    url: String,
}

impl Db {
    fn new() -> Self {
        let name = format!(
            "mqwatch_serve_{}_{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
        );
        admin(&format!("CREATE DATABASE {name}"));
        let base = admin_url();
        let cut = base.rfind('/').expect("a database in the admin URL");
        Db {
            url: format!("{}/{name}", &base[..cut]),
            name,
        }
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        admin(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

fn alarm(addr: &str) -> Option<serde_json::Value> {
    get_json(addr, "/api/v1/alarms")?
        .as_array()?
        .iter()
        .find(|a| a["key"] == "collector_error/bk/cluster")
        .cloned()
}

fn cycles(serve: &mqwatch_testkit::process::PeerProcess) -> usize {
    serve.log_tail(1 << 22).matches("cycle done").count()
}

#[test]
fn two_instances_on_one_postgres_store_notify_each_alarm_change_once() {
    let db = Db::new();
    let zk = ZooKeeper::start();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        init_cluster(&connect(&zk.addr).await, "/ledgers").await;
    });
    zk.process.pause();
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    std::fs::write(
        &config,
        format!(
            "[store]\nurl = \"{}\"\n\n\
             [[cluster]]\nname = \"bk\"\nengine = \"bookkeeper\"\nzookeeper = \"{}\"\n\
             interval = \"1s\"\ntimeout = \"1s\"\n\n\
             [[channel]]\nname = \"hook\"\nkind = \"webhook\"\nurl = \"{}\"\n",
            db.url, zk.addr, receiver.url
        ),
    )
    .unwrap();
    let (mut a, addr_a) = start_serve("serve-a", &config, &dir.path().join("a"), dir.path());
    let (mut b, addr_b) = start_serve("serve-b", &config, &dir.path().join("b"), dir.path());

    // Both see the alarm (one store); one firing arrives.
    let fired = poll_until("a firing alarm seen by both", DEADLINE, || {
        let x = alarm(&addr_a).filter(|x| x["state"] == "firing")?;
        let y = alarm(&addr_b).filter(|y| y["state"] == "firing")?;
        (x == y).then_some(x)
    });
    assert_eq!(fired["notified"], true, "{fired}");
    poll_until("the firing at the webhook", DEADLINE, || {
        (!receiver.requests().is_empty()).then_some(())
    });
    let (ca, cb) = (cycles(&a), cycles(&b));
    poll_until("three more cycles of each instance", DEADLINE, || {
        (cycles(&a) >= ca + 3 && cycles(&b) >= cb + 3).then_some(())
    });
    assert_eq!(receiver.requests().len(), 1, "{:?}", receiver.requests());

    // ZooKeeper answers again: one resolve.
    zk.process.resume();
    poll_until("the resolve at the webhook", DEADLINE, || {
        (receiver.requests().len() >= 2).then_some(())
    });
    let (ca, cb) = (cycles(&a), cycles(&b));
    poll_until("three more cycles of each instance", DEADLINE, || {
        (cycles(&a) >= ca + 3 && cycles(&b) >= cb + 3).then_some(())
    });
    let sent = receiver.requests();
    let events: Vec<(&str, &str)> = sent
        .iter()
        .map(|(_, n)| (n["event"].as_str().unwrap(), n["key"].as_str().unwrap()))
        .collect();
    assert_eq!(
        events,
        vec![
            ("firing", "collector_error/bk/cluster"),
            ("resolved", "collector_error/bk/cluster")
        ],
        "{sent:?}"
    );
    assert_ne!(sent[0].0, sent[1].0, "two outbox rows");
    // Both wrote series rows into the one store.
    let rows = get_json(&addr_a, "/api/v1/clusters/bk/series?metric=findings&from=0").unwrap();
    assert!(!rows.as_array().unwrap().is_empty(), "{rows}");
    a.stop(Duration::from_secs(10));
    b.stop(Duration::from_secs(10));
    drop(db);
}
