//! `availabilityOfEntriesOfLedger`, the bookie's answer to GET_LIST_OF_ENTRIES_OF_LEDGER: which entries of a
//! ledger it holds. Big-endian: a 64-byte header (i32 version, must be 0; i32 group count; zeros), then 24-byte
//! sequence groups (i64 firstSequenceStart, i64 lastSequenceStart, i32 sequenceSize, i32 sequencePeriod), each
//! the runs `[s, s + size)` for s = first, first + period, …, last. It owns decoding that into sorted, merged
//! [`EntryRun`]s (whatever grouping the sender chose), and encoding runs the way a BookKeeper 4.18 bookie does.

/// Size of the header.
pub const HEADER_LEN: usize = 64;
/// Size of one sequence group.
pub const GROUP_LEN: usize = 24;
/// The most runs [`decode`] expands a message into (a bound on the work hostile bytes can cause).
pub const MAX_RUNS: u64 = 10_000_000;

/// Why bytes are not an `availabilityOfEntriesOfLedger`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AvailabilityError {
    /// Fewer than the 64 header bytes.
    #[error("entry availability: {0} bytes, shorter than the 64-byte header")]
    Short(usize),
    /// A header version above 0.
    #[error("entry availability: header version {0} is not supported (0 only)")]
    Version(i32),
    /// The group count is negative or disagrees with the length.
    #[error("entry availability: {groups} groups do not fit {len} bytes")]
    Length {
        /// Declared number of groups.
        groups: i32,
        /// Bytes received.
        len: usize,
    },
    /// A group is inconsistent: size < 1, last before first, period 0 or not dividing last - first, or entry
    /// ids overflowing.
    #[error("entry availability: group {index} is inconsistent: {group:?}")]
    BadGroup {
        /// Position of the group in the message.
        index: usize,
        /// The group as read.
        group: SequenceGroup,
    },
    /// The groups expand to more runs than the limit.
    #[error("entry availability: more than {0} runs")]
    TooManyRuns(u64),
}

pub use mqwatch_model::EntryRun;

/// One sequence group as on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SequenceGroup {
    /// Start of the first run.
    pub first_sequence_start: i64,
    /// Start of the last run.
    pub last_sequence_start: i64,
    /// Length of every run.
    pub sequence_size: i32,
    /// Distance between run starts (0 when the group is a single run).
    pub sequence_period: i32,
}

fn be_i32(b: &[u8]) -> i32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[..4]);
    i32::from_be_bytes(a)
}

fn be_i64(b: &[u8]) -> i64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[..8]);
    i64::from_be_bytes(a)
}

/// Decodes into sorted, merged, non-overlapping runs, expanding at most [`MAX_RUNS`].
pub fn decode(bytes: &[u8]) -> Result<Vec<EntryRun>, AvailabilityError> {
    decode_with_limit(bytes, MAX_RUNS)
}

/// [`decode`] with a chosen bound on the number of runs.
pub fn decode_with_limit(bytes: &[u8], max_runs: u64) -> Result<Vec<EntryRun>, AvailabilityError> {
    if bytes.len() < HEADER_LEN {
        return Err(AvailabilityError::Short(bytes.len()));
    }
    let version = be_i32(&bytes[0..]);
    if version > 0 {
        return Err(AvailabilityError::Version(version));
    }
    let groups = be_i32(&bytes[4..]);
    let body = &bytes[HEADER_LEN..];
    let count = usize::try_from(groups)
        .ok()
        .filter(|&n| n.checked_mul(GROUP_LEN) == Some(body.len()))
        .ok_or(AvailabilityError::Length {
            groups,
            len: bytes.len(),
        })?;
    // First pass: validate and count, so nothing is allocated for a message over the limit.
    let mut parsed = Vec::with_capacity(count);
    let mut total: u64 = 0;
    for (index, g) in body.chunks_exact(GROUP_LEN).enumerate() {
        let group = SequenceGroup {
            first_sequence_start: be_i64(&g[0..]),
            last_sequence_start: be_i64(&g[8..]),
            sequence_size: be_i32(&g[16..]),
            sequence_period: be_i32(&g[20..]),
        };
        let runs = group_runs(&group).ok_or(AvailabilityError::BadGroup { index, group })?;
        total = total.saturating_add(runs);
        if total > max_runs {
            return Err(AvailabilityError::TooManyRuns(max_runs));
        }
        parsed.push(group);
    }
    let mut runs = Vec::with_capacity(usize::try_from(total).unwrap_or(0));
    for g in &parsed {
        let size = i64::from(g.sequence_size);
        let period = i64::from(g.sequence_period);
        if g.first_sequence_start == g.last_sequence_start || period <= size {
            // One run, or runs that touch or overlap: the group is one contiguous run.
            runs.push(EntryRun {
                start: g.first_sequence_start,
                end_exclusive: g.last_sequence_start + size,
            });
        } else {
            let mut s = g.first_sequence_start;
            loop {
                runs.push(EntryRun {
                    start: s,
                    end_exclusive: s + size,
                });
                if s == g.last_sequence_start {
                    break;
                }
                s += period;
            }
        }
    }
    Ok(merge(runs))
}

