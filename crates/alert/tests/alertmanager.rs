//! The Alertmanager channel against a REAL Alertmanager (Debian's `prometheus-alertmanager`, started by
//! mqwatch-testkit on a free port with gossip off, stopped by PID): an alarm raised by the lifecycle and delivered
//! from the store's outbox appears in `GET /api/v2/alerts` with its labels, is re-posted while it fires, and
//! its resolve ends it there.

use mqwatch_alert::{AlertConfig, Alerting, ChannelConfig, ChannelKind, Cycle, Deliverer};
use mqwatch_model::{Engine, Finding, FindingKind, GroupRef, Span, Subject};
use mqwatch_stats::clock::{Clock, SystemClock};
use mqwatch_store::{Store, StoreUrl};
use mqwatch_testkit::alertmanager::Alertmanager;
use std::sync::Arc;
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(30);

fn backlog(now_ms: u64) -> Finding {
    Finding::new(
        FindingKind::Backlog,
        "rmq",
        Engine::Rocketmq,
        Subject::Group {
            group: GroupRef::new("g1"),
            topic: None,
        },
        "group g1 is 12 000 messages behind",
        now_ms,
    )
}

/// Runs delivery passes until `done` holds for Alertmanager's alerts (or the deadline).
async fn deliver_until(
    deliverer: &Deliverer,
    am: &Alertmanager,
    what: &str,
    done: impl Fn(&[serde_json::Value]) -> bool,
) -> Vec<serde_json::Value> {
    let start = Instant::now();
    loop {
        let report = deliverer.deliver_due().await.unwrap();
        assert!(report.failed.is_empty(), "{report:?}");
        if let Some(alerts) = am.alerts()
            && done(&alerts)
        {
            return alerts;
        }
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alarm_fires_in_alertmanager_is_reposted_and_resolves() {
    let am = Alertmanager::start();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&StoreUrl::Sqlite(dir.path().join("m.db")))
        .await
        .unwrap();
    let mut channel = ChannelConfig::new("am", ChannelKind::Alertmanager);
    channel.url = Some(am.url.clone());
    channel.resend = Span::from_secs(1);
    let channels = vec![channel];
    mqwatch_alert::validate_channels(&channels).unwrap();
    let alerting = Alerting::new(AlertConfig::default(), channels.clone());
    let clock = Arc::new(SystemClock);
    let deliverer = Deliverer::new(store.clone(), &channels, clock.clone());

    let step = |findings: Vec<Finding>| {
        let store = store.clone();
        let alerting = alerting.clone();
        async move {
            let now = SystemClock.now_ms();
            let cycle = Cycle {
                clusters: vec!["rmq".into()],
                findings,
            };
            let outcome = alerting.evaluate(&store.alarms().await.unwrap(), &cycle, &[], now);
            store
                .apply_alarm_changes(&outcome.changes, now)
                .await
                .unwrap();
            outcome
        }
    };

    let fired = step(vec![backlog(clock.now_ms())]).await;
    assert_eq!(fired.notifications.len(), 1);
    let alerts = deliver_until(&deliverer, &am, "the firing alert", |a| !a.is_empty()).await;
    assert_eq!(alerts.len(), 1, "{alerts:?}");
    let labels = &alerts[0]["labels"];
    assert_eq!(labels["alertname"], "backlog", "{alerts:?}");
    assert_eq!(labels["cluster"], "rmq");
    assert_eq!(labels["subject"], "group g1");
    assert_eq!(labels["severity"], "warning");
    assert_eq!(alerts[0]["annotations"]["key"], "backlog/rmq/group g1");
    assert_eq!(alerts[0]["status"]["state"], "active", "{alerts:?}");
    let first_update = alerts[0]["updatedAt"].clone();

    // Still firing: nothing new is queued (repeat is 1h), but the channel re-posts it every `resend`.
    let again = step(vec![backlog(clock.now_ms())]).await;
    assert!(again.notifications.is_empty());
    let start = Instant::now();
    loop {
        let report = deliverer.deliver_due().await.unwrap();
        if report.resent == vec![("am".to_string(), 1)] {
            break;
        }
        assert!(start.elapsed() < DEADLINE, "no re-post");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let alerts = am.alerts().unwrap();
    assert_eq!(alerts.len(), 1, "the re-post is the same alert: {alerts:?}");
    assert_ne!(alerts[0]["updatedAt"], first_update, "{alerts:?}");

    // Gone: the resolve ends it in Alertmanager.
    let resolved = step(Vec::new()).await;
    assert_eq!(resolved.notifications.len(), 1);
    deliver_until(&deliverer, &am, "the alert to end", |a| a.is_empty()).await;
    assert!(
        store.due(u64::MAX, 10).await.unwrap().is_empty(),
        "all delivered"
    );
}
