//! The remoting frame: `i32 total_len` (4 + header_len + body_len, big-endian), `i32 header_len_and_type` (high
//! byte the header's serialisation, low 3 bytes its length), header, body. Decoding is incremental: it says
//! "need more bytes" until a whole frame is buffered.

use super::header::{Header, SerializeType};

/// The largest frame mqwatch accepts (RocketMQ's own default limit is 16 MiB).
pub const MAX_FRAME_LEN: usize = 16 * 1024 * 1024;

/// Why bytes from a connection are not a frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The length prefix is negative, too small, or above [`MAX_FRAME_LEN`].
    #[error("bad frame length {0} (allowed 4..={max})", max = MAX_FRAME_LEN)]
    BadLength(i64),
    /// The header length does not fit in the frame.
    #[error("header length {header} does not fit in a frame of {frame} bytes")]
    BadHeaderLength {
        /// Declared header length.
        header: usize,
        /// Declared frame length.
        frame: usize,
    },
    /// The serialisation byte is neither 0 (JSON) nor 1 (binary).
    #[error("unknown header serialisation type {0}")]
    UnknownSerializeType(u8),
    /// The header could not be parsed.
    #[error("bad header: {0}")]
    Header(String),
}

/// One remoting frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The header.
    pub header: Header,
    /// How the header was (or is to be) serialised.
    pub serialize: SerializeType,
    /// The body, often JSON.
    pub body: Vec<u8>,
}

/// Encodes a frame.
pub fn encode_frame(frame: &Frame) -> Vec<u8> {
    let (kind, header) = match frame.serialize {
        SerializeType::Json => (0u8, frame.header.to_json()),
        SerializeType::Binary => (1u8, frame.header.to_binary()),
    };
    let total = 4 + header.len() + frame.body.len();
    let mut out = Vec::with_capacity(4 + total);
    out.extend_from_slice(&(total as i32).to_be_bytes());
    let len_and_type = (u32::from(kind) << 24) | (header.len() as u32 & 0x00ff_ffff);
    out.extend_from_slice(&len_and_type.to_be_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(&frame.body);
    out
}

/// Decodes the first frame in `buf`. `Ok(None)`: not enough bytes yet. `Ok(Some((frame, n)))`: a frame and the
/// number of bytes it took. An error means the stream is corrupt and the connection should be closed.
pub fn decode_frame(buf: &[u8]) -> Result<Option<(Frame, usize)>, DecodeError> {
    if buf.len() < 4 {
        return Ok(None);
    }
    let total = i32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
    let total = usize::try_from(total)
        .ok()
        .filter(|&t| (4..=MAX_FRAME_LEN).contains(&t))
        .ok_or(DecodeError::BadLength(i64::from(total)))?;
    if buf.len() < 4 + total {
        return Ok(None);
    }
    let frame = &buf[4..4 + total];
    let word = u32::from_be_bytes([frame[0], frame[1], frame[2], frame[3]]);
    let serialize = match (word >> 24) as u8 {
        0 => SerializeType::Json,
        1 => SerializeType::Binary,
        other => return Err(DecodeError::UnknownSerializeType(other)),
    };
    let header_len = (word & 0x00ff_ffff) as usize;
    if header_len > total - 4 {
        return Err(DecodeError::BadHeaderLength {
            header: header_len,
            frame: total,
        });
    }
    let header_bytes = &frame[4..4 + header_len];
    let header = match serialize {
        SerializeType::Json => Header::from_json(header_bytes)?,
        SerializeType::Binary => Header::from_binary(header_bytes)?,
    };
    let body = frame[4 + header_len..].to_vec();
    Ok(Some((
        Frame {
            header,
            serialize,
            body,
        },
        4 + total,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(serialize: SerializeType) -> Frame {
        let mut header = Header {
            code: 105,
            language: "RUST".into(),
            opaque: 3,
            ..Default::default()
        };
        header.ext_fields.insert("topic".into(), "orders".into());
        Frame {
            header,
            serialize,
            body: br#"{"brokerDatas":[]}"#.to_vec(),
        }
    }

    #[test]
    fn round_trips_and_reports_its_length() {
        for s in [SerializeType::Json, SerializeType::Binary] {
            let f = frame(s);
            let mut bytes = encode_frame(&f);
            let n = bytes.len();
            bytes.extend_from_slice(b"next");
            assert_eq!(decode_frame(&bytes).unwrap(), Some((f, n)));
        }
    }

    #[test]
    fn waits_for_every_byte() {
        let bytes = encode_frame(&frame(SerializeType::Json));
        for cut in 0..bytes.len() {
            assert_eq!(decode_frame(&bytes[..cut]).unwrap(), None, "cut at {cut}");
        }
    }

    #[test]
    fn rejects_corrupt_prefixes() {
        assert_eq!(
            decode_frame(&(-1i32).to_be_bytes()),
            Err(DecodeError::BadLength(-1))
        );
        assert_eq!(
            decode_frame(&[0x7f, 0, 0, 0]),
            Err(DecodeError::BadLength(0x7f00_0000))
        );
        let mut b = 8i32.to_be_bytes().to_vec();
        b.extend_from_slice(&[2, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(decode_frame(&b), Err(DecodeError::UnknownSerializeType(2)));
        let mut b = 8i32.to_be_bytes().to_vec();
        b.extend_from_slice(&[0, 0, 0, 9, 0, 0, 0, 0]);
        assert_eq!(
            decode_frame(&b),
            Err(DecodeError::BadHeaderLength {
                header: 9,
                frame: 8
            })
        );
    }
}
