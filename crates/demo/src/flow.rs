//! Offsets over time, the way a real cluster accumulates them: a topic's produced messages (a daily-looking rate
//! with smooth noise, split over its logs by fixed shares) and a consumer group's position on each log (a little
//! behind when healthy, frozen when it stops, catching up at three times the produce rate when it resumes).
//! Histories of both let the simulation answer what a broker answers: messages in the last minute, and the
//! store time of the first unconsumed message.

use crate::noise;
use std::collections::VecDeque;

/// How often histories take a point.
const HISTORY_STEP_MS: u64 = 5_000;
/// How far back histories reach.
const HISTORY_SPAN_MS: u64 = 3 * 3_600_000;

/// The daily shape of traffic at `t_ms` (UTC): low at night, a broad peak in the afternoon and a smaller one in
/// the evening; between about 0.25 and 1.
pub fn daily(t_ms: u64) -> f64 {
    let h = (t_ms % 86_400_000) as f64 / 3_600_000.0;
    let bell = |centre: f64, width: f64| {
        let d = (h - centre).abs().min(24.0 - (h - centre).abs());
        (-(d / width).powi(2)).exp()
    };
    (0.25 + 0.6 * bell(14.0, 4.5) + 0.25 * bell(20.5, 1.6)).min(1.0)
}

/// (time, value) points of a growing quantity, oldest first, for reading it back at earlier times.
#[derive(Debug, Clone, Default)]
pub struct History(VecDeque<(u64, f64)>);

impl History {
    /// Records `value` at `t_ms` when a step has passed since the last point.
    pub fn push(&mut self, t_ms: u64, value: f64) {
        if self
            .0
            .back()
            .is_some_and(|(t, _)| t_ms < t + HISTORY_STEP_MS)
        {
            return;
        }
        self.0.push_back((t_ms, value));
        while self
            .0
            .front()
            .is_some_and(|(t, _)| t + HISTORY_SPAN_MS < t_ms)
        {
            self.0.pop_front();
        }
    }

    /// The value at `t_ms`, interpolated (the oldest point before the history, `now` after it).
    pub fn value_at(&self, t_ms: u64, now: (u64, f64)) -> f64 {
        let mut prev = match self.0.front() {
            Some(&p) if p.0 <= t_ms => p,
            Some(&p) => return p.1,
            None => return now.1,
        };
        for &p in self.0.iter().chain(std::iter::once(&now)) {
            if p.0 >= t_ms {
                let span = (p.0 - prev.0).max(1) as f64;
                return prev.1 + (p.1 - prev.1) * (t_ms - prev.0) as f64 / span;
            }
            prev = p;
        }
        now.1
    }

    /// When the value first reached `value`, interpolated (the oldest point's time if before the history).
    pub fn time_at(&self, value: f64, now: (u64, f64)) -> u64 {
        let mut prev = match self.0.front() {
            Some(&p) if p.1 < value => p,
            Some(&p) => return p.0,
            None => return now.0,
        };
        for &p in self.0.iter().chain(std::iter::once(&now)) {
            if p.1 >= value {
                let rise = (p.1 - prev.1).max(f64::MIN_POSITIVE);
                return prev.0 + ((p.0 - prev.0) as f64 * (value - prev.1) / rise) as u64;
            }
            prev = p;
        }
        now.0
    }
}

/// One topic's production.
#[derive(Debug, Clone)]
pub struct TopicFlow {
    /// Topic name.
    pub name: String,
    /// Messages per second at the daily peak.
    pub peak_rate: f64,
    /// Average message size in bytes.
    pub msg_bytes: f64,
    /// Share of each log (sums to 1).
    pub shares: Vec<f64>,
    /// Messages produced so far, all logs together.
    pub total: f64,
    /// Offsets of each log at the simulation's start (retention has removed what is before).
    pub base: Vec<i64>,
    history: History,
    key: u64,
}

impl TopicFlow {
    /// A topic over `logs` logs with slightly uneven shares.
    pub fn new(seed: u64, name: &str, peak_rate: f64, msg_bytes: f64, logs: usize) -> Self {
        let key = noise::name_key(name);
        let raw: Vec<f64> = (0..logs)
            .map(|i| 1.0 + 0.3 * noise::unit(seed, key, i as u64))
            .collect();
        let sum: f64 = raw.iter().sum();
        let base = (0..logs)
            .map(|i| 1_000_000 + (noise::unit(seed, key ^ 1, i as u64) * 5e6) as i64)
            .collect();
        TopicFlow {
            name: name.to_string(),
            peak_rate: peak_rate * (0.8 + 0.4 * noise::unit(seed, key, 99)),
            msg_bytes,
            shares: raw.iter().map(|r| r / sum).collect(),
            total: 0.0,
            base,
            history: History::default(),
            key,
        }
    }

    /// Messages per second at `t_ms`, with `factor` applied (1: normal).
    pub fn rate(&self, seed: u64, t_ms: u64) -> f64 {
        let wobble = 1.0 + 0.15 * noise::smooth(seed, self.key, t_ms, 90_000);
        self.peak_rate * daily(t_ms) * wobble
    }

    /// Produces for `dt_ms` ending at `t_ms`.
    pub fn step(&mut self, seed: u64, t_ms: u64, dt_ms: u64) {
        self.history.push(t_ms.saturating_sub(dt_ms), self.total);
        self.total += self.rate(seed, t_ms) * dt_ms as f64 / 1000.0;
    }

    /// The next offset to be written on log `i`.
    pub fn latest(&self, i: usize) -> i64 {
        self.base[i] + (self.total * self.shares[i]).floor() as i64
    }

