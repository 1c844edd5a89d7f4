//! The remoting codec: bytes on a RocketMQ connection to [`Frame`]s and back, and body JSON to values.
//! Every decoder here takes untrusted bytes: it returns an error, never panics, and bounds its work.

mod frame;
mod header;
mod lenient_json;

pub use frame::{DecodeError, Frame, MAX_FRAME_LEN, decode_frame, encode_frame};
pub use header::{FLAG_ONEWAY, FLAG_RESPONSE, Header, SerializeType};
pub use lenient_json::{JsonError, parse_lenient_json};
