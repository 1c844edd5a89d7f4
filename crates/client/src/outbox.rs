//! The bounded buffer of encoded reports not yet accepted by mqwatch: at most `capacity`, the oldest dropped
//! (and counted) when a new one arrives at a full buffer. Flushing sends oldest first and stops at the first
//! failure, so order is kept and a down mqwatch costs one failed attempt per interval.

use crate::http::PostError;
use std::collections::VecDeque;

/// Unsent reports.
#[derive(Debug)]
pub struct Outbox {
    queue: VecDeque<Vec<u8>>,
    capacity: usize,
    dropped: u64,
    rejected: u64,
}

/// What one flush did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct FlushOutcome {
    /// Reports accepted.
    pub sent: usize,
    /// Reports mqwatch refused for good (4xx other than 408/429): dropped, counted.
    pub rejected: usize,
    /// The error that stopped the flush, if any (the report stays buffered).
    pub error: Option<String>,
}

impl Outbox {
    /// An empty outbox holding at most `capacity` (at least 1) reports.
    pub fn new(capacity: usize) -> Self {
        Self {
            queue: VecDeque::new(),
            capacity: capacity.max(1),
            dropped: 0,
            rejected: 0,
        }
    }

    /// Adds a report, dropping the oldest when full.
    pub fn push(&mut self, report: Vec<u8>) {
        while self.queue.len() >= self.capacity {
            self.queue.pop_front();
            self.dropped += 1;
        }
        self.queue.push_back(report);
    }

    /// Sends buffered reports oldest first through `send` until one fails with a retryable error.
    pub fn flush(&mut self, mut send: impl FnMut(&[u8]) -> Result<(), PostError>) -> FlushOutcome {
        let mut out = FlushOutcome::default();
        while let Some(report) = self.queue.front() {
            match send(report) {
                Ok(()) => out.sent += 1,
                Err(e) if e.is_permanent() => {
                    out.rejected += 1;
                    self.rejected += 1;
                    out.error = Some(e.to_string());
                }
                Err(e) => {
                    out.error = Some(e.to_string());
                    break;
                }
            }
            self.queue.pop_front();
        }
        out
    }

    /// Reports waiting.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Reports dropped because the buffer was full.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Reports mqwatch refused for good.
    pub fn rejected(&self) -> u64 {
        self.rejected
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_the_oldest_when_full_and_keeps_order() {
        let mut o = Outbox::new(2);
        for r in [b"1", b"2", b"3"] {
            o.push(r.to_vec());
        }
        assert_eq!((o.len(), o.dropped()), (2, 1));
        let mut seen = Vec::new();
        let out = o.flush(|r| {
            seen.push(r.to_vec());
            Ok(())
        });
        assert_eq!(out.sent, 2);
        assert_eq!(seen, vec![b"2".to_vec(), b"3".to_vec()]);
        assert!(o.is_empty());
    }

    #[test]
    fn a_failure_keeps_the_report_and_stops_the_flush() {
        let mut o = Outbox::new(5);
        o.push(b"a".to_vec());
        o.push(b"b".to_vec());
        let out = o.flush(|_| Err(PostError::Connect("refused".into())));
        assert_eq!((out.sent, o.len()), (0, 2));
        assert!(out.error.unwrap().contains("refused"));
        let out = o.flush(|r| {
            if r == b"a" {
                Err(PostError::Status(401, "bad token".into()))
            } else {
                Ok(())
            }
        });
        assert_eq!(
            (out.sent, out.rejected, o.rejected(), o.len()),
            (1, 1, 1, 0)
        );
    }
}
