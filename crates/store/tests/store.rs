//! One store test suite, run on both backends: every case is an `async fn(&StoreUrl)` in `cases`, and
//! `on_both!` makes a SQLite test (a file in a fresh temporary directory) and a PostgreSQL test (a fresh database
//! on the real server, dropped afterwards) of each. PostgreSQL is at `MQWATCH_TEST_POSTGRES` (default
//! `postgres://postgres@127.0.0.1:5432/postgres`, trust auth); the tests fail when it does not answer.

use mqwatch_store::{StoreUrl, redact};
use std::sync::atomic::{AtomicU32, Ordering};

/// A SQLite database file in its own temporary directory.
struct SqliteDb {
    _dir: tempfile::TempDir,
    url: StoreUrl,
}

impl SqliteDb {
    fn new() -> Self {
        let dir = tempfile::tempdir().expect("temporary directory");
        // A directory that does not exist yet: the store creates it on first open.
        let url = StoreUrl::Sqlite(dir.path().join("state").join("mqwatch.db"));
        Self { _dir: dir, url }
    }
}

fn admin_url() -> String {
    std::env::var("MQWATCH_TEST_POSTGRES")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".to_string())
}

async fn admin() -> tokio_postgres::Client {
    let url = admin_url();
    let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
        .await
        .unwrap_or_else(|e| {
            panic!(
                "PostgreSQL at {} does not answer ({e}); start it (scripts/test does) or set MQWATCH_TEST_POSTGRES",
                redact(&url)
            )
        });
    tokio::spawn(conn);
    client
}

/// A fresh database on the real PostgreSQL server, dropped by [`PgDb::drop_db`] (or on drop, after a panic).
struct PgDb {
    name: String,
    url: StoreUrl,
    dropped: bool,
}

static NEXT_DB: AtomicU32 = AtomicU32::new(0);

impl PgDb {
    async fn new() -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let name = format!(
            "mqwatch_test_{}_{}_{nanos}",
            std::process::id(),
            NEXT_DB.fetch_add(1, Ordering::SeqCst)
        );
        admin()
            .await
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .unwrap_or_else(|e| panic!("create database {name}: {e}"));
        let base = admin_url();
        let cut = base
            .rfind('/')
            .expect("a database in MQWATCH_TEST_POSTGRES");
        let url = format!("{}/{name}", &base[..cut]).parse().unwrap();
        Self {
            name,
            url,
            dropped: false,
        }
    }

    async fn drop_db(mut self) {
        drop_database(&self.name).await;
        self.dropped = true;
    }
}

async fn drop_database(name: &str) {
    admin()
        .await
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .await
        .unwrap_or_else(|e| panic!("drop database {name}: {e}"));
}

impl Drop for PgDb {
    fn drop(&mut self) {
        if self.dropped {
            return;
        }
        let name = self.name.clone();
        // The test's runtime may be gone (it panicked): drop the database from a runtime of our own.
        let _ = std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime")
                .block_on(drop_database(&name));
        })
        .join();
    }
}

macro_rules! on_both {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test]
                async fn $case() {
                    let db = super::SqliteDb::new();
                    super::cases::$case(&db.url).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test]
                async fn $case() {
                    let db = super::PgDb::new().await;
                    super::cases::$case(&db.url).await;
                    db.drop_db().await;
                }
            )*
        }
    };
}

on_both!(
    migrations_run_once_and_reopening_keeps_the_version,
    minute_rows_upsert_on_their_key_and_read_by_range,
    rollups_aggregate_hours_from_minutes_and_days_from_hours,
    retention_deletes_only_what_is_older_than_configured,
    findings_history_filters_by_cluster_kind_and_time,
    alarm_changes_and_their_deliveries_commit_together,
    concurrent_alarm_cycles_on_two_connections_take_turns,
    silences_are_added_listed_by_expiry_and_deleted,
    outbox_rows_are_claimed_rescheduled_and_delivered_once,
    two_stores_on_one_database_never_claim_one_row_twice,
    one_alarms_deliveries_to_one_channel_are_claimed_in_order,
    everything_committed_survives_a_restart,
);

