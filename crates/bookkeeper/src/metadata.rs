//! Ledger metadata as BookKeeper stores it in a ledger's znode: the ASCII header line
//! `BookieMetadataFormatVersion\t<N>\n`, then for N = 3 one length-delimited binary protobuf
//! `LedgerMetadataFormat`, for N = 2 the same message in protobuf TEXT format. It owns decoding both into
//! [`LedgerMetadata`], encoding version 3, and its engine-neutral [`LedgerLayout`].
//! Version 1 (an old line format) and unknown versions are rejected with an error naming the version.

use std::collections::BTreeMap;

use prost::Message;

use crate::textformat::TextMessage;

mod wire;

/// The header line's fixed prefix.
pub const HEADER_PREFIX: &[u8] = b"BookieMetadataFormatVersion\t";

/// Why a znode's bytes are not ledger metadata.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// The bytes do not start with `BookieMetadataFormatVersion\t<N>\n`.
    #[error("ledger metadata: no `BookieMetadataFormatVersion\\t<N>\\n` header line")]
    NoHeader,
    /// The header names a format version mqwatch does not read (1, or anything but 2 and 3).
    #[error("ledger metadata format version {0} is not supported (mqwatch reads 2 and 3)")]
    UnsupportedVersion(String),
    /// Version 3: the binary protobuf does not decode.
    #[error("ledger metadata v3: bad protobuf: {0}")]
    Protobuf(String),
    /// Version 2: the protobuf text does not parse, or a field has the wrong kind of value.
    #[error("ledger metadata v2: {0}")]
    Text(String),
    /// A field the format requires is absent.
    #[error("ledger metadata: required field {0} is missing")]
    Missing(&'static str),
    /// An enum field holds a number the format does not define.
    #[error("ledger metadata: field {field} has unknown value {value}")]
    UnknownEnum {
        /// The field's protobuf name.
        field: &'static str,
        /// The number found.
        value: i32,
    },
}

pub use mqwatch_model::LedgerState;
use mqwatch_model::{LedgerLayout, LedgerSegment};

fn state_from_wire(v: i32) -> Result<LedgerState, MetadataError> {
    match v {
        1 => Ok(LedgerState::Open),
        2 => Ok(LedgerState::InRecovery),
        3 => Ok(LedgerState::Closed),
        value => Err(MetadataError::UnknownEnum {
            field: "state",
            value,
        }),
    }
}

fn state_to_wire(s: LedgerState) -> i32 {
    match s {
        LedgerState::Open => 1,
        LedgerState::InRecovery => 2,
        LedgerState::Closed => 3,
    }
}

/// The protobuf enum name of a ledger state (`OPEN`, `IN_RECOVERY`, `CLOSED`), as the text format writes it.
pub fn state_proto_name(s: LedgerState) -> &'static str {
    match s {
        LedgerState::Open => "OPEN",
        LedgerState::InRecovery => "IN_RECOVERY",
        LedgerState::Closed => "CLOSED",
    }
}

/// How a ledger's entries are checksummed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DigestType {
    /// CRC32 = 1.
    Crc32,
    /// HMAC = 2.
    Hmac,
    /// CRC32C = 3.
    Crc32c,
    /// DUMMY = 4.
    Dummy,
}

impl DigestType {
    fn from_wire(v: i32) -> Result<Self, MetadataError> {
        match v {
            1 => Ok(Self::Crc32),
            2 => Ok(Self::Hmac),
            3 => Ok(Self::Crc32c),
            4 => Ok(Self::Dummy),
            value => Err(MetadataError::UnknownEnum {
                field: "digestType",
                value,
            }),
        }
    }

    fn to_wire(self) -> i32 {
        match self {
            Self::Crc32 => 1,
            Self::Hmac => 2,
            Self::Crc32c => 3,
            Self::Dummy => 4,
        }
    }

    /// The protobuf enum name (`CRC32`, `HMAC`, `CRC32C`, `DUMMY`).
    pub fn proto_name(self) -> &'static str {
        match self {
            Self::Crc32 => "CRC32",
            Self::Hmac => "HMAC",
            Self::Crc32c => "CRC32C",
            Self::Dummy => "DUMMY",
        }
    }
}

