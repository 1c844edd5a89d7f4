//! `mqwatch serve` killed with SIGKILL (by PID) mid-alarm and restarted on the same store: no notification is
//! lost, none is sent twice, and the history (series rows, alarm state) is intact.
//!
//! REAL: the `mqwatch` binary, a ZooKeeper (Debian's, started by mqwatch-testkit on a free port, stopped by PID)
//! holding an initialised, empty BookKeeper root, and the HTTP webhook receiver (axum, in the test). The ZooKeeper
//! is frozen (SIGSTOP) so that every cycle fails with `collector_error`, and thawed (SIGCONT) to resolve it.
//!
//! The sequence: the alarm fires while the receiver answers 503 (the outbox row fails and waits); mqwatch is
//! SIGKILLed; the receiver comes back and mqwatch restarts → the firing arrives once, with the outbox id it had
//! before the kill. mqwatch is SIGKILLed again right after that delivery and restarted → nothing is sent again.
//! ZooKeeper answers again → the resolve arrives once. Graceful restarts are covered by `serve_alarms.rs`, and the
//! "receiver down then up" case at the outbox level by `crates/alert/tests/webhook.rs`.

mod common;

use common::{Receiver, get_json, start_serve};
use mqwatch_testkit::bookkeeper::{connect, init_cluster};
use mqwatch_testkit::poll_until;
use mqwatch_testkit::zookeeper::ZooKeeper;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(90);

/// ZooKeeper with an initialised ledgers root, frozen.
fn frozen_zookeeper() -> ZooKeeper {
    let zk = ZooKeeper::start();
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let client = connect(&zk.addr).await;
        init_cluster(&client, "/ledgers").await;
    });
    zk.process.pause();
    zk
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
fn sigkill_mid_alarm_loses_nothing_and_sends_nothing_twice() {
    let zk = frozen_zookeeper();
    let receiver = Receiver::start();
    receiver.set_status(503);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    let state = dir.path().join("state");
    std::fs::write(
        &config,
        format!(
            "[[cluster]]\nname = \"bk\"\nengine = \"bookkeeper\"\nzookeeper = \"{}\"\n\
             interval = \"1s\"\ntimeout = \"1s\"\n\n\
             [[channel]]\nname = \"hook\"\nkind = \"webhook\"\nurl = \"{}\"\n\
             backoff = \"200ms\"\nbackoff_max = \"1s\"\n",
            zk.addr, receiver.url
        ),
    )
    .unwrap();

    // Fires while the receiver is down; killed once the delivery has failed.
    let (mut serve, addr) = start_serve("serve-1", &config, &state, dir.path());
    let fired = poll_until("a firing collector_error alarm", DEADLINE, || {
        alarm(&addr).filter(|a| a["state"] == "firing")
    });
    poll_until("a refused delivery", DEADLINE, || {
        (receiver.refused() >= 1).then_some(())
    });
    let history = poll_until("series rows of two cycles", DEADLINE, || {
        let rows = get_json(&addr, "/api/v1/clusters/bk/series?metric=findings&from=0")?;
        (!rows.as_array()?.is_empty()).then_some(rows)
    });
    serve.kill();
    assert!(receiver.requests().is_empty());

    // Back up, restarted on the same store: the firing arrives once.
    receiver.set_status(204);
    let (mut serve, _addr) = start_serve("serve-2", &config, &state, dir.path());
    let sent = poll_until("the firing at the webhook", DEADLINE, || {
        let r = receiver.requests();
        (!r.is_empty()).then_some(r)
    });
    serve.kill();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(sent[0].1["event"], "firing");
    assert_eq!(sent[0].1["key"], "collector_error/bk/cluster");
    let firing_id = sent[0].0.clone();

    // Killed right after the delivery and restarted: nothing again, the alarm and history as they were.
    let (mut serve, addr) = start_serve("serve-3", &config, &state, dir.path());
    let before = cycles(&serve);
    poll_until("three cycles after the restart", DEADLINE, || {
        (cycles(&serve) >= before + 3).then_some(())
    });
    let again = alarm(&addr).expect("the alarm survives two SIGKILLs");
    assert_eq!(again["state"], "firing", "{again}");
    assert_eq!(again["since_ms"], fired["since_ms"], "{again}");
    assert_eq!(
        again["last_notified_ms"], fired["last_notified_ms"],
        "{again}"
    );
    let rows = get_json(&addr, "/api/v1/clusters/bk/series?metric=findings&from=0").unwrap();
    let rows = rows.as_array().unwrap();
    for old in history.as_array().unwrap() {
        assert!(
            rows.iter().any(|r| r["minute_ms"] == old["minute_ms"]),
            "series row {old} lost: {rows:?}"
        );
    }
    assert_eq!(receiver.requests().len(), 1, "{:?}", receiver.requests());

    // ZooKeeper answers again: the resolve arrives once.
    zk.process.resume();
    let sent = poll_until("the resolve at the webhook", DEADLINE, || {
        let r = receiver.requests();
        (r.len() >= 2).then_some(r)
    });
    let before = cycles(&serve);
    poll_until("three more cycles", DEADLINE, || {
        (cycles(&serve) >= before + 3).then_some(())
    });
    let sent_after = receiver.requests();
    assert_eq!(sent_after.len(), 2, "{sent_after:?}");
    assert_eq!(sent[1].1["event"], "resolved", "{sent:?}");
    assert_eq!(sent[1].1["key"], "collector_error/bk/cluster");
    assert_ne!(sent[1].0, firing_id, "a new outbox row");
    assert_eq!(alarm(&addr).unwrap()["state"], "resolved");
    serve.stop(Duration::from_secs(10));
}
