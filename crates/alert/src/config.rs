//! Alert config: `[alerts]` (how long a finding is pending before it fires, how often a firing alarm is told
//! again, per kind) and `[[channel]]` (where notifications go, and which ones each channel takes). Unknown keys
//! are errors; [`validate_channels`] checks what serde cannot and names the channel and key.
//!
//! ```toml
//! [alerts]
//! for = "0s"              # pending period before firing (default 0: fire at once)
//! repeat = "1h"           # at most one firing notification per key per this (MQCloud's one per hour)
//! send_resolved = true
//!
//! [alerts.kind.backlog]   # per finding kind, over the defaults above
//! for = "5m"
//! repeat = "30m"
//!
//! [[channel]]
//! name = "ops"
//! kind = "webhook"        # webhook | alertmanager (url = its base, resend = "1m") | email (see below) | log
//! url = "http://127.0.0.1:9000/hook"
//! min_severity = "warning"            # routing: default info (everything)
//! kinds = ["backlog", "broker_down"]  # default: every kind
//! clusters = ["orders-rmq"]           # default: every cluster
//!
//! [[channel]]
//! name = "mail"
//! kind = "email"
//! smtp = "smtp.example.invalid:587"   # host:port
//! from = "mqwatch <mqwatch@example.invalid>"
//! to = ["ops@example.invalid"]
//! tls = "starttls"        # starttls (default, required) | tls (SMTPS) | none (credentials refused)
//! # username = "mqwatch"  # optional SMTP AUTH, with password = "…" or password_file = "/path"
//! ```

use mqwatch_model::{FindingKind, Severity, Span};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// `[alerts]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AlertConfig {
    /// How long a finding must last before its alarm fires (default 0: at once).
    #[serde(rename = "for")]
    pub pending_for: Span,
    /// The least time between two firing notifications for one key (default 1h, as MQCloud).
    pub repeat: Span,
    /// Whether the end of a notified alarm is notified (default true).
    pub send_resolved: bool,
    /// `[alerts.kind.<kind>]`: per-kind overrides.
    pub kind: BTreeMap<FindingKind, KindPolicy>,
}

impl Default for AlertConfig {
    fn default() -> Self {
        Self {
            pending_for: Span::from_millis(0),
            repeat: Span::from_secs(3600),
            send_resolved: true,
            kind: BTreeMap::new(),
        }
    }
}

/// `[alerts.kind.<kind>]`: what differs for one finding kind; unset keys take `[alerts]`'s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct KindPolicy {
    /// Pending period.
    #[serde(rename = "for", skip_serializing_if = "Option::is_none")]
    pub pending_for: Option<Span>,
    /// Least time between firing notifications.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeat: Option<Span>,
    /// Whether resolves are notified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub send_resolved: Option<bool>,
}

impl AlertConfig {
    /// The pending period of `kind`, in ms.
    pub fn pending_for_ms(&self, kind: FindingKind) -> u64 {
        self.kind
            .get(&kind)
            .and_then(|p| p.pending_for)
            .unwrap_or(self.pending_for)
            .as_millis()
    }

    /// The least time between firing notifications of `kind`, in ms.
    pub fn repeat_ms(&self, kind: FindingKind) -> u64 {
        self.kind
            .get(&kind)
            .and_then(|p| p.repeat)
            .unwrap_or(self.repeat)
            .as_millis()
    }

    /// Whether resolves of `kind` are notified.
    pub fn send_resolved(&self, kind: FindingKind) -> bool {
        self.kind
            .get(&kind)
            .and_then(|p| p.send_resolved)
            .unwrap_or(self.send_resolved)
    }
}

/// What a channel is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelKind {
    /// POSTs each notification as JSON to `url`.
    Webhook,
    /// POSTs alerts to an Alertmanager's `/api/v2/alerts` at `url`.
    Alertmanager,
    /// Sends mail through `smtp`.
    Email,
    /// Writes to mqwatch's log.
    Log,
}

