//! The protobuf TEXT format, as far as BookKeeper writes it: `name: value` scalars (numbers, enum names,
//! `true`/`false`, quoted strings with C escapes, adjacent strings concatenated), nested `name { … }` (or
//! `name: { … }`, `name < … >`) messages, repeated fields as repeated lines or `[a, b]` lists, `#` comments and
//! optional `,`/`;` separators. It owns parsing text into a generic tree; the typed readers (ledger metadata,
//! under-replication marks) pick fields out of that tree. Nesting is bounded so hostile input cannot overflow
//! the stack.

/// How deep `{ … }` blocks may nest (BookKeeper's messages nest two levels).
const MAX_DEPTH: usize = 16;

/// Why text is not a protobuf text message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("protobuf text format, byte {offset}: {reason}")]
pub struct TextError {
    /// Byte offset of the problem in the text.
    pub offset: usize,
    /// What was wrong.
    pub reason: String,
}

/// One scalar value as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scalar {
    /// A quoted string with its escapes resolved (bytes: strings and `bytes` fields share the syntax).
    Str(Vec<u8>),
    /// A bare word: a number, an enum name, `true`/`false`.
    Word(String),
}

/// A field's value: a scalar or a nested message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// `name: scalar`.
    Scalar(Scalar),
    /// `name { … }`.
    Message(TextMessage),
}

/// A message: its fields in the order written (a repeated field appears once per value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextMessage {
    /// `(field name, value)` pairs.
    pub fields: Vec<(String, Value)>,
}

impl TextMessage {
    /// Parses a whole text message.
    pub fn parse(text: &[u8]) -> Result<TextMessage, TextError> {
        let mut p = Parser { s: text, pos: 0 };
        let msg = p.message(0, None)?;
        Ok(msg)
    }

    /// All values of field `name`, in order.
    pub fn all<'s>(&'s self, name: &str) -> impl Iterator<Item = &'s Value> {
        self.fields
            .iter()
            .filter(move |(n, _)| n == name)
            .map(|(_, v)| v)
    }

    /// The last value of a singular field (protobuf's text parser lets a later value overwrite).
    pub fn last(&self, name: &str) -> Option<&Value> {
        self.all(name).last()
    }

    /// The last value of `name` read as an integer (decimal, `0x` hex, optional `-`); `Err` names the field.
    pub fn int(&self, name: &str) -> Result<Option<i64>, String> {
        match self.last(name) {
            None => Ok(None),
            Some(Value::Scalar(Scalar::Word(w))) => parse_int(w)
                .map(Some)
                .ok_or_else(|| format!("{name}: {w:?} is not an integer")),
            Some(_) => Err(format!("{name}: expected an integer")),
        }
    }

    /// The last value of `name` as an enum: either its name, mapped by `by_name`, or its number.
    pub fn enumeration(
        &self,
        name: &str,
        by_name: impl Fn(&str) -> Option<i32>,
    ) -> Result<Option<i32>, String> {
        match self.last(name) {
            None => Ok(None),
            Some(Value::Scalar(Scalar::Word(w))) => by_name(w)
                .or_else(|| parse_int(w).and_then(|n| i32::try_from(n).ok()))
                .map(Some)
                .ok_or_else(|| format!("{name}: unknown value {w}")),
            Some(_) => Err(format!("{name}: expected an enum value")),
        }
    }

    /// Every value of `name` as bytes (quoted strings).
    pub fn bytes_all(&self, name: &str) -> Result<Vec<Vec<u8>>, String> {
        self.all(name)
            .map(|v| match v {
                Value::Scalar(Scalar::Str(b)) => Ok(b.clone()),
                _ => Err(format!("{name}: expected a quoted string")),
            })
            .collect()
    }

    /// Every value of `name` as UTF-8 strings.
    pub fn strings_all(&self, name: &str) -> Result<Vec<String>, String> {
        self.bytes_all(name)?
            .into_iter()
            .map(|b| String::from_utf8(b).map_err(|_| format!("{name}: not UTF-8")))
            .collect()
    }

    /// Every value of `name` that is a nested message.
    pub fn messages_all(&self, name: &str) -> Result<Vec<&TextMessage>, String> {
        self.all(name)
            .map(|v| match v {
                Value::Message(m) => Ok(m),
                _ => Err(format!("{name}: expected a {{ … }} block")),
            })
            .collect()
    }
}

