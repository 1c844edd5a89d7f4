//! Response shapes of SASL authentication: SaslHandshake (v1 only: v0 means the unframed legacy exchange, which
//! mqwatch does not speak) and SaslAuthenticate.

use super::{Field, Kind, Schema};

/// SaslHandshakeResponse.
pub(crate) static SASL_HANDSHAKE: Schema = Schema {
    name: "SaslHandshakeResponse",
    fields: &[
        Field::new("error_code", 0, 1, Kind::I16),
        Field::new("mechanisms", 0, 1, Kind::Array(&Kind::Str)),
    ],
    tagged: &[],
};

/// SaslAuthenticateResponse.
pub(crate) static SASL_AUTHENTICATE: Schema = Schema {
    name: "SaslAuthenticateResponse",
    fields: &[
        Field::new("error_code", 0, 2, Kind::I16),
        Field::new("error_message", 0, 2, Kind::Str),
        Field::new("auth_bytes", 0, 2, Kind::Bytes),
        Field::new("session_lifetime_ms", 1, 2, Kind::I64),
    ],
    tagged: &[],
};
