//! The compact wire form of a [`Snapshot`] for client reports: [`Snapshot::encode`] and
//! [`Snapshot::decode`].
//!
//! The format is documented on [`Snapshot::encode`].
//!
//! Not here: what the numbers mean (see `snapshot`).

use thiserror::Error;

use super::layout::BUCKETS;
use super::snapshot::Snapshot;

/// The only wire version so far.
const VERSION: u8 = 1;

/// Why bytes are not a valid encoded [`Snapshot`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    /// The input ended before the snapshot did.
    #[error("truncated histogram: input ends at byte {0}")]
    Truncated(usize),
    /// The first byte names a version this code does not know.
    #[error("unknown histogram wire version {0}")]
    UnknownVersion(u8),
    /// A varint is longer than needed, or does not fit its field.
    #[error("malformed varint at byte {0}")]
    BadVarint(usize),
    /// More non-empty buckets than the histogram has.
    #[error("{0} non-empty buckets, but the histogram has only {BUCKETS}")]
    TooManyBuckets(u64),
    /// A bucket index past the last bucket.
    #[error("bucket index {0} out of range (the histogram has {BUCKETS} buckets)")]
    IndexOutOfRange(u64),
    /// A bucket count, or the total count, does not fit in a u64.
    #[error("bucket count overflows u64")]
    CountOverflow,
    /// `min + (max - min)` does not fit in a u64.
    #[error("maximum overflows u64")]
    ValueOverflow,
    /// The minimum or maximum is not in the first or last non-empty bucket.
    #[error("minimum or maximum does not match the buckets")]
    Inconsistent,
    /// Bytes after the end of the snapshot.
    #[error("{0} trailing bytes after the histogram")]
    TrailingBytes(usize),
}

impl Snapshot {
    /// The compact wire form for client reports: two bytes when empty, tens of bytes for a typical minute.
    ///
    /// Version 1 (integers are LEB128 varints, canonical: no superfluous trailing `0x80`/`0x00` groups):
    /// ```text
    /// u8 version = 1
    /// n          number of non-empty buckets (0..=1015)
    /// if n > 0:
    ///   min, max - min, sum                                   (u64 each)
    ///   n tokens, one per non-empty bucket in index order:
    ///     t = 4 · (count - 1) + min(gap, 3)                   (u128; gap = index - previous index - 1,
    ///     [gap - 3 if min(gap, 3) == 3]                        the first bucket's gap is its index)
    /// ```
    /// A bucket next to the previous one with a count up to 32 costs one byte. Indexes cannot go backwards by
    /// construction; [`Snapshot::decode`] checks everything else.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + self.buckets.len() * 2);
        out.push(VERSION);
        put(&mut out, self.buckets.len() as u128);
        if self.buckets.is_empty() {
            return out;
        }
        put(&mut out, u128::from(self.min));
        put(&mut out, u128::from(self.max - self.min));
        put(&mut out, u128::from(self.sum));
        let mut next = 0u16; // index the next bucket would have with gap 0
        for &(i, c) in &self.buckets {
            let gap = i - next;
            put(&mut out, 4 * u128::from(c - 1) + u128::from(gap.min(3)));
            if gap >= 3 {
                put(&mut out, u128::from(gap - 3));
            }
            next = i + 1;
        }
        out
    }

    /// Parses [`Snapshot::encode`]'s output. Never panics and does bounded work (at most 1015 tokens, at
    /// most 19 bytes a varint); accepts only what `encode` produces, so for every `bytes` that decodes,
    /// `decode(bytes)?.encode() == bytes`. See [`DecodeError`] for what is rejected.
    pub fn decode(bytes: &[u8]) -> Result<Snapshot, DecodeError> {
        let mut r = Reader { bytes, pos: 0 };
        let version = r.byte()?;
        if version != VERSION {
            return Err(DecodeError::UnknownVersion(version));
        }
        let n = r.u64()?;
        if n > BUCKETS as u64 {
            return Err(DecodeError::TooManyBuckets(n));
        }
        if n == 0 {
            r.finish()?;
            return Ok(Snapshot::empty());
        }
        let min = r.u64()?;
        let max = min
            .checked_add(r.u64()?)
            .ok_or(DecodeError::ValueOverflow)?;
        let sum = r.u64()?;
        let mut buckets = Vec::with_capacity(n as usize);
        let mut next = 0u64;
        let mut count = 0u64;
        for _ in 0..n {
            let t = r.varint(u128::MAX)?;
            let code = (t & 3) as u64;
            let c = u64::try_from(t >> 2)
                .ok()
                .and_then(|c| c.checked_add(1))
                .ok_or(DecodeError::CountOverflow)?;
            let gap = if code == 3 {
                r.u64()?
                    .checked_add(3)
                    .ok_or(DecodeError::IndexOutOfRange(u64::MAX))?
            } else {
                code
            };
            let index = next.saturating_add(gap);
            if index >= BUCKETS as u64 {
                return Err(DecodeError::IndexOutOfRange(index));
            }
            count = count.checked_add(c).ok_or(DecodeError::CountOverflow)?;
            buckets.push((index as u16, c));
            next = index + 1;
        }
        r.finish()?;
        let snapshot = Snapshot {
            buckets,
            count,
            min,
            max,
            sum,
        };
        if !snapshot.extremes_consistent() {
            return Err(DecodeError::Inconsistent);
        }
        Ok(snapshot)
    }
}

