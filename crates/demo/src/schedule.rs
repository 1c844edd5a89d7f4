//! The fault schedule: which fault is injected when. One period (30 minutes at speed 1) holds every fault once,
//! each with its own start and length; the period repeats forever. `speed` compresses the schedule (speed 30:
//! one period every minute). The schedule is anchored so that the moment the demo starts falls 7 minutes into a
//! period: a backlog, a blocked consumer and a bookie missing entries are already under way, so a visitor sees
//! alarms at once, and the rest follow within minutes.
//!
//! | fault            | where                                   | minutes of the period |
//! |------------------|-----------------------------------------|-----------------------|
//! | backlog          | RocketMQ group `billing` stops consuming | 0 – 12                |
//! | missing entries  | BookKeeper bookie 3 loses some entries   | 2 – 16                |
//! | blocked consumer | RocketMQ group `notify`, its 2nd client  | 4 – 11                |
//! | broker down      | Kafka broker 3 leaves the cluster        | 13 – 18               |
//! | stuck startup    | Kafka broker 3 back, fenced for long     | 18 – 26               |
//!
//! Each fault ends by itself (recovery): the consumer resumes and catches up, the bookie's entries are
//! re-replicated, the broker comes back and finally unfences.

/// What goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultKind {
    /// A consumer group stops consuming: its backlog grows.
    Backlog,
    /// One client of a group holds cached messages and consumes nothing.
    BlockedConsumer,
    /// A broker stops answering and leaves the registry.
    BrokerDown,
    /// A bookie lost entries it must hold.
    MissingEntries,
    /// A broker registered but fenced (not serving) for long.
    StuckStartup,
}

impl FaultKind {
    /// Every fault, in schedule order.
    pub const ALL: [FaultKind; 5] = [
        FaultKind::Backlog,
        FaultKind::MissingEntries,
        FaultKind::BlockedConsumer,
        FaultKind::BrokerDown,
        FaultKind::StuckStartup,
    ];

    /// Start and end within the period, in minutes at speed 1.
    fn window_min(self) -> (u64, u64) {
        match self {
            FaultKind::Backlog => (0, 12),
            FaultKind::MissingEntries => (2, 16),
            FaultKind::BlockedConsumer => (4, 11),
            FaultKind::BrokerDown => (13, 18),
            FaultKind::StuckStartup => (18, 26),
        }
    }
}

/// The period at speed 1.
pub const PERIOD_MS: u64 = 30 * 60_000;
/// Where in the period the demo starts, at speed 1.
pub const START_PHASE_MS: u64 = 7 * 60_000;

/// One occurrence of a fault in real time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occurrence {
    /// Which period (0 = the first after the epoch).
    pub index: u64,
    /// When it started (ms since the Unix epoch).
    pub since_ms: u64,
    /// When it ends.
    pub until_ms: u64,
}

/// The schedule in real time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Schedule {
    /// Where period 0 starts (ms since the Unix epoch).
    pub epoch_ms: u64,
    /// How much faster than real time the schedule runs (≥ 1 makes sense; any positive value works).
    pub speed: f64,
}

impl Schedule {
    /// A schedule at `speed` whose phase at `start_ms` is [`START_PHASE_MS`], with whole periods before it reaching
    /// back at least `history_ms` (so that history computed from the epoch on has the same faults).
    pub fn anchored(start_ms: u64, history_ms: u64, speed: f64) -> Self {
        let speed = if speed.is_finite() && speed > 0.0 {
            speed
        } else {
            1.0
        };
        let real = |sim_ms: u64| (sim_ms as f64 / speed).round() as u64;
        let period = real(PERIOD_MS).max(1);
        let periods_back = history_ms.div_ceil(period);
        let back = real(START_PHASE_MS) + periods_back * period;
        Schedule {
            epoch_ms: start_ms.saturating_sub(back),
            speed,
        }
    }

    /// The real length of one period.
    pub fn period_ms(&self) -> u64 {
        self.real(PERIOD_MS).max(1)
    }

    /// A schedule duration (speed 1) in real ms.
    pub fn real(&self, sim_ms: u64) -> u64 {
        (sim_ms as f64 / self.speed).round() as u64
    }