#[tokio::test]
async fn errors_name_the_database_and_hide_the_password() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let url = StoreUrl::Sqlite(file.join("mqwatch.db"));
    let err = mqwatch_store::Store::open(&url)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("a-file"), "{err}");

    let base = admin_url();
    let cut = base.rfind('/').unwrap();
    let with_password = base[..cut].replacen("postgres@", "postgres:hunter2@", 1);
    let url: StoreUrl = format!("{with_password}/mqwatch_no_such_database")
        .parse()
        .unwrap();
    let err = mqwatch_store::Store::open(&url)
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("mqwatch_no_such_database"), "{err}");
    assert!(!err.contains("hunter2"), "{err}");
}

mod cases {
    use mqwatch_model::{Engine, Finding, FindingKind, GroupRef, NodeRef, NodeRole, Subject};
    use mqwatch_store::*;
    use serde_json::json;
    use std::collections::BTreeSet;

    const T0: u64 = 1_700_000_000_000 - 1_700_000_000_000 % DAY_MS; // a UTC midnight

    async fn open(url: &StoreUrl) -> Store {
        Store::open(url).await.expect("open store")
    }

    fn backlog(cluster: &str, group: &str, seen: u64) -> Finding {
        Finding::new(
            FindingKind::Backlog,
            cluster,
            Engine::Rocketmq,
            Subject::Group {
                group: GroupRef::new(group),
                topic: None,
            },
            format!("group {group} is behind"),
            seen,
        )
    }

    fn broker_down(cluster: &str, broker: &str, seen: u64) -> Finding {
        Finding::new(
            FindingKind::BrokerDown,
            cluster,
            Engine::Rocketmq,
            Subject::Node {
                node: NodeRef::new(NodeRole::Broker, broker),
            },
            format!("{broker} does not answer"),
            seen,
        )
    }

    fn query(subject: Option<&str>, from_ms: u64, to_ms: u64) -> SeriesQuery {
        SeriesQuery {
            cluster: "rmq".into(),
            metric: "produce_messages".into(),
            subject: subject.map(str::to_string),
            from_ms,
            to_ms,
        }
    }

    fn point(subject: &str, minute_ms: u64, value: f64) -> SeriesPoint {
        SeriesPoint::new("rmq", "produce_messages", subject, minute_ms, value)
    }

    fn delivery(channel: &str, key: &str) -> NewDelivery {
        NewDelivery {
            channel: channel.into(),
            alarm_key: key.into(),
            payload: json!({"event": "firing", "key": key}),
        }
    }

    pub async fn migrations_run_once_and_reopening_keeps_the_version(url: &StoreUrl) {
        let store = open(url).await;
        assert_eq!(store.schema_version().await.unwrap(), SCHEMA_VERSION);
        drop(store);
        let store = open(url).await;
        assert_eq!(store.schema_version().await.unwrap(), SCHEMA_VERSION);
        assert!(format!("{store:?}").contains(&url.redacted()));
    }

    pub async fn minute_rows_upsert_on_their_key_and_read_by_range(url: &StoreUrl) {
        let store = open(url).await;
        let m = MINUTE_MS;
        store
            .insert_minutes(&[
                point("topic a", T0, 1.0),
                point("topic a", T0 + m + 59_999, 2.0), // floored to T0 + 1 min
                point("topic b", T0 + m, 10.0),
                point("topic a", T0 + 2 * m, 3.0),
                point("topic a", T0 + 2 * m, 4.0), // same key in one batch: the last wins
            ])
            .await
            .unwrap();
        // The same minute again replaces the value instead of adding a row.
        store
            .insert_minutes(&[point("topic a", T0, 1.5)])
            .await
            .unwrap();
        let a = store
            .minutes(&query(Some("topic a"), T0, T0 + 3 * m))
            .await
            .unwrap();
        let got: Vec<(u64, f64)> = a.iter().map(|p| (p.minute_ms - T0, p.value)).collect();
        assert_eq!(got, vec![(0, 1.5), (m, 2.0), (2 * m, 4.0)]);
        // [from, to): the end is exclusive; no subject means every subject, by subject then time.
        let all = store
            .minutes(&query(None, T0 + m, T0 + 2 * m))
            .await
            .unwrap();
        let got: Vec<(&str, f64)> = all.iter().map(|p| (p.subject.as_str(), p.value)).collect();
        assert_eq!(got, vec![("topic a", 2.0), ("topic b", 10.0)]);
        let mut other = query(None, T0, T0 + DAY_MS);
        other.metric = "consume_messages".into();
        assert!(store.minutes(&other).await.unwrap().is_empty());
        store.insert_minutes(&[]).await.unwrap();
    }

