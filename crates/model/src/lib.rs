//! mqwatch-model: the engine-neutral vocabulary every other crate speaks.
//!
//! What it owns: the names of things in a watched estate ([`Engine`], clusters, [`NodeRef`], [`LogRef`] for a
//! partition/queue/ledger, [`GroupRef`]), a ledger's layout and replica schedule ([`LedgerLayout`], [`Stripes`]), what one collection cycle observed ([`ClusterSnapshot`]) and the
//! results checks return ([`Finding`] with its closed set of [`FindingKind`]s).
//!
//! What it is not: no I/O, no logic beyond naming, parsing and keying. Engine crates fill these types; checks read
//! them; the alert stage keys alarms by [`Finding::key`].

mod duration;
mod finding;
mod lag;
mod ledger;
mod observation;
mod partition;
mod snapshot;
mod topology;

pub use duration::{Span, parse_duration};
pub use finding::{Evidence, Finding, FindingKey, FindingKind, Severity, UnknownFindingKind};
pub use lag::{GroupLagStatus, LagStatus, LogLagStatus, PositionSample};
pub use ledger::{
    BookieAnswer, EntryRun, LedgerLayout, LedgerObservation, LedgerSegment, LedgerState, Stripes,
    UnderReplicationMark,
};
pub use observation::ObservedNodeState;
pub use partition::PartitionStatus;
pub use snapshot::{
    AgeSource, ClientQueue, ClientStatus, ClusterSnapshot, CollectorErrorRecord, GroupPosition,
    GroupStatus, LogStatus, MessageModel, NodeStatus, OffsetMovedRecord, TrafficMetric,
    TrafficSample,
};
pub use topology::{Engine, GroupRef, LogRef, NodeRef, NodeRole, Subject, UnknownEngine};
