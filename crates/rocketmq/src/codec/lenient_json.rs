//! The JSON RocketMQ bodies are written in. Brokers (Java's fastjson and the Rust broker alike) write maps keyed
//! by a message queue with the key as a bare object — `{{"topic":"t","brokerName":"b","queueId":0}:{…}}` — which
//! is not JSON; other bodies quote the same key as a string. This parser accepts standard JSON plus non-string
//! object keys, turning such a key into its compact JSON text, so both forms read the same afterwards.
//! It bounds nesting depth and never panics.

use serde_json::{Map, Number, Value};

/// Deepest nesting accepted.
const MAX_DEPTH: usize = 64;

/// Why a body is not (lenient) JSON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad JSON at byte {at}: {reason}")]
pub struct JsonError {
    /// Byte offset of the problem.
    pub at: usize,
    /// What was wrong.
    pub reason: &'static str,
}

/// Parses a body. Non-string object keys become their compact JSON text (object keys sorted).
pub fn parse_lenient_json(bytes: &[u8]) -> Result<Value, JsonError> {
    let mut p = Parser { b: bytes, i: 0 };
    let v = p.value(0)?;
    p.ws();
    if p.i != bytes.len() {
        return Err(p.err("trailing characters"));
    }
    Ok(v)
}

struct Parser<'a> {
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn err(&self, reason: &'static str) -> JsonError {
        JsonError { at: self.i, reason }
    }

    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        if depth > MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        self.ws();
        match self.b.get(self.i) {
            None => Err(self.err("unexpected end")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, JsonError> {
        if self.b[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("bad literal"))
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.i += 1;
        let mut map = Map::new();
        if self.eat(b'}') {
            return Ok(Value::Object(map));
        }
        loop {
            self.ws();
            let key = match self.b.get(self.i) {
                Some(b'"') => self.string()?,
                _ => {
                    let k = self.value(depth + 1)?;
                    serde_json::to_string(&k).map_err(|_| self.err("unprintable key"))?
                }
            };
            if !self.eat(b':') {
                return Err(self.err("expected ':'"));
            }
            let v = self.value(depth + 1)?;
            map.insert(key, v);
            if self.eat(b',') {
                continue;
            }
            if self.eat(b'}') {
                return Ok(Value::Object(map));
            }
            return Err(self.err("expected ',' or '}'"));
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        self.i += 1;
        let mut items = Vec::new();
        if self.eat(b']') {
            return Ok(Value::Array(items));
        }
        loop {
            items.push(self.value(depth + 1)?);
            if self.eat(b',') {
                continue;
            }
            if self.eat(b']') {
                return Ok(Value::Array(items));
            }
            return Err(self.err("expected ',' or ']'"));
        }
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let digits = self
            .b
            .get(self.i..self.i + 4)
            .ok_or_else(|| self.err("short \\u escape"))?;
        let s = std::str::from_utf8(digits).map_err(|_| self.err("bad \\u escape"))?;
        let n = u32::from_str_radix(s, 16).map_err(|_| self.err("bad \\u escape"))?;
        self.i += 4;
        Ok(n)
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while let Some(&c) = self.b.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            let chunk = std::str::from_utf8(&self.b[start..self.i])
                .map_err(|_| self.err("string is not UTF-8"))?;
            out.push_str(chunk);
            match self.b.get(self.i) {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let esc = *self
                        .b
                        .get(self.i)
                        .ok_or_else(|| self.err("unterminated escape"))?;
                    self.i += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let hi = self.hex4()?;
                            let code = if (0xd800..0xdc00).contains(&hi)
                                && self.b[self.i..].starts_with(b"\\u")
                            {
                                self.i += 2;
                                let lo = self.hex4()?;
                                if !(0xdc00..0xe000).contains(&lo) {
                                    return Err(self.err("bad surrogate pair"));
                                }
                                0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00)
                            } else {
                                hi
                            };
                            out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                        }
                        _ => return Err(self.err("bad escape")),
                    }
                }
                Some(_) => return Err(self.err("control character in string")),
            }
        }
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.i;
        while matches!(
            self.b.get(self.i),
            Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
        ) {
            self.i += 1;
        }
        let text =
            std::str::from_utf8(&self.b[start..self.i]).map_err(|_| self.err("bad number"))?;
        if let Ok(n) = text.parse::<i64>() {
            return Ok(Value::Number(n.into()));
        }
        if let Ok(n) = text.parse::<u64>() {
            return Ok(Value::Number(n.into()));
        }
        text.parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or(JsonError {
                at: start,
                reason: "bad number",
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bare_and_quoted_queue_keys_read_the_same() {
        let bare = br#"{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"t"}:{"brokerOffset":5}},"consumeTps":0.5}"#;
        let quoted = br#"{"offsetTable":{"{\"brokerName\":\"broker-a\",\"queueId\":0,\"topic\":\"t\"}":{"brokerOffset":5}},"consumeTps":0.5}"#;
        let a = parse_lenient_json(bare).unwrap();
        let b = parse_lenient_json(quoted).unwrap();
        assert_eq!(a, b);
        let key = a["offsetTable"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        let mq: serde_json::Value = serde_json::from_str(&key).unwrap();
        assert_eq!(mq, json!({"brokerName":"broker-a","queueId":0,"topic":"t"}));
    }

    #[test]
    fn standard_json_matches_serde_json() {
        let text = r#" {"a":[1,-2,3.5,1e3,18446744073709551615,true,false,null],"s":"x\"\\\/\n\u00e9\ud83d\ude00"} "#;
        assert_eq!(
            parse_lenient_json(text.as_bytes()).unwrap(),
            serde_json::from_str::<Value>(text).unwrap()
        );
    }

    #[test]
    fn errors_name_the_byte() {
        assert_eq!(parse_lenient_json(b"{\"a\":1,}").unwrap_err().at, 7);
        assert!(parse_lenient_json(b"[1] x").is_err());
        assert!(parse_lenient_json(b"\"abc").is_err());
        let deep = "[".repeat(1000);
        assert_eq!(
            parse_lenient_json(deep.as_bytes()).unwrap_err().reason,
            "nested too deeply"
        );
    }
}