/// One ensemble change: from `first_entry_id` on, entries are written to `ensemble`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Segment {
    /// The first entry written with this ensemble.
    pub first_entry_id: i64,
    /// Bookie ids (usually `host:port`), by ensemble index.
    pub ensemble: Vec<String>,
}

/// A ledger's metadata, whichever format version it was read from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerMetadata {
    /// Write quorum WQ (`quorumSize`): how many bookies each entry is written to.
    pub write_quorum: i32,
    /// Ack quorum AQ (`ackQuorumSize`; WQ when absent): how many acks make an entry durable.
    pub ack_quorum: i32,
    /// Ensemble size E.
    pub ensemble_size: i32,
    /// Bytes written (final once closed).
    pub length: i64,
    /// The last entry id once closed (-1 for a closed empty ledger); usually absent while open.
    pub last_entry_id: Option<i64>,
    /// Lifecycle state.
    pub state: LedgerState,
    /// Ensemble changes, in order of `first_entry_id`.
    pub segments: Vec<Segment>,
    /// Checksum type, when recorded.
    pub digest_type: Option<DigestType>,
    /// Creation time, ms since the epoch, when recorded.
    pub ctime: Option<i64>,
    /// Application metadata (`customMetadata`), by key.
    pub custom_metadata: BTreeMap<String, Vec<u8>>,
}

impl LedgerMetadata {
    /// Decodes a ledger znode's value (format version 2 or 3). In version 3, bytes after the length-delimited
    /// message are ignored, as BookKeeper's `parseDelimitedFrom` ignores them.
    pub fn decode(bytes: &[u8]) -> Result<LedgerMetadata, MetadataError> {
        let rest = bytes
            .strip_prefix(HEADER_PREFIX)
            .ok_or(MetadataError::NoHeader)?;
        let nl = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or(MetadataError::NoHeader)?;
        let version = String::from_utf8_lossy(&rest[..nl]).trim().to_string();
        let body = &rest[nl + 1..];
        match version.as_str() {
            "3" => {
                let wire = wire::LedgerMetadataFormat::decode_length_delimited(body)
                    .map_err(|e| MetadataError::Protobuf(e.to_string()))?;
                Self::from_wire(wire)
            }
            "2" => Self::from_text(body),
            _ => Err(MetadataError::UnsupportedVersion(version)),
        }
    }

    /// Encodes as format version 3 (header line plus one length-delimited protobuf), as BookKeeper writes it.
    pub fn encode_v3(&self) -> Vec<u8> {
        let wire = wire::LedgerMetadataFormat {
            quorum_size: Some(self.write_quorum),
            ensemble_size: Some(self.ensemble_size),
            length: Some(self.length),
            last_entry_id: self.last_entry_id,
            state: Some(state_to_wire(self.state)),
            segment: self
                .segments
                .iter()
                .map(|s| wire::Segment {
                    ensemble_member: s.ensemble.clone(),
                    first_entry_id: Some(s.first_entry_id),
                })
                .collect(),
            digest_type: self.digest_type.map(DigestType::to_wire),
            password: None,
            ack_quorum_size: Some(self.ack_quorum),
            ctime: self.ctime,
            custom_metadata: self
                .custom_metadata
                .iter()
                .map(|(k, v)| wire::CustomMetadata {
                    key: Some(k.clone()),
                    value: Some(v.clone()),
                })
                .collect(),
            c_token: None,
        };
        let mut out = Vec::with_capacity(HEADER_PREFIX.len() + 2 + wire.encoded_len() + 10);
        out.extend_from_slice(HEADER_PREFIX);
        out.extend_from_slice(b"3\n");
        out.extend_from_slice(&wire.encode_length_delimited_to_vec());
        out
    }

    /// The engine-neutral layout of ledger `id` that the durability audit reads (segment arithmetic, replica
    /// schedule). Negative sizes read as 0, which the audit reports as a placement violation.
    pub fn layout(&self, id: u64) -> LedgerLayout {
        let size = |v: i32| usize::try_from(v).unwrap_or(0);
        LedgerLayout {
            id,
            state: self.state,
            ensemble_size: size(self.ensemble_size),
            write_quorum: size(self.write_quorum),
            ack_quorum: size(self.ack_quorum),
            last_entry: self.last_entry_id,
            segments: self
                .segments
                .iter()
                .map(|s| LedgerSegment {
                    first_entry: s.first_entry_id,
                    ensemble: s.ensemble.clone(),
                })
                .collect(),
        }
    }

