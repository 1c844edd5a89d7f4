//! `mqwatch serve`'s `/metrics` answers at once while a cluster's collection hangs, reads need `[server]
//! read_token` when it is set, and an alarm can be acknowledged with the write token.
//!
//! REAL: the `mqwatch` binary. NOT a real peer: the hung "name server" is a TCP listener in this test that accepts
//! connections and never answers (what a frozen or black-holed name server looks like to a client); the second
//! cluster is a BookKeeper cluster whose ZooKeeper port nothing listens on, so its cycles end at once with a
//! `collector_error` finding.

mod common;

use common::{request, start_serve};
use mqwatch_testkit::{free_port, http_get, poll_until};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);
const WRITE: &str = "w-token";
const READ: &str = "r-token";

/// A listener that accepts and never answers; returns its address and how many connections it took.
fn black_hole() -> (String, Arc<AtomicUsize>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming().flatten() {
            count.fetch_add(1, Ordering::SeqCst);
            held.push(conn);
        }
    });
    (addr, accepted)
}

fn config(dir: &std::path::Path, hung: &str, extra_server: &str) -> std::path::PathBuf {
    let path = dir.join("mqwatch.toml");
    std::fs::write(
        &path,
        format!(
            "[server]\n{extra_server}\n\n\
             [[cluster]]\nname = \"hung\"\nengine = \"rocketmq\"\nname_servers = [\"{hung}\"]\n\
             interval = \"1s\"\ntimeout = \"1h\"\n\n\
             [[cluster]]\nname = \"bk\"\nengine = \"bookkeeper\"\nzookeeper = \"127.0.0.1:{}\"\n\
             interval = \"1s\"\ntimeout = \"1s\"\n",
            free_port()
        ),
    )
    .unwrap();
    path
}

#[test]
fn metrics_answer_at_once_while_a_collection_hangs() {
    let (hung, accepted) = black_hole();
    let dir = tempfile::tempdir().unwrap();
    let config = config(dir.path(), &hung, "metrics_detail = \"partition\"");
    let (mut serve, addr) = start_serve("serve", &config, &dir.path().join("state"), dir.path());
    poll_until("the hung collection to connect", DEADLINE, || {
        (accepted.load(Ordering::SeqCst) >= 1).then_some(())
    });
    poll_until("a cycle of the other cluster", DEADLINE, || {
        let (status, body) = http_get(&addr, "/metrics")?;
        (status == 200 && body.contains("mqwatch_up{cluster=\"bk\"} 0")).then_some(())
    });
    // Twenty scrapes, each answered well within a second, while the collection stays hung.
    for _ in 0..20 {
        let start = Instant::now();
        let (status, body) = http_get(&addr, "/metrics").expect("/metrics answers");
        let took = start.elapsed();
        assert_eq!(status, 200);
        assert!(took < Duration::from_secs(1), "/metrics took {took:?}");
        assert!(
            body.contains("mqwatch_findings{cluster=\"bk\",kind=\"collector_error\""),
            "{body}"
        );
        assert!(
            !body.contains("cluster=\"hung\""),
            "no cycle of the hung cluster has finished: {body}"
        );
        assert!(
            body.contains("# TYPE mqwatch_partition_backlog_messages gauge"),
            "{body}"
        );
    }
    assert!(
        !serve.log_tail(1 << 20).contains("cluster=hung"),
        "the hung cluster's cycle never finished: {}",
        serve.log_tail(4000)
    );
    serve.stop(Duration::from_secs(10));
}

#[test]
fn reads_need_the_read_token_and_an_alarm_is_acknowledged_with_the_write_token() {
    let (hung, _) = black_hole();
    let dir = tempfile::tempdir().unwrap();
    let config = config(
        dir.path(),
        &hung,
        &format!("token = \"{WRITE}\"\nread_token = \"{READ}\""),
    );
    let (mut serve, addr) = start_serve("serve", &config, &dir.path().join("state"), dir.path());
    let read = format!("Bearer {READ}");
    let write = format!("Bearer {WRITE}");
    let get = |path: &str, auth: Option<&str>| {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        request(&addr, "GET", path, &headers, None).unwrap()
    };
    assert_eq!(get("/healthz", None).0, 200, "liveness stays open");
    assert_eq!(get("/metrics", None).0, 401);
    assert_eq!(get("/api/v1/alarms", None).0, 401);
    assert_eq!(get("/api/v1/alarms", Some("Bearer nope")).0, 401);
    assert_eq!(get("/metrics", Some(&read)).0, 200);
    assert_eq!(
        get("/api/v1/alarms", Some(&write)).0,
        200,
        "the write token reads too"
    );
    poll_until("the collector_error alarm", DEADLINE, || {
        let (status, body) = get("/api/v1/alarms", Some(&read));
        (status == 200 && body.contains("collector_error/bk/cluster")).then_some(())
    });

    let path = "/api/v1/alarms/collector_error%2Fbk%2Fcluster/ack";
    let body = r#"{"duration": "2h", "by": "alice", "comment": "on it"}"#;
    let post = |path: &str, auth: &str| {
        request(&addr, "POST", path, &[("Authorization", auth)], Some(body)).unwrap()
    };
    assert_eq!(post(path, &read).0, 401, "the read token does not write");
    let (status, text) = post("/api/v1/alarms/backlog%2Fbk%2Fgroup%20g9/ack", &write);
    assert_eq!(status, 404, "{text}");
    let (status, text) = post(path, &write);
    assert_eq!(status, 201, "{text}");
    let silence: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(silence["created_by"], "alice");
    assert_eq!(silence["matcher"]["kind"], "collector_error", "{silence}");
    assert_eq!(silence["matcher"]["cluster"], "bk", "{silence}");
    assert_eq!(silence["matcher"]["subject"], "cluster", "{silence}");
    let (status, listed) = get("/api/v1/silences", Some(&read));
    assert_eq!(status, 200);
    assert!(
        listed.contains("acknowledged collector_error/bk/cluster: on it"),
        "{listed}"
    );
    serve.stop(Duration::from_secs(10));
}
