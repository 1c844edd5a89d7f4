//! The webhook channel end to end: an alarm raised while the receiver is down is delivered exactly once when it
//! is back, through the lifecycle, the store's outbox (SQLite, across a restart) and a real local HTTP receiver.

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use mqwatch_alert::{
    AlertConfig, Alerting, ChannelConfig, ChannelKind, Cycle, Deliverer, Event, Notification,
};
use mqwatch_model::{Engine, Finding, FindingKind, GroupRef, Subject};
use mqwatch_stats::clock::{Clock, ManualClock};
use mqwatch_store::{Store, StoreUrl};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const T0: u64 = 1_700_000_000_000;

/// What the receiver got: (X-Mqwatch-Delivery, body). It answers 503 to the first `fail_first` requests.
#[derive(Default)]
struct Received {
    requests: Mutex<Vec<(String, Notification)>>,
    fail_first: Mutex<u32>,
}

async fn hook(
    State(r): State<Arc<Received>>,
    headers: HeaderMap,
    axum::Json(body): axum::Json<Notification>,
) -> StatusCode {
    {
        let mut fail = r.fail_first.lock().unwrap();
        if *fail > 0 {
            *fail -= 1;
            return StatusCode::SERVICE_UNAVAILABLE;
        }
    }
    let id = headers
        .get("x-mqwatch-delivery")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    r.requests.lock().unwrap().push((id, body));
    StatusCode::NO_CONTENT
}

/// A loopback port nothing listens on (yet).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn start_receiver(port: u16, received: Arc<Received>) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .expect("bind the receiver's port");
    let app = Router::new()
        .route("/hook", post(hook))
        .with_state(received);
    tokio::spawn(async move { axum::serve(listener, app).await });
}

/// Runs delivery passes (advancing the clock past any backoff) until `done` or the deadline.
async fn deliver_until(
    deliverer: &Deliverer,
    clock: &ManualClock,
    done: impl Fn() -> bool,
) -> Vec<i64> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut delivered = Vec::new();
    while !done() {
        assert!(Instant::now() < deadline, "not delivered in time");
        delivered.extend(deliverer.deliver_due().await.unwrap().delivered);
        clock.advance(60_000);
    }
    delivered
}

