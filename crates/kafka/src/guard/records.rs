//! mqwatch's own reader of Kafka record batches (magic v2), used on the records of a Fetch answer instead of
//! kafka-protocol's decoder, which reserves the batch's declared record count (and each record's header count)
//! up front and inflates compressed batches without a limit: a hostile or corrupt batch could abort the process.
//! Here every count is checked against the bytes left, nothing is reserved from a count, compressed batches
//! are inflated up to [`MAX_INFLATED`] bytes, and the CRC-32C of every batch read is verified.
//!
//! It finds the first record at or after an offset: its offset and timestamp (a batch with LogAppendTime gives
//! every record the batch's max timestamp, as Kafka's consumers read it). A batch cut short at the end of the
//! bytes (Fetch's size limit) ends the search; batches of the old message formats (v0, v1) and LZ4/Zstandard
//! batches are passed over (`None`: the caller falls back to interpolation); anything else malformed is an error.
//!
//! Batch layout (Kafka's `DefaultRecordBatch`): base offset i64, batch length i32, partition leader epoch i32,
//! magic i8, CRC u32 (CRC-32C of the rest), attributes i16 (bits 0-2 compression, bit 3 LogAppendTime, bit 5
//! control), last offset delta i32, base timestamp i64, max timestamp i64, producer id i64, producer epoch i16,
//! base sequence i32, record count i32, records. Record: length varint, attributes i8, timestamp delta varlong,
//! offset delta varint, key (varint length, -1 null), value (same), header count varint, headers (key, value).

use std::io::Read;

/// The most bytes one compressed batch may inflate to.
pub const MAX_INFLATED: usize = 32 * 1024 * 1024;

/// Bytes of a batch header after the base offset and batch length.
const HEADER_REST: usize = 49;

/// The first record found at or after the offset asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoundRecord {
    /// Its offset.
    pub offset: i64,
    /// Its timestamp (ms).
    pub timestamp_ms: i64,
    /// The batch's timestamps are set by the broker on append (LogAppendTime).
    pub log_append_time: bool,
}

/// Why record batches could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("record batch at offset {base_offset}: {reason}")]
pub struct RecordsError {
    /// The batch's base offset.
    pub base_offset: i64,
    /// What is wrong.
    pub reason: String,
}

/// The first data record (control batches skipped) at or after `offset` in `bytes`, a sequence of batches.
pub fn first_at_or_after(bytes: &[u8], offset: i64) -> Result<Option<FoundRecord>, RecordsError> {
    let mut rest = bytes;
    while rest.len() >= 12 {
        let base_offset = i64::from_be_bytes(rest[0..8].try_into().unwrap_or_default());
        let length = i32::from_be_bytes(rest[8..12].try_into().unwrap_or_default());
        let fail = |reason: String| RecordsError {
            base_offset,
            reason,
        };
        let Ok(length) = usize::try_from(length) else {
            return Err(fail(format!("negative batch length {length}")));
        };
        if length > rest.len() - 12 {
            return Ok(None); // the last batch, cut short by the fetch size
        }
        let batch = &rest[12..12 + length];
        rest = &rest[12 + length..];
        if batch.len() < 5 {
            return Err(fail(format!("batch of {length} bytes")));
        }
        let magic = batch[4];
        if magic < 2 {
            return Ok(None); // old message format: not read
        }
        if magic > 2 || batch.len() < HEADER_REST {
            return Err(fail(format!(
                "magic {magic}, {length} bytes: not a v2 batch"
            )));
        }
        let crc = u32::from_be_bytes(batch[5..9].try_into().unwrap_or_default());
        let body = &batch[9..];
        if crc32c::crc32c(body) != crc {
            return Err(fail("CRC-32C mismatch".into()));
        }
        let be_i64 =
            |at: usize| i64::from_be_bytes(body[at..at + 8].try_into().unwrap_or_default());
        let attributes = i16::from_be_bytes([body[0], body[1]]);
        let last_delta = i32::from_be_bytes(body[2..6].try_into().unwrap_or_default());
        let (base_ts, max_ts) = (be_i64(6), be_i64(14));
        let count = i32::from_be_bytes(body[36..40].try_into().unwrap_or_default());
        let control = attributes & (1 << 5) != 0;
        let log_append_time = attributes & (1 << 3) != 0;
        if control || base_offset.saturating_add(i64::from(last_delta)) < offset {
            continue;
        }
        let Ok(count) = usize::try_from(count) else {
            return Err(fail(format!("negative record count {count}")));
        };
        let records = match attributes & 0x7 {
            0 => std::borrow::Cow::Borrowed(&body[40..]),
            1 => std::borrow::Cow::Owned(gunzip(&body[40..]).map_err(fail)?),
            2 => std::borrow::Cow::Owned(unsnappy(&body[40..]).map_err(fail)?),
            3 | 4 => return Ok(None), // LZ4, Zstandard: not read
            c => return Err(fail(format!("unknown compression {c}"))),
        };
        let mut r = Reader {
            bytes: &records,
            pos: 0,
        };
        if count > r.left() {
            return Err(fail(format!(
                "declares {count} records, only {} bytes",
                r.left()
            )));
        }
        for _ in 0..count {
            let (ts_delta, offset_delta) = r.record().map_err(fail)?;
            let at = base_offset.saturating_add(offset_delta);
            if at >= offset {
                return Ok(Some(FoundRecord {
                    offset: at,
                    timestamp_ms: if log_append_time {
                        max_ts
                    } else {
                        base_ts.saturating_add(ts_delta)
                    },
                    log_append_time,
                }));
            }
        }
    }
    Ok(None)
}