    fn from_wire(w: wire::LedgerMetadataFormat) -> Result<Self, MetadataError> {
        let write_quorum = w.quorum_size.ok_or(MetadataError::Missing("quorumSize"))?;
        let segments = w
            .segment
            .into_iter()
            .map(|s| {
                Ok(Segment {
                    first_entry_id: s
                        .first_entry_id
                        .ok_or(MetadataError::Missing("segment.firstEntryId"))?,
                    ensemble: s.ensemble_member,
                })
            })
            .collect::<Result<Vec<_>, MetadataError>>()?;
        let mut custom_metadata = BTreeMap::new();
        for c in w.custom_metadata {
            custom_metadata.insert(c.key.unwrap_or_default(), c.value.unwrap_or_default());
        }
        Ok(LedgerMetadata {
            write_quorum,
            ack_quorum: w.ack_quorum_size.unwrap_or(write_quorum),
            ensemble_size: w
                .ensemble_size
                .ok_or(MetadataError::Missing("ensembleSize"))?,
            length: w.length.ok_or(MetadataError::Missing("length"))?,
            last_entry_id: w.last_entry_id,
            state: state_from_wire(w.state.unwrap_or(1))?,
            segments,
            digest_type: w.digest_type.map(DigestType::from_wire).transpose()?,
            ctime: w.ctime,
            custom_metadata,
        })
    }

    fn from_text(body: &[u8]) -> Result<Self, MetadataError> {
        let t = TextMessage::parse(body).map_err(|e| MetadataError::Text(e.to_string()))?;
        let txt = MetadataError::Text;
        let int32 = |m: &TextMessage, name: &str| -> Result<Option<i32>, MetadataError> {
            m.int(name)
                .map_err(txt)?
                .map(|v| {
                    i32::try_from(v)
                        .map_err(|_| MetadataError::Text(format!("{name}: {v} is not an int32")))
                })
                .transpose()
        };
        let mut segment = Vec::new();
        for s in t.messages_all("segment").map_err(txt)? {
            segment.push(wire::Segment {
                ensemble_member: s.strings_all("ensembleMember").map_err(txt)?,
                first_entry_id: s.int("firstEntryId").map_err(txt)?,
            });
        }
        let mut custom_metadata = Vec::new();
        for c in t.messages_all("customMetadata").map_err(txt)? {
            custom_metadata.push(wire::CustomMetadata {
                key: c.strings_all("key").map_err(txt)?.pop(),
                value: c.bytes_all("value").map_err(txt)?.pop(),
            });
        }
        let state = t
            .enumeration("state", |n| {
                [
                    LedgerState::Open,
                    LedgerState::InRecovery,
                    LedgerState::Closed,
                ]
                .into_iter()
                .find(|s| state_proto_name(*s) == n)
                .map(state_to_wire)
            })
            .map_err(txt)?;
        let digest_type = t
            .enumeration("digestType", |n| {
                [
                    DigestType::Crc32,
                    DigestType::Hmac,
                    DigestType::Crc32c,
                    DigestType::Dummy,
                ]
                .into_iter()
                .find(|d| d.proto_name() == n)
                .map(DigestType::to_wire)
            })
            .map_err(txt)?;
        Self::from_wire(wire::LedgerMetadataFormat {
            quorum_size: int32(&t, "quorumSize")?,
            ensemble_size: int32(&t, "ensembleSize")?,
            length: t.int("length").map_err(txt)?,
            last_entry_id: t.int("lastEntryId").map_err(txt)?,
            state,
            segment,
            digest_type,
            password: t.bytes_all("password").map_err(txt)?.pop(),
            ack_quorum_size: int32(&t, "ackQuorumSize")?,
            ctime: t.int("ctime").map_err(txt)?,
            custom_metadata,
            c_token: t.int("cToken").map_err(txt)?,
        })
    }
}
