//! The email channel: one message per notification (firing, repeat, resolved) over SMTP with `lettre`, sent by
//! the [`Deliverer`](crate::Deliverer) from the outbox like every channel (a failed send is retried with the
//! channel's backoff; nothing is dropped).
//!
//! Config (`[[channel]]`, kind `email`): `smtp = "host:port"`, `from`, `to = [...]`, `tls` = `starttls` (default:
//! upgrade the connection and fail when the server does not offer STARTTLS), `tls` (implicit TLS, e.g. port 465)
//! or `none` (plain text, for a relay on the same host or network); `username` with `password` or
//! `password_file` for SMTP AUTH, refused with `tls = "none"` so credentials never travel in clear. Server
//! certificates are checked against the system's roots.
//!
//! A message's subject names the event and the alarm key (`[mqwatch] FIRING backlog/rmq/group g1 (warning)`); its
//! plain-text body repeats the key and gives the cluster, subject, severity, times, the finding's message and its
//! evidence, and the outbox id.

use crate::config::{ChannelConfig, SmtpTls};
use crate::lifecycle::{Event, Notification};
use lettre::message::Mailbox;
use lettre::message::header::ContentType;
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

/// What an email channel needs to send, checked from its config.
#[derive(Clone, Debug)]
pub(crate) struct EmailSender {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
    to: Vec<Mailbox>,
    /// `host:port`, for messages.
    server: String,
}

/// The parts of an email channel's config, checked; the error names the key.
struct Parsed {
    host: String,
    port: u16,
    from: Mailbox,
    to: Vec<Mailbox>,
    credentials: Option<Credentials>,
}

