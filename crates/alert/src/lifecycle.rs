//! The alarm lifecycle, as a pure function of (previous alarm rows, this cycle's findings, silences, config,
//! now) → (alarm rows to write, notifications to enqueue). No I/O and no clock of its own: the caller passes
//! `now_ms` and writes the [`Outcome`]'s changes with `Store::apply_alarm_changes` in one transaction.
//!
//! Per key (kind + cluster + subject):
//! - a finding with no alarm, or a resolved one, starts a **pending** alarm, or a **firing** one at once when the
//!   kind's `for` is 0;
//! - pending for `for` while the finding stays → **firing**; the finding gone while pending → the row is dropped
//!   (nothing was told);
//! - firing and the finding gone → **resolved**; a resolved row is forgotten once `repeat` has passed since it
//!   resolved and since its last notification.
//!
//! Notifications. A firing alarm is told when no firing notification for its key went out within `repeat`
//! (default 1 h: MQCloud's one alarm per key per hour), counted across episodes, so a flapping finding is told
//! at most once per `repeat` however often it comes back. The first notification of an episode is a `firing`
//! event, later ones `repeat`. A resolve is told only when the episode's firing was (and `send_resolved`), so
//! every receiver that heard of an alarm hears of its end. Silences mute firing and repeat notifications, never
//! state: an alarm that fired under a silence is told when the silence expires if it still fires. A resolve is
//! not muted (it ends something a receiver was told).
//! Routing: each notification goes to every channel whose filters take its kind, cluster and severity.

use crate::config::{AlertConfig, ChannelConfig};
use mqwatch_model::{Finding, FindingKey, Severity};
use mqwatch_store::{AlarmChanges, AlarmRecord, AlarmState, NewDelivery, Silence};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// What a notification tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Event {
    /// An alarm started firing (the first notification of its episode).
    Firing,
    /// An alarm is still firing (told again after `repeat`).
    Repeat,
    /// A told alarm ended.
    Resolved,
}

/// One notification: what a channel renders. Serialised as the outbox payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// What it tells.
    pub event: Event,
    /// The alarm key's display form, e.g. `backlog/rmq/group g1`.
    pub key: String,
    /// The alarm's severity.
    pub severity: Severity,
    /// When the alarm entered its current state (fired or resolved), ms.
    pub since_ms: u64,
    /// When the notification was made, ms.
    pub at_ms: u64,
    /// The finding, as last seen.
    pub finding: Finding,
    /// The channels it goes to.
    pub channels: Vec<String>,
}

/// One alert cycle's input: the findings of the clusters it covers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cycle {
    /// Clusters whose findings are complete in this cycle: their alarms without a finding resolve. Alarms of
    /// other clusters are left as they are, even when `findings` has some of theirs (a cluster whose collection
    /// failed reports a `collector_error` but must not resolve its other alarms), so leave such a cluster out.
    pub clusters: Vec<String>,
    /// The findings.
    pub findings: Vec<Finding>,
}

/// One alert cycle's output.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// Alarm rows to write and deliveries to enqueue, for `Store::apply_alarm_changes`.
    pub changes: AlarmChanges,
    /// The notifications made (each already expanded into `changes.deliveries`, one per channel).
    pub notifications: Vec<Notification>,
}

/// The alert stage's rules: `[alerts]` and the channels.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Alerting {
    /// `[alerts]`.
    pub config: AlertConfig,
    /// `[[channel]]`, validated.
    pub channels: Vec<ChannelConfig>,
}

impl Alerting {
    /// Rules from config (validate the channels with [`validate_channels`](crate::validate_channels) first).
    pub fn new(config: AlertConfig, channels: Vec<ChannelConfig>) -> Self {
        Self { config, channels }
    }

