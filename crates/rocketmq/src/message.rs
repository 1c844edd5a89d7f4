//! Stored messages as brokers return them to PULL_MESSAGE: a run of records in RocketMQ's store layout
//! (big-endian): total size, magic code (v1 `0xDAA320A7`, v2 `0xDAA320AB` with a 2-byte topic length), body CRC,
//! queue id, flag, queue offset, physical offset, sys flag, born timestamp, born host (IPv4 or, with sys flag bit
//! 4, IPv6) and port, store timestamp, store host (bit 5 for IPv6) and port, reconsume times, prepared
//! transaction offset, body (length-prefixed; sys flag bit 0 = compressed), topic, properties (2-byte length).
//! mqwatch reads only the OFFSET_MOVED_EVENT topic this way. Untrusted bytes: errors, never panics.

/// Magic code of the v1 layout.
pub const MAGIC_V1: i32 = -626_843_481;
/// Magic code of the v2 layout (2-byte topic length).
pub const MAGIC_V2: i32 = -626_843_477;
const COMPRESSED: i32 = 0x1;
const BORN_HOST_V6: i32 = 0x1 << 4;
const STORE_HOST_V6: i32 = 0x1 << 5;

/// One stored message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredMessage {
    /// Queue id.
    pub queue_id: i32,
    /// Offset in its queue.
    pub queue_offset: i64,
    /// Sys flag bits.
    pub sys_flag: i32,
    /// When the producer made it (ms).
    pub born_timestamp: i64,
    /// When the broker stored it (ms).
    pub store_timestamp: i64,
    /// Topic.
    pub topic: String,
    /// Body (as stored; compressed when `sys_flag & 1`).
    pub body: Vec<u8>,
    /// Properties, `KEY\u{1}VALUE\u{2}…`.
    pub properties: String,
}

/// Why bytes are not stored messages.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad stored message at byte {at}: {reason}")]
pub struct MessageError {
    /// Byte offset of the record.
    pub at: usize,
    /// What was wrong.
    pub reason: String,
}

impl StoredMessage {
    /// Whether the body is compressed (mqwatch does not inflate bodies).
    pub fn is_compressed(&self) -> bool {
        self.sys_flag & COMPRESSED != 0
    }

