//! mqwatch's alert stage: turns findings into alarms people act on. [`Alerting::evaluate`] is the alarm
//! lifecycle (pending → firing → resolved, keyed by kind + cluster + subject) with MQCloud's one notification per
//! key per hour, silences and routing to channels, as a pure function; its [`Outcome`] is written to the store
//! in one transaction, and a [`Deliverer`] drains the store's outbox through the channels with retries.
//!
//! Not here: deciding what is wrong (checks make findings), storing (crate `mqwatch-store`).

mod alertmanager;
mod config;
mod deliver;
pub mod email;
mod lifecycle;

pub use alertmanager::{alert_of_alarm, alert_of_notification, rfc3339};
pub use config::{
    AlertConfig, ChannelConfig, ChannelConfigError, ChannelKind, KindPolicy, Secret, SmtpTls,
    validate_channels,
};
pub use deliver::{Deliverer, DeliveryReport};
pub use lifecycle::{Alerting, Cycle, Event, Notification, Outcome};
