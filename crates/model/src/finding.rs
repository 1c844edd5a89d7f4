//! Findings: what a check concluded, in one vocabulary for every engine, the API, the CLI's JSON and the alarms.
//! The kinds are a closed set (ARCHITECTURE.md lists them; new kinds are added there first, then here).

use crate::topology::{Engine, Subject};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// How urgent a finding is. Ordered: `Info < Warning < Critical`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is wrong yet.
    Info,
    /// Something degrades or will soon.
    Warning,
    /// Data is at risk or service is down.
    Critical,
}

impl Severity {
    /// The lowercase spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

macro_rules! finding_kinds {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $sev:ident; )*) => {
        /// Every kind of finding mqwatch raises. Serialised in snake_case, e.g. `entries_below_ack_quorum`.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum FindingKind {
            $( $(#[$doc])* $variant, )*
        }

        impl FindingKind {
            /// Every kind, in ARCHITECTURE.md's order.
            pub const ALL: &'static [FindingKind] = &[$(FindingKind::$variant),*];

            /// The snake_case name used in JSON, config tables and alarm keys.
            pub fn as_str(self) -> &'static str {
                match self { $(FindingKind::$variant => $name,)* }
            }

            /// The severity a finding of this kind gets unless its check says otherwise.
            pub fn default_severity(self) -> Severity {
                match self { $(FindingKind::$variant => Severity::$sev,)* }
            }
        }
    };
}

finding_kinds! {
    /// A consumer group is behind (count and, for clustering consumers, age over thresholds).
    Backlog = "backlog", Warning;
    /// Burrow-style status of a consumer group over a sliding window (WARNING, STALL, STOP, REWIND).
    ConsumerLagStatus = "consumer_lag_status", Warning;
    /// A consumer client has cached messages but has not consumed for too long.
    ClientBlocked = "client_blocked", Warning;
    /// Messages sent back for retry (or to the dead-letter queue) over a threshold.
    ConsumeFailure = "consume_failure", Warning;
    /// Producers report send exceptions, or a probe message failed or was lost.
    ProduceFailure = "produce_failure", Warning;
    /// A consumer offset lies outside the queue's [min, max] offsets.
    OffsetOutOfRange = "offset_out_of_range", Warning;
    /// A committed offset is below the earliest retained offset: messages were lost to retention.
    RetentionLoss = "retention_loss", Critical;
    /// Members of one group subscribe to different topics or tags.
    SubscriptionInconsistent = "subscription_inconsistent", Warning;
    /// A topic's traffic rose above its recent daily maxima by a margin.
    TrafficSurge = "traffic_surge", Info;
    /// A name server does not answer.
    NameServerDown = "name_server_down", Critical;
    /// A broker that was seen or is expected does not answer or has left the cluster.
    BrokerDown = "broker_down", Critical;
    /// A registered bookie stays silent after re-checks.
    BookieUnreachable = "bookie_unreachable", Critical;
    /// A slave's max offset trails its master's by more than a threshold.
    SlaveFallBehind = "slave_fall_behind", Warning;
    /// A host crossed a resource threshold (CPU, memory, load, disk, connections, IO).
    HostThreshold = "host_threshold", Warning;
    /// A node registered but has not become active for too long.
    StartupPending = "startup_pending", Warning;
    /// A node has been in controlled shutdown for too long.
    ControlledShutdownPending = "controlled_shutdown_pending", Warning;
    /// A node is fenced.
    NodeFenced = "node_fenced", Warning;
    /// Replicas of a log are placed against the rules (duplicate members, too few racks).
    PlacementViolation = "placement_violation", Warning;
    /// Some entries of a closed ledger have no replica on any bookie.
    EntriesNoReplica = "entries_no_replica", Critical;
    /// Some entries have fewer replicas than the ack quorum.
    EntriesBelowAckQuorum = "entries_below_ack_quorum", Critical;
    /// Some entries have fewer replicas than the write quorum (but at least the ack quorum).
    EntriesBelowWriteQuorum = "entries_below_write_quorum", Warning;
    /// A log has stayed under-replicated for longer than the grace period.
    UnderReplicationStuck = "under_replication_stuck", Critical;
    /// A partition's ISR is smaller than its replica set.
    UnderReplicatedPartition = "under_replicated_partition", Warning;
    /// A partition's ISR is smaller than min.insync.replicas: acks=all producers fail.
    UnderMinIsr = "under_min_isr", Critical;
    /// A partition has no leader.
    OfflinePartition = "offline_partition", Critical;
    /// A log has fewer replicas than configured.
    ReplicationFactorLow = "replication_factor_low", Warning;
    /// A cluster answered badly or not at all; names the request and the node.
    CollectorError = "collector_error", Warning;
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that names no finding kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown finding kind {0:?}")]
pub struct UnknownFindingKind(pub String);

impl FromStr for FindingKind {
    type Err = UnknownFindingKind;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        FindingKind::ALL
            .iter()
            .copied()
            .find(|k| k.as_str() == s)
            .ok_or_else(|| UnknownFindingKind(s.to_string()))
    }
}