    /// Encodes the message in the v1 layout (IPv4 hosts 127.0.0.1, CRC 0): how test brokers answer a pull.
    pub fn encode(&self) -> Vec<u8> {
        let mut r =
            Vec::with_capacity(100 + self.body.len() + self.topic.len() + self.properties.len());
        r.extend_from_slice(&0i32.to_be_bytes());
        r.extend_from_slice(&MAGIC_V1.to_be_bytes());
        r.extend_from_slice(&0i32.to_be_bytes());
        r.extend_from_slice(&self.queue_id.to_be_bytes());
        r.extend_from_slice(&0i32.to_be_bytes());
        r.extend_from_slice(&self.queue_offset.to_be_bytes());
        r.extend_from_slice(&0i64.to_be_bytes());
        r.extend_from_slice(&(self.sys_flag & !(BORN_HOST_V6 | STORE_HOST_V6)).to_be_bytes());
        r.extend_from_slice(&self.born_timestamp.to_be_bytes());
        r.extend_from_slice(&[127, 0, 0, 1, 0, 0, 0x27, 0x10]);
        r.extend_from_slice(&self.store_timestamp.to_be_bytes());
        r.extend_from_slice(&[127, 0, 0, 1, 0, 0, 0x2a, 0x97]);
        r.extend_from_slice(&0i32.to_be_bytes());
        r.extend_from_slice(&0i64.to_be_bytes());
        r.extend_from_slice(&(self.body.len() as i32).to_be_bytes());
        r.extend_from_slice(&self.body);
        r.push(self.topic.len().min(255) as u8);
        r.extend_from_slice(&self.topic.as_bytes()[..self.topic.len().min(255)]);
        r.extend_from_slice(&(self.properties.len().min(i16::MAX as usize) as i16).to_be_bytes());
        r.extend_from_slice(
            &self.properties.as_bytes()[..self.properties.len().min(i16::MAX as usize)],
        );
        let total = r.len() as i32;
        r[..4].copy_from_slice(&total.to_be_bytes());
        r
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
    start: usize,
}

impl<'a> Cursor<'a> {
    fn err(&self, reason: impl Into<String>) -> MessageError {
        MessageError {
            at: self.start,
            reason: reason.into(),
        }
    }
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], MessageError> {
        let end = self.i.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| self.err(format!("truncated in {what}")))?;
        let s = &self.b[self.i..end];
        self.i = end;
        Ok(s)
    }
    fn i32(&mut self, what: &str) -> Result<i32, MessageError> {
        let s = self.take(4, what)?;
        Ok(i32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn i64(&mut self, what: &str) -> Result<i64, MessageError> {
        let s = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(i64::from_be_bytes(a))
    }
    fn len(&mut self, n: i64, what: &str) -> Result<usize, MessageError> {
        usize::try_from(n).map_err(|_| self.err(format!("negative {what} length {n}")))
    }
}

/// Decodes every record in a PULL_MESSAGE body.
pub fn decode_messages(bytes: &[u8]) -> Result<Vec<StoredMessage>, MessageError> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        let mut c = Cursor {
            b: bytes,
            i: at,
            start: at,
        };
        let total = c.i32("total size")?;
        let total = c.len(i64::from(total), "total")?;
        let end = at
            .checked_add(total)
            .filter(|&e| e <= bytes.len() && total >= 8);
        let end = end.ok_or_else(|| c.err(format!("record size {total} does not fit")))?;
        let mut c = Cursor {
            b: &bytes[..end],
            i: at + 4,
            start: at,
        };
        let magic = c.i32("magic code")?;
        if magic != MAGIC_V1 && magic != MAGIC_V2 {
            return Err(c.err(format!("unknown magic code {magic:#x}")));
        }
        c.i32("body crc")?;
        let queue_id = c.i32("queue id")?;
        c.i32("flag")?;
        let queue_offset = c.i64("queue offset")?;
        c.i64("physical offset")?;
        let sys_flag = c.i32("sys flag")?;
        let born_timestamp = c.i64("born timestamp")?;
        c.take(
            if sys_flag & BORN_HOST_V6 != 0 { 20 } else { 8 },
            "born host",
        )?;
        let store_timestamp = c.i64("store timestamp")?;
        c.take(
            if sys_flag & STORE_HOST_V6 != 0 { 20 } else { 8 },
            "store host",
        )?;
        c.i32("reconsume times")?;
        c.i64("prepared transaction offset")?;
        let body_len = c.i32("body length")?;
        let body_len = c.len(i64::from(body_len), "body")?;
        let body = c.take(body_len, "body")?.to_vec();
        let topic_len = if magic == MAGIC_V2 {
            let s = c.take(2, "topic length")?;
            usize::from(u16::from_be_bytes([s[0], s[1]]))
        } else {
            usize::from(c.take(1, "topic length")?[0])
        };
        let topic = String::from_utf8_lossy(c.take(topic_len, "topic")?).into_owned();
        let p = c.take(2, "properties length")?;
        let props_len = c.len(i64::from(i16::from_be_bytes([p[0], p[1]])), "properties")?;
        let properties = String::from_utf8_lossy(c.take(props_len, "properties")?).into_owned();
        out.push(StoredMessage {
            queue_id,
            queue_offset,
            sys_flag,
            born_timestamp,
            store_timestamp,
            topic,
            body,
            properties,
        });
        at = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(offset: i64) -> StoredMessage {
        StoredMessage {
            queue_id: 0,
            queue_offset: offset,
            sys_flag: 0,
            born_timestamp: 1_000,
            store_timestamp: 2_000 + offset,
            topic: "OFFSET_MOVED_EVENT".into(),
            body: br#"{"consumerGroup":"g"}"#.to_vec(),
            properties: "KEYS\u{1}k\u{2}".into(),
        }
    }

    #[test]
    fn runs_of_records_round_trip() {
        let mut bytes = msg(0).encode();
        bytes.extend(msg(1).encode());
        assert_eq!(decode_messages(&bytes).unwrap(), vec![msg(0), msg(1)]);
        assert_eq!(decode_messages(&[]).unwrap(), vec![]);
    }

    #[test]
    fn truncation_and_bad_magic_are_named() {
        let bytes = msg(0).encode();
        for cut in 1..bytes.len() {
            assert!(decode_messages(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut bad = bytes.clone();
        bad[4] = 0;
        assert!(decode_messages(&bad).unwrap_err().reason.contains("magic"));
    }
}