/// How many runs a consistent group stands for (1 when they touch or overlap), or `None` when inconsistent.
fn group_runs(g: &SequenceGroup) -> Option<u64> {
    let size = i64::from(g.sequence_size);
    let period = i64::from(g.sequence_period);
    if size < 1 || g.last_sequence_start < g.first_sequence_start {
        return None;
    }
    g.last_sequence_start.checked_add(size)?;
    if g.first_sequence_start == g.last_sequence_start {
        return (period >= 0).then_some(1);
    }
    let span = g.last_sequence_start.checked_sub(g.first_sequence_start)?;
    if period < 1 || span % period != 0 {
        return None;
    }
    if period <= size {
        return Some(1);
    }
    u64::try_from(span / period + 1).ok()
}

/// Sorts runs and merges the ones that overlap or touch; empty runs are dropped.
pub fn merge(mut runs: Vec<EntryRun>) -> Vec<EntryRun> {
    runs.retain(|r| r.start < r.end_exclusive);
    runs.sort_unstable();
    let mut out: Vec<EntryRun> = Vec::with_capacity(runs.len());
    for r in runs {
        match out.last_mut() {
            Some(last) if r.start <= last.end_exclusive => {
                last.end_exclusive = last.end_exclusive.max(r.end_exclusive);
            }
            _ => out.push(r),
        }
    }
    out
}

/// Encodes raw groups (any grouping; for tests and fixtures).
pub fn encode_groups(groups: &[SequenceGroup]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + groups.len() * GROUP_LEN);
    out.extend_from_slice(&0i32.to_be_bytes());
    out.extend_from_slice(&(groups.len() as i32).to_be_bytes());
    out.resize(HEADER_LEN, 0);
    for g in groups {
        out.extend_from_slice(&g.first_sequence_start.to_be_bytes());
        out.extend_from_slice(&g.last_sequence_start.to_be_bytes());
        out.extend_from_slice(&g.sequence_size.to_be_bytes());
        out.extend_from_slice(&g.sequence_period.to_be_bytes());
    }
    out
}

/// The groups for one run: a run longer than an i32 sequence size becomes one periodic group of adjacent
/// full-size pieces (period = size, so they join into one run) plus one group for the rest: at most two groups
/// whatever the run's length (a run spanning 2^62 entries must not become 2^31 groups).
fn run_groups(r: EntryRun) -> impl Iterator<Item = SequenceGroup> {
    let max = i64::from(i32::MAX);
    let len = r.end_exclusive - r.start;
    let full = len / max;
    let rest = len % max;
    let body = (full > 0).then(|| SequenceGroup {
        first_sequence_start: r.start,
        last_sequence_start: r.start + (full - 1) * max,
        sequence_size: i32::MAX,
        sequence_period: if full > 1 { i32::MAX } else { 0 },
    });
    let tail = (rest > 0).then(|| SequenceGroup {
        first_sequence_start: r.start + full * max,
        last_sequence_start: r.start + full * max,
        sequence_size: rest as i32,
        sequence_period: 0,
    });
    body.into_iter().chain(tail)
}

/// Encodes as a BookKeeper 4.18 bookie does: one group per run, period 0 (runs are merged first; a run longer
/// than an i32 sequence size, which no real ledger has, is split as `run_groups` says).
pub fn encode_bookie_style(runs: &[EntryRun]) -> Vec<u8> {
    let groups: Vec<SequenceGroup> = merge(runs.to_vec())
        .into_iter()
        .flat_map(run_groups)
        .collect();
    encode_groups(&groups)
}