    /// The first retained offset of log `i` (a constant retention window behind the start).
    pub fn earliest(&self, i: usize) -> i64 {
        self.base[i] / 2
    }

    /// Messages produced in the minute before `now_ms`, all logs together.
    pub fn last_minute(&self, now_ms: u64) -> u64 {
        let then = self
            .history
            .value_at(now_ms.saturating_sub(60_000), (now_ms, self.total));
        (self.total - then).max(0.0).round() as u64
    }

    /// When the message at position `consumed` of log `i` (in that log's own count) was stored.
    pub fn stored_at(&self, i: usize, consumed: f64, now_ms: u64) -> u64 {
        let total = consumed / self.shares[i];
        self.history.time_at(total, (now_ms, self.total))
    }
}

/// One group's consumption of one topic.
#[derive(Debug, Clone)]
pub struct Consumer {
    /// Group name.
    pub group: String,
    /// Index of the topic it consumes.
    pub topic: usize,
    /// Messages consumed per log (in that log's own count, from the simulation's start).
    pub consumed: Vec<f64>,
    /// When it last consumed on each log.
    pub last_consume_ms: Vec<u64>,
    /// How far behind it runs when healthy, on average, in seconds of production.
    pub lag_s: f64,
    history: History,
    key: u64,
}

impl Consumer {
    /// A healthy consumer of `topic`, which has `logs` logs.
    pub fn new(group: &str, topic: usize, logs: usize, lag_s: f64) -> Self {
        Consumer {
            group: group.to_string(),
            topic,
            consumed: vec![0.0; logs],
            last_consume_ms: vec![0; logs],
            lag_s,
            history: History::default(),
            key: noise::name_key(group),
        }
    }

    /// Consumes for `dt_ms` ending at `t_ms`, except on the logs `stopped` names. A healthy consumer's lag jitters
    /// from one look to the next around `lag_s` and is often zero, as a polling consumer's does (so Burrow's rules
    /// find it OK).
    pub fn step(
        &mut self,
        seed: u64,
        flow: &TopicFlow,
        rate: f64,
        t_ms: u64,
        dt_ms: u64,
        stopped: impl Fn(usize) -> bool,
    ) {
        self.history
            .push(t_ms.saturating_sub(dt_ms), self.consumed.iter().sum());
        let dt = dt_ms as f64 / 1000.0;
        for (i, share) in flow.shares.iter().enumerate() {
            if stopped(i) {
                continue;
            }
            let produced = flow.total * share;
            let u = noise::unit(seed, self.key ^ i as u64, t_ms / 200);
            let lag_s = if u < 0.3 {
                0.0
            } else {
                self.lag_s * (u - 0.3) / 0.35
            };
            let target = (produced - rate * share * lag_s).max(0.0);
            if self.consumed[i] < target {
                // Within a few seconds of the head it keeps up; further behind it catches up at 3x the rate.
                let step = if target - self.consumed[i] < rate * share * 10.0 {
                    f64::INFINITY
                } else {
                    3.0 * rate * share * dt + 1.0
                };
                self.consumed[i] = (self.consumed[i] + step).min(target);
                self.last_consume_ms[i] = t_ms;
            }
        }
    }

    /// The committed offset on log `i`.
    pub fn committed(&self, flow: &TopicFlow, i: usize) -> i64 {
        (flow.base[i] + self.consumed[i].floor() as i64).min(flow.latest(i))
    }

    /// Messages consumed in the minute before `now_ms`, all logs together.
    pub fn last_minute(&self, now_ms: u64) -> u64 {
        let now: f64 = self.consumed.iter().sum();
        let then = self
            .history
            .value_at(now_ms.saturating_sub(60_000), (now_ms, now));
        (now - then).max(0.0).round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_daily_shape_peaks_in_the_afternoon() {
        let at = |h: u64| daily(h * 3_600_000);
        assert!(at(14) > 0.8 && at(4) < 0.35, "{} {}", at(14), at(4));
        assert!((0..24).all(|h| (0.2..=1.0).contains(&at(h))));
    }

    #[test]
    fn a_stopped_consumer_falls_behind_and_catches_up_after() {
        let mut t = TopicFlow::new(1, "orders", 100.0, 512.0, 4);
        let mut c = Consumer::new("g", 0, 4, 1.0);
        let mut now = 50_400_000; // 14:00 UTC
        let mut run = |t: &mut TopicFlow, c: &mut Consumer, secs: u64, stopped: bool| {
            for _ in 0..secs {
                now += 1000;
                t.step(1, now, 1000);
                let rate = t.rate(1, now);
                c.step(1, t, rate, now, 1000, |_| stopped);
            }
            now
        };
        let n = run(&mut t, &mut c, 600, false);
        let lag = |t: &TopicFlow, c: &Consumer| -> i64 {
            (0..4).map(|i| t.latest(i) - c.committed(t, i)).sum()
        };
        assert!(lag(&t, &c) < 200, "healthy: {}", lag(&t, &c));
        assert!(t.last_minute(n) > 3_000);
        let stop = n;
        let n = run(&mut t, &mut c, 300, true);
        assert!(lag(&t, &c) > 20_000, "stopped: {}", lag(&t, &c));
        let age = n - t.stored_at(0, c.consumed[0], n);
        assert!((295_000..=305_000).contains(&age), "age {age}");
        assert!(
            stop - c.last_consume_ms[0] <= 5_000,
            "last consumed just before the stop"
        );
        run(&mut t, &mut c, 400, false);
        assert!(lag(&t, &c) < 200, "caught up: {}", lag(&t, &c));
    }
}
