//! What the lag and replication checks need to remember between cycles: the sliding window of each group's
//! committed positions per log ([`Positions`], read by `consumer_lag_status`), and since when each partition has
//! been under-replicated ([`UnderReplicatedSince`], read by `under_replication_stuck`).
//!
//! Engine-neutral: a Kafka partition and a RocketMQ queue are both [`LogRef`]s. A sample's `committed_at_ms` is
//! the first look that saw its committed offset (engines do not report when a commit was made).

use mqwatch_model::{ClusterSnapshot, GroupRef, LogRef, PositionSample};
use std::collections::{HashMap, HashSet};

/// Default number of samples kept per (group, log): Burrow's `intervals`.
pub const DEFAULT_WINDOW: usize = 10;

/// The windows of one cluster: group → log → the last `window` samples, oldest first.
#[derive(Debug, Clone)]
pub struct Positions {
    window: usize,
    groups: HashMap<GroupRef, HashMap<LogRef, Vec<PositionSample>>>,
}

impl Default for Positions {
    fn default() -> Self {
        Self::new(DEFAULT_WINDOW)
    }
}

impl Positions {
    /// Empty windows of `window` samples (at least 2).
    pub fn new(window: usize) -> Self {
        Self {
            window: window.max(2),
            groups: HashMap::new(),
        }
    }

    /// Samples kept per window.
    pub fn window_len(&self) -> usize {
        self.window
    }

    /// Changes the window length (at least 2); longer windows drop their oldest samples.
    pub fn set_window(&mut self, window: usize) {
        self.window = window.max(2);
        for logs in self.groups.values_mut() {
            for w in logs.values_mut() {
                trim(w, self.window);
            }
        }
    }

    /// Adds one sample per committed position of `s` (at its `taken_at_ms`). A position without a commit loses
    /// its window. When the snapshot has no collector errors, groups and logs it no longer lists are forgotten
    /// (a failed read keeps them).
    pub fn feed(&mut self, s: &ClusterSnapshot) {
        let at = s.taken_at_ms;
        let mut listed: HashSet<(&GroupRef, &LogRef)> = HashSet::new();
        for g in &s.groups {
            let logs = self.groups.entry(g.group.clone()).or_default();
            for p in &g.positions {
                let Some(committed) = p.committed else {
                    logs.remove(&p.log);
                    continue;
                };
                listed.insert((&g.group, &p.log));
                let w = logs.entry(p.log.clone()).or_default();
                let committed_at_ms = match w.last() {
                    Some(last) if last.committed == committed => last.committed_at_ms,
                    _ => at,
                };
                w.push(PositionSample {
                    committed,
                    latest: p.latest,
                    at_ms: at,
                    committed_at_ms,
                });
                trim(w, self.window);
            }
        }
        if s.errors.is_empty() {
            self.groups.retain(|g, logs| {
                logs.retain(|l, _| listed.contains(&(g, l)));
                !logs.is_empty()
            });
        }
    }

    /// The window of `group` on `log`, oldest first (empty when none).
    pub fn window(&self, group: &GroupRef, log: &LogRef) -> &[PositionSample] {
        self.groups
            .get(group)
            .and_then(|l| l.get(log))
            .map_or(&[], Vec::as_slice)
    }

    /// Windows kept.
    pub fn len(&self) -> usize {
        self.groups.values().map(HashMap::len).sum()
    }

    /// Whether no window is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

fn trim(w: &mut Vec<PositionSample>, window: usize) {
    if w.len() > window {
        w.drain(..w.len() - window);
    }
}

/// Partition → when it was first seen under-replicated (or below `min.insync.replicas`) in an unbroken run of
/// looks. A look where it is healthy (or offline: that is its own finding) clears it.
#[derive(Debug, Clone, Default)]
pub struct UnderReplicatedSince {
    since: HashMap<LogRef, u64>,
}

impl UnderReplicatedSince {
    /// Updates from `s`. A snapshot without partitions (metadata could not be read) changes nothing.
    pub fn feed(&mut self, s: &ClusterSnapshot) {
        if s.partitions.is_empty() {
            return;
        }
        let mut now = HashMap::new();
        for p in s
            .partitions
            .iter()
            .filter(|p| p.is_under_replicated_or_below_min_isr())
        {
            let since = self.since.get(&p.log).copied().unwrap_or(s.taken_at_ms);
            now.insert(p.log.clone(), since);
        }
        self.since = now;
    }