fn parse(c: &ChannelConfig) -> Result<Parsed, String> {
    let smtp = c
        .smtp
        .as_deref()
        .ok_or("kind email needs smtp, from and to")?;
    let (host, port) = smtp
        .rsplit_once(':')
        .ok_or_else(|| format!("smtp {smtp:?} must be host:port"))?;
    let port: u16 = port
        .parse()
        .map_err(|_| format!("smtp {smtp:?}: port {port:?} is not a number"))?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(format!("smtp {smtp:?} has no host"));
    }
    let from = c
        .from
        .as_deref()
        .ok_or("kind email needs smtp, from and to")?;
    let from: Mailbox = from
        .parse()
        .map_err(|e| format!("from {from:?} is not a mail address: {e}"))?;
    if c.to.is_empty() {
        return Err("kind email needs smtp, from and to".into());
    }
    let to =
        c.to.iter()
            .map(|t| {
                t.parse::<Mailbox>()
                    .map_err(|e| format!("to {t:?} is not a mail address: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
    let password = match (&c.password, &c.password_file) {
        (Some(_), Some(_)) => return Err("give password or password_file, not both".into()),
        (Some(p), None) => Some(p.0.clone()),
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("password_file {}: {e}", path.display()))?;
            Some(text.lines().next().unwrap_or_default().to_string())
        }
        (None, None) => None,
    };
    let credentials = match (&c.username, password) {
        (Some(user), Some(password)) => Some(Credentials::new(user.clone(), password)),
        (None, None) => None,
        (Some(_), None) => return Err("username needs password or password_file".into()),
        (None, Some(_)) => return Err("password needs username".into()),
    };
    if credentials.is_some() && c.tls == SmtpTls::None {
        return Err(
            "username/password need tls = \"starttls\" or \"tls\" (credentials are never sent in clear)"
                .into(),
        );
    }
    Ok(Parsed {
        host: host.to_string(),
        port,
        from,
        to,
        credentials,
    })
}

/// Checks an email channel's keys (addresses, `host:port`, credentials and `tls`); the error names the key.
pub(crate) fn check(c: &ChannelConfig) -> Result<(), String> {
    parse(c).map(drop)
}

impl EmailSender {
    /// A sender for a validated email channel.
    pub(crate) fn new(c: &ChannelConfig) -> Result<Self, String> {
        let p = parse(c)?;
        let tls = |host: &str| {
            TlsParameters::new(host.to_string())
                .map_err(|e| format!("smtp {}: TLS setup: {e}", host))
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&p.host)
            .port(p.port)
            .timeout(Some(c.timeout.0))
            .tls(match c.tls {
                SmtpTls::None => Tls::None,
                SmtpTls::Starttls => Tls::Required(tls(&p.host)?),
                SmtpTls::Tls => Tls::Wrapper(tls(&p.host)?),
            });
        if let Some(credentials) = p.credentials {
            builder = builder.credentials(credentials);
        }
        Ok(Self {
            transport: builder.build(),
            from: p.from,
            to: p.to,
            server: format!("{}:{}", p.host, p.port),
        })
    }

    /// Sends one notification as one message to every recipient; the error names the channel, the server and
    /// what the server or connection said.
    pub(crate) async fn send(
        &self,
        channel: &str,
        outbox_id: i64,
        n: &Notification,
    ) -> Result<(), String> {
        let mut builder = Message::builder()
            .from(self.from.clone())
            .subject(subject(n))
            .header(ContentType::TEXT_PLAIN);
        for to in &self.to {
            builder = builder.to(to.clone());
        }
        let message = builder
            .body(body(channel, outbox_id, n))
            .map_err(|e| format!("email {channel}: cannot build the message: {e}"))?;
        self.transport.send(message).await.map(drop).map_err(|e| {
            format!(
                "email {channel} via smtp {}: {}",
                self.server,
                crate::deliver::error_chain(&e)
            )
        })
    }
}

/// `[mqwatch] FIRING backlog/rmq/group g1 (warning)`.
pub fn subject(n: &Notification) -> String {
    let event = match n.event {
        Event::Firing => "FIRING",
        Event::Repeat => "STILL FIRING",
        Event::Resolved => "RESOLVED",
    };
    format!("[mqwatch] {event} {} ({})", n.key, n.severity.as_str())
}

/// The plain-text body.
pub fn body(channel: &str, outbox_id: i64, n: &Notification) -> String {
    let f = &n.finding;
    let what = match n.event {
        Event::Firing => "started firing",
        Event::Repeat => "is still firing",
        Event::Resolved => "resolved",
    };
    let evidence = serde_json::to_string_pretty(&f.evidence).unwrap_or_default();
    format!(
        "Alarm {key} {what}.\r\n\r\n\
         Alarm:     {key}\r\n\
         Event:     {event}\r\n\
         Severity:  {severity}\r\n\
         Cluster:   {cluster} ({engine})\r\n\
         Subject:   {subject}\r\n\
         Since:     {since}\r\n\
         Told at:   {at}\r\n\
         Message:   {message}\r\n\r\n\
         Evidence:\r\n{evidence}\r\n\r\n\
         -- \r\nmqwatch, channel {channel}, delivery {outbox_id}\r\n",
        key = n.key,
        event = serde_json::to_value(n.event)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        severity = n.severity.as_str(),
        cluster = f.cluster,
        engine = f.engine.as_str(),
        subject = f.subject,
        since = crate::alertmanager::rfc3339(n.since_ms),
        at = crate::alertmanager::rfc3339(n.at_ms),
        message = f.message,
        evidence = evidence.replace('\n', "\r\n"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ChannelKind;
    use mqwatch_model::{Engine, Finding, FindingKind, GroupRef, Severity, Subject};

    fn mail() -> ChannelConfig {
        let mut c = ChannelConfig::new("mail", ChannelKind::Email);
        c.smtp = Some("127.0.0.1:2525".into());
        c.from = Some("mqwatch <mqwatch@example.invalid>".into());
        c.to = vec!["ops@example.invalid".into()];
        c.tls = SmtpTls::None;
        c
    }

    #[test]
    fn keys_are_checked_and_named() {
        assert!(check(&mail()).is_ok());
        let mut c = mail();
        c.smtp = Some("127.0.0.1".into());
        assert!(check(&c).unwrap_err().contains("host:port"));
        c.smtp = Some("h:smtp".into());
        assert!(check(&c).unwrap_err().contains("not a number"));
        let mut c = mail();
        c.to.push("not an address".into());
        assert!(check(&c).unwrap_err().starts_with("to \"not an address\""));
        let mut c = mail();
        c.username = Some("u".into());
        assert!(check(&c).unwrap_err().contains("needs password"));
        c.password = Some("p".into());
        assert!(check(&c).unwrap_err().contains("never sent in clear"));
        assert!(
            !format!("{c:?}").contains("\"p\""),
            "the password is not shown"
        );
        c.tls = SmtpTls::Starttls;
        assert!(check(&c).is_ok());
        c.password_file = Some("/nonexistent/pw".into());
        assert!(check(&c).unwrap_err().contains("not both"));
        c.password = None;
        assert!(check(&c).unwrap_err().contains("/nonexistent/pw"));
        assert!(EmailSender::new(&mail()).is_ok());
    }

    #[test]
    fn subject_and_body_name_the_alarm() {
        let n = Notification {
            event: Event::Resolved,
            key: "backlog/rmq/group g1".into(),
            severity: Severity::Warning,
            since_ms: 1_000,
            at_ms: 2_000,
            finding: Finding::new(
                FindingKind::Backlog,
                "rmq",
                Engine::Rocketmq,
                Subject::Group {
                    group: GroupRef::new("g1"),
                    topic: None,
                },
                "group g1 is 20 messages behind",
                0,
            ),
            channels: vec!["mail".into()],
        };
        assert_eq!(
            subject(&n),
            "[mqwatch] RESOLVED backlog/rmq/group g1 (warning)"
        );
        let text = body("mail", 7, &n);
        assert!(
            text.starts_with("Alarm backlog/rmq/group g1 resolved."),
            "{text}"
        );
        assert!(text.contains("Event:     resolved\r\n"), "{text}");
        assert!(text.contains("Cluster:   rmq (rocketmq)"), "{text}");
        assert!(text.contains("group g1 is 20 messages behind"), "{text}");
        assert!(text.contains("delivery 7"), "{text}");
    }
}