    /// The next states of the alarms `cycle` covers, and what to tell. Pure.
    pub fn evaluate(
        &self,
        previous: &[AlarmRecord],
        cycle: &Cycle,
        silences: &[Silence],
        now_ms: u64,
    ) -> Outcome {
        let covered: BTreeSet<&str> = cycle.clusters.iter().map(String::as_str).collect();
        let mut prev: BTreeMap<FindingKey, &AlarmRecord> =
            previous.iter().map(|a| (a.key(), a)).collect();
        // One finding per key: the most severe, the later on a tie.
        let mut current: BTreeMap<FindingKey, &Finding> = BTreeMap::new();
        for f in &cycle.findings {
            let key = f.key();
            match current.get(&key) {
                Some(old) if old.severity > f.severity => {}
                _ => {
                    current.insert(key, f);
                }
            }
        }

        let mut out = Outcome::default();
        for (key, finding) in &current {
            let before = prev.remove(key);
            let next = self.present(before, finding, silences, now_ms, &mut out);
            if before != Some(&next) {
                out.changes.upserts.push(next);
            }
        }
        for (key, before) in prev {
            if !covered.contains(key.cluster.as_str()) {
                continue;
            }
            self.absent(key, before, now_ms, &mut out);
        }
        out
    }

    /// The next state of an alarm whose finding is present.
    fn present(
        &self,
        before: Option<&AlarmRecord>,
        finding: &Finding,
        silences: &[Silence],
        now_ms: u64,
        out: &mut Outcome,
    ) -> AlarmRecord {
        let kind = finding.kind;
        let pending_for = self.config.pending_for_ms(kind);
        let mut next = match before {
            Some(b) if b.state != AlarmState::Resolved => AlarmRecord {
                finding: finding.clone(),
                severity: finding.severity,
                ..b.clone()
            },
            // A new episode; the last notification time carries over for the rate limit.
            _ => AlarmRecord {
                state: AlarmState::Pending,
                since_ms: now_ms,
                last_notified_ms: before.and_then(|b| b.last_notified_ms),
                notified: false,
                severity: finding.severity,
                finding: finding.clone(),
            },
        };
        if next.state == AlarmState::Pending && now_ms.saturating_sub(next.since_ms) >= pending_for
        {
            next.state = AlarmState::Firing;
            next.since_ms = now_ms;
        }
        if next.state == AlarmState::Firing {
            let key = finding.key();
            let muted = silences.iter().any(|s| s.mutes(&key, now_ms));
            let due = next
                .last_notified_ms
                .is_none_or(|last| now_ms.saturating_sub(last) >= self.config.repeat_ms(kind));
            if !muted && due {
                let event = if next.notified {
                    Event::Repeat
                } else {
                    Event::Firing
                };
                self.notify(event, &next, now_ms, out);
                next.notified = true;
                next.last_notified_ms = Some(now_ms);
            }
        }
        next
    }

    /// The next state of an alarm whose finding is gone.
    fn absent(&self, key: FindingKey, before: &AlarmRecord, now_ms: u64, out: &mut Outcome) {
        let kind = key.kind;
        match before.state {
            AlarmState::Pending => out.changes.removals.push(key),
            AlarmState::Firing => {
                let next = AlarmRecord {
                    state: AlarmState::Resolved,
                    since_ms: now_ms,
                    ..before.clone()
                };
                if next.notified && self.config.send_resolved(kind) {
                    self.notify(Event::Resolved, &next, now_ms, out);
                }
                out.changes.upserts.push(next);
            }
            AlarmState::Resolved => {
                let repeat = self.config.repeat_ms(kind);
                let quiet = |t: u64| now_ms.saturating_sub(t) >= repeat;
                if quiet(before.since_ms) && before.last_notified_ms.is_none_or(quiet) {
                    out.changes.removals.push(key);
                }
            }
        }
    }