    /// Since when `log` has been under-replicated, if it is.
    pub fn since(&self, log: &LogRef) -> Option<u64> {
        self.since.get(log).copied()
    }

    /// Every under-replicated partition and its since-time.
    pub fn all(&self) -> &HashMap<LogRef, u64> {
        &self.since
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mqwatch_model::{CollectorErrorRecord, GroupPosition, GroupStatus, PartitionStatus};

    fn log(p: i32) -> LogRef {
        LogRef::Partition {
            topic: "t".into(),
            partition: p,
        }
    }

    fn snap(at: u64, positions: &[(i32, Option<i64>, i64)]) -> ClusterSnapshot {
        ClusterSnapshot {
            cluster: "c".into(),
            taken_at_ms: at,
            groups: vec![GroupStatus {
                group: GroupRef::new("g"),
                positions: positions
                    .iter()
                    .map(|(p, committed, latest)| GroupPosition {
                        log: log(*p),
                        earliest: 0,
                        latest: *latest,
                        committed: *committed,
                        oldest_unconsumed_age_ms: None,
                        age_source: None,
                    })
                    .collect(),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn the_window_keeps_the_last_samples_and_when_each_commit_was_first_seen() {
        let mut p = Positions::new(3);
        let g = GroupRef::new("g");
        for (i, c) in [10, 20, 20, 20, 30].into_iter().enumerate() {
            p.feed(&snap(i as u64 * 1000, &[(0, Some(c), 50)]));
        }
        let w = p.window(&g, &log(0));
        let got: Vec<(i64, u64, u64)> = w
            .iter()
            .map(|s| (s.committed, s.at_ms, s.committed_at_ms))
            .collect();
        assert_eq!(
            got,
            vec![(20, 2000, 1000), (20, 3000, 1000), (30, 4000, 4000)]
        );
        assert_eq!(w[2].lag(), 20);
        p.set_window(2);
        assert_eq!(p.window(&g, &log(0)).len(), 2);
        assert!(p.window(&GroupRef::new("other"), &log(0)).is_empty());
    }

    #[test]
    fn logs_without_commit_or_gone_are_forgotten_unless_the_read_failed() {
        let mut p = Positions::default();
        let g = GroupRef::new("g");
        p.feed(&snap(0, &[(0, Some(1), 5), (1, Some(1), 5)]));
        assert_eq!(p.len(), 2);
        let mut failed = snap(1, &[]);
        failed.errors.push(CollectorErrorRecord {
            node: None,
            request: "OffsetFetch (9)".into(),
            error: "timeout".into(),
        });
        p.feed(&failed);
        assert_eq!(p.len(), 2, "a failed read keeps the windows");
        p.feed(&snap(2, &[(0, None, 5)]));
        assert!(p.is_empty(), "{:?}", p.window(&g, &log(1)));
    }

    #[test]
    fn under_replication_is_timed_from_its_first_look_until_it_clears() {
        let part = |isr: &[&str]| PartitionStatus {
            log: log(0),
            leader: Some("1".into()),
            leader_epoch: None,
            replicas: vec!["1".into(), "2".into()],
            isr: isr.iter().map(|r| r.to_string()).collect(),
            offline_replicas: vec![],
            min_insync_replicas: None,
            error: None,
        };
        let at = |ms, p: PartitionStatus| ClusterSnapshot {
            taken_at_ms: ms,
            partitions: vec![p],
            ..Default::default()
        };
        let mut u = UnderReplicatedSince::default();
        u.feed(&at(100, part(&["1"])));
        u.feed(&at(200, part(&["1"])));
        assert_eq!(u.since(&log(0)), Some(100));
        u.feed(&ClusterSnapshot::default());
        assert_eq!(u.since(&log(0)), Some(100), "no metadata: unchanged");
        u.feed(&at(300, part(&["1", "2"])));
        assert_eq!(u.since(&log(0)), None);
        u.feed(&at(400, part(&["2"])));
        assert_eq!(u.since(&log(0)), Some(400));
        assert_eq!(u.all().len(), 1);
    }
}