/// Encodes with periodic groups: consecutive single runs of equal size at equal distance share a group.
pub fn encode_periodic(runs: &[EntryRun]) -> Vec<u8> {
    let mut groups: Vec<SequenceGroup> = Vec::new();
    for next in merge(runs.to_vec()).into_iter().flat_map(run_groups) {
        if let Some(g) = groups.last_mut() {
            let single = next.sequence_period == 0;
            let step = next
                .first_sequence_start
                .checked_sub(g.last_sequence_start)
                .and_then(|d| i32::try_from(d).ok());
            let joins = |&st: &i32| {
                single
                    && g.sequence_size == next.sequence_size
                    && st > g.sequence_size
                    && (g.sequence_period == 0 || st == g.sequence_period)
            };
            if let Some(step) = step.filter(joins) {
                g.sequence_period = step;
                g.last_sequence_start = next.first_sequence_start;
                continue;
            }
        }
        groups.push(next);
    }
    encode_groups(&groups)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(groups: u8) -> Vec<u8> {
        let mut h = vec![0u8; 64];
        h[7] = groups;
        h
    }

    fn group(first: u8, last: u8, size: u8, period: u8) -> Vec<u8> {
        let mut g = vec![0u8; 24];
        g[7] = first;
        g[15] = last;
        g[19] = size;
        g[23] = period;
        g
    }

    fn spec_runs() -> Vec<EntryRun> {
        [1, 4, 7, 10]
            .map(|s| EntryRun {
                start: s,
                end_exclusive: s + 2,
            })
            .to_vec()
    }

    #[test]
    fn spec_example_periodic() {
        let bytes = [header(1), group(1, 10, 2, 3)].concat();
        assert_eq!(bytes.len(), 88);
        assert_eq!(decode(&bytes).unwrap(), spec_runs());
        assert_eq!(encode_periodic(&spec_runs()), bytes);
    }

    #[test]
    fn spec_example_bookie_style() {
        let bytes = [
            header(4),
            group(1, 1, 2, 0),
            group(4, 4, 2, 0),
            group(7, 7, 2, 0),
            group(10, 10, 2, 0),
        ]
        .concat();
        assert_eq!(bytes.len(), 64 + 96);
        assert_eq!(decode(&bytes).unwrap(), spec_runs());
        assert_eq!(encode_bookie_style(&spec_runs()), bytes);
    }

    #[test]
    fn touching_and_overlapping_runs_merge() {
        let bytes = [
            header(3),
            group(5, 5, 3, 0),
            group(0, 4, 2, 2),
            group(20, 20, 1, 0),
        ]
        .concat();
        assert_eq!(
            decode(&bytes).unwrap(),
            [
                EntryRun {
                    start: 0,
                    end_exclusive: 8
                },
                EntryRun {
                    start: 20,
                    end_exclusive: 21
                }
            ]
        );
        assert_eq!(decode(&header(0)).unwrap(), []);
    }

    #[test]
    fn rejects_corrupt_messages() {
        let mut v1 = header(0);
        v1[3] = 1;
        assert_eq!(decode(&v1), Err(AvailabilityError::Version(1)));
        assert!(matches!(
            decode(&header(0)[..63]),
            Err(AvailabilityError::Short(63))
        ));
        assert!(matches!(
            decode(&header(1)),
            Err(AvailabilityError::Length { .. })
        ));
        assert!(matches!(
            decode(&[header(0), vec![0]].concat()),
            Err(AvailabilityError::Length { .. })
        ));
        for bad in [
            group(1, 10, 2, 4),
            group(1, 10, 2, 0),
            group(10, 1, 2, 3),
            group(1, 1, 0, 0),
        ] {
            assert!(matches!(
                decode(&[header(1), bad].concat()),
                Err(AvailabilityError::BadGroup { .. })
            ));
        }
        let overflow = encode_groups(&[SequenceGroup {
            first_sequence_start: i64::MAX,
            last_sequence_start: i64::MAX,
            sequence_size: 1,
            sequence_period: 0,
        }]);
        assert!(matches!(
            decode(&overflow),
            Err(AvailabilityError::BadGroup { .. })
        ));
        let huge = encode_groups(&[SequenceGroup {
            first_sequence_start: 0,
            last_sequence_start: 3 * 20_000_000,
            sequence_size: 1,
            sequence_period: 3,
        }]);
        assert_eq!(decode(&huge), Err(AvailabilityError::TooManyRuns(MAX_RUNS)));
        assert_eq!(
            decode_with_limit(&[header(1), group(1, 10, 2, 3)].concat(), 3),
            Err(AvailabilityError::TooManyRuns(3))
        );
    }

    #[test]
    fn long_runs_split_into_i32_pieces() {
        let runs = [EntryRun {
            start: 0,
            end_exclusive: 5_000_000_000,
        }];
        assert_eq!(decode(&encode_bookie_style(&runs)).unwrap(), runs);
        assert_eq!(decode(&encode_periodic(&runs)).unwrap(), runs);
    }

    #[test]
    fn a_run_of_2_pow_62_entries_is_two_groups_not_billions() {
        // Found by the availability fuzz target: the encoder split huge runs into 2^31 pieces (out of memory).
        let runs = [EntryRun {
            start: -(1 << 61),
            end_exclusive: 1 << 61,
        }];
        let bytes = encode_bookie_style(&runs);
        assert_eq!(bytes.len(), 64 + 2 * 24);
        assert_eq!(decode(&bytes).unwrap(), runs);
        assert_eq!(decode(&encode_periodic(&runs)).unwrap(), runs);
    }
}