fn put(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn byte(&mut self) -> Result<u8, DecodeError> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or(DecodeError::Truncated(self.pos))?;
        self.pos += 1;
        Ok(b)
    }

    /// A canonical LEB128 varint no larger than `max` (at most 19 bytes).
    fn varint(&mut self, max: u128) -> Result<u128, DecodeError> {
        let start = self.pos;
        let mut v = 0u128;
        let mut shift = 0u32;
        loop {
            let b = self.byte()?;
            let low = u128::from(b & 0x7f);
            if shift >= 128 || (shift > 0 && low > u128::MAX >> shift) {
                return Err(DecodeError::BadVarint(start));
            }
            v |= low << shift;
            if b & 0x80 == 0 {
                // A last byte of 0 after others means the encoding was longer than needed.
                if b == 0 && shift > 0 {
                    return Err(DecodeError::BadVarint(start));
                }
                break;
            }
            shift += 7;
        }
        if v > max {
            return Err(DecodeError::BadVarint(start));
        }
        Ok(v)
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(self.varint(u128::from(u64::MAX))? as u64)
    }

    fn finish(&self) -> Result<(), DecodeError> {
        match self.bytes.len() - self.pos {
            0 => Ok(()),
            extra => Err(DecodeError::TrailingBytes(extra)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Histogram;
    use super::*;

    #[test]
    fn empty_is_two_bytes() {
        let bytes = Snapshot::empty().encode();
        assert_eq!(bytes, [1, 0]);
        assert_eq!(Snapshot::decode(&bytes), Ok(Snapshot::empty()));
    }

    #[test]
    fn round_trip_and_size() {
        let h = Histogram::new();
        for v in [
            1_000u64,
            1_200_000,
            1_250_000,
            1_300_000,
            7_000_000,
            u64::MAX,
        ] {
            h.record(v);
        }
        let s = h.snapshot();
        let bytes = s.encode();
        assert_eq!(Snapshot::decode(&bytes), Ok(s));
        assert!(bytes.len() < 48, "{}", bytes.len());
    }

    #[test]
    fn rejects_bad_input() {
        use DecodeError::*;
        let one = {
            let h = Histogram::new();
            h.record(1_000_000);
            h.snapshot().encode()
        };
        assert_eq!(Snapshot::decode(&[]), Err(Truncated(0)));
        assert_eq!(Snapshot::decode(&[2, 0]), Err(UnknownVersion(2)));
        assert_eq!(Snapshot::decode(&[1, 0, 0]), Err(TrailingBytes(1)));
        assert_eq!(Snapshot::decode(&[1, 0x80, 0]), Err(BadVarint(1)));
        assert_eq!(
            Snapshot::decode(&[1, 0xf8, 0x07]),
            Err(TooManyBuckets(1016))
        );
        assert_eq!(
            Snapshot::decode(&one[..one.len() - 1]),
            Err(Truncated(one.len() - 1))
        );
        let mut extra = one.clone();
        extra.push(0);
        assert_eq!(Snapshot::decode(&extra), Err(TrailingBytes(1)));
        // min 0, max - min 0, sum 0, one bucket with gap 3 + 2000: index out of range.
        assert_eq!(
            Snapshot::decode(&[1, 1, 0, 0, 0, 3, 0xd0, 0x0f]),
            Err(IndexOutOfRange(2003))
        );
        // min = 1000 (bucket 0) but the only bucket is 5.
        assert_eq!(
            Snapshot::decode(&[1, 1, 0xe8, 0x07, 0, 0, 3, 2]),
            Err(Inconsistent)
        );
        // max - min overflows.
        let mut v = vec![1, 1, 0xe8, 0x07];
        v.extend([0xff; 9]);
        v.push(0x01);
        assert_eq!(Snapshot::decode(&v), Err(ValueOverflow));
        // Two buckets of 2^64 - 1 each: total count overflows.
        let mut v = vec![1, 2, 0, 0, 0];
        let big = 4 * u128::from(u64::MAX - 1);
        put(&mut v, big);
        put(&mut v, big);
        assert_eq!(Snapshot::decode(&v), Err(CountOverflow));
        // A 20-byte varint.
        let mut v = vec![1];
        v.extend([0x80; 19]);
        v.push(1);
        assert_eq!(Snapshot::decode(&v), Err(BadVarint(1)));
    }
}