impl ChannelKind {
    /// The config spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ChannelKind::Webhook => "webhook",
            ChannelKind::Alertmanager => "alertmanager",
            ChannelKind::Email => "email",
            ChannelKind::Log => "log",
        }
    }
}

/// `[[channel]]`: one destination and the notifications it takes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelConfig {
    /// Unique name; outbox rows name their channel by it.
    pub name: String,
    /// What it is.
    pub kind: ChannelKind,
    /// Webhook and Alertmanager: the endpoint (`http://…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Per attempt (default 5s).
    #[serde(default = "default_timeout")]
    pub timeout: Span,
    /// The wait after a first failed attempt; doubled after each further one (default 1s).
    #[serde(default = "default_backoff")]
    pub backoff: Span,
    /// The longest wait between attempts (default 5m).
    #[serde(default = "default_backoff_max")]
    pub backoff_max: Span,
    /// Alertmanager: firing alarms are posted again at least this often, so Alertmanager (whose
    /// `resolve_timeout` ends an alert not posted again, 5m by default) keeps them (default 1m).
    #[serde(default = "default_resend")]
    pub resend: Span,
    /// Routing: the least severity taken (default info: every one).
    #[serde(default = "default_min_severity")]
    pub min_severity: Severity,
    /// Routing: the kinds taken (default: every kind).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<FindingKind>,
    /// Routing: the clusters taken (default: every cluster).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clusters: Vec<String>,
    /// Email: the SMTP server, `host:port`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smtp: Option<String>,
    /// Email: the sender.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Email: the recipients.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub to: Vec<String>,
    /// Email: how the connection is secured (default `starttls`, required).
    #[serde(default)]
    pub tls: SmtpTls,
    /// Email: the SMTP AUTH user (needs `password` or `password_file`, and `tls` other than `none`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// Email: the SMTP AUTH password (never serialised back, `***` in debug output).
    #[serde(default, skip_serializing)]
    pub password: Option<Secret>,
    /// Email: a file whose first line is the SMTP AUTH password, instead of `password`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_file: Option<std::path::PathBuf>,
}

/// A secret from config: shown as `***` in debug output.
#[derive(Clone, PartialEq, Eq, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl From<&str> for Secret {
    fn from(s: &str) -> Self {
        Secret(s.to_string())
    }
}

/// `tls` of an email channel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SmtpTls {
    /// Plain SMTP, then STARTTLS; the send fails when the server does not offer it (default).
    #[default]
    Starttls,
    /// TLS from the first byte (SMTPS, usually port 465).
    Tls,
    /// No encryption (a relay on the same host or a trusted network); credentials are refused.
    None,
}

fn default_timeout() -> Span {
    Span::from_secs(5)
}
fn default_backoff() -> Span {
    Span::from_secs(1)
}
fn default_backoff_max() -> Span {
    Span::from_secs(300)
}
fn default_resend() -> Span {
    Span::from_secs(60)
}
fn default_min_severity() -> Severity {
    Severity::Info
}

impl ChannelConfig {
    /// A channel of `kind` named `name` taking everything, with default timeouts and no endpoint.
    pub fn new(name: impl Into<String>, kind: ChannelKind) -> Self {
        Self {
            name: name.into(),
            kind,
            url: None,
            timeout: default_timeout(),
            backoff: default_backoff(),
            backoff_max: default_backoff_max(),
            resend: default_resend(),
            min_severity: default_min_severity(),
            kinds: Vec::new(),
            clusters: Vec::new(),
            smtp: None,
            from: None,
            to: Vec::new(),
            tls: SmtpTls::default(),
            username: None,
            password: None,
            password_file: None,
        }
    }

    /// Whether it takes notifications about `kind` in `cluster` at `severity`.
    pub fn accepts(&self, kind: FindingKind, cluster: &str, severity: Severity) -> bool {
        severity >= self.min_severity
            && (self.kinds.is_empty() || self.kinds.contains(&kind))
            && (self.clusters.is_empty() || self.clusters.iter().any(|c| c == cluster))
    }

