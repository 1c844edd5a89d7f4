//! The walker: reads a message's bytes along its table exactly as kafka-protocol's decoder will read them (same
//! fields, same length encodings, same varint rules, known tagged fields read by type and unknown ones skipped
//! by size) without building anything, and refuses a length or count that the bytes left cannot hold. Every
//! array element, string byte and bytes byte takes at least one byte on the wire, so a count above the bytes
//! left is a lie; refusing it before the decoder sees it is what keeps `Vec::with_capacity(count)` bounded.
//!
//! A count that fits can still make the decoder reserve many times the body's size (an empty string is one byte
//! on the wire and 32 once decoded). The walker adds up what the decoder will reserve, each element at the most
//! its type takes in memory ([`STRUCT_COST`] for any structure, checked against kafka-protocol's types in the
//! tests), and refuses a body that would reserve more than [`RESERVE_FACTOR`] times its size (at least
//! [`RESERVE_FLOOR`]): a 64 MiB frame can cost at most 1 GiB of reservations.

use super::GuardError;
use super::tables::{Kind, Message, Schema};

/// Bytes a decoded structure takes at most (kafka-protocol's largest response element is under it).
pub(crate) const STRUCT_COST: usize = 512;

/// Bytes a decoded string or bytes value takes (`StrBytes`, `Bytes`).
pub(crate) const STR_COST: usize = 32;

/// Reservations allowed per body byte.
pub(crate) const RESERVE_FACTOR: u64 = 16;

/// Reservations always allowed.
pub(crate) const RESERVE_FLOOR: u64 = 64 * 1024 * 1024;

/// A position in the bytes being walked, and how to read them.
pub(crate) struct Walker<'a> {
    bytes: &'a [u8],
    pos: usize,
    version: i16,
    flexible: bool,
    /// What the decoder will have reserved for arrays so far, and the most it may.
    reserved: u64,
    limit: u64,
}

/// Bytes one decoded element of `kind` takes at most.
fn cost(kind: &Kind) -> u64 {
    match kind {
        Kind::I8 | Kind::Bool => 1,
        Kind::I16 => 2,
        Kind::I32 => 4,
        Kind::I64 => 8,
        Kind::Uuid => 16,
        Kind::Str | Kind::Bytes => STR_COST as u64,
        Kind::Array(_) => 24,
        Kind::Struct(_) => STRUCT_COST as u64,
    }
}

/// Walks `bytes` as `message` in `version`; `Ok` with the bytes it read.
pub(crate) fn walk(message: &Message, version: i16, bytes: &[u8]) -> Result<usize, GuardError> {
    let mut w = Walker {
        bytes,
        pos: 0,
        version,
        flexible: message.flexible_from.is_some_and(|f| version >= f),
        reserved: 0,
        limit: (bytes.len() as u64)
            .saturating_mul(RESERVE_FACTOR)
            .max(RESERVE_FLOOR),
    };
    w.schema(message.schema)?;
    Ok(w.pos)
}

impl Walker<'_> {
    fn left(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &'static str) -> Result<&[u8], GuardError> {
        if n > self.left() {
            return Err(GuardError::new(format!(
                "{what} of {n} bytes, only {} left",
                self.left()
            )));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn i16(&mut self) -> Result<i16, GuardError> {
        let b = self.take(2, "int16")?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    fn i32(&mut self) -> Result<i32, GuardError> {
        let b = self.take(4, "int32")?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// An unsigned varint as kafka-protocol reads it: at most 5 bytes, the fifth ending it whatever its high bit,
    /// bits past 32 dropped.
    fn uvarint(&mut self) -> Result<u32, GuardError> {
        let mut value: u32 = 0;
        for i in 0..5 {
            let b = u32::from(self.take(1, "varint")?[0]);
            value |= (b & 0x7f).wrapping_shl(i * 7);
            if b < 0x80 {
                break;
            }
        }
        Ok(value)
    }

    /// A length or count: `None` for null. Compact: varint - 1 (0 is null). Classic: `i16`/`i32`, -1 is null,
    /// below -1 refused (as the decoder refuses it).
    fn length(&mut self, wide: bool) -> Result<Option<usize>, GuardError> {
        let n: i64 = if self.flexible {
            i64::from(self.uvarint()?) - 1
        } else if wide {
            i64::from(self.i32()?)
        } else {
            i64::from(self.i16()?)
        };
        match n {
            -1 => Ok(None),
            n if n < -1 => Err(GuardError::new(format!("negative length {n}"))),
            n => Ok(Some(n as usize)),
        }
    }

    fn kind(&mut self, kind: &Kind) -> Result<(), GuardError> {
        match kind {
            Kind::I8 | Kind::Bool => self.take(1, "int8").map(drop),
            Kind::I16 => self.take(2, "int16").map(drop),
            Kind::I32 => self.take(4, "int32").map(drop),
            Kind::I64 => self.take(8, "int64").map(drop),
            Kind::Uuid => self.take(16, "uuid").map(drop),
            Kind::Str => match self.length(false)? {
                Some(n) => self.take(n, "string").map(drop),
                None => Ok(()),
            },
            Kind::Bytes => match self.length(true)? {
                Some(n) => self.take(n, "bytes").map(drop),
                None => Ok(()),
            },
            Kind::Array(element) => {
                let Some(count) = self.length(true)? else {
                    return Ok(());
                };
                if count > self.left() {
                    return Err(GuardError::new(format!(
                        "declares {count} elements, only {} bytes left",
                        self.left()
                    )));
                }
                self.reserved = self
                    .reserved
                    .saturating_add((count as u64).saturating_mul(cost(element)));
                if self.reserved > self.limit {
                    return Err(GuardError::new(format!(
                        "{count} elements would reserve {} bytes in all, more than {} for a {}-byte body",
                        self.reserved,
                        self.limit,
                        self.bytes.len()
                    )));
                }
                for i in 0..count {
                    self.kind(element).map_err(|e| e.at_index(i))?;
                }
                Ok(())
            }
            Kind::Struct(schema) => self.schema(schema),
        }
    }

    fn schema(&mut self, schema: &Schema) -> Result<(), GuardError> {
        let v = self.version;
        for f in schema.fields.iter().filter(|f| f.min <= v && v <= f.max) {
            self.kind(&f.kind).map_err(|e| e.at_field(f.name))?;
        }
        if !self.flexible {
            return Ok(());
        }
        let count = self.uvarint().map_err(|e| e.at_field("tagged fields"))?;
        for _ in 0..count {
            let tag = self.uvarint().map_err(|e| e.at_field("tagged fields"))?;
            let size = self.uvarint().map_err(|e| e.at_field("tagged fields"))?;
            match schema.tagged.iter().find(|t| t.tag == tag) {
                Some(t) if t.min <= v && v <= t.max => {
                    self.kind(&t.kind).map_err(|e| e.at_field(t.name))?
                }
                Some(t) => {
                    return Err(GuardError::new(format!(
                        "tag {tag} ({}) is not valid in version {v}",
                        t.name
                    )));
                }
                None => {
                    self.take(size as usize, "tagged field")
                        .map_err(|e| e.at_field("tagged fields"))?;
                }
            }
        }
        Ok(())
    }
}