/// The numbers that made a finding, by name (e.g. `count`, `age_ms`, `threshold`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Evidence(pub BTreeMap<String, serde_json::Value>);

impl Evidence {
    /// Empty evidence.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same evidence with one more named value.
    pub fn with(mut self, name: &str, value: impl Into<serde_json::Value>) -> Self {
        self.0.insert(name.to_string(), value.into());
        self
    }

    /// A named value, if present.
    pub fn get(&self, name: &str) -> Option<&serde_json::Value> {
        self.0.get(name)
    }
}

/// What a check concluded about one subject of one cluster.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    /// What kind of problem.
    pub kind: FindingKind,
    /// How urgent.
    pub severity: Severity,
    /// The cluster's configured name.
    pub cluster: String,
    /// The cluster's engine.
    pub engine: Engine,
    /// What it is about.
    pub subject: Subject,
    /// One line for people, e.g. "group g1 is 12 000 messages and 7 min behind".
    pub message: String,
    /// The numbers behind it.
    pub evidence: Evidence,
    /// When the condition was first seen (ms since the Unix epoch).
    pub first_seen_ms: u64,
}

/// The identity of an alarm: kind + cluster + subject. Two findings with one key are the same alarm.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct FindingKey {
    /// The finding kind.
    pub kind: FindingKind,
    /// The cluster's name.
    pub cluster: String,
    /// The subject.
    pub subject: Subject,
}

impl fmt::Display for FindingKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}/{}", self.kind, self.cluster, self.subject)
    }
}

impl Finding {
    /// A finding of `kind` with the kind's default severity and no evidence yet.
    pub fn new(
        kind: FindingKind,
        cluster: impl Into<String>,
        engine: Engine,
        subject: Subject,
        message: impl Into<String>,
        first_seen_ms: u64,
    ) -> Self {
        Self {
            kind,
            severity: kind.default_severity(),
            cluster: cluster.into(),
            engine,
            subject,
            message: message.into(),
            evidence: Evidence::new(),
            first_seen_ms,
        }
    }

    /// The same finding with other evidence.
    pub fn with_evidence(mut self, evidence: Evidence) -> Self {
        self.evidence = evidence;
        self
    }

    /// The same finding with another severity.
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// The alarm key: kind + cluster + subject.
    pub fn key(&self) -> FindingKey {
        FindingKey {
            kind: self.kind,
            cluster: self.cluster.clone(),
            subject: self.subject.clone(),
        }
    }

    /// The highest severity among `findings`, if any.
    pub fn worst<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Option<Severity> {
        findings.into_iter().map(|f| f.severity).max()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{NodeRef, NodeRole};

    #[test]
    fn every_kind_round_trips_through_its_name_and_json() {
        assert_eq!(FindingKind::ALL.len(), 27);
        for &k in FindingKind::ALL {
            assert_eq!(k.as_str().parse::<FindingKind>(), Ok(k));
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
        }
        assert!("lag".parse::<FindingKind>().is_err());
    }

    #[test]
    fn key_ignores_evidence_and_severity_and_worst_picks_the_max() {
        let node = NodeRef::new(NodeRole::Broker, "broker-b:0");
        let a = Finding::new(
            FindingKind::BrokerDown,
            "rmq",
            Engine::Rocketmq,
            Subject::Node { node },
            "broker-b:0 does not answer",
            1,
        );
        let b = a
            .clone()
            .with_evidence(Evidence::new().with("timeouts", 3))
            .with_severity(Severity::Warning);
        assert_eq!(a.key(), b.key());
        assert_eq!(a.key().to_string(), "broker_down/rmq/broker broker-b:0");
        assert_eq!(Finding::worst([&a, &b]), Some(Severity::Critical));
        assert_eq!(Finding::worst([]), None);
        assert_eq!(b.evidence.get("timeouts"), Some(&serde_json::json!(3)));
    }
}
