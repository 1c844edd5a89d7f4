//! The email channel end to end against a REAL SMTP server: Debian's aiosmtpd (mqwatch-testkit's `SmtpSink`,
//! started on a free port, stopped by PID) writing every accepted message to a Maildir. An alarm fires while the
//! mail server is down: the outbox row fails and is retried; once the server is up exactly one message arrives,
//! its subject and body naming the alarm key; the resolve arrives as a second message. A channel that asks for
//! STARTTLS from a server that does not offer it fails with a reason naming the channel and the server.

use mqwatch_alert::{AlertConfig, Alerting, ChannelConfig, ChannelKind, Cycle, Deliverer, SmtpTls};
use mqwatch_model::{Engine, Finding, FindingKind, GroupRef, Subject};
use mqwatch_stats::clock::{Clock, ManualClock};
use mqwatch_store::{Store, StoreUrl};
use mqwatch_testkit::smtp::SmtpSink;
use std::sync::Arc;
use std::time::{Duration, Instant};

const T0: u64 = 1_700_000_000_000;

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

fn mail_channel(sink: &SmtpSink, tls: SmtpTls) -> ChannelConfig {
    let mut c = ChannelConfig::new("mail", ChannelKind::Email);
    c.smtp = Some(sink.addr.clone());
    c.from = Some("mqwatch <mqwatch@example.invalid>".into());
    c.to = vec![
        "ops@example.invalid".into(),
        "oncall@example.invalid".into(),
    ];
    c.tls = tls;
    c.timeout = mqwatch_model::Span::from_secs(5);
    c
}

/// Runs delivery passes (advancing the clock past any backoff) until `n` messages are in the sink.
async fn deliver_until(
    deliverer: &Deliverer,
    clock: &ManualClock,
    sink: &SmtpSink,
    n: usize,
) -> Vec<i64> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut delivered = Vec::new();
    while sink.messages().len() < n {
        assert!(
            Instant::now() < deadline,
            "{n} messages not received in time; sink log:\n{}",
            sink.log()
        );
        delivered.extend(deliverer.deliver_due().await.unwrap().delivered);
        clock.advance(60_000);
    }
    delivered
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn firing_and_resolve_arrive_once_each_after_the_mail_server_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&StoreUrl::Sqlite(dir.path().join("mqwatch.db")))
        .await
        .unwrap();
    let mut sink = SmtpSink::stopped();
    let channels = vec![mail_channel(&sink, SmtpTls::None)];
    mqwatch_alert::validate_channels(&channels).unwrap();
    let alerting = Alerting::new(AlertConfig::default(), channels.clone());
    let clock = Arc::new(ManualClock::new(T0));
    let deliverer = Deliverer::new(store.clone(), &channels, clock.clone());

    // Fires while the mail server is down: the attempt fails, the row stays with the reason.
    let cycle = Cycle {
        clusters: vec!["rmq".into()],
        findings: vec![backlog()],
    };
    let outcome = alerting.evaluate(&store.alarms().await.unwrap(), &cycle, &[], clock.now_ms());
    let ids = store
        .apply_alarm_changes(&outcome.changes, clock.now_ms())
        .await
        .unwrap();
    assert_eq!(ids.len(), 1);
    let report = deliverer.deliver_due().await.unwrap();
    assert_eq!(report.delivered, Vec::<i64>::new());
    let (id, reason) = &report.failed[0];
    assert_eq!(*id, ids[0]);
    assert!(
        reason.contains("email mail via smtp 127.0.0.1:"),
        "the reason names the channel and the server: {reason}"
    );
    let row = store.delivery(ids[0]).await.unwrap().unwrap();
    assert_eq!((row.attempts, row.delivered_ms), (1, None));

    // The server is back: exactly one message, to both recipients, naming the alarm key.
    sink.resume();
    clock.advance(60_000);
    let delivered = deliver_until(&deliverer, &clock, &sink, 1).await;
    assert_eq!(delivered, ids);
    for _ in 0..3 {
        assert!(deliverer.deliver_due().await.unwrap().delivered.is_empty());
        clock.advance(60_000);
    }
    let messages = sink.messages();
    assert_eq!(messages.len(), 1, "{messages:#?}");
    let firing = &messages[0];
    assert!(
        firing.contains("Subject: [mqwatch] FIRING backlog/rmq/group g1 (warning)"),
        "{firing}"
    );
    assert!(
        firing.contains("Alarm:     backlog/rmq/group g1"),
        "{firing}"
    );
    assert!(
        firing.contains("group g1 is 12 000 messages behind"),
        "{firing}"
    );
    assert!(
        firing.contains("X-RcptTo: ops@example.invalid, oncall@example.invalid"),
        "{firing}"
    );
    assert!(
        firing.contains("X-MailFrom: mqwatch@example.invalid"),
        "{firing}"
    );

    // The finding is gone: the resolve is a second message.
    let cycle = Cycle {
        clusters: vec!["rmq".into()],
        findings: vec![],
    };
    let outcome = alerting.evaluate(&store.alarms().await.unwrap(), &cycle, &[], clock.now_ms());
    let ids = store
        .apply_alarm_changes(&outcome.changes, clock.now_ms())
        .await
        .unwrap();
    assert_eq!(ids.len(), 1);
    assert_eq!(deliver_until(&deliverer, &clock, &sink, 2).await, ids);
    let messages = sink.messages();
    assert_eq!(messages.len(), 2);
    assert!(
        messages[1].contains("Subject: [mqwatch] RESOLVED backlog/rmq/group g1 (warning)"),
        "{}",
        messages[1]
    );
    assert!(
        messages[1].contains("Event:     resolved"),
        "{}",
        messages[1]
    );
    sink.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starttls_required_from_a_server_without_it_fails_clearly_and_keeps_the_row() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&StoreUrl::Sqlite(dir.path().join("mqwatch.db")))
        .await
        .unwrap();
    let mut sink = SmtpSink::start();
    let channels = vec![mail_channel(&sink, SmtpTls::Starttls)];
    mqwatch_alert::validate_channels(&channels).unwrap();
    let alerting = Alerting::new(AlertConfig::default(), channels.clone());
    let clock = Arc::new(ManualClock::new(T0));
    let deliverer = Deliverer::new(store.clone(), &channels, clock.clone());
    let cycle = Cycle {
        clusters: vec!["rmq".into()],
        findings: vec![backlog()],
    };
    let outcome = alerting.evaluate(&[], &cycle, &[], clock.now_ms());
    store
        .apply_alarm_changes(&outcome.changes, clock.now_ms())
        .await
        .unwrap();
    let report = deliverer.deliver_due().await.unwrap();
    assert!(report.delivered.is_empty());
    let reason = &report.failed[0].1;
    assert!(
        reason.contains("email mail via smtp") && reason.to_lowercase().contains("tls"),
        "{reason}"
    );
    assert!(sink.messages().is_empty(), "nothing sent in clear");
    sink.stop();
}
