//! Delivery: drains the store's outbox through the configured channels, with retries and exponential backoff per
//! channel. A row is claimed with a lease (so a deliverer that dies mid-send leaves it due again, and another
//! instance on the same PostgreSQL database does not take it), sent, then marked delivered; a failed send is
//! rescheduled with its reason. Nothing is dropped: a row whose channel is gone from config waits for it.
//!
//! Channels here: `webhook` (POSTs the notification JSON; 2xx is delivered), `alertmanager` (POSTs it as an
//! Alertmanager v2 alert, see [`crate::alertmanager`]; each pass also re-posts every firing, notified alarm the
//! channel takes once its `resend` interval has passed), `email` (one message per notification over SMTP, see
//! [`crate::email`]) and `log` (writes it to the log).
//! Delivery is at least once: a crash between a receiver's 2xx and the store's commit sends that row again, so
//! webhook requests carry the outbox id in `X-Mqwatch-Delivery` for receivers that de-duplicate.

use crate::config::{ChannelConfig, ChannelKind};
use mqwatch_stats::clock::Clock;
use mqwatch_store::{OutboxEntry, Store, StoreError};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// How long a claimed row is held before it is due again if its deliverer vanished: longer than any attempt.
const LEASE_MS: u64 = 120_000;

/// One delivery pass's results.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeliveryReport {
    /// Outbox ids delivered.
    pub delivered: Vec<i64>,
    /// Outbox ids that failed, with the reason; each is rescheduled.
    pub failed: Vec<(i64, String)>,
    /// Alertmanager channels whose firing alarms were re-posted, with how many alerts.
    pub resent: Vec<(String, usize)>,
}

/// A channel that can send.
#[derive(Debug, Clone)]
enum Sender {
    Webhook {
        url: String,
        timeout: Duration,
    },
    Alertmanager {
        endpoint: String,
        timeout: Duration,
        resend_ms: u64,
    },
    Email(Box<crate::email::EmailSender>),
    Log,
    /// A channel whose config cannot work (validation lets none through); rows wait with the reason.
    Broken(String),
}

/// Delivers outbox rows through the configured channels.
pub struct Deliverer {
    store: Store,
    clock: Arc<dyn Clock>,
    http: reqwest::Client,
    channels: BTreeMap<String, (ChannelConfig, Sender)>,
    batch: u32,
    /// Alertmanager channel → when its firing alarms were last re-posted (ms).
    resent_ms: std::sync::Mutex<BTreeMap<String, u64>>,
}

impl Deliverer {
    /// A deliverer for `channels` (validated) over `store`, timing attempts with `clock`.
    pub fn new(store: Store, channels: &[ChannelConfig], clock: Arc<dyn Clock>) -> Self {
        let channels = channels
            .iter()
            .map(|c| {
                let sender = match c.kind {
                    ChannelKind::Webhook => Sender::Webhook {
                        url: c.url.clone().unwrap_or_default(),
                        timeout: c.timeout.0,
                    },
                    ChannelKind::Alertmanager => Sender::Alertmanager {
                        endpoint: crate::alertmanager::endpoint(
                            c.url.as_deref().unwrap_or_default(),
                        ),
                        timeout: c.timeout.0,
                        resend_ms: c.resend.as_millis(),
                    },
                    ChannelKind::Email => match crate::email::EmailSender::new(c) {
                        Ok(sender) => Sender::Email(Box::new(sender)),
                        Err(reason) => Sender::Broken(format!("channel {}: {reason}", c.name)),
                    },
                    ChannelKind::Log => Sender::Log,
                };
                (c.name.clone(), (c.clone(), sender))
            })
            .collect();
        Self {
            store,
            clock,
            http: reqwest::Client::builder()
                .user_agent(concat!("mqwatch/", env!("CARGO_PKG_VERSION")))
                .build()
                .unwrap_or_default(),
            channels,
            batch: 100,
            resent_ms: Default::default(),
        }
    }

    /// Claims what is due now and tries each once: delivered rows are marked, failed ones rescheduled after
    /// their channel's backoff. One alarm's rows reach a channel in order: the store hands out only the oldest
    /// undelivered row per channel and alarm key.
    pub async fn deliver_due(&self) -> Result<DeliveryReport, StoreError> {
        let now = self.clock.now_ms();
        let claimed = self
            .store
            .claim_due(now, now.saturating_add(LEASE_MS), self.batch)
            .await?;
        let mut report = DeliveryReport::default();
        self.resend_firing(&mut report).await?;
        for entry in claimed {
            match self.send(&entry).await {
                Ok(()) => {
                    self.store
                        .mark_delivered(entry.id, self.clock.now_ms())
                        .await?;
                    tracing::info!(id = entry.id, channel = %entry.channel, alarm = %entry.alarm_key,
                        "notification delivered");
                    report.delivered.push(entry.id);
                }
                Err(reason) => {
                    let backoff = match self.channels.get(&entry.channel) {
                        Some((config, _)) => config.backoff_ms(entry.attempts + 1),
                        None => 60_000,
                    };
                    let next = self.clock.now_ms().saturating_add(backoff);
                    self.store.reschedule(entry.id, next, &reason).await?;
                    tracing::warn!(id = entry.id, channel = %entry.channel, alarm = %entry.alarm_key,
                        attempt = entry.attempts + 1, retry_in_ms = backoff, %reason, "notification not delivered");
                    report.failed.push((entry.id, reason));
                }
            }
        }
        Ok(report)
    }