/// Reads an integer as protobuf text writes it: `-?` then decimal or `0x` hex.
pub fn parse_int(word: &str) -> Option<i64> {
    let (neg, digits) = match word.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, word),
    };
    let magnitude: u64 = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16).ok()?
    } else if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        digits.parse().ok()?
    } else {
        return None;
    };
    if neg {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Escapes bytes the way protobuf's text printer does (printable ASCII as is, the rest as octal).
pub fn escape(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    for &b in bytes {
        match b {
            b'"' => out.push_str("\\\""),
            b'\'' => out.push_str("\\'"),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            b'\t' => out.push_str("\\t"),
            0x20..=0x7e => out.push(char::from(b)),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn err<T>(&self, reason: impl Into<String>) -> Result<T, TextError> {
        Err(TextError {
            offset: self.pos,
            reason: reason.into(),
        })
    }

    fn skip_space(&mut self) {
        while let Some(&b) = self.s.get(self.pos) {
            if b == b'#' {
                while self.s.get(self.pos).is_some_and(|&c| c != b'\n') {
                    self.pos += 1;
                }
            } else if b.is_ascii_whitespace() {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        self.skip_space();
        self.s.get(self.pos).copied()
    }

    /// Fields until `close` (or the end of input when `close` is None).
    fn message(&mut self, depth: usize, close: Option<u8>) -> Result<TextMessage, TextError> {
        if depth > MAX_DEPTH {
            return self.err("messages nested too deeply");
        }
        let mut msg = TextMessage::default();
        loop {
            match (self.peek(), close) {
                (None, None) => return Ok(msg),
                (None, Some(c)) => return self.err(format!("missing '{}'", char::from(c))),
                (Some(b), Some(c)) if b == c => {
                    self.pos += 1;
                    return Ok(msg);
                }
                _ => {}
            }
            let name = self.word()?;
            if name.is_empty()
                || !name
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            {
                return self.err("expected a field name");
            }
            let colon = self.peek() == Some(b':');
            if colon {
                self.pos += 1;
            }
            match self.peek() {
                Some(b'[') => {
                    self.pos += 1;
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                    } else {
                        loop {
                            let v = self.value(depth)?;
                            msg.fields.push((name.clone(), v));
                            match self.peek() {
                                Some(b',') => self.pos += 1,
                                Some(b']') => {
                                    self.pos += 1;
                                    break;
                                }
                                _ => return self.err("expected ',' or ']'"),
                            }
                        }
                    }
                }
                Some(b'{' | b'<') => {
                    let v = self.value(depth)?;
                    msg.fields.push((name, v));
                }
                _ if colon => {
                    let v = self.value(depth)?;
                    msg.fields.push((name, v));
                }
                _ => return self.err(format!("expected ':' or '{{' after {name}")),
            }
            if matches!(self.peek(), Some(b',' | b';')) {
                self.pos += 1;
            }
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, TextError> {
        match self.peek() {
            Some(b'{') => {
                self.pos += 1;
                Ok(Value::Message(self.message(depth + 1, Some(b'}'))?))
            }
            Some(b'<') => {
                self.pos += 1;
                Ok(Value::Message(self.message(depth + 1, Some(b'>'))?))
            }
            Some(b'"' | b'\'') => {
                let mut out = Vec::new();
                while let Some(q @ (b'"' | b'\'')) = self.peek() {
                    self.pos += 1;
                    self.string_body(q, &mut out)?;
                }
                Ok(Value::Scalar(Scalar::Str(out)))
            }
            _ => {
                let w = self.word()?;
                if w.is_empty() {
                    return self.err("expected a value");
                }
                Ok(Value::Scalar(Scalar::Word(w)))
            }
        }
    }

    fn word(&mut self) -> Result<String, TextError> {
        self.skip_space();
        let start = self.pos;
        while self
            .s
            .get(self.pos)
            .is_some_and(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+' | b'.'))
        {
            self.pos += 1;
        }
        // Only ASCII bytes were taken, so this cannot fail.
        Ok(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }

    fn string_body(&mut self, quote: u8, out: &mut Vec<u8>) -> Result<(), TextError> {
        loop {
            let Some(&b) = self.s.get(self.pos) else {
                return self.err("unterminated string");
            };
            self.pos += 1;
            match b {
                b'\n' => return self.err("newline in string"),
                b'\\' => self.escape_seq(out)?,
                _ if b == quote => return Ok(()),
                _ => out.push(b),
            }
        }
    }

    fn escape_seq(&mut self, out: &mut Vec<u8>) -> Result<(), TextError> {
        let Some(&c) = self.s.get(self.pos) else {
            return self.err("unterminated escape");
        };
        self.pos += 1;
        let simple = match c {
            b'n' => Some(b'\n'),
            b't' => Some(b'\t'),
            b'r' => Some(b'\r'),
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'v' => Some(0x0b),
            b'\\' | b'\'' | b'"' | b'?' => Some(c),
            _ => None,
        };
        if let Some(v) = simple {
            out.push(v);
            return Ok(());
        }
        match c {
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    match self.s.get(self.pos) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            self.pos += 1;
                        }
                        _ => break,
                    }
                }
                match u8::try_from(v) {
                    Ok(b) => out.push(b),
                    Err(_) => return self.err("octal escape above \\377"),
                }
            }
            b'x' | b'X' => {
                let mut v = 0u8;
                let mut n = 0;
                while n < 2 {
                    match self
                        .s
                        .get(self.pos)
                        .and_then(|&d| char::from(d).to_digit(16))
                    {
                        Some(d) => {
                            v = v * 16 + d as u8;
                            self.pos += 1;
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    return self.err("\\x without hex digits");
                }
                out.push(v);
            }
            b'u' | b'U' => {
                let len = if c == b'u' { 4 } else { 8 };
                let digits = self.s.get(self.pos..self.pos + len).unwrap_or_default();
                let code = std::str::from_utf8(digits)
                    .ok()
                    .filter(|d| d.len() == len)
                    .and_then(|d| u32::from_str_radix(d, 16).ok())
                    .and_then(char::from_u32);
                let Some(ch) = code else {
                    return self.err("bad unicode escape");
                };
                self.pos += len;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            _ => return self.err(format!("unknown escape \\{}", char::from(c))),
        }
        Ok(())
    }
}
