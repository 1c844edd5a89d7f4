//! `mqwatch serve` as a process turning findings into alarms: a BookKeeper cluster whose ZooKeeper port nothing
//! listens on yields a `collector_error` finding every cycle; it becomes a firing alarm at `/api/v1/alarms`, its
//! notification reaches a local webhook receiver once, silences need the bearer token, series rows are readable,
//! and a restart on the same state directory keeps the alarm and sends nothing twice.

mod common;

use common::{Receiver, get_json, request, start_serve};
use mqwatch_testkit::{free_port, poll_until};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);
const TOKEN: &str = "s3cret";

/// The `collector_error` alarm of cluster `bk`, once it is firing.
fn firing_alarm(addr: &str) -> Option<serde_json::Value> {
    get_json(addr, "/api/v1/alarms")?
        .as_array()?
        .iter()
        .find(|a| a["finding"]["kind"] == "collector_error" && a["state"] == "firing")
        .cloned()
}

#[test]
fn a_finding_becomes_an_alarm_notified_once_across_a_restart() {
    let receiver = Receiver::start();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("mqwatch.toml");
    let state = dir.path().join("state");
    std::fs::write(
        &config,
        format!(
            "[server]\ntoken = \"{TOKEN}\"\n\n\
             [[cluster]]\nname = \"bk\"\nengine = \"bookkeeper\"\nzookeeper = \"127.0.0.1:{}\"\n\
             interval = \"1s\"\ntimeout = \"1s\"\n\n\
             [[channel]]\nname = \"hook\"\nkind = \"webhook\"\nurl = \"{}\"\n",
            free_port(),
            receiver.url
        ),
    )
    .unwrap();

    let (mut serve, addr) = start_serve("serve-1", &config, &state, dir.path());
    let alarm = poll_until("a firing collector_error alarm", DEADLINE, || {
        firing_alarm(&addr)
    });
    assert_eq!(alarm["key"], "collector_error/bk/cluster", "{alarm}");
    assert_eq!(alarm["notified"], true, "{alarm}");
    let sent = poll_until("the webhook POST", DEADLINE, || {
        let r = receiver.requests();
        (!r.is_empty()).then_some(r)
    });
    assert_eq!(sent[0].1["event"], "firing", "{:?}", sent[0]);
    assert_eq!(sent[0].1["key"], "collector_error/bk/cluster");
    assert!(!sent[0].0.is_empty(), "X-Mqwatch-Delivery is set");

    // Reads are open; writes need the token.
    let body =
        r#"{"cluster": "bk", "duration": "2h", "created_by": "test", "comment": "maintenance"}"#;
    let post = |headers: &[(&str, &str)]| {
        request(&addr, "POST", "/api/v1/silences", headers, Some(body)).unwrap()
    };
    assert_eq!(post(&[]).0, 401);
    assert_eq!(post(&[("Authorization", "Bearer wrong")]).0, 401);
    let bearer = format!("Bearer {TOKEN}");
    let (status, created) = post(&[("Authorization", &bearer)]);
    assert_eq!(status, 201, "{created}");
    let created: serde_json::Value = serde_json::from_str(&created).unwrap();
    let id = created["id"].as_i64().unwrap();
    let silences = get_json(&addr, "/api/v1/silences").unwrap();
    assert_eq!(silences[0]["matcher"]["cluster"], "bk", "{silences}");
    let path = format!("/api/v1/silences/{id}");
    assert_eq!(request(&addr, "DELETE", &path, &[], None).unwrap().0, 401);
    let auth = [("Authorization", bearer.as_str())];
    assert_eq!(request(&addr, "DELETE", &path, &auth, None).unwrap().0, 204);
    assert_eq!(request(&addr, "DELETE", &path, &auth, None).unwrap().0, 404);
    assert_eq!(
        get_json(&addr, "/api/v1/silences").unwrap(),
        serde_json::json!([])
    );

    // Series rows of every cycle.
    let series = get_json(&addr, "/api/v1/clusters/bk/series?metric=findings").unwrap();
    assert!(series[0]["value"].as_f64().unwrap() >= 1.0, "{series}");
    assert_eq!(
        request(
            &addr,
            "GET",
            "/api/v1/clusters/nope/series?metric=findings",
            &[],
            None
        )
        .unwrap()
        .0,
        404
    );

    serve.stop(Duration::from_secs(10));
    assert!(
        serve.log_tail(500).contains("mqwatch: stopped"),
        "{}",
        serve.log_tail(2000)
    );

    // Restarted on the same state directory: the alarm is still there, as it was, and nothing is sent again.
    let (mut serve, addr) = start_serve("serve-2", &config, &state, dir.path());
    poll_until("three cycles after the restart", DEADLINE, || {
        (serve.log_tail(1 << 20).matches("cycle done").count() >= 3).then_some(())
    });
    let again = firing_alarm(&addr).expect("the alarm survives the restart");
    assert_eq!(again["since_ms"], alarm["since_ms"], "{again}");
    assert_eq!(
        again["last_notified_ms"], alarm["last_notified_ms"],
        "{again}"
    );
    assert_eq!(receiver.requests().len(), 1, "{:?}", receiver.requests());
    serve.stop(Duration::from_secs(10));
}