    /// The wait before attempt `attempts + 1` after `attempts` failures (≥ 1): `backoff` doubled per earlier
    /// failure, at most `backoff_max`.
    pub fn backoff_ms(&self, attempts: u32) -> u64 {
        let doublings = attempts.saturating_sub(1).min(40);
        self.backoff
            .as_millis()
            .saturating_mul(1 << doublings)
            .min(self.backoff_max.as_millis())
    }
}

/// A channel config that cannot work; names the channel and the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("channel[{index}] ({name}): {reason}")]
pub struct ChannelConfigError {
    /// Its position among `[[channel]]` tables.
    pub index: usize,
    /// Its name.
    pub name: String,
    /// What is wrong, naming the key.
    pub reason: String,
}

/// Checks what serde cannot: unique non-empty names, each kind's required keys, sane backoff.
pub fn validate_channels(channels: &[ChannelConfig]) -> Result<(), ChannelConfigError> {
    let mut seen = std::collections::BTreeSet::new();
    for (index, c) in channels.iter().enumerate() {
        let fail = |reason: String| ChannelConfigError {
            index,
            name: c.name.clone(),
            reason,
        };
        if c.name.trim().is_empty() {
            return Err(fail("name must not be empty".into()));
        }
        if !seen.insert(c.name.as_str()) {
            return Err(fail("name is used by another channel".into()));
        }
        match c.kind {
            ChannelKind::Webhook | ChannelKind::Alertmanager => match &c.url {
                None => return Err(fail(format!("kind {} needs url", c.kind.as_str()))),
                Some(u) if !(u.starts_with("http://") || u.starts_with("https://")) => {
                    return Err(fail(format!(
                        "url {u:?} must start with http:// or https://"
                    )));
                }
                Some(_) => {}
            },
            ChannelKind::Email => crate::email::check(c).map_err(fail)?,
            ChannelKind::Log => {}
        }
        if c.kind == ChannelKind::Alertmanager && c.resend.as_millis() == 0 {
            return Err(fail("resend must be positive".into()));
        }
        if c.timeout.as_millis() == 0 {
            return Err(fail("timeout must be positive".into()));
        }
        if c.backoff.as_millis() == 0 || c.backoff_max < c.backoff {
            return Err(fail(
                "backoff must be positive and at most backoff_max".into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct File {
        #[serde(default)]
        alerts: AlertConfig,
        #[serde(default, rename = "channel")]
        channels: Vec<ChannelConfig>,
    }

    const EXAMPLE: &str = r#"
        [alerts]
        for = "0s"
        repeat = "1h"
        send_resolved = true

        [alerts.kind.backlog]
        for = "5m"
        repeat = "30m"

        [alerts.kind.traffic_surge]
        send_resolved = false

        [[channel]]
        name = "ops"
        kind = "webhook"
        url = "http://127.0.0.1:9000/hook"
        min_severity = "warning"
        kinds = ["backlog", "broker_down"]
        clusters = ["orders-rmq"]

        [[channel]]
        name = "am"
        kind = "alertmanager"
        url = "http://127.0.0.1:9093"

        [[channel]]
        name = "mail"
        kind = "email"
        smtp = "127.0.0.1:2525"
        from = "mqwatch@example.invalid"
        to = ["ops@example.invalid"]

        [[channel]]
        name = "log"
        kind = "log"
    "#;

    #[test]
    fn the_documented_example_parses_validates_and_resolves_per_kind() {
        let f: File = toml::from_str(EXAMPLE).unwrap();
        validate_channels(&f.channels).unwrap();
        let a = &f.alerts;
        assert_eq!(a.pending_for_ms(FindingKind::Backlog), 300_000);
        assert_eq!(a.repeat_ms(FindingKind::Backlog), 1_800_000);
        assert_eq!(a.pending_for_ms(FindingKind::BrokerDown), 0);
        assert_eq!(a.repeat_ms(FindingKind::BrokerDown), 3_600_000);
        assert!(!a.send_resolved(FindingKind::TrafficSurge));
        assert!(a.send_resolved(FindingKind::Backlog));
        assert_eq!(f.channels[0].timeout, Span::from_secs(5));
        // The module doc's example is the same config.
        let doc: File = toml::from_str(
            &include_str!("config.rs")
                .lines()
                .skip_while(|l| !l.starts_with("//! ```toml"))
                .skip(1)
                .take_while(|l| !l.starts_with("//! ```"))
                .map(|l| l.trim_start_matches("//!").trim_start())
                .collect::<Vec<_>>()
                .join("\n"),
        )
        .unwrap();
        validate_channels(&doc.channels).unwrap();
        assert_eq!(doc.alerts, {
            let mut a = f.alerts.clone();
            a.kind.remove(&FindingKind::TrafficSurge);
            a
        });
        assert_eq!(
            AlertConfig::default(),
            toml::from_str::<File>("").unwrap().alerts
        );
    }

    #[test]
    fn unknown_keys_and_kinds_are_errors() {
        let err = toml::from_str::<File>("[alerts]\nrepat = \"1h\"")
            .err()
            .unwrap();
        assert!(err.to_string().contains("repat"), "{err}");
        let err = toml::from_str::<File>("[alerts.kind.lag]\nfor = \"1m\"")
            .err()
            .unwrap();
        assert!(err.to_string().contains("lag"), "{err}");
        let err = toml::from_str::<File>("[[channel]]\nname = \"x\"\nkind = \"slack\"")
            .err()
            .unwrap();
        assert!(err.to_string().contains("slack"), "{err}");
        let err = toml::from_str::<File>("[[channel]]\nname = \"x\"\nkind = \"log\"\nurll = \"\"")
            .err()
            .unwrap();
        assert!(err.to_string().contains("urll"), "{err}");
    }

    #[test]
    fn validation_names_the_channel_and_the_key() {
        let mut hook = ChannelConfig::new("ops", ChannelKind::Webhook);
        let err = validate_channels(std::slice::from_ref(&hook)).unwrap_err();
        assert_eq!(err.to_string(), "channel[0] (ops): kind webhook needs url");
        hook.url = Some("ftp://x".into());
        let err = validate_channels(std::slice::from_ref(&hook)).unwrap_err();
        assert!(err.reason.contains("http://"), "{err}");
        hook.url = Some("http://127.0.0.1:1/".into());
        let err = validate_channels(&[hook.clone(), hook.clone()]).unwrap_err();
        assert_eq!(err.index, 1);
        assert!(err.reason.contains("another channel"));
        let mail = ChannelConfig::new("mail", ChannelKind::Email);
        assert!(
            validate_channels(&[mail])
                .unwrap_err()
                .reason
                .contains("smtp, from and to")
        );
        let mut slow = ChannelConfig::new("log", ChannelKind::Log);
        slow.backoff_max = Span::from_millis(10);
        assert!(
            validate_channels(&[slow])
                .unwrap_err()
                .reason
                .contains("backoff")
        );
    }

    #[test]
    fn routing_by_severity_kind_and_cluster() {
        let mut c = ChannelConfig::new("ops", ChannelKind::Log);
        assert!(c.accepts(FindingKind::TrafficSurge, "any", Severity::Info));
        c.min_severity = Severity::Warning;
        c.kinds = vec![FindingKind::Backlog];
        c.clusters = vec!["rmq".into()];
        assert!(c.accepts(FindingKind::Backlog, "rmq", Severity::Warning));
        assert!(c.accepts(FindingKind::Backlog, "rmq", Severity::Critical));
        assert!(!c.accepts(FindingKind::Backlog, "rmq", Severity::Info));
        assert!(!c.accepts(FindingKind::BrokerDown, "rmq", Severity::Critical));
        assert!(!c.accepts(FindingKind::Backlog, "kafka", Severity::Critical));
    }

    #[test]
    fn backoff_doubles_up_to_its_cap() {
        let c = ChannelConfig::new("ops", ChannelKind::Log);
        let waits: Vec<u64> = (1..=11).map(|a| c.backoff_ms(a)).collect();
        assert_eq!(
            waits,
            vec![
                1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000,
                300_000
            ]
        );
        assert_eq!(c.backoff_ms(u32::MAX), 300_000);
    }
}