    /// Re-posts the firing, notified alarms each Alertmanager channel takes, when its `resend` has passed since
    /// the last re-post (at once after a start). A failure is logged and retried on the next pass.
    async fn resend_firing(&self, report: &mut DeliveryReport) -> Result<(), StoreError> {
        let now = self.clock.now_ms();
        let due: Vec<(&ChannelConfig, &String, Duration)> = {
            let last = self.resent_ms.lock().unwrap_or_else(|e| e.into_inner());
            self.channels
                .values()
                .filter_map(|(config, sender)| match sender {
                    Sender::Alertmanager {
                        endpoint,
                        timeout,
                        resend_ms,
                    } if last
                        .get(&config.name)
                        .is_none_or(|t| now.saturating_sub(*t) >= *resend_ms) =>
                    {
                        Some((config, endpoint, *timeout))
                    }
                    _ => None,
                })
                .collect()
        };
        if due.is_empty() {
            return Ok(());
        }
        let alarms = self.store.alarms().await?;
        for (config, endpoint, timeout) in due {
            let alerts: Vec<serde_json::Value> = alarms
                .iter()
                .filter(|a| {
                    a.state == mqwatch_store::AlarmState::Firing
                        && a.notified
                        && config.accepts(a.finding.kind, &a.finding.cluster, a.severity)
                })
                .map(crate::alertmanager::alert_of_alarm)
                .collect();
            let sent = if alerts.is_empty() {
                Ok(())
            } else {
                self.post_alerts(&config.name, endpoint, timeout, &alerts)
                    .await
            };
            match sent {
                Ok(()) => {
                    self.resent_ms
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(config.name.clone(), now);
                    if !alerts.is_empty() {
                        report.resent.push((config.name.clone(), alerts.len()));
                    }
                }
                Err(reason) => {
                    tracing::warn!(channel = %config.name, %reason, "firing alarms not re-posted");
                }
            }
        }
        Ok(())
    }

    /// POSTs alerts to an Alertmanager; the error names the channel and says why.
    async fn post_alerts(
        &self,
        channel: &str,
        endpoint: &str,
        timeout: Duration,
        alerts: &[serde_json::Value],
    ) -> Result<(), String> {
        let response = self
            .http
            .post(endpoint)
            .timeout(timeout)
            .json(alerts)
            .send()
            .await
            .map_err(|e| {
                format!(
                    "alertmanager {channel} POST {endpoint}: {}",
                    error_chain(&e)
                )
            })?;
        let status = response.status();
        if status.is_success() {
            Ok(())
        } else {
            let body = response.text().await.unwrap_or_default();
            Err(format!(
                "alertmanager {channel} POST {endpoint}: HTTP {status}: {}",
                body.trim()
            ))
        }
    }

    /// Sends one row; the error names the channel and says why.
    async fn send(&self, entry: &OutboxEntry) -> Result<(), String> {
        let Some((_, sender)) = self.channels.get(&entry.channel) else {
            return Err(format!(
                "channel {:?} is not configured (kept until it is)",
                entry.channel
            ));
        };
        match sender {
            Sender::Webhook { url, timeout } => {
                let response = self
                    .http
                    .post(url)
                    .timeout(*timeout)
                    .header("X-Mqwatch-Delivery", entry.id.to_string())
                    .json(&entry.payload)
                    .send()
                    .await
                    .map_err(|e| {
                        format!("webhook {} POST {url}: {}", entry.channel, error_chain(&e))
                    })?;
                let status = response.status();
                if status.is_success() {
                    Ok(())
                } else {
                    Err(format!(
                        "webhook {} POST {url}: HTTP {status}",
                        entry.channel
                    ))
                }
            }
            Sender::Alertmanager {
                endpoint, timeout, ..
            } => {
                let n: crate::Notification = serde_json::from_value(entry.payload.clone())
                    .map_err(|e| {
                        format!(
                            "alertmanager {}: outbox row {} is not a notification: {e}",
                            entry.channel, entry.id
                        )
                    })?;
                let alert = crate::alertmanager::alert_of_notification(&n);
                self.post_alerts(&entry.channel, endpoint, *timeout, &[alert])
                    .await
            }
            Sender::Log => {
                tracing::warn!(channel = %entry.channel, alarm = %entry.alarm_key,
                    payload = %entry.payload, "alarm notification");
                Ok(())
            }
            Sender::Email(sender) => {
                let n: crate::Notification = serde_json::from_value(entry.payload.clone())
                    .map_err(|e| {
                        format!(
                            "email {}: outbox row {} is not a notification: {e}",
                            entry.channel, entry.id
                        )
                    })?;
                sender.send(&entry.channel, entry.id, &n).await
            }
            Sender::Broken(reason) => Err(reason.clone()),
        }
    }

    /// Delivers every `every` until `shutdown` completes (a pass in progress finishes first). Store errors are
    /// logged and retried on the next pass.
    pub async fn run(&self, every: Duration, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = &mut shutdown => return,
                _ = tick.tick() => {
                    if let Err(e) = self.deliver_due().await {
                        tracing::warn!(error = %e, "delivery pass failed");
                    }
                }
            }
        }
    }
}

/// An error and its causes on one line (reqwest's own message omits the cause, e.g. "connection refused").
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let s = c.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        cause = c.source();
    }
    text
}
