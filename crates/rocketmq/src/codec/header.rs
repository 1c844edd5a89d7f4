//! The remoting header in its two serialisations: JSON (type 0) and ROCKETMQ binary (type 1).
//! Servers always answer in JSON; Java brokers configured for ROCKETMQ serialisation answer in binary.

use super::frame::DecodeError;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Flag bit 0: the frame is a response.
pub const FLAG_RESPONSE: i32 = 1;
/// Flag bit 1: the request expects no response.
pub const FLAG_ONEWAY: i32 = 2;

/// The header serialisation, the high byte of the frame's second word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SerializeType {
    /// `0`: a JSON object.
    Json,
    /// `1`: RocketMQ's compact binary layout.
    Binary,
}

/// A remoting header: request code (or response code), correlation id, flags, remark and string fields.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Header {
    /// Request code, or the response code in a response (0 = success).
    pub code: i32,
    /// The sender's language, e.g. `JAVA`, `RUST`.
    pub language: String,
    /// The sender's protocol version.
    pub version: i32,
    /// Correlation id: a response carries its request's opaque.
    pub opaque: i32,
    /// [`FLAG_RESPONSE`], [`FLAG_ONEWAY`].
    pub flag: i32,
    /// Error text of a response, if any.
    pub remark: Option<String>,
    /// The request's or response's named string fields.
    pub ext_fields: BTreeMap<String, String>,
}

/// Language codes of the binary header, as RocketMQ's LanguageCode enum numbers them.
const LANGUAGES: [(u8, &str); 13] = [
    (0, "JAVA"),
    (1, "CPP"),
    (2, "DOTNET"),
    (3, "PYTHON"),
    (4, "DELPHI"),
    (5, "ERLANG"),
    (6, "RUBY"),
    (7, "OTHER"),
    (8, "HTTP"),
    (9, "GO"),
    (10, "PHP"),
    (11, "OMS"),
    (12, "RUST"),
];

impl Header {
    /// Whether this header belongs to a response.
    pub fn is_response(&self) -> bool {
        self.flag & FLAG_RESPONSE != 0
    }

    /// The header as RocketMQ's JSON.
    pub fn to_json(&self) -> Vec<u8> {
        let mut obj = Map::new();
        obj.insert("code".into(), self.code.into());
        obj.insert("language".into(), self.language.clone().into());
        obj.insert("version".into(), self.version.into());
        obj.insert("opaque".into(), self.opaque.into());
        obj.insert("flag".into(), self.flag.into());
        if let Some(r) = &self.remark {
            obj.insert("remark".into(), r.clone().into());
        }
        let ext: Map<String, Value> = self
            .ext_fields
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        obj.insert("extFields".into(), Value::Object(ext));
        obj.insert("serializeTypeCurrentRPC".into(), "JSON".into());
        serde_json::to_vec(&Value::Object(obj)).unwrap_or_default()
    }

    /// Parses a JSON header. Unknown fields are ignored; ext field values that are not strings are kept in their
    /// JSON spelling.
    pub fn from_json(bytes: &[u8]) -> Result<Self, DecodeError> {
        let value: Value = serde_json::from_slice(bytes)
            .map_err(|e| DecodeError::Header(format!("JSON header: {e}")))?;
        let Value::Object(obj) = value else {
            return Err(DecodeError::Header("JSON header is not an object".into()));
        };
        let int = |name: &str| -> Result<i32, DecodeError> {
            match obj.get(name) {
                None | Some(Value::Null) => Ok(0),
                Some(v) => v
                    .as_i64()
                    .and_then(|n| i32::try_from(n).ok())
                    .ok_or_else(|| {
                        DecodeError::Header(format!("JSON header field {name} is not an i32: {v}"))
                    }),
            }
        };
        let string = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let ext_fields = match obj.get("extFields") {
            None | Some(Value::Null) => BTreeMap::new(),
            Some(Value::Object(m)) => m.iter().map(|(k, v)| (k.clone(), string(v))).collect(),
            Some(other) => {
                return Err(DecodeError::Header(format!(
                    "JSON header extFields is not an object: {other}"
                )));
            }
        };
        Ok(Header {
            code: int("code")?,
            language: obj.get("language").map(string).unwrap_or_default(),
            version: int("version")?,
            opaque: int("opaque")?,
            flag: int("flag")?,
            remark: obj.get("remark").filter(|v| !v.is_null()).map(string),
            ext_fields,
        })
    }