fn gunzip(data: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(data)
        .take(MAX_INFLATED as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("gzip: {e}"))?;
    if out.len() > MAX_INFLATED {
        return Err(format!("gzip batch inflates past {MAX_INFLATED} bytes"));
    }
    Ok(out)
}

/// Snappy as Kafka writes it: xerial framing (a 16-byte magic header, then blocks each a big-endian u32 length
/// and a raw snappy block), or one raw snappy block when the magic is absent.
fn unsnappy(data: &[u8]) -> Result<Vec<u8>, String> {
    const MAGIC: &[u8] = b"\x82SNAPPY\x00";
    let mut out = Vec::new();
    let block = |raw: &[u8], out: &mut Vec<u8>| -> Result<(), String> {
        let n = snap::raw::decompress_len(raw).map_err(|e| format!("snappy: {e}"))?;
        if n > MAX_INFLATED - out.len() {
            return Err(format!("snappy batch inflates past {MAX_INFLATED} bytes"));
        }
        let start = out.len();
        out.resize(start + n, 0);
        snap::raw::Decoder::new()
            .decompress(raw, &mut out[start..])
            .map_err(|e| format!("snappy: {e}"))?;
        Ok(())
    };
    if data.len() < 16 || !data.starts_with(MAGIC) {
        block(data, &mut out)?;
        return Ok(out);
    }
    let mut rest = &data[16..];
    while !rest.is_empty() {
        if rest.len() < 4 {
            return Err("snappy: block length cut short".into());
        }
        let n = u32::from_be_bytes(rest[0..4].try_into().unwrap_or_default()) as usize;
        if n > rest.len() - 4 {
            return Err(format!(
                "snappy: block of {n} bytes, {} left",
                rest.len() - 4
            ));
        }
        block(&rest[4..4 + n], &mut out)?;
        rest = &rest[4 + n..];
    }
    Ok(out)
}

/// Reads records, checking every length against the bytes left.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn skip(&mut self, n: usize, what: &str) -> Result<(), String> {
        if n > self.left() {
            return Err(format!("{what} of {n} bytes, {} left", self.left()));
        }
        self.pos += n;
        Ok(())
    }

    /// A zigzag varint of up to 10 bytes.
    fn varlong(&mut self) -> Result<i64, String> {
        let mut v: u64 = 0;
        for i in 0..10 {
            let Some(&b) = self.bytes.get(self.pos) else {
                return Err("varint cut short".into());
            };
            self.pos += 1;
            v |= u64::from(b & 0x7f) << (i * 7);
            if b < 0x80 {
                return Ok(((v >> 1) as i64) ^ -((v & 1) as i64));
            }
        }
        Err("varint longer than 10 bytes".into())
    }

    /// A length: -1 is null (0 bytes), below that refused.
    fn length(&mut self, what: &str) -> Result<usize, String> {
        match self.varlong()? {
            -1 => Ok(0),
            n if n < -1 => Err(format!("{what} length {n}")),
            n => usize::try_from(n).map_err(|_| format!("{what} length {n}")),
        }
    }

    /// One record: its timestamp delta and offset delta.
    fn record(&mut self) -> Result<(i64, i64), String> {
        let size = self.length("record")?;
        if size > self.left() {
            return Err(format!("record of {size} bytes, {} left", self.left()));
        }
        let mut inner = Reader {
            bytes: &self.bytes[self.pos..self.pos + size],
            pos: 0,
        };
        self.pos += size;
        inner.skip(1, "attributes")?;
        let ts_delta = inner.varlong()?;
        let offset_delta = inner.varlong()?;
        let key = inner.length("key")?;
        inner.skip(key, "key")?;
        let value = inner.length("value")?;
        inner.skip(value, "value")?;
        let headers = inner.length("header count")?;
        if headers > inner.left() {
            return Err(format!(
                "declares {headers} headers, {} bytes left",
                inner.left()
            ));
        }
        for _ in 0..headers {
            let k = inner.length("header key")?;
            inner.skip(k, "header key")?;
            let v = inner.length("header value")?;
            inner.skip(v, "header value")?;
        }
        Ok((ts_delta, offset_delta))
    }
}
