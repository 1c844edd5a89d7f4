//! The response shapes the guard walks: for each Kafka response mqwatch decodes, its fields in wire order with
//! the versions each is present in, its tagged fields, and the version from which the message is "flexible"
//! (compact lengths and tagged-field sections). Written from Kafka's message schemas (the JSON specs under
//! `clients/src/main/resources/common/message`, as kafka-protocol 0.18's generated types document them: field
//! order, wire type, versions); `guard::tests` proves every table against kafka-protocol's own encoder and
//! decoder, version by version.
//!
//! Nullability is not recorded: the walker accepts a null string, bytes or array anywhere (nothing follows a
//! null, so it cannot hide a count) and leaves it to the decoder to refuse one where the schema forbids it.

mod auth;
mod cluster;
mod data;
mod groups;

pub(crate) use auth::*;
pub(crate) use cluster::*;
pub(crate) use data::*;
pub(crate) use groups::*;

/// A field's wire type. Strings, bytes and arrays use compact (varint) lengths in flexible versions.
#[derive(Debug)]
pub(crate) enum Kind {
    /// 1 byte.
    I8,
    /// 1 byte, 0 or 1.
    Bool,
    /// 2 bytes.
    I16,
    /// 4 bytes.
    I32,
    /// 8 bytes.
    I64,
    /// 16 bytes.
    Uuid,
    /// A (nullable) string: i16 length, or varint length + 1 when flexible.
    Str,
    /// (Nullable) bytes: i32 length, or varint length + 1 when flexible.
    Bytes,
    /// A (nullable) array: i32 count, or varint count + 1 when flexible.
    Array(&'static Kind),
    /// A nested structure.
    Struct(&'static Schema),
}

/// One field: present in versions `min..=max`.
#[derive(Debug)]
pub(crate) struct Field {
    pub name: &'static str,
    pub min: i16,
    pub max: i16,
    pub kind: Kind,
}

impl Field {
    pub(crate) const fn new(name: &'static str, min: i16, max: i16, kind: Kind) -> Self {
        Self {
            name,
            min,
            max,
            kind,
        }
    }
}

/// A tagged field the decoder knows: read as `kind` (whatever size the tag declares) in versions `min..=max`,
/// refused in other versions. Unknown tags are skipped by their declared size.
#[derive(Debug)]
pub(crate) struct Tagged {
    pub tag: u32,
    pub name: &'static str,
    pub min: i16,
    pub max: i16,
    pub kind: Kind,
}

impl Tagged {
    pub(crate) const fn new(tag: u32, name: &'static str, min: i16, max: i16, kind: Kind) -> Self {
        Self {
            tag,
            name,
            min,
            max,
            kind,
        }
    }
}

/// A structure: its fields in wire order, then (when flexible) its tagged fields.
#[derive(Debug)]
pub(crate) struct Schema {
    pub name: &'static str,
    pub fields: &'static [Field],
    pub tagged: &'static [Tagged],
}

/// A top-level message: the versions mqwatch accepts and where flexible versions start.
#[derive(Debug)]
pub(crate) struct Message {
    /// The API key of the request this answers (`None` for a consumer-protocol blob).
    pub api_key: Option<i16>,
    pub min: i16,
    pub max: i16,
    /// First flexible version, if any.
    pub flexible_from: Option<i16>,
    pub schema: &'static Schema,
}

/// Every response mqwatch decodes, by API key.
pub(crate) static RESPONSES: &[Message] = &[
    msg(0, 3, 13, Some(9), &PRODUCE),
    msg(1, 4, 18, Some(12), &FETCH),
    msg(2, 1, 10, Some(6), &LIST_OFFSETS),
    msg(3, 0, 13, Some(9), &METADATA),
    msg(8, 2, 10, Some(8), &OFFSET_COMMIT),
    msg(9, 1, 10, Some(6), &OFFSET_FETCH),
    msg(10, 0, 6, Some(3), &FIND_COORDINATOR),
    msg(15, 0, 6, Some(5), &DESCRIBE_GROUPS),
    msg(16, 0, 5, Some(3), &LIST_GROUPS),
    msg(17, 1, 1, None, &SASL_HANDSHAKE),
    msg(18, 0, 4, Some(3), &API_VERSIONS),
    msg(19, 2, 7, Some(5), &CREATE_TOPICS),
    msg(32, 1, 4, Some(4), &DESCRIBE_CONFIGS),
    msg(36, 0, 2, Some(2), &SASL_AUTHENTICATE),
    msg(60, 0, 2, Some(0), &DESCRIBE_CLUSTER),
    msg(69, 0, 1, Some(0), &CONSUMER_GROUP_DESCRIBE),
];

/// ConsumerProtocolSubscription (a classic consumer's member metadata), versions 0..=3.
pub(crate) static SUBSCRIPTION_MESSAGE: Message = Message {
    api_key: None,
    min: 0,
    max: 3,
    flexible_from: None,
    schema: &SUBSCRIPTION,
};

/// ConsumerProtocolAssignment (a classic consumer's member assignment), versions 0..=3.
pub(crate) static ASSIGNMENT_MESSAGE: Message = Message {
    api_key: None,
    min: 0,
    max: 3,
    flexible_from: None,
    schema: &ASSIGNMENT,
};

const fn msg(
    key: i16,
    min: i16,
    max: i16,
    flexible_from: Option<i16>,
    schema: &'static Schema,
) -> Message {
    Message {
        api_key: Some(key),
        min,
        max,
        flexible_from,
        schema,
    }
}