fn backlog() -> Finding {
    Finding::new(
        FindingKind::Backlog,
        "rmq",
        Engine::Rocketmq,
        Subject::Group {
            group: GroupRef::new("g1"),
            topic: None,
        },
        "group g1 is 12 000 messages behind",
        T0,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alarm_raised_while_the_receiver_is_down_is_delivered_once_when_it_is_back() {
    let dir = tempfile::tempdir().unwrap();
    let url = StoreUrl::Sqlite(dir.path().join("mqwatch.db"));
    let port = free_port();
    let mut channel = ChannelConfig::new("ops", ChannelKind::Webhook);
    channel.url = Some(format!("http://127.0.0.1:{port}/hook"));
    let channels = vec![channel];
    mqwatch_alert::validate_channels(&channels).unwrap();
    let alerting = Alerting::new(AlertConfig::default(), channels.clone());
    let clock = Arc::new(ManualClock::new(T0));

    // A cycle raises the alarm; its state and delivery are stored together.
    let store = Store::open(&url).await.unwrap();
    let cycle = Cycle {
        clusters: vec!["rmq".into()],
        findings: vec![backlog()],
    };
    let outcome = alerting.evaluate(&store.alarms().await.unwrap(), &cycle, &[], clock.now_ms());
    assert_eq!(outcome.notifications.len(), 1);
    let ids = store
        .apply_alarm_changes(&outcome.changes, clock.now_ms())
        .await
        .unwrap();
    assert_eq!(ids.len(), 1);

    // The receiver is down: the attempt fails, is counted and waits out its backoff.
    let deliverer = Deliverer::new(store.clone(), &channels, clock.clone());
    let report = deliverer.deliver_due().await.unwrap();
    assert!(report.delivered.is_empty());
    assert_eq!(report.failed.len(), 1);
    assert!(
        report.failed[0].1.contains("webhook ops POST"),
        "{report:?}"
    );
    let row = store.delivery(ids[0]).await.unwrap().unwrap();
    assert_eq!(row.attempts, 1);
    assert_eq!(row.next_attempt_ms, T0 + 1_000);
    assert!(
        deliverer.deliver_due().await.unwrap().failed.is_empty(),
        "not due yet"
    );
    clock.advance(1_000);
    assert_eq!(deliverer.deliver_due().await.unwrap().failed.len(), 1);
    let row = store.delivery(ids[0]).await.unwrap().unwrap();
    assert_eq!(row.next_attempt_ms, T0 + 1_000 + 2_000, "backoff doubles");

    // mqwatch restarts while the receiver is still down: the row is still there, nothing was lost.
    drop(deliverer);
    drop(store);
    let store = Store::open(&url).await.unwrap();
    let deliverer = Deliverer::new(store.clone(), &channels, clock.clone());
    // The restarted cycle sees the stored alarm and tells nothing again.
    let again = alerting.evaluate(&store.alarms().await.unwrap(), &cycle, &[], clock.now_ms());
    assert!(again.notifications.is_empty());

    // The receiver comes back, answering 503 once before it takes the request.
    let received = Arc::new(Received::default());
    *received.fail_first.lock().unwrap() = 1;
    start_receiver(port, received.clone()).await;
    let delivered = deliver_until(&deliverer, &clock, || {
        !received.requests.lock().unwrap().is_empty()
    })
    .await;
    assert_eq!(delivered, ids);

    // More passes later: still exactly one request.
    for _ in 0..3 {
        clock.advance(3_600_000);
        assert_eq!(deliverer.deliver_due().await.unwrap(), Default::default());
    }
    let requests = received.requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 1);
    let (delivery_id, body) = &requests[0];
    assert_eq!(delivery_id, &ids[0].to_string());
    assert_eq!(body.event, Event::Firing);
    assert_eq!(body.key, "backlog/rmq/group g1");
    assert_eq!(body.finding, backlog());
    let row = store.delivery(ids[0]).await.unwrap().unwrap();
    assert!(row.delivered_ms.is_some());
    assert_eq!(row.attempts, 4, "two refused, one 503, one delivered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn firing_and_resolve_reach_the_receiver_in_order_through_the_run_loop() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&StoreUrl::Sqlite(dir.path().join("m.db")))
        .await
        .unwrap();
    let port = free_port();
    let received = Arc::new(Received::default());
    start_receiver(port, received.clone()).await;
    let mut channel = ChannelConfig::new("ops", ChannelKind::Webhook);
    channel.url = Some(format!("http://127.0.0.1:{port}/hook"));
    let mut log = ChannelConfig::new("log", ChannelKind::Log);
    log.kinds = vec![FindingKind::Backlog];
    let channels = vec![channel, log];
    let alerting = Alerting::new(AlertConfig::default(), channels.clone());
    let clock = Arc::new(mqwatch_stats::clock::SystemClock);

    for findings in [vec![backlog()], vec![]] {
        let cycle = Cycle {
            clusters: vec!["rmq".into()],
            findings,
        };
        let out = alerting.evaluate(&store.alarms().await.unwrap(), &cycle, &[], clock.now_ms());
        store
            .apply_alarm_changes(&out.changes, clock.now_ms())
            .await
            .unwrap();
    }
    let deliverer = Deliverer::new(store.clone(), &channels, clock);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(async move {
        deliverer
            .run(Duration::from_millis(20), async {
                let _ = stopped.await;
            })
            .await
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while received.requests.lock().unwrap().len() < 2 {
        assert!(Instant::now() < deadline, "not delivered in time");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    stop.send(()).unwrap();
    run.await.unwrap();
    let events: Vec<Event> = received
        .requests
        .lock()
        .unwrap()
        .iter()
        .map(|(_, n)| n.event)
        .collect();
    assert_eq!(events, vec![Event::Firing, Event::Resolved]);
    let rows = store.recent_outbox(10).await.unwrap();
    assert_eq!(rows.len(), 4, "two to the webhook, two to the log");
    assert!(rows.iter().all(|r| r.delivered_ms.is_some()));
}