    /// The header in RocketMQ's binary layout (big-endian).
    pub fn to_binary(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32);
        out.extend_from_slice(&(self.code as i16).to_be_bytes());
        let lang = LANGUAGES
            .iter()
            .find(|(_, n)| *n == self.language)
            .map_or(7, |(c, _)| *c);
        out.push(lang);
        out.extend_from_slice(&(self.version as i16).to_be_bytes());
        out.extend_from_slice(&self.opaque.to_be_bytes());
        out.extend_from_slice(&self.flag.to_be_bytes());
        let remark = self.remark.as_deref().unwrap_or("").as_bytes();
        out.extend_from_slice(&(remark.len() as i32).to_be_bytes());
        out.extend_from_slice(remark);
        let mut ext = Vec::new();
        for (k, v) in &self.ext_fields {
            ext.extend_from_slice(&(k.len() as i16).to_be_bytes());
            ext.extend_from_slice(k.as_bytes());
            ext.extend_from_slice(&(v.len() as i32).to_be_bytes());
            ext.extend_from_slice(v.as_bytes());
        }
        out.extend_from_slice(&(ext.len() as i32).to_be_bytes());
        out.extend_from_slice(&ext);
        out
    }

    /// Parses a binary header; every length is checked against what is left.
    pub fn from_binary(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader { bytes, pos: 0 };
        let code = i32::from(r.i16("code")?);
        let lang = r.take(1, "language")?[0];
        let language = LANGUAGES
            .iter()
            .find(|(c, _)| *c == lang)
            .map_or_else(|| format!("LANG{lang}"), |(_, n)| (*n).to_string());
        let version = i32::from(r.i16("version")?);
        let opaque = r.i32("opaque")?;
        let flag = r.i32("flag")?;
        let remark_len = r.len_i32("remark length")?;
        let remark = match remark_len {
            0 => None,
            n => Some(r.utf8(n, "remark")?),
        };
        let ext_len = r.len_i32("ext fields length")?;
        let ext_bytes = r.take(ext_len, "ext fields")?;
        let mut e = Reader {
            bytes: ext_bytes,
            pos: 0,
        };
        let mut ext_fields = BTreeMap::new();
        while e.pos < ext_bytes.len() {
            let klen = usize::try_from(e.i16("ext key length")?)
                .map_err(|_| DecodeError::Header("negative ext key length".into()))?;
            let key = e.utf8(klen, "ext key")?;
            let vlen = e.len_i32("ext value length")?;
            let val = e.utf8(vlen, "ext value")?;
            ext_fields.insert(key, val);
        }
        if r.pos != bytes.len() {
            return Err(DecodeError::Header(format!(
                "{} bytes after the binary header",
                bytes.len() - r.pos
            )));
        }
        Ok(Header {
            code,
            language,
            version,
            opaque,
            flag,
            remark,
            ext_fields,
        })
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                DecodeError::Header(format!(
                    "binary header truncated in {what}: need {n} bytes, {} left",
                    self.bytes.len() - self.pos
                ))
            })?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn i16(&mut self, what: &str) -> Result<i16, DecodeError> {
        let b = self.take(2, what)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }
    fn i32(&mut self, what: &str) -> Result<i32, DecodeError> {
        let b = self.take(4, what)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn len_i32(&mut self, what: &str) -> Result<usize, DecodeError> {
        let n = self.i32(what)?;
        usize::try_from(n).map_err(|_| DecodeError::Header(format!("negative {what}: {n}")))
    }
    fn utf8(&mut self, n: usize, what: &str) -> Result<String, DecodeError> {
        let b = self.take(n, what)?;
        String::from_utf8(b.to_vec())
            .map_err(|_| DecodeError::Header(format!("{what} is not UTF-8")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        let mut h = Header {
            code: 208,
            language: "RUST".into(),
            version: 501,
            opaque: 7,
            flag: 0,
            ..Default::default()
        };
        h.ext_fields.insert("consumerGroup".into(), "g1".into());
        h.ext_fields.insert("topic".into(), "orders".into());
        h
    }

    #[test]
    fn json_round_trip_and_java_spelling() {
        let h = sample();
        assert_eq!(Header::from_json(&h.to_json()).unwrap(), h);
        let java = br#"{"code":1,"extFields":null,"flag":1,"language":"JAVA","opaque":7,"remark":"No stats data","serializeTypeCurrentRPC":"JSON","version":453}"#;
        let r = Header::from_json(java).unwrap();
        assert!(r.is_response());
        assert_eq!(
            (r.code, r.opaque, r.remark.as_deref()),
            (1, 7, Some("No stats data"))
        );
    }

    #[test]
    fn binary_round_trip() {
        let mut h = sample();
        h.remark = Some("oops".into());
        assert_eq!(Header::from_binary(&h.to_binary()).unwrap(), h);
    }

    #[test]
    fn bad_headers_are_errors_that_say_where() {
        let e = Header::from_binary(&[0, 1, 0]).unwrap_err().to_string();
        assert!(e.contains("version"), "{e}");
        let e = Header::from_json(b"[1]").unwrap_err().to_string();
        assert!(e.contains("not an object"), "{e}");
        let e = Header::from_json(br#"{"code":"x"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("code"), "{e}");
    }
}