    pub async fn rollups_aggregate_hours_from_minutes_and_days_from_hours(url: &StoreUrl) {
        let store = open(url).await;
        let mut points = Vec::new();
        // Day 0, hour 0: minutes 0..60 with values 0..59; hour 1: 30 minutes of 100.
        for i in 0..60 {
            points.push(point("topic a", T0 + i * MINUTE_MS, i as f64));
        }
        for i in 0..30 {
            points.push(point("topic a", T0 + HOUR_MS + i * MINUTE_MS, 100.0));
        }
        // Day 1, hour 0: one minute of 7.
        points.push(point("topic a", T0 + DAY_MS, 7.0));
        store.insert_minutes(&points).await.unwrap();
        store.roll_up(T0, T0 + DAY_MS + 1).await.unwrap();

        let hours = store
            .rollups(
                Resolution::Hour,
                &query(Some("topic a"), T0, T0 + 2 * DAY_MS),
            )
            .await
            .unwrap();
        let got: Vec<(u64, f64, f64, f64, f64, u64)> = hours
            .iter()
            .map(|r| (r.bucket_ms - T0, r.avg, r.min, r.max, r.sum, r.count))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 29.5, 0.0, 59.0, 1770.0, 60),
                (HOUR_MS, 100.0, 100.0, 100.0, 3000.0, 30),
                (DAY_MS, 7.0, 7.0, 7.0, 7.0, 1),
            ]
        );
        let days = store
            .rollups(Resolution::Day, &query(None, T0, T0 + 2 * DAY_MS))
            .await
            .unwrap();
        let got: Vec<(u64, f64, f64, f64, f64, u64)> = days
            .iter()
            .map(|r| (r.bucket_ms - T0, r.avg, r.min, r.max, r.sum, r.count))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, 4770.0 / 90.0, 0.0, 100.0, 4770.0, 90),
                (DAY_MS, 7.0, 7.0, 7.0, 7.0, 1)
            ]
        );

        // A late minute row: rolling up again updates the buckets in place.
        store
            .insert_minutes(&[point("topic a", T0 + HOUR_MS + 45 * MINUTE_MS, 1000.0)])
            .await
            .unwrap();
        store
            .roll_up(T0 + HOUR_MS + 50 * MINUTE_MS, T0 + 2 * HOUR_MS)
            .await
            .unwrap();
        let hour1 = &store
            .rollups(
                Resolution::Hour,
                &query(Some("topic a"), T0 + HOUR_MS, T0 + 2 * HOUR_MS),
            )
            .await
            .unwrap()[0];
        assert_eq!((hour1.count, hour1.max, hour1.sum), (31, 1000.0, 4000.0));
        let day0 = &store
            .rollups(Resolution::Day, &query(Some("topic a"), T0, T0 + 1))
            .await
            .unwrap()[0];
        assert_eq!((day0.count, day0.sum), (91, 5770.0));
    }

    pub async fn retention_deletes_only_what_is_older_than_configured(url: &StoreUrl) {
        let store = open(url).await;
        let now = T0 + 40 * DAY_MS;
        store
            .insert_minutes(&[
                point("topic a", now - 31 * DAY_MS, 1.0),
                point("topic a", now - 29 * DAY_MS, 2.0),
            ])
            .await
            .unwrap();
        store.roll_up(0, now).await.unwrap();
        store
            .record_findings(now - 31 * DAY_MS, &[backlog("rmq", "old", 0)])
            .await
            .unwrap();
        store
            .record_findings(now - DAY_MS, &[backlog("rmq", "new", 0)])
            .await
            .unwrap();
        let old = store
            .enqueue(&delivery("ops", "old"), now - 8 * DAY_MS)
            .await
            .unwrap();
        store.mark_delivered(old, now - 8 * DAY_MS).await.unwrap();
        let stuck = store
            .enqueue(&delivery("ops", "stuck"), now - 20 * DAY_MS)
            .await
            .unwrap();

        let report = store
            .apply_retention(now, &Retention::default())
            .await
            .unwrap();
        assert_eq!(
            report,
            RetentionReport {
                minutes: 1,
                findings: 1,
                delivered: 1,
                ..Default::default()
            }
        );
        let left = store.minutes(&query(None, 0, u64::MAX / 2)).await.unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].value, 2.0);
        // Rollups outlive their minute rows; an undelivered row is never deleted.
        assert_eq!(
            store
                .rollups(Resolution::Hour, &query(None, 0, now))
                .await
                .unwrap()
                .len(),
            2
        );
        assert!(store.delivery(stuck).await.unwrap().is_some());
        assert!(store.delivery(old).await.unwrap().is_none());

        // Configurable: keep minutes one day, hours 30 days, days 30 days.
        let short = Retention {
            minutes: mqwatch_model::Span::from_millis(DAY_MS),
            hours: mqwatch_model::Span::from_millis(30 * DAY_MS),
            days: Some(mqwatch_model::Span::from_millis(30 * DAY_MS)),
            ..Retention::default()
        };
        let report = store.apply_retention(now, &short).await.unwrap();
        assert_eq!((report.minutes, report.hours, report.days), (1, 1, 1));
    }

    pub async fn findings_history_filters_by_cluster_kind_and_time(url: &StoreUrl) {
        let store = open(url).await;
        let f1 = backlog("rmq", "g1", T0);
        let f2 = broker_down("rmq", "broker-a:0", T0);
        let f3 = backlog("kafka", "g9", T0);
        store
            .record_findings(T0, &[f1.clone(), f2.clone(), f3.clone()])
            .await
            .unwrap();
        let f1_later = f1
            .clone()
            .with_evidence(mqwatch_model::Evidence::new().with("count", 12_000));
        store
            .record_findings(T0 + MINUTE_MS, std::slice::from_ref(&f1_later))
            .await
            .unwrap();

        let all = store
            .findings(&FindingQuery::between(T0, T0 + DAY_MS))
            .await
            .unwrap();
        assert_eq!(all.len(), 4);
        assert_eq!(all[0].at_ms, T0 + MINUTE_MS, "newest first");
        assert_eq!(all[0].finding, f1_later, "the whole finding comes back");

        let q = FindingQuery {
            cluster: Some("rmq".into()),
            kind: Some(FindingKind::Backlog),
            ..FindingQuery::between(T0, T0 + DAY_MS)
        };
        let rmq_backlog = store.findings(&q).await.unwrap();
        assert_eq!(
            rmq_backlog.iter().map(|r| r.at_ms).collect::<Vec<_>>(),
            vec![T0 + MINUTE_MS, T0]
        );
        let first_cycle = store
            .findings(&FindingQuery::between(T0, T0 + 1))
            .await
            .unwrap();
        let clusters: BTreeSet<&str> = first_cycle
            .iter()
            .map(|r| r.finding.cluster.as_str())
            .collect();
        assert_eq!(clusters, BTreeSet::from(["kafka", "rmq"]));
        let limited = store
            .findings(&FindingQuery {
                limit: 1,
                ..FindingQuery::between(T0, T0 + DAY_MS)
            })
            .await
            .unwrap();
        assert_eq!(limited.len(), 1);
        // Recording the same cycle again replaces, it does not duplicate.
        store.record_findings(T0, &[f1]).await.unwrap();
        assert_eq!(
            store
                .findings(&FindingQuery::between(T0, T0 + 1))
                .await
                .unwrap()
                .len(),
            3
        );
    }

    /// Two stores on one database (two mqwatch instances) run an alarm cycle at once, each firing the alarm when
    /// it sees none: the second waits for the first's transaction, sees its alarm, and enqueues nothing.
    pub async fn concurrent_alarm_cycles_on_two_connections_take_turns(url: &StoreUrl) {
        let (one, two) = (open(url).await, open(url).await);
        let cycle = |store: Store| async move {
            store
                .alarm_cycle(T0, |alarms, _silences| {
                    let f = backlog("rmq", "g1", T0);
                    if alarms.iter().any(|a| a.key() == f.key()) {
                        return (AlarmChanges::default(), false);
                    }
                    // Widen the window between reading and writing.
                    std::thread::sleep(std::time::Duration::from_millis(200));
                    let changes = AlarmChanges {
                        upserts: vec![AlarmRecord {
                            state: AlarmState::Firing,
                            since_ms: T0,
                            last_notified_ms: Some(T0),
                            notified: true,
                            severity: f.severity,
                            finding: f.clone(),
                        }],
                        removals: vec![],
                        deliveries: vec![delivery("ops", &f.key().to_string())],
                    };
                    (changes, true)
                })
                .await
                .unwrap()
        };
        let ((fired_one, ids_one), (fired_two, ids_two)) =
            tokio::join!(cycle(one.clone()), cycle(two.clone()));
        assert!(
            fired_one ^ fired_two,
            "exactly one fires: {fired_one} {fired_two}"
        );
        assert_eq!(ids_one.len() + ids_two.len(), 1);
        assert_eq!(one.due(T0, 10).await.unwrap().len(), 1);
        assert_eq!(two.alarms().await.unwrap().len(), 1);
    }

    pub async fn alarm_changes_and_their_deliveries_commit_together(url: &StoreUrl) {
        let store = open(url).await;
        let f1 = backlog("rmq", "g1", T0);
        let f2 = broker_down("rmq", "broker-a:0", T0);
        let firing = AlarmRecord {
            state: AlarmState::Firing,
            since_ms: T0,
            last_notified_ms: Some(T0),
            notified: true,
            severity: f1.severity,
            finding: f1.clone(),
        };
        let pending = AlarmRecord {
            state: AlarmState::Pending,
            since_ms: T0,
            last_notified_ms: None,
            notified: false,
            severity: f2.severity,
            finding: f2.clone(),
        };
        let ids = store
            .apply_alarm_changes(
                &AlarmChanges {
                    upserts: vec![firing.clone(), pending.clone()],
                    removals: vec![],
                    deliveries: vec![
                        delivery("ops", &f1.key().to_string()),
                        delivery("pager", &f1.key().to_string()),
                    ],
                },
                T0,
            )
            .await
            .unwrap();
        assert_eq!(ids.len(), 2);
        assert!(ids[0] < ids[1]);
        let mut alarms = store.alarms().await.unwrap();
        alarms.sort_by_key(|a| a.key());
        let mut want = vec![firing.clone(), pending.clone()];
        want.sort_by_key(|a| a.key());
        assert_eq!(alarms, want);
        let due = store.due(T0, 10).await.unwrap();
        assert_eq!(
            due.iter().map(|d| d.channel.as_str()).collect::<Vec<_>>(),
            vec!["ops", "pager"]
        );
        assert_eq!(due[0].alarm_key, "backlog/rmq/group g1");

        // Resolve one, remove the other.
        let resolved = AlarmRecord {
            state: AlarmState::Resolved,
            since_ms: T0 + MINUTE_MS,
            ..firing
        };
        store
            .apply_alarm_changes(
                &AlarmChanges {
                    upserts: vec![resolved.clone()],
                    removals: vec![f2.key()],
                    deliveries: vec![],
                },
                T0 + MINUTE_MS,
            )
            .await
            .unwrap();
        assert_eq!(store.alarms().await.unwrap(), vec![resolved]);
        assert!(
            store
                .apply_alarm_changes(&AlarmChanges::default(), T0)
                .await
                .unwrap()
                .is_empty()
        );
    }

    pub async fn silences_are_added_listed_by_expiry_and_deleted(url: &StoreUrl) {
        let store = open(url).await;
        let everything = NewSilence {
            matcher: SilenceMatcher::default(),
            created_ms: T0,
            expires_ms: T0 + HOUR_MS,
            created_by: "ops".into(),
            comment: "maintenance window".into(),
        };
        let one_group = NewSilence {
            matcher: SilenceMatcher {
                kind: Some(FindingKind::Backlog),
                cluster: Some("rmq".into()),
                subject: Some("group g1".into()),
            },
            expires_ms: T0 + 2 * HOUR_MS,
            ..everything.clone()
        };
        let a = store.add_silence(&everything).await.unwrap();
        let b = store.add_silence(&one_group).await.unwrap();
        assert!(a.id < b.id);
        assert_eq!(
            store.active_silences(T0).await.unwrap(),
            vec![a.clone(), b.clone()]
        );
        assert_eq!(
            store.active_silences(T0 + HOUR_MS).await.unwrap(),
            vec![b.clone()]
        );
        assert_eq!(store.all_silences().await.unwrap().len(), 2);
        assert!(b.mutes(&backlog("rmq", "g1", 0).key(), T0));
        assert!(!b.mutes(&backlog("rmq", "g2", 0).key(), T0));
        assert!(store.delete_silence(b.id).await.unwrap());
        assert!(!store.delete_silence(b.id).await.unwrap());
        assert_eq!(store.all_silences().await.unwrap(), vec![a]);
    }

    pub async fn outbox_rows_are_claimed_rescheduled_and_delivered_once(url: &StoreUrl) {
        let store = open(url).await;
        let id = store.enqueue(&delivery("ops", "k1"), T0).await.unwrap();
        let id2 = store.enqueue(&delivery("ops", "k2"), T0 + 5).await.unwrap();
        assert_eq!(
            store.due(T0, 10).await.unwrap().len(),
            1,
            "k2 is not due yet"
        );
        assert_eq!(store.due(T0 + 5, 1).await.unwrap().len(), 1, "limit");

        // A claim leases the rows: not due again until the lease ends.
        let claimed = store.claim_due(T0 + 5, T0 + 30_000, 10).await.unwrap();
        assert_eq!(
            claimed.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![id, id2]
        );
        assert_eq!(claimed[0].payload, json!({"event": "firing", "key": "k1"}));
        assert!(
            store
                .claim_due(T0 + 10, T0 + 40_000, 10)
                .await
                .unwrap()
                .is_empty()
        );

        // A failed attempt: counted, its reason kept, due again at the given time.
        assert!(
            store
                .reschedule(id, T0 + 1_000, "connection refused")
                .await
                .unwrap()
        );
        let e = store.delivery(id).await.unwrap().unwrap();
        assert_eq!(e.attempts, 1);
        assert_eq!(e.next_attempt_ms, T0 + 1_000);
        assert_eq!(e.last_error.as_deref(), Some("connection refused"));
        assert_eq!(
            store
                .claim_due(T0 + 1_000, T0 + 31_000, 10)
                .await
                .unwrap()
                .iter()
                .map(|e| e.id)
                .collect::<Vec<_>>(),
            vec![id]
        );

        // Delivered: once, never due again, and a late reschedule does not revive it.
        assert!(store.mark_delivered(id, T0 + 1_001).await.unwrap());
        assert!(!store.mark_delivered(id, T0 + 1_002).await.unwrap());
        assert!(!store.reschedule(id, T0, "late").await.unwrap());
        let e = store.delivery(id).await.unwrap().unwrap();
        assert_eq!(
            (e.delivered_ms, e.attempts, e.last_error),
            (Some(T0 + 1_001), 2, None)
        );
        let due: Vec<i64> = store
            .due(u64::MAX / 2, 10)
            .await
            .unwrap()
            .iter()
            .map(|e| e.id)
            .collect();
        assert_eq!(due, vec![id2]);
        let recent = store.recent_outbox(10).await.unwrap();
        assert_eq!(
            recent.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![id2, id]
        );
        assert!(store.delivery(id2 + 100).await.unwrap().is_none());
    }

    pub async fn one_alarms_deliveries_to_one_channel_are_claimed_in_order(url: &StoreUrl) {
        let store = open(url).await;
        let firing = store.enqueue(&delivery("ops", "k1"), T0).await.unwrap();
        let other_channel = store.enqueue(&delivery("pager", "k1"), T0).await.unwrap();
        let other_key = store.enqueue(&delivery("ops", "k2"), T0).await.unwrap();
        let claimed = store.claim_due(T0, T0 + 1, 10).await.unwrap();
        assert_eq!(
            claimed.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![firing, other_channel, other_key]
        );
        store.mark_delivered(other_channel, T0).await.unwrap();
        store.mark_delivered(other_key, T0).await.unwrap();
        // The firing attempt failed and waits; the resolve enqueued meanwhile waits behind it.
        store.reschedule(firing, T0 + 10_000, "down").await.unwrap();
        let resolved = store.enqueue(&delivery("ops", "k1"), T0 + 2).await.unwrap();
        assert!(
            store
                .claim_due(T0 + 2, T0 + 3, 10)
                .await
                .unwrap()
                .is_empty()
        );
        let claimed = store.claim_due(T0 + 10_000, T0 + 10_001, 10).await.unwrap();
        assert_eq!(
            claimed.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![firing]
        );
        store.mark_delivered(firing, T0 + 10_000).await.unwrap();
        let claimed = store.claim_due(T0 + 10_000, T0 + 10_001, 10).await.unwrap();
        assert_eq!(
            claimed.iter().map(|e| e.id).collect::<Vec<_>>(),
            vec![resolved]
        );
    }

    pub async fn two_stores_on_one_database_never_claim_one_row_twice(url: &StoreUrl) {
        let a = open(url).await;
        let b = open(url).await;
        for i in 0..40 {
            a.enqueue(&delivery("ops", &format!("k{i}")), T0)
                .await
                .unwrap();
        }
        let claim = |s: Store| async move {
            let mut got = Vec::new();
            loop {
                let batch = s.claim_due(T0, T0 + HOUR_MS, 3).await.unwrap();
                if batch.is_empty() {
                    return got;
                }
                got.extend(batch.into_iter().map(|e| e.id));
            }
        };
        let (x, y) = tokio::join!(
            tokio::spawn(claim(a.clone())),
            tokio::spawn(claim(b.clone()))
        );
        let (x, y) = (x.unwrap(), y.unwrap());
        let mut all: Vec<i64> = x.iter().chain(&y).copied().collect();
        all.sort_unstable();
        let unique: BTreeSet<i64> = all.iter().copied().collect();
        assert_eq!(all.len(), 40, "every row claimed once: {x:?} {y:?}");
        assert_eq!(unique.len(), 40);
    }

    pub async fn everything_committed_survives_a_restart(url: &StoreUrl) {
        let f = backlog("rmq", "g1", T0);
        let alarm = AlarmRecord {
            state: AlarmState::Firing,
            since_ms: T0,
            last_notified_ms: Some(T0),
            notified: true,
            severity: f.severity,
            finding: f.clone(),
        };
        let silence;
        let ids;
        {
            let store = open(url).await;
            store
                .insert_minutes(&[point("topic a", T0, 42.0)])
                .await
                .unwrap();
            store.roll_up(T0, T0 + 1).await.unwrap();
            store
                .record_findings(T0, std::slice::from_ref(&f))
                .await
                .unwrap();
            ids = store
                .apply_alarm_changes(
                    &AlarmChanges {
                        upserts: vec![alarm.clone()],
                        removals: vec![],
                        deliveries: vec![delivery("ops", "backlog/rmq/group g1")],
                    },
                    T0,
                )
                .await
                .unwrap();
            silence = store
                .add_silence(&NewSilence {
                    matcher: SilenceMatcher::default(),
                    created_ms: T0,
                    expires_ms: T0 + HOUR_MS,
                    created_by: "ops".into(),
                    comment: "c".into(),
                })
                .await
                .unwrap();
            store.reschedule(ids[0], T0 + 500, "down").await.unwrap();
        }
        let store = open(url).await;
        assert_eq!(
            store.minutes(&query(None, T0, T0 + 1)).await.unwrap(),
            vec![point("topic a", T0, 42.0)]
        );
        assert_eq!(
            store
                .rollups(Resolution::Day, &query(None, T0, T0 + 1))
                .await
                .unwrap()
                .len(),
            1
        );
        let history = store
            .findings(&FindingQuery::between(T0, T0 + 1))
            .await
            .unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].finding, f);
        assert_eq!(store.alarms().await.unwrap(), vec![alarm]);
        assert_eq!(store.all_silences().await.unwrap(), vec![silence]);
        let d = store.delivery(ids[0]).await.unwrap().unwrap();
        assert_eq!((d.attempts, d.next_attempt_ms), (1, T0 + 500));
        assert_eq!(store.schema_version().await.unwrap(), SCHEMA_VERSION);
    }
}