    /// Makes a notification about `alarm` and its deliveries to every channel that takes it.
    fn notify(&self, event: Event, alarm: &AlarmRecord, now_ms: u64, out: &mut Outcome) {
        let f = &alarm.finding;
        let channels: Vec<String> = self
            .channels
            .iter()
            .filter(|c| c.accepts(f.kind, &f.cluster, alarm.severity))
            .map(|c| c.name.clone())
            .collect();
        let n = Notification {
            event,
            key: alarm.key().to_string(),
            severity: alarm.severity,
            since_ms: alarm.since_ms,
            at_ms: now_ms,
            finding: f.clone(),
            channels,
        };
        let payload = serde_json::to_value(&n).unwrap_or(serde_json::Value::Null);
        for channel in &n.channels {
            out.changes.deliveries.push(NewDelivery {
                channel: channel.clone(),
                alarm_key: n.key.clone(),
                payload: payload.clone(),
            });
        }
        out.notifications.push(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ChannelKind, KindPolicy};
    use mqwatch_model::{Engine, FindingKind, GroupRef, NodeRef, NodeRole, Span, Subject};
    use mqwatch_stats::clock::{Clock, ManualClock};
    use mqwatch_store::SilenceMatcher;

    const T0: u64 = 1_700_000_000_000;
    const MIN: u64 = 60_000;
    const HOUR: u64 = 3_600_000;

    fn backlog(group: &str) -> Finding {
        Finding::new(
            FindingKind::Backlog,
            "rmq",
            Engine::Rocketmq,
            Subject::Group {
                group: GroupRef::new(group),
                topic: None,
            },
            format!("group {group} is behind"),
            T0,
        )
    }

    fn broker_down(cluster: &str) -> Finding {
        Finding::new(
            FindingKind::BrokerDown,
            cluster,
            Engine::Rocketmq,
            Subject::Node {
                node: NodeRef::new(NodeRole::Broker, "broker-a:0"),
            },
            "broker-a:0 does not answer",
            T0,
        )
    }

    /// The alert stage over an in-memory copy of the alarms table, driven by a manual clock.
    struct Harness {
        alerting: Alerting,
        clock: ManualClock,
        alarms: BTreeMap<FindingKey, AlarmRecord>,
        silences: Vec<Silence>,
        told: Vec<(u64, Event, String)>,
    }

    impl Harness {
        fn new(config: AlertConfig) -> Self {
            Self {
                alerting: Alerting::new(config, vec![ChannelConfig::new("ops", ChannelKind::Log)]),
                clock: ManualClock::new(T0),
                alarms: BTreeMap::new(),
                silences: Vec::new(),
                told: Vec::new(),
            }
        }

        /// One cycle covering cluster `rmq` with `findings`; applies the outcome as the store would.
        fn step(&mut self, findings: &[Finding]) -> Outcome {
            let previous: Vec<AlarmRecord> = self.alarms.values().cloned().collect();
            let cycle = Cycle {
                clusters: vec!["rmq".into()],
                findings: findings.to_vec(),
            };
            let now = self.clock.now_ms();
            let out = self
                .alerting
                .evaluate(&previous, &cycle, &self.silences, now);
            for a in &out.changes.upserts {
                self.alarms.insert(a.key(), a.clone());
            }
            for k in &out.changes.removals {
                self.alarms.remove(k);
            }
            for n in &out.notifications {
                self.told.push((now - T0, n.event, n.key.clone()));
            }
            out
        }

        fn state(&self, f: &Finding) -> Option<AlarmState> {
            self.alarms.get(&f.key()).map(|a| a.state)
        }

        fn events(&self) -> Vec<(u64, Event)> {
            self.told.iter().map(|(t, e, _)| (*t, *e)).collect()
        }
    }

    #[test]
    fn fires_at_once_by_default_resolves_when_gone_and_is_forgotten_after_repeat() {
        let mut h = Harness::new(AlertConfig::default());
        let f = backlog("g1");
        let out = h.step(std::slice::from_ref(&f));
        assert_eq!(h.state(&f), Some(AlarmState::Firing));
        assert_eq!(out.notifications.len(), 1);
        assert_eq!(out.notifications[0].event, Event::Firing);
        assert_eq!(out.notifications[0].key, "backlog/rmq/group g1");
        assert_eq!(out.changes.deliveries.len(), 1);
        assert_eq!(out.changes.deliveries[0].channel, "ops");
        assert_eq!(out.changes.deliveries[0].alarm_key, "backlog/rmq/group g1");
        let payload: Notification =
            serde_json::from_value(out.changes.deliveries[0].payload.clone()).unwrap();
        assert_eq!(payload, out.notifications[0]);

        // Still there a minute later: nothing to write, nothing to tell.
        h.clock.advance(MIN);
        let out = h.step(std::slice::from_ref(&f));
        assert!(out.changes.is_empty(), "{out:?}");

        // Gone: resolved and told.
        h.clock.advance(MIN);
        let out = h.step(&[]);
        assert_eq!(h.state(&f), Some(AlarmState::Resolved));
        assert_eq!(out.notifications[0].event, Event::Resolved);
        assert_eq!(out.notifications[0].since_ms, T0 + 2 * MIN);

        // Kept while it can still rate-limit, then forgotten.
        h.clock.set(T0 + HOUR - 1);
        assert!(h.step(&[]).changes.is_empty());
        h.clock.set(T0 + 2 * MIN + HOUR);
        let out = h.step(&[]);
        assert_eq!(out.changes.removals, vec![f.key()]);
        assert_eq!(h.state(&f), None);
        assert_eq!(
            h.events(),
            vec![(0, Event::Firing), (2 * MIN, Event::Resolved)]
        );
    }

    #[test]
    fn pending_for_its_kinds_period_before_firing_and_dropped_untold_when_gone_early() {
        let mut config = AlertConfig::default();
        config.kind.insert(
            FindingKind::Backlog,
            KindPolicy {
                pending_for: Some(Span::from_secs(300)),
                ..KindPolicy::default()
            },
        );
        let mut h = Harness::new(config);
        let f = backlog("g1");
        let b = broker_down("rmq");
        h.step(&[f.clone(), b.clone()]);
        assert_eq!(h.state(&f), Some(AlarmState::Pending));
        assert_eq!(
            h.state(&b),
            Some(AlarmState::Firing),
            "other kinds keep for = 0"
        );
        h.clock.advance(4 * MIN);
        h.step(&[f.clone(), b.clone()]);
        assert_eq!(h.state(&f), Some(AlarmState::Pending));
        h.clock.advance(MIN);
        let out = h.step(&[f.clone(), b.clone()]);
        assert_eq!(h.state(&f), Some(AlarmState::Firing));
        assert_eq!(out.notifications.len(), 1);
        assert_eq!(out.notifications[0].since_ms, T0 + 5 * MIN);

        // A second group: pending, then gone before its period: dropped, never told.
        let g = backlog("g2");
        h.clock.advance(MIN);
        h.step(&[f.clone(), g.clone(), b.clone()]);
        assert_eq!(h.state(&g), Some(AlarmState::Pending));
        h.clock.advance(MIN);
        let out = h.step(&[f.clone(), b.clone()]);
        assert_eq!(out.changes.removals, vec![g.key()]);
        assert!(out.notifications.is_empty());
        assert_eq!(
            h.events(),
            vec![(0, Event::Firing), (5 * MIN, Event::Firing)]
        );
    }

    #[test]
    fn a_firing_alarm_is_told_again_once_per_repeat_per_kind() {
        let mut config = AlertConfig::default();
        config.kind.insert(
            FindingKind::BrokerDown,
            KindPolicy {
                repeat: Some(Span::from_secs(1800)),
                ..KindPolicy::default()
            },
        );
        let mut h = Harness::new(config);
        let (f, b) = (backlog("g1"), broker_down("rmq"));
        for _ in 0..=120 {
            h.step(&[f.clone(), b.clone()]);
            h.clock.advance(MIN);
        }
        let times = |key: String| -> Vec<(u64, Event)> {
            h.told
                .iter()
                .filter(|(_, _, k)| *k == key)
                .map(|(t, e, _)| (*t, *e))
                .collect()
        };
        assert_eq!(
            times(f.key().to_string()),
            vec![
                (0, Event::Firing),
                (HOUR, Event::Repeat),
                (2 * HOUR, Event::Repeat)
            ]
        );
        assert_eq!(
            times(b.key().to_string()).len(),
            5,
            "every 30 minutes over 2 hours"
        );
    }

    #[test]
    fn a_flapping_finding_is_told_at_most_once_per_hour() {
        let mut h = Harness::new(AlertConfig::default());
        let f = backlog("g1");
        // Present on even minutes, gone on odd ones, for two hours.
        for minute in 0..120 {
            let present = minute % 2 == 0;
            h.step(if present {
                std::slice::from_ref(&f)
            } else {
                &[]
            });
            let want = if present {
                AlarmState::Firing
            } else {
                AlarmState::Resolved
            };
            assert_eq!(h.state(&f), Some(want), "minute {minute}");
            h.clock.advance(MIN);
        }
        // Told when it fired and when that episode ended; the episodes in between were not told, so neither
        // were their ends; an hour later the same again.
        assert_eq!(
            h.events(),
            vec![
                (0, Event::Firing),
                (MIN, Event::Resolved),
                (HOUR, Event::Firing),
                (HOUR + MIN, Event::Resolved),
            ]
        );

        // With a pending period longer than the flaps, it never fires at all.
        let mut h = Harness::new(AlertConfig {
            pending_for: Span::from_secs(300),
            ..AlertConfig::default()
        });
        for minute in 0..60 {
            h.step(if minute % 2 == 0 {
                std::slice::from_ref(&f)
            } else {
                &[]
            });
            h.clock.advance(MIN);
        }
        assert!(h.told.is_empty());
    }

    #[test]
    fn a_silence_mutes_notifications_not_state_until_it_expires() {
        let mut h = Harness::new(AlertConfig::default());
        let f = backlog("g1");
        let other = backlog("g2");
        h.silences.push(Silence {
            id: 1,
            matcher: SilenceMatcher {
                kind: Some(FindingKind::Backlog),
                cluster: Some("rmq".into()),
                subject: Some("group g1".into()),
            },
            created_ms: T0,
            expires_ms: T0 + 10 * MIN,
            created_by: "ops".into(),
            comment: "consumer redeploy".into(),
        });
        let out = h.step(&[f.clone(), other.clone()]);
        assert_eq!(
            h.state(&f),
            Some(AlarmState::Firing),
            "state moves under a silence"
        );
        assert_eq!(
            out.notifications
                .iter()
                .map(|n| n.key.as_str())
                .collect::<Vec<_>>(),
            vec!["backlog/rmq/group g2"],
            "only the unsilenced key is told"
        );
        assert!(!h.alarms[&f.key()].notified);
        h.clock.advance(5 * MIN);
        assert!(h.step(&[f.clone(), other.clone()]).notifications.is_empty());

        // The silence expires while the alarm still fires: told now, as a firing event.
        h.clock.set(T0 + 10 * MIN);
        let out = h.step(&[f.clone(), other.clone()]);
        assert_eq!(out.notifications.len(), 1);
        assert_eq!(out.notifications[0].event, Event::Firing);
        assert_eq!(out.notifications[0].key, "backlog/rmq/group g1");

        // A silence added later mutes repeats but not the resolve of a told alarm.
        h.silences[0].expires_ms = T0 + 10 * HOUR;
        h.clock.set(T0 + 2 * HOUR);
        let out = h.step(&[f.clone(), other.clone()]);
        let told: Vec<_> = out
            .notifications
            .iter()
            .map(|n| (n.event, n.key.as_str()))
            .collect();
        assert_eq!(told, vec![(Event::Repeat, "backlog/rmq/group g2")]);
        h.clock.advance(MIN);
        let out = h.step(&[]);
        let ends: Vec<_> = out
            .notifications
            .iter()
            .map(|n| (n.event, n.key.as_str()))
            .collect();
        assert_eq!(
            ends,
            vec![
                (Event::Resolved, "backlog/rmq/group g1"),
                (Event::Resolved, "backlog/rmq/group g2")
            ]
        );
    }

    #[test]
    fn a_resolve_under_silence_of_an_untold_alarm_is_not_told() {
        let mut h = Harness::new(AlertConfig::default());
        let f = backlog("g1");
        h.silences.push(Silence {
            id: 1,
            matcher: SilenceMatcher::default(),
            created_ms: T0,
            expires_ms: T0 + HOUR,
            created_by: "ops".into(),
            comment: String::new(),
        });
        h.step(std::slice::from_ref(&f));
        h.clock.advance(MIN);
        h.step(&[]);
        assert_eq!(h.state(&f), Some(AlarmState::Resolved));
        assert!(h.told.is_empty());
    }

    #[test]
    fn notifications_are_routed_by_severity_kind_and_cluster() {
        let mut pager = ChannelConfig::new("pager", ChannelKind::Log);
        pager.min_severity = Severity::Critical;
        let mut lag = ChannelConfig::new("lag", ChannelKind::Log);
        lag.kinds = vec![FindingKind::Backlog];
        let mut kafka_only = ChannelConfig::new("kafka-team", ChannelKind::Log);
        kafka_only.clusters = vec!["kafka".into()];
        let all = ChannelConfig::new("all", ChannelKind::Log);
        let alerting = Alerting::new(AlertConfig::default(), vec![pager, lag, kafka_only, all]);
        let findings = vec![
            backlog("g1"),
            broker_down("rmq"),
            broker_down("kafka").with_severity(Severity::Warning),
        ];
        let out = alerting.evaluate(
            &[],
            &Cycle {
                clusters: vec![],
                findings,
            },
            &[],
            T0,
        );
        let routes: BTreeMap<String, Vec<String>> = out
            .notifications
            .iter()
            .map(|n| (n.key.clone(), n.channels.clone()))
            .collect();
        let v = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(routes["backlog/rmq/group g1"], v(&["lag", "all"]));
        assert_eq!(
            routes["broker_down/rmq/broker broker-a:0"],
            v(&["pager", "all"])
        );
        assert_eq!(
            routes["broker_down/kafka/broker broker-a:0"],
            v(&["kafka-team", "all"])
        );
        assert_eq!(out.changes.deliveries.len(), 6);
        // No channel takes it: the alarm still fires and counts as told, nothing is enqueued.
        let none = Alerting::new(AlertConfig::default(), vec![]);
        let out = none.evaluate(
            &[],
            &Cycle {
                clusters: vec![],
                findings: vec![backlog("g1")],
            },
            &[],
            T0,
        );
        assert_eq!(out.notifications.len(), 1);
        assert!(out.notifications[0].channels.is_empty());
        assert!(out.changes.deliveries.is_empty());
        assert!(out.changes.upserts[0].notified);
    }

    #[test]
    fn alarms_of_clusters_outside_the_cycle_are_left_alone() {
        let alerting = Alerting::new(AlertConfig::default(), vec![]);
        let kafka = broker_down("kafka");
        let rmq = broker_down("rmq");
        let first = alerting.evaluate(
            &[],
            &Cycle {
                clusters: vec![],
                findings: vec![kafka.clone(), rmq.clone()],
            },
            &[],
            T0,
        );
        let alarms = first.changes.upserts.clone();
        assert_eq!(alarms.len(), 2);
        // A cycle of rmq alone, without findings: rmq's alarm resolves, kafka's is untouched.
        let out = alerting.evaluate(
            &alarms,
            &Cycle {
                clusters: vec!["rmq".into()],
                findings: vec![],
            },
            &[],
            T0 + MIN,
        );
        assert_eq!(out.changes.upserts.len(), 1);
        assert_eq!(out.changes.upserts[0].key(), rmq.key());
        assert_eq!(out.changes.upserts[0].state, AlarmState::Resolved);

        // A cycle with a finding of kafka's (its collection failed) that does not list kafka: kafka's other
        // alarm stays firing.
        let failed = Finding::new(
            FindingKind::CollectorError,
            "kafka",
            Engine::Kafka,
            Subject::Cluster,
            "metadata request timed out",
            T0,
        );
        let out = alerting.evaluate(
            &alarms,
            &Cycle {
                clusters: vec!["rmq".into()],
                findings: vec![failed.clone(), rmq.clone()],
            },
            &[],
            T0 + MIN,
        );
        assert_eq!(out.changes.upserts.len(), 1);
        assert_eq!(out.changes.upserts[0].key(), failed.key());
        assert!(out.changes.removals.is_empty());
    }

    #[test]
    fn evaluating_again_after_the_outcome_was_stored_tells_nothing_twice() {
        // mqwatch killed after it stored a cycle and restarted at the same instant: the stored rows say the alarm
        // was told, so the repeated cycle tells nothing.
        let mut h = Harness::new(AlertConfig::default());
        let f = backlog("g1");
        assert_eq!(h.step(std::slice::from_ref(&f)).notifications.len(), 1);
        assert!(h.step(std::slice::from_ref(&f)).notifications.is_empty());
        h.clock.advance(MIN);
        assert_eq!(h.step(&[]).notifications.len(), 1);
        assert!(h.step(&[]).notifications.is_empty());
    }

    #[test]
    fn the_most_severe_finding_of_a_key_wins_and_severity_changes_are_stored() {
        let mut h = Harness::new(AlertConfig::default());
        let warn = broker_down("rmq").with_severity(Severity::Warning);
        let crit = broker_down("rmq");
        h.step(&[crit.clone(), warn.clone()]);
        assert_eq!(h.alarms[&crit.key()].severity, Severity::Critical);
        h.clock.advance(MIN);
        let out = h.step(std::slice::from_ref(&warn));
        assert_eq!(out.changes.upserts[0].severity, Severity::Warning);
        assert!(out.notifications.is_empty());
    }
}