    /// The occurrence of `kind` under way at `now_ms`, if any.
    pub fn active(&self, kind: FaultKind, now_ms: u64) -> Option<Occurrence> {
        let elapsed = now_ms.checked_sub(self.epoch_ms)?;
        let period = self.period_ms();
        let index = elapsed / period;
        let phase = elapsed % period;
        let (from, to) = kind.window_min();
        let (from, to) = (self.real(from * 60_000), self.real(to * 60_000));
        (from <= phase && phase < to).then(|| {
            let start = self.epoch_ms + index * period;
            Occurrence {
                index,
                since_ms: start + from,
                until_ms: start + to,
            }
        })
    }

    /// The most recent occurrence of `kind` that started at or before `now_ms` (under way or over).
    pub fn last(&self, kind: FaultKind, now_ms: u64) -> Option<Occurrence> {
        let elapsed = now_ms.checked_sub(self.epoch_ms)?;
        let period = self.period_ms();
        let (from, to) = kind.window_min();
        let (from, to) = (self.real(from * 60_000), self.real(to * 60_000));
        let mut index = elapsed / period;
        if elapsed % period < from {
            index = index.checked_sub(1)?;
        }
        let start = self.epoch_ms + index * period;
        Some(Occurrence {
            index,
            since_ms: start + from,
            until_ms: start + to,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 60_000;

    #[test]
    fn the_start_falls_seven_minutes_into_a_period_with_three_faults_under_way() {
        let start = 1_800_000_000_000;
        let s = Schedule::anchored(start, 3 * 3_600_000, 1.0);
        assert!(s.epoch_ms <= start - 3 * 3_600_000);
        assert_eq!((start - s.epoch_ms) % PERIOD_MS, START_PHASE_MS);
        let on: Vec<FaultKind> = FaultKind::ALL
            .into_iter()
            .filter(|k| s.active(*k, start).is_some())
            .collect();
        assert_eq!(
            on,
            [
                FaultKind::Backlog,
                FaultKind::MissingEntries,
                FaultKind::BlockedConsumer
            ]
        );
        let backlog = s.active(FaultKind::Backlog, start).unwrap();
        assert_eq!(backlog.since_ms, start - 7 * MIN);
        assert_eq!(backlog.until_ms, start + 5 * MIN);
    }

    #[test]
    fn every_fault_recovers_and_comes_back_one_period_later() {
        let s = Schedule::anchored(10 * PERIOD_MS, 0, 1.0);
        for kind in FaultKind::ALL {
            let first = (0..PERIOD_MS / MIN)
                .map(|m| s.epoch_ms + m * MIN)
                .find_map(|t| s.active(kind, t))
                .unwrap_or_else(|| panic!("{kind:?} never happens"));
            assert!(
                s.active(kind, first.until_ms).is_none(),
                "{kind:?} recovers"
            );
            assert!(s.active(kind, first.since_ms - 1).is_none());
            let next = s.active(kind, first.since_ms + PERIOD_MS).unwrap();
            assert_eq!(next.index, first.index + 1);
            assert_eq!(s.last(kind, first.until_ms + MIN), Some(first));
        }
    }

    #[test]
    fn speed_compresses_the_schedule() {
        let start = 1_800_000_000_000;
        let s = Schedule::anchored(start, 600_000, 30.0);
        assert_eq!(s.period_ms(), 60_000);
        let backlog = s.active(FaultKind::Backlog, start).unwrap();
        assert_eq!(start - backlog.since_ms, 14_000, "7 min / 30");
        assert_eq!(backlog.until_ms - backlog.since_ms, 24_000, "12 min / 30");
        let down = (0..60)
            .map(|sec| start + sec * 1000)
            .find_map(|t| s.active(FaultKind::BrokerDown, t))
            .unwrap();
        assert_eq!(down.since_ms - start, 12_000, "13 min - 7 min, / 30");
        assert!(Schedule::anchored(start, 0, f64::NAN).speed == 1.0);
    }

    #[test]
    fn before_the_epoch_nothing_happens() {
        let s = Schedule::anchored(PERIOD_MS * 4, 0, 1.0);
        for kind in FaultKind::ALL {
            assert!(s.active(kind, s.epoch_ms - 1).is_none());
        }
    }
}
